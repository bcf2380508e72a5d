"""``replmon report`` from the recorder's summary frames (what the report keeps of each chunk's
ticks: versions, the key rates' peaks, seq/interval/missed, the live engine's events)
gives the report that decoding every tick gives, field for field: on shipped sessions
recorded as a live session is (30-tick chunks: findings open and close in other chunks
than the tick they began in), and on a file with a damaged summary frame (that chunk's ticks
are decoded again, the damage said once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import replmon.output.report as report_mod
from replmon.engine import build_engine
from replmon.model.tick import Tick
from replmon.output.report import report, stored_facts
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.format import HEADER_SIZE, KIND_SUMMARY, MAGIC, read_frame

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.rmrec"))
COVERED = [p for p in SAMPLES if p.stem in {
    "planned_switchover", "redis_link_down_full_resync", "auto_increment_updates_miss",
    "drbd_peer_disconnected", "redis_swapping_past_ceiling"}]
"""The sessions compared (~3 s of CPU each for the longer ones): the switchover (nodes
by the role they were given against the role they hold), a finding that closes, the
MySQL statements-vs-rows one, the DRBD and the swapping reconstructions (every source
kind)."""


def record_live(path: Path, ticks: list[Tick], chunk: int = 30,
                rates: str = "auto") -> Path:
    """What ``replmon --record`` writes: each tick with the live engine's update."""
    engine = build_engine(entry_points=False)
    with RecordingWriter(path, meta_for(interval=ticks[0].interval), chunk_ticks=chunk,
                         rates=rates) as w:  # type: ignore[arg-type]
        for t in ticks:
            w.write(t, engine.feed(t))
    return path


def both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report from the summary frames, and the one from decoding every tick, as JSON."""
    with open_recording(path) as rec:
        fast = json.loads(json.dumps(report(rec)))
    with monkeypatch.context() as mp:
        mp.setattr(report_mod, "stored_facts", lambda _rec: None)
        with open_recording(path) as rec:
            slow = json.loads(json.dumps(report(rec)))
    return fast, slow


@pytest.mark.parametrize("sample", COVERED, ids=[p.stem for p in COVERED])
def test_the_report_from_the_frames_is_the_decoded_one(sample: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with open_recording(sample) as rec:
        ticks = list(rec.ticks())
    path = record_live(tmp_path / "live.rmrec", ticks)
    with open_recording(path) as rec:
        assert stored_facts(rec) is not None  # every chunk has its summary frame
    fast, slow = both(path, monkeypatch)
    assert fast == slow
    assert fast["ticks"] == len(ticks)
    if sample.stem != "drbd_peer_disconnected":  # (DRBD only: no key rate)
        assert fast["peaks"]
    assert fast["findings_recorded"]  # the live engine's events, from the frames
    if sample.stem == "redis_link_down_full_resync":  # the link heals: a finding closes
        assert {e["event"] for e in fast["findings_recorded"]} == {"opened", "closed"}


def test_a_damaged_facts_frame_decodes_that_chunk(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with open_recording(ROOT / "sample_sessions" / "auto_increment_updates_miss.rmrec") as rec:
        ticks = list(rec.ticks())
    path = record_live(tmp_path / "live.rmrec", ticks)
    bad = damage_second_facts(path, tmp_path / "bad.rmrec")
    with open_recording(bad) as rec:
        assert stored_facts(rec) is None
    fast, slow = both(bad, monkeypatch)
    assert fast == slow and fast["ticks"] == len(ticks)
    assert fast["problems"] and all("byte" in p or "facts" in p for p in fast["problems"])


def test_ticks_written_with_derived_rates_get_no_facts(tmp_path: Path) -> None:
    """A writer told the rates are derivable ("derive") never saw the reader's rates:
    its peaks would not be the report's, so it writes no summary frame."""
    with open_recording(ROOT / "sample_sessions" / "auto_increment_updates_miss.rmrec") as rec:
        ticks = list(rec.ticks())
    path = record_live(tmp_path / "derive.rmrec", ticks, rates="derive")
    with open_recording(path) as rec:
        assert stored_facts(rec) is None
        assert all(rec.chunk_facts(ci)[0] is None for ci in range(len(rec.chunks)))


def damage_second_facts(path: Path, out: Path) -> Path:
    """``path`` with bytes flipped in its second summary frame (the second chunk's), as ``out``."""
    data = bytearray(path.read_bytes())
    pos, hits = len(MAGIC), 0
    while pos < len(data):
        fr = read_frame(bytes(data), pos)
        if fr.kind == KIND_SUMMARY:
            hits += 1
            if hits == 2:  # the second chunk's
                for k in range(HEADER_SIZE + 2, HEADER_SIZE + 8):
                    data[pos + k] ^= 0x5A
                break
        pos = fr.end
    out.write_bytes(bytes(data))
    return out
