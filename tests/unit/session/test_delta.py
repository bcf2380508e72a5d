"""Format 3: a chunk's tick records after its first are stored as their change
(session/delta.py). A field that repeats every tick is stored once a chunk; the ticks
read back are the ticks written, bit for bit; a version 2 meta still writes version 2."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sessiondata import lab_ticks

from replmon.engine import build_engine
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.delta import SAME, DeltaReader, DeltaWriter, apply, change
from replmon.session.format import (
    FORMAT_VERSION,
    HEADER_SIZE,
    KIND_KEY,
    KIND_TICK,
    MAGIC,
    read_frame,
    split_key_payload,
)
from replmon.testing.real_ticks import loop_ticks

SAMPLE = Path(__file__).resolve().parents[3] / "sample_sessions" / "replica_lag_growing.rmrec"


def _stored_records(path: Path) -> list[list[bytes]]:
    """Each chunk's tick records as stored (decompressed, not made whole again)."""
    buf = path.read_bytes()
    pos, chunks, z = len(MAGIC), [], None
    while pos < len(buf):
        fr = read_frame(buf, pos)
        if fr.kind == KIND_KEY:
            z = zlib.decompressobj()
            z.decompress(split_key_payload(fr.payload)[2])
            chunks.append([])
        elif fr.kind == KIND_TICK:
            assert z is not None
            chunks[-1].append(z.decompress(fr.payload))
        pos = fr.end
    assert pos == len(buf) and HEADER_SIZE == 25
    return chunks


def _write(path: Path, ticks: list[Tick], version: int = FORMAT_VERSION,
           engine: bool = True) -> Path:
    live = build_engine(entry_points=False) if engine else None
    with RecordingWriter(path, meta_for(interval=1.0, version=version), chunk_ticks=40) as w:
        for t in ticks:
            w.write(t, live.feed(t) if live is not None else None)
    return path


@pytest.fixture(scope="module")
def ticks() -> list[Tick]:
    """Real lab ticks (host, MySQL, Redis on both nodes), looped to 100 with their rates."""
    return list(loop_ticks(lab_ticks(), 100, rates=True))


def test_a_repeated_field_is_stored_once_a_chunk(tmp_path: Path, ticks: list[Tick]) -> None:
    # the server's version never changes: whole in each chunk's first record, never after
    version = ticks[0].primary.mysql.version
    assert "MariaDB" in version and all(t.primary.mysql.version == version for t in ticks)
    path = _write(tmp_path / "d.rmrec", ticks)
    chunks = _stored_records(path)
    assert [len(c) for c in chunks] == [40, 40, 20]
    for records in chunks:
        assert [version.encode() in r for r in records] == [True] + [False] * (len(records) - 1)
        assert b'"hostname"' in records[0] and not any(b'"hostname"' in r for r in records[1:])
    with open_recording(path) as rec:
        back = list(rec.ticks())
    assert back == ticks  # every sample and rate, bit for bit
    assert all(t.primary.mysql.version == version for t in back)


def test_changes_cost_less_than_whole_records(tmp_path: Path, ticks: list[Tick]) -> None:
    """The same ticks in version 2 (whole records) and version 3: at most 0.85x the bytes
    (0.77x on a lab recording of 120 ticks re-encoded, 0.75x here: 924 against 1,226 B)."""
    v3 = _write(tmp_path / "v3.rmrec", ticks).stat().st_size
    v2_path = _write(tmp_path / "v2.rmrec", ticks, version=2)
    with open_recording(v2_path) as rec:
        assert rec.meta.version == 2 and list(rec.ticks()) == ticks
    assert all(r.startswith(b'{"seq"') for c in _stored_records(v2_path) for r in c)
    assert v3 <= 0.85 * v2_path.stat().st_size, (v3, v2_path.stat().st_size)


def test_a_recorded_session_reads_the_same_in_both_versions(tmp_path: Path) -> None:
    """A session recorded live (format 2), written again in format 3 with its findings:
    the same ticks and the same recorded updates."""
    with open_recording(SAMPLE) as rec:
        ticks = list(rec.ticks())[:90]
        updates = [rec.update_at(i) for i in range(90)]
    path = tmp_path / "again.rmrec"
    with RecordingWriter(path, meta_for(interval=ticks[0].interval)) as w:
        for t, u in zip(ticks, updates, strict=True):
            w.write(t, u)
    with open_recording(path) as again:
        assert again.meta.version == 3 and again.problems == []
        assert list(again.ticks()) == ticks
        for i in (0, 1, 59, 60, 61, 89):
            got, want = again.update_at(i), updates[i]
            assert (got is None) == (want is None)
            if got is not None and want is not None:
                assert [f.model_dump() for f in got.open] == [f.model_dump() for f in want.open]
        assert again.tick_at(75) == ticks[75]  # a seek into the second chunk


@pytest.mark.parametrize(("prev", "cur"), [
    (1, 1.0), (1.0, 1), (True, 1), (1, True), (0, False), (None, 0), (0, None),
    ("a", 5), (5, "a"), ({"a": 1}, {"a": 1, "b": 2}), ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    ([1, 2], [1, 2, 3]), ([1, 2], [1.0, 2]), ([{"x": 1}], [{"x": 2}]), ({"l": [1]}, {"l": 7}),
    (7, {"a": 1}), ([], {}), ({}, []), ("x", [1]), (10**20, 3), (3, -(10**20)),
    ({"a": {"b": [1, {"c": "d"}]}}, {"a": {"b": [1, {"c": "e"}]}}), ("same", "same"),
])
def test_a_change_gives_back_the_value_and_its_type(prev: Any, cur: Any) -> None:
    d = change(prev, cur)
    if d is SAME:
        assert type(prev) is type(cur) and prev == cur
        return
    wire = msgspec.json.decode(msgspec.json.encode(d))  # as stored
    got = apply(msgspec.json.decode(msgspec.json.encode(prev)), wire)
    assert msgspec.json.encode(got) == msgspec.json.encode(cur)


def test_a_record_that_does_not_fit_is_refused() -> None:
    w, r = DeltaWriter(), DeltaReader()
    r.record(w.record(b'{"seq":1,"a":{"b":1}}', {}))
    with pytest.raises(ValueError, match="lacks"):
        r.record(b'{"zz":1}\n')
    r.restart()
    r.record(b'{"seq":1,"a":[1]}\n')
    with pytest.raises(ValueError, match="item 5"):
        r.record(b'{"a":{"5":2}}\n')
