"""Reading recordings (``Recording``): decode ticks, step through them, and what the live
engine recorded (its findings; re-running today's checks is rerun.py).

``open_recording(path)`` opens the file (frames.py: the header, the index of chunks, the
frames; damage is said in ``problems``, damage.py) and decodes a chunk's ticks when one
is asked for (decoding.py), keeping the chunk being read.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replmon.engine import Update
from replmon.errors import SessionError
from replmon.model.base import SourceState
from replmon.model.findings import Finding
from replmon.model.parts import PARTS, samples_read, thin
from replmon.model.tick import NodeTick, RateTracker, Tick
from replmon.session.decoding import Entry, SomeRates, decode_tick, decode_update
from replmon.session.format import KIND_KEY, KIND_TICK
from replmon.session.frames import RecordingFrames

BEFORE_TRUE_LAG = "recorded before true lag: lag from Seconds_Behind_Master only"
"""What a recording without the replica's true lag (format 1, or a format 2 file written
before ``Tick.lag``) says it lacks, wherever its lag is shown (``Recording.lacks``)."""
BEFORE_TRUE_LAG_POSITIONS = ("recorded before true lag: lag worked out again from the "
                             "recorded positions (pair_lag history)")
"""The same, when the ticks hold the primary's positions the replay measures lag from."""
LACKS_LOOKBACK = 10
"""Ticks ``Recording.lacks`` looks back for a binlog position (read every 2 s)."""


class Recording(RecordingFrames):
    """One recording file, opened read-only. ``len(rec)`` ticks, by index 0..len-1."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._cache: tuple[int, Iterator[Entry], list[Entry]] | None = None

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
        for fr, data in self.records(ci):
            try:
                if fr.kind == KIND_KEY:
                    keyed = True
                    base = json.loads(data)
                    for role in ("primary", "replica"):
                        if base.get(role) is not None:
                            tracker.rates(NodeTick.model_validate(base[role]))
                elif fr.kind == KIND_TICK and keyed:
                    if parts is None:
                        yield decode_tick(fr.index, data, tracker)
                    else:  # no recorded update (a re-run does not read it); rates thinned
                        entry = decode_tick(fr.index, data, tracker, update=False,
                                            samples=samples)
                        entry.tick = thin(entry.tick, rates_kept)
                        yield entry
            except (ValueError, ValidationError) as e:
                self.bad(ci, fr, e)
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

    def entry(self, i: int) -> Entry:
        ci = self.chunk_of(i)
        k = i - self.chunks[ci].first
        entries = self._decoded(ci, k)
        if k >= len(entries):
            raise SessionError(f"{self.path.name}: tick {i} is in a damaged part of the "
                               f"recording: {'; '.join(self.problems[-1:])}")
        return entries[k]

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
            for fr, data in self.records(ci):
                if fr.kind != KIND_TICK:
                    continue
                extra = data.partition(b"\n")[2]
                try:
                    raw = json.loads(extra).get("u", {}) if extra else {}
                except ValueError as e:
                    self.bad(ci, fr, e)
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

    def lacks(self) -> str | None:
        """What this recording lacks that today's replmon would have recorded, in a few
        words (check --replay, report and its page say it); None when nothing is missing.
        Judged on the last intact tick: a replica's MySQL without ``Tick.lag`` was recorded
        before true lag (format 1 has no primary positions either: Seconds_Behind_Master
        is all there is)."""
        if not len(self):
            return None
        try:
            last = self.tick_at(len(self) - 1)
        except SessionError:
            return BEFORE_TRUE_LAG if self.meta.version < 2 else None
        if last.lag is not None or all(n.mysql.status.state is SourceState.ABSENT
                                       for n in last.nodes):
            return None
        with contextlib.suppress(SessionError):  # (read every few ticks: pair_lag's 2 s)
            for i in range(len(self) - 1, max(-1, len(self) - 1 - LACKS_LOOKBACK), -1):
                if any(n.mysql.binlog is not None for n in self.tick_at(i).nodes):
                    return BEFORE_TRUE_LAG_POSITIONS
        return BEFORE_TRUE_LAG

    def verify(self) -> list[str]:
        """Decode every frame (CRC, zlib, JSON, models); ``problems`` afterwards."""
        for _ in self.entries():
            pass
        return self.problems

    def close(self) -> None:
        self._cache = None
        super().close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_recording(path: str | Path) -> Recording:
    """Open a recording. SessionError when it is not one, its header is unreadable or its
    format version is unsupported; damage further in is listed in ``problems``."""
    return Recording(path)
