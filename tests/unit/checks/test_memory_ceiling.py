"""memory_ceiling on seed 002's own numbers, on the real host swapping fixture and Redis
maxmemory capture, and on synthetic windows (quiet cases, edges, the collapse)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from replmon.checks.memory_ceiling import CHECK

from replmon.check import Window
from replmon.model.findings import Observation, Severity
from replmon.model.host import HostRates, HostSample, MemInfo
from replmon.model.host_rates import derive_host_rates
from replmon.model.redis import RedisRates, RedisSample, derive_redis_rates
from replmon.model.tick import NodeRates, NodeTick, Tick
from replmon.sources.host_parse import build_host_sample
from replmon.sources.redis_parse import build_redis_sample, parse_info
from replmon.testing.scenarios import memory
from replmon.testing.synth import (
    GateTally,
    judge_gate,
    node,
    observe,
    run_check,
    series,
    status,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GIB = 1 << 30
MIB = 1 << 20


def by_key(obs: list[Observation], role: str = "primary") -> dict[str, Observation]:
    return {o.key: o for o in obs if o.node == role}


def host_node(avail_pct: float | None = 5.0, si: float | None = 0.0, so: float | None = 0.0,
              mf: float | None = 0.0, *, swap_total: int = 8 * GIB, ok: bool = True,
              ops: float | None = None) -> NodeTick:
    sample = HostSample() if ok else HostSample(status=status("error", "read failed"))
    rates = HostRates(swap_in_pages_per_s=si, swap_out_pages_per_s=so, major_faults_per_s=mf,
                      mem_available_pct=avail_pct, swap_total_bytes=swap_total,
                      swap_used_bytes=GIB if swap_total else 0) if ok else HostRates()
    return node("primary", host=sample, redis=RedisSample(used_memory=MIB, maxmemory=0),
                rates=NodeRates(host=rates, redis=RedisRates(ops_per_s=ops)))


def redis_node(used: int, maxmemory: int | None, *, policy: str = "allkeys-lru",
               rss: int | None = None, ops: float | None = 5000.0,
               evicted: float | None = 0.0, ram: int | None = 16 * GIB,
               ok: bool = True) -> NodeTick:
    if not ok:
        return node("primary", redis=RedisSample(status=status("timeout", "no reply")))
    sample = RedisSample(role="master", used_memory=used, used_memory_rss=rss or used,
                         maxmemory=maxmemory, maxmemory_policy=policy,
                         total_system_memory=ram)
    return node("primary", redis=sample,
                rates=NodeRates(redis=RedisRates(ops_per_s=ops, evicted_per_s=evicted)))


def window(*nodes: NodeTick) -> list[Tick]:
    return series((n, node("replica")) for n in nodes)


# --- seed 002 ------------------------------------------------------------------------

def test_seed_002_past_the_ceiling_is_critical_with_the_collapse() -> None:
    ticks, onset = memory.seed_002(range(memory.CEILING + 1))
    obs = by_key(observe(CHECK, ticks[:onset + 1]))
    p = obs["paging"]
    assert p.severity is Severity.CRITICAL
    assert "497 pages/s in" in p.title and "81 major faults/s" in p.title
    assert "3.1 % of RAM available" in p.title and "Redis ops/s 74,460 -> 6,778" in p.title
    assert p.numbers["major_faults_per_s"] == pytest.approx(81.06)
    assert p.numbers["throughput_now_per_s"] == pytest.approx(6777.6)
    r = obs["redis_memory"]
    assert r.severity is Severity.CRITICAL  # a warning (no maxmemory) raised by the collapse
    assert "no maxmemory" in r.title and "6,778" in r.title
    assert "swapped out" in r.cause  # RSS 84.87 % of RAM below used_memory


def test_seed_002_warns_of_no_maxmemory_from_80_percent_of_ram() -> None:
    ticks, _ = memory.seed_002(range(memory.CEILING))
    per = memory.PER_STEP
    at_76 = observe(CHECK, ticks[:1 + 3 * per])  # last tick of step 8.0: 76.42 %
    assert at_76 == []
    at_80 = by_key(observe(CHECK, ticks[:2 + 3 * per]))  # first tick of step 8.5
    (o,) = at_80.values()
    assert o.key == "redis_memory" and o.severity is Severity.WARNING
    assert "81 % of the host's 16 GiB RAM, no maxmemory" in o.title
    assert o.numbers["used_pct_of_ram"] == pytest.approx(80.56, abs=0.01)


def test_seed_002_healthy_steps_are_quiet() -> None:
    ticks, _ = memory.seed_002(range(3))
    assert all(observe(CHECK, ticks[:n]) == [] for n in range(1, len(ticks) + 1))


# --- host paging -----------------------------------------------------------------------

def host_fixture(mono: float, vmstat: str) -> HostSample:
    root = FIXTURES / "host" / "a"
    files: dict[str, str | None] = {
        "/" + p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*")
        if p.is_file()}
    files["/proc/vmstat"] = (FIXTURES / "host" / "swap" / vmstat).read_text()
    files["/proc/meminfo"] = (FIXTURES / "host" / "swap" / "meminfo").read_text()
    return build_host_sample(files).model_copy(update={"mono": mono, "wall": mono})


def test_constructed_swapping_host_is_critical() -> None:
    a, b = host_fixture(100.0, "vmstat_a"), host_fixture(101.0, "vmstat_b")
    n = node("primary", host=b, rates=NodeRates(host=derive_host_rates(a, b)))
    (o,) = observe(CHECK, window(n))
    assert o.key == "paging" and o.severity is Severity.CRITICAL
    assert "3,556 pages/s in, 2,808 out, 3,812 major faults/s" in o.title
    assert "1.2 % of RAM available" in o.title and "2 GiB swap used" in o.title
    assert "Redis" not in o.title  # no throughput in the window: no collapse claimed


@pytest.mark.parametrize(("kw", "sev"), [
    ({"si": 5.0, "so": 10.0}, Severity.WARNING),        # 15 pages/s
    ({"mf": 60.0}, Severity.WARNING),
    ({"si": 300.0}, Severity.CRITICAL),
    ({"mf": 600.0}, Severity.CRITICAL),
])
def test_paging_with_low_memory(kw: dict[str, Any], sev: Severity) -> None:
    (o,) = observe(CHECK, window(host_node(**kw)))
    assert o.severity is sev


@pytest.mark.parametrize("kw", [
    {"avail_pct": 40.0, "si": 500.0, "mf": 600.0},  # plenty available: lazy swap-in
    {"avail_pct": None, "si": 500.0},                # MemAvailable unknown (old kernel)
    {"si": 4.0, "so": 4.0, "mf": 20.0},              # below both thresholds
    {"si": None, "so": None, "mf": None},            # first tick: no rates yet
    {"ok": False},                                   # host source failed
])
def test_paging_quiet_cases(kw: dict[str, Any]) -> None:
    assert observe(CHECK, window(host_node(**kw))) == []


def test_no_swap_configured_names_thrashing() -> None:
    (o,) = observe(CHECK, window(host_node(mf=80.0, swap_total=0)))
    assert "no swap" in o.cause and "swap used" not in o.title


# --- Redis memory and evictions --------------------------------------------------------

@pytest.mark.parametrize(("pct", "policy", "sev"), [
    (91, "allkeys-lru", Severity.WARNING),
    (99, "allkeys-lru", Severity.CRITICAL),
    (95, "noeviction", Severity.WARNING),
    (100, "noeviction", Severity.CRITICAL),
])
def test_redis_near_maxmemory(pct: int, policy: str, sev: Severity) -> None:
    (o,) = observe(CHECK, window(redis_node(pct * MIB, 100 * MIB, policy=policy)))
    assert o.key == "redis_memory" and o.severity is sev
    assert f"({pct} %), policy {policy}" in o.title
    if policy == "noeviction":
        assert "writes fail with OOM" in o.cause


def test_redis_below_the_ceiling_or_small_against_ram_is_quiet() -> None:
    assert observe(CHECK, window(redis_node(85 * MIB, 100 * MIB))) == []
    assert observe(CHECK, window(redis_node(8 * GIB, 0))) == []  # 50 % of 16 GiB


def test_no_maxmemory_uses_rss_and_host_ram_when_redis_does_not_say() -> None:
    n = redis_node(10 * GIB, None, rss=14 * GIB, ram=None)
    n = n.model_copy(update={"host": HostSample(mem=MemInfo(total=16 * GIB))})
    (o,) = observe(CHECK, window(n))
    assert "14 GiB, 88 % of the host's 16 GiB RAM, maxmemory not reported" in o.title


def redis_fixture(name: str, mono: float) -> RedisSample:
    text = (FIXTURES / "redis" / name).read_bytes().decode()
    return build_redis_sample(parse_info(text)).model_copy(update={"mono": mono, "wall": mono})


def test_real_capture_evicting_under_allkeys_lru() -> None:
    # redis7.0_master_restarted -> _maxmemory: 57,965 keys evicted in 8.17 s
    a = redis_fixture("redis7.0_master_restarted.txt", 1795389025.491461803)
    b = redis_fixture("redis7.0_master_maxmemory.txt", 1795389033.661253236)
    n = node("primary", redis=b, rates=NodeRates(redis=derive_redis_rates(a, b)))
    (o,) = observe(CHECK, window(n))  # used_memory is 53 % of its 3 MiB maxmemory now
    assert o.key == "evictions" and o.severity is Severity.WARNING
    assert o.title == "Redis evicts 7,095 keys/s (policy allkeys-lru)"


@pytest.mark.parametrize(("rate", "expect"), [
    (5.5, Severity.INFO), (0.0, None), (None, None),  # None: counter reset, first tick
])
def test_eviction_rates(rate: float | None, expect: Severity | None) -> None:
    obs = observe(CHECK, window(redis_node(MIB, 0, evicted=rate)))
    assert [o.severity for o in obs] == ([] if expect is None else [expect])
    if expect is not None:
        assert "5.5 keys/s" in obs[0].title


def test_redis_source_down_is_not_judged_here() -> None:
    assert observe(CHECK, window(redis_node(99 * MIB, 100 * MIB, ok=False))) == []


# --- the collapse ------------------------------------------------------------------------

def test_throughput_collapse_raises_a_warning_to_critical() -> None:
    healthy = [redis_node(91 * MIB, 100 * MIB, ops=10_000.0) for _ in range(4)]
    fell = redis_node(91 * MIB, 100 * MIB, ops=1_000.0)
    (o,) = observe(CHECK, window(redis_node(91 * MIB, 100 * MIB, ops=None), *healthy, fell))
    assert o.severity is Severity.CRITICAL
    assert o.title.endswith("; Redis ops/s 10,000 -> 1,000")
    assert o.numbers["throughput_before_per_s"] == 10_000.0


@pytest.mark.parametrize(("before", "n", "now"), [
    (50.0, 4, 1.0),        # idle before: no baseline
    (10_000.0, 2, 100.0),  # too few loaded ticks
    (10_000.0, 4, 4000.0),  # 40 %: not a collapse
    (10_000.0, 4, None),   # no rate now (counter reset)
])
def test_no_collapse_claimed(before: float, n: int, now: float | None) -> None:
    ticks = [redis_node(91 * MIB, 100 * MIB, ops=before) for _ in range(n)]
    (o,) = observe(CHECK, window(*ticks, redis_node(91 * MIB, 100 * MIB, ops=now)))
    assert o.severity is Severity.WARNING and "->" not in o.title


def test_opens_after_three_ticks_and_closes_after_three_clear() -> None:
    bad = [host_node(si=500.0) for _ in range(5)]
    good = [host_node(avail_pct=30.0) for _ in range(3)]
    still, opened = run_check(CHECK, window(*bad))
    assert list(opened) == [2] and still[0].key == "paging"  # ticks 0, 1, 2
    closed, _ = run_check(CHECK, window(*bad, *good))
    assert closed == []


def _state(role: str, avail: float | None, si: float, mf: float, used_pct: float,
           maxmemory: int, evicted: float) -> NodeTick:
    """A node with these paging figures and a Redis of ``used_pct`` % of its maxmemory
    (of its 16 GiB of RAM with ``maxmemory`` 0)."""
    ceiling = maxmemory or 16 * GIB
    return node(role, host=HostSample(), redis=RedisSample(
        used_memory=int(ceiling * used_pct / 100), maxmemory=maxmemory,
        maxmemory_policy="allkeys-lru", total_system_memory=16 * GIB),
        rates=NodeRates(host=HostRates(swap_in_pages_per_s=si, swap_out_pages_per_s=0.0,
                                       major_faults_per_s=mf, mem_available_pct=avail),
                        redis=RedisRates(evicted_per_s=evicted)))


def test_the_gate_is_quiet_only_where_nothing_is_reported() -> None:
    """``quiet`` on the gauges against ``evaluate`` on pairs of nodes each paging or not,
    Redis near its maxmemory or the RAM or not, evicting or not (the two nodes' figures
    mixed: the gauges take the lowest MemAvailable and the largest rates of either),
    with each paging and memory threshold over a range: test_gates' recordings page
    on one seed only, with both rates past theirs."""
    gate = CHECK.gate
    assert gate is not None
    states = [(50.0, 0.0, 0.0, 10.0, GIB, 0.0), (5.0, 0.0, 0.0, 10.0, 0, 0.0),
              (5.0, 12.0, 0.0, 50.0, 0, 0.0), (5.0, 0.0, 60.0, 85.0, 0, 0.0),
              (9.0, 300.0, 600.0, 50.0, GIB, 0.0), (50.0, 300.0, 600.0, 95.0, GIB, 0.0),
              (None, 300.0, 600.0, 99.0, GIB, 0.0), (50.0, 0.0, 0.0, 50.0, GIB, 5.0)]
    limits = [CHECK.thresholds(**kw) for kw in (
        {}, *({"low_available_pct": v} for v in (1.0, 5.5, 9.5, 60.0)),
        *({"swap_pages_per_s": v} for v in (1.0, 11.0, 13.0, 1000.0)),
        *({"major_faults_per_s": v} for v in (5.0, 59.0, 61.0, 1000.0)),
        *({"maxmemory_warning_pct": v} for v in (9.0, 94.0, 96.0, 100.0)),
        *({"system_memory_warning_pct": v} for v in (9.0, 84.0, 86.0, 100.0)))]
    tally = GateTally()
    for p, r in ((p, r) for p in states for r in states):
        w = Window(series([(_state("primary", *p), _state("replica", *r))]))
        judge_gate(CHECK, w, limits, tally, f"{p} {r}")
    assert not tally.hidden, tally.hidden[:3]
    assert tally.quiet > 100 and tally.seen > 100, (tally.quiet, tally.seen)
