"""The keys an on-call engineer meets in the first minute (issue #31): enter on the
overview opens the worst finding without `f` first, `q` quits and `escape` goes back from
every view (both in its footer), a replay opens paused on its first tick and `space`
plays, `n` from there stops where the first finding opens and selects it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from feed import ManualFeed
from settle import settle
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Static
from tickdata import lab_ticks, with_processlists, with_replica_mysql_down

from replmon.engine import build_engine
from replmon.model.findings import Finding
from replmon.session.recording import open_recording
from replmon.session.rerun import rerun_file
from replmon.tui.app import ReplmonApp
from replmon.tui.graph_view import GraphScreen
from replmon.tui.processlist import ProcesslistScreen
from replmon.tui.replay import ReplayApp
from replmon.tui.screens import DetailScreen, DriftScreen, FindingScreen, HelpScreen

TICKS = lab_ticks()
SEED004 = Path(__file__).parents[2] / "sample_sessions" / "auto_increment_updates_miss.rmrec"




async def push(pilot: Pilot[None], feed: ManualFeed, app: ReplmonApp, tick: object) -> None:
    """Give the live app one tick and wait until it is on screen."""
    shown = app.ticks_shown
    await feed.put(tick)  # type: ignore[arg-type]
    for _ in range(200):
        await pilot.pause()
        if app.ticks_shown > shown:
            return
    raise AssertionError("the app did not show the tick")


async def live_with_findings(pilot: Pilot[None], app: ReplmonApp, feed: ManualFeed) -> None:
    """The replica's MySQL unreachable from the second tick: two findings open
    (mysql_replication CRITICAL first, then source_health), and the processlists of the
    last tick for the w view."""
    ticks = [TICKS[0]] + [with_replica_mysql_down(t, TICKS[0].wall) for t in TICKS[1:4]]
    for t in ticks[:-1] + [with_processlists(ticks[-1])]:
        await push(pilot, feed, app, t)
    assert len(app.findings) >= 2


def live_app() -> tuple[ReplmonApp, ManualFeed]:
    feed = ManualFeed()
    app = ReplmonApp(feed, build_engine(entry_points=False), clock=lambda: TICKS[4].wall,
                     want_processlist=lambda _s: None)
    return app, feed


def seed004(*, rerun: bool = False) -> ReplayApp:
    """Seed 004's replay as `replmon replay` makes it (paused unless --play)."""
    rec = open_recording(SEED004)
    return ReplayApp(rec, lambda: build_engine(rec.meta.checks, entry_points=False),
                     rerun=(lambda stop: rerun_file(SEED004, rec.meta.checks, entry_points=False,
                                                    workers=1, should_stop=stop))
                     if rerun else None)


def ident(f: Finding) -> tuple[str, str, str]:
    return (f.check.removesuffix(" (rec)"), f.node, f.key)


def footer(app: ReplmonApp) -> str:
    """The bottom line of the screen on top, as a terminal shows it."""
    return app.screen._compositor.render_strips()[-1].text


def position(app: ReplayApp) -> str:
    return str(app.query_one("#position", Static).render())


# -- enter on the overview ------------------------------------------------------------------


async def test_enter_on_the_live_overview_opens_the_worst_finding_without_f() -> None:
    """As the screen opens the findings list has the focus: enter opens the first (worst)
    finding. And with the focus on a node's panel, where a terminal's start put it before
    (seen in a pty: Textual focuses the first focusable widget), enter still opens it."""
    app, feed = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await live_with_findings(pilot, app, feed)
        assert app.focused is app.query_one("#findings", DataTable)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen)
        assert app.screen.finding.check == app.findings[0].check == "mysql_replication"
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1

        app.query_one("#primary").focus()
        await settle(pilot)
        assert app.focused is app.query_one("#primary")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen), app.screen
        assert ident(app.screen.finding) == ident(app.findings[0])


async def test_enter_on_the_replay_overview_opens_the_worst_finding_without_f() -> None:
    app = seed004()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("right", "right", "right")  # tick 4: both findings open
        await settle(pilot)
        assert len(app.findings) >= 2
        app.query_one("#replica").focus()  # where the focus may be, not on the list
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen), app.screen
        assert ident(app.screen.finding) == ident(app.findings[0])


async def test_a_groups_own_enter_still_opens_the_group() -> None:
    app, feed = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await live_with_findings(pilot, app, feed)
        app.query_one("#replica-mysql").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen) and app.screen.group == "mysql"


# -- q quits, escape goes back, from every view ---------------------------------------------

Opener = Callable[[Pilot[None]], Awaitable[None]]


def keys(*pressed: str, focus: str | None = None) -> Opener:
    async def run(pilot: Pilot[None]) -> None:
        if focus is not None:
            pilot.app.query_one(focus).focus()
            await pilot.pause()
        await pilot.press(*pressed)

    return run


VIEWS: dict[str, tuple[Opener, type[Screen[None]]]] = {
    "help": (keys("question_mark"), HelpScreen),
    "finding": (keys("enter"), FindingScreen),
    "drift": (keys("d"), DriftScreen),
    "detail": (keys("enter", focus="#replica-mysql"), DetailScreen),
    "who": (keys("w"), ProcesslistScreen),
    "graphs": (keys("g"), GraphScreen),
}
REPLAY_VIEWS: dict[str, tuple[Opener, type[Screen[None]]]] = {
    **VIEWS, "graphs": (keys("G"), GraphScreen)}


async def open_live(pilot: Pilot[None], view: str) -> None:
    app = pilot.app
    assert isinstance(app, ReplmonApp)
    opener, kind = VIEWS[view]
    await opener(pilot)
    await settle(pilot)
    assert isinstance(app.screen, kind), app.screen
    shown = footer(app)
    assert "q Quit" in shown and "esc Back" in shown, shown


async def open_replay(pilot: Pilot[None], view: str) -> None:
    app = pilot.app
    assert isinstance(app, ReplayApp)
    opener, kind = REPLAY_VIEWS[view]
    await opener(pilot)
    await settle(pilot)
    assert isinstance(app.screen, kind), app.screen
    shown = footer(app)
    assert "q Quit" in shown and "esc Back" in shown, shown


@pytest.mark.parametrize("view", sorted(VIEWS))
async def test_q_quits_and_escape_goes_back_from_every_live_view(view: str) -> None:
    """One app a view, as the replay's test below: escape back to the overview, the view
    opened again, then q (two apps a view, one for each key, each fed its ticks, cost
    twice the CPU for the same assertions)."""
    app, feed = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await live_with_findings(pilot, app, feed)
        await open_live(pilot, view)
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1 and not app._exit, app.screen_stack
        assert app.return_code is None
        await open_live(pilot, view)
        await pilot.press("q")
        await settle(pilot)
        assert app._exit, f"q in the {view} view did not quit"
    assert app.return_code == 0


@pytest.mark.parametrize("view", sorted(REPLAY_VIEWS))
async def test_q_quits_and_escape_goes_back_from_every_replay_view(view: str) -> None:
    app = seed004()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("right", "right", "right")  # findings open (for enter)
        await settle(pilot)
        await open_replay(pilot, view)
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1 and not app._exit, app.screen_stack
        await open_replay(pilot, view)
        await pilot.press("q")
        await settle(pilot)
        assert app._exit, f"q in the replay's {view} view did not quit"
    assert app.return_code == 0


async def test_the_overview_footer_shows_q_quit() -> None:
    app, feed = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await push(pilot, feed, app, TICKS[0])
        assert footer(app).lstrip().startswith("q Quit"), footer(app)


# -- replay: paused on the first tick, space plays ------------------------------------------


async def test_replay_opens_paused_on_the_first_tick_and_space_plays() -> None:
    app = seed004()
    async with app.run_test(size=(80, 24)) as pilot:  # the footer's keys fit at 80 columns
        await settle(pilot)
        assert app.pos == 0 and "tick #1 of 151" in position(app)  # #1: the first
        await pilot.pause(1.2)  # more than the recording's 1 s interval
        assert app.pos == 0 and not app.playing, "the replay played on its own"
        assert position(app).startswith("⏸")
        assert "␣ Play" in footer(app) and "Pause" not in footer(app), footer(app)
        for key in ("←→ Step", "n Next", "G Graphs", "g Go to", "+ Fast", "- Slow"):
            # every key at 80 columns (the compact footer; "g Go to + Faster - Slower" fell off)
            assert key in footer(app), footer(app)

        await pilot.press("space")
        for _ in range(100):
            await pilot.pause(0.05)
            if app.pos >= 2:
                break
        assert app.playing and app.pos >= 2  # one tick per second, from the first
        assert "␣ Pause" in footer(app), footer(app)

        await pilot.press("space")
        await settle(pilot)
        here = app.pos
        await pilot.pause(1.2)
        assert not app.playing and app.pos == here
        assert "␣ Play" in footer(app), footer(app)
        await pilot.press("p")  # p toggles too
        await settle(pilot)
        assert app.playing


# -- n / N ------------------------------------------------------------------------------------


async def test_n_from_the_start_stops_where_the_first_finding_opens_and_selects_it() -> None:
    """Seed 004: today's checks open config_drift at tick 1 and stmt_vs_rows at tick 3
    (the live engine recorded stmt_vs_rows opening at tick 3). n from the first tick stops
    at each opening in turn with the finding that opened there selected, so enter opens
    it; N goes back."""
    rec = open_recording(SEED004)
    rerun = {i: {f.ident for f in u.opened}
             for i, u in rerun_file(SEED004, rec.meta.checks, entry_points=False, workers=1)
             if u.opened}
    for i in rec.recorded_openings():
        u = rec.update_at(i)
        rerun.setdefault(i, set()).update(f.ident for f in (u.opened if u else []))
    openings = sorted(rerun)
    assert openings[:2] == [1, 3], openings  # what this test relies on

    app = seed004(rerun=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete([app.marks_worker])  # recorded and re-run
        table = app.query_one("#findings", DataTable)
        for at in openings[:2]:
            await pilot.press("n")
            await settle(pilot)
            assert app.pos == at, (app.pos, at)
            selected = app.findings[table.cursor_row]
            assert ident(selected) in rerun[at], (selected.check, at)
        assert table.cursor_row > 0  # the worst finding is not the one that opened there
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen)
        assert app.screen.finding.check == "stmt_vs_rows"
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("N")  # shift+n: back to the previous opening
        await settle(pilot)
        assert app.pos == openings[0]
        assert ident(app.findings[table.cursor_row]) in rerun[openings[0]]
