"""`replmon check` output: plugin status line, exit codes, text and JSON."""

from __future__ import annotations

import json
import time

from replmon.model.findings import Finding, Severity
from replmon.output.nagios import CheckRun, Status, render_json, render_text, status_line

NODES = {"primary": "db163", "replica": "db162"}


def finding(sev: Severity, title: str, node: str = "replica", check: str = "x") -> Finding:
    return Finding(check=check, node=node, severity=sev, title=title,  # type: ignore[arg-type]
                   cause="because", next_step="do this", since_seq=3,
                   since_wall=1_700_000_003.0, last_seq=9, worst=sev)


def run(*open_: Finding, unknown: str | None = None) -> CheckRun:
    return CheckRun(open=list(open_), cleared=[], ticks=11, span_s=10.0, nodes=NODES,
                    unknown=unknown)


def test_ok_when_nothing_or_only_info_is_open() -> None:
    assert run().status is Status.OK
    r = run(finding(Severity.INFO, "resync 40 %"))
    assert r.status is Status.OK
    assert status_line(r) == ("REPLMON OK - 11 ticks over 10 s, no problem found; 1 info "
                              "| critical=0 warning=0 info=1 flapping=0")


def test_worst_open_finding_sets_status_and_leads_the_line() -> None:
    r = run(finding(Severity.CRITICAL, "SQL thread stopped (errno 1062)"),
            finding(Severity.WARNING, "lag 45 s", check="y"))
    assert r.status is Status.CRITICAL and int(r.status) == 2
    assert status_line(r) == ("REPLMON CRITICAL - replica db162: SQL thread stopped "
                              "(errno 1062) (+1 warning) | critical=1 warning=1 info=0 flapping=0")
    assert run(finding(Severity.WARNING, "w")).status is Status.WARNING


def test_a_flapping_finding_says_so_in_the_line_and_the_perfdata() -> None:
    f = finding(Severity.WARNING, "Redis timeout").model_copy(
        update={"flaps": 4, "flap_span_s": 312.0})
    line = status_line(run(f))
    assert line == ("REPLMON WARNING - replica db162: Redis timeout (flapping: 4 opens in "
                    "312 s) | critical=0 warning=1 info=0 flapping=1")


def test_unknown_overrides_findings() -> None:
    r = run(finding(Severity.CRITICAL, "c"), unknown="no source of either node could be read")
    assert r.status is Status.UNKNOWN and int(r.status) == 3
    assert status_line(r).startswith("REPLMON UNKNOWN - no source of either node")


def test_text_starts_with_the_status_line_and_shows_cause_and_next_step() -> None:
    text = render_text(run(finding(Severity.WARNING, "lag 45 s")), localtime=time.gmtime)
    lines = text.splitlines()
    assert lines[0].startswith("REPLMON WARNING - replica db162: lag 45 s")
    assert "22:13:23" in text and "cause: because" in text and "next: do this" in text
    assert all(len(ln) <= 100 for ln in lines)


def test_text_lists_the_last_cleared_findings_and_json_all() -> None:
    """A day's replay can clear thousands of findings: the text keeps to the newest 20."""
    r = run()
    r.cleared = [finding(Severity.WARNING, f"lag {i} s") for i in range(50)]
    text = render_text(r, localtime=time.gmtime)
    assert "the last 20 of 50" in text and "lag 49 s" in text and "lag 30 s" in text
    assert "lag 29 s" not in text
    assert len(json.loads(render_json(r))["cleared"]) == 50


def test_json_round_trips_with_labels() -> None:
    d = json.loads(render_json(run(finding(Severity.CRITICAL, "c"))))
    assert d["status"] == "CRITICAL" and d["code"] == 2
    assert d["open"][0]["severity"] == "critical" and d["open"][0]["since_seq"] == 3
