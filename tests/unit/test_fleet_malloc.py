"""replmon/fleet/malloc.py: with the cap, a process's threads share two glibc arenas
instead of getting one each (serve: 147 MB of 462 in 18 thread arenas at 200 pairs)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from replmon.fleet import malloc

pytestmark = pytest.mark.skipif(malloc._glibc() is None, reason="glibc only (a no-op elsewhere)")

THREADS = r"""
import ctypes, os, sys, threading
from replmon.fleet import malloc
if sys.argv[1] == "capped":
    assert malloc.limit_arenas()
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
