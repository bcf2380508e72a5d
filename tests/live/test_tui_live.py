"""The TUI on the real lab: live collector feed, keys, and an unreachable replica."""

from __future__ import annotations

import asyncio
import re

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
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
                assert "UNREACHABLE" in replica and "connection refused" in replica
                assert "up" in str(app.query_one("#replica-redis", Static).render())
                await binlog_in_the_mysql_detail(app, pilot)
                await pilot.press("p")
                assert "PAUSED" in str(app.query_one("#header", Static).render())
                await pilot.press("p")
                await pilot.press("q")
            assert app.return_code == 0


async def binlog_in_the_mysql_detail(app: ReplmonApp, pilot: Pilot[ReplmonApp]) -> None:
    """The mysql group's binary-log section shows the primary's position and GTID (MariaDB,
    log_bin ON; read every 2 s, so the detail shows the newest reading, with its age),
    and moves with the writes."""
    app.action_detail("mysql")
    seen = []
    for _ in range(2):
        await wait_shown(app, app.ticks_shown + 8)  # 2.4 s at 0.3 s: a reading in them
        await pilot.pause()
        text = "\n".join(s.text for s in app.screen._compositor.render_strips())
        found = re.search(r"position\s+(\S+:[\d,]+)", text)
        assert found and re.search(r"gtid\s+\d+-\d+-\d+", text), text
        seen.append(found.group(1))
    assert seen[0] != seen[1]  # the load writes: the position moves, the view follows
    await pilot.press("escape")


async def test_w_on_the_lab_shows_a_running_statement_and_stops_reading_when_closed(
        lab: Lab) -> None:
    from rich.console import Console

    from replmon.tui.processlist import ProcesslistScreen

    config = build_config(lab.settings(0.3))
    with lab.replica.running("SELECT SLEEP(60) AS held_by_a_reader") as ident:
        async with build_collector(config) as collector:
            app = ReplmonApp(live(collector), build_engine(entry_points=False),
                             want_processlist=collector.want_processlist)
            async with app.run_test(size=(80, 24)) as pilot:
                await wait_shown(app, 3)
                assert app.memory.processlists == {"primary": None, "replica": None}  # not asked
                await pilot.press("w")
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 10
                while app.memory.processlists["replica"] is None:
                    assert loop.time() < deadline, "no processlist read within 10 s"
                    await asyncio.sleep(0.1)
                assert isinstance(app.screen, ProcesslistScreen)
                console = Console(width=80, record=True)
                console.print(app.screen.body())
                text = console.export_text()
                assert "SELECT SLEEP(60) AS held_by_a_reader" in text and "lab-replica" in text
                assert ident in {r.id for r in app.memory.processlists["replica"].rows}
                await pilot.press("escape")
                await pilot.pause()
                last = app.memory.processlists["replica"].wall
                await wait_shown(app, app.ticks_shown + 12)  # 3.6 s: past processlist_every
                assert app.memory.processlists["replica"].wall == last  # no more reads
                await pilot.press("q")
