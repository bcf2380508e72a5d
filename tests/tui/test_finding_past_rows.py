"""The findings list and the detail lead with a finding's worst and tell its story
(issue 54): a closed row shows its worst severity and how it went, an open row that was
worse says so, the detail lists the story a step a line, and every view gives one
closing time."""

from __future__ import annotations

from replmon.model.findings import Finding, Severity, Step
from replmon.testing.synth import T0
from replmon.tui.findings_list import closed_words, open_words
from replmon.tui.screens import story_lines
from replmon.units import tick_clock

STORY = (Step(seq=0, wall=T0, severity=Severity.WARNING, title="IO thread Connecting for 3 s"),
         Step(seq=60, wall=T0 + 60, severity=Severity.CRITICAL,
              title="IO thread Connecting for 60 s"),
         Step(seq=70, wall=T0 + 70, severity=Severity.WARNING, title="IO thread Connecting"))


def finding(**change: object) -> Finding:
    f = Finding(check="mysql_replication", key="default", node="replica", name="db162",
                severity=Severity.WARNING, title="IO thread Connecting for 80 s",
                since_seq=0, since_wall=T0, last_seq=80, last_wall=T0 + 80,
                worst=Severity.CRITICAL, worst_title="IO thread Connecting for 60 s",
                worst_wall=T0 + 60, story=STORY)
    return f.model_copy(update=change)


def test_an_open_row_that_was_worse_says_its_worst() -> None:
    assert open_words(finding()) == (
        f"IO thread Connecting for 80 s (worst critical at {tick_clock(T0 + 60)}: "
        "IO thread Connecting for 60 s)")
    calm = finding(worst=Severity.WARNING, worst_title="IO thread Connecting for 3 s",
                   worst_wall=T0, story=STORY[:1])
    assert open_words(calm) == "IO thread Connecting for 80 s"


def test_a_closed_row_tells_its_story_and_the_detail_its_steps() -> None:
    f = finding(state="closed", closed_seq=90, closed_wall=T0 + 90, clear_wall=T0 + 81)
    row = closed_words(f)
    assert row.startswith(f"closed {tick_clock(T0 + 90)} after 90 s: WARN {tick_clock(T0)}")
    assert f"{tick_clock(T0 + 60)} IO thread Connecting for 60 s (critical)" in row
    assert row.count("closed") == 1  # said once, at the start
    # the headline the detail shows closes at the same time as the row
    assert f.headline.endswith(f"closed {tick_clock(T0 + 90)})")
    assert story_lines(f) == [
        f"{tick_clock(T0)} WARN IO thread Connecting for 3 s",
        f"{tick_clock(T0 + 60)} CRIT IO thread Connecting for 60 s",
        f"{tick_clock(T0 + 70)} WARN IO thread Connecting",
        f"{tick_clock(T0 + 90)} closed"]
