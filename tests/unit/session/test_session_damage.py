"""Files from strangers, crashes and disks: a damaged recording says where it is
damaged (byte offset, tick range) and replays what is intact; a file that is
not a recording, or of an unknown version, is refused with a clear message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replmon.errors import SessionError
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.format import HEADER_SIZE, KIND_HEADER, MAGIC, pack_frame, read_frame


@pytest.fixture
def rec_path(tmp_path: Path, ticks_200: list[Tick]) -> Path:
    path = tmp_path / "s.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=50) as w:
        for t in ticks_200[:150]:
            w.write(t)
    return path


def frame_offsets(data: bytes) -> list[tuple[int, bytes, int]]:
    """(offset, kind, tick index) of every frame."""
    out, pos = [], len(MAGIC)
    while pos < len(data):
        fr = read_frame(data, pos)
        out.append((pos, fr.kind, fr.index))
        pos = fr.end
    return out


def test_truncated_mid_frame_replays_the_ticks_before(rec_path: Path,
                                                      ticks_200: list[Tick]) -> None:
    data = rec_path.read_bytes()
    frames = frame_offsets(data)
    off = next(o for o, k, i in frames if k == b"T" and i == 120)
    rec_path.write_bytes(data[:off + 40])  # tick 120's frame cut after 40 bytes
    rec = open_recording(rec_path)
    assert len(rec) == 120 and rec.end is None
    assert list(rec.ticks()) == ticks_200[:120]
    assert len(rec.problems) == 1
    assert f"byte {off}" in rec.problems[0] and "truncated" in rec.problems[0]
    assert "ticks from 120 on" in rec.problems[0]


def test_flipped_bytes_lose_only_the_rest_of_that_chunk(rec_path: Path,
                                                        ticks_200: list[Tick]) -> None:
    data = bytearray(rec_path.read_bytes())
    frames = frame_offsets(bytes(data))
    off = next(o for o, k, i in frames if k == b"T" and i == 70)
    for k in range(HEADER_SIZE + 3, HEADER_SIZE + 9):
        data[off + k] ^= 0x5A
    rec_path.write_bytes(bytes(data))
    rec = open_recording(rec_path)
    assert len(rec) == 150
    got = list(rec.ticks())
    assert got == ticks_200[:70] + ticks_200[100:150]  # chunk 50..99 lost from 70
    assert rec.problems == [f"s.rmrec: byte {off}: checksum mismatch (corrupted bytes) "
                            "(ticks 70 to 99 lost)"]
    with pytest.raises(SessionError, match="tick 80 is in a damaged part"):
        rec.tick_at(80)
    assert rec.tick_at(100) == ticks_200[100]


def test_damaged_key_frame_is_skipped_by_a_forward_scan(rec_path: Path,
                                                        ticks_200: list[Tick]) -> None:
    data = bytearray(rec_path.read_bytes())
    off = next(o for o, k, i in frame_offsets(bytes(data)) if k == b"K" and i == 50)
    data[off + HEADER_SIZE + 30] ^= 0xFF
    rec_path.write_bytes(bytes(data))
    rec = open_recording(rec_path)
    assert [c.first for c in rec.chunks] == [0, 100]
    assert list(rec.ticks()) == ticks_200[:50] + ticks_200[100:150]
    assert rec.problems and f"byte {off}" in rec.problems[0]


def test_garbage_and_empty_files_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.rmrec"
    junk.write_bytes(b"\x80\x04\x95pickle? no thanks" * 10)
    with pytest.raises(SessionError, match="not a replmon recording"):
        open_recording(junk)
    junk.write_bytes(MAGIC + b"\x00" * 10)
    with pytest.raises(SessionError, match=r"header unreadable \(byte 8: truncated"):
        open_recording(junk)
    junk.write_bytes(MAGIC + pack_frame(KIND_HEADER, b"{not json"))
    with pytest.raises(SessionError, match="not valid JSON"):
        open_recording(junk)
    empty = tmp_path / "empty.rmrec"
    empty.write_bytes(b"")
    with pytest.raises(SessionError, match="empty file"):
        open_recording(empty)
    with pytest.raises(SessionError, match=r"missing\.rmrec: no such file$"):
        open_recording(tmp_path / "missing.rmrec")


def _with_header(path: Path, **changes: object) -> None:
    data = path.read_bytes()
    head = read_frame(data, len(MAGIC))
    meta = json.loads(head.payload) | changes
    path.write_bytes(MAGIC + pack_frame(KIND_HEADER, json.dumps(meta).encode())
                     + data[head.end:])


def test_newer_version_is_refused_with_a_clear_message(rec_path: Path) -> None:
    _with_header(rec_path, version=7, replmon_version="3.2.0")
    with pytest.raises(SessionError, match=r"version 7 is newer.*replmon 3\.2\.0.*upgrade"):
        open_recording(rec_path)


def test_older_unsupported_version_is_refused(rec_path: Path) -> None:
    _with_header(rec_path, version=0)
    with pytest.raises(SessionError, match="version 0 is older than this replmon supports"):
        open_recording(rec_path)


def test_unknown_header_keys_and_frame_kinds_are_skipped(rec_path: Path,
                                                         ticks_200: list[Tick]) -> None:
    # What a later minor revision may add must not stop this reader: the offsets of
    # the key frames move, so the back pointers break and the forward scan is used.
    _with_header(rec_path, future_field={"x": 1})
    data = rec_path.read_bytes()
    off = next(o for o, k, i in frame_offsets(data) if k == b"T" and i == 10)
    rec_path.write_bytes(data[:off] + pack_frame(b"X", b"something new") + data[off:])
    rec = open_recording(rec_path)
    assert list(rec.ticks()) == ticks_200[:150]


def test_implausible_length_is_a_problem_not_a_crash(rec_path: Path) -> None:
    data = bytearray(rec_path.read_bytes())
    off = next(o for o, k, i in frame_offsets(bytes(data)) if k == b"T" and i == 149)
    data[off + 1:off + 5] = (2**31).to_bytes(4, "little")
    rec_path.write_bytes(bytes(data))
    rec = open_recording(rec_path)
    assert len(rec) == 149
    assert "implausible" in rec.problems[0]
