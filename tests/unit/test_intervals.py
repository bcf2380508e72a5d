"""Findings mean the same at any interval (#18): shipped sessions re-sampled to 5 s
(every 5th tick, rates over 5 s) and to 0.2 s (numbers interpolated, states held until
the next real tick) open the same findings within the same seconds as at 1 s."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from replmon.engine import build_engine
from replmon.model.findings import Finding, Severity
from replmon.model.tick import Tick
from replmon.session.recording import open_recording
from replmon.testing.real_ticks import resample

SESSIONS = Path(__file__).resolve().parent.parent.parent / "sample_sessions"
Ident = tuple[str, str, str]


def opened(ticks: list[Tick]) -> tuple[dict[Ident, Finding], dict[Ident, float]]:
    """Findings at warning or worse, first opening of each, and the second it closed
    (the end of the session when it did not)."""
    eng = build_engine(entry_points=False)
    first: dict[Ident, Finding] = {}
    until: dict[Ident, float] = {}
    for t in ticks:
        upd = eng.feed(t)
        for f in upd.opened:
            if f.severity >= Severity.WARNING:
                first.setdefault(f.ident, f)
        for f in upd.closed:
            until.setdefault(f.ident, t.wall)
    for ident in first:
        until.setdefault(ident, ticks[-1].wall)
    return first, until


QUIET = ("healthy_steady_load.rmrec",)
"""Sessions with nothing above info at 1 s. (planned_switchover.rmrec, re-sampled the
same way, is tests/unit/test_switchover_session.py's: there its two events must open in
the same seconds and nothing else, a stronger claim than this test's.)"""


def load(name: str) -> list[Tick]:
    return list(_load(name))


@functools.cache
def _load(name: str) -> tuple[Tick, ...]:
    """The session's ticks, decoded once in a process (Ticks are immutable)."""
    with open_recording(SESSIONS / name) as rec:
        return tuple(rec.ticks())


@functools.cache
def at_one_second(name: str) -> tuple[dict[Ident, Finding], dict[Ident, float]]:
    """``opened`` of the session as recorded (1 s): worked out once for both intervals'
    cases of it (they share its xdist group), which only read it."""
    return opened(load(name))


NAMES = ["replica_sql_stopped.rmrec", "replica_lag_growing.rmrec",
         "redis_link_down_full_resync.rmrec", "redis_maxmemory_evictions.rmrec",
         "auto_increment_updates_miss.rmrec", "healthy_steady_load.rmrec"]


@pytest.mark.parametrize("name", [
    pytest.param(n, id=n, marks=pytest.mark.xdist_group(f"intervals-{n}")) for n in NAMES])
@pytest.mark.parametrize("interval", [0.2, 5.0])
def test_same_findings_within_the_same_seconds(name: str, interval: float) -> None:
    ticks = load(name)
    base, base_until = at_one_second(name)
    other, _ = opened(resample(ticks, interval))
    # What a 5 s sampling can see at all: a condition that lasts two of its ticks.
    lasting = {i for i, f in base.items() if base_until[i] - f.since_wall >= 2 * interval + 1}
    if name not in QUIET:
        assert lasting, "the session shows something at 1 s"
    assert lasting <= set(other), f"lost at {interval} s: {sorted(lasting - set(other))}"
    assert set(other) <= set(base), f"new at {interval} s: {sorted(set(other) - set(base))}"
    for ident in lasting:
        a, b = base[ident], other[ident]
        # Onset: the same second, or the first 5 s tick after it; after the last real tick
        # before it (a tick late at the onset: the fine ticks in its gap show the next one).
        before = max((t.wall for t in ticks if t.wall < a.since_wall), default=a.since_wall)
        assert min(-1.0, before - a.since_wall) <= b.since_wall - a.since_wall \
            <= max(1.0, interval), ident
        assert b.severity == a.severity, ident


def test_resample_keeps_counters_counting_and_rates_per_second() -> None:
    ticks = load("auto_increment_updates_miss.rmrec")[:21]
    fine, coarse = resample(ticks, 0.2), resample(ticks, 5.0)
    assert len(fine) == 101 and len(coarse) == 5
    assert [t.seq for t in coarse] == list(range(5)) and coarse[1].wall == ticks[5].wall
    q = [t.primary.mysql.counters["Questions"] for t in fine]
    assert q == sorted(q) and q[-1] == ticks[-1].primary.mysql.counters["Questions"]
    assert fine[5].primary.mysql.counters == ticks[1].primary.mysql.counters
    # the 5 s rate is the mean of the five 1 s rates it spans, each over its own seconds
    r1 = [(t.primary.rates.mysql.qps, t.primary.rates.mysql.dt_s) for t in ticks[1:6]]
    r5 = coarse[1].primary.rates.mysql.qps
    assert r5 == pytest.approx(sum(r * dt for r, dt in r1) / sum(dt for _, dt in r1), rel=1e-3)
