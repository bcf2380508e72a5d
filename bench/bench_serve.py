"""``replmon serve`` cost by fleet size (run by hand; figures go in the closing note).

    .venv/bin/python bench/bench_serve.py [--pairs 10 25 50 100] [--seconds 60]
                                          [--interval 5]

For each fleet size N: ``replmon serve`` (a subprocess, as deployed) watches N pairs
pointed at the lab's MariaDB and Redis (many pairs per server), one of them at a hung
server (a socket that accepts and never answers), each pair recording to record_dir.
After one warm-up interval, for --seconds:

- CPU of the serve process (user + system, psutil), as % of one core;
- its RSS at the end;
- /metrics scraped every second from this process: p50/p99 latency and page size;
- tick start lag (how late each tick started against its schedule) of every pair but
  the hung one, read from their recordings: p99 and max.

Targets at 50 pairs and 5 s: CPU <= 20 % of one core, RSS <= 250 MB, scrape p99 <= 50 ms,
start-lag p99 <= 100 ms with the hung pair.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

from replmon.lab import Lab, WriteLoad
from replmon.session.recording import open_recording


def fleet_toml(lab: Lab, n: int, interval: float, hung_port: int, rec: Path) -> str:
    s = lab.settings()
    out = [f'interval = {interval}', f'record_dir = "{rec}"', "[defaults]",
           f'mysql = {{ user = "{lab.monitor_user}", password_env = "LAB_MYSQL_PW" }}',
           'redis = { password_env = "LAB_REDIS_PW" }', 'ssh = { mode = "local" }']
    for i in range(n):
        out += ["[[pair]]", f'name = "pair{i:03d}"']
        for role in ("primary", "replica"):
            m, r = s[role]["mysql"]["port"], s[role]["redis"]["port"]
            if i == 0 and role == "replica":
                m = r = hung_port
            out += [f"[pair.{role}]", 'host = "127.0.0.1"', f'name = "{role}{i:03d}"',
                    f"mysql = {{ port = {m} }}", f"redis = {{ port = {r} }}"]
    return "\n".join(out) + "\n"


def run(lab: Lab, n: int, seconds: float, interval: float) -> dict[str, float]:
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(1024)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "fleet.toml").write_text(fleet_toml(lab, n, interval, hole.getsockname()[1],
                                                   tmp / "rec"))
        port = lab.free_port()
        env = dict(os.environ, LAB_MYSQL_PW=lab.monitor_password,
                   LAB_REDIS_PW=lab.redis_password)
        proc = subprocess.Popen([sys.executable, "-m", "replmon", "serve", "--config",
                                 str(tmp / "fleet.toml"), "--listen", f"127.0.0.1:{port}"],
                                env=env, stderr=subprocess.DEVNULL)
        try:
            ps = psutil.Process(proc.pid)
            time.sleep(interval + 2)  # connect, first tick
            c0, t0 = ps.cpu_times(), time.monotonic()
            start_wall = time.time()
            scrapes: list[float] = []
            size = 0
            while time.monotonic() - t0 < seconds:
                s0 = time.perf_counter()
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                            timeout=10) as r:
                    size = len(r.read())
                scrapes.append((time.perf_counter() - s0) * 1000)
                time.sleep(max(0.0, 1.0 - (time.perf_counter() - s0)))
            c1, t1 = ps.cpu_times(), time.monotonic()
            rss = ps.memory_info().rss
        finally:
            proc.terminate()
            proc.wait(30)
        hole.close()
        lags = []
        for i in range(1, n):
            with open_recording(tmp / "rec" / f"pair{i:03d}.rmrec") as rec:
                lags += [t.start_lag_ms for t in rec.ticks() if t.wall >= start_wall]
    cpu = (c1.user + c1.system - c0.user - c0.system) / (t1 - t0) * 100
    scrapes.sort()
    lags.sort()
    return {"pairs": n, "cpu_pct": cpu, "rss_mb": rss / 2**20,
            "scrape_p50_ms": statistics.median(scrapes),
            "scrape_p99_ms": scrapes[min(len(scrapes) - 1, int(0.99 * len(scrapes)))],
            "page_kb": size / 1024, "lag_p99_ms": lags[int(0.99 * (len(lags) - 1))],
            "lag_max_ms": lags[-1], "ticks": len(lags)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, nargs="+", default=[10, 25, 50, 100])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=5.0)
    args = ap.parse_args()
    print(f"{'pairs':>5} {'CPU % core':>10} {'RSS MB':>7} {'scrape p50':>10} {'p99 ms':>7} "
          f"{'page KB':>8} {'lag p99':>8} {'max ms':>7} {'ticks':>6}")
    with Lab() as lab, WriteLoad(lab, rate=200):
        for n in args.pairs:
            r = run(lab, n, args.seconds, args.interval)
            print(f"{n:>5} {r['cpu_pct']:>10.1f} {r['rss_mb']:>7.0f} {r['scrape_p50_ms']:>10.1f} "
                  f"{r['scrape_p99_ms']:>7.1f} {r['page_kb']:>8.0f} {r['lag_p99_ms']:>8.1f} "
                  f"{r['lag_max_ms']:>7.1f} {r['ticks']:>6.0f}", flush=True)


if __name__ == "__main__":
    main()
