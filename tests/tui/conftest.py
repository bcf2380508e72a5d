"""TUI tests: times on screen in UTC, whatever the machine's zone (``utc``,
tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _utc(utc: None) -> None:
    """Every TUI test takes ``utc``."""
