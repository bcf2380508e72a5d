"""The lab scenarios' onset deadline is the design's, whatever the judged run did: a
regression that makes replmon's ticks late must fail the matrix, not widen its bound."""

from __future__ import annotations

import pytest

from replmon.model.findings import Finding, Severity
from replmon.testing import synth
from replmon.testing.scenarios import SCHEDULE_SLACK_S, Outcome, onset_deadline_s


def _run(late_s: float, interval: float = 0.5, seen_after: int = 8) -> Outcome:
    """Ticks from seq 0, the onset at seq 2, each starting ``late_s`` after its slot; a
    pair_lag warning whose condition was first seen ``seen_after`` ticks after onset."""
    ticks = [t.model_copy(update={"mono": t.mono + late_s, "wall": t.wall + late_s})
             for t in synth.series([(synth.node("primary"), synth.node("replica"))] * 20,
                                   interval=interval)]
    seen = ticks[2 + seen_after]
    f = Finding(check="pair_lag", key="lag", node="pair", severity=Severity.WARNING,
                worst=Severity.WARNING, title="lag", since_seq=seen.seq,
                since_wall=seen.wall, last_seq=seen.seq + 1)
    return Outcome("lag", "pair_lag", 2, ticks, {seen.seq + 1: [f]})


@pytest.mark.parametrize("late_s", [0.0, 0.4, 5.0])
def test_the_deadline_does_not_move_with_the_runs_lateness(late_s: float) -> None:
    out = _run(late_s)
    assert out.deadline() == pytest.approx(onset_deadline_s(0.5) + SCHEDULE_SLACK_S + 0.5)


def test_a_condition_seen_past_the_design_bound_is_late_however_late_the_ticks() -> None:
    # seen 4.5 s after onset: past 3 s + 0.5 s + one tick, with ticks 5 s late each
    assert not _run(5.0, seen_after=9).on_time()
    assert _run(5.0, seen_after=5).on_time()
