"""The C allocator's arenas in a fleet process (glibc only; elsewhere a no-op).

``replmon serve`` reads each MySQL server in a worker thread, so the larger blocks of a
sample (its dicts, pymysql's packets) come from glibc's malloc in that thread, and glibc
gives threads arenas of their own, a new one whenever the others are busy, up to 8 per
core. A tick lives a minute whole and five more thinned: its blocks are freed long
after, from the event loop's thread, into the arena they came from, where free memory
between live blocks stays resident. At 200 pairs (5 s, 30 minutes), 147 MB of serve's
462 MB were 18 thread arenas, and RSS rose by 94 MB in one step at minute 13.

``limit_arenas`` caps them at ``ARENAS`` (mallopt M_ARENA_MAX, what MALLOC_ARENA_MAX=2
does for a process started with it): the threads share them, so the memory one thread's
blocks leave free is reused by the next blocks of any thread. The screen, ``--plain`` and
``record`` cap them too (one pair: pymysql's reads in worker threads, the recorder's
thread), before their collector starts its threads (replmon/commands.py).
"""

from __future__ import annotations

import ctypes

ARENAS = 2
"""Arenas for the whole process (glibc's default: up to 8 per core)."""
M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (malloc.h)."""


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (only glibc has it)
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(n: int = ARENAS) -> bool:
    """Cap glibc's arenas at ``n``; False where that cannot be done (not glibc). Call it
    before the process starts its threads: an arena, once made, stays."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_ARENA_MAX, n))
