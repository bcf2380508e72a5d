"""The graph view (key g live, G in a replay): one chart per metric with both nodes
overlaid, a clock time axis and a y scale, drawn with textual-plotext (Textualize's
widget for plotext: time axes, several series, vertical markers; textual-plot, the
other candidate, is younger and has no date axis). In a replay the charts span the
ticks around the one shown, with a cursor at it and the findings' onsets marked.

``points(tick)`` turns a tick into the values every chart needs (a flat dict, so the
live screen keeps 5 minutes of them cheaply); ``CHARTS`` says how they are drawn. The
screen and its chart widget (``GraphScreen``, ``ChartPlot``) are in
``replmon.tui.graph_view``, which imports textual-plotext: on the view's first opening.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from replmon.model.findings import Finding
from replmon.model.tick import NodeTick, Tick
from replmon.tui.chart_axes import plot_color, rich_color, y_axis
from replmon.units import tick_clock

Getter = Callable[[NodeTick], float | None]


def _sum(*vals: float | None) -> float | None:
    got = [v for v in vals if v is not None]
    return sum(got) if got else None


def _oos_kib(n: NodeTick) -> float | None:
    if not n.drbd.status.ok or not n.drbd.resources:
        return None
    return float(sum(pd.out_of_sync_kib or 0 for r in n.drbd.resources
                     for c in r.connections for pd in c.peer_devices))


def _redis_lag(n: NodeTick) -> float | None:
    lags = [v for v in n.rates.redis.replica_lag_bytes.values() if v is not None]
    return float(max(lags)) if lags else None


def _link_bytes(n: NodeTick) -> float | None:
    speeds = [nic.speed_mbps for name, nic in n.rates.host.nics.items()
              if name != "lo" and nic.speed_mbps]
    return max(speeds) * 125_000.0 if speeds else None


def _binlog(n: NodeTick) -> object:
    """The primary's own binlog reading of this tick (every few ticks), for the lag
    measured on both nodes."""
    return n.mysql.binlog if n.mysql.status.ok else None


def _channel(n: NodeTick) -> object:
    """The replica's channel (the first one not of group replication)."""
    chans = [c for c in n.mysql.replication if not c.group_replication] \
        if n.mysql.status.ok else []
    return chans[0] if chans else None


def measured_lag(history: Sequence[Point]) -> list[float | None]:
    """The replica's lag measured on both nodes, as pair_lag measures it, for each point:
    the age of the oldest primary binlog reading (of the points before it) the replica
    has not executed; 0 when it has executed them all; None where not comparable. One
    pass: the replica's executed position only moves forward, so the oldest reading not
    yet executed does too."""
    from replmon.pair import covered

    readings = [(wall, vals["primary/binlog"]) for wall, vals in history
                if vals.get("primary/binlog") is not None]
    out: list[float | None] = []
    start = 0
    for wall, vals in history:
        ch = vals.get("replica/channel")
        if ch is None or not readings:
            out.append(None)
            continue
        lag: float | None = 0.0
        while start < len(readings) and readings[start][0] <= wall:
            done = covered(readings[start][1], ch)
            if done is None:
                lag = None
                break
            if not done:
                lag = wall - readings[start][0]
                break
            start += 1
        out.append(lag)
    return out


def _sbm(n: NodeTick) -> float | None:
    chans = n.mysql.replication if n.mysql.status.ok else []
    vals = [c.seconds_behind for c in chans if c.seconds_behind is not None]
    return float(max(vals)) if vals else None


METRICS: dict[str, Getter] = {
    "upd_stmt": lambda n: n.rates.mysql.com_update_per_s,
    "upd_rows": lambda n: n.rates.mysql.rows_updated_per_s,
    "sbm": _sbm,
    "redis_lag": _redis_lag,
    "cpu_busy": lambda n: _sum(n.rates.host.cpu_usr_pct, n.rates.host.cpu_sys_pct),
    "cpu_wait": lambda n: n.rates.host.cpu_iowait_pct,
    "paging": lambda n: _sum(n.rates.host.swap_in_pages_per_s, n.rates.host.swap_out_pages_per_s),
    "majflt": lambda n: n.rates.host.major_faults_per_s,
    "mem_avail": lambda n: n.rates.host.mem_available_pct,
    "await": lambda n: n.rates.host.disk_total.await_ms,
    "util": lambda n: n.rates.host.disk_max_util_pct,
    "net": lambda n: _sum(n.rates.host.net_total.recv_bytes_per_s,
                          n.rates.host.net_total.send_bytes_per_s),
    "link": _link_bytes,
    "oos": _oos_kib,
    "ops": lambda n: n.rates.redis.ops_per_s,
    "rmem": lambda n: float(n.redis.used_memory) if n.redis.status.ok and n.redis.used_memory
    is not None else None,
    "rmax": lambda n: float(n.redis.maxmemory) if n.redis.status.ok and n.redis.maxmemory
    else None,
}
READINGS: dict[str, Callable[[NodeTick], object]] = {"binlog": _binlog, "channel": _channel}
"""What a derived series needs of each tick (objects, not values): kept by reference."""
DERIVED: dict[str, Callable[[Sequence[Point]], list[float | None]]] = {
    "measured": measured_lag}
"""Series computed over the whole history at drawing time ("pair/<key>")."""


@dataclass(frozen=True)
class Chart:
    title: str
    unit: str
    series: tuple[tuple[str, str, str], ...]
    """(label, role "primary"/"replica", metric key of METRICS)."""


CHARTS: tuple[Chart, ...] = (
    Chart("statements vs rows: UPDATE statements and rows updated (should move together)",
          "/s", (("P UPDATE stmts", "primary", "upd_stmt"), ("P rows updated", "primary",
                 "upd_rows"), ("R rows updated", "replica", "upd_rows"))),
    Chart("replication lag: measured on both nodes, and the replica's "
          "Seconds_Behind_Master/Source (a gap where it is NULL)", "s",
          (("R measured", "pair", "measured"), ("R Seconds_Behind", "replica", "sbm"))),
    Chart("Redis replication: master offset minus the replica's", "B",
          (("P to replica", "primary", "redis_lag"),)),
    Chart("CPU: user+system and iowait", "%", (
        ("P busy", "primary", "cpu_busy"), ("P iowait", "primary", "cpu_wait"),
        ("R busy", "replica", "cpu_busy"), ("R iowait", "replica", "cpu_wait"))),
    Chart("paging: swap in+out pages and major faults", "/s", (
        ("P swap", "primary", "paging"), ("P majflt", "primary", "majflt"),
        ("R swap", "replica", "paging"), ("R majflt", "replica", "majflt"))),
    Chart("memory available", "%", (("P", "primary", "mem_avail"),
                                     ("R", "replica", "mem_avail"))),
    Chart("disk await (all disks)", "ms", (("P", "primary", "await"),
                                           ("R", "replica", "await"))),
    Chart("disk utilisation (busiest disk)", "%", (("P", "primary", "util"),
                                                   ("R", "replica", "util"))),
    Chart("network rx+tx vs link speed", "B/s", (
        ("P traffic", "primary", "net"), ("P link", "primary", "link"),
        ("R traffic", "replica", "net"), ("R link", "replica", "link"))),
    Chart("DRBD out of sync", "KiB", (("P", "primary", "oos"), ("R", "replica", "oos"))),
    Chart("Redis commands", "/s", (("P", "primary", "ops"), ("R", "replica", "ops"))),
    Chart("Redis memory vs maxmemory", "B", (
        ("P used", "primary", "rmem"), ("P maxmemory", "primary", "rmax"),
        ("R used", "replica", "rmem"), ("R maxmemory", "replica", "rmax"))),
)

Point = tuple[float, dict[str, Any]]
"""(wall, "role/metric" -> value) for one tick: numbers (float or None) for METRICS, the
objects of READINGS."""


# role -> ("role/metric", getter) of METRICS, of READINGS: one key string for every point
_KEYS: dict[str, tuple[tuple[tuple[str, Getter], ...], tuple[tuple[str, Any], ...]]] = {}


def points(tick: Tick) -> Point:
    vals: dict[str, Any] = {}
    for node in tick.nodes:
        keys = _KEYS.get(node.role)
        if keys is None:
            keys = _KEYS[node.role] = (
                tuple((f"{node.role}/{key}", get) for key, get in METRICS.items()),
                tuple((f"{node.role}/{key}", read) for key, read in READINGS.items()))
        for key, get in keys[0]:
            try:
                vals[key] = get(node)
            except (AttributeError, TypeError, ValueError):  # a partial sample
                vals[key] = None
        for key, read in keys[1]:
            vals[key] = read(node)
    return tick.wall, vals


COLORS = ("blue+", "green+", "orange+", "magenta+", "cyan+", "red+")
"""One colour per series of a chart, the same for each of its segments; each drawn,
and named in the legend, in one RGB (``chart_axes.COLOR_RGB``)."""
Legend = list[tuple[str, str]]
"""(text, colour name) of each series drawn and each marker, for the line under a
chart: plotext draws its legend inside the plot, over the lines."""


def _segments(xs: Sequence[float], ys: Sequence[float | None]
              ) -> list[tuple[list[float], list[float]]]:
    """The runs of known values: a value the server did not report is a gap in the line,
    not a line drawn across it. A run of one point is kept (drawn as a dot)."""
    runs: list[tuple[list[float], list[float]]] = []
    cur: tuple[list[float], list[float]] | None = None
    for x, y in zip(xs, ys, strict=True):
        if y is None:
            cur = None
            continue
        if cur is None:
            cur = ([], [])
            runs.append(cur)
        cur[0].append(x)
        cur[1].append(y)
    return runs


TICKS_X = 5
"""Labels on the time axis."""
MARKER = "hd"
"""plotext's 2x2 dots per character: a third of braille's (2x4) build time for a
160-column chart (27 vs 78 ms per chart of three lines), which keeps opening the view
under 150 ms; 28 rows of resolution in a 14-row chart is enough to see a trend."""


def clock(wall: float, span_s: float = 0.0) -> str:
    """A time axis label: the clock for spans up to 6 h, day/month and minutes over (a
    day's replay crosses midnight, and the day says which side of it)."""
    if span_s <= 6 * 3600:
        return tick_clock(wall)  # as the status bar and the findings say a tick's time
    return time.strftime("%d/%m %H:%M", time.localtime(wall))


def _y_ticks(p: Any, chart: Chart, drawn: list[float]) -> None:
    """The y axis from 0 to a round top, round ticks labelled with the chart's unit
    ("12.5k/s", "13s", "64MiB", "50%"; plotext would print 13462.5 and, under a flat lag
    of 0, run to -0.33)."""
    bottom, top, at, labels = y_axis(drawn, chart.unit)
    p.ylim(bottom, top)
    p.yticks(at, labels)


def marker_label(f: Finding) -> str:
    """A finding's onset line in the legend: which check, when it opened, and when it
    closed once it did (the line stays, named, after the finding closes)."""
    closed = (f", closed {tick_clock(f.closed_wall)}"
              if f.state == "closed" and f.closed_wall is not None else "")
    return f"│ {f.check} opened {tick_clock(f.since_wall)}{closed}"


def draw(plt: object, chart: Chart, history: Sequence[Point], *, cursor: float | None = None,
         onsets: Sequence[Finding] = ()) -> tuple[str, Legend]:
    """Draw ``chart`` from ``history`` on a plotext ``plt`` (cleared first): a line per
    series that has values, the time axis as clock times, the cursor (a replay's tick)
    and the findings' onsets as vertical lines (in the legend: which check, when; a
    label in the plot would cover its lines); returns the title it set and the legend
    (drawn under the chart by ChartPlot). x is the epoch time itself (plotext parsing a
    date string per point cost more than the drawing) with TICKS_X labels."""
    p = plt
    p.clear_data()  # type: ignore[attr-defined]
    p.clear_figure()  # type: ignore[attr-defined]
    title = f"{chart.title} [{'B' if chart.unit == 'KiB' else chart.unit}]"
    p.title(title)  # type: ignore[attr-defined]
    legend: Legend = []
    walls = [wall for wall, _ in history]
    drawn: list[float] = []
    for n, (label, role, key) in enumerate(chart.series):
        ys: list[float | None] = (DERIVED[key](history) if role == "pair"
                                  else [vals.get(f"{role}/{key}") for _, vals in history])
        runs = _segments(walls, ys)
        if sum(len(xs) for xs, _ in runs) < 2:
            continue
        color = COLORS[n % len(COLORS)]
        for xs, seg in runs:
            p.plot(xs, seg, marker=MARKER, color=plot_color(color))  # type: ignore[attr-defined]
            drawn += seg
        legend.append((label, color))
    if not drawn:
        title += ": no data on either node"
        p.title(title)  # type: ignore[attr-defined]
        return title, legend
    first, last = history[0][0], history[-1][0]
    span = last - first
    at = [first + span * k / (TICKS_X - 1) for k in range(TICKS_X)]
    p.xticks(at, [clock(x, span) for x in at])  # type: ignore[attr-defined]
    _y_ticks(p, chart, drawn)
    marked: set[tuple[str, float]] = set()
    for f in sorted(onsets, key=lambda f: f.since_wall):
        if first <= f.since_wall <= last:
            color = "red" if max(f.severity, f.worst) >= 2 else "orange"
            p.vline(f.since_wall, plot_color(color))  # type: ignore[attr-defined]
            if (f.check, f.since_wall) not in marked:  # one name per line drawn
                marked.add((f.check, f.since_wall))
                legend.append((marker_label(f), color))
    if cursor is not None and first <= cursor <= last:
        p.vline(cursor, plot_color("white"))  # type: ignore[attr-defined]
        legend.append((f"│ tick shown {tick_clock(cursor)}", "white"))
    return title, legend


def legend_lines(legend: Legend, width: int) -> list[Text]:
    """The legend under a chart, its entries ("━ P UPDATE stmts", "│ stmt_vs_rows opened
    16:09:45") packed into lines of ``width`` cells, never one broken over two."""
    lines: list[Text] = []
    for label, color in legend:
        entry = Text(label if label.startswith("│") else f"━ {label}",
                     style=rich_color(color))
        if lines and lines[-1].cell_len + 2 + entry.cell_len <= width:
            lines[-1].append("  ")
            lines[-1].append_text(entry)
        else:
            lines.append(entry)
    return lines


def fit_title(title: str, room: int) -> str:
    """``title`` in ``room`` cells, cut inside its words if it must but never losing its
    unit ("[/s]" at the end, or what follows it)."""
    if len(title) <= room:
        return title
    cut = title.find(" [")
    keep = title[cut:] if cut >= 0 else ""
    return title[:max(1, room - len(keep) - 1)] + "…" + keep
