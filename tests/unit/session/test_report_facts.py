"""``replmon report`` from the recorder's summary frames (what the report keeps of each chunk's
ticks: versions, the key rates' peaks, seq/interval/missed, the live engine's events)
gives the report that decoding every tick gives, field for field: on shipped sessions
recorded as a live session is (30-tick chunks: findings open and close in other chunks
than the tick they began in), and on a file with a damaged summary frame (that chunk's ticks
are decoded again, the damage said once)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessiondata import by_sample, of_sample, record_live

import replmon.output.report as report_mod
from replmon.output.report import report, stored_facts
from replmon.session import open_recording
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


def both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report from the summary frames, and the one from decoding every tick, as JSON."""
    with open_recording(path) as rec:
        fast = json.loads(json.dumps(report(rec)))
    with monkeypatch.context() as mp:
        mp.setattr(report_mod, "stored_facts", lambda _rec: None)
        with open_recording(path) as rec:
            slow = json.loads(json.dumps(report(rec)))
    return fast, slow


@pytest.mark.parametrize("sample", by_sample(COVERED))
def test_the_report_from_the_frames_is_the_decoded_one(
        sample: Path, live_copy: Callable[[Path], tuple[Path, int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path, count = live_copy(sample)  # (test_chart_facts' too)
    with open_recording(path) as rec:
        assert stored_facts(rec) is not None  # every chunk has its summary frame
    fast, slow = both(path, monkeypatch)
    assert fast == slow
    assert fast["ticks"] == count
    if sample.stem != "drbd_peer_disconnected":  # (DRBD only: no key rate)
        assert fast["peaks"]
    assert fast["findings_recorded"]  # the live engine's events, from the frames
    if sample.stem == "redis_link_down_full_resync":  # the link heals: a finding closes
        assert {e["event"] for e in fast["findings_recorded"]} == {"opened", "closed"}


@of_sample("auto_increment_updates_miss")
def test_a_damaged_facts_frame_decodes_that_chunk(
        tmp_path: Path, live_copy: Callable[[Path], tuple[Path, int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path, count = live_copy(ROOT / "sample_sessions" / "auto_increment_updates_miss.rmrec")
    bad = damage_second_facts(path, tmp_path / "bad.rmrec")
    with open_recording(bad) as rec:
        assert stored_facts(rec) is None
    fast, slow = both(bad, monkeypatch)
    assert fast == slow and fast["ticks"] == count
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
