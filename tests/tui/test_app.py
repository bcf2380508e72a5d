"""The app driven by the test: ticks are pushed one by one (no sleeping, no servers)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator

import pytest
from feed import ManualFeed
from frozenheap import frozen_kept
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from tickdata import lab_ticks, with_replica_mysql_down

from replmon.engine import build_engine
from replmon.tui.app import ReplmonApp
from replmon.tui.screens import FindingScreen, HelpScreen
from replmon.units import tick_clock

TICKS = lab_ticks()


async def push(pilot: Pilot[None], feed: ManualFeed, app: ReplmonApp, tick: object) -> None:
    """Give the app one tick and wait until it is on screen."""
    shown = app.ticks_shown
    await feed.put(tick)  # type: ignore[arg-type]
    for _ in range(200):
        await pilot.pause()
        if app.ticks_shown > shown or app.paused:
            return
    raise AssertionError("the app did not show the tick")


def screen_text(app: ReplmonApp) -> str:
    """The screen as a terminal shows it."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def text_of(app: ReplmonApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def make() -> tuple[ReplmonApp, ManualFeed]:
    feed = ManualFeed()
    clock = {"now": TICKS[0].wall}
    app = ReplmonApp(feed, build_engine(entry_points=False), clock=lambda: clock["now"])
    return app, feed


async def test_panels_show_each_node_and_update_per_tick() -> None:
    app, feed = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await push(pilot, feed, app, TICKS[0])
        first = text_of(app, "#primary-mysql")
        await push(pilot, feed, app, TICKS[5])
        later = text_of(app, "#primary-mysql")
        assert first != later  # rates arrived
        r = TICKS[5].primary.rates.mysql
        assert r.qps is not None and f"{r.qps:.0f}" in later
        assert "Yes" in text_of(app, "#replica-mysql")  # IO/SQL threads
        assert "replica" in text_of(app, "#replica-redis")
        assert "lab-primary" in text_of(app, "#header")


async def test_unreachable_replica_is_shown_in_place_and_raises_a_finding() -> None:
    app, feed = make()
    async with app.run_test(size=(100, 30)) as pilot:
        for i, t in enumerate(TICKS[:4]):
            await push(pilot, feed, app, with_replica_mysql_down(t, TICKS[0].wall) if i else t)
        panel = text_of(app, "#replica-mysql")
        assert "UNREACHABLE" in panel and "connection refused" in panel  # one short line
        assert "OK" in text_of(app, "#primary-mysql") or "stmt/s" in text_of(app, "#primary-mysql")
        table = app.query_one("#findings", DataTable)
        assert table.row_count >= 1
        assert re.search(r"\b(WARN|CRIT)", text_of(app, "#header"))  # CRIT(ICAL) at 80 columns
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FindingScreen)
        f = app.screen.finding
        assert f.node == "replica"
        # live, the detail says how long it has held, not a tick number since the start
        head = " ".join(str(s.render()) for s in app.screen.query(Static))
        held = (f.last_wall or f.since_wall) - f.since_wall
        assert f"since {tick_clock(f.since_wall)}, for {held:.0f} s" in head, head
        assert "tick #" not in head
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, FindingScreen)


async def test_pause_freezes_the_screen_but_checks_keep_running() -> None:
    app, feed = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await push(pilot, feed, app, TICKS[1])
        await pilot.press("p")
        frozen = text_of(app, "#primary-host")
        seen = app.memory.ticks_seen
        await push(pilot, feed, app, TICKS[6])
        for _ in range(50):
            await pilot.pause()
            if app.memory.ticks_seen > seen:
                break
        assert app.memory.ticks_seen == seen + 1  # the engine saw it
        assert text_of(app, "#primary-host") == frozen
        assert "PAUSED" in text_of(app, "#header")
        await pilot.press("p")
        await push(pilot, feed, app, TICKS[7])
        assert text_of(app, "#primary-host") != frozen


async def test_help_and_quit_keys() -> None:
    app, feed = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_stale_data_looks_stale() -> None:
    feed = ManualFeed()
    clock = {"now": TICKS[0].wall}
    app = ReplmonApp(feed, None, clock=lambda: clock["now"])
    async with app.run_test(size=(100, 30)) as pilot:
        await push(pilot, feed, app, TICKS[0])
        assert "STALE" not in text_of(app, "#header")
        clock["now"] += 10 * TICKS[0].interval
        app._refresh_header()
        await pilot.pause()
        assert "STALE 10s" in text_of(app, "#header")


async def test_ticks_keep_coming_while_help_is_open() -> None:
    """A modal on top does not stop the per-tick update or the header's age timer."""
    app, feed = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await push(pilot, feed, app, TICKS[1])
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await push(pilot, feed, app, TICKS[5])
        app._refresh_header()
        await pilot.press("escape")
        await pilot.pause()
        r = TICKS[5].primary.rates.mysql
        assert r.qps is not None and f"{r.qps:.0f}" in text_of(app, "#primary-mysql")


def test_header_shows_a_disconnected_drbd_peer() -> None:
    """The pair at a glance includes DRBD's connection (seed 000's WFConnection)."""
    from pathlib import Path

    from replmon.sources.drbd_parse import parse_proc_drbd
    from replmon.tui.header import header_text

    fixtures = Path(__file__).parent.parent / "fixtures" / "drbd"
    wfc = parse_proc_drbd((fixtures / "seed_844_primary_wfconnection.txt").read_text())
    ok = parse_proc_drbd((fixtures / "s1_846_replica_connected.txt").read_text())
    tick = TICKS[3]
    for sample, want in ((wfc, "=drbd WFConnection=>"), (ok, "=drbd=>")):
        primary = tick.primary.model_copy(update={"drbd": sample})
        text = header_text(tick.model_copy(update={"primary": primary}), [], age_s=0.1).plain
        assert want in text, text


async def test_d_shows_the_settings_side_by_side_with_the_drift_marked() -> None:
    from rich.console import Console

    from replmon.tui.screens import DriftScreen, drift_table

    def drifted(t: object) -> object:
        p = t.primary  # type: ignore[attr-defined]
        m = p.mysql.model_copy(update={"variables": {**p.mysql.variables,
                                                     "auto_increment_increment": "2"}})
        return t.model_copy(update={"primary": p.model_copy(update={"mysql": m})})  # type: ignore[attr-defined]

    app, feed = make()
    async with app.run_test(size=(80, 24)) as pilot:
        for t in TICKS[:4]:
            await push(pilot, feed, app, drifted(t))
        assert any(f.check == "config_drift" for f in app.findings)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DriftScreen)
        console = Console(width=76, record=True)
        console.print(drift_table(app.screen.tick, app.screen.findings))
        text = console.export_text()
        row = next(line for line in text.splitlines() if "auto_increment_increment" in line)
        assert "≠" in row and "WARN" in row and " 2 " in row and " 1" in row, row
        assert not any("≠" in line for line in text.splitlines() if "binlog_format" in line)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DriftScreen)


async def test_enter_on_a_group_opens_both_nodes_detail_and_escape_goes_back() -> None:
    from rich.console import Console

    from replmon.tui.detail import side_by_side
    from replmon.tui.screens import DetailScreen

    app, feed = make()
    async with app.run_test(size=(160, 50)) as pilot:
        for t in TICKS[:3]:
            await push(pilot, feed, app, t)
        app.query_one("#replica-mysql").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and app.screen.group == "mysql"
        console = Console(width=160, record=True)
        console.print(side_by_side(app.screen.tick, app.screen.group))
        text = console.export_text()
        ch = TICKS[2].replica.mysql.replication[0]
        assert f"{ch.relay_source_log_file}:{ch.exec_source_log_pos:,}" in text  # positions
        assert "gtid executed" in text and "Seconds_Behind_Master" in text
        # live, the view follows the ticks and says which one it shows
        before = screen_text(app)
        assert f"as of {tick_clock(TICKS[2].wall)}" in before
        await push(pilot, feed, app, TICKS[3])
        after = screen_text(app)
        assert f"as of {tick_clock(TICKS[3].wall)}" in after and after != before
        await pilot.press("tab")
        assert app.screen.group == "redis"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DetailScreen)


async def test_g_opens_the_graphs_with_both_nodes_and_a_clock_axis(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from textual_plotext import PlotextPlot

    from replmon.tui import graph_view
    from replmon.tui.graph_view import GraphScreen
    from replmon.tui.graphs import CHARTS

    monkeypatch.setattr(graph_view, "LIVE_REDRAW_S", 0.2)  # (5 s in use)
    app, feed = make()
    async with app.run_test(size=(160, 50)) as pilot:
        for t in TICKS[:6]:
            await push(pilot, feed, app, t)
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, GraphScreen) and app.screen.drawn >= 1
        plots = list(app.screen.query(PlotextPlot))
        assert len(plots) == len(CHARTS)
        built = plots[0].plt.build()
        shown = "\n".join(s.text for s in app.screen._compositor.render_strips())
        # the legend under the chart, not inside it over the lines
        assert "P UPDATE stmts" in shown and "R rows updated" in shown
        assert "P UPDATE stmts" not in built
        assert "statements vs rows" in shown and "[/s]" in shown  # title with its unit
        assert re.search(r"\d\d:\d\d:\d\d", built)  # the time axis is the clock
        assert "Next finding" not in screen_text(app)  # n/N move nothing live
        # live, the charts follow the ticks (redrawn every LIVE_REDRAW_S)
        assert f"as of {tick_clock(TICKS[5].wall)}" in screen_text(app)
        await push(pilot, feed, app, TICKS[6])
        for _ in range(50):
            await pilot.pause(0.1)
            if f"as of {tick_clock(TICKS[6].wall)}" in screen_text(app):
                break
        assert f"as of {tick_clock(TICKS[6].wall)}" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, GraphScreen)


async def test_w_shows_both_nodes_statements_and_asks_for_them_only_while_open() -> None:
    from rich.console import Console
    from tickdata import with_processlists

    from replmon.tui.processlist import ProcesslistScreen, node_table

    asked: list[float] = []
    feed = ManualFeed()
    app = ReplmonApp(feed, build_engine(entry_points=False), clock=lambda: TICKS[3].wall,
                     want_processlist=asked.append)
    async with app.run_test(size=(80, 24)) as pilot:
        for t in TICKS[:3]:
            await push(pilot, feed, app, t)
        assert asked == []  # nothing read while the view is closed
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ProcesslistScreen) and asked[-1] > 0
        console = Console(width=78, record=True)
        console.print(app.screen.body())
        assert "no processlist yet" in console.export_text()  # asked, not read yet
        await push(pilot, feed, app, with_processlists(TICKS[3]))
        snap = app.memory.processlists["replica"]
        console.print(node_table("replica", snap, ref=None, now=TICKS[3].wall, asked=True,
                                 width=78))
        text = console.export_text()
        assert "lab-replica" in text and "3 active threads" in text and "read 0 s ago" in text
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if "backup" in line)
        assert "40 s" in lines[at] and "Waiting for global read lock" in lines[at]
        assert lines[at + 1].strip() == "FLUSH TABLES WITH READ LOCK"  # the statement under it
        assert "Waiting for table metadata lock" in text and "ALTER TABLE lab.t" in text
        wide = Console(width=160, record=True)
        wide.print(node_table("replica", snap, ref=None, now=TICKS[3].wall, asked=True,
                              width=160))
        row = next(line for line in wide.export_text().splitlines() if "backup" in line)
        assert "127.0.0.1:40112" in row and "FLUSH TABLES WITH READ LOCK" in row  # one line
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ProcesslistScreen) and asked[-1] == 0


async def test_graphs_at_80_columns_keep_every_chart_named() -> None:
    """plotext drops a title wider than the plot: the first chart's (84 characters) is
    cut to fit instead, so no chart is shown without its name, nor without its unit."""
    from replmon.tui.graph_view import ChartPlot, GraphScreen
    from replmon.tui.graphs import CHARTS

    app, feed = make()
    async with app.run_test(size=(80, 24)) as pilot:
        for t in TICKS[:6]:
            await push(pilot, feed, app, t)
        await pilot.press("g")
        for _ in range(50):
            await pilot.pause()
            if isinstance(app.screen, GraphScreen) and app.screen.query(ChartPlot).first().built:
                break
        first = app.screen.query(ChartPlot).first()
        built = first.render_line(0).text  # the title's own line, over the plot
        assert len(f"{CHARTS[0].title} [{CHARTS[0].unit}]") > first.size.width
        assert "statements vs rows: UPDATE statements" in built and "…" in built
        assert f"… [{CHARTS[0].unit}]" in built  # cut inside, its unit kept at the end
        lag = app.screen.query(ChartPlot)[1]  # the second's unit too ("Seconds_Be… [s]")
        shown = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert lag.title.startswith("replication lag") and "… [s]" in shown


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Nothing frozen, as in a replmon process (tests/conftest.py's ``_freeze_heap``
    undone for the test, and done again after it)."""
    import gc

    gc.unfreeze()
    try:
        yield
    finally:
        gc.collect()
        gc.freeze()


async def test_full_garbage_collections_are_paced_by_the_screen_and_restored_on_exit(
        unfrozen: None) -> None:
    """While the screen runs, allocation counts start no full collection (one ran, 60-90
    ms, inside the graph view's opening) and what start-up made is frozen; on exit both
    are as they were, so other code in the process (the tests) is not affected."""
    import gc

    from replmon import gcpace

    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    app, feed = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await push(pilot, feed, app, TICKS[0])
        assert gc.get_threshold() == (before[0], before[1], gcpace._NEVER)
        assert gc.get_freeze_count() > 10_000
        collected = gc.get_stats()[2]["collections"]
        gcpace.collect()
        assert gc.get_stats()[2]["collections"] == collected + 1
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_its_own_heap_keeps_its_freezing() -> None:
    """A process that froze objects itself (this test worker: conftest's
    ``_freeze_heap``) keeps them frozen through a screen, and no more: the screen neither
    freezes on top nor unfreezes on exit; its full passes are still paced."""
    import gc

    from replmon import gcpace

    frozen, before = gc.get_freeze_count(), gc.get_threshold()
    assert frozen > 10_000
    gcpace.start()
    try:
        assert frozen_kept(gc.get_freeze_count(), frozen), (gc.get_freeze_count(), frozen)
        assert gc.get_threshold() == (before[0], before[1], gcpace._NEVER)
    finally:
        gcpace.stop()
    assert frozen_kept(gc.get_freeze_count(), frozen) and gc.get_threshold() == before


def test_the_screen_drops_the_source_lines_start_up_read() -> None:
    """pydantic reads the models' field docstrings from their modules' source through
    ``linecache``, which would keep those files' lines for the screen's life (~1 MB,
    #56): the screen's start drops every file's lines, and keeps the source registered
    by generated code (no modification time), which cannot be read again."""
    import linecache

    from replmon import gcpace
    from replmon.model import mysql

    linecache.getlines(mysql.__file__)
    linecache.cache["<generated>"] = (3, None, ["x = 1\n"], "<generated>")
    try:
        gcpace.start()
        gcpace.stop()
        assert mysql.__file__ not in linecache.cache
        assert linecache.cache["<generated>"][2] == ["x = 1\n"]
    finally:
        linecache.cache.pop("<generated>", None)


async def test_the_screen_collects_its_cyclic_garbage_every_few_seconds() -> None:
    """The screen's garbage is mostly cycles older than the young collections (Textual's
    strips caching themselves): the paced full collection must come within ~10 s, not
    a minute, or the heap grows to hold a minute of it (#56: ~6 MB at one minute). Ticks
    are drawn for 11.5 s, one a second as live (four a second cost this test four times the
    CPU for the same claim); the screen's own timer must have run a full pass."""
    import gc

    app, feed = make()
    async with app.run_test(size=(160, 50)) as pilot:
        await push(pilot, feed, app, TICKS[0])
        collected = gc.get_stats()[2]["collections"]
        started = time.monotonic()
        i = 0
        while time.monotonic() - started < 11.5:
            i += 1
            await push(pilot, feed, app, TICKS[i % len(TICKS)])
            await asyncio.sleep(1.0)
        assert gc.get_stats()[2]["collections"] > collected, "no full pass in 11.5 s"


async def test_the_screen_empties_riches_cell_length_cache_on_its_timer(monkeypatch) -> None:
    """rich's cell-length cache fills with every tick's new strings to its 4,096 entries
    (~1.2 MB of the screen's RSS from minute 5 to 20, #56): the screen's timer empties it.
    Here the timer is 0.2 s and the cache is given 3,000 strings: after 0.6 s it holds
    only what the screen measured since (a few dozen). The same timer empties the style
    caches a sparkline's colours fill, given 300 colours each here."""
    from rich.cells import cached_cell_len

    from replmon.tui import drawcaches

    monkeypatch.setattr(drawcaches, "CELL_CACHE_EVERY_S", 0.2)
    app, feed = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await push(pilot, feed, app, TICKS[0])
        for i in range(3000):
            cached_cell_len(f"not on screen {i}")
        assert cached_cell_len.cache_info().currsize >= 3000
        fill_style_caches(300)
        assert all(c.cache_info().currsize >= 300 for c in drawcaches.STYLE_CACHES)
        await asyncio.sleep(0.6)
        await pilot.pause()
        assert cached_cell_len.cache_info().currsize < 500
        # and the caches the sparklines' colours fill (#56)
        assert all(c.cache_info().currsize < 200 for c in drawcaches.STYLE_CACHES)


def fill_style_caches(n: int) -> None:
    """``n`` new colours through each of drawcaches.STYLE_CACHES, as a sparkline's bars."""
    from rich.color import Color, ColorSystem
    from rich.style import Style
    from rich.terminal_theme import DEFAULT_TERMINAL_THEME
    from textual.filter import ANSIToTruecolor
    from textual.strip import Strip

    to_truecolor = ANSIToTruecolor(DEFAULT_TERMINAL_THEME)
    background = Color.parse("#101010")
    for i in range(n):
        color = Color.parse(f"#{0x10000 + i:06x}")
        style = Style(color=color)
        _ = Style(bgcolor=background) + style
        to_truecolor.truecolor_style(style, background)
        Strip.render_ansi(style, ColorSystem.TRUECOLOR)
        color.downgrade(ColorSystem.EIGHT_BIT).get_ansi_codes()
        color.get_ansi_codes()


async def test_the_demo_notice_is_whole_under_the_findings_and_covers_no_finding() -> None:
    """The lab demo's steps (injected, undone) on a line of their own under the findings,
    with their time, whole at 80x24 (on the findings' border it was cut at 76 cells), not a
    toast over the findings' titles (80x24: it covered `what`)."""
    app, feed = make()
    said = ("demo sql-thread-stopped in 20 s: the replica's SQL thread stopped (STOP "
            "REPLICA SQL_THREAD); mysql_replication should flag it")
    async with app.run_test(size=(80, 24)) as pilot:
        for t in TICKS[:3]:
            await push(pilot, feed, app, t)
        app.say(said)
        await pilot.pause()
        await pilot.pause()
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        bottom = max(i for i, line in enumerate(lines) if line.startswith("╰"))
        shown = " ".join(" ".join(lines[bottom + 1:]).split())
        assert re.search(r"\d\d:\d\d:\d\d " + re.escape(said), shown), lines
        assert lines[bottom].rstrip().endswith("╯"), lines  # the findings' border whole
        assert not app._notifications  # no toast on top of the screen


async def test_after_the_heal_the_closed_findings_stay_listed_with_their_times() -> None:
    """Someone who arrives after the heal sees what happened (80x24): the findings that
    closed, dimmed, "closed 15:15:02 after 5 s", with the time their numbers are of."""
    app, feed = make()
    async with app.run_test(size=(80, 24)) as pilot:
        for i, t in enumerate(TICKS):
            await push(pilot, feed, app, with_replica_mysql_down(t, TICKS[1].wall)
                       if 1 <= i <= 5 else t)
        closed = list(app.engine.history) if app.engine else []
        assert closed and not app.findings, (closed, app.findings)
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        shown = " ".join(" ".join(line.strip("│ ") for line in lines).split())
        for f in closed:
            assert re.search(rf"{f.check}: closed \d\d:\d\d:\d\d after \d+ s: .*\(as of "
                             rf"\d\d:\d\d:\d\d\)", shown), (f.check, shown)
        assert " OK " in lines[0]  # nothing open: the header says so


async def test_the_who_view_of_a_replay_is_laid_out_again_when_the_terminal_is_resized() -> None:
    """In a replay nothing redraws the who view every second (live, its reads do): a
    resize must, or the rows stay cut for the width it opened at."""
    from textual.app import App
    from tickdata import with_processlists

    from replmon.tui.processlist import ProcesslistScreen, Snapshot

    tick = with_processlists(TICKS[3])
    snaps = {n.role: Snapshot.of(n, tick.wall) for n in tick.nodes}

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ProcesslistScreen(lambda: (snaps, tick.wall), want=None,
                                               clock=lambda: tick.wall))

    def backup_rows(app: App[None]) -> list[str]:
        lines = [s.text for s in app.screen._compositor.render_strips()]
        at = next(i for i, line in enumerate(lines) if "backup" in line)
        return lines[at:at + 2]

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        narrow = backup_rows(app)
        assert "FLUSH TABLES WITH READ LOCK" in narrow[1]  # under its row at 80 columns
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        await pilot.pause()
        wide = backup_rows(app)
        assert "127.0.0.1:40112" in wide[0] and "FLUSH TABLES WITH READ LOCK" in wide[0]
