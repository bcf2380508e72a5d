"""One tick, one time: for a shipped session of each kind, each finding today's checks open is
given the same clock time by every view that names it: the findings table's "since",
the finding's detail, the replay's status bar on the tick it names, the report's
timeline, ``check --replay`` (text and JSON) and the text rows of ``replay | less``.

All of them go through ``replmon.units.tick_clock`` (the tick's wall time in the local
zone, truncated to the second). The machine's zone is set to UTC+05:30 here: a view
that wrote UTC, or rounded where the others truncate, would show another time."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from settle import settle
from textual.widgets import DataTable, Static

from replmon.commands import check_replay
from replmon.engine import build_engine
from replmon.model.findings import Finding
from replmon.output.nagios import render_json
from replmon.output.nagios import render_text as check_text
from replmon.output.plain import finding_row
from replmon.output.report import render_text as report_text
from replmon.output.report import report
from replmon.session.recording import open_recording
from replmon.session.rerun import Rerun
from replmon.tui.findings_list import finding_key
from replmon.tui.replay import ReplayApp
from replmon.tui.screens import FindingScreen
from replmon.units import tick_clock

FOLDER = Path(__file__).parents[2] / "sample_sessions"
SESSIONS = sorted(p for p in FOLDER.glob("*.rmrec") if p.stem in {
    "replica_sql_stopped", "redis_link_down_full_resync", "drbd_peer_disconnected",
    "planned_switchover", "redis_writes_refused"})
"""One session of each kind of finding (MySQL replication and lag, the Redis link, DRBD,
a roles event, writes refused): every view names a finding through the same
tick_clock, whatever its check; the other sessions' findings (evictions, a growing lag,
swapping) cost the suite ~100 s under load for no view this does not already read.
the auto_increment session's own test is below."""
CLOCK = re.compile(r"\b\d\d:\d\d:\d\d\b")


@pytest.fixture(autouse=True)
def india(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """UTC+05:30 (a POSIX zone string: no tz database needed), over the TUI tests' UTC."""
    monkeypatch.setenv("TZ", "XST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def openings(path: Path) -> list[tuple[int, Finding]]:
    """(index of the tick it opened in, the finding) for the first opening of each
    finding today's checks open in the session."""
    out, seen = [], set()
    with open_recording(path) as rec:
        for index, upd in Rerun(rec, entry_points=False).indexed():
            for f in upd.opened:
                if f.ident not in seen:
                    seen.add(f.ident)
                    out.append((index, f))
    return out


def report_times(path: Path) -> dict[tuple[str, str, str], str]:
    """(check, node, title) -> the clock of its first "opened" line in the report's
    re-run timeline."""
    with open_recording(path) as rec:
        return times_in_report(report(rec))


def times_in_report(rep: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """``report_times`` of a report made already."""
    text = report_text(rep)
    rerun = text.split("findings re-run with today's checks:")[1].split("\npeaks:")[0]
    out: dict[tuple[str, str, str], str] = {}
    for line in rerun.splitlines():
        m = re.match(r"\s+\d{4}-\d\d-\d\d (\d\d:\d\d:\d\d) XST\s+opened\s+\w+\s+(\w+)\s+"
                     r"(\S+): (.*)$", line)
        if m:
            out.setdefault((m.group(3), m.group(2), m.group(4)), m.group(1))
    return out


def check_times(path: Path) -> tuple[dict[tuple[str, str, int], str],
                                      dict[tuple[str, str, int], float]]:
    """``check --replay``: (check, node, since_seq) -> the "since" of its text lines, and
    -> the since_wall of its JSON."""
    run = check_replay(str(path))
    text: dict[tuple[str, str, int], str] = {}
    for f in [*run.open, *run.cleared]:
        one = type(run)(open=[f], cleared=[], ticks=run.ticks, span_s=run.span_s,
                        nodes=run.nodes)
        m = re.search(r" since (\d\d:\d\d:\d\d) ", check_text(one, table=False))
        assert m is not None
        text[(f.check, f.node, f.since_seq)] = m.group(1)
    doc = json.loads(render_json(run))
    walls = {(d["check"], d["node"], d["since_seq"]): d["since_wall"]
             for d in [*doc["open"], *doc["cleared"]]}
    return text, walls




def since_in_table(app: ReplayApp, f: Finding) -> str:
    row = app.query_one("#findings", DataTable).get_row(finding_key(f))
    return str(row[1])


def status_bar_time(app: ReplayApp) -> str:
    m = CLOCK.search(str(app.query_one("#position", Static).render()))
    assert m is not None
    return m.group(0)


async def detail_time(app: ReplayApp, pilot: object, f: Finding) -> str:
    app.push_screen(FindingScreen(f))
    await settle(pilot)
    head = " ".join(str(s.render()) for s in app.screen.query(Static))
    app.pop_screen()
    await settle(pilot)
    m = re.search(r"since (\d\d:\d\d:\d\d) \((?:open from )?tick #(\d+)", head)
    opened = f.story[0].seq if f.story else f.since_seq  # a tick that shows it open
    assert m is not None and int(m.group(2)) == opened + 1, head  # #1: the first tick
    return m.group(1)


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem for p in SESSIONS])
async def test_every_view_gives_a_finding_the_same_time(path: Path) -> None:
    found = openings(path)
    assert found, path.stem
    in_report = report_times(path)
    check_text_since, check_json_wall = check_times(path)
    rec = open_recording(path)
    # the recording's own [checks.*] settings, as `replmon replay` and the re-runs use
    app = ReplayApp(rec, lambda: build_engine(rec.meta.checks, entry_points=False))
    bad = []
    async with app.run_test(size=(160, 50)) as pilot:
        for index, f in found:
            want = tick_clock(f.since_wall)
            views: dict[str, str] = {"report": in_report[(f.check, f.node, f.headline)]}
            ident = (f.check, f.node, f.since_seq)
            if ident in check_text_since:
                views["check --replay"] = check_text_since[ident]
                views["check --replay json"] = tick_clock(check_json_wall[ident])
            tick = rec.tick_at(index)
            views["text rows"] = finding_row(tick, f, "open").split("!")[0]
            app._goto(index)  # where it opened: the table and the detail name it
            await settle(pilot)
            shown = next((g for g in app.findings if g.ident == f.ident), None)
            assert shown is not None, f"{f.check} not shown at tick {index}"
            assert shown.since_wall == f.since_wall  # the same tick as the re-run's
            views["findings table"] = since_in_table(app, shown)
            views["finding detail"] = await detail_time(app, pilot, shown)
            app._goto(rec.seek(f.since_wall))  # the tick it names: the status bar's time
            await settle(pilot)
            views["status bar"] = status_bar_time(app)
            if set(views.values()) != {want}:
                bad.append(f"{f.check} {f.node} since tick {f.since_seq} ({want}): {views}")
    rec.close()
    assert bad == []


async def test_auto_increment_in_one_look() -> None:
    """The issue's session: config_drift holds from tick 0 (18:06:19.24 UTC), opens at
    tick 1; stmt_vs_rows holds from tick 1, opens at tick 3. Every view says 23:36:19
    and 23:36:20 here (UTC+05:30): the ticks the conditions began."""
    path = FOLDER / "auto_increment_updates_miss.rmrec"
    found = {f.check: (index, f) for index, f in openings(path)}
    assert {c: (i, f.since_seq, tick_clock(f.since_wall)) for c, (i, f) in found.items()} == {
        "config_drift": (1, 0, "23:36:19"), "stmt_vs_rows": (3, 1, "23:36:20")}
    with open_recording(path) as rec:
        rep = report(rec)  # (one report read for both: a re-run of the session each)
    assert sorted(times_in_report(rep).values()) == ["23:36:19", "23:36:20"]
    assert rep["start"] == "2026-12-03 23:36:19 XST"  # tick 0, as the bar
