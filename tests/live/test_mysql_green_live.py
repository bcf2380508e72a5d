"""The MySQL source's two modes (replmon/sources/mysql_green.py) against the lab's MariaDB:
on the loop in a greenlet (``on_loop=True``, serve) and in a worker thread (the default),
both through GreenConnection. The same failures as pymysql's blocking sockets give, round
trips that neither the loop's delays nor the interpreter lock's inflate, and a connect
from the loop that runs in a worker thread, cancellable."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator

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


async def _rtts_while_busy(ep: MysqlEndpoint, n: int, on_loop: bool = True) -> list[float]:
    stop = asyncio.Event()
    async with MysqlSource(ep, timeout=2.0, on_loop=on_loop) as src:
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


async def test_round_trip_in_a_worker_thread_is_not_the_interpreters_delay(lab: Lab) -> None:
    """The thread mode under the same busy loop: timed in the thread, a ping includes
    the thread's wait for the interpreter lock after the send or the reply whenever the
    loop took the lock meanwhile (the 5 ms switch interval: 5.3-13 ms for 2 to all 9
    pings in a run); the kernel's stamp does not (0.14-0.35 ms, all 9). All but the
    slowest (a loaded server's) under 3 ms."""
    rtts = await _rtts_while_busy(lab.replica.mysql_endpoint(), 9, on_loop=False)
    assert rtts[-2] < 3.0, rtts


async def test_round_trip_over_a_unix_socket_under_a_busy_loop(lab: Lab) -> None:
    """No kernel stamp on a unix socket: the reply is waited for by a short poll first."""
    ep = lab.primary.mysql_endpoint().model_copy(update={"socket": lab.primary.mysql_socket})
    rtts = await _rtts_while_busy(ep, 5)
    assert rtts[len(rtts) // 2] < 10.0, rtts


async def test_samples_take_no_worker_thread(lab: Lab) -> None:
    """Once connected, a sample is the loop's: no thread started or used per sample."""
    async with MysqlSource(lab.replica.mysql_endpoint(), on_loop=True) as src:
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


async def _hung_error(lab: Lab, on_loop: bool) -> tuple[str, str | None, float]:
    """The error a sample left pending on a paused server ends with, and when."""
    ep = lab.replica.mysql_endpoint().model_copy(update={"read_timeout": 1.0})
    src = MysqlSource(ep, timeout=0.3, on_loop=on_loop)
    async with src:
        assert (await src.sample()).status.ok
        lab.replica.pause_mysql()
        try:
            t0 = time.monotonic()
            hung = await src.sample()
            assert hung.status.state is SourceState.TIMEOUT
            task = src._inflight
            assert task is not None
            await asyncio.wait([task], timeout=10)  # 1 s due: not a hung test if not
            took = time.monotonic() - t0
            assert task.done(), "still pending after 10 s"
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


async def test_a_hung_server_fails_as_pymysqls_read_timeout_does(lab: Lab) -> None:
    """read_timeout in both modes (a poll's limit in a thread, a timer on the loop): the
    pending sample ends after it with the words and state of a blocking socket's
    timeout in pymysql (its text read from pymysql's own Connection in a thread, the
    source before GreenConnection), and the two modes alike."""
    want = (f"{lab.replica.mysql_endpoint().display()}: no reply within 1 s (Lost "
            "connection to MySQL server during query (timed out) (2013))")
    for on_loop in (True, False):
        text, state, took = await _hung_error(lab, on_loop=on_loop)
        assert (text, state) == (want, "timeout"), on_loop
        assert 0.9 <= took < 1.6, (on_loop, took)


@contextlib.contextmanager
def _silent_port() -> Iterator[int]:
    """A loopback port whose connections the kernel accepts (the backlog) and nobody
    speaks to: a MySQL connect there waits for the handshake until read_timeout."""
    with socket.create_server(("127.0.0.1", 0), backlog=8) as listener:
        yield listener.getsockname()[1]


async def _tick(count: list[int]) -> None:
    while True:
        await asyncio.sleep(0.01)
        count[0] += 1


async def test_a_connect_from_the_loop_runs_in_a_worker_thread(
        lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """on_loop: a connect that hangs (no handshake ever, 1 s of read_timeout) waits in a
    worker thread: the loop goes on (a 10 ms ticker advances ~100 times meanwhile, none
    if the connect held the loop), and the sample ends as in the thread mode, with the
    same state and words."""
    from replmon.sources import mysql as m
    from replmon.sources.mysql_connect import connect as real

    connecting: list[int] = []

    def spy(*args: object) -> object:
        connecting.append(threading.get_ident())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(m, "connect", spy)
    ends = {}
    with _silent_port() as port:
        ep = lab.replica.mysql_endpoint().model_copy(
            update={"host": "127.0.0.1", "port": port, "read_timeout": 1.0})
        for on_loop in (False, True):
            ticks = [0]
            ticker = asyncio.create_task(_tick(ticks))
            try:
                async with MysqlSource(ep, timeout=3.0, on_loop=on_loop) as src:
                    t0 = time.monotonic()
                    s = await src.sample()
                    took = time.monotonic() - t0
            finally:
                ticker.cancel()
            ends[on_loop] = (s.status.state, s.status.error)
            assert 0.9 <= took < 1.6, (on_loop, took)
    assert len(connecting) == 2 and threading.get_ident() not in connecting
    assert ticks[0] >= 30, ticks  # the loop mode's
    assert ends[True] == ends[False], ends
    assert ends[True][0] is SourceState.UNREACHABLE and "timed out" in str(ends[True][1])


class _Link:
    """One client connection through ``_Proxy``."""

    def __init__(self, client: socket.socket) -> None:
        self.client = client
        self.server: socket.socket | None = None
        self.cut = False
        self.ended = threading.Event()
        """Set when the client closed it (or it was cut)."""

    def shut(self) -> None:
        """Ends it both ways; its sockets stay open (closed with the proxy), so that the
        fds a test's own sockets free are the first the process reuses."""
        for sock in (self.client, self.server):
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class _Proxy:
    """A loopback TCP proxy to a MySQL server, in threads: each new connection reaches
    the server ``delay`` seconds after it came (a slow connect); ``cut()`` makes the
    connections open now end 50 ms after the client's next request (the server gone
    while the client waits for its reply). ``links``: the connections, in order."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.delay = 0.0
        self.links: list[_Link] = []
        self.closed = False
        self._lock = threading.Lock()
        """Held while a link gains its server socket and while ``close`` closes them: a
        connection made after the close is closed at once, not left to the collector."""
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        for link in self.links:
            link.cut = True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        self.listener.close()
        with self._lock:
            self.closed = True
            for link in self.links:
                link.shut()
                link.client.close()
                if link.server is not None:
                    link.server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            link = _Link(client)
            with self._lock:
                if self.closed:
                    client.close()
                    return
                self.links.append(link)
            threading.Thread(target=self._serve, args=(link, self.delay), daemon=True).start()

    def _serve(self, link: _Link, delay: float) -> None:
        try:
            time.sleep(delay)
            server = socket.create_connection(self.target)
            with self._lock:
                if self.closed:
                    server.close()
                    return
                link.server = server
            threading.Thread(target=self._pump, args=(link.server, link.client),
                             daemon=True).start()
            while data := link.client.recv(65536):
                if link.cut:
                    time.sleep(0.05)
                    break
                link.server.sendall(data)
        except OSError:
            pass
        finally:
            link.ended.set()
            link.shut()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)


@contextlib.contextmanager
def _proxied(ep: MysqlEndpoint) -> Iterator[tuple[_Proxy, MysqlEndpoint]]:
    proxy = _Proxy((ep.host, ep.port))
    try:
        yield proxy, ep.model_copy(update={"host": "127.0.0.1", "port": proxy.port,
                                           "read_timeout": 3.0})
    finally:
        proxy.close()


async def test_a_dead_kept_connection_is_replaced_within_the_sample_on_the_loop(
        lab: Lab) -> None:
    """on_loop: the kept connection ends while the ping waits for its reply (its socket
    registered with the loop); the same sample reconnects (in a worker thread) and reads
    on the new socket, whose fd takes the closed one's number: registered anew, not left
    to the old registration (epoll dropped it with the closed file: no reply would
    ever be seen, the sample would time out)."""
    with _proxied(lab.replica.mysql_endpoint()) as (proxy, ep):
        src = MysqlSource(ep, timeout=2.0, on_loop=True)
        async with src:
            assert (await src.sample()).status.ok
            assert src._conn is not None
            fd = src._conn._fd  # type: ignore[attr-defined]
            proxy.cut()
            s = await src.sample()
            assert s.status.ok, s.status
            assert len(proxy.links) == 2 and proxy.links[0].ended.is_set()
            assert src._conn._fd == fd  # type: ignore[attr-defined]  # the case in point


async def test_a_sample_cancelled_while_connecting_leaves_the_source_usable(
        lab: Lab) -> None:
    """on_loop: a sample whose kept connection ended (its socket had been registered
    with the loop) reconnects in a worker thread, slowly (1 s); cancelled there (as
    close() cancels a pending sample), its greenlet ends at once: no reader left with
    the loop, the lock free, no connection. The next sample connects and reads; the
    abandoned connect's connection, when it comes, is closed, not kept; nothing reaches
    the loop's exception handler."""
    loop = asyncio.get_running_loop()
    raised: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: raised.append(context))
    registered = set(loop._selector.get_map())  # type: ignore[attr-defined]
    try:
        with _proxied(lab.replica.mysql_endpoint()) as (proxy, ep):
            src = MysqlSource(ep, timeout=0.3, on_loop=True)
            async with src:
                assert (await src.sample()).status.ok
                proxy.delay = 1.0
                proxy.cut()
                assert (await src.sample()).status.state is SourceState.TIMEOUT
                task = src._inflight
                assert task is not None and not task.done()
                task.cancel()
                await asyncio.wait([task], timeout=0.5)
                assert task.cancelled()
                assert set(loop._selector.get_map()) == registered  # type: ignore[attr-defined]
                assert src._conn is None and not src._lock.locked()
                proxy.delay = 0.0
                s = await src.sample()
                assert s.status.ok, s.status
                kept = src._conn
                assert len(proxy.links) == 3
                assert await asyncio.to_thread(proxy.links[1].ended.wait, 5)
                assert (await src.sample()).status.ok and src._conn is kept
    finally:
        loop.set_exception_handler(None)
    assert raised == []


def test_results_are_pymysqls_with_column_definitions_kept(lab: Lab) -> None:
    """Every statement the source sends gives, through GreenConnection (its column
    definitions parsed once, then taken again), on the loop and outside it (its waits a
    blocking poll), what pymysql's own Connection gives: the description, the
    DictCursor's keys, each value's type (the values themselves where they do not move
    between the reads)."""
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
        polled = read(greened, False)
    finally:
        plain.close()
        greened.close()
    assert got == want
    assert polled == want[0]


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
