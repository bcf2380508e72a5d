"""Issue #54 on the HTML page: series lying on each other both drawn (the later dashed,
its legend says so), no hover-only "--" placeholder on a static page, a percent axis
spanning at least 10 points, a finding's numbers in words with units; and (item 1) a
finding's worst severity and its story's steps on the page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cdp import html_in_chromium

from replmon.output.html_report import PCT_SPAN, number_words, render_html
from replmon.output.html_series import chart_point
from replmon.output.report import report
from replmon.session import open_recording

pytestmark = pytest.mark.xdist_group("html_report")

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("replica_sql_stopped", "redis_writes_refused", "redis_swapping_past_ceiling")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], str]]:
    out = {}
    for name in NAMES:
        with open_recording(ROOT / "sample_sessions" / f"{name}.rmrec") as rec:
            rep = report(rec, more=chart_point)
        out[name] = (rep, render_html(rep))
    return out


def _charts(page: str) -> list[dict[str, Any]]:
    got = re.search(r'id="replmon-charts">(.*?)</script>', page, re.S)
    assert got
    return list(json.loads(got.group(1).replace("<\\/", "</")))


def test_numbers_read_as_words_with_units(pages: dict[str, tuple[dict[str, Any], str]]
                                          ) -> None:
    assert number_words("statements_per_s", 356.438) == ("statements", "356/s")
    assert number_words("sql_delay_s", 0) == ("sql delay", "0 s")
    assert number_words("seconds_behind_s", None) == ("seconds behind", "NULL")
    page = pages["replica_sql_stopped"][1]
    assert "<th>sql delay</th><td>0 s</td>" in page and "sql_delay_s" not in page


def test_percent_axes_span_10_points_and_coinciding_series_say_so(
        pages: dict[str, tuple[dict[str, Any], str]]) -> None:
    charts = _charts(pages["redis_writes_refused"][1])
    memory = next(c for c in charts if c["title"] == "Memory available")
    values = [v for s in memory["series"] for v in s["y"] if v is not None]
    assert max(values) - min(values) < PCT_SPAN  # the lab's host: 81-91 % all along
    lo, hi = memory["y_least"]
    assert hi - lo >= PCT_SPAN and lo >= 0 and hi <= 100
    # both nodes on one host: the replica's line lies on the primary's
    assert [s["same_as"] for s in memory["series"]] == ["", "primary"]


def test_static_legends_show_the_last_values_not_placeholders(
        pages: dict[str, tuple[dict[str, Any], str]], tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(pages["redis_writes_refused"][1], encoding="utf-8")
    shot, = html_in_chromium([path])
    assert shot.errors == []
    assert "--" not in shot.text  # uPlot's "Time --" and "-" until hovered
    assert re.search(r"Time\d\d:\d\d:\d\d", shot.text)  # the last point's, as the axis
    assert re.search(r"replica \(drawn over primary: dashed\)\d+\.\d %", shot.text)


def test_a_findings_worst_and_its_story_are_on_the_page(
        pages: dict[str, tuple[dict[str, Any], str]]) -> None:
    rep, page = pages["replica_sql_stopped"]
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    root = rep["incidents"][0]["findings"][0]
    assert root["check"] == "mysql_replication" and root["severity"] == "critical"
    assert re.search(r"ROOT\s+critical\s+\S+ - still open", text.replace("root", "ROOT"))
    told = 0
    for name, (rep, page) in pages.items():
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
        for inc in rep["incidents"]:
            for f in inc["findings"]:
                if not f.get("story"):
                    continue
                told += 1
                # its worst severity beside its check, then its story, each step in order
                assert f"{f['severity']} " in text and f["check"] in text, name
                story = text[text.index("Story:"):]
                at = 0
                for step in f["story"].split(" → "):
                    step = " ".join(step.split())
                    at = story.index(step, at)
                # a story that begins milder than its worst: the worst leads the finding
                first = f["story"].split(" ", 1)[0]
                assert f"sev'>{f['severity']}<" in page.replace('"', "'"), name
                assert first in ("INFO", "WARN", "CRIT")
    assert told >= 2
