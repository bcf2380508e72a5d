"""Reading recordings (``Recording``): open, seek, iterate, and what the live engine
recorded (its findings and observations; re-running today's checks is rerun.py).

``open_recording(path)`` maps the file, reads the header and finds the chunks
by walking the key frames' back pointers from the last one (found from the
end of the file), so opening a day-long recording touches ~1,500 small frames,
with or without a clean close. Damage never raises past open: it is described
in ``problems`` (byte offset, tick range) and everything intact stays readable.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import logging
import mmap
import os
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replmon.engine import Update
from replmon.errors import SessionError
from replmon.model.drbd import derive_drbd_rates
from replmon.model.findings import Finding
from replmon.model.host_rates import derive_host_rates
from replmon.model.mysql_rates import derive_mysql_rates
from replmon.model.parts import PARTS, rates_only, samples_read, thin, tick_from_json_thinned
from replmon.model.redis import derive_redis_rates
from replmon.model.tick import (
    NO_RATES,
    NodeRates,
    NodeTick,
    RateTracker,
    Tick,
    tick_from_json,
)
from replmon.session.facts import ChunkFacts, unpack_facts
from replmon.session.format import (
    HEADER_SIZE,
    KEY_MARK,
    KEY_PREFIX,
    KIND_END,
    KIND_FACTS,
    KIND_HEADER,
    KIND_KEY,
    KIND_OBS,
    KIND_TICK,
    MAGIC,
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

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chunk:
    offset: int
    first: int
    """Index of its first tick."""
    wall: float


@dataclass
class Entry:
    index: int
    """Position of the tick in the recording (0 for the first)."""
    tick: Tick
    update: Update | None


def _decompress(z: Any, data: bytes, offset: int) -> bytes:
    out = bytes(z.decompress(data, MAX_RECORD))
    if z.unconsumed_tail:
        raise FrameError(offset, f"record larger than {MAX_RECORD} bytes")
    return out


def decode_update(seq: int, raw: dict[str, Any], wall: float = 0.0) -> Update:
    opened = set(raw.get("opened", []))
    open_ = [Finding.model_validate(f) for f in raw.get("open", [])]
    return Update(seq=seq, wall=wall, open=open_,
                  opened=[f for i, f in enumerate(open_) if i in opened],
                  closed=[Finding.model_validate(f) for f in raw.get("closed", [])])


_DERIVE: dict[str, Any] = {"host": derive_host_rates, "drbd": derive_drbd_rates,
                           "mysql": derive_mysql_rates, "redis": derive_redis_rates}
"""Source kind -> what derives its rates (as ``RateTracker`` does for all four)."""


class SomeRates(RateTracker):
    """A RateTracker that derives the rates of some source kinds only: a re-run of checks
    that name what they read (``Check.reads``) needs no other, and deriving a tick's host
    rates (every disk and NIC) costs more than decoding it. The others are DroppedParts
    (``replmon.model.parts``), so no check can read them."""

    def __init__(self, kinds: frozenset[str]) -> None:
        super().__init__()
        self.kinds = kinds

    def rates(self, node: NodeTick) -> NodeRates:
        last = self._last.get(node.given_role, {})
        values = {}
        for kind in self.kinds:
            cur, prev = getattr(node, kind), last.get(kind)
            values[kind] = (_DERIVE[kind](prev if prev is not None and prev.status.ok else None,
                                          cur) if cur.status.ok else getattr(NO_RATES, kind))
        self.remember(node)
        rates: NodeRates = rates_only(values)  # the others dropped: no check reads them
        return rates

    def remember(self, node: NodeTick) -> None:
        """Only the kinds it derives: the others may not have been decoded."""
        self.remember_kinds(node, self.kinds)


class Recording:
    """One recording file, opened read-only. ``len(rec)`` ticks, by index 0..len-1."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.problems: list[str] = []
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
        except OSError as e:
            raise SessionError(f"cannot open recording {self.path}: {e}") from None
        self._reported: set[int] = set()
        """Byte offsets whose damage is already in ``problems``."""
        self._head_said = False
        """Whether ``problems`` already says that the first ticks are lost."""
        self.meta: RecordingMeta = self._read_header()
        self.chunks: list[Chunk] = self._find_chunks()
        self._count = self._count_tail()
        self._cache: tuple[int, Iterator[Entry], list[Entry]] | None = None

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
        self._reported.add(len(MAGIC))
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

    # -- structure ----------------------------------------------------------------

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
        """Index of the tick after the last intact T frame met."""
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
                    self._problem(e, self._lost_tail(next_tick, pos))
                elif resumes > next_tick:
                    self._problem(e, f"ticks {next_tick} to {resumes - 1} lost")
                    self._head_said = self._head_said or next_tick == 0
                else:
                    self._problem(e, "no tick lost: the damage is between two chunks")
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

    def _lost_tail(self, n: int, offset: int) -> str:
        """What damage at ``offset`` with no intact chunk after it costs."""
        if self._buf[offset:offset + 1] == KIND_END and len(self._buf) - offset < 4096:
            return "the end frame is damaged: no tick lost, the clean close is not proven"
        return (f"the readable recording ends here: ticks from {n} on are missing, if any "
                "were written (recorder killed mid-write, or the file was truncated or "
                "damaged)")

    def _problem(self, e: FrameError, where: str) -> None:
        if e.offset in self._reported:
            return
        self._reported.add(e.offset)
        self.add_problem(f"{self.path.name}: byte {e.offset}: {e.reason} ({where})")

    def add_problem(self, msg: str) -> None:
        """Note damage (once per message; logged at INFO: the commands print
        ``problems`` themselves)."""
        if msg not in self.problems:
            log.info("%s", msg)
            self.problems.append(msg)

    def _frames(self, ci: int) -> Iterator[Frame]:
        """Frames of chunk ``ci``, stopping (with a problem) at the first damaged one."""
        pos = self.chunks[ci].offset
        stop = self.chunks[ci + 1].offset if ci + 1 < len(self.chunks) else len(self._buf)
        n = self.chunks[ci].first
        while pos < stop:
            try:
                fr = read_frame(self._buf, pos)
            except FrameError as e:
                self._problem(e, self._lost(ci, n, pos))
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

    def _lost(self, ci: int, n: int, offset: int) -> str:
        if ci + 1 < len(self.chunks):
            nxt = self.chunks[ci + 1].first
            if nxt <= n:
                return "no tick lost: the damage is after the chunk's last tick"
            return f"ticks {n} to {nxt - 1} lost"
        return self._lost_tail(n, offset)

    def _count_tail(self) -> int:
        if not self.chunks:
            return 0
        if self.chunks[0].first > 0 and not self._head_said:
            self.add_problem(f"{self.path.name}: ticks 0 to {self.chunks[0].first - 1} lost "
                             f"(damage before byte {self.chunks[0].offset})")
        last = self.chunks[-1].first - 1
        for fr in self._frames(len(self.chunks) - 1):
            if fr.kind == KIND_TICK:
                last = fr.index
        if self.end is None and not self.problems:
            log.info("%s: no end frame (the recorder did not close cleanly)", self.path)
        return last + 1

    # -- decoding -----------------------------------------------------------------

    def _records(self, ci: int) -> Iterator[tuple[Frame, bytes]]:
        """Chunk ``ci``'s frames with their records: K and T frames decompressed (one
        zlib stream per chunk), others as stored. Damage ends it, with a problem."""
        z: Any = None
        for fr in self._frames(ci):
            try:
                if fr.kind == KIND_KEY:
                    z = zlib.decompressobj()
                    data = _decompress(z, split_key_payload(fr.payload)[2], fr.offset)
                elif fr.kind == KIND_TICK and z is not None:
                    data = _decompress(z, fr.payload, fr.offset)
                else:
                    data = fr.payload
            except (FrameError, zlib.error, ValueError) as e:
                self._bad(ci, fr, e)
                return
            yield fr, data

    def _bad(self, ci: int, fr: Frame, e: Exception) -> None:
        err = e if isinstance(e, FrameError) else FrameError(fr.offset, f"bad record: {e}")
        self._problem(err, self._lost(ci, fr.index, fr.offset))

    def chunk_observations(self, ci: int) -> tuple[ChunkObservations | None, list[float]]:
        """Chunk ``ci``'s O frame (None when it has none, or it is damaged or does not
        match the chunk's ticks) and the wall times of its intact ticks, reading frames
        only (checksums, no decompression of ticks)."""
        obs, walls = self._beside(ci, KIND_OBS, unpack_observations, "bad observations",
                                  "no tick lost; the checks are run again on this chunk")
        return obs, walls

    def chunk_facts(self, ci: int) -> tuple[ChunkFacts | None, list[float]]:
        """Chunk ``ci``'s F frame (None when it has none, or it is damaged or does not
        match the chunk's intact ticks) and those ticks' wall times, as
        ``chunk_observations``."""
        facts, walls = self._beside(ci, KIND_FACTS, unpack_facts, "bad report facts",
                                    "no tick lost; the report decodes this chunk's ticks")
        return facts, walls

    def _beside(self, ci: int, kind: bytes, unpack: Callable[[bytes], Any], bad: str,
                costs: str) -> tuple[Any, list[float]]:
        """The frame of ``kind`` written after chunk ``ci``'s ticks (unpacked; None when
        absent, damaged, or not of the chunk's first tick and intact tick count) and the
        walls of those ticks."""
        found: Any = None
        walls: list[float] = []
        for fr in self._frames(ci):
            if fr.kind == KIND_TICK:
                walls.append(fr.wall)
            elif fr.kind == kind:
                try:
                    found = unpack(fr.payload)
                except ValueError as e:
                    self._problem(FrameError(fr.offset, f"{bad}: {e}"), costs)
        if found is not None and (found.first != self.chunks[ci].first
                                  or found.count != len(walls)):
            found = None
        return found, walls

    def chunk_entries(self, ci: int, parts: frozenset[str] | None = None) -> Iterator[Entry]:
        """Decode chunk ``ci`` tick by tick; a damaged frame ends it (with a problem).
        ``parts`` (``replmon.model.parts.kept_parts``): each tick thinned to them, and only
        their rates derived (what a re-run of checks that name what they read needs)."""
        tracker = RateTracker() if parts is None else SomeRates(frozenset(
            p.removeprefix("rates.") for p in parts if p.startswith("rates.")))
        rates_kept = (parts or frozenset()) | {p for p in PARTS if not p.startswith("rates.")}
        """The samples decoded are kept whole: only the rates not derived must not be read."""
        samples = None if parts is None else samples_read(parts)
        """The samples decoded (the others stepped over: ``tick_from_json_thinned``)."""
        keyed = False
        for fr, data in self._records(ci):
            try:
                if fr.kind == KIND_KEY:
                    keyed = True
                    base = json.loads(data)
                    for role in ("primary", "replica"):
                        if base.get(role) is not None:
                            tracker.rates(NodeTick.model_validate(base[role]))
                elif fr.kind == KIND_TICK and keyed:
                    if parts is None:
                        yield self._decode_tick(data, tracker, fr)
                    else:  # no recorded update (a re-run does not read it); rates thinned
                        entry = self._decode_tick(data, tracker, fr, update=False,
                                                  samples=samples)
                        entry.tick = thin(entry.tick, rates_kept)
                        yield entry
            except (ValueError, ValidationError) as e:
                self._bad(ci, fr, e)
                return

    def _decoded(self, ci: int, k: int | None = None) -> list[Entry]:
        """Entries of chunk ``ci`` decoded at least up to its ``k``-th (all when None);
        the chunk being read stays cached, so stepping through it decodes each tick once."""
        if self._cache is None or self._cache[0] != ci:
            self._cache = (ci, self.chunk_entries(ci), [])
        _, gen, out = self._cache
        while k is None or len(out) <= k:
            nxt = next(gen, None)
            if nxt is None:
                break
            out.append(nxt)
        return out

    @staticmethod
    def _decode_tick(record: bytes, tracker: RateTracker, fr: Frame, update: bool = True,
                     samples: frozenset[str] | None = None) -> Entry:
        """``samples``: only those decoded (``tick_from_json_thinned``), else all."""
        tick_json, _, extra_json = record.partition(b"\n")
        tick = (tick_from_json(tick_json) if samples is None
                else tick_from_json_thinned(tick_json, samples))
        extra: dict[str, Any] = json.loads(extra_json) if extra_json else {}
        stored = extra.get("r", {})
        nodes: dict[str, NodeTick] = {}
        for n in tick.nodes:
            rates = tracker.rates(n)
            if n.role in stored:
                rates = NodeRates.model_validate(stored[n.role])
            nodes[n.role] = n.model_copy(update={"rates": rates})
        tick = tick.model_copy(update=nodes)
        upd = (decode_update(tick.seq, extra["u"], tick.wall) if update and "u" in extra
               else None)
        return Entry(fr.index, tick, upd)

    def chunk_of(self, i: int) -> int:
        """Index of the chunk holding tick ``i``."""
        if not 0 <= i < self._count:
            raise IndexError(f"tick {i} out of range 0..{self._count - 1}")
        return bisect.bisect_right([c.first for c in self.chunks], i) - 1

    def entry(self, i: int) -> Entry:
        ci = self.chunk_of(i)
        k = i - self.chunks[ci].first
        entries = self._decoded(ci, k)
        if k >= len(entries):
            raise SessionError(f"{self.path.name}: tick {i} is in a damaged part of the "
                               f"recording: {'; '.join(self.problems[-1:])}")
        return entries[k]

    # -- public -------------------------------------------------------------------

    def __len__(self) -> int:
        return self._count

    def tick_at(self, i: int) -> Tick:
        return self.entry(i).tick

    def update_at(self, i: int) -> Update | None:
        """The findings the live engine reported with tick ``i`` (None if not recorded)."""
        return self.entry(i).update

    def entries(self) -> Iterator[Entry]:
        """Every intact tick with its recorded update, in order (damaged ranges skipped)."""
        for ci in range(len(self.chunks)):
            yield from self.chunk_entries(ci)

    def ticks(self) -> Iterator[Tick]:
        for e in self.entries():
            yield e.tick

    def __iter__(self) -> Iterator[Tick]:
        return self.ticks()

    def seek(self, wall: float) -> int:
        """Index of the first tick at or after ``wall`` (epoch s); clamped to the ends."""
        if not self._count:
            raise SessionError(f"{self.path.name}: the recording holds no tick")
        walls = [c.wall for c in self.chunks]
        ci = max(0, bisect.bisect_right(walls, wall) - 1)
        for fr in self._frames(ci):
            if fr.kind == KIND_TICK and fr.wall >= wall:
                return fr.index
        return min(self.chunks[ci + 1].first if ci + 1 < len(self.chunks) else self._count - 1,
                   self._count - 1)

    def node_names(self) -> dict[str, str]:
        """Role as given (by the command line or config) -> node name, from the header
        (or, when it lacks them, the first tick's nodes by the roles they were given)."""
        names = {role: info.name for role, info in self.meta.nodes.items() if info.name}
        if len(names) < 2 and len(self):
            with contextlib.suppress(SessionError):
                names = {n.given_role: n.name for n in self.tick_at(0).nodes}
        return names

    def _recorded_updates(self) -> Iterator[tuple[int, float, dict[str, Any]]]:
        """(tick index, wall, raw update) of every tick whose recorded update opened a
        finding. Reads only the recorded findings (no tick is validated, no rate
        derived): about 25 us a tick, 2 s for a day."""
        for ci in range(len(self.chunks)):
            for fr, data in self._records(ci):
                if fr.kind != KIND_TICK:
                    continue
                extra = data.partition(b"\n")[2]
                try:
                    raw = json.loads(extra).get("u", {}) if extra else {}
                except ValueError as e:
                    self._bad(ci, fr, e)
                    break
                if raw.get("opened"):
                    yield fr.index, fr.wall, raw

    def recorded_openings(self) -> list[int]:
        """Indexes of the ticks at which the live engine opened a finding."""
        return [i for i, _, _ in self._recorded_updates()]

    def recorded_onsets(self) -> list[tuple[int, list[Finding]]]:
        """(tick index, the findings the live engine opened there), in order."""
        return [(i, decode_update(i, raw, wall).opened)
                for i, wall, raw in self._recorded_updates()]

    def overview(self, points: int = 400) -> Iterator[Entry]:
        """About ``points`` ticks spread over the whole recording: the first intact tick of
        every k-th chunk (rates from the chunk's key frame), decoding nothing else, so a
        day's shape is read in well under a second. Damaged chunks are skipped."""
        step = max(1, -(-len(self.chunks) // max(1, points)))
        for ci in range(0, len(self.chunks), step):
            entries = self.chunk_entries(ci)
            first = next(entries, None)
            entries.close()  # type: ignore[attr-defined]
            if first is not None:
                yield first

    def verify(self) -> list[str]:
        """Decode every frame (CRC, zlib, JSON, models); ``problems`` afterwards."""
        for _ in self.entries():
            pass
        return self.problems

    def close(self) -> None:
        self._cache = None
        self._buf.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_recording(path: str | Path) -> Recording:
    """Open a recording. SessionError when it is not one, its header is unreadable or its
    format version is unsupported; damage further in is listed in ``problems``."""
    return Recording(path)


def raw_records(path: str | Path) -> Iterator[bytes]:
    """Every payload of a recording, decompressed where compressed (for audits such as
    'no password anywhere in this file')."""
    with open_recording(path) as rec:
        yield bytes(rec._buf[:rec._data_start])
        for ci in range(len(rec.chunks)):
            for fr, data in rec._records(ci):
                if fr.kind in (KIND_OBS, KIND_FACTS):  # zlib streams of their own
                    with contextlib.suppress(zlib.error):  # else as stored
                        data = zlib.decompressobj().decompress(data, MAX_RECORD)
                yield data
