"""The live fault demo on the lab: replmon's screen, fed by the lab, shows the demo's
finding open after the fault is injected and close once it is undone (timings shortened
from 20 s / 60 s)."""

from __future__ import annotations

import threading
import time

import pytest
from textual.widgets import DataTable

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.demo import demo, run_demo
from replmon.tui.app import ReplmonApp
from replmon.tui.feeds import live

pytestmark = pytest.mark.live


async def test_auto_increment_demo_opens_then_closes_on_screen(lab: Lab) -> None:
    chosen = demo("auto-increment")
    stop = threading.Event()
    runner = threading.Thread(target=run_demo, args=(lab, chosen, stop),
                              kwargs={"after_s": 2.0, "hold_s": 8.0}, daemon=True)
    async with build_collector(build_config(lab.settings(0.5))) as c:
        app = ReplmonApp(live(c), build_engine(entry_points=False))
        opened_at = closed_at = None
        async with app.run_test(size=(80, 24)) as pilot:
            start = time.monotonic()
            runner.start()
            while time.monotonic() - start < 40 and closed_at is None:
                await pilot.pause(0.25)
                on = [f for f in app.findings if f.check == chosen.check]
                table = app.query_one("#findings", DataTable)
                rows = [str(table.get_row_at(i)) for i in range(table.row_count)]
                if on and opened_at is None:
                    opened_at = time.monotonic() - start
                    assert any(chosen.check in r for r in rows), rows  # on screen
                    assert on[0].title == "auto_increment_increment differs: primary 2, replica 1"
                if opened_at is not None and not on:
                    closed_at = time.monotonic() - start
            stop.set()
    runner.join(30)
    assert opened_at is not None, "the demo's finding never opened"
    assert 2.0 <= opened_at <= 2.0 + 6.0, opened_at  # injected at 2 s, re-read at once
    assert closed_at is not None and closed_at >= 10.0, (opened_at, closed_at)
    assert lab.primary.sql("SELECT @@global.auto_increment_increment")[0][0] == 1  # undone
