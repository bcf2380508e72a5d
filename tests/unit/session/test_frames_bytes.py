"""The recorder writes a chunk's summary and observations frames, and its key frame's
baselines, from buffers (arrays, JSON written as each tick comes) rather than from
Python objects kept for the chunk. What a reader gets back must be what the models
built from the ticks and the engine's updates say: every chart value, seq, interval,
missed slot and gauge, the baselines' every field."""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import pytest
from sessiondata import four_source_ticks

from replmon.engine import Update, build_engine
from replmon.model.tick import NodeTick, RateTracker, Tick
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.facts import ChunkFacts, FactsCollector, unpack_facts
from replmon.session.format import (
    KIND_KEY,
    KIND_OBSERVATIONS,
    KIND_SUMMARY,
    ChunkObservations,
    unpack_observations,
)
from replmon.session.series import SERIES_ID, SERIES_KEYS, series_values, shown

CHUNK = 30


Recorded = tuple[list[Tick], Path, list[Update]]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Four chunks of four sources on both nodes, a DRBD peer down (gauges and
    observations at every tick), and one tick whose chart values are all unknown (its
    rates cleared): the ticks, their recording and the engine's updates."""
    ticks = four_source_ticks(4 * CHUNK)
    blank = ticks[40]
    ticks[40] = blank.model_copy(update={
        "primary": blank.primary.model_copy(update={"rates": type(blank.primary.rates)()})})
    engine = build_engine(entry_points=False)
    updates = []
    path = tmp_path_factory.mktemp("frames") / "frames.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=CHUNK) as w:
        for t in ticks:
            updates.append(engine.feed(t))
            w.write(t, updates[-1])
    return ticks, path, updates


def _payloads(path: Path, kind: str) -> list[bytes]:
    with open_recording(path) as rec:
        return [fr.payload for ci in range(len(rec.chunks)) for fr in rec.frames(ci)
                if fr.kind == kind]


def test_summary_frames_hold_each_ticks_values(recorded: Recorded) -> None:
    ticks, path, _ = recorded
    payloads = _payloads(path, KIND_SUMMARY)
    assert len(payloads) == 4
    for ci, payload in enumerate(payloads):
        chunk = ticks[ci * CHUNK:(ci + 1) * CHUNK]
        got = unpack_facts(payload)
        assert got == ChunkFacts.model_validate_json(zlib.decompress(payload))
        assert (got.first, got.count, got.chart_id) == (ci * CHUNK, CHUNK, SERIES_ID)
        assert got.seq == [t.seq for t in chunk]
        assert got.interval == [t.interval for t in chunk]
        assert got.missed == [t.missed for t in chunk]
        rows = [[shown(v) for v in series_values(t)] for t in chunk]
        want = {key: [v if v is not None and math.isfinite(v) else None for v in col]
                for key, col in zip(SERIES_KEYS, zip(*rows, strict=True), strict=True)}
        want = {k: col for k, col in want.items() if any(v is not None for v in col)}
        assert got.charts == want and len(want) > 20
    blank_row = unpack_facts(payloads[1]).charts
    assert sum(col[40 - CHUNK] is None and col[39 - CHUNK] is not None
               for col in blank_row.values()) >= 5  # the tick without rates: nulls


def test_summary_frame_of_values_that_are_not_numbers() -> None:
    """NaN and inf chart as null (as pydantic writes them); a series with no number in
    the chunk is left out."""
    collector = FactsCollector(first=7)
    for seq, tick in enumerate(four_source_ticks(3)):
        collector.add(tick.model_copy(update={"seq": 100 + seq}), None)
    width = len(SERIES_KEYS)
    collector.charted.buf[0] = math.nan
    collector.charted.buf[width] = math.inf
    for row in range(3):
        collector.charted.buf[row * width + 1] = math.nan
    payload = collector.payload()
    facts = None if payload is None else unpack_facts(payload)
    assert facts is not None and facts.seq == [100, 101, 102] and facts.first == 7
    assert facts.charts[SERIES_KEYS[0]][:2] == [None, None]
    assert SERIES_KEYS[1] not in facts.charts
    assert FactsCollector(first=0).payload() is None


def test_observations_frames_hold_every_gauge(recorded: Recorded) -> None:
    ticks, path, updates = recorded
    payloads = _payloads(path, KIND_OBSERVATIONS)
    assert len(payloads) == 4
    for ci, payload in enumerate(payloads):
        got = unpack_observations(payload)
        assert got == ChunkObservations.model_validate_json(zlib.decompress(payload))
        chunk = updates[ci * CHUNK:(ci + 1) * CHUNK]
        want = ChunkObservations(  # the model of the same gauges (pydantic makes them floats)
            checks_id=chunk[0].checks_id, first=ci * CHUNK, seq0=ticks[ci * CHUNK].seq,
            count=CHUNK, interval=1.0, seen={}, gauges={
                cid: [u.gauges[cid] for u in chunk] for cid in chunk[0].gauges})
        assert got.gauges == want.gauges and len(got.gauges) >= 10
        assert any(g is not None and any(v is not None for v in g)
                   for col in got.gauges.values() for g in col)
        assert sorted(got.seen) == [k for k, u in enumerate(chunk) if u.seen]
        assert (got.checks_id, got.first, got.seq0, got.count) == (
            want.checks_id, want.first, want.seq0, want.count)


def test_key_frames_hold_the_baselines_as_pydantic_dumps_them(recorded: Recorded) -> None:
    ticks, path, _ = recorded
    tracker = RateTracker()
    with open_recording(path) as rec:
        keyed = [(ci, data) for ci in range(len(rec.chunks))
                 for fr, data in rec.records(ci) if fr.kind == KIND_KEY]
    assert [ci for ci, _ in keyed] == [0, 1, 2, 3]
    assert json.loads(keyed[0][1]) == {"primary": None, "replica": None}
    for ci, data in keyed[1:]:
        for t in ticks[(ci - 1) * CHUNK:ci * CHUNK]:
            for n in t.nodes:
                tracker.remember(n)
        base = json.loads(data)
        for role in ("primary", "replica"):
            want = tracker.baseline(role)
            assert want is not None
            assert base[role] == want.model_dump(mode="json", exclude={"rates"})
            assert NodeTick.model_validate(base[role]) == want.model_copy(
                update={"rates": type(want.rates)()})
