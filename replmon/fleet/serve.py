"""``replmon serve``: N pairs, one pipeline each, one process, one HTTP endpoint.

    fleet file ─► per pair: collector ─► engine ─► [PairState, Recorder?, PairLine?]
                                                       │
    HTTP thread: /metrics, /findings.json, /healthz ◄──┘ (reads the states)

Each pair runs its own collector schedule in its own task: a hung server makes its own
source time out (and be marked), never another pair's tick late. pymysql is blocking and
runs in worker threads; the default pool (cpu + 4 threads) would let ten hung MySQL
servers starve the rest, so serve sizes it to one thread per MySQL source plus some.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import IO, Any

from replmon import malloc
from replmon.engine import Update, build_engine
from replmon.fleet.config import Fleet
from replmon.fleet.http import App, Server
from replmon.fleet.metrics import groups_of, render_pair
from replmon.fleet.state import PairState
from replmon.model.base import SourceState
from replmon.model.findings import Severity
from replmon.model.incidents import causality
from replmon.model.tick import Tick
from replmon.pipeline import Pipeline, Reader
from replmon.wording import plural

log = logging.getLogger("replmon.serve")

FULL_GC_EVERY = 100
"""Generation-1 collections between two full ones (CPython's default: 10)."""

YOUNG_GC_AFTER = 50_000
"""Objects the collector may gain (allocations less deallocations of objects it tracks)
before a young collection (CPython's default: 700). A pair-tick makes thousands that
die by reference counting within the tick; at 700 a young collection ran every few of
them and walked those still alive. At 200 pairs (bench_serve.py, 60 s, one run): 1,466
young collections and 2.28 s of GC in 24.6 s of CPU at 700; 242 and 1.19 s at 50,000
(1.40 s at 10,000); the same RSS (278 MB against 280)."""


class PairLine:
    """``serve --plain``: one line per pair per tick (pair, worst severity, open findings),
    for a terminal or a log. Threaded: a slow stdout never delays sampling."""

    name = "pair-line"
    inline = False
    _lock = threading.Lock()  # one line at a time from every pair's thread

    def __init__(self, pair: str, out: IO[str], width: int) -> None:
        self.pair = pair
        self.out = out
        self.width = width

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        found = [] if update is None else update.open
        worst = max((f.severity for f in found), default=None)
        state = "OK" if worst is None or worst is Severity.INFO else worst.label.upper()
        what = ", ".join(f"{f.check}@{f.node}" + (f"/{f.key}" if f.key else "")
                         for f in found if f.severity > Severity.INFO)
        down = [f"{n.role}:{kind}" for n in tick.nodes for kind, st in n.statuses().items()
                if st.state not in (SourceState.OK, SourceState.ABSENT)]
        line = (f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(tick.wall))} "
                f"{self.pair:<{self.width}} {state:<8} {len(found)} open"
                + (f": {what}" if what else "")
                + (f" [down: {' '.join(down)}]" if down else ""))
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def on_drop(self, n: int) -> None:
        with self._lock:
            self.out.write(f"{self.pair}: {plural(n, 'line')} dropped (output too slow)\n")

    def close(self) -> None:
        pass


async def _after(delay: float, run: Coroutine[Any, Any, int], stop: asyncio.Event) -> int:
    """``run`` after ``delay`` seconds (or not at all when ``stop`` is set first)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), delay)
    if stop.is_set():
        run.close()
        return 0
    return await run


def _mysql_sources(fleet: Fleet) -> int:
    return sum(int(node.mysql.enabled) for p in fleet.pairs
               for node in (p.config.primary, p.config.replica))


async def run_serve(fleet: Fleet, *, plain: bool = False, stop: asyncio.Event | None = None,
                    out: IO[str] | None = None, ready: asyncio.Event | None = None) -> int:
    """Serve until ``stop`` (SIGTERM/SIGINT when None). Config errors (a check setting, the
    listen address) are raised before any pair starts. Returns 1 if a pair's pipeline
    failed, else 0."""
    from replmon.factory import build_collector
    from replmon.session.format import meta_for
    from replmon.session.recorder import Recorder, SharedWriter

    loop = asyncio.get_running_loop()
    malloc.limit_arenas()  # before the I/O threads start (replmon/malloc.py)
    loop.set_default_executor(ThreadPoolExecutor(
        max_workers=_mysql_sources(fleet) + 8, thread_name_prefix="replmon-io"))
    engines = [build_engine(p.config.checks, live=True) for p in fleet.pairs]  # ConfigError now
    groups = groups_of(fleet.opt_in)
    states = [PairState(p.name, p.config.interval, render=partial(render_pair, groups=groups),
                        links=causality(e.checks))
              for p, e in zip(fleet.pairs, engines, strict=True)]
    server = Server(App(states, fleet.basic_auth), fleet.listen, fleet.tls)
    log.info("serving %d pairs on %s (port %d)", len(states), fleet.listen, server.port)
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    width = max(len(p.name) for p in fleet.pairs)
    failed = False
    thresholds = gc.get_threshold()
    try:
        async with contextlib.AsyncExitStack() as stack:
            tasks: list[asyncio.Task[int]] = []
            # Every pair's recording is written by one thread (closed after them all).
            writer = SharedWriter() if fleet.record_dir else None
            if writer is not None:
                stack.callback(writer.close)
            for pair, engine, state in zip(fleet.pairs, engines, states, strict=True):
                readers: list[Reader] = [state]
                if fleet.record_dir:
                    path = Path(fleet.record_dir) / f"{pair.name}.rmrec"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    rec = Recorder(path, meta_for(pair.config), **fleet.rotation,
                                   writer=writer)
                    readers.append(await stack.enter_async_context(rec))
                if plain:
                    readers.append(PairLine(pair.name, out or sys.stdout, width))
                # MySQL on the loop: a worker thread per sample costs the CPU of its
                # hand-offs at every socket wait, times the fleet's pairs
                collector = await stack.enter_async_context(
                    build_collector(pair.config, mysql_on_loop=True))
                pipe = Pipeline(collector.ticks(None), engine, readers)
                # Spread the pairs' schedules over the interval: fifty pairs ticking in
                # the same millisecond would hold the loop (and the GIL a scrape needs)
                # for their whole sampling and formatting at once.
                phase = pair.config.interval * len(tasks) / len(fleet.pairs)
                tasks.append(asyncio.create_task(_after(phase, pipe.run(stop=stop), stop),
                                                 name=f"pair-{pair.name}"))
            if ready is not None:
                ready.set()
            # The objects made so far (modules, checks, connections) live as long as the
            # process: out of the collector's way, a full collection no longer walks them
            # while a scrape waits for the GIL.
            gc.freeze()
            # The checks' windows hold every pair's last few minutes of ticks (~1 MB a
            # pair at 5 s): a full collection walks them all.
            # Acyclic ticks are freed by reference counting anyway, so full collections
            # can be rarer: filling 200 pairs' windows took 2 of them instead of 11 (GC
            # 2.2 s instead of 5.7 s of CPU; docs/prometheus.md).
            _, middle, _ = gc.get_threshold()
            gc.set_threshold(YOUNG_GC_AFTER, middle, FULL_GC_EVERY)
            results = await asyncio.gather(*tasks, return_exceptions=True)
            for pair, res in zip(fleet.pairs, results, strict=True):
                if isinstance(res, BaseException):
                    failed = True
                    log.error("pair %s stopped: %s: %s", pair.name, type(res).__name__, res)
    finally:
        server.close()
        # serve is the process's job in production; a test or an embedding caller that
        # runs it in-process gets its collector back as it was
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    return 1 if failed else 0
