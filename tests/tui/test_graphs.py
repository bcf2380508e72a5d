"""The graph view's data and drawing on real ticks: every chart's series come from both
nodes, a replay's cursor and the findings' onsets are drawn as vertical lines."""

from __future__ import annotations

import re
import time

import plotext
from tickdata import lab_ticks

from replmon.model.findings import Finding, Severity
from replmon.tui.graphs import CHARTS, DERIVED, METRICS, READINGS, clock, draw, points

TICKS = lab_ticks()


def built(width: int, height: int) -> str:
    plotext.plotsize(width, height)
    return re.sub(r"\x1b\[[0-9;]*m", "", plotext.build())


def test_points_hold_every_metric_of_both_nodes() -> None:
    wall, vals = points(TICKS[-1])
    assert wall == TICKS[-1].wall
    assert set(vals) == {f"{r}/{k}" for r in ("primary", "replica")
                         for k in [*METRICS, *READINGS]}
    assert vals["primary/upd_stmt"] == TICKS[-1].primary.rates.mysql.com_update_per_s
    # every chart names series that exist
    for chart in CHARTS:
        for _, role, key in chart.series:
            assert (key in DERIVED) if role == "pair" else f"{role}/{key}" in vals


def test_draw_marks_the_cursor_and_onsets() -> None:
    history = [points(t) for t in TICKS]
    f = Finding(check="stmt_vs_rows", key="k", node="primary", severity=Severity.WARNING,
                title="x", since_seq=3, since_wall=TICKS[3].wall, last_seq=4,
                worst=Severity.WARNING)
    p = plotext
    _, legend = draw(p, CHARTS[0], history, cursor=TICKS[5].wall, onsets=[f])
    out = built(160, 16)
    labels = [label for label, _ in legend]
    assert "P UPDATE stmts" in labels and "R rows updated" in labels
    # the onset and the cursor are named in the legend, in their lines' colours
    assert (f"│ stmt_vs_rows opened {clock(f.since_wall)}", "orange") in legend
    assert (f"│ tick shown {clock(TICKS[5].wall)}", "white") in legend
    assert time.strftime("%H:%M", time.localtime(TICKS[0].wall)) in out  # the clock axis


def test_a_day_long_axis_across_midnight_stays_in_order_with_dates() -> None:
    """A 24 h replay crosses midnight: points are placed by their epoch time (a clock
    string alone would put 00:10 before 23:50), and the labels name the day."""
    start = time.mktime((2026, 11, 24, 12, 0, 0, 0, 0, -1))
    _, vals = points(TICKS[-1])
    history = [(start + i * 600.0, {**vals, "primary/upd_stmt": float(i)}) for i in range(145)]
    assert clock(start, 300) == "12:00:00" and clock(start, 86400) == "24/11 12:00"
    draw(plotext, CHARTS[0], history)
    out = built(120, 16)
    assert "24/11" in out and "25/11" in out
    labels = re.findall(r"(\d\d)/11 (\d\d:\d\d)", out)
    assert labels == sorted(labels)  # left to right in time


def test_a_chart_without_data_says_so() -> None:
    history = [points(t) for t in TICKS]
    oos = next(c for c in CHARTS if c.title.startswith("DRBD"))
    p = plotext
    draw(p, oos, history)
    assert "no data on either node" in built(160, 10)


def test_a_value_the_server_did_not_report_is_a_gap_and_the_lag_is_measured_beside() -> None:
    """Seconds_Behind_Master NULL (the SQL thread stopped) breaks its line instead of
    joining the values around it; the lag measured on both nodes goes on growing there:
    the age of the oldest primary reading the replica has not executed."""
    from replmon.model.mysql import BinlogStatus, ReplicaChannel
    from replmon.tui.graphs import _segments, measured_lag

    assert _segments([1, 2, 3, 4, 5], [0.0, 1.0, None, None, 7.0]) == [
        ([1, 2], [0.0, 1.0]), ([5], [7.0])]
    # the primary writes 10 transactions a second, read every 2 s; the replica's applier
    # stops at t=4 (transactions up to 40 executed) and never resumes
    history = []
    for t in range(0, 12):
        executed = min(t, 4) * 10
        vals: dict[str, object] = {
            "primary/binlog": BinlogStatus(gtid_executed=f"0-1-{t * 10}") if t % 2 == 0
            else None,
            "replica/channel": ReplicaChannel(gtid_executed=f"0-1-{executed}")}
        history.append((1000.0 + t, vals))
    lag = measured_lag(history)
    assert lag[:5] == [0.0] * 5  # caught up while applying
    # from t=5 the oldest reading not executed is t=6's (60 > 40): 0 at 6, 2 at 8...
    assert lag[5:] == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], lag
