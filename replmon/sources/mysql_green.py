"""pymysql whose socket waits either block a worker thread or suspend a greenlet on the
event loop (the MySQL source's per-tick round trips; ``green``, ``offload``).

``GreenConnection`` is a pymysql Connection whose socket, once connected, is
non-blocking; when a read or a write would block, it waits in one of two ways:

- in a worker thread (the single-pair commands: the screen, ``record``, ``check``,
  ``sample``; ``asyncio.to_thread``): a blocking ``poll`` of the socket for at most
  ``read_timeout`` (``write_timeout`` for a write, none when it is None);
- in a greenlet on the loop's own thread (``green``, serve's fleet of pairs): it
  switches to the loop's side, which waits for the socket with
  ``loop.add_reader``/``add_writer`` and one timer, and switches back. A thread per
  sample cost the interpreter lock's hand-offs at every socket wait (~190 futex calls
  per pair-tick in serve, docs/benchmarks.md) and a thread's CPU per call. greenlet
  (+1.0-1.2 MB RSS: its extension links libstdc++) is imported on the first ``green``
  call only, so a process that samples in threads never loads it.

TCP, unix sockets and TLS (SSLWantReadError/SSLWantWriteError) alike, in both. Connecting
(TCP/TLS handshake, authentication) is pymysql's own blocking code: ``offload`` runs it
in a worker thread from inside a ``green`` greenlet (the loop goes on meanwhile), and
calls it directly anywhere else. A wait that runs out fails as a blocking socket's
timeout fails in pymysql (OperationalError 2013 "Lost connection to MySQL server during
query (timed out)", the connection closed); a lost connection, a reset, EOF give
pymysql's own errors. A cancelled ``green`` call (the source closed) throws the
cancellation into the greenlet, which closes the connection it was waiting on: its
protocol state is unknown.

Replies are read as pymysql reads them, with shortcuts for what is already whole in the
buffer (one recv brings a reply's 5-80 packets): a packet is cut out in one step
(``_read_packet``), a row decoded in place (``_Result._read_rowdata_packet``), and a
result's column definitions found as the bytes they were at an earlier sample
(``_seen_span``, else ``_span``: ~20 % of a MariaDB sample's instructions less); anything
else (a packet still on the way, an error, EOF, a 16 MB part) goes to pymysql's code. A
MariaDB sample's CPU 0.68 -> 0.62 ms (min of 9 rounds; medians 0.74-0.78 -> 0.66-0.67),
MySQL 9.7's 0.89-0.93 -> 0.84-0.89 ms (medians); the same rows as pymysql's
(tests/unit/test_mysql_green_rows.py; the live comparison in test_mysql_green_live).
Not done: the statements of a tick as one multi-statement query: a round trip costs this
process ~11-14 us of CPU (COM_PING alone, on the loop or in a thread), so sending a
MariaDB sample's 6-7 as 3-4 would save ~40 us, MySQL's 8-11 as 3-4 ~80 us, with a fallback
path for every statement's refusals (docs/benchmarks.md, "wt-batch").

Timed round trips (``begin``/``elapsed_ms``: the ping's rtt_ms, the positions' and the
replica clock's elapsed_ms) must not include the loop's or the interpreter lock's delays
(serve's loop is busy ~40 % of the time at 200 pairs; a worker thread waits up to 5 ms
for the lock behind a busy loop): on TCP the socket has ``SO_TIMESTAMPNS`` and the
reply's arrival is the kernel's stamp of its last segment (as ``kernel_ping`` for
Redis). A unix socket gives no stamp and TLS reads cannot take one: there, a timed
request's reply is first waited for by a blocking ``poll`` of at most ``SPIN_S`` (a local
server answers in ~0.1 ms), then as any other wait; the arrival is the clock when the
read returned.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import struct
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pymysql
from pymysql import err
from pymysql.connections import MySQLResult
from pymysql.constants import CR
from pymysql.protocol import FieldDescriptorPacket, MysqlPacket

from replmon.sources.mysql_connect import SharedPreferredTls

T = TypeVar("T")

# pymysql's private members (its socket, reads, results) are what this module overrides:
# its stubs do not declare them, so the bases are typed as Any here
_Connection: Any = pymysql.connections.Connection
_MySQLResult: Any = MySQLResult

SO_TIMESTAMPNS = 35
"""Linux's SO_TIMESTAMPNS (asm-generic/socket.h); Python's socket module lacks it."""
SPIN_S = 0.001
"""Longest blocking wait for a timed reply where the kernel gives no stamp (unix, TLS)."""
_CHUNK = 65536
DESCRIPTIONS_KEPT = 64
"""Column definitions kept per connection (``_Result``); a statement's are one entry."""
COLUMNS_KEPT = 1024
"""Single column definitions kept per connection (``_Result._parse``)."""

_greenlet: Any = None
"""The greenlet module, imported by the first ``green`` call (module docstring: its RSS)."""
_Bridge: Any = None
"""The greenlet class of ``green``'s calls, made with that import."""


def _bridge_class() -> Any:
    """``_Bridge``, greenlet imported on the first call."""
    global _greenlet, _Bridge
    if _Bridge is None:
        import greenlet  # type: ignore[import-untyped]

        class _Bridge(greenlet.greenlet):  # type: ignore[misc]
            """A greenlet running ``green``'s function; its waits go to the loop."""

        _greenlet = greenlet
    return _Bridge


def _in_green() -> Any:
    """The ``green`` greenlet running this code, or None (a worker thread, the loop)."""
    if _greenlet is None:  # no green call yet in this process
        return None
    here = _greenlet.getcurrent()
    return here if isinstance(here, _Bridge) else None


class _InThread:
    """A greenlet's ask to the loop's side: run ``fn(*args)`` in a worker thread."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args


def offload(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread when called inside ``green`` (the greenlet
    suspended meanwhile, the loop free; fn's exception raised here), else called here:
    for what blocks without a socket wait to hand over (pymysql's connect). If the
    ``green`` call is cancelled meanwhile, the greenlet gets the cancellation at once
    and fn's result, when it comes, is dropped (a GreenConnection closes when freed)."""
    here = _in_green()
    if here is None:
        return fn(*args)
    return here.parent.switch(_InThread(fn, args))  # type: ignore[no-any-return]


async def green(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` run on the loop's thread in a greenlet; each socket wait of a
    GreenConnection in it switches back to the loop, and the loop's reader (writer)
    callback switches into it again when the socket is ready: no task step, no future
    per wait (``_Waits``). ``offload`` in it runs a call in a worker thread."""
    child = _bridge_class()(fn)
    ask = child.switch(*args)
    if child.dead:
        return ask  # type: ignore[no-any-return]
    loop = asyncio.get_running_loop()
    waits = _Waits(loop, child)
    waits.wait(ask)
    try:
        return await waits.done  # type: ignore[no-any-return]
    except BaseException as e:  # cancelled: the child closes its connection and re-raises
        if waits.waiting and not child.dead:
            waits.finish()
            child.throw(e)
        raise
    finally:
        waits.finish()


class _Waits:
    """One ``green`` call's waits: the fd stays registered with the loop from the first
    socket wait to the end of the call (or to an ``offload``), and one timer serves
    every wait's timeout (re-armed when it fires early)."""

    __slots__ = ("loop", "child", "done", "waiting", "since", "timeout", "timer",
                 "reading", "writing", "thread")

    def __init__(self, loop: asyncio.AbstractEventLoop, child: Any) -> None:
        self.loop, self.child = loop, child
        self.done: asyncio.Future[Any] = loop.create_future()
        self.waiting = False
        self.since = 0.0
        self.timeout: float | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.reading = self.writing = -1
        self.thread: asyncio.Future[Any] | None = None
        """The pending ``offload`` call's future (None: none, or one given up)."""

    def wait(self, ask: tuple[int, bool, float | None] | _InThread) -> None:
        if isinstance(ask, _InThread):
            self.in_thread(ask)
            return
        fd, write, timeout = ask
        loop = self.loop
        self.waiting, self.since, self.timeout = True, loop.time(), timeout
        if write:  # rare (a full send buffer): the reader is off meanwhile
            if self.reading >= 0:
                loop.remove_reader(self.reading)
                self.reading = -1
            if self.writing != fd:
                loop.add_writer(fd, self.resume, True)
                self.writing = fd
        else:
            if self.writing >= 0:
                loop.remove_writer(self.writing)
                self.writing = -1
            if self.reading != fd:
                if self.reading >= 0:
                    loop.remove_reader(self.reading)
                loop.add_reader(fd, self.resume, True)
                self.reading = fd
        if timeout and self.timer is None:
            self.timer = loop.call_at(self.since + timeout, self.expire)

    def in_thread(self, ask: _InThread) -> None:
        # An offload is a connect: the socket registered so far may be closed by now (a
        # kept connection found dead), and the new one will likely get its fd's number.
        # epoll forgets a closed file, so a registration kept under that number would
        # never fire for the new socket: drop it (and the timer) first.
        self.finish()
        self.waiting = True
        self.thread = self.loop.run_in_executor(None, ask.fn, *ask.args)
        self.thread.add_done_callback(self.thread_done)

    def thread_done(self, fut: asyncio.Future[Any]) -> None:
        if fut is not self.thread:  # the call was cancelled meanwhile: nobody takes it
            fut.exception()  # retrieved: not logged as "never retrieved"
            return
        self.thread = None
        e = fut.exception()
        if e is None:
            self.step(self.child.switch, fut.result())
        else:
            self.step(self.child.throw, e)

    def expire(self) -> None:
        self.timer = None
        if not self.waiting or self.timeout is None:
            return
        due = self.since + self.timeout
        if due > self.loop.time():  # this wait began after the timer was set
            self.timer = self.loop.call_at(due, self.expire)
            return
        self.resume(False)

    def resume(self, ready: bool) -> None:
        if not self.waiting:
            return  # the child is done (a readable EOF after it)
        self.step(self.child.switch, ready)

    def step(self, enter: Callable[[Any], Any], value: Any) -> None:
        """Run the child from its wait (``enter(value)``: a switch or a throw) to its
        next ask or its end."""
        self.waiting = False
        try:
            ask = enter(value)
        except (SystemExit, KeyboardInterrupt):
            self.finish()
            raise
        except BaseException as e:  # noqa: BLE001 - the caller's exception
            self.finish()
            if not self.done.done():
                self.done.set_exception(e)
            return
        if self.child.dead:
            self.finish()
            if not self.done.done():
                self.done.set_result(ask)
        else:
            self.wait(ask)

    def finish(self) -> None:
        self.waiting = False
        self.thread = None
        loop = self.loop
        if self.reading >= 0:
            loop.remove_reader(self.reading)
            self.reading = -1
        if self.writing >= 0:
            loop.remove_writer(self.writing)
            self.writing = -1
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class GreenConnection(SharedPreferredTls, _Connection):  # type: ignore[misc]
    """A pymysql Connection that, once connected, waits for its socket by a blocking
    poll in a worker thread or through ``green`` on the loop (module docstring)."""

    _nonblocking = False  # connected: the socket non-blocking, read and written below
    _data = b""
    _pos = 0
    _fd = -1
    _stamps = False  # the socket gives kernel arrival stamps (TCP)
    _timing = False  # inside begin() .. elapsed_ms()
    _arrived: float | None = None
    _descriptions: dict[bytes | tuple[bytes, ...],
                        tuple[list[Any], list[Any], tuple[Any, ...]]]
    """A result's columns by their definitions' bytes (``_span``, or ``_payloads``)."""
    _spans: dict[int, list[bytes]]
    """The ``_span`` keys of ``_descriptions`` by their number of columns, newest first
    (``_seen_span``)."""
    _columns: dict[bytes, tuple[Any, Any, tuple[str | None, Any]]]
    _next_seq_id: int  # pymysql's

    def connect(self, sock: socket.socket | None = None) -> None:
        self._nonblocking = False  # pymysql's blocking code while connecting
        super().connect(sock)
        s = self._sock
        rfile: Any = getattr(self, "_rfile", None)
        if rfile is not None:  # its buffer is empty: the server speaks when asked
            rfile.close()
            self._rfile = None
        self._data, self._pos, self._fd = b"", 0, s.fileno()
        self._descriptions = {}
        self._spans = {}
        self._columns = {}
        self._stamps = s.family != socket.AF_UNIX and not isinstance(s, ssl.SSLSocket)
        if self._stamps:
            try:
                s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            except OSError:
                self._stamps = False
        s.setblocking(False)
        self._current_timeout = self._read_timeout  # _read_packet: no settimeout
        self._nonblocking = True

    def _force_close(self) -> None:
        self._data, self._pos = b"", 0
        super()._force_close()

    __del__ = _force_close

    def _read_query_result(self, unbuffered: bool = False) -> int:
        if not self._nonblocking:
            return super()._read_query_result(unbuffered)  # type: ignore[no-any-return]
        self._result = None
        result = _Result(self)
        if unbuffered:
            result.init_unbuffered_query()
        else:
            result.read()
        self._result = result
        if result.server_status is not None:
            self.server_status = result.server_status
        return result.affected_rows

    def _read_packet(self, packet_type: Any = MysqlPacket) -> Any:
        """pymysql's, in one step for a packet already whole in the buffer (``_whole``:
        no header read and unpacked apart, no joined copy): of the ~170 packets of a
        MariaDB sample, all but the first of each reply (~6) are. ~0.1 us a packet,
        ~15-25 us a sample (2-3 %; lab, against pymysql 2.2.8's)."""
        data = self._whole()
        if data is None:
            return super()._read_packet(packet_type)
        return packet_type(data, self.encoding)

    def _whole(self) -> bytes | None:
        """The next packet's payload, consumed, when it is whole in the buffer and one
        that pymysql's ``_read_packet`` would return as it is: the expected sequence id,
        not empty, not an error, not a part of a larger one (16 MB). Else None, nothing
        consumed: pymysql's own code reads it (and raises as it does)."""
        if not self._nonblocking:
            return None
        data, pos = self._data, self._pos
        body = pos + 4
        if body >= len(data):
            return None
        end = body + (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16)
        if end > len(data) or end == body or end - body >= 0xFFFFFF \
                or data[pos + 3] != self._next_seq_id or data[body] == 0xFF:
            return None
        self._pos = end
        self._next_seq_id = (self._next_seq_id + 1) % 256
        return data[body:end]

    def _read_bytes(self, num_bytes: int) -> bytes:
        if not self._nonblocking:
            return super()._read_bytes(num_bytes)  # type: ignore[no-any-return]
        pos = self._pos
        end = pos + num_bytes
        if end <= len(self._data):
            self._pos = end
            return self._data[pos:end]
        return self._fill(num_bytes)

    def _fill(self, num_bytes: int) -> bytes:
        parts = [self._data[self._pos:]]
        have = len(parts[0])
        self._data, self._pos = b"", 0
        while have < num_bytes:
            sock = self._sock
            if sock is None:
                raise err.OperationalError(
                    CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
            try:
                data = self._recv_timed(sock) if self._timing else sock.recv(_CHUNK)
            except (BlockingIOError, ssl.SSLWantReadError):
                self._wait(False, self._read_timeout,
                           "Lost connection to MySQL server during query ({})", CR.CR_SERVER_LOST)
                continue
            except ssl.SSLWantWriteError:
                self._wait(True, self._read_timeout,
                           "Lost connection to MySQL server during query ({})", CR.CR_SERVER_LOST)
                continue
            except InterruptedError:
                continue
            except OSError as e:
                self._force_close()
                raise err.OperationalError(
                    CR.CR_SERVER_LOST, f"Lost connection to MySQL server during query ({e})"
                ) from None
            except BaseException:
                self._force_close()
                raise
            if not data:
                self._force_close()
                raise err.OperationalError(
                    CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
            parts.append(data)
            have += len(data)
        data = b"".join(parts)
        if have > num_bytes:
            self._data, self._pos = data, num_bytes
            return data[:num_bytes]
        return data

    def _recv_timed(self, sock: socket.socket) -> bytes:
        """A read inside a timed round trip: its arrival noted (module docstring)."""
        if self._stamps:
            data, anc, _flags, _addr = sock.recvmsg(_CHUNK, 64)
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                    sec, nsec = struct.unpack("qq", cdata[:16])
                    self._arrived = sec + nsec / 1e9
                    return data
            if data:
                self._arrived = time.time()
            return data
        if self._arrived is None:  # no stamp: a short blocking wait, then as any wait
            _ready(self._fd, False, SPIN_S)
        data = sock.recv(_CHUNK)
        if data:
            self._arrived = time.time()
        return data

    def _write_bytes(self, data: bytes) -> None:
        if not self._nonblocking:
            return super()._write_bytes(data)  # type: ignore[no-any-return]
        view = memoryview(data)
        while view:
            sock = self._sock
            if sock is None:
                raise err.OperationalError(
                    CR.CR_SERVER_GONE_ERROR, "MySQL server has gone away (socket closed)")
            try:
                view = view[sock.send(view):]
                continue
            except (BlockingIOError, ssl.SSLWantWriteError):
                write = True
            except ssl.SSLWantReadError:
                write = False
            except InterruptedError:
                continue
            except OSError as e:
                self._force_close()
                raise err.OperationalError(
                    CR.CR_SERVER_GONE_ERROR, f"MySQL server has gone away ({e!r})") from None
            except BaseException:
                self._force_close()
                raise
            self._wait(write, self._write_timeout, "MySQL server has gone away ({!r})",
                       CR.CR_SERVER_GONE_ERROR)
        return None

    def _wait(self, write: bool, timeout: float | None, text: str, code: int) -> None:
        """Until the socket is readable (writable): for at most ``timeout`` seconds
        (pymysql's read or write timeout for the operation; None: no limit), then
        pymysql's error (``text`` with a blocking socket's exception), the connection
        closed. In a worker thread a blocking poll; in ``green``, the loop's."""
        here = _in_green()
        try:
            if here is None:
                ready = _ready(self._fd, write, timeout)
            else:
                ready = here.parent.switch((self._fd, write, timeout))
            if not ready:
                raise TimeoutError("timed out")  # a blocking socket's socket.timeout
        except OSError as e:
            self._force_close()
            raise err.OperationalError(code, text.format(e)) from None
        except BaseException:
            self._force_close()
            raise


class _Result(_MySQLResult):  # type: ignore[misc]
    """pymysql's result, its column definitions parsed once per connection: the same
    statement sends the same definitions every time (SHOW ALL SLAVES STATUS: ~60 on
    every node, a primary too, ~40 % of pymysql's time per sample), so a result whose
    definition packets are byte for byte those met before takes their parsed fields,
    converters and description (pymysql's ``_get_descriptions`` otherwise)."""

    connection: Any  # pymysql's (None once the rows are read)
    affected_rows: int
    rows: tuple[Any, ...]

    def _get_descriptions(self) -> None:
        conn = self.connection
        read = conn._read_packet
        count = self.field_count
        # the definitions as met before (one compare), else cut out of the buffer at
        # once, else packet by packet
        key = _seen_span(conn, count) or _span(conn, count) or _payloads(conn, count)
        known = conn._descriptions.get(key)
        if known is None:
            known = self._parse(conn, key if isinstance(key, tuple) else _span_payloads(key))
            if len(conn._descriptions) >= DESCRIPTIONS_KEPT:
                conn._descriptions.clear()
                conn._spans.clear()
            conn._descriptions[key] = known
            if isinstance(key, bytes):
                conn._spans.setdefault(count, []).insert(0, key)
        fields, converters, self.description = known
        self.fields, self.converters = list(fields), list(converters)
        eof_packet = read()
        assert eof_packet.is_eof_packet(), "Protocol error, expecting EOF"

    def _read_rowdata_packet(self) -> None:
        """pymysql's, a row already whole in the buffer decoded there (``_row``: no
        packet object, no method call per column): SHOW GLOBAL STATUS alone sends 71
        rows every sample. ~0.5 us less a row, ~40-50 us a MariaDB sample (6-7 %; lab,
        against pymysql 2.2.8's); a row ``_row`` does not take goes through pymysql's
        code, as does the EOF packet that ends the rows."""
        conn = self.connection
        converters = self.converters
        rows: list[Any] = []
        if len(converters) == 2 and converters[0][1] is None and converters[1][1] is None:
            # two text columns (SHOW GLOBAL STATUS's, VARIABLES': name and value)
            conn._pos, conn._next_seq_id = _text_pairs(
                conn._data, conn._pos, conn._next_seq_id, converters[0][0], converters[1][0],
                rows)
        while True:
            got = _row(conn._data, conn._pos, conn._next_seq_id, converters)
            if got is not None:
                rows.append(got[0])
                conn._pos = got[1]
                conn._next_seq_id = (conn._next_seq_id + 1) % 256
                continue
            packet = conn._read_packet()
            if self._check_packet_is_eof(packet):
                self.connection = None  # as pymysql: no cycle kept
                break
            rows.append(self._read_row_from_packet(packet))
        self.affected_rows = len(rows)
        self.rows = tuple(rows)

    @staticmethod
    def _parse(conn: Any, datas: tuple[bytes, ...]
               ) -> tuple[list[Any], list[Any], tuple[Any, ...]]:
        """pymysql's ``_get_descriptions`` (2.2) over packets already read, each column's
        definition parsed once per connection (``_columns``): a column's field, its
        description and its converter depend on its packet's bytes and the connection's
        settings only. A statement whose definitions change but for one column reads
        only that one: MariaDB gives Gtid_Slave_Pos (SHOW ALL SLAVES STATUS, 62 columns,
        every tick on every node) and @@global.gtid_binlog_pos the length of their value
        now, so every node parsed all 62 again each time its GTIDs' sequence number
        gained a digit (seen in bench_serve: a fresh lab under load crosses 1,000 and
        10,000 within the run, ~2 % of serve's busy time at 200 pairs)."""
        columns = conn._columns
        fields, converters, description = [], [], []
        for data in datas:
            known = columns.get(data)
            if known is None:
                known = _Result._column(conn, data)
                if len(columns) >= COLUMNS_KEPT:
                    columns.clear()
                columns[data] = known
            fields.append(known[0])
            description.append(known[1])
            converters.append(known[2])
        return fields, converters, tuple(description)

    @staticmethod
    def _column(conn: Any, data: bytes) -> tuple[Any, Any, tuple[str | None, Any]]:
        """One column's (field, description, (encoding, converter)), as pymysql's
        ``_get_descriptions`` (2.2) makes them."""
        from pymysql import converters as conv
        from pymysql.connections import TEXT_TYPES
        from pymysql.constants import FIELD_TYPE

        field: Any = FieldDescriptorPacket(data, conn.encoding)
        field_type = field.type_code
        encoding: str | None = None
        if conn.use_unicode:
            if field_type == FIELD_TYPE.JSON:
                encoding = conn.encoding
            elif field_type in TEXT_TYPES:
                encoding = None if field.charsetnr == 63 else conn.encoding
            else:
                encoding = "ascii"
        converter = conn.decoders.get(field_type)
        if converter is conv.through:
            converter = None
        return field, field.description(), (encoding, converter)


def _row(data: bytes, pos: int, seq: int, converters: list[tuple[str | None, Any]]
         ) -> tuple[tuple[Any, ...], int] | None:
    """The text-protocol row whose packet starts at ``data[pos]`` and where it ends, as
    pymysql's ``_read_row_from_packet`` makes it (each column a length-coded string or
    NULL, decoded, converted; a row shorter than the columns stops early), when the
    packet is whole in ``data``, has sequence id ``seq`` and is a row, its columns
    within it. Else None: an EOF, error or 16 MB packet (first byte 0xFE or 0xFF, or
    its length), one still on the way, one pymysql would read otherwise."""
    body = pos + 4
    if body >= len(data):
        return None
    end = body + (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16)
    if end > len(data) or end == body or end - body >= 0xFFFFFF or data[pos + 3] != seq \
            or data[body] >= 0xFE:
        return None
    row: list[Any] = []
    p = body
    for encoding, converter in converters:
        if p >= end:
            break  # pymysql: "no more columns in this row"
        c = data[p]
        p += 1
        if c == 0xFB:  # NULL
            row.append(None)
            continue
        if c >= 0xFC:  # a 2, 3 or 8 byte length follows (0xFF: not a length)
            if c == 0xFF:
                return None
            size = 2 if c == 0xFC else 3 if c == 0xFD else 8
            if p + size > end:
                return None
            c = int.from_bytes(data[p:p + size], "little")
            p += size
        if p + c > end:
            return None
        value: Any = data[p:p + c]
        p += c
        if encoding is not None:
            value = value.decode(encoding)
        if converter is not None:
            value = converter(value)
        row.append(value)
    return tuple(row), end


def _seen_span(conn: Any, count: int) -> bytes | None:
    """The next ``count`` packets of ``conn``, consumed, when they are the bytes of a
    ``_span`` met before (``conn._spans``) from the sequence id expected now: a compare
    of the buffer with each span of that many columns (usually one), no walk over the
    packets. The bytes found are the key ``_descriptions`` holds them by (its hash kept):
    the same packets, whole in the buffer, taken as ``_span`` took them. Else None,
    nothing consumed."""
    spans: list[bytes] | None = conn._spans.get(count)
    if spans and conn._nonblocking:
        data, pos, seq = conn._data, conn._pos, conn._next_seq_id
        for span in spans:
            if span[3] == seq and data.startswith(span, pos):
                conn._pos = pos + len(span)
                conn._next_seq_id = (seq + count) % 256
                return span
    return None


def _span(conn: Any, count: int) -> bytes | None:
    """The next ``count`` packets of ``conn`` (a result's column definitions) as the one
    bytes object they are in its buffer, headers included, consumed: when each is whole
    there and one ``GreenConnection._whole`` takes. Else None, nothing consumed.

    A statement's definitions are the same bytes at each sample (SHOW ALL SLAVES STATUS
    sends 62 on every node every tick), so ``_Result._get_descriptions`` looks them up by
    this one slice, its one hash and one compare, rather than by a tuple of a slice a
    packet (their sequence ids, in the headers, are the same at each sample too). Only
    definitions not met before come here (``_seen_span`` finds the others)."""
    if not conn._nonblocking:
        return None
    start, seq = conn._pos, conn._next_seq_id
    for _ in range(count):
        if conn._whole() is None:
            conn._pos, conn._next_seq_id = start, seq
            return None
    span: bytes = conn._data[start:conn._pos]
    return span


def _span_payloads(span: bytes) -> tuple[bytes, ...]:
    """The payloads of the packets of a ``_span``."""
    out: list[bytes] = []
    pos, size = 0, len(span)
    while pos < size:
        end = pos + 4 + (span[pos] | span[pos + 1] << 8 | span[pos + 2] << 16)
        out.append(span[pos + 4:end])
        pos = end
    return tuple(out)


def _payloads(conn: Any, count: int) -> tuple[bytes, ...]:
    """The payloads of the next ``count`` packets of ``conn`` (a result's column
    definitions), as ``conn._read_packet()._data`` of each: those whole in its buffer cut
    out in one loop (``GreenConnection._whole``'s tests, no packet object, no call a
    packet: SHOW ALL SLAVES STATUS sends 62 every sample), any other through
    ``_read_packet`` (pymysql's code: a packet on the way, an error, 16 MB)."""
    out: list[bytes] = []
    append = out.append
    data, pos, seq = conn._data, conn._pos, conn._next_seq_id
    size = len(data)
    plain = conn._nonblocking
    while count:
        body = pos + 4
        if plain and body < size:
            end = body + (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16)
            if end <= size and end != body and end - body < 0xFFFFFF \
                    and data[pos + 3] == seq and data[body] != 0xFF:
                append(data[body:end])
                pos, seq = end, (seq + 1) % 256
                count -= 1
                continue
        conn._pos, conn._next_seq_id = pos, seq
        append(conn._read_packet()._data)
        count -= 1
        data, pos, seq = conn._data, conn._pos, conn._next_seq_id
        size = len(data)
        plain = conn._nonblocking
    conn._pos, conn._next_seq_id = pos, seq
    return tuple(out)


def _text_pairs(data: bytes, pos: int, seq: int, enc0: str | None, enc1: str | None,
                rows: list[Any]) -> tuple[int, int]:
    """The rows of a result of two columns without converters (SHOW GLOBAL STATUS's 71
    a sample, name and value), from ``data[pos]`` on with sequence ids from ``seq``,
    appended to ``rows`` as ``_row`` makes them, in one call (``_row`` a row cost
    ~0.9 us, this ~0.4): (where they end, the next sequence id). It takes only the plain
    row: whole in ``data``, its sequence id, two values with one-byte lengths (< 251: no
    NULL, no longer length, not an EOF or error packet) filling the packet exactly; it
    stops at the first packet that is not one, for ``_row`` and pymysql to read."""
    size = len(data)
    append = rows.append
    while True:
        body = pos + 4
        if body >= size:
            break
        end = body + (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16)
        if end > size or data[pos + 3] != seq:
            break
        n0 = data[body]
        a = body + 1 + n0  # the second value's length byte
        if n0 >= 0xFB or a >= end:
            break
        n1 = data[a]
        b = a + 1 + n1
        if n1 >= 0xFB or b != end:
            break
        v0: Any = data[body + 1:a]
        v1: Any = data[a + 1:b]
        append((v0 if enc0 is None else v0.decode(enc0),
                v1 if enc1 is None else v1.decode(enc1)))
        pos = end
        seq = (seq + 1) % 256
    return pos, seq


def _ready(fd: int, write: bool, timeout: float | None) -> bool:
    """One blocking poll: whether ``fd`` became readable (writable), or an error or
    hang-up came (the next recv/send says which), within ``timeout`` seconds."""
    poll = select.poll()
    poll.register(fd, select.POLLOUT if write else select.POLLIN)
    return bool(poll.poll(None if timeout is None else timeout * 1000))


def begin(conn: Any) -> tuple[float, float]:
    """Before a timed request: (the wall clock now, the token for ``elapsed_ms``)."""
    if type(conn) is GreenConnection and conn._nonblocking:
        conn._timing, conn._arrived = True, None
        now = time.time()
        return now, now
    return time.time(), time.perf_counter()


def elapsed_ms(conn: Any, token: float) -> float:
    """Milliseconds from ``begin`` to the reply's arrival (GreenConnection: the last
    read's arrival, kernel-stamped on TCP; otherwise now)."""
    if type(conn) is GreenConnection and conn._timing:
        conn._timing = False
        arrived = conn._arrived if conn._arrived is not None else time.time()
        return max(0.0, (arrived - token) * 1000.0)
    return (time.perf_counter() - token) * 1000.0
