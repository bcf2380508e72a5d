"""Letting a Textual app under test settle, shared by the TUI tests.

``pilot.pause()`` waits for the screen's messages and then for the process to look
idle: it sleeps at least 20 ms and up to 1 s each time (textual._wait.wait_for_idle),
and the layout test alone paused ~240 times per session. ``pause(0)`` waits for the
screen's messages without the idle wait; ``settle`` takes that ``n - 1`` times and ends
with one full pause, so timers and refreshes due by then have run.

On a machine the suite shares with a CPU hog, that is not always enough: a resize's
refreshes were still pending and the findings panel read as its header alone.
``settle_still`` then pauses until what ``read`` returns stops changing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

STILL_LIMIT_S = 10.0
"""How long ``settle_still`` waits for the screen to stop changing (a clock on it never
does: the caller then reads what is there)."""


async def settle(pilot: Any, n: int = 5) -> None:
    for _ in range(n - 1):
        await pilot.pause(0)
    await pilot.pause()


async def settle_still(pilot: Any, read: Callable[[], Any], n: int = 5) -> None:
    """``settle``, then full pauses until two reads in a row are the same."""
    await settle(pilot, n)
    last = read()
    deadline = time.monotonic() + STILL_LIMIT_S
    while time.monotonic() < deadline:
        await pilot.pause()
        now = read()
        if now == last:
            return
        last = now
