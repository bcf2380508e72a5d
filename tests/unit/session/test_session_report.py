"""replmon report: span, versions, findings timeline, peaks, gaps; CSV export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from test_session_roundtrip import _mysql_down

from replmon.engine import build_engine
from replmon.model.tick import Tick
from replmon.output.report import export_csv, metric, render_text, report
from replmon.session import RecordingWriter, meta_for, open_recording


def recording(tmp_path: Path, ticks_200: list[Tick]) -> Path:
    # 60 ticks; replica MySQL down for ticks 10..29; ticks 40..44 missing (a 6 s gap).
    ticks = ticks_200[:10] + [_mysql_down(t) for t in ticks_200[10:30]] + ticks_200[30:40] \
        + ticks_200[45:65]
    engine = build_engine(entry_points=False)
    path = tmp_path / "s.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0, note="unit test")) as w:
        for t in ticks:
            w.write(t, engine.feed(t))
    return path


def test_report_holds_span_versions_findings_peaks_gaps(tmp_path: Path,
                                                        ticks_200: list[Tick]) -> None:
    rep = report(open_recording(recording(tmp_path, ticks_200)))
    json.dumps(rep)  # JSON-ready
    assert rep["ticks"] == 60 and rep["closed_cleanly"] and rep["problems"] == []
    assert rep["duration_s"] == round(ticks_200[64].wall - ticks_200[0].wall, 3)
    assert rep["versions_seen"]["primary drbd"] == ["8.4.4"]
    assert rep["versions_seen"]["replica mysql"][0].startswith("10.11")
    rec_events = [(e["event"], e["node"], e["check"]) for e in rep["findings_recorded"]]
    assert ("opened", "replica", "source_health") in rec_events
    assert ("closed", "replica", "source_health") in rec_events
    assert [e["title"] for e in rep["findings_rerun"]] == \
        [e["title"] for e in rep["findings_recorded"]]
    qps = max(t.primary.rates.mysql.qps or 0 for t in ticks_200[:65])
    assert rep["peaks"]["primary mysql qps"]["value"] == qps
    idle = min(t.replica.rates.host.cpu_idle_pct for t in ticks_200[1:65]
               if t.replica.rates.host.cpu_idle_pct is not None)
    assert rep["peaks"]["replica cpu idle % (lowest)"]["value"] == idle
    assert len(rep["gaps"]) == 1 and rep["gaps"][0]["after_seq"] == 39
    assert rep["gaps"][0]["gap_s"] > 5
    text = render_text(rep)
    assert "note: unit test" in text and "source_health" in text and "gaps: 1" in text


def test_csv_export_of_dotted_paths(tmp_path: Path, ticks_200: list[Tick]) -> None:
    rec = open_recording(recording(tmp_path, ticks_200))
    out = io.StringIO()
    paths = ["primary.rates.mysql.qps", "replica.rates.host.disks.vda.util_pct",
             "replica.mysql.counters.Questions", "primary.no.such.thing"]
    assert export_csv(rec.ticks(), paths, out) == 60
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["seq", "wall", "time", *paths]
    assert rows[1][3] == "" and float(rows[5][3]) == ticks_200[4].primary.rates.mysql.qps
    assert rows[5][5] == str(ticks_200[4].replica.mysql.counters["Questions"])
    assert rows[15][5] == ""  # replica MySQL down: no counter
    assert all(r[6] == "" for r in rows[1:])
    assert metric(ticks_200[3], "replica.rates.host.disks.vda.util_pct") is not None
