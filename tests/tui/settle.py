"""Letting a Textual app under test settle, shared by the TUI tests.

``pilot.pause()`` waits for the screen's messages and then for the process to look
idle: it sleeps at least 20 ms and up to 1 s each time (textual._wait.wait_for_idle),
and the layout test alone paused ~240 times per session. ``pause(0)`` waits for the
screen's messages without the idle wait; ``settle`` takes that ``n - 1`` times and ends
with one full pause, so timers and refreshes due by then have run."""

from __future__ import annotations

from typing import Any


async def settle(pilot: Any, n: int = 5) -> None:
    for _ in range(n - 1):
        await pilot.pause(0)
    await pilot.pause()
