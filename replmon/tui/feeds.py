"""Tick feeds for the app: the live collector, or a fixed list (snapshots). A
recording's feed lives with the session reader; the tests push theirs one by one
(tests/tui/feed.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from replmon.collector import Collector
from replmon.model.tick import Tick


async def live(collector: Collector) -> AsyncIterator[Tick]:
    """Every tick of an opened collector, until the app stops."""
    async for tick in collector.ticks(None):
        yield tick


async def from_list(ticks: Iterable[Tick]) -> AsyncIterator[Tick]:
    """A fixed sequence, as fast as the app takes it; then the feed ends."""
    for tick in ticks:
        yield tick
