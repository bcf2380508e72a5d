"""The tick's orchestration on the event loop, without servers: one pair's Collector over
canned sources, fed through a Pipeline with a stop event as ``replmon serve`` runs it (no
engine, no readers' work); run by hand while changing the collector, Source.sample or
the pipeline (#56).

    .venv/bin/python bench/bench_tick_loop.py [--ticks 3000] [--no-count]
    PYTHONPATH=/tmp/before .venv/bin/python bench/bench_tick_loop.py   # another tree

The sources return the samples of ``sample_sessions/healthy_steady_load.rmrec`` in turn
(so the rates, the roles and the true lag have real work) and suspend as the real ones
do: host and DRBD not at all (local files), Redis for two turns of the loop, MySQL in a
worker thread (``asyncio.to_thread``). Prints, per pair-tick: CPU (``time.process_time``,
every thread) and, counted: the callbacks the loop ran, the tasks created and the
timers scheduled (``--no-count``: CPU without the counting wrappers). The counts do not
depend on the machine's load; the CPU does (compare trees alternately, in one sitting).
"""

from __future__ import annotations

import argparse
import asyncio
import asyncio.base_events
import asyncio.events
import gc
import time
from pathlib import Path
from typing import Any

from replmon.collector import Collector, NodeSources
from replmon.model.base import SampleBase
from replmon.model.tick import NodeTick, Tick
from replmon.pipeline import CallbackReader, Pipeline
from replmon.session import open_recording
from replmon.sources.base import Source

ROOT = Path(__file__).resolve().parent.parent
COUNTS = {"callbacks": 0, "tasks": 0, "timers": 0}


def _count() -> None:
    """Count the loop's callbacks, tasks and timers (COUNTS)."""
    run, create, call_at = (asyncio.events.Handle._run,
                            asyncio.base_events.BaseEventLoop.create_task,
                            asyncio.base_events.BaseEventLoop.call_at)

    def counted_run(self: Any) -> None:
        COUNTS["callbacks"] += 1
        run(self)

    def counted_create(self: Any, *a: Any, **k: Any) -> Any:
        COUNTS["tasks"] += 1
        return create(self, *a, **k)

    def counted_call_at(self: Any, *a: Any, **k: Any) -> Any:
        COUNTS["timers"] += 1
        return call_at(self, *a, **k)

    asyncio.events.Handle._run = counted_run  # type: ignore[method-assign]
    asyncio.base_events.BaseEventLoop.create_task = counted_create  # type: ignore[method-assign]
    asyncio.base_events.BaseEventLoop.call_at = counted_call_at  # type: ignore[method-assign,assignment]


class Canned(Source[Any]):
    def __init__(self, kind: str, role: str, how: str, ticks: list[Tick]) -> None:
        super().__init__(timeout=0.8)
        self.kind = kind  # type: ignore[misc]
        self.sample_type = NodeTick.model_fields[kind].annotation  # type: ignore[assignment]
        self.role, self.how, self.ticks, self.i = role, how, ticks, 0

    def _next(self) -> SampleBase:
        tick = self.ticks[self.i % len(self.ticks)]
        self.i += 1
        return getattr(getattr(tick, self.role), self.kind)  # type: ignore[no-any-return]

    async def _fetch(self) -> Any:
        if self.how == "thread":
            return await asyncio.to_thread(self._next)
        if self.how == "hops":
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        return self._next()


def node(role: str, ticks: list[Tick]) -> NodeSources:
    how = {"host": "now", "drbd": "now", "mysql": "thread", "redis": "hops"}
    return NodeSources(role, role[0], {k: Canned(k, role, h, ticks)  # type: ignore[arg-type]
                                       for k, h in how.items()})


async def run(n: int, ticks: list[Tick]) -> tuple[float, int, dict[str, int]]:
    c = Collector(node("primary", ticks), node("replica", ticks), interval=0.0005)
    await Pipeline(c.ticks(200), None, []).run()  # warm-up: connections, caches
    done = 0
    stop = asyncio.Event()

    def on_tick(*_: object) -> None:
        nonlocal done
        done += 1
        if done >= n:
            stop.set()

    gc.collect()
    before = dict(COUNTS)
    cpu = time.process_time()
    await Pipeline(c.ticks(None), None, [CallbackReader(on_tick)]).run(stop=stop)
    cpu = time.process_time() - cpu
    await c.close()
    return cpu, done, {k: v - before[k] for k, v in COUNTS.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=3000)
    ap.add_argument("--no-count", action="store_true",
                    help="CPU only: no counting wrappers around the loop's calls")
    args = ap.parse_args()
    with open_recording(ROOT / "sample_sessions" / "healthy_steady_load.rmrec") as rec:
        ticks = list(rec.ticks())
    if not args.no_count:
        _count()
    cpu, done, counts = asyncio.run(run(args.ticks, ticks))
    per = ", ".join(f"{k} {v / done:.1f}" for k, v in counts.items())
    print(f"{cpu / done * 1e6:.0f} us CPU per pair-tick over {done} ticks; per pair-tick: "
          f"{per}  ({Collector.__module__} from {__import__('replmon').__file__})")


if __name__ == "__main__":
    main()
