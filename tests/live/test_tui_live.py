"""The TUI on the real lab: live collector feed, keys, and an unreachable replica."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Static

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab, WriteLoad
from replmon.tui.app import ReplmonApp
from replmon.tui.feeds import live

pytestmark = pytest.mark.live


async def wait_shown(app: ReplmonApp, n: int, limit_s: float = 15.0) -> None:
    """Wait (on the condition, not a fixed sleep) until the app showed n ticks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while app.ticks_shown < n:
        assert loop.time() < deadline, f"only {app.ticks_shown} ticks shown"
        await asyncio.sleep(0.05)


async def test_tui_on_the_lab_updates_and_shows_an_unreachable_replica(lab: Lab) -> None:
    settings = lab.settings(0.3)
    settings["replica"]["mysql"]["port"] = lab.free_port()  # nothing listens there
    config = build_config(settings)
    with WriteLoad(lab, rate=200):
        async with build_collector(config) as collector:
            app = ReplmonApp(live(collector), build_engine(entry_points=False))
            async with app.run_test(size=(100, 30)) as pilot:
                await wait_shown(app, 2)
                first = str(app.query_one("#primary-mysql", Static).render())
                await wait_shown(app, app.ticks_shown + 3)
                later = str(app.query_one("#primary-mysql", Static).render())
                assert first != later  # the screen follows the servers
                replica = str(app.query_one("#replica-mysql", Static).render())
                assert "UNREACHABLE" in replica and "Connection refused" in replica
                assert "up" in str(app.query_one("#replica-redis", Static).render())
                await pilot.press("p")
                assert "PAUSED" in str(app.query_one("#header", Static).render())
                await pilot.press("p")
                await pilot.press("q")
            assert app.return_code == 0
