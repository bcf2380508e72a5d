"""CPU of building one pair-tick, without servers and without the event loop's waits (run
by hand while taking validation out of the tick's construction, #56).

    .venv/bin/python bench/bench_build_tick.py [--ticks 3000] [--repeat 5]
    PYTHONPATH=/tmp/before .venv/bin/python bench/bench_build_tick.py   # another tree

Two figures, each the median of ``--repeat`` passes (``time.process_time``; the cyclic GC
collected before and off during each pass), in µs:

- ``sample_once``: ``Collector.sample_once`` of one pair over canned sources that return
  at once (no thread, no hop): host, MySQL and Redis give the samples of
  ``sample_sessions/healthy_steady_load.rmrec`` in turn, DRBD fails as on a host without
  it (``FileNotFoundError``, "absent" every tick, as on the lab) and the node given as the
  replica has no Redis Sentinel; what is left is the tick's own construction: the
  sources' ``_finish``/``_fail``, the nodes, the orientation, the rates, the true lag and
  the Redis lag estimate. Per pair-tick.
- ``mysql reads``: what a replica's MySQL source builds from its replies besides the
  samples' parsers, per call: ``build_binlog_status`` (every ``positions_every``) and
  ``read_lag_facts`` over canned rows (every tick).

The machine is shared: compare trees alternately, in one sitting, and the medians. Or
count instructions, which the machine's load does not change: valgrind's callgrind
(``valgrind --tool=callgrind --callgrind-out-file=/dev/null``) over two runs, ``--ticks
100 --repeat 1`` and ``--ticks 600 --repeat 1``: the difference of their "Collected"
counts over 500 is one pair-tick and one of each MySQL read (~5 min a run).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from replmon.collector import Collector, NodeSources
from replmon.model.base import SampleBase
from replmon.model.tick import NodeTick, Tick
from replmon.session import open_recording
from replmon.sources.base import Source
from replmon.sources.mysql_binlog_parse import build_binlog_status
from replmon.sources.mysql_lag_reads import read_lag_facts
from replmon.testing.canned_mysql import CannedConnection

ROOT = Path(__file__).resolve().parent.parent


class Canned(Source[Any]):
    """A recorded node's samples of one kind in turn, at once."""

    def __init__(self, kind: str, role: str, ticks: list[Tick]) -> None:
        super().__init__(timeout=0.8)
        self.kind = kind  # type: ignore[misc]
        self.sample_type = NodeTick.model_fields[kind].annotation  # type: ignore[assignment]
        self.role, self.ticks, self.i = role, ticks, 0

    async def _fetch(self) -> Any:
        tick = self.ticks[self.i % len(self.ticks)]
        self.i += 1
        return getattr(getattr(tick, self.role), self.kind)


class NoDrbd(Source[Any]):
    kind = "drbd"

    def __init__(self) -> None:
        super().__init__(timeout=0.8)
        self.sample_type = NodeTick.model_fields["drbd"].annotation  # type: ignore[assignment]

    async def _fetch(self) -> SampleBase:
        raise FileNotFoundError("/proc/drbd")


def collector(ticks: list[Tick]) -> Collector:
    def node(role: str, name: str) -> NodeSources:
        sources: dict[str, Source[Any]] = {k: Canned(k, role, ticks)
                                           for k in ("host", "mysql", "redis")}
        sources["drbd"] = NoDrbd()
        return NodeSources(role, name, sources)  # type: ignore[arg-type]
    return Collector(node("primary", ticks[0].primary.name),
                     node("replica", ticks[0].replica.name), interval=1.0)


def time_sample_once(ticks: list[Tick], n: int) -> float:
    c = collector(ticks)

    async def run() -> float:
        for i in range(50):  # warm: rates, lag windows
            await c.sample_once(seq=i, slot=i)
        gc.collect()
        gc.disable()
        try:
            t0 = time.process_time()
            for i in range(n):
                await c.sample_once(seq=50 + i, slot=50 + i)
            return time.process_time() - t0
        finally:
            gc.enable()
    return asyncio.run(run()) / n * 1e6


def time_mysql_reads(n: int) -> float:
    row = ("0-1-1682", "0-1-1682", 2, "", Decimal("1795604766.063139"), "0-1-1680")
    conn = CannedConnection({"NOW(6)": [(Decimal("1795604766.063139"), 0)],
                  "server_id": [(1, Decimal("1795604765.5"))]})
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        for i in range(n):
            build_binlog_status(row, file="binlog.000001", position=411085 + i,
                                sent_wall=1795604766.06, elapsed_ms=0.31)
            read_lag_facts(conn, heartbeat_table="`hb`.`heartbeat`",  # type: ignore[arg-type]
                           applier=False, note=lambda what, e: what)
        return (time.process_time() - t0) / n * 1e6
    finally:
        gc.enable()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with open_recording(ROOT / "sample_sessions" / "healthy_steady_load.rmrec") as rec:
        ticks = list(rec.ticks())
    once = [time_sample_once(ticks, args.ticks) for _ in range(args.repeat)]
    reads = [time_mysql_reads(args.ticks) for _ in range(args.repeat)]
    print(f"sample_once  µs/pair-tick median {statistics.median(once):7.1f}  "
          f"all {' '.join(f'{x:.1f}' for x in once)}")
    print(f"mysql reads  µs/call      median {statistics.median(reads):7.1f}  "
          f"all {' '.join(f'{x:.1f}' for x in reads)}")


if __name__ == "__main__":
    main()
