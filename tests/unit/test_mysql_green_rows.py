"""GreenConnection's reads of packets and rows already in its buffer (``_whole``, ``_row``
in replmon/sources/mysql_green.py) give what pymysql's own code gives, and leave to it,
consuming nothing, every packet they do not take. No server: packets built here."""

from __future__ import annotations

from typing import Any

import pytest
from pymysql.connections import MySQLResult
from pymysql.protocol import MysqlPacket

from replmon.sources.mysql_green import (
    GreenConnection,
    _payloads,
    _row,
    _seen_span,
    _span,
    _span_payloads,
)


def lcs(value: bytes | None, width: int = 0) -> bytes:
    """A length-coded string (``width``: force a 2, 3 or 8 byte length)."""
    if value is None:
        return b"\xfb"
    n = len(value)
    if width == 0:
        width = 0 if n < 251 else 2 if n < 1 << 16 else 3
    if width == 0:
        return bytes([n]) + value
    return {2: b"\xfc", 3: b"\xfd", 8: b"\xfe"}[width] + n.to_bytes(width, "little") + value


def packet(payload: bytes, seq: int) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq]) + payload


TEXT = ("utf8", None)  # pymysql: utf8mb4 connections decode as Python's utf8
INT = ("ascii", int)
BINARY: tuple[str | None, Any] = (None, None)

ROWS = [
    ([TEXT, TEXT], lcs(b"Questions") + lcs(b"12345")),
    ([TEXT, INT], lcs(b"Uptime") + lcs(b"42")),
    ([TEXT, TEXT, TEXT], lcs(None) + lcs(b"") + lcs("é, ü".encode())),
    ([TEXT], lcs(b"x" * 300)),  # a 2 byte length
    ([TEXT], lcs(b"y" * 70000)),  # 3 bytes
    ([TEXT, TEXT], lcs(b"two", 2) + lcs(b"eight", 8)),  # an 8 byte length in the row
    ([BINARY, TEXT], lcs(b"\x00\xff") + lcs(b"a")),
    ([TEXT, TEXT, TEXT], lcs(b"short row")),  # fewer columns than described: stops early
]


def pymysqls(converters: list[Any], payload: bytes) -> tuple[Any, ...]:
    class Result:
        pass

    result = Result()
    result.converters = converters  # type: ignore[attr-defined]
    read_row: Any = getattr(MySQLResult, "_read_row_from_packet")  # noqa: B009 - not in its stubs
    return read_row(result, MysqlPacket(payload, "utf8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize(("converters", "payload"), ROWS, ids=range(len(ROWS)))
def test_a_row_whole_in_the_buffer_is_pymysqls_row(converters: list[Any], payload: bytes
                                                   ) -> None:
    data = b"ab" + packet(payload, 7) + packet(b"\xfe\x00\x00\x02\x00", 8)
    assert _row(data, 2, 7, converters) == (pymysqls(converters, payload), len(data) - 9)


@pytest.mark.parametrize("data", [
    packet(lcs(b"abc"), 7)[:-1],  # not all here yet
    packet(lcs(b"abc"), 8),  # another sequence id: pymysql raises
    packet(b"\xfe\x00\x00\x02\x00", 7),  # the EOF after the rows
    packet(lcs(b"eight", 8), 7),  # a row led by an 8 byte length: pymysql tells it from EOF
    packet(b"\xff\x15\x04#28000denied", 7),  # an error
    packet(b"", 7),  # empty
    packet(b"\x05abc", 7),  # a column longer than its packet
    packet(b"\xfdab", 7),  # a length longer than its packet
    packet(lcs(b"abc") + b"\xff", 7),  # not a length
    b"\x01\x00",  # not even a header
], ids=range(10))
def test_what_a_row_read_does_not_take_it_leaves_to_pymysql(data: bytes) -> None:
    assert _row(data, 0, 7, [TEXT, TEXT]) is None


def buffered(data: bytes, seq: int) -> Any:
    conn: Any = GreenConnection.__new__(GreenConnection)
    conn._nonblocking, conn._data, conn._pos, conn._next_seq_id = True, data, 0, seq
    conn.encoding = "utf8"
    return conn


def test_a_packet_whole_in_the_buffer_is_read_in_one_step() -> None:
    first, second = packet(b"\x01", 3), packet(lcs(b"def") * 3, 4)
    conn = buffered(first + second, 3)
    assert conn._read_packet()._data == b"\x01"
    packet_ = conn._read_packet()
    assert (type(packet_), packet_._data) == (MysqlPacket, lcs(b"def") * 3)
    assert (conn._pos, conn._next_seq_id) == (len(first + second), 5)


@pytest.mark.parametrize(("data", "seq"), [
    (packet(b"abc", 3)[:-1], 3),  # not all here yet
    (packet(b"abc", 4), 3),  # another sequence id
    (packet(b"\xff\x15\x04#28000denied", 3), 3),  # an error: pymysql raises it
    (packet(b"", 3), 3),
    (b"\xff\xff\xff\x03" + b"z" * 10, 3),  # the first part of a 16 MB packet
], ids=range(5))
def test_what_a_packet_read_does_not_take_it_leaves_to_pymysql(data: bytes, seq: int) -> None:
    conn = buffered(data, seq)
    assert conn._whole() is None
    assert (conn._pos, conn._next_seq_id) == (0, seq)


def test_while_connecting_every_packet_is_pymysqls() -> None:
    conn = buffered(packet(b"abc", 3), 3)
    conn._nonblocking = False  # pymysql's blocking reads of the handshake
    assert conn._whole() is None


def test_column_payloads_whole_in_the_buffer_are_the_packets_read() -> None:
    """``_payloads``: a result's column definitions cut out of the buffer in one loop are
    what one ``_read_packet()`` each gives, and leave the buffer where those leave it."""
    payloads = [lcs(b"def") + lcs(f"col{i}".encode()) * i for i in range(6)]
    data = b"".join(packet(x, (250 + i) % 256) for i, x in enumerate(payloads)) \
        + packet(b"\xfe\x00\x00\x02\x00", 0)  # the EOF after them, not taken
    conn, each = buffered(data, 250), buffered(data, 250)
    assert _payloads(conn, 6) == tuple(each._read_packet()._data for _ in range(6)) \
        == tuple(payloads)
    assert (conn._pos, conn._next_seq_id) == (each._pos, each._next_seq_id) == (
        len(data) - 9, 0)
    assert _payloads(conn, 0) == ()
    assert (conn._pos, conn._next_seq_id) == (len(data) - 9, 0)


def test_column_definitions_whole_in_the_buffer_are_one_span() -> None:
    """``_span``: the definitions' packets as one slice of the buffer, consumed as
    ``_payloads`` consumes them, and split back into the same payloads."""
    payloads = [lcs(b"def") + lcs(f"col{i}".encode()) * (i + 1) for i in range(5)]
    defs = b"".join(packet(x, (254 + i) % 256) for i, x in enumerate(payloads))
    data = b"rest" + defs + packet(b"\xfe\x00\x00\x02\x00", 3)
    conn, each = buffered(data, 254), buffered(data, 254)
    conn._pos = each._pos = 4
    assert _span(conn, 5) == defs
    assert _span_payloads(defs) == _payloads(each, 5) == tuple(payloads)
    assert (conn._pos, conn._next_seq_id) == (each._pos, each._next_seq_id) == (
        4 + len(defs), 3)


@pytest.mark.parametrize(("data", "seq"), [
    (packet(b"abc", 3) + packet(b"def", 4)[:-1], 3),  # the last not all here yet
    (packet(b"abc", 3) + packet(b"def", 5), 3),  # another sequence id
    (packet(b"abc", 3) + packet(b"\xff\x15\x04#28000denied", 4), 3),  # an error
    (packet(b"abc", 3) + packet(b"", 4), 3),
    (packet(b"abc", 3) + b"\xff\xff\xff\x04" + b"z" * 10, 3),  # a 16 MB packet's first part
    (packet(b"abc", 3), 3),  # fewer packets than columns
], ids=range(6))
def test_what_a_span_does_not_take_it_leaves_to_the_packet_reads(data: bytes, seq: int
                                                                  ) -> None:
    conn = buffered(data, seq)
    assert _span(conn, 2) is None
    assert (conn._pos, conn._next_seq_id) == (0, seq)


def test_while_connecting_there_is_no_span() -> None:
    conn = buffered(packet(b"abc", 3), 3)
    conn._nonblocking = False
    assert _span(conn, 1) is None


@pytest.mark.parametrize("cut", [2, 4, 7])  # in the header, at the body, in the body
def test_a_column_payload_not_whole_is_read_by_read_packet(cut: int) -> None:
    """A definition still on the way goes to ``_read_packet`` (pymysql's code, which
    reads the rest from the socket): the buffer's position and sequence id handed to it,
    and the loop goes on from where it left the buffer."""
    payloads = [lcs(b"def") + lcs(f"c{i}".encode()) for i in range(4)]
    whole = [packet(x, 3 + i) for i, x in enumerate(payloads)]
    data = b"".join(whole)
    split = len(whole[0]) + cut
    conn = buffered(data[:split], 3)
    calls: list[tuple[int, int]] = []

    def read_packet() -> Any:  # the socket brings the rest, then pymysql reads the packet
        calls.append((conn._pos, conn._next_seq_id))
        conn._data += data[split:]
        return GreenConnection._read_packet(conn)

    conn._read_packet = read_packet
    assert _payloads(conn, 4) == tuple(payloads)
    assert calls == [(len(whole[0]), 4)]
    assert (conn._pos, conn._next_seq_id) == (len(data), 7)


def test_while_connecting_every_column_payload_is_read_by_read_packet() -> None:
    payloads = [lcs(b"def") + lcs(b"x"), lcs(b"def") + lcs(b"y")]
    conn = buffered(b"".join(packet(x, 1 + i) for i, x in enumerate(payloads)), 1)
    conn._nonblocking = False
    seen: list[int] = []

    def read_packet() -> Any:
        seen.append(conn._pos)
        conn._nonblocking = True  # (as if read by pymysql's blocking code)
        packet_ = GreenConnection._read_packet(conn)
        conn._nonblocking = False
        return packet_

    conn._read_packet = read_packet
    assert _payloads(conn, 2) == tuple(payloads)
    assert len(seen) == 2


def column_def(name: str, length: int, type_code: int = 253, charset: int = 45) -> bytes:
    """A column definition packet's payload (protocol 4.1): catalog, schema, table,
    org_table, name, org_name, then the fixed fields."""
    head = b"".join(lcs(x) for x in (b"def", b"", b"", b"", name.encode(), b""))
    return (head + b"\x0c" + charset.to_bytes(2, "little") + length.to_bytes(4, "little")
            + bytes([type_code]) + b"\x00\x00" + b"\x27" + b"\x00\x00")


def test_column_definitions_are_parsed_once_per_column_as_pymysql_parses_them() -> None:
    """``_Result._parse``: a statement's definitions, one column of which changed (MariaDB's
    Gtid_Slave_Pos length follows its value), reuse the other columns' parsing; fields,
    converters and description are what pymysql's ``_get_descriptions`` makes."""
    from pymysql import converters

    from replmon.sources.mysql_green import _Result

    class Conn:
        use_unicode, encoding, decoders = True, "utf8", converters.decoders
        _columns: dict[bytes, Any] = {}

    def pymysqls(datas: tuple[bytes, ...]) -> tuple[list[Any], list[Any], tuple[Any, ...]]:
        from pymysql.protocol import FieldDescriptorPacket

        fields = [FieldDescriptorPacket(d, "utf8") for d in datas]
        convs: list[Any] = []
        for f in fields:
            conv = converters.decoders.get(f.type_code)
            convs.append((("utf8" if f.charsetnr != 63 else None) if f.type_code == 253
                          else "ascii", None if conv is converters.through else conv))
        return fields, convs, tuple(f.description() for f in fields)

    conn = Conn()
    before = (column_def("Master_Host", 240), column_def("Gtid_Slave_Pos", 24),
              column_def("Seconds_Behind_Master", 21, type_code=8, charset=63))
    after = (before[0], column_def("Gtid_Slave_Pos", 28), before[2])
    for datas in (before, after):
        fields, convs, desc = _Result._parse(conn, datas)
        want = pymysqls(datas)
        assert [f.__dict__ for f in fields] == [f.__dict__ for f in want[0]]
        assert convs == want[1] and desc == want[2]
    first, again = _Result._parse(conn, before)[0], _Result._parse(conn, after)[0]
    assert first[0] is again[0] and first[2] is again[2] and first[1] is not again[1]
    assert len(conn._columns) == 4


def test_a_results_definitions_met_before_are_found_by_one_compare() -> None:
    """``_Result._get_descriptions``: definitions cut out as one span the first time,
    found again in the buffer (``_seen_span``, the same key object, no parsing) while
    they are the same bytes from the same sequence id; a changed column or another
    sequence id is cut out and parsed again. Fields, converters and description are
    the same every time."""
    from pymysql import converters

    from replmon.sources.mysql_green import _Result

    before = (column_def("Master_Host", 240), column_def("Gtid_Slave_Pos", 24),
              column_def("Seconds_Behind_Master", 21, type_code=8, charset=63))
    after = (before[0], column_def("Gtid_Slave_Pos", 28), before[2])
    eof = b"\xfe\x00\x00\x02\x00"
    conn = buffered(b"", 2)
    conn.use_unicode, conn.decoders = True, converters.decoders
    conn._descriptions, conn._spans, conn._columns = {}, {}, {}
    parsed: list[tuple[bytes, ...]] = []
    parse = _Result._parse

    def counted(c: Any, datas: tuple[bytes, ...]) -> Any:
        parsed.append(datas)
        return parse(c, datas)

    def read(datas: tuple[bytes, ...], seq: int = 2) -> tuple[Any, ...]:
        defs = b"".join(packet(d, seq + i) for i, d in enumerate(datas))
        conn._data = b"junk" + defs + packet(eof, seq + len(datas)) + b"next"
        conn._pos, conn._next_seq_id = 4, seq
        result: Any = _Result.__new__(_Result)
        result.connection, result.field_count = conn, len(datas)
        result.unbuffered_active = False  # (MySQLResult.__del__ reads it)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_Result, "_parse", staticmethod(counted))
            result._get_descriptions()
        assert conn._data[conn._pos:] == b"next"
        assert conn._next_seq_id == (seq + len(datas) + 1) % 256
        return (tuple(f.__dict__.items() for f in result.fields), tuple(result.converters),
                result.description)

    first = read(before)
    assert parsed == [before] and len(conn._spans[3]) == 1
    span = conn._spans[3][0]
    assert read(before) == first and parsed == [before]  # found: not parsed again
    conn._pos = 4
    assert _seen_span(conn, 3) is None  # the same bytes, another sequence id expected
    changed = read(after)
    assert parsed == [before, after] and conn._spans[3][1] is span
    assert changed[1] == first[1] and changed[2] != first[2]
    assert read(before) == first and len(parsed) == 2  # the older span still found
    assert read(before, seq=7) == first and len(parsed) == 3  # other sequence ids: cut again
    conn._nonblocking = False
    conn._pos = 4
    assert _seen_span(conn, 3) is None


PAIRS = [  # two-column rows: plain ones, and each kind _text_pairs leaves to _row
    lcs(b"Questions") + lcs(b"12345"),
    lcs(b"Empty") + lcs(b""),
    lcs("é".encode()) + lcs("ü, ß".encode()),
    lcs(b"Null") + lcs(None),  # NULL
    lcs(b"Long") + lcs(b"x" * 300),  # a 2 byte length
    lcs(b"Eight", 8) + lcs(b"v"),  # an 8 byte length
    lcs(b"Short row"),  # one column
    lcs(b"Three") + lcs(b"columns") + lcs(b"!"),  # more than described: _row takes two
    lcs(b"Uptime") + lcs(b"42"),
    b"\x05ab",  # a column longer than its packet: pymysql's
]


@pytest.mark.parametrize("start", range(len(PAIRS)))
@pytest.mark.parametrize("binary", [False, True])
def test_two_text_columns_rows_read_in_one_call_are_the_rows_row_reads(start: int,
                                                                      binary: bool) -> None:
    """``_text_pairs`` takes the plain rows from ``start`` on, stops at the first other one
    (or the EOF, a sequence id out of step, a packet not all here) where ``_row`` would
    read the same rows one by one and stop at the same place."""
    from replmon.sources.mysql_green import _text_pairs

    convs: list[Any] = [BINARY, TEXT] if binary else [TEXT, TEXT]
    payloads = PAIRS[start:] + PAIRS[:start]
    data = b"".join(packet(p, (9 + i) % 256) for i, p in enumerate(payloads))
    data += packet(b"\xfe\x00\x00\x02\x00", (9 + len(payloads)) % 256)
    for tail in (b"", b"\x07\x00"):  # and with the next packet not all here
        want: list[Any] = []
        pos, seq = 0, 9
        got: list[Any] = []
        end = _text_pairs(data + tail, 0, 9, convs[0][0], convs[1][0], got)
        while (pos, seq) != end:  # _row over what _text_pairs took
            one = _row(data + tail, pos, seq, convs)
            assert one is not None
            want.append(one[0])
            pos, seq = one[1], (seq + 1) % 256
        assert got == want
        nxt = payloads[len(got)] if len(got) < len(payloads) else None
        plain = nxt is not None and nxt[0] < 0xFB and len(nxt) > nxt[0] + 1 \
            and nxt[nxt[0] + 1] < 0xFB and len(nxt) == nxt[0] + 2 + nxt[nxt[0] + 1]
        assert not plain  # it stopped at a row it does not take, or at the EOF
    assert _text_pairs(data, 0, 8, "utf8", "utf8", []) == (0, 8)  # out of step
    assert _text_pairs(data[:7], 0, 9, "utf8", "utf8", []) == (0, 9)  # not all here
