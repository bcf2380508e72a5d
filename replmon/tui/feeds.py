"""Tick feeds for the app: the live collector, or a fixed list (tests, snapshots).
A recording's feed lives with the session reader."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable

from replmon.collector import Collector
from replmon.model.tick import Tick


async def live(collector: Collector) -> AsyncIterator[Tick]:
    """Every tick of an opened collector, until the app stops."""
    async for tick in collector.ticks(None):
        yield tick


class ManualFeed:
    """Ticks pushed by a test (``await feed.put(tick)``); the app takes them in order."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Tick | None] = asyncio.Queue()

    async def put(self, tick: Tick) -> None:
        await self._queue.put(tick)

    async def close(self) -> None:
        await self._queue.put(None)

    def __aiter__(self) -> AsyncIterator[Tick]:
        return self._iter()

    async def _iter(self) -> AsyncIterator[Tick]:
        while (tick := await self._queue.get()) is not None:
            yield tick


async def from_list(ticks: Iterable[Tick]) -> AsyncIterator[Tick]:
    """A fixed sequence, as fast as the app takes it; then the feed ends."""
    for tick in ticks:
        yield tick
