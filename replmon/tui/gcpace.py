"""Python's full garbage collections, paced by the screen instead of by chance.

A screen keeps minutes of ticks (the engine's windows, the graphs' points): a full pass
of Python's cyclic collector over a running session's ~120,000 objects takes 60-90 ms,
during which nothing is drawn and no key is read. Python starts one whenever enough
objects have survived since the last (a quarter of the long-lived ones), which under a
tick a second is every minute or two, at whatever moment allocates next: often a key
that opens a view (measured: 83 ms of the graph view's 257 ms to open). So, while a
screen runs:

- what start-up made (modules, classes, Textual's and pydantic's tables: ~55,000 of the
  objects) is collected once and frozen (``gc.freeze``): no full pass scans it again;
- full passes are no longer started by allocation counts but every ``FULL_EVERY_S`` by
  the screen's own timer, between two ticks (younger generations are collected as
  before: they are cheap and catch most garbage);
- on exit the thresholds and the frozen objects are as they were.

A process that froze objects of its own before the screen started (``gc.freeze``: a test
runner's worker, which starts a screen per test) keeps its freezing: the screen then
neither collects nor freezes at start (a full pass there walks that process's whole heap,
~60-150 ms a screen in a test worker) nor unfreezes on exit; its full passes are still
paced by its timer.
"""

from __future__ import annotations

import gc
import linecache

from rich.cells import cached_cell_len
from rich.color import Color
from rich.style import Style
from textual.filter import ANSIToTruecolor
from textual.strip import Strip

FULL_EVERY_S = 10.0
"""Seconds between two full collections while a screen runs. 10, not 60 (#56, memory):
the screen's garbage is mostly cycles that live past the young collections (Textual's
``Strip``s keep themselves in their own crop and length caches: ~45 strips a second,
each with seven FIFOCaches and its segments), ~1 MB of it every 10 s; the heap grows to
hold what piles up between two passes and keeps that size. Every 60 s the screen's RSS
at one minute was ~6 MB higher (measured in-process on the lab: 92.0 MB against 85.9 at
60 s). A pass over what is not frozen takes ~10-20 ms on an idle core (60-190 ms
measured at a load average of 10 on 2 cores)."""

CELL_CACHE_EVERY_S = 60.0
"""Seconds between two clearings of rich's cell-length cache while a screen runs.

rich (15.0) measures every string under 512 characters through ``cached_cell_len``, an
``lru_cache`` of 4,096 entries, and Textual measures every word it lays out: each tick's
numbers are new strings, so the cache fills at the screen's pace, ~1,600 entries by
minute 5 and all 4,096 by minute ~20, with its dict resized on the way: the live screen's
RSS rose ~1.2 MB from minute 5 to minute 20 and stayed flat after it (#56 asks for none
after minute 5). Cleared every minute, it holds one minute's strings (a few hundred), and
what a clearing frees is what the next minute's fill takes again: no growth. A miss costs
one measurement of a string (microseconds): one a distinct string a minute.

The same timer empties the caches the sparklines' colours fill (``STYLE_CACHES``)."""

STYLE_CACHES = (Style._add, ANSIToTruecolor.truecolor_style,
                vars(Strip)["render_ansi"].__func__, Color.get_ansi_codes, Color.downgrade)
"""rich's and Textual's ``lru_cache``s (1,024 entries; Textual's ``render_ansi`` 16,384)
keyed by a style or a colour. A sparkline colours each bar by its height, blended between
two colours, so the screen keeps drawing colours it never drew before, ever fewer as the
gradient's few hundred fill up: each of these caches gained ~20 entries a minute at minute
3 in the tmux screen, ~10 at minute 10 (each colour a new Style, Color and ANSI text in
each), with their dicts resized on the way: #56's growth after minute 5. Emptied with the
cell-length cache, each holds one minute's styles; what is drawn is the same (each entry
is a pure function of its key)."""

_NEVER = 1 << 30
"""A gen-2 threshold allocation counts do not reach."""

_saved: list[tuple[tuple[int, int, int], bool]] = []
"""Thresholds to restore, and whether that screen froze, one per screen running (tests run
many in one process)."""


def start() -> None:
    """Collect once, freeze what survives (unless something is frozen already: an earlier
    screen's or the process's own freezing), and leave full collections to ``collect``.
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

    pydantic reads the fields' docstrings (``use_attribute_docstrings``: the model's
    Structs, the checks' thresholds) from each class's module source, through
    ``inspect`` and ``linecache``, which keeps every such file's lines for the process's
    life: ~1 MB of strings by the time the screen starts (replmon/model, the checks,
    check.py), read again only to print a traceback. Entries not from a file (no
    modification time: source registered by generated code) are kept."""
    for name, entry in list(linecache.cache.items()):
        if len(entry) == 4 and entry[1] is not None:
            del linecache.cache[name]


def collect() -> None:
    """One full collection (the screen's timer calls it every FULL_EVERY_S)."""
    gc.collect()


def clear_cell_cache() -> None:
    """Empty rich's cell-length cache and the style caches (the screen's timer, every
    CELL_CACHE_EVERY_S)."""
    cached_cell_len.cache_clear()
    for cache in STYLE_CACHES:
        cache.cache_clear()


def stop() -> None:
    """Thresholds and frozen objects as before ``start``."""
    if _saved:
        t, froze = _saved.pop()
        gc.set_threshold(*t)
        if froze:
            gc.unfreeze()
