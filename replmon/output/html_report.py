"""``replmon report FILE --html``: the recording as one self-contained page for a
postmortem, read by people who were not at the terminal.

The page holds the pair (hosts, server versions), each incident (root, consequences,
numbers, likely cause, next step) with the charts that tell it (both nodes on one time
axis, the findings' spans shaded), the settings that differ between the nodes, and
what of the file was damaged. It opens offline: uPlot (html_assets/, MIT, ~50 KB) and
the data are inlined, nothing is fetched. Every text is escaped (``html.escape``; the
data as JSON in a script tag with ``</`` escaped).

The data comes from ``report`` (report.py), in its one pass over the recording (the
re-run of the checks), with ``html_series.chart_point`` as its extra Extract, or, where
every chunk's summary frame holds the charts' values, ``html_series.stored_points``: then no
tick is decoded (a day: 27 s decoding, see docs/recording.md).
"""

from __future__ import annotations

import html
import json
import time
from importlib import resources
from typing import Any

from replmon.output.html_series import (
    CHARTS,
    OVERVIEW,
    Chart,
    Columns,
    chart_point,
    charts_for,
    fit,
    stored_points,
    with_gaps,
)
from replmon.output.plain import human
from replmon.output.report import report
from replmon.session.recording import Recording
from replmon.units import byte_key, fmt_number, tick_clock
from replmon.wording import plural

POINTS = 600
"""x values per chart at most: a longer span is cut into 300 buckets, each drawn as its
lowest and highest value (~4 KB of JSON per series)."""
PAGE_POINTS = 40_000
"""x values for all the page's charts together: with many long incidents each chart
gets fewer (~1.3 MB of data at most: a chart's x value and its ~4 series take ~32 B)."""
MIN_POINTS = 120
"""x values per chart at least (60 buckets)."""
MARGIN_S = 120.0
"""Seconds shown before an incident opens and after it closes."""
MAX_CHARTED = 30
"""Incidents detailed (numbers, cause, next step) and drawn with charts at most: the
worst first, then in time; the others are listed in short, and the page says so. A day
of a flapping pair can hold a thousand incidents."""
DRIFT_CHECK = "config_drift"


def e(text: object) -> str:
    """Text as HTML (every text put in the page goes through here)."""
    return html.escape(str(text), quote=True)


def _asset(name: str) -> str:
    return (resources.files("replmon.output") / "html_assets" / name).read_text("utf-8")


def _zone_shift(wall: float) -> tuple[int, str]:
    """(seconds to add to a wall time so that the page's UTC clock shows the report's
    local time, the zone's name): the page shows the times every view shows
    (tick_stamp), whatever the reader's browser zone."""
    lt = time.localtime(wall)
    return lt.tm_gmtoff, time.strftime("%Z", lt)


# --- the charts' data ---------------------------------------------------------------


def _chart_data(chart: Chart, cols: Columns, t0: float, t1: float, shift: int,
                spans: list[tuple[float, float, str]], points: int) -> dict[str, Any]:
    """One chart of [t0, t1] as the page's script draws it, at most ``points`` x values
    (``plan`` made sure it has something to draw)."""
    a, b = cols.span(t0, t1)
    keys = [k for _, k in chart.series + chart.right]
    xs, ys, bucket = fit(cols, keys, a, b, points)
    labels = [label for label, _ in chart.series + chart.right]
    kept = [i for i, k in enumerate(keys) if cols.has_data([k], a, b)]
    note = (f"each point the lowest and highest of {bucket:.0f} s" if bucket
            else "every tick")
    least = _least_range(chart, ys)
    same = _same_as(ys, labels, kept, len(chart.series), least)
    return {"title": chart.title, "unit": chart.unit, "right_unit": chart.right_unit,
            "x": [round(x + shift, 1) for x in xs], "y_least": least,
            "series": [{"label": labels[i], "right": i >= len(chart.series),
                        "role": keys[i].partition("/")[0], "y": ys[i],
                        "same_as": same[i]} for i in kept],
            "spans": [[round(s + shift, 1), round(t + shift, 1), lab] for s, t, lab in spans],
            "note": note}


PCT_SPAN = 10.0
"""Points a percent axis spans at least: 95.25 to 96.25 % drawn over the chart's height
made 1 % of noise look like cliffs."""


def _least_range(chart: Chart, ys: list[list[float | None]]) -> list[float] | None:
    """The range a percent axis covers at least (PCT_SPAN points around the values,
    inside 0 to 100 %); None for other units (their axis fits the values)."""
    vals = [v for y in ys[:len(chart.series)] for v in y if v is not None]
    if chart.unit != "%" or not vals:
        return None
    lo, hi = min(vals), max(vals)
    if hi - lo >= PCT_SPAN:
        return [lo, hi]
    mid = (lo + hi) / 2
    lo = min(max(0.0, mid - PCT_SPAN / 2), 100.0 - PCT_SPAN)
    return [lo, max(hi, lo + PCT_SPAN)]


COINCIDE = 0.01
"""Two series whose every point is within this share of their axis' span of each other
are drawn over each other (both nodes on one host): the later one, dashed, says so."""


def _same_as(ys: list[list[float | None]], labels: list[str], kept: list[int], left: int,
             least: list[float] | None) -> dict[int, str]:
    """For each series drawn, the label of an earlier one on its axis it coincides with
    (within COINCIDE of the axis' span, a gap where the other has one), else ""."""
    out: dict[int, str] = {}
    for side in ([i for i in kept if i < left], [i for i in kept if i >= left]):
        vals = [v for i in side for v in ys[i] if v is not None]
        span = max([max(vals) - min(vals) if vals else 0.0,
                    least[1] - least[0] if least and side and side[0] < left else 0.0])
        tol = max(span * COINCIDE, 1e-9)
        for i in side:
            out[i] = next((labels[j] for j in side if j < i and all(
                a == b or (a is not None and b is not None and abs(a - b) <= tol)
                for a, b in zip(ys[i], ys[j], strict=True))), "")
    return out


NUMBER_UNITS = (("_per_s", "/s"), ("_pct", " %"), ("_ms", " ms"), ("_s", " s"))
"""A finding's number's unit, by the end of its name."""


def number_words(key: str, value: object) -> tuple[str, str]:
    """A finding's number as a reader reads it: its name in words and its value rounded
    with its unit ("statements_per_s", 356.438 -> "statements", "356/s"); sizes and
    yes/no as every view writes them (``fmt_number``)."""
    text = fmt_number(key, value)
    label = key
    if byte_key(key):
        label = key.removesuffix("_s").removesuffix("_per").removesuffix("_bytes") \
            .removesuffix("_kib")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        unit = next(((end, u) for end, u in NUMBER_UNITS if key.endswith(end)), ("", ""))
        label = key.removesuffix(unit[0]) if unit[0] else key
        plain = abs(value) >= 100 or float(value).is_integer()
        text = f"{human(value).strip() if plain else f'{value:.3g}'}{unit[1]}"
    elif key.endswith("_s"):  # a NULL or unknown number of seconds
        label = key.removesuffix("_s")
    return label.replace("_", " "), text


def _finding_spans(inc: dict[str, Any], end: float) -> list[tuple[float, float, str]]:
    """(from, to, label) of each finding of an incident: from its first tick to the tick
    it closed in (the recording's end while still open)."""
    return [(f["since"], f["closed"] or end, f"{f['check']} ({f['node']})")
            for f in inc["findings"]]


# --- the page's text ----------------------------------------------------------------


def _pair(rep: dict[str, Any]) -> str:
    rows = []
    for role, info in rep["nodes"].items():
        versions = "; ".join(f"{k.partition(' ')[2]} {', '.join(vs)}"
                             for k, vs in rep["versions_seen"].items()
                             if k.partition(" ")[0] == role)
        rows.append(f"<tr><th>{e(role)}</th><td>{e(info.get('name') or '?')}</td>"
                    f"<td>{e(info.get('host') or '?')}</td><td>{e(versions or '-')}</td></tr>")
    return ("<table class='pair'><tr><th>role</th><th>node</th><th>host</th>"
            "<th>servers</th></tr>" + "".join(rows) + "</table>")


def _numbers(nums: dict[str, Any]) -> str:
    """A finding's numbers, as its detail screen words them; those nobody could know
    left out (a NULL Seconds_Behind stays: it says something)."""
    shown = {k: v for k, v in nums.items() if v is not None or "seconds_behind" in k}
    if not shown:
        return ""
    cells = "".join(f"<tr><th>{e(label)}</th><td>{e(text)}</td></tr>"
                    for label, text in (number_words(k, v) for k, v in shown.items()))
    return f"<table class='numbers'>{cells}</table>"


def _finding(f: dict[str, Any], word: str, names: dict[str, str], *, whole: bool) -> str:
    """One finding of an incident: when, where, its title; ``whole``: also its numbers,
    likely cause and next step (the incidents drawn with charts)."""
    where = "the pair" if f["node"] == "pair" else f"{f['node']} {names.get(f['node'], '')}"
    closed = f"closed {tick_clock(f['closed'])}" if f["closed"] else "still open"
    parts = [f"<div class='finding sev-{e(f['severity'])}'>",
             f"<p class='head'><span class='word'>{e(word)}</span> "
             f"<span class='sev'>{e(f['severity'])}</span> "
             f"<span class='when'>{e(tick_clock(f['since']))} - {e(closed)}</span> "
             f"<span class='where'>{e(where.strip())}</span> "
             f"<span class='check'>{e(f['check'])}</span></p>",
             f"<p class='title'>{e(f['title'])}</p>"]
    if f.get("story"):  # its severity or words changed while open: how, and when
        parts.append(f"<p class='story'><b>Story:</b> {e(f['story'])}</p>")
    if not whole:
        return "".join(parts) + "</div>"
    parts.append(_numbers(f.get("numbers") or {}))
    if f.get("cause"):
        parts.append(f"<p class='cause'><b>Likely cause:</b> {e(f['cause'])}</p>")
    if f.get("next_step"):
        parts.append(f"<p class='next'><b>Next step:</b> {e(f['next_step'])}</p>")
    return "".join(parts) + "</div>"


def _incident(inc: dict[str, Any], names: dict[str, str], charts: list[int] | None) -> str:
    roots = {(r["check"], r["node"], r["key"]) for r in inc["roots"]}
    root_word = "roots" if len(roots) > 1 else "root"
    end = f"closed {tick_clock(inc['closed'])}" if inc["closed"] else "still open at the end"
    body = [f"<section class='incident' id='incident-{inc['id']}'>",
            f"<h3>Incident {inc['id']} <span class='sev sev-{e(inc['severity'])}'>"
            f"{e(inc['severity'])}</span> {e(inc['opened_time'])} - {e(end)}</h3>"]
    body += [_finding(f, root_word if (f["check"], f["node"], f["key"]) in roots
                      else "then", names, whole=charts is not None) for f in inc["findings"]]
    if charts is None:
        body.append("<p class='nochart'>Listed in short, without charts (see the note under "
                    "Incidents).</p>")
    elif not charts:
        body.append("<p class='nochart'>No chart: the recording holds no series these "
                    "checks are about in this span.</p>")
    body += [f"<div class='chart' id='chart-{i}'></div>" for i in charts or []]
    return "".join(body) + "</section>"


def _drift(incidents: list[dict[str, Any]]) -> str:
    """The settings config_drift found different (or alike where they must differ)."""
    seen: dict[str, dict[str, Any]] = {}
    for inc in incidents:
        for f in inc["findings"]:
            if f["check"] == DRIFT_CHECK:
                seen[f["key"]] = f
    if not seen:
        return ""
    rows = "".join(
        f"<tr><td>{e((f.get('numbers') or {}).get('setting', key))}</td>"
        f"<td>{e((f.get('numbers') or {}).get('primary', '?'))}</td>"
        f"<td>{e((f.get('numbers') or {}).get('replica', '?'))}</td>"
        f"<td class='sev-{e(f['severity'])}'>{e(f['severity'])}</td>"
        f"<td>{e(f.get('cause') or '')}</td></tr>" for key, f in sorted(seen.items()))
    return ("<h2>Settings that differ between the nodes</h2><table class='drift'>"
            "<tr><th>setting</th><th>primary</th><th>replica</th><th>severity</th>"
            f"<th>why it matters</th></tr>{rows}</table>")


def _damage(rep: dict[str, Any]) -> str:
    lines = []
    if rep["problems"]:
        lines.append(f"<p><b>Damaged recording:</b> the page shows the "
                     f"{plural(rep['ticks'], 'intact tick')}; what could not be read:</p>")
        lines.append("<ul>" + "".join(f"<li>{e(p)}</li>" for p in rep["problems"]) + "</ul>")
    if not rep["closed_cleanly"]:
        lines.append("<p>The recorder did not close the file cleanly (no end frame).</p>")
    if rep["gaps"]:
        lines.append(f"<p>{plural(len(rep['gaps']), 'gap')} in the ticks: "
                     + "; ".join(f"{e(g['from'])} to {e(g['to'])} ({g['gap_s']} s)"
                                 for g in rep["gaps"][:10])
                     + ("; ..." if len(rep["gaps"]) > 10 else "") + "</p>")
    return "<div class='damage'>" + "".join(lines) + "</div>" if lines else ""


# --- the page ---------------------------------------------------------------------


def _charted(incidents: list[dict[str, Any]]) -> set[int]:
    """Ids of the incidents drawn with charts: all, or the MAX_CHARTED worst."""
    rank = {"critical": 0, "warning": 1, "info": 2}
    best = sorted(incidents, key=lambda i: (rank.get(i["severity"], 3), i["opened"]))
    return {i["id"] for i in best[:MAX_CHARTED]}


Planned = tuple[Chart, float, float, list[tuple[float, float, str]]]
"""A chart to draw: what, from, to, the spans to shade."""


def render_html(rep: dict[str, Any]) -> str:
    """The page of a report made with ``report(rec, more=chart_point)``."""
    cols = Columns(with_gaps(rep.get("more") or [], rep["interval_s"]))
    first = cols.walls[0] if cols.walls else 0.0
    last = cols.walls[-1] if cols.walls else 0.0
    shift, zone = _zone_shift(first)
    names = {role: info.get("name") or "" for role, info in rep["nodes"].items()}
    planned: list[Planned] = []

    def plan(chart: Chart, t0: float, t1: float, spans: list[tuple[float, float, str]]
             ) -> int | None:
        """The chart's number on the page; None when it would have nothing to draw."""
        a, b = cols.span(t0, t1)
        if not cols.has_data([k for _, k in chart.series + chart.right], a, b):
            return None
        planned.append((chart, t0, t1, spans))
        return len(planned) - 1

    by_id = {c.id: c for c in CHARTS}
    overview = [i for cid in OVERVIEW if (i := plan(by_id[cid], first, last, [])) is not None]
    drawn = _charted(rep["incidents"])
    sections = []
    for inc in rep["incidents"]:
        ids: list[int] | None = None
        if inc["id"] in drawn:
            t0, t1 = inc["opened"] - MARGIN_S, (inc["closed"] or last) + MARGIN_S
            checks = {f["check"] for f in inc["findings"]}
            spans = _finding_spans(inc, last)
            ids = [i for c in charts_for(checks) if (i := plan(c, t0, t1, spans)) is not None]
        sections.append(_incident(inc, names, ids))
    points = min(POINTS, max(MIN_POINTS, PAGE_POINTS // max(1, len(planned))))
    charts = [_chart_data(c, cols, t0, t1, shift, spans, points)
              for c, t0, t1, spans in planned]
    left_out = len(rep["incidents"]) - len(drawn)
    return _page(rep, zone, charts, overview, sections, left_out)


def _header(rep: dict[str, Any]) -> str:
    made = (f"format v{rep['format_version']}, written by replmon {rep['replmon_version']}"
            + (", RECONSTRUCTED (not a live capture)" if rep["reconstructed"] else "")
            + (f"; {rep['lacks']}" if rep.get("lacks") else ""))
    return (f"<h1>replmon report: {e(rep['file'])}</h1>"
            f"<p class='span'>{e(rep['start'])} to {e(rep['end'])}: "
            f"{e(plural(rep['ticks'], 'tick'))} over {rep['duration_s']:.0f} s, every "
            f"{e(rep['interval_s'])} s; {e(made)}</p>"
            + (f"<p class='note'>note: {e(rep['note'])}</p>" if rep["note"] else ""))


def _script_json(data: Any) -> str:
    """JSON that cannot end its script tag early (``</`` escaped)."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def _page(rep: dict[str, Any], zone: str, charts: list[dict[str, Any]], overview: list[int],
          sections: list[str], left_out: int) -> str:
    incidents = rep["incidents"]
    head = (f"<h2>Incidents: {len(incidents)}</h2>" if incidents
            else "<h2>Incidents: none</h2><p>No check found anything in this recording.</p>")
    if left_out:
        head += (f"<p class='note'>{plural(left_out, 'incident')} listed in short: when, "
                 f"where and what, without numbers, cause, next step or charts (the page "
                 f"details the {MAX_CHARTED} worst, to stay small; <code>replmon report</code> "
                 f"in a terminal has them all).</p>")
    body = [_header(rep), "<h2>The pair</h2>", _pair(rep), _damage(rep),
            "<h2>The whole recording</h2>"
            f"<p class='axis'>Times in {e(zone)}, as the terminal views show them.</p>",
            *(f"<div class='chart' id='chart-{i}'></div>" for i in overview),
            head, *sections, _drift(incidents)]
    return PAGE.format(
        title=e(f"replmon report: {rep['file']}"), css=_asset("uPlot.min.css"),
        own_css=_asset("report.css"), uplot=_asset("uPlot.iife.min.js"),
        data=_script_json(charts),
        body="\n".join(body), script=_asset("report.js"))


def html_report(recording: Recording) -> str:
    """The page of a recording: the report's one pass, with the charts' points (from the
    summary frames where every chunk holds them: no tick decoded; else from every tick)."""
    return render_html(report(recording, more=chart_point, more_stored=stored_points))


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
<style>{own_css}</style>
</head><body>
{body}
<script type="application/json" id="replmon-charts">{data}</script>
<script>{uplot}</script>
<script>{script}</script>
</body></html>
"""
