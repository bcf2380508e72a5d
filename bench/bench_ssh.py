"""SSH runner benchmark (run by hand; figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_ssh.py [--ticks 200]

Starts the test OpenSSH server (tests/live/sshd.py) on loopback and samples two
"remote" nodes (this machine over ssh to 127.0.0.1: host + DRBD from a DRBD 8
fixture; MySQL/Redis off) with the real collector. Reports:

1. CPU in replmon's process per tick per remote node (time.process_time: every
   thread of this process; ssh and the remote shell are other processes, not
   counted). Target <= 5 ms.
2. Wall time of one tick (both nodes' round trips run concurrently).
3. ssh processes alive during the run (target: one per node).
4. CPU on the nodes' side per tick per node: the sshd sessions and everything they run
   (the remote shell, the commands it starts), from psutil over the test sshd's
   children: what replmon costs the database host it watches.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "live"))

from sshd import Sshd  # noqa: E402

from replmon.config import build_config  # noqa: E402
from replmon.factory import build_collector  # noqa: E402

DRBD8 = str(ROOT / "tests" / "fixtures" / "drbd" / "s10_8411_syncsource_synced.txt")


def ssh_node(server: Sshd, name: str) -> dict[str, object]:
    return {"host": "127.0.0.1", "name": name, "mysql": {"enabled": False},
            "redis": {"enabled": False}, "drbd": {"proc_path": DRBD8},
            "ssh": {"mode": "ssh", "config_file": str(server.ssh_config)}}


async def bench(server: Sshd, ticks: int) -> None:
    cfg = build_config({"interval": 1.0, "primary": ssh_node(server, "a"),
                        "replica": ssh_node(server, "b")})
    async with build_collector(cfg) as c:
        for _ in range(3):  # connect, read link speeds, warm caches
            t = await c.sample_once()
            await asyncio.sleep(0.3)
        cpu, wall = [], []
        node0 = server.cpu_seconds()
        for _ in range(ticks):
            c0, w0 = time.process_time(), time.perf_counter()
            t = await c.sample_once()
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        node_ms = (server.cpu_seconds() - node0) * 1000 / ticks / 2
        nssh = sum(p.name() == "ssh" for p in psutil.Process().children(recursive=True))
    states = {f"{n.role}.{k}": s.state.value for n in t.nodes
              for k, s in n.statuses().items() if k in ("host", "drbd")}
    per_node = [1000 * x / 2 for x in cpu]
    q = statistics.quantiles(per_node, n=100)
    print(f"last tick states: {states}")
    print(f"ticks: {ticks}, 2 remote nodes, ssh processes alive: {nssh}")
    print(f"CPU per tick per remote node: mean {statistics.mean(per_node):.2f} ms, "
          f"p50 {q[49]:.2f} ms, p99 {q[98]:.2f} ms (target <= 5 ms)")
    wq = statistics.quantiles([1000 * x for x in wall], n=100)
    print(f"tick wall time (both round trips concurrent): p50 {wq[49]:.1f} ms, "
          f"p99 {wq[98]:.1f} ms")
    print(f"CPU on the node's side (sshd session, shell, commands) per tick per node: "
          f"{node_ms:.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, Sshd(Path(d)) as server:
        asyncio.run(bench(server, args.ticks))


if __name__ == "__main__":
    main()
