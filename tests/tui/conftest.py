"""TUI tests: times on screen in UTC, whatever the machine's zone (``utc``,
tests/conftest.py). The worker's heap is frozen before each test (tests/conftest.py's
``_freeze_heap``): a screen a test starts then neither collects that whole heap as it
starts nor freezes it (replmon.gcpace leaves freezing to a process that froze its own;
its own tests run unfrozen: test_app's ``unfrozen``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _utc(utc: None) -> None:
    """Every TUI test takes ``utc``."""
