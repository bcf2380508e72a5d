"""The MySQL source's reads on the event loop (replmon/sources/mysql_green.py) against the
lab's MariaDB: the same failures as pymysql's blocking sockets gave in a worker thread,
and a round trip that the loop's own delays do not inflate."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from replmon.endpoints import MysqlEndpoint
from replmon.lab import Lab
from replmon.model.base import SourceState
from replmon.sources.mysql import MysqlSource

pytestmark = pytest.mark.live


async def _hog(stop: asyncio.Event, slice_s: float) -> None:
    """Keep the loop busy: ``slice_s`` of CPU between turns (serve at 200 pairs)."""
    while not stop.is_set():
        end = time.perf_counter() + slice_s
        while time.perf_counter() < end:
            pass
        await asyncio.sleep(0)


async def _rtts_while_busy(ep: MysqlEndpoint, n: int) -> list[float]:
    stop = asyncio.Event()
    async with MysqlSource(ep, timeout=2.0) as src:
        assert (await src.sample()).status.ok
        hog = asyncio.create_task(_hog(stop, 0.05))
        try:
            out = []
            for _ in range(n):
                s = await src.sample()
                assert s.status.ok, s.status
                assert s.rtt_ms is not None
                out.append(s.rtt_ms)
        finally:
            stop.set()
            await hog
    return sorted(out)


async def test_round_trip_is_not_the_loops_delay_over_tcp(lab: Lab) -> None:
    """The loop busy in 50 ms slices: a ping timed where the sample ran (a thread
    waiting for the interpreter, a coroutine waiting for its turn) reads 5-50 ms; the
    kernel's arrival stamp reads the server's own (~0.1 ms idle, a few ms on this
    loaded machine)."""
    rtts = await _rtts_while_busy(lab.replica.mysql_endpoint(), 5)
    assert rtts[len(rtts) // 2] < 10.0, rtts


async def test_round_trip_over_a_unix_socket_under_a_busy_loop(lab: Lab) -> None:
    """No kernel stamp on a unix socket: the reply is waited for by a short poll first."""
    ep = lab.primary.mysql_endpoint().model_copy(update={"socket": lab.primary.mysql_socket})
    rtts = await _rtts_while_busy(ep, 5)
    assert rtts[len(rtts) // 2] < 10.0, rtts


async def test_samples_take_no_worker_thread(lab: Lab) -> None:
    """Once connected, a sample is the loop's: no thread started or used per sample."""
    async with MysqlSource(lab.replica.mysql_endpoint()) as src:
        assert (await src.sample()).status.ok
        seen: set[int] = set()
        original = MysqlSource._read

        def spy(self: MysqlSource, conn: object, fresh: bool) -> object:
            seen.add(threading.get_ident())
            return original(self, conn, fresh)  # type: ignore[arg-type]

        MysqlSource._read = spy  # type: ignore[assignment,method-assign]
        try:
            for _ in range(5):
                assert (await src.sample()).status.ok
        finally:
            MysqlSource._read = original  # type: ignore[method-assign]
    assert seen == {threading.get_ident()}


async def _hung_error(lab: Lab, threaded: bool) -> tuple[str, str | None, float]:
    """The error a sample left pending on a paused server ends with, and when."""
    ep = lab.replica.mysql_endpoint().model_copy(update={"read_timeout": 1.0})
    async with MysqlSource(ep, timeout=0.3, threaded=threaded) as src:
        assert (await src.sample()).status.ok
        lab.replica.pause_mysql()
        try:
            t0 = time.monotonic()
            hung = await src.sample()
            assert hung.status.state is SourceState.TIMEOUT
            task = src._inflight
            assert task is not None
            await asyncio.wait([task])
            took = time.monotonic() - t0
        finally:
            lab.replica.resume_mysql()
        e = task.exception()
        assert e is not None
        state = getattr(e, "state", None)
        assert src._conn is None  # dropped: the next sample reconnects
        for _ in range(30):
            s = await src.sample()
            if s.status.ok:
                break
            await asyncio.sleep(0.1)
        assert s.status.ok, s.status
    return str(e), state, took


async def test_a_hung_server_fails_as_pymysqls_read_timeout_did(lab: Lab) -> None:
    """read_timeout on the loop: the pending sample ends after it with the words and
    state of a blocking socket's timeout in a worker thread (the code before)."""
    old, old_state, old_took = await _hung_error(lab, threaded=True)
    new, new_state, new_took = await _hung_error(lab, threaded=False)
    assert new == old, (new, old)
    assert new_state == old_state == "timeout"
    assert "no reply within 1 s" in new and "timed out" in new
    assert 0.9 <= new_took < 1.6, new_took


def test_results_are_pymysqls_with_column_definitions_kept(lab: Lab) -> None:
    """Every statement the source sends gives, through GreenConnection (its column
    definitions parsed once, then taken again), what pymysql's own Connection gives:
    the description, the DictCursor's keys, each value's type (the values themselves
    where they do not move between the reads)."""
    import pymysql.cursors

    from replmon.sources import mysql as m
    from replmon.sources.mysql_connect import connect
    from replmon.sources.mysql_green import GreenConnection, green
    from replmon.sources.mysql_lag_reads import CLOCK_QUERY
    from replmon.sources.mysql_processlist_parse import SPACE_WAITS_QUERY, processlist_query

    statements = [m.STATUS_QUERY, m.VARIABLES_QUERY, m.WRITE_PATH_QUERY, SPACE_WAITS_QUERY,
                  "SHOW ALL SLAVES STATUS", "SHOW MASTER STATUS", processlist_query("mariadb"),
                  CLOCK_QUERY, "SELECT 1, 'a', NULL, 2.5, NOW(), x'00ff'"]

    def read(conn: object, dict_rows: bool) -> list[object]:
        out: list[object] = []
        for q in statements:
            kind = pymysql.cursors.DictCursor if dict_rows else pymysql.cursors.Cursor
            with conn.cursor(kind) as cur:  # type: ignore[attr-defined]
                cur.execute(q)
                rows = cur.fetchall()
                if q not in (m.VARIABLES_QUERY, m.WRITE_PATH_QUERY):  # values that move
                    rows = [sorted((k, type(v).__name__) for k, v in r.items()) if dict_rows
                            else [type(v).__name__ for v in r] for r in rows]
                out.append((cur.description, rows))
        return out

    async def green_reads(conn: object) -> list[object]:
        first = await green(read, conn, False)
        again = await green(read, conn, False)  # the definitions taken from the cache
        dicts = await green(read, conn, True)
        assert again == first
        return [first, dicts]

    ep = lab.replica.mysql_endpoint()
    plain = connect(ep)
    greened = connect(ep, GreenConnection)
    try:
        want = [read(plain, False), read(plain, True)]
        got = asyncio.run(green_reads(greened))
        assert greened._descriptions  # type: ignore[attr-defined]
    finally:
        plain.close()
        greened.close()
    assert got == want


@pytest.mark.parametrize("read_only", ["ON", "OFF"])
def test_mariadbs_one_statement_reads_what_the_two_did(lab: Lab, read_only: str) -> None:
    """MariaDB: WRITE_PATH_AND_SPACE_QUERY gives the write-path variables (their text)
    and the space waits that WRITE_PATH_QUERY and SPACE_WAITS_QUERY gave."""
    from replmon.sources import mysql as m
    from replmon.sources.mysql_connect import connect
    from replmon.sources.mysql_parse import parse_variables
    from replmon.sources.mysql_processlist_parse import SPACE_WAITS_QUERY, parse_space_waits

    node = lab.replica
    was = node.sql("SELECT @@global.read_only")[0][0]
    node.sql(f"SET GLOBAL read_only = {read_only}")
    conn = connect(node.mysql_endpoint())
    try:
        src = MysqlSource(node.mysql_endpoint())
        with conn.cursor() as cur:
            cur.execute(m.WRITE_PATH_QUERY)
            want_vars = parse_variables(cur.fetchall())
            cur.execute(SPACE_WAITS_QUERY)
            want_waits = parse_space_waits(cur.fetchall())
            waits = src._write_path_and_space(cur)
    finally:
        conn.close()
        node.sql(f"SET GLOBAL read_only = {was}")
    assert src._variables == want_vars and want_vars["read_only"] == read_only
    assert waits == want_waits and type(waits[0]) is int and type(waits[1]) is int
