"""Soak under faults (#13), run by hand; the figures go in docs/benchmarks.md.

    .venv/bin/python bench/soak.py [--minutes 30] [--every 60] [--interval 0.2] [--keep F]

Starts the lab (MariaDB and Redis pairs on free loopback ports) under a write load,
runs ``replmon record`` on it as a daemon would (a subprocess, stopped with SIGTERM)
and, every ``--every`` seconds, injects the next fault of this cycle:

1. kill -9 the replica's mariadbd, restart it 10 s later (and START SLAVE);
2. SIGSTOP the primary (its mariadbd and redis-server) for 10 s;
3. stop the replica's redis-server, start it again 10 s later;
4. STOP SLAVE SQL_THREAD on the replica, START it 20 s later;
5. fill the primary Redis to its maxmemory (allkeys-lru, evicting) for 20 s.

Then reports: ticks expected vs written, gaps in seq (ticks lost), late and missed
ticks, the recorder's RSS and CPU (sampled with psutil every 10 s; the writer
thread's own CPU from its log), and, for each fault, the finding ``replmon report``
re-derives for it and its onset (the finding's since-time) against the injection.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from replmon.lab import Lab
from replmon.lab.faults import redis_at_maxmemory, stop_thread
from replmon.lab.load import WriteLoad
from replmon.session.recording import open_recording


@dataclass
class Fault:
    name: str
    node: str
    checks: tuple[str, ...]
    """Check ids whose finding on ``node`` stands for this fault."""
    run: Callable[[Lab], None]
    started: list[float] = field(default_factory=list)


def kill9_replica_mysql(lab: Lab) -> None:
    node = lab.replica
    assert node.mysql_proc is not None
    os.kill(node.mysql_proc.pid, signal.SIGKILL)
    node.mysql_proc.wait(10)
    time.sleep(10)
    node.start_mysql()
    node.sql("START SLAVE")


def sigstop_primary(lab: Lab) -> None:
    lab.primary.pause_mysql()
    lab.primary.pause_redis()
    try:
        time.sleep(10)
    finally:
        lab.primary.resume_mysql()
        lab.primary.resume_redis()


def restart_replica_redis(lab: Lab) -> None:
    lab.replica.stop_redis()
    time.sleep(10)
    lab.replica.start_redis()


def hold(cm: Callable[[Lab], contextlib.AbstractContextManager[None]], s: float
         ) -> Callable[[Lab], None]:
    def run(lab: Lab) -> None:
        with cm(lab):
            time.sleep(s)
    return run


FAULTS = [
    Fault("kill -9 replica mariadbd (10 s)", "replica", ("source_health", "mysql_replication"),
          kill9_replica_mysql),
    Fault("SIGSTOP primary mariadbd + redis (10 s)", "primary", ("source_health",),
          sigstop_primary),
    Fault("replica redis-server stopped (10 s)", "replica",
          ("source_health", "redis_replication"), restart_replica_redis),
    Fault("replica SQL thread stopped (20 s)", "replica", ("mysql_replication",),
          hold(lambda lab: stop_thread(lab, "SQL_THREAD"), 20)),
    Fault("primary Redis at maxmemory, evicting (20 s)", "primary", ("memory_ceiling",),
          hold(redis_at_maxmemory, 20)),
]


def record_cmd(lab: Lab, out: Path, interval: float) -> list[str]:
    return [sys.executable, "-m", "replmon", "record", "-o", str(out),
            "--primary", "127.0.0.1", "--replica", "127.0.0.1",
            "--primary-mysql", f"{lab.monitor_user}@:{lab.primary.mysql_port}",
            "--replica-mysql", f"{lab.monitor_user}@:{lab.replica.mysql_port}",
            "--primary-redis", f":{lab.primary.redis_port}",
            "--replica-redis", f":{lab.replica.redis_port}",
            "--interval", str(interval)]


@contextlib.contextmanager
def recording(lab: Lab, out: Path, interval: float) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "REPLMON_MYSQL_PASSWORD": lab.monitor_password,
           "REPLMON_REDIS_PASSWORD": lab.redis_password}
    proc = subprocess.Popen(record_cmd(lab, out, interval), env=env, text=True,
                            stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--every", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--keep", help="copy the recording here")
    args = ap.parse_args()
    duration = args.minutes * 60
    with tempfile.TemporaryDirectory() as d, Lab() as lab, WriteLoad(lab, rate=200):
        out = Path(d) / "soak.rmrec"
        rss: list[tuple[float, int]] = []
        with recording(lab, out, args.interval) as proc:
            ps = psutil.Process(proc.pid)
            t0 = time.time()
            next_fault = t0 + args.every
            next_sample = t0 + 10
            k = 0
            while time.time() - t0 < duration:
                now = time.time()
                if now >= next_sample:
                    rss.append((now - t0, ps.memory_info().rss))
                    next_sample += 10
                if now >= next_fault and now - t0 < duration - 30:
                    f = FAULTS[k % len(FAULTS)]
                    f.started.append(time.time())
                    print(f"{now - t0:7.1f} s  {f.name}", file=sys.stderr)
                    f.run(lab)
                    k += 1
                    next_fault += args.every
                time.sleep(0.2)
            cpu = ps.cpu_times()
            cpu_s = cpu.user + cpu.system
            elapsed = time.time() - t0
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        if args.keep:
            Path(args.keep).write_bytes(out.read_bytes())
        report(out, args.interval, elapsed, cpu_s, rss, err)
    return 0


def report(out: Path, interval: float, elapsed: float, cpu_s: float,
           rss: list[tuple[float, int]], err: str) -> None:
    with open_recording(out) as rec:
        ticks = list(rec.ticks())
        problems = list(rec.problems)
    seqs = [t.seq for t in ticks]
    lost = sum(b - a - 1 for a, b in zip(seqs, seqs[1:], strict=False) if b > a + 1)
    late = sum(t.late for t in ticks)
    missed = sum(t.missed for t in ticks)
    span = ticks[-1].wall - ticks[0].wall
    print(f"\nticks: {len(ticks)} written over {span:.0f} s; expected {span / interval + 1:.0f} "
          f"at {interval} s; seq gaps (ticks not written) {lost}; late {late}; missed "
          f"(collector skipped a slot) {missed}; damage: {problems or 'none'}")
    m = re.search(r"recording closed: (\d+) ticks, (\d+) dropped, writer CPU ([\d.]+) s "
                  r"\(([\d.]+) ms/tick\)", err)
    if m:
        print(f"recorder thread: {m.group(1)} ticks, {m.group(2)} dropped, "
              f"{m.group(4)} ms CPU per tick")
    print(f"replmon record process: CPU {cpu_s:.1f} s over {elapsed:.0f} s = "
          f"{100 * cpu_s / elapsed:.1f} % of one core; RSS {rss[0][1] / 2**20:.1f} MB at "
          f"{rss[0][0]:.0f} s, {rss[len(rss) // 2][1] / 2**20:.1f} MB at "
          f"{rss[len(rss) // 2][0]:.0f} s, {rss[-1][1] / 2**20:.1f} MB at {rss[-1][0]:.0f} s")
    rep = json.loads(subprocess.run([sys.executable, "-m", "replmon", "report", str(out),
                                     "--format", "json"], capture_output=True, text=True,
                                    check=True).stdout)
    opened = [e for e in rep["findings_rerun"] if e["event"] == "opened"]
    print("\nfaults (onset = the finding's since-time minus the injection):")
    ok = 0
    n = 0
    for f in FAULTS:
        for start in f.started:
            n += 1
            hits = [e for e in opened if e["check"] in f.checks and e["node"] == f.node
                    and start - interval <= e["since"] <= start + 30]
            if not hits:
                print(f"  MISSED  {f.name} at +{start - ticks[0].wall:.0f} s")
                continue
            first = min(hits, key=lambda e: e["since"])
            delay = first["since"] - start
            on_time = delay <= 3 * interval
            ok += on_time
            verdict = "ok     " if on_time else "LATE   "
            at = start - ticks[0].wall
            print(f"  {verdict} {f.name} at +{at:.0f} s: {first['check']} "
                  f"{first['severity']} since +{delay:.2f} s "
                  f"({delay / interval:.1f} ticks), opened +{first['at'] - start:.1f} s: "
                  f"{first['title'][:70]}")
    print(f"{ok} of {n} faults seen with their onset within 3 ticks")


if __name__ == "__main__":
    sys.exit(main())
