"""TUI benchmark on the lab (run by hand; figures go in the closing note).

    .venv/bin/python bench/bench_tui.py [--seconds 600] [--size 160x50]

Starts the lab and a write load in this process, then the real `replmon` TUI in a
tmux session (a real terminal) pointed at the lab at 1 Hz with all sources, and
samples the TUI process's CPU and RSS every 10 s. Targets: <= 10 % of one core,
<= 120 MB RSS, no upward memory trend over 10 minutes (slope of RSS over the
second half, MB per minute, should be ~0).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from replmon.lab import Lab, WriteLoad


def config_toml(lab: Lab) -> str:
    lines = ["interval = 1.0"]
    for node in (lab.primary, lab.replica):
        lines += [f"[{node.name}]", f'host = "{node.host}"', f'name = "lab-{node.name}"',
                  f"[{node.name}.mysql]", f"port = {node.mysql_port}",
                  f'user = "{lab.monitor_user}"', 'password_env = "BENCH_MYSQL_PASSWORD"',
                  f"[{node.name}.redis]", f"port = {node.redis_port}",
                  'password_env = "BENCH_REDIS_PASSWORD"']
    return "\n".join(lines) + "\n"


def slope_mb_per_min(points: list[tuple[float, float]]) -> float:
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points) or 1.0
    return sum((t - mx) * (v - my) for t, v in points) / var * 60


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--size", default="160x50")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("needs tmux (apt-get install tmux)")
    cols, rows = args.size.split("x")
    replmon = str(Path(sys.executable).parent / "replmon")
    with Lab() as lab, WriteLoad(lab, rate=300), tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(config_toml(lab))
        env = {**os.environ, "BENCH_MYSQL_PASSWORD": lab.monitor_password,
               "BENCH_REDIS_PASSWORD": lab.redis_password, "TERM": "xterm-256color"}
        session = f"replmon-bench-{os.getpid()}"
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", cols, "-y", rows,
                        f"{replmon} --config {cfg}"], check=True, env=env)
        try:
            time.sleep(3)
            pane_pid = int(subprocess.run(
                ["tmux", "list-panes", "-t", session, "-F", "#{pane_pid}"],
                capture_output=True, text=True, check=True).stdout.split()[0])
            pane = psutil.Process(pane_pid)
            proc = next((p for p in [pane, *pane.children(recursive=True)]
                         if "replmon" in " ".join(p.cmdline())), pane)
            t0 = time.monotonic()
            c0 = sum(proc.cpu_times()[:2])
            rss: list[tuple[float, float]] = []
            while time.monotonic() - t0 < args.seconds:
                time.sleep(10)
                rss.append((time.monotonic() - t0, proc.memory_info().rss / 2**20))
            cpu = (sum(proc.cpu_times()[:2]) - c0) / (time.monotonic() - t0) * 100
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True).stdout
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    half = rss[len(rss) // 2:]
    print(f"TUI at {args.size}, 1 Hz, {args.seconds} s: CPU {cpu:.1f} % of one core "
          f"[target <= 10]; RSS start {rss[0][1]:.0f} MB, max {max(v for _, v in rss):.0f} MB "
          f"[target <= 120]; RSS slope over the second half {slope_mb_per_min(half):+.2f} MB/min")
    print("last screen:\n" + screen)


if __name__ == "__main__":
    main()
