"""The C allocator in a long-running process (glibc only; elsewhere a no-op): its
arenas capped, its free pages handed back.

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
``record`` cap them at ``ONE_PAIR`` (one pair: pymysql's reads in worker threads, the
recorder's thread), before their collector starts its threads (replmon/commands.py).

``trim`` hands the free pages inside glibc's heaps back to the kernel (``malloc_trim``):
the screen, ``record`` and ``--plain`` call it after each paced full collection
(replmon/gcpace.py). Blocks over 512 bytes (dicts' tables, packets, /proc's read
buffers) come from glibc, and a tick's are freed minutes after they were made, between
younger live blocks: glibc reuses that room, but the pages of a free run stay resident
and the main heap's resident size crept up ~8 KB a minute in ``replmon record`` after its
windows turned over; trimmed every 10 s it stayed flat (docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes

ARENAS = 2
"""Arenas for the whole process (glibc's default: up to 8 per core): ``serve``'s."""
ONE_PAIR = 1
"""Arenas for a one-pair command (the screen, ``--plain``, ``record``): its few threads
(the MySQL reads' workers, the recorder's writer) allocate under the GIL anyway, and with
the main heap their only arena, what they free is reused by the event loop's blocks and
the other way round. ``record``'s RSS 0.2-0.4 MB lower at every minute from the fifth,
in two runs side by side with 2 (docs/benchmarks.md, #56)."""
M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (malloc.h)."""


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (only glibc has it)
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _glibc()


def trim() -> bool:
    """Return glibc's free heap pages to the kernel (``malloc_trim(0)``: every arena,
    each whole free page, not only the heap's top); whether any was returned (False
    where not glibc)."""
    return _LIBC is not None and bool(_LIBC.malloc_trim(0))


def limit_arenas(n: int = ARENAS) -> bool:
    """Cap glibc's arenas at ``n``; False where that cannot be done (not glibc). Call it
    before the process starts its threads: an arena, once made, stays."""
    return _LIBC is not None and bool(_LIBC.mallopt(M_ARENA_MAX, n))
