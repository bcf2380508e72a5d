"""A recording file as chunks of frames (``RecordingFrames``): open, the header, the
index of its chunks, each chunk's frames and records, the frames written beside a
chunk's ticks, and seeking by time. Decoding ticks is recording.py's.

Opening maps the file, reads the header and finds the chunks by walking the key frames'
back pointers from the last one (found from the end of the file), so opening a
day-long recording touches ~1,500 small frames, with or without a clean close. Damage
never raises past open: it is described in ``problems`` (damage.py) and everything
intact stays readable.
"""

from __future__ import annotations

import bisect
import json
import mmap
import os
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replmon.configfile import os_problem, shown
from replmon.errors import SessionError
from replmon.session.damage import DamageReport, log, lost_between, lost_tail
from replmon.session.delta import DeltaReader
from replmon.session.facts import ChunkFacts, unpack_facts
from replmon.session.format import (
    DELTA_VERSION,
    HEADER,
    HEADER_SIZE,
    KEY_MARK,
    KEY_PREFIX,
    KIND_END,
    KIND_HEADER,
    KIND_KEY,
    KIND_OBSERVATIONS,
    KIND_SUMMARY,
    KIND_TICK,
    MAGIC,
    MAX_FRAME,
    MAX_RECORD,
    NO_OFFSET,
    ChunkObservations,
    Frame,
    FrameError,
    RecordingMeta,
    UnreadableVersion,
    meta_from_key,
    parse_meta,
    read_frame,
    split_key_payload,
    unpack_observations,
)


def _without_gauges(payload: bytes) -> ChunkObservations:
    return unpack_observations(payload, gauges=False)


def _no_charts(payload: bytes) -> ChunkFacts:
    return unpack_facts(payload, charts=False)


@dataclass(frozen=True)
class Chunk:
    offset: int
    first: int
    """Index of its first tick."""
    wall: float


def _decompress(z: Any, data: bytes, offset: int) -> bytes:
    out = bytes(z.decompress(data, MAX_RECORD))
    if z.unconsumed_tail:
        raise FrameError(offset, f"record larger than {MAX_RECORD} bytes")
    return out


class RecordingFrames:
    """One recording file's frames, opened read-only; ``len()`` ticks, by index 0..len-1."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.damage = DamageReport(self.path.name)
        self.problems: list[str] = self.damage.problems
        """What was damaged, each with its byte offset and tick range; empty when intact."""
        self.end: dict[str, Any] | None = None
        """The end frame's JSON (None: the recorder did not close cleanly)."""
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):
                raise SessionError(f"{self.path}: not a recording: not a regular file")
            with open(self.path, "rb") as f:
                size = f.seek(0, 2)
                if size == 0:
                    raise SessionError(f"{self.path}: empty file (the recorder stopped before "
                                       "its first tick)")
                self._buf: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as e:  # one line in plain words, as a --config file's
            raise SessionError(f"{shown(path)}: {os_problem(path, e)}") from None
        self._scanned: dict[int, tuple[list[float], dict[bytes, list[int]]]] = {}
        """Chunk -> ``_walls_and_beside``'s answer."""
        self.meta: RecordingMeta = self._read_header()
        self.chunks: list[Chunk] = self._find_chunks()
        self._count = self._count_tail()

    def add_problem(self, msg: str) -> None:
        """Note damage (once per message: ``DamageReport.add``)."""
        self.damage.add(msg)

    def _read_header(self) -> RecordingMeta:
        """The header; when it is damaged, what the first intact key frame repeats of it
        (version 2; a version 1 file gets defaults, its ticks name their nodes)."""
        buf = self._buf
        magic_ok = buf[:len(MAGIC)] == MAGIC
        first_key = buf.find(KEY_MARK, len(MAGIC))
        if not magic_ok and first_key < 0:
            raise SessionError(f"{self.path}: not a replmon recording (no signature at byte 0)")
        self._data_start = len(MAGIC)
        why = "the signature at byte 0 is damaged"
        if magic_ok:
            try:
                head = read_frame(buf, len(MAGIC))
                if head.kind != KIND_HEADER:
                    raise FrameError(head.offset, "expected the header frame")
                meta = parse_meta(head.payload)
                self._data_start = head.end
                return meta
            except FrameError as e:
                why = f"byte {e.offset}: {e.reason}"
            except UnreadableVersion as e:
                raise SessionError(f"{self.path}: {e}") from None
            except SessionError as e:  # not JSON, or not a valid header: damaged
                why = str(e)
        self.damage.said_at(len(MAGIC))
        while first_key >= 0:
            key_at = first_key - HEADER_SIZE
            try:
                fr = read_frame(buf, key_at)
                _, info, _ = split_key_payload(fr.payload)
                meta = (meta_from_key(info) if info is not None
                        else RecordingMeta(version=1, damaged=True))
            except (FrameError, ValueError, SessionError):
                first_key = buf.find(KEY_MARK, first_key + 1)
                continue
            self._data_start = key_at
            self.add_problem(f"{self.path.name}: recording header unreadable ({why}): its "
                             f"config and server versions are lost; node names and interval "
                             f"are read from the key frame at byte {key_at}; no tick is lost "
                             "by it")
            return meta
        raise SessionError(f"{self.path}: recording header unreadable ({why}) and no intact "
                           "key frame follows: no tick can be read")

    # -- the index of chunks ------------------------------------------------------

    def _key_at(self, offset: int) -> tuple[Chunk, int]:
        if offset < 0:
            raise FrameError(offset, "not a key frame")
        fr = read_frame(self._buf, offset)
        if fr.kind != KIND_KEY or fr.payload[:8] != KEY_MARK:
            raise FrameError(offset, "not a key frame")
        _, prev = KEY_PREFIX.unpack_from(fr.payload)
        return Chunk(offset, fr.index, fr.wall), prev

    def _find_chunks(self) -> list[Chunk]:
        """Walk back from the last intact key frame; on a broken link, scan forward."""
        pos = len(self._buf)
        while True:
            mark = self._buf.rfind(KEY_MARK, self._data_start, pos)
            if mark < 0:
                return self._scan_forward()  # no intact key frame: say what the bytes hold
            try:
                chunk, prev = self._key_at(mark - HEADER_SIZE)
                break
            except FrameError:
                pos = mark  # a damaged last key frame (or a chance match): look further back
        chunks = [chunk]
        while prev != NO_OFFSET:
            try:
                chunk, prev = self._key_at(prev)
            except FrameError:
                return self._scan_forward()
            chunks.append(chunk)
        chunks.reverse()
        if chunks[0].offset != self._data_start or chunks[0].first != 0:
            return self._scan_forward()
        return chunks

    def _scan_forward(self) -> list[Chunk]:
        """Every intact key frame, frame by frame from the start; after damage, on from
        the next key mark. Says which ticks each damaged stretch cost."""
        chunks: list[Chunk] = []
        pos = self._data_start
        next_tick = 0
        """Index of the tick after the last intact tick frame met."""
        while pos < len(self._buf):
            try:
                fr = read_frame(self._buf, pos)
                if fr.kind == KIND_KEY:
                    chunks.append(self._key_at(pos)[0])
                elif fr.kind == KIND_TICK:
                    next_tick = fr.index + 1
                pos = fr.end
            except FrameError as e:
                skip_to, resumes = self._next_key(pos + 1)
                if resumes is None:
                    self.damage.at(e, lost_tail(self._buf, next_tick, pos))
                elif resumes > next_tick:
                    self.damage.at(e, f"ticks {next_tick} to {resumes - 1} lost")
                    self.damage.head_said = self.damage.head_said or next_tick == 0
                else:
                    self.damage.at(e, "no tick lost: the damage is between two chunks")
                pos = skip_to
        return chunks

    def _next_key(self, start: int) -> tuple[int, int | None]:
        """Offset of the next intact key frame at or after ``start`` and the index of its
        first tick (end of file and None when there is none)."""
        mark = self._buf.find(KEY_MARK, start + HEADER_SIZE)
        while mark >= 0:
            try:
                chunk, _ = self._key_at(mark - HEADER_SIZE)
                return chunk.offset, chunk.first
            except FrameError:
                mark = self._buf.find(KEY_MARK, mark + 1)
        return len(self._buf), None

    def _lost(self, ci: int, n: int, offset: int) -> str:
        """What damage at ``offset`` in chunk ``ci``, after tick ``n - 1``, costs."""
        if ci + 1 < len(self.chunks):
            return lost_between(n, self.chunks[ci + 1].first)
        return lost_tail(self._buf, n, offset)

    def _count_tail(self) -> int:
        if not self.chunks:
            return 0
        if self.chunks[0].first > 0 and not self.damage.head_said:
            self.add_problem(f"{self.path.name}: ticks 0 to {self.chunks[0].first - 1} lost "
                             f"(damage before byte {self.chunks[0].offset})")
        last = self.chunks[-1].first - 1
        for fr in self.frames(len(self.chunks) - 1):
            if fr.kind == KIND_TICK:
                last = fr.index
        if self.end is None and not self.problems:
            log.info("%s: no end frame (the recorder did not close cleanly)", self.path)
        return last + 1

    def __len__(self) -> int:
        return self._count

    def chunk_of(self, i: int) -> int:
        """Index of the chunk holding tick ``i``."""
        if not 0 <= i < self._count:
            raise IndexError(f"tick {i} out of range 0..{self._count - 1}")
        return bisect.bisect_right([c.first for c in self.chunks], i) - 1

    def seek(self, wall: float) -> int:
        """Index of the first tick at or after ``wall`` (epoch s); clamped to the ends."""
        if not self._count:
            raise SessionError(f"{self.path.name}: the recording holds no tick")
        walls = [c.wall for c in self.chunks]
        ci = max(0, bisect.bisect_right(walls, wall) - 1)
        for fr in self.frames(ci):
            if fr.kind == KIND_TICK and fr.wall >= wall:
                return fr.index
        return min(self.chunks[ci + 1].first if ci + 1 < len(self.chunks) else self._count - 1,
                   self._count - 1)

    # -- a chunk's frames -----------------------------------------------------------

    def frames(self, ci: int) -> Iterator[Frame]:
        """Frames of chunk ``ci``, stopping (with a problem) at the first damaged one."""
        pos = self.chunks[ci].offset
        stop = self.chunks[ci + 1].offset if ci + 1 < len(self.chunks) else len(self._buf)
        n = self.chunks[ci].first
        while pos < stop:
            try:
                fr = read_frame(self._buf, pos)
            except FrameError as e:
                self.damage.at(e, self._lost(ci, n, pos))
                return
            if fr.kind == KIND_END:
                try:
                    self.end = json.loads(fr.payload)
                except ValueError:
                    self.end = {}
            yield fr
            if fr.kind == KIND_TICK:
                n = fr.index + 1
            pos = fr.end

    def records(self, ci: int) -> Iterator[tuple[Frame, bytes]]:
        """Chunk ``ci``'s frames with their records: key and tick frames decompressed (one
        zlib stream per chunk; a version 3 tick record made whole again from its change),
        others as stored. Damage ends it, with a problem."""
        z: Any = None
        delta = DeltaReader() if self.meta.version >= DELTA_VERSION else None
        for fr in self.frames(ci):
            try:
                if fr.kind == KIND_KEY:
                    z = zlib.decompressobj()
                    data = _decompress(z, split_key_payload(fr.payload)[2], fr.offset)
                    if delta is not None:
                        delta.restart()
                elif fr.kind == KIND_TICK and z is not None:
                    data = _decompress(z, fr.payload, fr.offset)
                    if delta is not None:
                        data = delta.record(data)
                else:
                    data = fr.payload
            except (FrameError, zlib.error, ValueError) as e:
                self.bad(ci, fr, e)
                return
            yield fr, data

    def bad(self, ci: int, fr: Frame, e: Exception) -> None:
        """Frame ``fr`` of chunk ``ci`` holds a record that does not read (``e``): the
        problem, with the ticks it costs."""
        err = e if isinstance(e, FrameError) else FrameError(fr.offset, f"bad record: {e}")
        self.damage.at(err, self._lost(ci, fr.index, fr.offset))

    def chunk_observations(self, ci: int, gauges: bool = True
                           ) -> tuple[ChunkObservations | None, list[float]]:
        """Chunk ``ci``'s observations frame (None when it has none, or it is damaged or
        does not match the chunk's ticks) and the wall times of its intact ticks, reading
        frames only (checksums, no decompression of ticks). Without ``gauges``: its gauges
        left empty (``unpack_observations``)."""
        obs, walls = self._beside(ci, KIND_OBSERVATIONS,
                                  unpack_observations if gauges else _without_gauges,
                                  "bad observations",
                                  "no tick lost; the checks are run again on this chunk")
        return obs, walls

    def chunk_facts(self, ci: int, charts: bool = True) -> tuple[ChunkFacts | None, list[float]]:
        """Chunk ``ci``'s summary frame (None when it has none, or it is damaged or does
        not match the chunk's intact ticks) and those ticks' wall times, as
        ``chunk_observations``. Without ``charts``: as a frame without chart values
        (``unpack_facts``)."""
        facts, walls = self._beside(ci, KIND_SUMMARY, unpack_facts if charts else _no_charts,
                                    "bad report facts",
                                    "no tick lost; the report decodes this chunk's ticks")
        return facts, walls

    def _beside(self, ci: int, kind: bytes, unpack: Callable[[bytes], Any], bad: str,
                costs: str) -> tuple[Any, list[float]]:
        """The frame of ``kind`` written after chunk ``ci``'s ticks (unpacked; None when
        absent, damaged, or not of the chunk's first tick and intact tick count) and the
        walls of those ticks."""
        found: Any = None
        walls, beside = self._walls_and_beside(ci)
        for offset in beside.get(kind, ()):
            try:
                found = unpack(read_frame(self._buf, offset).payload)
            except (FrameError, ValueError) as e:
                self.damage.at(FrameError(offset, f"{bad}: {e}"), costs)
        if found is not None and (found.first != self.chunks[ci].first
                                  or found.count != len(walls)):
            found = None
        return found, walls

    def _walls_and_beside(self, ci: int) -> tuple[list[float], dict[bytes, list[int]]]:
        """The walls of chunk ``ci``'s intact ticks and the offsets of its frames of other
        kinds, by kind, from one walk over its frames (checksums included): kept, so that
        reading its observations frame and then its summary frame (a re-run, then
        ``report``) walks the chunk once (~2.5 KB kept a chunk: 25 MB for a week)."""
        got = self._scanned.get(ci)
        if got is None:
            got = self._quick_scan(ci)
        if got is None:
            walls: list[float] = []
            beside: dict[bytes, list[int]] = {}
            for fr in self.frames(ci):
                if fr.kind == KIND_TICK:
                    walls.append(fr.wall)
                elif fr.kind != KIND_KEY:
                    beside.setdefault(fr.kind, []).append(fr.offset)
            got = (walls, beside)
        self._scanned[ci] = got
        return got[0], got[1]

    def _quick_scan(self, ci: int) -> tuple[list[float], dict[bytes, list[int]]] | None:
        """``_walls_and_beside``'s walk in one loop, each frame's checksum checked over the
        mapped bytes (no frame copied out): a week's 600,000 tick frames in about a third
        of ``frames``' time. None at anything ``frames`` must see to say it (a damaged or
        cut frame, the end frame): the caller walks the chunk with it then."""
        buf = self._buf
        pos = self.chunks[ci].offset
        stop = self.chunks[ci + 1].offset if ci + 1 < len(self.chunks) else len(buf)
        unpack, crc32 = HEADER.unpack_from, zlib.crc32
        walls: list[float] = []
        beside: dict[bytes, list[int]] = {}
        with memoryview(buf) as mv:
            while pos < stop:
                if pos + HEADER_SIZE > stop:
                    return None
                kind, length, _, wall, crc = unpack(buf, pos)
                start = pos + HEADER_SIZE
                end = start + length
                if length > MAX_FRAME or end > stop or kind == KIND_END or crc32(
                        mv[start:end], crc32(mv[pos:pos + 21])) != crc:
                    return None
                if kind == KIND_TICK:
                    walls.append(wall)
                elif kind != KIND_KEY:
                    beside.setdefault(kind, []).append(pos)
                pos = end
        return walls, beside

    def close(self) -> None:
        self._buf.close()
