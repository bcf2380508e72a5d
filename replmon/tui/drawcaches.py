"""The caches rich and Textual fill as the screen draws, emptied every minute (#56).

A long-running screen draws ever-new strings (each tick's numbers) and ever-new colours
(a sparkline colours each bar by its height): rich and Textual keep each in an
``lru_cache`` that fills at the screen's pace and keeps its size. Emptied every
``CELL_CACHE_EVERY_S``, each holds one minute's entries, and what a clearing frees is
what the next minute's fill takes again. What is drawn is the same (each entry is a pure
function of its key); a miss costs one measurement or one style (microseconds).

Python's full collections, which the screen paces too, are ``replmon.gcpace``'s.
"""

from __future__ import annotations

from rich.cells import cached_cell_len
from rich.color import Color
from rich.style import Style
from textual.filter import ANSIToTruecolor
from textual.strip import Strip

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


def clear() -> None:
    """Empty rich's cell-length cache and the style caches (the screen's timer, every
    CELL_CACHE_EVERY_S)."""
    cached_cell_len.cache_clear()
    for cache in STYLE_CACHES:
        cache.cache_clear()
