"""``replmon report --html``: the page of every shipped session, of the pinned fixture
recordings, of a damaged file and of a hostile note, opened in a real headless
Chromium (one browser for all pages): no console error and no uncaught exception, each
chart drawn and not blank in the screenshot, each incident's text on the page; the
page self-contained (nothing to fetch), escaped, without a password."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Any

import pytest
from cdp import Shot, blank_charts, html_in_chromium

from replmon.cli import main
from replmon.output.html_report import render_html
from replmon.output.html_series import SERIES_KEYS, Columns, chart_point, fit, with_gaps
from replmon.output.report import report
from replmon.session import RecordingWriter, open_recording

pytestmark = pytest.mark.xdist_group("html_report")
"""One worker makes the pages and runs the browser, once (module fixtures)."""

ROOT = Path(__file__).resolve().parents[3]
SESSIONS = sorted((ROOT / "sample_sessions").glob("*.rmrec"))
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "recordings").glob("*.rmrec"))
ASSETS = ROOT / "replmon" / "output" / "html_assets"
HOSTILE = "</script><script>console.error('escaped badly')</script><b>&amp;"
LAB_SECRET = re.compile(r"\b(mon|repl|red|app)-[0-9a-f]{12}\b")
"""The lab's passwords (replmon/lab/pair.py): none may reach a recording, so none a page."""


def _damaged(tmp: Path) -> Path:
    """replica_sql_stopped with 64 bytes overwritten in its middle (a chunk lost)."""
    data = bytearray((ROOT / "sample_sessions" / "replica_sql_stopped.rmrec").read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = b"\xff" * 64
    path = tmp / "damaged.rmrec"
    path.write_bytes(bytes(data))
    return path


def _hostile(tmp: Path) -> Path:
    """seed000's ticks under a note that tries to end the page's script."""
    src = ROOT / "sample_sessions" / "drbd_peer_disconnected.rmrec"
    path = tmp / "hostile.rmrec"
    with open_recording(src) as rec, \
            RecordingWriter(path, rec.meta.model_copy(update={"note": HOSTILE})) as w:
        for t in rec.ticks():
            w.write(t)
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """name -> (report, its page's file) for every recording the test opens."""
    tmp = tmp_path_factory.mktemp("html")
    out: dict[str, tuple[dict[str, Any], Path]] = {}
    t0 = time.perf_counter()
    for path in [*SESSIONS, *FIXTURES, _damaged(tmp), _hostile(tmp)]:
        with open_recording(path) as rec:
            rep = report(rec, more=chart_point)
        page = tmp / f"{path.stem}.html"
        page.write_text(render_html(rep), encoding="utf-8")
        out[path.stem] = (rep, page)
    print(f"pages: {len(out)} in {time.perf_counter() - t0:.1f} s")
    return out


@pytest.fixture(scope="module")
def shots(pages: dict[str, tuple[dict[str, Any], Path]]) -> dict[str, Shot]:
    t0 = time.perf_counter()
    got = dict(zip(pages, html_in_chromium([page for _, page in pages.values()]), strict=True))
    print(f"chromium: {len(got)} pages in {time.perf_counter() - t0:.1f} s")
    return got


def test_every_page_opens_in_chromium_without_error_with_charts_drawn(
        pages: dict[str, tuple[dict[str, Any], Path]], shots: dict[str, Shot]) -> None:
    assert len(SESSIONS) >= 9
    for name, shot in shots.items():
        rep = pages[name][0]
        assert shot.errors == [], f"{name}: {shot.errors}"
        assert shot.drawn == len(shot.boxes) == len(shot.charts) > 0, name
        assert blank_charts(shot) == [], f"{name}: charts blank in the screenshot"
        for inc in rep["incidents"]:
            for f in inc["findings"]:
                assert f["title"] in shot.text, f"{name}: incident {inc['id']}: {f['title']}"
                if f["next_step"]:
                    assert f["next_step"] in shot.text, name
        assert rep["nodes"]["primary"]["name"] in shot.text


def test_each_incident_has_the_charts_that_tell_it(pages: dict[str, tuple[dict[str, Any], Path]],
                                                  shots: dict[str, Shot]) -> None:
    """Sessions whose fault a chart shows get that chart, with the finding's span."""
    expect = {"replica_lag_growing": "Replication lag", "drbd_peer_disconnected": "DRBD",
              "redis_link_down_full_resync": "Redis replication offsets",
              "redis_swapping_past_ceiling": "Swap", "replica_sql_stopped": "Replication lag",
              "auto_increment_updates_miss": "UPDATE statements against rows",
              "redis_maxmemory_evictions": "Redis memory: used against maxmemory",
              "redis_writes_refused": "Errors clients got"}
    for name, title in expect.items():
        text = shots[name].text
        at = text.index("Incident ")
        assert title in text[at:], f"{name}: no '{title}' chart under its incidents"
        assert "shaded: the findings' spans" in text[at:], name


def test_damaged_recording_shows_what_is_intact_and_says_what_is_not(
        pages: dict[str, tuple[dict[str, Any], Path]], shots: dict[str, Shot]) -> None:
    rep = pages["damaged"][0]
    assert rep["problems"] and 0 < rep["ticks"] < 150
    text = shots["damaged"].text
    assert f"Damaged recording: the page shows the {rep['ticks']} intact ticks" in text
    assert rep["problems"][0] in text


def test_page_is_self_contained_escaped_and_has_no_password(
        pages: dict[str, tuple[dict[str, Any], Path]], shots: dict[str, Shot]) -> None:
    for name, (rep, page) in pages.items():
        html = page.read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html), name
        assert "@import" not in html and "url(http" not in html, name
        assert not LAB_SECRET.search(html), name
        assert "password" not in str(rep["nodes"]).lower(), name
        assert html.count("<script") == 3, name  # data, uPlot, the page's own
        for word in ("True", "False", "None"):
            assert not re.search(rf"\b{word}\b", shots[name].text), (name, word)
    hostile = pages["hostile"][1].read_text(encoding="utf-8")
    assert HOSTILE not in hostile and "&lt;/script&gt;&lt;script&gt;" in hostile
    assert f"note: {HOSTILE}" in shots["hostile"].text  # shown as text, not run


def test_vendored_uplot_is_the_one_its_readme_names() -> None:
    readme = (ASSETS / "README.md").read_text()
    for name in ("uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE"):
        digest = hashlib.sha256((ASSETS / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in readme, name


def test_cli_writes_the_page_to_o(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``report --html -o OUT`` (in this process: the command's own code, without an
    interpreter's start)."""
    out = tmp_path / "incident.html"
    src = ROOT / "sample_sessions" / "redis_swapping_past_ceiling.rmrec"
    assert main(["report", "--html", "-o", str(out), str(src)]) == 0
    said = capsys.readouterr()
    assert said.out == "" and said.err.startswith(f"replmon: wrote {out} (")
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_long_span_keeps_each_buckets_lowest_and_highest_and_gaps_break_lines() -> None:
    """fit: 10,000 ticks into 600 points, a one-tick spike and dip kept; with_gaps: a row
    of no values after a tick the next follows by more than two intervals."""
    keys = len(SERIES_KEYS)
    points = [(1000.0 + i, (5.0,) * keys) for i in range(10_000)]
    points[4321] = (points[4321][0], (900.0,) * keys)
    points[7000] = (points[7000][0], (-3.0,) * keys)
    cols = Columns(points)
    xs, ys, bucket = fit(cols, [SERIES_KEYS[0]], 0, len(points), 600)
    assert len(xs) == 600 and bucket == pytest.approx(9999 / 300)
    assert max(v for v in ys[0] if v is not None) == 900.0
    assert min(v for v in ys[0] if v is not None) == -3.0
    gapped = with_gaps([(0.0, (1.0,) * keys), (1.0, (1.0,) * keys), (60.0, (1.0,) * keys)], 1.0)
    assert [w for w, _ in gapped] == [0.0, 1.0, 2.0, 60.0]
    assert set(gapped[2][1]) == {None}
