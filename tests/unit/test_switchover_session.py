"""The shipped switchover (sample_sessions/planned_switchover.rmrec, #40 item 7): the lab's
MariaDB 10.11 + Redis 7.0 pair under a write load, switched over (MySQL and Redis) 30 s
in and back 60 s later. Each change is one info event naming the new primary, at the
tick the recorded roles say it happened, the same in `replmon check --replay`,
`replmon report`, `replmon replay`'s text rows and the live engine's own record; and
nothing above info opens in the whole session: a healthy pair after a switchover is
quiet apart from the event."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

from replmon.commands import check_replay
from replmon.model.findings import Severity
from replmon.output.nagios import Status
from replmon.output.report import report
from replmon.session.recording import open_recording
from replmon.units import tick_clock

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "sample_sessions" / "planned_switchover.rmrec"
WHO = {"lab-replica": "lab-primary", "lab-primary": "lab-replica"}
"""New primary -> the node that replicates from it."""


@cache
def changes() -> tuple[tuple[int, float, str], ...]:
    """(seq, wall, new primary) of each tick in which the recorded roles changed hands."""
    out = []
    with open_recording(SESSION) as rec:
        for t in rec.ticks():
            r = t.roles
            if r is not None and r.since == t.wall:
                assert t.primary.name == r.primary and r.previous == WHO[r.primary]
                assert {lr.layer: lr.primary for lr in r.layers if lr.state == "direction"} \
                    == {"mysql": r.primary, "redis": r.primary}, r
                out.append((t.seq, t.wall, r.primary))
    return tuple(out)


def clock(wall: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(math.floor(wall)))


def title(wall: float, primary: str) -> str:
    return (f"{primary} is now the primary (MySQL since {clock(wall)}, Redis since "
            f"{clock(wall)}); {WHO[primary]} replicates from it")


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replmon", *argv], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "TZ": "UTC", "NO_COLOR": "1"})


def test_the_session_switches_over_and_back() -> None:
    """Switched over after tick 29 and back after tick 89 (sessions.py: healthy_ticks
    30, undo_after 60), the primary's name in the tick following the servers."""
    assert [(seq, p) for seq, _, p in changes()] == [(30, "lab-replica"), (90, "lab-primary")]
    with open_recording(SESSION) as rec:
        assert 120 <= len(rec) <= 600 and rec.end is not None and rec.problems == []
        names = [t.primary.name for t in rec.ticks()]
    assert names == ["lab-primary"] * 30 + ["lab-replica"] * 60 \
        + ["lab-primary"] * (len(names) - 90)


def test_check_replay_gives_each_change_its_event_and_nothing_else(monkeypatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        run = check_replay(str(SESSION))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert run.status is Status.OK and run.unknown is None
    found = sorted([*run.open, *run.cleared], key=lambda f: f.since_seq)
    assert [f.worst for f in found] == [Severity.INFO] * len(found), [f.title for f in found]
    events = [f for f in found if f.check == "roles"]
    assert [(f.since_seq, f.since_wall, f.key, f.node, f.title) for f in events] == \
        [(seq, wall, p, "pair", title(wall, p)) for seq, wall, p in changes()]
    # the switchover's event closed when the switch back's opened; the latter is open
    (over, back) = events
    assert over.state == "closed" and over.closed_seq == back.since_seq
    assert [f.title for f in run.open] == [back.title]


def test_report_gives_the_same_events_at_the_same_ticks_as_the_live_engine() -> None:
    with open_recording(SESSION) as rec:
        rep = report(rec)
    rerun, live = rep["findings_rerun"], rep["findings_recorded"]
    assert {e["severity"] for e in rerun} == {"info"}, rerun
    opened = [(e["since_seq"], e["since"], e["at"], e["key"], e["title"])
              for e in rerun if e["check"] == "roles" and e["event"] == "opened"]
    # opened in the tick of the change itself (open_after 0), under its time
    assert opened == [(seq, wall, wall, p, title(wall, p)) for seq, wall, p in changes()]
    (closed,) = [e for e in rerun if e["event"] == "closed" and e["check"] == "roles"]
    assert closed["key"] == "lab-replica" and closed["at"] == changes()[1][1]
    # the live engine, recorded with each tick, saw the same at the same ticks
    assert live is not None
    fields = ("event", "check", "key", "severity", "title", "since_seq", "at")

    def same(e: dict[str, Any]) -> list[object]:
        # a closed title today ends "(as of 13:08:02, closed 13:08:03)": the session
        # was recorded before findings kept when their numbers were measured
        return [re.sub(r" \(as of [^)]*\)$", "", e[k]) if k == "title" else e[k]
                for k in fields]

    assert [same(e) for e in live] == [same(e) for e in rerun]
    # its numbers are of the tick before the switch back, and it closed in the switch's
    # tick (its closed_wall: the one closing time every view gives): the title says so
    assert re.search(rf"\(as of \d\d:\d\d:\d\d, closed {tick_clock(changes()[1][1])}\)$",
                     closed["title"]), closed["title"]


def test_the_commands_print_the_event_at_its_time() -> None:
    """`check --replay`, `report` and `replay` (text rows, no terminal) as a user runs
    them: each change's title under the same clock."""
    check = cli("check", "--replay", str(SESSION))
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("REPLMON OK - ")
    assert "critical=0 warning=0 info=1 " in check.stdout.splitlines()[0]
    rep = cli("report", str(SESSION))
    assert rep.returncode == 0, rep.stderr
    replay = cli("replay", str(SESSION))
    assert replay.returncode == 0, replay.stderr
    for _, wall, primary in changes():
        said = f"roles: {title(wall, primary)}"
        assert f"INFO since {clock(wall)} pair {said}" in check.stdout, check.stdout
        assert f"{time.strftime('%Y-%m-%d', time.gmtime(wall))} {clock(wall)} UTC  opened " \
               f"info     pair    {said}" in rep.stdout, rep.stdout
        rows = [ln for ln in replay.stdout.splitlines() if title(wall, primary) in ln]
        assert rows and clock(wall) in rows[0], replay.stdout[-3000:]
        # the tick's rows name the node in each role as it is now
        assert re.search(rf"^{clock(wall)}[ *] P {primary}\s", replay.stdout, re.M)
        assert re.search(rf"^{clock(wall)}[ *] R {WHO[primary]}\s", replay.stdout, re.M)


def test_the_same_events_and_nothing_else_at_0_2_s_and_5_s() -> None:
    """Re-sampled as tests/unit/test_intervals.py does (#18): the two events open in the
    same seconds at any interval, and still nothing else opens."""
    from replmon.engine import build_engine
    from replmon.testing.real_ticks import resample

    with open_recording(SESSION) as rec:
        ticks = list(rec.ticks())
    want = [("roles", p, round(wall, 3)) for _, wall, p in changes()]
    for interval in (0.2, 5.0):
        eng = build_engine(entry_points=False)
        got = [(f.check, f.key, round(f.since_wall, 3)) for t in resample(ticks, interval)
               for f in eng.feed(t).opened]
        assert got == want, interval
