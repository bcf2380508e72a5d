"""The replay screen on a real recording of lab ticks: play, pause, step, speed,
jump, next finding, and the findings recorded at capture time."""

from __future__ import annotations

from pathlib import Path

import pytest
from settle import settle
from textual.widgets import Static
from tickdata import lab_ticks, with_replica_mysql_down

from replmon.engine import build_engine
from replmon.session.format import meta_for
from replmon.session.recorder import RecordingWriter
from replmon.session.recording import open_recording
from replmon.session.rerun import rerun_file
from replmon.tui.replay import ReplayApp, parse_jump

TICKS = lab_ticks()


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    """12 real lab ticks; the replica's MySQL is unreachable from tick 6 on, and the
    live engine's findings are recorded beside the ticks."""
    ticks = TICKS[:6] + [with_replica_mysql_down(t, TICKS[6].wall) for t in TICKS[6:]]
    path = tmp_path / "pair.rmrec"
    eng = build_engine(entry_points=False)
    with RecordingWriter(path, meta_for(interval=TICKS[0].interval)) as w:
        for t in ticks:
            w.write(t, eng.feed(t))
    return path


def make(path: Path) -> ReplayApp:
    return ReplayApp(open_recording(path), lambda: build_engine(entry_points=False),
                     rerun=lambda stop: rerun_file(path, entry_points=False, workers=1,
                                                   should_stop=stop))




def position(app: ReplayApp) -> str:
    return str(app.query_one("#position", Static).render())


async def test_step_forward_and_back(recording: Path) -> None:
    """Steps move the replay, each tick drawn once (Textual runs the base app's handler
    too unless the replay's stops it); they leave the footer's keys as they were (paused
    before and after: rebuilding its ~20 keys cost each step ~40 ms)."""
    from textual.widgets._footer import FooterKey

    app = make(recording)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.pos == 0  # it opens on the first tick
        keys, shown = list(app.query(FooterKey)), app.ticks_shown
        await pilot.press("right", "right")
        await settle(pilot)
        assert app.pos == 2 and "tick #3 of 12" in position(app)  # the first is #1
        assert app.ticks_shown == shown + 2, "a tick drawn twice"
        assert list(app.query(FooterKey)) == keys, "a step rebuilt the footer"
        await pilot.press("left")
        await settle(pilot)
        assert app.pos == 1
        shown = str(app.query_one("#primary-mysql", Static).render())
        r = TICKS[1].primary.rates.mysql
        assert r.qps is not None and f"{r.qps:.0f}" in shown


async def test_next_finding_jumps_to_where_the_recorded_engine_opened_one(
    recording: Path,
) -> None:
    app = make(recording)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete([app.marks_worker])  # read in a thread
        await pilot.press("right")
        await pilot.press("n")
        await settle(pilot)
        rec = open_recording(recording)
        first_open = next(i for i in range(len(rec)) if (u := rec.update_at(i)) and u.opened)
        assert app.pos == first_open
        assert "UNREACHABLE" in str(app.query_one("#replica-mysql", Static).render())
        checks = {f.check.removesuffix(" (rec)") for f in app.findings}
        assert "source_health" in checks  # re-run with today's checks, warmed after the jump
        marks = app._finding_marks() or []
        app._goto(marks[-1])  # the last opening: n goes nowhere and says so, and stays
        await pilot.press("n")
        await settle(pilot)
        assert app.pos == marks[-1]
        said = str(app.query_one("#say", Static).render())  # the line under the findings
        assert f"n: no finding opens after tick #{marks[-1] + 1}" in said, said


async def test_next_finding_also_stops_where_todays_checks_open_one(tmp_path: Path) -> None:
    """A recording made without findings (nothing recorded to jump to): n still goes to
    where the re-run with today's checks opens one, and N comes back."""
    ticks = TICKS[:6] + [with_replica_mysql_down(t, TICKS[6].wall) for t in TICKS[6:]]
    path = tmp_path / "bare.rmrec"
    with RecordingWriter(path, meta_for(interval=TICKS[0].interval)) as w:
        for t in ticks:
            w.write(t)
    rerun_opens = [i for i, u in rerun_file(path, entry_points=False, workers=1) if u.opened]
    assert rerun_opens and open_recording(path).recorded_openings() == []
    app = make(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete([app.marks_worker])
        await pilot.press("right", "n")
        await settle(pilot)
        assert app.pos == rerun_opens[0]
        await pilot.press("right", "right")
        await settle(pilot)
        here = app.pos
        await pilot.press("N")
        await settle(pilot)
        assert app.pos == max(i for i in rerun_opens if i < here)


def test_recorded_openings_reads_what_update_at_reads(recording: Path) -> None:
    rec = open_recording(recording)
    assert rec.recorded_openings() == [i for i in range(len(rec))
                                       if (u := rec.update_at(i)) and u.opened]
    assert rec.recorded_openings()  # the fixture's replica goes down: something opened


async def test_play_at_speed_reaches_the_end_and_stops(recording: Path) -> None:
    app = make(recording)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(6):
            await pilot.press("plus")
        await pilot.press("space")
        for _ in range(400):
            await pilot.pause(0.02)
            if app.pos == 11 and not app.playing:
                break
        assert app.pos == 11 and not app.playing
        assert "x64" in position(app)


async def test_jump_to_a_time(recording: Path) -> None:
    app = make(recording)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await settle(pilot)
        await pilot.press(*"#7", "enter")
        await settle(pilot)
        assert app.pos == 6  # the seventh tick: #1 is the first, as the status bar counts


async def test_it_opens_where_at_says(recording: Path) -> None:
    """`replay --at #7`: open on tick 7, paused, with the checks run up to it."""
    rec = open_recording(recording)
    app = ReplayApp(rec, lambda: build_engine(entry_points=False), start=7)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.pos == 7 and not app.playing
    rec.close()


def test_a_bad_at_is_one_line_and_exit_2(recording: Path) -> None:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "replmon", "replay", str(recording), "--at",
                          "yesterday"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run
    assert run.stderr.strip().splitlines() == [
        "replmon: --at 'yesterday': not a time of the recording (03:12:00, +90s or #1234)"]


def test_parse_jump() -> None:
    first = 1_700_000_000.0  # 22:13:20 UTC
    assert parse_jump("+90s", first, first + 10, 100) == ("wall", first + 100)
    assert parse_jump("-1m", first, first + 100, 100) == ("wall", first + 40)
    assert parse_jump("#5000", first, first, 100) == ("index", 99.0)
    assert parse_jump("nonsense", first, first, 100) is None
    kind, wall = parse_jump("22:15:00", first, first, 100)  # type: ignore[misc]
    assert kind == "wall" and wall == first + 100


async def test_position_bar_is_on_screen_at_80x24(recording: Path) -> None:
    app = make(recording)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)  # the first tick, shown when the replay opens
        bar = app.query_one("#position", Static)
        assert bar.region.height == 1 and bar.region.bottom <= 23, bar.region
        assert "tick #1 of 12" in position(app)


async def test_a_failed_sources_duration_is_as_of_the_tick_shown(recording: Path) -> None:
    """The replica's MySQL is down from tick 6: at tick 9 the panel says it has been for
    about 3 s (the recording's time), not for however long ago the recording was made."""
    app = make(recording)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*["right"] * 9)  # from the first tick, where it opens
        await settle(pilot)
        assert app.pos == 9
        shown = str(app.query_one("#replica-mysql", Static).render())
        since = TICKS[9].wall - TICKS[6].wall
        assert f"for {since:.1f} s" in shown or f"for {since:.0f} s" in shown, shown


async def test_graphs_in_a_replay_have_a_cursor_and_n_moves_it(recording: Path) -> None:
    from replmon.tui.graph_view import GraphScreen

    app = make(recording)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.workers.wait_for_complete([app.marks_worker])
        await pilot.press("right")
        await settle(pilot)
        await pilot.press("G")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, GraphScreen) and not screen.live
        history, cursor, onsets = screen.source()
        assert cursor == open_recording(recording).tick_at(app.pos).wall
        assert history[0][0] <= cursor <= history[-1][0]
        before = app.pos
        await pilot.press("n")  # the next finding: the cursor moves there, the charts redraw
        await settle(pilot)
        assert app.pos > before and screen.source()[1] > cursor
        assert any(f.check == "source_health" for f in screen.source()[2])  # its onset


def test_the_graphs_read_each_tick_around_the_cursor_once(recording: Path) -> None:
    """A redraw after a step reads only the tick that came into the span (each redraw read
    all 2 x GRAPH_SPAN + 1 again: ~0.1 s a step on a 150-tick recording, ~0.5 s on a
    day's), and gives the history a replay reading them afresh gives."""
    def app_at(index: int) -> ReplayApp:
        app = ReplayApp(open_recording(recording), lambda: build_engine(entry_points=False))
        app.GRAPH_SPAN = 3
        app.cursor.seek(index)
        return app

    app = app_at(4)
    app.graph_source()
    reads: list[int] = []
    entry = app.recording.entry
    app.recording.entry = lambda i: (reads.append(i), entry(i))[1]  # type: ignore[method-assign]
    app.cursor.step()
    reads.clear()
    history, cursor, _ = app.graph_source()
    assert [i for i in reads if i != app.pos] == [app.pos + 3], reads
    assert (history, cursor) == app_at(5).graph_source()[:2]


async def test_replay_graphs_span_the_whole_recording_with_detail_around_the_cursor(
        tmp_path: Path) -> None:
    """600 ticks in chunks of 20: the graphs run from the first tick to the last (one
    tick per sampled chunk), every tick near the cursor, and a finding's onset far from
    the cursor is marked."""
    from replmon.testing.real_ticks import loop_ticks

    ticks = list(loop_ticks(TICKS, 600, rates=True))
    ticks = ticks[:40] + [with_replica_mysql_down(t, ticks[40].wall) for t in ticks[40:60]] \
        + ticks[60:]
    path = tmp_path / "long.rmrec"
    eng = build_engine(entry_points=False)
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=20) as w:
        for t in ticks:
            w.write(t, eng.feed(t))
    # no re-run with today's checks (n / N's marks, which no assertion reads: the onsets
    # are the recorded findings', read by the marks worker before a re-run would start;
    # over these 600 ticks it was most of the test's CPU)
    app = ReplayApp(open_recording(path), lambda: build_engine(entry_points=False))
    app.OVERVIEW_POINTS, app.GRAPH_SPAN = 10, 5
    async with app.run_test(size=(100, 30)):
        await app.workers.wait_for_complete([app.marks_worker])  # the recorded findings
        app.cursor.seek(400)
        history, cursor, onsets = app.graph_source()
    walls = [wall for wall, _ in history]
    assert walls == sorted(walls) and len(set(walls)) == len(walls)
    assert walls[0] == ticks[0].wall and walls[-1] == ticks[-1].wall  # the whole recording
    assert cursor == ticks[400].wall
    assert all(ticks[i].wall in walls for i in range(395, 406))  # every tick near it
    assert 10 + 11 <= len(walls) <= 10 + 11 + 2  # and one per sampled chunk elsewhere
    assert any(f.check == "source_health" and f.since_wall < ticks[100].wall
               for f in onsets)  # an onset 300 ticks before the cursor
    up = next(i for i, wall in enumerate(walls) if wall == ticks[400].wall)
    assert history[up][1]["primary/upd_stmt"] is not None  # rates, not just samples
    chunk3 = next(p for wall, p in history if wall == ticks[60].wall)  # a sampled chunk's
    assert chunk3["primary/upd_stmt"] is not None  # first tick: rates from its key frame
