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

import pickle
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError
from test_check_reads import CHECKS, SESSIONS, _inputs, _ticks

from replmon.check import Check, Gate, LevelGauges, Thresholds, Window, span_ticks
from replmon.engine import Engine
from replmon.session import open_recording
from replmon.session.format import ChunkObservations
from replmon.session.reuse import HYSTERESIS
from replmon.testing.synth import GateTally, judge_gate

GATED = [c for c in CHECKS if c.gate is not None]
FACTORS = (0.1, 0.5, 2.0, 10.0)


def _probe_every_input(check: Check, probe: Any, where: list[str]) -> None:
    """Run ``probe`` as ``check``'s evaluate (no gate) over every input, ``where[0]``
    naming the input being run."""
    probing = replace(check, evaluate=probe, gate=None)
    for where[0], ticks in _inputs():
        engine = Engine([(probing, check.thresholds())])
        for t in ticks:
            engine.observe(t)


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

    _probe_every_input(check, probe, where)
    hidden, quiet, seen = tally.hidden, tally.quiet, tally.seen
    judged = tally.seen + tally.silent
    assert not hidden, f"{len(hidden)} hidden, first: {hidden[:3]}"
    assert seen, f"{check.id} saw nothing with any thresholds: the test proves little"
    assert quiet > judged // 2, f"{check.id}'s gate is quiet on {quiet}/{judged} only"


STORED = next(p for p in SESSIONS if p.name == "redis_writes_refused.rmrec")
"""A shipped recording whose observations frames hold every gated check's gauges (record
it again when a check gains a gate)."""


def test_every_gated_check_names_its_gauges() -> None:
    named = {c.id for c in GATED if c.gate is not None and c.gate.gauges is not None}
    assert named == {c.id for c in GATED}


def test_a_gate_is_read_only_and_pickles() -> None:
    """A Gate refuses changes (the checks of every engine share it) and still goes to a
    re-run's worker processes by pickle, whole."""
    check = next(c for c in GATED if c.id == "disk_saturation")
    gate = check.gate
    assert gate is not None
    with pytest.raises(AttributeError):
        gate.gauges = None  # type: ignore[misc]
    again = pickle.loads(pickle.dumps(gate))
    assert (again.measure, again.gauges, again._quiet) == (gate.measure, gate.gauges,
                                                           gate._quiet)


@pytest.mark.parametrize("check", GATED,
                         ids=lambda c: c.id)
def test_measure_gives_the_named_gauges(check: Check[Any]) -> None:
    """On real ticks ``measure`` returns the check's own NamedTuple (the engine and the
    recorder take it as given), with a number or None in every field."""
    gate = check.gate
    assert gate is not None and gate.gauges is not None
    ticks = [t.oriented(check.service) if check.service else t for t in _ticks(STORED)]
    n = span_ticks(check.window, ticks[0].interval)
    for i in range(0, len(ticks), 7):
        g = gate.measure(Window(ticks[max(0, i - n + 1):i + 1]))
        assert type(g) is gate.gauges, (i, type(g))
        assert all(v is None or isinstance(v, int | float) for v in g), g


@pytest.mark.parametrize("check", GATED,
                         ids=lambda c: c.id)
def test_stored_gauges_are_named_where_they_are_read(check: Check[Any]) -> None:
    """A recording written before gauges had names (stored by position, as they still
    are) reads: ``Gate.quiet`` names each stored tuple with the check's class, and the
    check's ``quiet`` (which reads fields by name) answers for every tick."""
    gate = check.gate
    assert gate is not None and gate.gauges is not None
    th = check.thresholds()
    answers = []
    with open_recording(STORED) as rec:
        for ci in range(len(rec.chunks)):
            obs = rec.chunk_observations(ci)[0]
            assert obs is not None
            for g in obs.gauges[check.id]:
                assert g is None or type(g) is tuple  # as stored: by position
                if g is not None:
                    answers.append(gate.quiet(g, th))
    assert answers and all(type(a) is bool for a in answers)


def _quiet_top(g: LevelGauges, t: Thresholds) -> bool:
    return g.top is not None and g.top < 1.0


def test_named_gauges_are_stored_by_position() -> None:
    """The observations frame keeps gauges as JSON arrays (names in every tick would
    grow the file): a NamedTuple's bytes are a plain tuple's, and they come back plain
    tuples that ``Gate.quiet`` names (a tuple of another length raises TypeError, which
    a re-check takes as "not quiet" and decodes the ticks)."""
    named = LevelGauges(0.5, None, 2.0, None)
    frame = {"checks_id": "x", "first": 0, "seq0": 1, "count": 1, "interval": 1.0}
    as_named = ChunkObservations(**frame, gauges={"c": [named]}).model_dump_json()
    assert as_named == ChunkObservations(**frame, gauges={"c": [tuple(named)]}
                                         ).model_dump_json()
    assert '"gauges":{"c":[[0.5,null,2.0,null]]}' in as_named
    back = ChunkObservations.model_validate_json(as_named).gauges["c"][0]
    assert back is not None and type(back) is tuple
    gate = Gate(lambda w: named, _quiet_top, gauges=LevelGauges)
    assert gate.quiet(back, Thresholds()) is True
    assert gate.quiet((2.0, None, None, None), Thresholds()) is False
    with pytest.raises(TypeError):
        gate.quiet((0.5, None), Thresholds())
    with pytest.raises(TypeError, match="NamedTuple"):
        Gate(lambda w: named, _quiet_top, gauges=tuple)  # type: ignore[arg-type]


RESTATING = [c for c in GATED if c.gate is not None and c.gate._restate is not None]


def test_drbd_peer_restates_its_severity() -> None:
    """The check whose re-check with other limits decoded every tick of the bench's days
    (a peer down all day, reported whatever its limits) restates its stored
    observations instead."""
    assert "drbd_peer" in {c.id for c in RESTATING}


@pytest.mark.parametrize("check", RESTATING, ids=lambda c: c.id)
def test_a_restate_gives_what_evaluate_gives(check: Check[Any]) -> None:
    """Wherever a gate's ``restate`` answers, from what ``evaluate`` saw with one set of
    thresholds and the tick's gauges, it answers what ``evaluate`` sees with the other:
    on every tick of every shipped recording and seed scenario, for every pair of the
    thresholds of ``variants`` (and ``restate`` must answer on some ticks, with some
    pairs, where the check saw something, else it proves little)."""
    gate = check.gate
    assert gate is not None
    limits = variants(check)
    pairs = [(a, b, at) for a in range(len(limits)) for b in range(len(limits))
             if a != b and (at := gate.restater(limits[a], limits[b])) is not None]
    assert pairs, f"{check.id} restates for no pair of thresholds"
    wrong: list[str] = []
    told = [0]
    where = [""]

    def probe(w: Window, _t: Thresholds) -> list[Any]:
        g = gate.measure(w)
        found: dict[int, list[Any]] = {}
        for a, b, at in pairs:
            if gate.quiet(g, limits[a]):
                continue  # the engine does not evaluate there: nothing stored to restate
            if a not in found:
                found[a] = check.evaluate(w, limits[a])
            got = at(found[a], g)
            if got is None:
                continue
            if b not in found:
                found[b] = check.evaluate(w, limits[b])
            told[0] += bool(found[a])
            if got != found[b]:
                wrong.append(f"{where[0]} tick {w.last.seq}: {limits[a].model_dump()} -> "
                             f"{limits[b].model_dump()}: {got} != {found[b]}")
        return []

    _probe_every_input(check, probe, where)
    assert not wrong, f"{len(wrong)} wrong, first: {wrong[:2]}"
    assert told[0], f"{check.id} restated nothing it saw"
