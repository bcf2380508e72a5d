"""A check's gate (``check.Gate``) never hides what the check would see.

The engine skips a gated check's ``evaluate`` where ``quiet(gauges, thresholds)`` says
it would find nothing, live and in every re-run; a re-check with other thresholds then
skips the ticks whose stored gauges are quiet. That is only right if ``quiet`` is never
True where ``evaluate`` returns an observation, with any thresholds. Each gated check
runs here on every tick of every shipped recording and seed scenario (the inputs of
test_check_reads: DRBD 8 and 9, replication stopped and lagging, Redis resyncs and
memory, swapping, DRBD congestion, pair lag) with its default thresholds and with each
of its observing thresholds alone at 1/10, 1/2, 2 and 10 times its default (a switch
flipped): wherever ``quiet`` is True, ``evaluate`` must return nothing. It must also
have seen something with some of them (else the comparison proves little), and the
gate must be quiet on some ticks (else it saves nothing).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError
from test_check_reads import CHECKS, _inputs

from replmon.check import Check, Thresholds, Window
from replmon.engine import Engine
from replmon.session.reuse import HYSTERESIS
from replmon.testing.synth import GateTally, judge_gate

GATED = [c for c in CHECKS if c.gate is not None]
FACTORS = (0.1, 0.5, 2.0, 10.0)


def variants(check: Check[Any]) -> list[Thresholds]:
    """The default thresholds, and each observing one alone moved by each factor (a
    bool flipped): the ones that pass the check's own validation."""
    base = check.thresholds()
    out = [base]
    for name, value in base.model_dump().items():
        if name in HYSTERESIS:
            continue
        if type(value) is bool:
            tries: list[Any] = [not value]
        elif type(value) in (int, float):
            tries = [type(value)(value * f) if value else f for f in FACTORS]
        else:
            continue
        for v in tries:
            try:
                out.append(check.thresholds.model_validate({**base.model_dump(), name: v}))
            except ValidationError:
                continue
    return out


def test_the_checks_that_matter_for_a_recheck_are_gated() -> None:
    """The checks of the re-check bench's one-check cases have a gate."""
    assert {"pair_lag", "disk_saturation"} <= {c.id for c in GATED}


@pytest.mark.parametrize("check", GATED, ids=lambda c: c.id)
def test_a_gate_is_quiet_only_where_the_check_sees_nothing(check: Check[Any]) -> None:
    assert check.gate is not None
    limits = variants(check)
    assert len(limits) > 2
    tally = GateTally()
    where = [""]  # the input being run

    def probe(w: Window, _t: Thresholds) -> list[Any]:
        judge_gate(check, w, limits, tally, f"{where[0]} tick {w.last.seq}:")
        return []

    probing = replace(check, evaluate=probe, gate=None)
    for where[0], ticks in _inputs():
        engine = Engine([(probing, check.thresholds())])
        for t in ticks:
            engine.observe(t)
    hidden, quiet, seen = tally.hidden, tally.quiet, tally.seen
    judged = tally.seen + tally.silent
    assert not hidden, f"{len(hidden)} hidden, first: {hidden[:3]}"
    assert seen, f"{check.id} saw nothing with any thresholds: the test proves little"
    assert quiet > judged // 2, f"{check.id}'s gate is quiet on {quiet}/{judged} only"
