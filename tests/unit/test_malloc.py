"""replmon/malloc.py: with the cap, a process's threads share two glibc arenas
instead of getting one each (serve: 147 MB of 462 in 18 thread arenas at 200 pairs)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from replmon import malloc

pytestmark = pytest.mark.skipif(malloc._glibc() is None, reason="glibc only (a no-op elsewhere)")

THREADS = r"""
import ctypes, os, sys, threading
from replmon import malloc
if sys.argv[1] == "capped":
    assert malloc.limit_arenas()
elif sys.argv[1] == "one pair":
    assert malloc.limit_arenas(malloc.ONE_PAIR)
keep = []
ready = threading.Barrier(8)
def work():
    ready.wait()  # all eight alive, each making its first blocks
    for _ in range(2000):
        keep.append(bytearray(1024))  # over pymalloc's 512 bytes: glibc's malloc
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc = ctypes.CDLL(None)
libc.fdopen.restype = ctypes.c_void_p
out = ctypes.c_void_p(libc.fdopen(os.dup(1), b"w"))
libc.malloc_info(0, out)  # XML: one <heap nr="N"> per arena
libc.fflush(out)
"""


def arenas(mode: str) -> int:
    xml = subprocess.run([sys.executable, "-c", THREADS, mode], capture_output=True,
                         text=True, check=True).stdout
    return len(re.findall(r'<heap nr="\d+">', xml))


def test_eight_threads_share_two_arenas_with_the_cap() -> None:
    assert arenas("capped") <= malloc.ARENAS < arenas("default")
    assert arenas("one pair") == malloc.ONE_PAIR == 1  # the main heap only


TRIM = r"""
import sys
from replmon import gcpace, malloc
def heap_kb():  # resident KB of glibc's main heap
    kb, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            if "-" in line.split()[0]:
                inside = line.rstrip().endswith("[heap]")
            elif inside and line.startswith("Rss:"):
                kb += int(line.split()[1])
    return kb
blocks = [bytearray(4000) for _ in range(5000)]  # ~20 MB on the main heap (glibc, not mmap)
last = bytearray(4000)  # a live block above them: the heap's top cannot shrink
del blocks  # ~20 MB free between live blocks, still resident
before = heap_kb()
{how}
print(before, heap_kb())
"""


@pytest.mark.parametrize("how", ["malloc.trim()", "gcpace.collect()"])
def test_trim_hands_the_free_pages_inside_the_heap_back(how: str) -> None:
    """20 MB freed below a live block stay resident (glibc trims only the heap's top by
    itself); ``malloc.trim`` (after each paced full collection: ``gcpace.collect``)
    hands them back."""
    out = subprocess.run([sys.executable, "-c", TRIM.replace("{how}", how)],
                         capture_output=True, text=True, check=True).stdout
    before, after = map(int, out.split())
    assert before > 18_000, f"the freed blocks were not resident: {before} KB"
    assert after < before - 15_000, f"{before} KB -> {after} KB"


CACHED = r"""
import ctypes, os, sys
from replmon import malloc
print("pid", os.getpid(), flush=True)
again = malloc.reexec_without_tcache()
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(1000) for _ in range(7)]
above = libc.malloc(1000)  # so that the freed blocks are not merged into the heap's top
before = libc.mallinfo2().uordblks
for b in blocks:
    libc.free(b)
print("pid", os.getpid(), "again", again, "freed", before - libc.mallinfo2().uordblks,
      "tunables", os.environ.get("GLIBC_TUNABLES", "-"),
      "marker", os.environ.get(malloc._WAS, "-"))
"""


def run_cached(env: dict[str, str]) -> list[list[str]]:
    """The lines CACHED prints (each split), run with ``env`` over this environment
    (a value None: unset)."""
    import os

    full = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    out = subprocess.run([sys.executable, "-c", CACHED], capture_output=True, text=True,
                         check=True, env=full).stdout
    return [line.split() for line in out.splitlines()]


def test_started_again_with_the_thread_caches_off() -> None:
    """glibc keeps 7 freed blocks of 1,000 bytes in the thread's cache (counted in use):
    in the process started again they are free; the same PID, and the caller's
    environment back (no GLIBC_TUNABLES, no marker) for what it starts."""
    started, started_again, second = run_cached({"GLIBC_TUNABLES": None, malloc._WAS: None})
    assert started == started_again == second[:2], "not the same process"
    assert second[3:] == ["True", "freed", "7056", "tunables", "-", "marker", "-"], second


def test_a_caller_tunable_is_kept_and_its_own_choice_respected() -> None:
    *_, second = run_cached({"GLIBC_TUNABLES": "glibc.malloc.arena_max=1", malloc._WAS: None})
    assert second[3:] == ["True", "freed", "7056", "tunables", "glibc.malloc.arena_max=1",
                          "marker", "-"], second
    # a caller who set tcache_count has chosen: no second start, their caches as they are
    _, only = run_cached({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=7", malloc._WAS: None})
    assert only[3:] == ["False", "freed", "0", "tunables", "glibc.malloc.tcache_count=7",
                        "marker", "-"], only
