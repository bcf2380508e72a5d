"""The overview through a switchover (issue #40): each node keeps its column (the one it
was given), its title says its role now and since when, the header's arrows turn to
point from the primary to the replica, and the findings name nodes by their names. The
ticks are oriented by replmon.roles.Orienter, as the collector hands them on."""

from __future__ import annotations

import re

from feed import ManualFeed
from settle import settle
from test_layout import cuts_with_room, findings_text, misaligned, screen_lines
from textual.pilot import Pilot
from textual.widgets import DataTable
from tickdata import GIVEN_PRIMARY, GIVEN_REPLICA, switchover_ticks

from replmon.engine import build_engine
from replmon.model.tick import Tick
from replmon.tui.app import ReplmonApp
from replmon.tui.screens import FindingScreen

BEFORE, AFTER, STOPPED = 5, 9, 4
TICKS = switchover_ticks(BEFORE, AFTER, STOPPED)
"""db163 -> db162 for 5 ticks, the switch at 22:13:25, db162 -> db163 after it; db163's
applier stopped in the last 4 ticks (a finding on db163, the replica now). The last tick
is given after a resize (the findings list is laid out anew with a tick)."""


async def push(pilot: Pilot[None], feed: ManualFeed, app: ReplmonApp, clock: dict[str, float],
               tick: Tick) -> None:
    """Give the app one tick and wait until it is on screen."""
    shown = app.ticks_shown
    clock["now"] = tick.wall + 0.4
    await feed.put(tick)
    for _ in range(200):
        await pilot.pause(0)
        if app.ticks_shown > shown:
            return
    raise AssertionError("the app did not show the tick")


def titles(lines: list[str]) -> tuple[str, str]:
    """The two node columns' titles, left and right, from the row of their top borders."""
    top = next(line for line in lines if line.startswith("╭─ ") and "╮╭" in line)
    left, right = top.split("╮╭")
    return left.strip("╭─ "), right.strip("╮─ ")


def column_of(lines: list[str], text: str) -> str:
    """"left" or "right": the node column whose body has ``text``."""
    for line in lines:
        if "││" in line:
            left, right = line.split("││", 1)
            if text in left:
                return "left"
            if text in right:
                return "right"
    raise AssertionError(f"{text!r} in neither column")


async def test_names_keep_their_columns_and_the_arrow_turns_at_a_switchover() -> None:
    assert TICKS[BEFORE - 1].primary.name == GIVEN_PRIMARY
    assert TICKS[-1].primary.name == GIVEN_REPLICA  # the tick hands on the pair as it is
    feed = ManualFeed()
    clock = {"now": TICKS[0].wall}
    app = ReplmonApp(feed, build_engine(entry_points=False), clock=lambda: clock["now"])
    async with app.run_test(size=(80, 24)) as pilot:
        for t in TICKS[:BEFORE]:
            await push(pilot, feed, app, clock, t)
        await settle(pilot)
        before = screen_lines(app)
        assert titles(before) == (f"primary {GIVEN_PRIMARY}", f"replica {GIVEN_REPLICA}")
        assert re.search(rf"^ {GIVEN_PRIMARY}  =sql 0s=> =rds=>  {GIVEN_REPLICA} ",
                         before[0]), before[0]
        assert column_of(before, "not a replica") == "left"  # the primary's MySQL
        assert column_of(before, "io Yes sql Yes") == "right"

        for t in TICKS[BEFORE:-1]:
            await push(pilot, feed, app, clock, t)
        await settle(pilot)
        after = screen_lines(app)
        # the names stay where they were; their roles are now, with the switch's time
        assert titles(after) == (f"replica {GIVEN_PRIMARY} since 22:13:25",
                                 f"primary {GIVEN_REPLICA} since 22:13:25"), titles(after)
        # the arrows point from the primary (right) to the replica (left)
        assert re.search(rf"^ {GIVEN_PRIMARY}  <=sql BROKEN= <=rds=  {GIVEN_REPLICA} ",
                         after[0]), after[0]
        assert "=>" not in after[0]
        assert column_of(after, "not a replica") == "right"  # db162's MySQL, the primary's
        assert column_of(after, "io Yes sql No") == "left"  # db163's channel to db162
        # findings name the node: at 80 columns by its name (its role heads its column)
        shown = findings_text(after)
        assert f"pair roles: {GIVEN_REPLICA} is now the primary" in shown, shown
        assert f"{GIVEN_PRIMARY} mysql_replication: SQL thread stopped" in shown, shown
        assert cuts_with_room(after) == [], "\n".join(after)
        assert misaligned(after) == []
        # wider, by its name and its role now
        await pilot.resize_terminal(120, 40)
        await settle(pilot, 8)
        await push(pilot, feed, app, clock, TICKS[-1])
        await settle(pilot)
        wide = screen_lines(app)
        # (its own incident: a fault after a completed switchover is not caused by it)
        assert re.search(rf"CRIT .* replica {GIVEN_PRIMARY} +mysql_replication +SQL thread "
                         "stopped", findings_text(wide)), findings_text(wide)
        assert titles(wide) == titles(after)
        assert cuts_with_room(wide) == [], "\n".join(wide)
        await pilot.resize_terminal(80, 24)
        await settle(pilot, 8)

        # the finding's own screen names the node too
        table = app.query_one("#findings", DataTable)
        row = next(i for i, f in enumerate(app.ordered(app.findings))
                   if f[0].check == "mysql_replication")
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot, 3)
        assert isinstance(app.screen, FindingScreen)
        lines = screen_lines(app)
        assert any(f"replica {GIVEN_PRIMARY}  mysql_replication" in line for line in lines), \
            "\n".join(lines)
        assert cuts_with_room(lines) == [], "\n".join(lines)


async def test_sentinel_lines_at_80x24_name_the_master_whole() -> None:
    """With --sentinel, each node's Redis group ends with what Sentinel says of it: the
    master (epoch, quorum) in the promoted node's column, replica in the other; at 80x24
    nothing of it is cut and the columns stay aligned."""
    from replmon.model.base import SourceState, SourceStatus
    from replmon.model.sentinel import SentinelSample

    sentinel = SentinelSample(status=SourceStatus(state=SourceState.OK),
                              master="10.0.0.2:6379", master_node=GIVEN_REPLICA,
                              flags=("master",), quorum=2, other_sentinels=2,
                              config_epoch=3)
    ticks = [t.model_copy(update={"sentinel": sentinel}) for t in TICKS[BEFORE:BEFORE + 3]]
    feed = ManualFeed()
    clock = {"now": ticks[0].wall}
    app = ReplmonApp(feed, build_engine(entry_points=False), clock=lambda: clock["now"])
    async with app.run_test(size=(80, 24)) as pilot:
        for t in ticks:
            await push(pilot, feed, app, clock, t)
        await settle(pilot)
        lines = screen_lines(app)
        assert column_of(lines, "sentinel master ep 3 q 2/3") == "right", "\n".join(lines)
        assert column_of(lines, "sentinel replica") == "left"
        assert cuts_with_room(lines) == [], "\n".join(lines)
        assert misaligned(lines) == []
