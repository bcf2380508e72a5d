"""``replmon report --html`` from the recorder's summary frames (each chart series' value at
each tick, rounded as the page shows them) gives the page that decoding every tick gives,
byte for byte, its chart data (the JSON in ``<script id="replmon-charts">``) included:
on every shipped session recorded as a live session is (30-tick chunks), on a longer
recording whose charts are fitted (each point a bucket's lowest and highest) and that
has a gap, on a cut, and on files whose summary frames are damaged, absent
(``rates="derive"``), or hold the values of other series (an older replmon's, or series
changed since): those are charted by decoding their ticks, as before summary frames held the
values."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessiondata import by_sample, flapping_ticks, of_sample, record_live
from test_report_facts import damage_second_facts

import replmon.output.html_report as html_mod
import replmon.output.html_series as series_mod
import replmon.output.report as report_mod
import replmon.session.series as series
from replmon.output.html_report import html_report
from replmon.output.html_series import chart_point, stored_points
from replmon.output.report import stored_facts
from replmon.session import open_recording
from replmon.session.cut import cut

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.rmrec"))
CHARTS = re.compile(r'<script type="application/json" id="replmon-charts">(.*?)</script>',
                    re.S)


def charts(page: str) -> list[dict[str, Any]]:
    m = CHARTS.search(page)
    assert m is not None
    data: list[dict[str, Any]] = json.loads(m.group(1).replace("<\\/", "</"))
    return data


def pages(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, int]:
    """The page as ``report --html`` makes it, the page from decoding every tick, and how
    many ticks the first decoded for its charts (``chart_point`` calls: this process
    decodes a file this short)."""
    calls = 0

    def counted(e: Any) -> Any:
        nonlocal calls
        calls += 1
        return chart_point(e)

    with monkeypatch.context() as mp:
        mp.setattr(html_mod, "chart_point", counted)
        with open_recording(path) as rec:
            fast = html_report(rec)
    with monkeypatch.context() as mp:
        mp.setattr(report_mod, "stored_facts", lambda *_: None)
        with open_recording(path) as rec:
            slow = html_report(rec)
    return fast, slow, calls


LiveCopy = Callable[[Path], tuple[Path, int]]
"""conftest's ``live_copy``: a shipped session recorded as a live session is, made once
for this module's tests of it and test_report_facts' (their ``of_sample`` group)."""


@pytest.mark.parametrize("sample", by_sample(SAMPLES))
def test_the_page_from_the_frames_is_the_decoded_one(sample: Path, live_copy: LiveCopy,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path, count = live_copy(sample)
    with open_recording(path) as rec:
        assert stored_facts(rec, stored_points) is not None  # every chunk has the values
    fast, slow, decoded = pages(path, monkeypatch)
    assert decoded == 0  # no tick decoded for the charts
    got, want = charts(fast), charts(slow)
    assert got == want and got  # the chart data, equal and not empty
    assert sum(v is not None for c in got for s in c["series"] for v in s["y"]) > count
    assert fast == slow  # and the whole page


def test_fitted_charts_and_a_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """390 ticks of a flapping DRBD peer with 30 lost ticks, charted in 150 points (the
    page's 600 need 1,200 ticks to be fitted, four times this test's time): the
    whole-recording charts have more ticks than points (the fitting's buckets); the gap
    breaks the lines."""
    monkeypatch.setattr(html_mod, "POINTS", 150)
    ticks = flapping_ticks()
    ticks = ticks[:200] + ticks[230:420]
    path = record_live(tmp_path / "long.rmrec", ticks)
    fast, slow, decoded = pages(path, monkeypatch)
    got = charts(fast)
    assert decoded == 0 and got == charts(slow) and fast == slow
    assert any(c["note"].startswith("each point the lowest and highest") for c in got)


@of_sample(SAMPLES[0].stem)
def test_a_cut_keeps_the_values(tmp_path: Path, live_copy: LiveCopy,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``replmon cut`` writes through RecordingWriter: the cut's summary frames hold the values
    of its ticks (rates as read in the whole file)."""
    path, count = live_copy(SAMPLES[0])
    with open_recording(path) as rec:
        done = cut(rec, count // 2, count - 1, tmp_path / "cut.rmrec")
    with open_recording(done.path) as rec:
        assert stored_facts(rec, stored_points) is not None
    fast, slow, decoded = pages(done.path, monkeypatch)
    assert decoded == 0 and charts(fast) and fast == slow




@of_sample("redis_link_down_full_resync")
def test_a_damaged_facts_frame_decodes_the_ticks(tmp_path: Path, live_copy: LiveCopy,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    sample = ROOT / "sample_sessions" / "redis_link_down_full_resync.rmrec"
    path, count = live_copy(sample)
    bad = damage_second_facts(path, tmp_path / "bad.rmrec")
    fast, slow, decoded = pages(bad, monkeypatch)
    assert decoded == count  # charted by decoding, as before
    assert charts(fast) and fast == slow
    assert "Damaged recording" in fast and "no tick lost" in fast  # said on the page


def test_without_facts_frames_the_ticks_are_decoded(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer told the rates are derivable writes no summary frame; a format 1 file was
    written before summary frames (or any summary frame)."""
    sample = ROOT / "sample_sessions" / "redis_swapping_past_ceiling.rmrec"
    with open_recording(sample) as rec:
        ticks = list(rec.ticks())
    path, count = record_live(tmp_path / "derive.rmrec", ticks, rates="derive"), len(ticks)
    old = ROOT / "tests" / "fixtures" / "recordings" / "format1_replica_sql_stopped.rmrec"
    for file, n in ((path, count), (old, 150)):
        fast, slow, decoded = pages(file, monkeypatch)
        assert decoded == n and charts(fast) and fast == slow


@of_sample("replica_lag_growing")
def test_values_of_other_series_are_not_taken(live_copy: LiveCopy,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """summary frames whose values are of another SERIES_ID (an older replmon's, or series
    changed since) are passed over: the ticks are decoded."""
    sample = ROOT / "sample_sessions" / "replica_lag_growing.rmrec"
    path, count = live_copy(sample)
    with monkeypatch.context() as mp:
        mp.setattr(series_mod, "SERIES_ID", series_mod.SERIES_ID + "-other")
        fast, slow, decoded = pages(path, monkeypatch)
    assert decoded == count and charts(fast) and fast == slow


def _code(source: str) -> str:
    """The module's code without its docstrings (nor, through the AST, its comments)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [s for s in body if not (isinstance(s, ast.Expr)
                                                 and isinstance(s.value, ast.Constant)
                                                 and isinstance(s.value.value, str))] \
                or [ast.Pass()]
    return ast.dump(tree)


PINNED = ("2", "085453886a4266af")
"""(SERIES_ID, digest of series.py's code) the recorded values are of."""


def test_series_code_is_pinned_to_its_id() -> None:
    """Recordings keep the values these getters took: a change to what a series takes
    from a tick must bump SERIES_ID, or old recordings would chart other values than
    their ticks give. Changed series.py? Bump SERIES_ID, then put both here."""
    source = Path(series.__file__).read_text(encoding="utf-8")
    digest = hashlib.sha256(_code(source).encode()).hexdigest()[:16]
    assert (series.SERIES_ID, digest) == PINNED, (
        "replmon/session/series.py changed: bump SERIES_ID if what a series takes from a "
        "tick changed, then pin the new pair here")
