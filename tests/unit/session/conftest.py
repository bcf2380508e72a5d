"""Shared fixtures of the recording tests (the tick builders are in sessiondata.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessiondata import CHUNK, LIVE_TICKS, flapping_ticks, four_source_ticks, record_live

import replmon.engine
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for
from replmon.testing.real_ticks import loop_ticks

FLAP_OPENS = replmon.engine.FLAP_OPENS
"""The engine's own flap detection, read before any test patches it."""


@pytest.fixture(scope="session")
def ticks_200() -> list[Tick]:
    return four_source_ticks(200)


@pytest.fixture(scope="session")
def flap_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """flapping_ticks written as a recording (rates derived on reading, no updates):
    test_rerun's, and test_cursor's long one. Read only."""
    path = tmp_path_factory.mktemp("flap") / "flap.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=CHUNK,
                         rates="derive") as w:
        for t in flapping_ticks():
            w.write(t)
    return path


@pytest.fixture(scope="session")
def flap_live(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first LIVE_TICKS flapping ticks, rates attached as collected, recorded as
    ``replmon --record`` writes them (the live engine with its own flap detection,
    whatever a module patched: that changes the recorded updates, not the stored
    observations): ``live`` of test_stored_observations and test_changes, whose tests
    that take it carry sessiondata.SHARES_LIVE. Read only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replmon.engine, "FLAP_OPENS", FLAP_OPENS)
        ticks = list(loop_ticks(flapping_ticks(), LIVE_TICKS, rates=True))
        return record_live(tmp_path_factory.mktemp("live") / "live.rmrec", ticks)
