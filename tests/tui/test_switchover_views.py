"""The views behind the overview through a switchover (issue #40): the detail of a group
(enter), the settings side by side (d) and who is doing it (w) keep each node where the
overview keeps it (the node given as the primary on the left, or first) and head it
with its role now and its name; they do not swap sides when the roles do."""

from __future__ import annotations

import re

from feed import ManualFeed
from settle import settle
from test_layout import screen_lines
from test_switchover import push
from tickdata import GIVEN_PRIMARY, GIVEN_REPLICA, switchover_ticks, with_processlists

from replmon.engine import build_engine
from replmon.tui.app import ReplmonApp
from replmon.tui.processlist import ProcesslistScreen
from replmon.tui.screens import DetailScreen, DriftScreen

TICKS = switchover_ticks(5, 3)
"""db163 (given as the primary) replicates to db162, then the other way round."""


def order(lines: list[str], *texts: str) -> list[int]:
    """(line, column) of each text's first place on screen, as one sortable number."""
    found = []
    for text in texts:
        at = next(((i, line.index(text)) for i, line in enumerate(lines) if text in line),
                  None)
        assert at is not None, f"{text!r} not on screen:\n" + "\n".join(lines)
        found.append(at[0] * 1000 + at[1])
    return found


async def test_detail_drift_and_who_keep_each_node_in_its_place_after_a_switchover() -> None:
    assert (TICKS[-1].primary.name, TICKS[-1].replica.name) == (GIVEN_REPLICA, GIVEN_PRIMARY)
    feed = ManualFeed()
    clock = {"now": TICKS[0].wall}
    app = ReplmonApp(feed, build_engine(entry_points=False), clock=lambda: clock["now"],
                     want_processlist=lambda _s: None)
    now_replica, now_primary = f"replica {GIVEN_PRIMARY}", f"primary {GIVEN_REPLICA}"
    async with app.run_test(size=(120, 40)) as pilot:
        for t in [*TICKS[:-1], with_processlists(TICKS[-1])]:
            await push(pilot, feed, app, clock, t)
        await settle(pilot)

        # enter on the left column's MySQL: db163's, the replica now, still on the left
        app.query_one("#primary-mysql").focus()
        await pilot.press("enter")
        await settle(pilot, 3)
        assert isinstance(app.screen, DetailScreen)
        lines = screen_lines(app)
        left, right = order(lines, f"mysql: {now_replica}", f"mysql: {now_primary}")
        assert left < right, "\n".join(lines)
        await pilot.press("escape")
        await settle(pilot, 3)

        # d: the settings, db163 on the left; read_only ON on it (the replica now)
        await pilot.press("d")
        await settle(pilot, 3)
        assert isinstance(app.screen, DriftScreen)
        lines = screen_lines(app)
        head = next(line for line in lines if re.search(r"\bsetting\b", line))  # the table's
        assert now_replica in head and now_primary in head, head
        assert head.index(now_replica) < head.index(now_primary), head
        row = next(line for line in lines if re.search(r"read_only\s+O", line))
        assert re.search(r"read_only\s+ON\s+OFF", row), row
        assert "≠" not in row, row  # ON on the replica, OFF on the primary: as it should be
        await pilot.press("escape")
        await settle(pilot, 3)

        # w: db163's statements first (its applier now), headed by its role now
        await pilot.press("w")
        await settle(pilot, 3)
        assert isinstance(app.screen, ProcesslistScreen)
        lines = screen_lines(app)
        first, second = order(lines, now_replica, now_primary)
        assert first < second, "\n".join(lines)
        body = "\n".join(lines)
        assert "SELECT c.region" in body.split(now_primary)[1], body  # db162's, under it
