"""A feed the TUI tests push ticks into, one by one (``await feed.put(tick)``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from replmon.model.tick import Tick


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
