"""Round trips that mean what they say (#12): with replmon's event loop kept busy (a task
that holds it, and the GIL, 15 ms at a time, as a heavy screen redraw or parse would), the
Redis round trip replmon reports (the kernel's receive timestamp) stays the server's
(loopback: well under 1 ms), while the same PING timed around ``await`` on the loop, as
replmon did before, shows the loop's delays; a thread pinging on a blocking socket of its
own is an upper reference (it waits for the GIL: ~5 ms under this hog). Measured (three
runs): kernel-timed p50 0.14 ms, max 0.2-1.4; loop-timed p50 60.4, max 60.6; the thread
5.2-8.2 ms; MySQL's COM_PING, timed in its worker thread, p50 5.4, max 15 ms: the GIL
hand-over, not the server (with the loop yielding every millisecond instead: 0.19 ms)."""

from __future__ import annotations

import asyncio
import socket
import statistics
import threading
import time

import pytest

from replmon.endpoints import MysqlEndpoint, RedisEndpoint
from replmon.lab import Lab
from replmon.sources.mysql import MysqlSource
from replmon.sources.redis_info import RedisSource

pytestmark = pytest.mark.live


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def _reference(lab: Lab, n: int) -> list[float]:
    """PING round trips from a thread on a blocking socket (no event loop involved)."""
    out = []
    with socket.create_connection(("127.0.0.1", lab.primary.redis_port)) as s:
        s.sendall(f"*2\r\n$4\r\nAUTH\r\n${len(lab.redis_password)}\r\n"
                  f"{lab.redis_password}\r\n".encode())
        assert s.recv(64).startswith(b"+OK")
        for _ in range(n):
            t0 = time.perf_counter()
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            assert s.recv(64).startswith(b"+PONG")
            out.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.02)
    return out


HOG_BLOCK_MS = 15.0
"""How long the busy loop holds the event loop between two yields."""


async def test_a_busy_event_loop_does_not_show_as_redis_latency(lab: Lab) -> None:
    from pydantic import SecretStr

    stop = asyncio.Event()

    async def hog() -> None:  # holds the loop (and the GIL) 15 ms, yields, again: every
        while not stop.is_set():  # await of the sampler lets it run its 15 ms first
            end = time.perf_counter() + HOG_BLOCK_MS / 1000
            while time.perf_counter() < end:
                pass
            await asyncio.sleep(0)

    ep = RedisEndpoint(host="127.0.0.1", port=lab.primary.redis_port,
                       password=SecretStr(lab.redis_password))
    ref: list[float] = []
    ref_thread = threading.Thread(target=lambda: ref.extend(_reference(lab, 40)))
    shown, loop_timed = [], []
    my_ep = MysqlEndpoint(host="127.0.0.1", port=lab.primary.mysql_port, user=lab.monitor_user,
                          password=SecretStr(lab.monitor_password))
    my_rtt = []
    async with RedisSource(ep, timeout=2.0) as src, MysqlSource(my_ep, timeout=2.0) as my:
        task = asyncio.create_task(hog())
        ref_thread.start()
        for _ in range(30):
            m = await my.sample()
            assert m.status.ok and m.rtt_ms is not None
            my_rtt.append(m.rtt_ms)
            s = await src.sample()
            assert s.status.ok and s.rtt_ms is not None
            shown.append(s.rtt_ms)
            assert src._conn is not None  # the old way: perf_counter around await, on the loop
            t0 = time.perf_counter()
            await src._command(src._conn, "PING")
            loop_timed.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.005)
        stop.set()
        await task
    ref_thread.join(10)
    print(f"\nreference p50 {statistics.median(ref):.2f} ms; shown p50 "
          f"{statistics.median(shown):.2f} max {max(shown):.2f} ms; loop-timed p50 "
          f"{statistics.median(loop_timed):.2f} max {max(loop_timed):.2f} ms; MySQL COM_PING "
          f"(worker thread) p50 {statistics.median(my_rtt):.2f} max {max(my_rtt):.2f} ms")
    assert src._kernel_ping.stamped  # the kernel's receive timestamp, not a fallback
    ref_p50 = statistics.median(ref)
    # what replmon shows is the server's round trip: as the reference, not the loop's
    assert statistics.median(shown) <= ref_p50 + 1.0, (shown, ref)
    # a loop block that leaked into the timing would add the hog's whole 15 ms to the
    # readings (the hog runs all along: most of them, as loop_timed shows). A busy machine
    # stalls the server or this process now and then, 17-19 ms seen on one reading of
    # either series (the suite's other workers beside it): single readings at random
    # moments, so the bound is on the 90th percentile, not on two maxima
    p90, ref_p90 = _p90(shown), _p90(ref)
    assert p90 < HOG_BLOCK_MS or p90 <= ref_p90 + 1.0, (shown, ref)
    # and the measurement it replaces would not have been: the loop's 15 ms blocks show
    assert max(loop_timed) >= HOG_BLOCK_MS / 3
    assert statistics.median(loop_timed) > statistics.median(shown)
    # MySQL's COM_PING is timed inside its worker thread (pymysql blocks there): the loop's
    # queue does not reach it, the GIL's hand-over does (Python's 5 ms switch interval while
    # the loop computes): far below the loop-timed figure, not the server's alone
    assert statistics.median(my_rtt) < statistics.median(loop_timed) / 4, my_rtt
