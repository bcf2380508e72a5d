"""Issue #54 (item 3): the graph view and the replay screen as a tester saw them. The
charts: the legend's colour is the line's, the y axis starts at 0 with round ticks and
their unit, a closed finding's onset keeps its name, the first chart's title is on its
first line at 80 columns. The replay: its header says it is one (the file, the recorded
time of the tick shown), a finding's "since" is a tick that shows it open, a toast goes
with the next key, the focus comes back after a view, an empty findings box says so.
One replay app at 80x24 walks them all (each view opened once)."""

from __future__ import annotations

import re
from pathlib import Path

import plotext
from rich.style import Style
from settle import settle
from textual.widgets import DataTable, Static
from tickdata import lab_ticks

from replmon.engine import build_engine
from replmon.model.findings import Finding, Severity
from replmon.session.recording import open_recording
from replmon.tui.chart_axes import y_axis
from replmon.tui.graph_view import ChartPlot, GraphScreen
from replmon.tui.graphs import CHARTS, draw, legend_lines, points
from replmon.tui.replay import ReplayApp
from replmon.tui.screens import FindingScreen
from replmon.units import tick_clock

ROOT = Path(__file__).resolve().parents[2]
SQL_STOPPED = ROOT / "sample_sessions" / "replica_sql_stopped.rmrec"
TICKS = lab_ticks()


def test_legend_colours_are_the_lines_colours_and_closed_onsets_keep_their_names() -> None:
    # three lines apart (in the lab's ticks two lie on each other: one colour would hide)
    history = [(wall, {**vals, "primary/upd_stmt": 10.0 + k, "primary/upd_rows": 50.0,
                       "replica/upd_rows": 90.0 - k})
               for k, (wall, vals) in enumerate(points(t) for t in TICKS)]
    closed = Finding(check="stmt_vs_rows", key="k", node="primary", severity=Severity.WARNING,
                     title="x", since_seq=3, since_wall=TICKS[3].wall, last_seq=5,
                     worst=Severity.CRITICAL, state="closed", closed_seq=6,
                     closed_wall=TICKS[6].wall)
    _, legend = draw(plotext, CHARTS[0], history, onsets=[closed])
    plotext.plotsize(160, 16)
    drawn = set(re.findall(r"\x1b\[38;2;(\d+);(\d+);(\d+)m", plotext.build()))
    for line in legend_lines(legend, 160):
        for span in line.spans:
            color = Style.parse(str(span.style)).color
            assert color is not None and color.triplet is not None, line.plain
            assert tuple(str(c) for c in color.triplet) in drawn, (line.plain, color)
    # the closed finding's line is named, with when it closed (its worst: red)
    assert (f"│ stmt_vs_rows opened {tick_clock(TICKS[3].wall)}, closed "
            f"{tick_clock(TICKS[6].wall)}", "red") in legend


def test_y_axes_start_at_0_with_round_ticks_and_units() -> None:
    assert y_axis([0.0, 0.0], "s")[:2] == (0.0, 1.0)  # a flat lag: never -0.33 s
    bottom, top, at, labels = y_axis([100.0, 13462.5], "/s")
    assert (bottom, top) == (0.0, 15000.0) and labels == ["0/s", "5k/s", "10k/s", "15k/s"]
    assert y_axis([0.4, 13.2], "s")[3] == ["0s", "5s", "10s", "15s"]
    assert y_axis([1.1 * 2**20, 3 * 2**20], "B")[3][-1] == "3MiB"
    assert y_axis([95.25, 96.25], "%")[3][-1] == "100%"
    assert y_axis([12.5], "/s")[3] == ["0/s", "5/s", "10/s", "15/s"]


def _text(app: ReplayApp, selector: str) -> str:
    return str(app.main_widget(selector, Static).render())


async def test_replay_says_it_is_one_and_its_findings_times_and_focus_hold() -> None:
    rec = open_recording(SQL_STOPPED)
    app = ReplayApp(rec, lambda: build_engine(entry_points=False))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete([app.marks_worker])
        await settle(pilot)
        head = _text(app, "#header")
        first = rec.tick_at(0).wall
        assert "REPLAY" in head and tick_clock(first) in head and "PAUSED" not in head, head
        table = app.main_widget("#findings", DataTable)
        assert not app.findings and "none open" in str(table.border_title)

        await pilot.press("n")  # where mysql_replication opens
        await settle(pilot)
        opened = app.pos
        head = _text(app, "#header")
        assert app.findings and "REPLAY" in head, head
        # at 80 with a finding open: the pair's names whole before the recorded time
        assert "lab-primary" in head and "lab-replica" in head, head
        assert str(table.border_title) == "findings"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, FindingScreen)
        shown = " ".join(str(s.render()) for s in app.screen.query(Static))
        # the tick it is open from shows it open (the hysteresis' ticks before do not)
        assert f"tick #{opened + 1}" in shown and f"tick #{opened})" not in shown, shown
        await pilot.press("escape")
        await settle(pilot)

        app.notify("a toast", timeout=60)  # as the jump's error raises one
        await settle(pilot)
        assert len(app._notifications) == 1
        await pilot.press("minus")
        await settle(pilot)
        assert len(app._notifications) == 0  # gone with the next key

        before = app.focused
        await pilot.press("G")
        await settle(pilot)
        assert isinstance(app.screen, GraphScreen)
        for _ in range(50):
            if app.screen.in_view_built:
                break
            await pilot.pause()
        chart = app.screen.query_one("#chart-0", ChartPlot)
        title = chart.render_line(0).text
        assert title.startswith("statements vs rows") and title.rstrip().endswith("[/s]"), title
        ticks = [chart.render_line(y).text for y in range(chart.size.height)]
        assert any("k/s┤" in t or "0/s┤" in t for t in ticks), ticks  # y labels with units
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is before is not None
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not None and app.focused is not before
