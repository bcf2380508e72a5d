"""Shared fixture of the recording tests (the tick builders are in sessiondata.py)."""

from __future__ import annotations

import pytest
from sessiondata import four_source_ticks

from replmon.model.tick import Tick


@pytest.fixture(scope="session")
def ticks_200() -> list[Tick]:
    return four_source_ticks(200)
