"""memory_ceiling and throughput_collapse on the lab: Redis at maxmemory evicting, a
global read lock under write load, and a healthy load that must stay quiet."""

from __future__ import annotations

import statistics

import pytest

from replmon.lab import Lab
from replmon.lab.faults import FILL_PREFIX
from replmon.model.findings import Finding, Severity
from replmon.testing.scenarios import Outcome, memory, onset_deadline_s, run_lab_scenario

pytestmark = pytest.mark.live

MINE = ("memory_ceiling", "throughput_collapse")


def opened(out: Outcome, check: str, node: str, key: str) -> tuple[float, Finding] | None:
    """(seconds from the onset tick to the finding's first tick; finding) of the first
    such finding."""
    onset = next(t.wall for t in out.ticks if t.seq == out.onset_seq)
    for seq in sorted(out.opened):
        for f in out.opened[seq]:
            if (f.check, f.node, f.key) == (check, node, key):
                return f.since_wall - onset, f
    return None


def in_time(out: Outcome, delay_s: float) -> bool:
    """Seen within max(3 s, 2 ticks) of the onset, and the check's first finding too."""
    return delay_s <= onset_deadline_s(out.ticks[0].interval) and out.on_time()


async def test_redis_at_maxmemory_with_evictions_flags_within_3_s(lab: Lab) -> None:
    out = await run_lab_scenario(lab, memory.LAB[0])
    got = opened(out, "memory_ceiling", "primary", "redis_memory")
    assert got is not None, [(t.primary.redis.used_memory, t.primary.redis.maxmemory)
                             for t in out.ticks]
    n, f = got
    assert in_time(out, n), n
    assert f.severity >= Severity.WARNING and "policy allkeys-lru" in f.title
    pct = f.numbers["used_pct"]
    assert isinstance(pct, float) and pct >= 90.0
    ev = opened(out, "memory_ceiling", "primary", "evictions")
    assert ev is not None, [t.primary.rates.redis.evicted_per_s for t in out.ticks]
    assert "allkeys-lru" in ev[1].title
    # nothing before the onset, and the replica (no maxmemory) is not at a ceiling
    assert not [f for f in out.above_info(out.onset_seq) if f.check in MINE]
    assert opened(out, "memory_ceiling", "replica", "redis_memory") is None
    # the lab is restored
    with lab.primary.redis() as r:
        assert r.config_get("maxmemory")["maxmemory"] == "0"
        assert r.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        assert not list(r.scan_iter(match=FILL_PREFIX + "*", count=1000))


async def test_global_read_lock_under_load_flags_within_3_s(lab: Lab) -> None:
    out = await run_lab_scenario(lab, memory.LAB[1])
    got = opened(out, "throughput_collapse", "primary", "mysql")
    assert got is not None, [(t.primary.rates.mysql.qps, t.primary.mysql.gauges)
                             for t in out.ticks]
    n, f = got
    assert in_time(out, n), n
    before, now = f.numbers["before_per_s"], f.numbers["now_per_s"]
    assert isinstance(before, float) and isinstance(now, float) and now < 0.3 * before
    assert "threads running" in f.cause  # the blocked UPDATE
    assert not [f for f in out.above_info(out.onset_seq) if f.check in MINE]
    # the replica's MySQL has no client load of its own: never judged
    assert opened(out, "throughput_collapse", "replica", "mysql") is None
    # the lock is gone: a write goes through and replicates
    lab.primary.sql("INSERT INTO lab.t (v) VALUES (42)")
    lab.wait_replica_caught_up()


async def test_healthy_write_load_raises_nothing(lab: Lab) -> None:
    out = await run_lab_scenario(lab, memory.LAB[2])
    noisy = [f for f in out.above_info() if f.check in MINE]
    assert noisy == [], [f.title for f in noisy]
    qps = [t.primary.rates.mysql.qps for t in out.ticks[1:]]
    # the load was there: a rate every tick, ~300/s over the run (a busy machine can
    # hold the load's process back for part of one tick: the median, not every tick).
    # A tick has no rate only when it or the one before has no sample (the source timed
    # out: on a loaded machine a 0.4 s timeout can pass), never otherwise.
    sampled = [t.primary.mysql.status.ok for t in out.ticks]
    gaps = [i for i, q in enumerate(qps, 1) if q is None]
    assert all(not (sampled[i] and sampled[i - 1]) for i in gaps), (
        gaps, [(t.seq, t.primary.mysql.status.state) for t in out.ticks])
    assert statistics.median(q for q in qps if q is not None) > 100, qps
