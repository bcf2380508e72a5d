"""Python's full garbage collections, paced by a long-running command instead of by
chance: the screen, ``record`` and ``--plain``.

Such a command keeps minutes of ticks (the engine's windows, the screen's graphs): a
full pass of Python's cyclic collector over a running session's ~120,000 objects takes
60-90 ms, during which nothing is drawn, no key is read and no tick is judged. Python
starts one whenever enough objects have survived since the last (a quarter of the
long-lived ones), which under a tick a second is every minute or two, at whatever moment
allocates next: often a key that opens a view (measured: 83 ms of the graph view's 257
ms to open). Between two such passes the cycles that outlived the young collections pile
up, and the heap grows to hold the largest pile it has met: ``replmon record``'s RSS rose
~0.9 MB from minute 5 to minute 15 with nothing more held (#56; docs/benchmarks.md). So,
while such a command runs:

- what start-up made (modules, classes, Textual's and pydantic's tables: ~55,000 of the
  objects) is collected once and frozen (``gc.freeze``): no full pass scans it again;
- full passes are no longer started by allocation counts but every ``FULL_EVERY_S``, by
  the screen's timer or between two ticks (``Paced``, a pipeline reader), each followed
  by glibc's free pages handed back (``replmon.malloc.trim``); younger generations are
  collected as before: they are cheap and catch most garbage;
- on exit the thresholds and the frozen objects are as they were.

A process that froze objects of its own before (``gc.freeze``: a test runner's worker,
which starts a screen per test) keeps its freezing: the command then neither collects nor
freezes at start (a full pass there walks that process's whole heap, ~60-150 ms a screen
in a test worker) nor unfreezes on exit; its full passes are still paced.
"""

from __future__ import annotations

import gc
import linecache
import time
from collections.abc import Callable
from typing import Any

from replmon import malloc

FULL_EVERY_S = 10.0
"""Seconds between two full collections. 10, not 60 (#56, memory): the screen's garbage
is mostly cycles that live past the young collections (Textual's ``Strip``s keep
themselves in their own crop and length caches: ~45 strips a second, each with seven
FIFOCaches and its segments), ~1 MB of it every 10 s; the heap grows to hold what piles
up between two passes and keeps that size. Every 60 s the screen's RSS at one minute was
~6 MB higher (measured in-process on the lab: 92.0 MB against 85.9 at 60 s). A pass over
what is not frozen takes ~10-20 ms on an idle core (60-190 ms measured at a load average
of 10 on 2 cores)."""

_NEVER = 1 << 30
"""A gen-2 threshold allocation counts do not reach."""

_saved: list[tuple[tuple[int, int, int], bool]] = []
"""Thresholds to restore, and whether that command froze, one per command running (tests
run many in one process)."""


def start() -> None:
    """Collect once, freeze what survives (unless something is frozen already: an earlier
    command's or the process's own freezing), and leave full collections to ``collect``.
    The source lines start-up read are dropped first (``drop_source_lines``)."""
    drop_source_lines()
    froze = gc.get_freeze_count() == 0
    if froze:
        gc.collect()
        gc.freeze()
    t = gc.get_threshold()
    _saved.append((t, froze))
    gc.set_threshold(t[0], t[1], _NEVER)


def drop_source_lines() -> None:
    """Empty ``linecache`` of the source files it read from disk (#56, memory).

    ``linecache`` keeps every source file read through it (``inspect``, a warning
    shown, pydantic's ``use_attribute_docstrings``) for the process's life, read again
    only to print a traceback: ~1 MB of strings by the time the command started while
    the model's Structs and the checks' thresholds had pydantic read their fields'
    docstrings (neither does since 2026-12-06: empty after start-up, measured); a check
    plugin's own models may still. Entries not from a file (no modification time: source
    registered by generated code) are kept."""
    for name, entry in list(linecache.cache.items()):
        if len(entry) == 4 and entry[1] is not None:
            del linecache.cache[name]


def collect() -> None:
    """One full collection (every FULL_EVERY_S), then glibc's free pages handed back
    (``malloc.trim``: what the pass freed over pymalloc's 512 bytes, and older free runs):
    ``replmon record``'s main heap stopped creeping with it (docs/benchmarks.md)."""
    gc.collect()
    malloc.trim()


def stop() -> None:
    """Thresholds and frozen objects as before ``start``."""
    if _saved:
        t, froze = _saved.pop()
        gc.set_threshold(*t)
        if froze:
            gc.unfreeze()


class Paced:
    """A pipeline reader (inline) that paces the full collections of a headless command
    (``record``, ``--plain``): ``start`` at its first tick (start-up is over: the
    connections are made, the checks loaded), then a full collection after the first tick
    past each ``every`` seconds from it, between two ticks; ``stop`` when the pipeline
    closes it. The passes keep their cadence (a late tick does not push the next one
    back); after a stall longer than ``every``, one pass, not one per period missed."""

    inline = True

    def __init__(self, every: float = FULL_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.passes = 0
        """Full collections made so far."""
        self._clock = clock
        self._next: float | None = None
        """Clock reading at which the next pass is due (None: not started)."""

    def on_tick(self, tick: Any, update: Any) -> None:
        now = self._clock()
        if self._next is None:
            start()
            self._next = now + self.every
        elif now >= self._next:
            collect()
            self.passes += 1
            self._next += self.every
            if self._next <= now:  # a stall: the cadence starts again from here
                self._next = now + self.every

    def close(self) -> None:
        if self._next is not None:
            self._next = None
            stop()
