"""Shared fixtures of the recording tests (the tick builders are in sessiondata.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessiondata import CHUNK, flapping_ticks, four_source_ticks

from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for


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
