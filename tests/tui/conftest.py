"""TUI tests: times on screen in UTC, whatever the machine's zone (``utc``,
tests/conftest.py); the worker's heap frozen once (``_frozen_heap``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _utc(utc: None) -> None:
    """Every TUI test takes ``utc``."""


@pytest.fixture(scope="session", autouse=True)
def _frozen_heap() -> Iterator[None]:
    """What the worker holds when its first TUI test starts (modules, the collected
    tests, module-level ticks) collected once and frozen for the session. Each screen a
    test starts would otherwise collect that whole heap as it starts and freeze it
    (replmon.gcpace: what start-up made, ~55,000 objects in replmon itself, but
    ~110,000 and more in a worker; 60-150 ms a screen, over a hundred screens); with the
    process's own freezing, gcpace leaves freezing to it (its tests run unfrozen:
    test_app's ``unfrozen``)."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()
