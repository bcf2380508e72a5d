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

``reexec_without_tcache`` runs a one-pair command again, the same process (PID, command
line, environment), with glibc's per-thread caches of freed blocks off
(``GLIBC_TUNABLES=glibc.malloc.tcache_count=0``, which glibc reads only as a process
starts): each thread keeps up to 7 freed blocks of every size up to 1,032 bytes for
itself, counted as in use, and their pages resident. They fill slowly, while the
windows turn over the first time: ``replmon record``'s heap grew ~130-200 KiB and its RSS
0.3-0.4 MB from minute 5 to 18; with the caches off its heap shrank ~130 KiB and its RSS
stayed at 50.8 MB from minute 5 to 18, 0.4 MB lower; over an hour +0.2 MB (one step at
minute 58) against +0.5 (docs/benchmarks.md, 2026-12-07, late, #56). The CPU is the
same (the blocks that go through glibc are the few over pymalloc's 512 bytes); starting
twice costs ~0.1 s. ``serve`` is not started again: its many threads would contend for
its two arenas without the caches (not measured).

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
import os
import sys

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
TCACHE_OFF = "glibc.malloc.tcache_count=0"
"""The tunable ``reexec_without_tcache`` sets."""
_WAS = "REPLMON_GLIBC_TUNABLES_WAS"
"""The caller's GLIBC_TUNABLES after a "=" ("" when it had none), passed to the process
run again, which puts it back: the servers and ssh clients it starts get the caller's
environment."""


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


def reexec_without_tcache() -> bool:
    """Run this process's command line again with glibc's thread caches off (``execve``:
    the same PID, the same arguments and environment plus ``TCACHE_OFF``); it does not
    return then. In the process so started: the caller's GLIBC_TUNABLES put back, and
    True. False, and nothing done, where not glibc, where the caller's GLIBC_TUNABLES
    sets ``tcache_count`` already (their choice), or when the exec fails. Call it first
    thing: before any thread, output or connection."""
    was = os.environ.pop(_WAS, None)
    if was is not None:  # the second start: the caches are off; the caller's value back
        if was.startswith("="):
            os.environ["GLIBC_TUNABLES"] = was[1:]
        else:
            os.environ.pop("GLIBC_TUNABLES", None)
        return True
    caller = os.environ.get("GLIBC_TUNABLES")
    tunables = caller or ""
    if _LIBC is None or "glibc.malloc.tcache_count" in tunables or not sys.orig_argv:
        return False
    env = {**os.environ, _WAS: "" if caller is None else f"={caller}",
           "GLIBC_TUNABLES": f"{tunables}:{TCACHE_OFF}" if tunables else TCACHE_OFF}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, sys.orig_argv, env)
    except OSError:
        return False
