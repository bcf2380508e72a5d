"""replmon beside Dolphie on the same lab (run by hand; figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_dolphie.py [--seconds 60] [--size 160x50]
        [--dolphie-venv ~/.cache/replmon/bench/dolphie] [--dolphie-version 6.18.0]
        [--replmon-only]

#56: replmon's RSS at most 0.75x Dolphie's, each with its screen and its recording.
Dolphie comes from PyPI into a venv of its own (made the first time, ``pip install
dolphie==VERSION``). The lab and a write load start in this process; then, at the same
time, each in its own tmux session of the same size (a real terminal):

- Dolphie on the lab's primary (one MySQL host: what it monitors), as root over the
  unix socket, ``--record`` (its SQLite replay file), every 1 s;
- replmon's screen on both nodes, each with its four sources (host, DRBD, MySQL, Redis),
  every 1 s, ``--record``.

Every second, each process's VmRSS and its CPU (utime + stime) from /proc; at the end
both, the ratio, and each recording's bytes per tick (replmon: the .rmrec file over its
ticks; Dolphie: its .db file, with its WAL, over the rows of ``replay_data``).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_memory import rss_mb  # noqa: E402
from bench_tui import config_toml, start_in_tmux, tmux  # noqa: E402

from replmon.lab import Lab  # noqa: E402
from replmon.lab.load import WriteLoad  # noqa: E402

VENV = Path.home() / ".cache" / "replmon" / "bench" / "dolphie"
TICK = os.sysconf("SC_CLK_TCK")


def ensure_dolphie(venv: Path, version: str) -> Path:
    """Dolphie's executable in its own venv, installed from PyPI the first time."""
    exe = venv / "bin" / "dolphie"
    if not exe.exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"dolphie=={version}"],
                       check=True)
    got = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout
    print(f"Dolphie {got.strip()} from {venv}")
    return exe


def cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` so far, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Sampler:
    """VmRSS and CPU of one process, every second."""

    def __init__(self, name: str, pid: int) -> None:
        self.name, self.pid = name, pid
        self.cpu0 = cpu_s(pid)
        self.t0 = time.monotonic()
        self.rss: list[float] = []
        self.cpu = 0.0
        self.hwm = 0.0

    def sample(self) -> None:
        self.rss.append(rss_mb(self.pid))
        self.hwm = rss_mb(self.pid, "VmHWM")
        self.cpu = (cpu_s(self.pid) - self.cpu0) / (time.monotonic() - self.t0) * 100

    def line(self) -> str:
        last = self.rss[-min(len(self.rss), 30):]
        return (f"{self.name:8} VmRSS end {self.rss[-1]:6.1f} MB, max {max(self.rss):6.1f}, "
                f"mean of the last 30 s {sum(last) / len(last):6.1f}; CPU "
                f"{self.cpu:5.1f} % of one core; VmHWM {self.hwm:6.1f}")


def replmon_bytes_per_tick(path: Path) -> str:
    from replmon.session.recording import open_recording

    if not path.exists():
        return "replmon  recording: none written"
    n = len(open_recording(path))
    size = path.stat().st_size
    return (f"replmon  recording: {size / 1024:8.1f} KiB, {n} ticks, "
            f"{size / max(n, 1):7.0f} bytes per tick (two nodes)")


def dolphie_bytes_per_tick(replay_dir: Path) -> str:
    dbs = sorted(replay_dir.rglob("*.db"))
    if not dbs:
        return "dolphie  recording: none written"
    db = dbs[-1]
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))  # -wal, -shm
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        n = con.execute("SELECT COUNT(*) FROM replay_data").fetchone()[0]
    return (f"dolphie  recording: {size / 1024:8.1f} KiB, {n} rows, "
            f"{size / max(n, 1):7.0f} bytes per tick (one host)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--size", default="160x50")
    ap.add_argument("--dolphie-venv", type=Path, default=VENV)
    ap.add_argument("--dolphie-version", default="6.18.0")
    ap.add_argument("--replmon-only", action="store_true",
                    help="where Dolphie cannot be installed: replmon alone")
    args = ap.parse_args()
    cols, rows = args.size.split("x")
    size = (cols, rows)
    dolphie = None if args.replmon_only else ensure_dolphie(args.dolphie_venv,
                                                            args.dolphie_version)
    replmon = str(Path(sys.executable).parent / "replmon")
    tag = os.getpid()
    servers: list[str] = []
    with Lab() as lab, WriteLoad(lab, rate=300), tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        cfg = tmp / "bench.toml"
        cfg.write_text(config_toml(lab))
        env = {**os.environ, "BENCH_MYSQL_PASSWORD": lab.monitor_password,
               "BENCH_REDIS_PASSWORD": lab.redis_password, "TERM": "xterm-256color",
               "XDG_STATE_HOME": str(tmp), "HOME": str(tmp)}  # (Dolphie's files in HOME)
        samplers: list[Sampler] = []
        try:
            servers.append(f"replmon-vs-{tag}")
            proc = start_in_tmux(servers[-1], size, f"{replmon} --config {cfg} --record "
                                 f"{tmp}/replmon.rmrec", env, "replmon")
            samplers.append(Sampler("replmon", proc.pid))
            if dolphie is not None:
                servers.append(f"dolphie-vs-{tag}")
                # --pypi-repo: its version check goes nowhere (no traffic off the machine)
                proc = start_in_tmux(servers[-1], size, f"{dolphie} -S "
                                     f"{lab.mysql_primary.mysql_socket} -u root -r 1 --record "
                                     f"--replay-dir {tmp}/dolphie --pypi-repo "
                                     "http://127.0.0.1:9/", env, "dolphie")
                samplers.append(Sampler("dolphie", proc.pid))
            t0 = time.monotonic()
            for s in range(1, args.seconds + 1):
                time.sleep(max(0.0, t0 + s - time.monotonic()))
                for sm in samplers:
                    sm.sample()
                if s % 10 == 0:
                    print(f"{s:4d} s  " + "  ".join(
                        f"{sm.name} {sm.rss[-1]:6.1f} MB {sm.cpu:5.1f} %" for sm in samplers),
                        flush=True)
            screens = {sm.name: tmux(server, "capture-pane", "-p", "-t", "main", check=False)
                       for sm, server in zip(samplers, servers, strict=True)}
            for server in servers:  # each quits, its recording closed
                tmux(server, "send-keys", "-t", "main", "q", check=False)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and any(
                    psutil.pid_exists(sm.pid) for sm in samplers):
                time.sleep(0.2)
        finally:
            for server in servers:
                tmux(server, "kill-server", check=False)
        print(f"\n{args.seconds} s at {args.size}, 1 s, the lab under a write load:")
        for sm in samplers:
            print(sm.line())
        if len(samplers) == 2:
            r, d = samplers
            print(f"ratio replmon / dolphie: VmRSS at the end {r.rss[-1] / d.rss[-1]:.2f}x, "
                  f"max {max(r.rss) / max(d.rss):.2f}x [#56: <= 0.75x]; CPU "
                  f"{r.cpu / max(d.cpu, 1e-9):.2f}x")
        print(replmon_bytes_per_tick(tmp / "replmon.rmrec"))
        if dolphie is not None:
            print(dolphie_bytes_per_tick(tmp / "dolphie"))
        for name, screen in screens.items():
            print(f"\n{name}'s last screen:\n{screen}")


if __name__ == "__main__":
    main()
