"""A finding never rewrites its past (issue 54): it keeps its worst severity with the
title and numbers then and its story (each change of severity or words, bounded); a
stopped SQL thread started again closes as what it was, and the lag it left is its own
finding in the same incident, whatever reader says it (check text and JSON, report)."""

from __future__ import annotations

import json
from pathlib import Path

from replmon.checks.mysql_replication import CHECK as MYSQL_REPLICATION

from replmon.check import Check, Observation, Severity, Thresholds, Window
from replmon.engine import Engine, build_engine, configure
from replmon.model.findings import STORY_LAST, Finding, Step, add_step
from replmon.model.incidents import IncidentTracker, causality
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.tick import Tick
from replmon.output.nagios import CheckSummary, render_json, render_text
from replmon.output.report import render_text as report_text
from replmon.output.report import report
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.testing.synth import T0, node, tick
from replmon.units import tick_clock

STOP, START, HEAL, END = 5, 25, 35, 50
"""The SQL thread stops in tick STOP, is started again in START with 34 s of lag to
catch up, which is gone from HEAL; the run ends before END."""


def channel(seq: int) -> ReplicaChannel:
    base = ReplicaChannel(io_running="Yes", sql_running=True, seconds_behind=0,
                          source_host="db163", source_port=3306, source_server_id=1)
    if STOP <= seq < START:  # STOP SLAVE SQL_THREAD: no lag printed
        return base.model_copy(update={"sql_running": False, "seconds_behind": None})
    if START <= seq < HEAL:
        return base.model_copy(update={"seconds_behind": 34})
    return base


def ticks() -> list[Tick]:
    return [tick(seq, primary=node("primary", mysql=MysqlSample(flavour="mysql")),
                 replica=node("replica", mysql=MysqlSample(flavour="mysql",
                                                          replication=[channel(seq)])))
            for seq in range(END)]


def run(engine: Engine) -> tuple[list[Finding], IncidentTracker, CheckSummary]:
    """Every tick through ``engine``: the findings it closed, the incidents, the summary
    ``replmon check`` prints."""
    tracker = IncidentTracker(causality(engine.checks))
    summary = CheckSummary(causality(engine.checks))
    closed: list[Finding] = []
    for t in ticks():
        upd = engine.feed(t)
        closed += upd.closed
        tracker.update(t.wall, upd.open)
        summary.on_tick(t, upd)
    return closed, tracker, summary


def ours(fs: list[Finding]) -> dict[str, Finding]:
    return {f.key: f for f in fs if f.check == "mysql_replication"}


def test_a_stopped_thread_started_with_lag_closes_as_stopped_and_the_lag_is_its_own() -> None:
    closed, tracker, _ = run(Engine(configure([MYSQL_REPLICATION])))
    found = ours(closed)
    assert set(found) == {"default", "default/lag"}  # not one finding renamed
    stopped, lag = found["default"], found["default/lag"]
    assert (stopped.severity, stopped.worst) == (Severity.CRITICAL, Severity.CRITICAL)
    assert "SQL thread stopped" in stopped.title and "lag" not in stopped.title
    assert "SQL thread stopped" in stopped.worst_title
    assert stopped.worst_numbers["sql_running"] is False
    assert stopped.since_wall == T0 + STOP and stopped.worst_wall is not None
    assert [s.severity for s in stopped.story] == [Severity.CRITICAL]  # said one thing
    assert not stopped.told
    # it closed after the thread ran again; the lag opened before that, beside it
    assert stopped.closed_wall is not None and stopped.closed_wall > T0 + START
    assert (lag.severity, lag.worst) == (Severity.WARNING, Severity.WARNING)
    assert lag.title.startswith("replication lag 34 s") and lag.since_wall == T0 + START
    assert "SQL thread" not in lag.title
    # one incident, critical, its root the stopped thread, the lag under it
    (inc,) = [i for i in tracker.incidents
              if any(f.check == "mysql_replication" for f in i.findings.values())]
    assert inc.severity is Severity.CRITICAL
    assert (inc.root.check, inc.root.key) == ("mysql_replication", "default")
    assert [(f.check, f.key) for f in inc.consequences] == [("mysql_replication", "default/lag")]
    # one closing time: the headline says the one the list says
    assert f"closed {tick_clock(stopped.closed_wall)}" in stopped.headline
    assert "clear since" not in stopped.headline


def test_check_text_and_json_say_it_was_critical_and_stopped() -> None:
    _, _, summary = run(Engine(configure([MYSQL_REPLICATION])))
    result = summary.result(END)
    doc = json.loads(render_json(result))
    cleared = {f["key"]: f for f in doc["cleared"] if f["check"] == "mysql_replication"}
    assert cleared["default"]["worst"] == "critical"
    assert "SQL thread stopped" in cleared["default"]["title"]
    assert "SQL thread stopped" in cleared["default"]["worst_title"]
    assert cleared["default"]["story"][0]["severity"] == "critical"
    assert cleared["default/lag"]["worst"] == "warning"
    (inc,) = [i for i in doc["incidents"] if i["root"]["check"] == "mysql_replication"]
    assert inc["severity"] == "critical" and "SQL thread stopped" in inc["root"]["title"]
    text = render_text(result, table=False)
    line = next(x for x in text.splitlines() if "SQL thread stopped" in x)
    assert line.startswith("CRITICAL") and "closed" in line
    assert not any("SQL thread stopped" in x and "lag 34" in x for x in text.splitlines())


def test_the_report_says_the_stopped_thread_was_critical(tmp_path: Path) -> None:
    engine = build_engine(entry_points=False)
    path = tmp_path / "sql_stopped.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0, note="unit test"), rates="derive") as w:
        for t in ticks():
            w.write(t, engine.feed(t))
    rep = report(open_recording(path))
    events = [e for e in rep["findings_rerun"] if e["check"] == "mysql_replication"]
    assert [(e["event"], e["key"], e["worst"]) for e in events] == [
        ("opened", "default", "critical"), ("opened", "default/lag", "warning"),
        ("closed", "default", "critical"), ("closed", "default/lag", "warning")]
    assert "SQL thread stopped" in events[2]["title"]
    (inc,) = [i for i in rep["incidents"] if i["root"]["check"] == "mysql_replication"]
    assert inc["severity"] == "critical"
    assert [f["key"] for f in inc["findings"]][:2] == ["default", "default/lag"]
    text = report_text(rep)
    closing = next(x for x in text.splitlines() if "closed" in x and "SQL thread stopped" in x)
    assert "critical" in closing and "lag 34" not in closing
    assert any("root:" in x and "SQL thread stopped" in x for x in text.splitlines())
    assert any("then" in x and "replication lag 34 s" in x for x in text.splitlines())


# --- the story of one finding: an engine on a check whose words change -----------------

class Limits(Thresholds):
    open_after: float = 0.0
    open_min_samples: int = 1
    close_after: float = 2.0


SAYS: dict[int, tuple[Severity, str]] = {}
"""seq -> what the test check says in that tick (nothing: clear)."""


def says(w: Window, t: Limits) -> list[Observation]:
    said = SAYS.get(w.last.seq)
    if said is None:
        return []
    return [Observation(node="replica", severity=said[0], title=said[1],
                        numbers={"seq": w.last.seq})]


TOLD = Check(id="told", title="Told", needs=(), thresholds=Limits, evaluate=says)


def tell(script: dict[int, tuple[Severity, str]], n: int) -> Finding:
    SAYS.clear()
    SAYS.update(script)
    eng = Engine([(TOLD, Limits())])
    closed = [f for seq in range(n) for f in eng.feed(tick(seq)).closed]
    (f,) = closed
    return f


def test_the_story_keeps_each_change_of_severity_or_words_not_of_numbers() -> None:
    script = {i: (Severity.WARNING, f"lag {40 + i} s") for i in range(0, 5)}
    script |= {i: (Severity.CRITICAL, "SQL thread stopped") for i in range(5, 10)}
    script |= {i: (Severity.WARNING, f"lag {45 - i} s") for i in range(10, 15)}
    f = tell(script, 25)
    assert [(s.seq, s.severity, s.title) for s in f.story] == [
        (0, Severity.WARNING, "lag 40 s"), (5, Severity.CRITICAL, "SQL thread stopped"),
        (10, Severity.WARNING, "lag 35 s")]
    assert (f.severity, f.worst) == (Severity.WARNING, Severity.CRITICAL)
    assert (f.worst_title, f.worst_numbers, f.worst_wall) == (
        "SQL thread stopped", {"seq": 5}, T0 + 5)
    assert f.title == "lag 31 s"  # the newest numbers
    assert f.worst_words == f"worst critical at {tick_clock(T0 + 5)}: SQL thread stopped"
    assert f.story_text() == (
        f"WARN {tick_clock(T0)} lag 40 s → {tick_clock(T0 + 5)} SQL thread stopped "
        f"(critical) → {tick_clock(T0 + 10)} lag 35 s (warning) → closed "
        f"{tick_clock(f.closed_wall or 0)}")


def test_a_restless_finding_keeps_its_first_its_worst_and_its_last_changes() -> None:
    script = {0: (Severity.INFO, "calm"), 1: (Severity.CRITICAL, "worst")}
    script |= {i: (Severity.WARNING if i % 2 else Severity.INFO, f"state {i % 2}")
               for i in range(2, 40)}
    f = tell(script, 45)
    assert len(f.story) == STORY_LAST + 2
    assert [s.title for s in f.story[:2]] == ["calm", "worst"]
    assert [s.seq for s in f.story[2:]] == list(range(40 - STORY_LAST, 40))
    assert f.story_dropped == 40 - 2 - STORY_LAST
    assert f"({f.story_dropped} more)" in f.story_text()


def test_add_step_bounds_a_story_whose_first_step_is_its_worst() -> None:
    story: tuple[Step, ...] = ()
    dropped = 0
    for i in range(30):
        sev = Severity.CRITICAL if i == 0 else Severity(i % 2)
        story, d = add_step(story, Step(seq=i, wall=T0 + i, severity=sev, title=str(i)),
                            Severity.CRITICAL)
        dropped += d
    assert [s.seq for s in story] == [0, *range(30 - STORY_LAST, 30)]
    assert dropped == 30 - 1 - STORY_LAST


def test_findings_recorded_before_the_story_still_read() -> None:
    old = {"check": "mysql_replication", "key": "default", "node": "replica",
           "severity": 1, "title": "replication lag 34 s", "since_seq": 3,
           "since_wall": T0, "last_seq": 9, "worst": 2, "state": "closed",
           "closed_seq": 12, "closed_wall": T0 + 12}
    f = Finding.model_validate(old)
    assert f.story == () and not f.told and f.story_text() == ""
    assert f.worst_words == "worst critical"  # what it knew: the worst, not its words
    assert f.worst_headline == f.headline


def test_a_number_that_changes_its_unit_is_not_a_new_wording() -> None:
    """Seen in the MySQL lab demo's list at 80x24: pair_lag's story told the same lag
    twice because "931 KiB" became "1 MiB" (six lines for one warning that only grew)."""
    from replmon.model.findings import wording

    said = ("replica {} s behind the primary (measured on both nodes: {} transactions and "
            "{} of binlog) while Seconds_Behind_Master says NULL")
    assert wording(said.format(13, "4,040", "931 KiB")) == \
        wording(said.format(14, "4,639", "1 MiB"))
    assert wording("SQL thread stopped (last_sql_errno 0)") != \
        wording("replication lag 34 s (over 30 s)")
