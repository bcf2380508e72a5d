"""throughput_collapse on seed 002's own numbers and on synthetic windows: the
baseline gate, clients that left, hints from the same tick, a following replica."""

from __future__ import annotations

from typing import Any

import pytest
from replmon.checks.throughput_collapse import CHECK

from replmon.check import Window
from replmon.model.findings import Severity
from replmon.model.host import HostRates
from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates
from replmon.model.redis import RedisRates, RedisSample
from replmon.model.tick import NodeRates, NodeTick, Tick
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


def my(qps: float | None, clients: int | None = 20, *, role: str = "primary",
       ok: bool = True, host: HostRates | None = None, **gauges: int) -> NodeTick:
    if not ok:
        return node(role, mysql=MysqlSample(status=status("unreachable", "refused")))  # type: ignore[arg-type]
    g: dict[str, int | float] = dict(gauges)
    if clients is not None:
        g["Threads_connected"] = clients
    return node(role, mysql=MysqlSample(gauges=g),  # type: ignore[arg-type]
                redis=RedisSample(status=status("absent", "no Redis")),
                rates=NodeRates(mysql=MysqlRates(qps=qps), host=host or HostRates()))


def rd(ops: float | None, clients: int = 10, *, role: str = "primary", redis_role: str = "master",
       qps: float | None = None) -> NodeTick:
    return node(role, redis=RedisSample(role=redis_role, connected_clients=clients),  # type: ignore[arg-type]
                mysql=MysqlSample(gauges={"Threads_connected": 20}),
                rates=NodeRates(redis=RedisRates(ops_per_s=ops), mysql=MysqlRates(qps=qps)))


def prim(*nodes: NodeTick) -> list[Tick]:
    return series((n, node("replica", mysql=MysqlSample(status=status("absent", "none")),
                           redis=RedisSample(status=status("absent", "none")))) for n in nodes)


def run(before: list[float | None], now: float | None, clients_now: int = 20,
        **kw: Any) -> list[Any]:
    return observe(CHECK, prim(*(my(q) for q in before), my(now, clients_now, **kw)))


def test_seed_002_redis_inserts_collapse_with_clients_connected() -> None:
    ticks, onset = memory.seed_002(range(memory.CEILING + 1))
    assert observe(CHECK, ticks[:onset]) == []  # the last healthy tick
    (o,) = observe(CHECK, ticks[:onset + 1])  # the replica only follows its master
    assert (o.node, o.key, o.severity) == ("primary", "redis", Severity.CRITICAL)
    assert o.title == "Redis ops/s 74,460 -> 6,778 (9 % of baseline) with 51 clients connected"
    assert o.numbers["baseline_ticks"] == 15
    assert "swapped out" in o.cause  # RSS below used_memory in the same tick


@pytest.mark.parametrize(("now", "sev"), [
    (10.0, Severity.CRITICAL), (60.0, Severity.WARNING), (29.0, Severity.CRITICAL),
])
def test_mysql_qps_falls_with_clients_connected(now: float, sev: Severity) -> None:
    (o,) = run([None, 300.0, 310.0, 290.0, 300.0], now)
    assert (o.key, o.severity) == ("mysql", sev)
    assert o.title.startswith(f"MySQL QPS 300 -> {now:,.0f} (")
    assert o.numbers["clients_now"] == 20 and o.numbers["baseline_ticks"] == 4


@pytest.mark.parametrize(("before", "now", "clients_now"), [
    ([300.0] * 4, 100.0, 20),            # 33 %: not below 30 %
    ([300.0] * 4, 5.0, 3),               # the clients left: the load went away
    ([50.0] * 10, 0.0, 20),              # idle server: no baseline
    ([None, 300.0, None, 300.0], 0.0, 20),  # two loaded ticks: too few
    ([300.0] * 4, None, 20),             # no rate now (restart, FLUSH STATUS)
])
def test_quiet_cases(before: list[float | None], now: float | None, clients_now: int) -> None:
    assert run(before, now, clients_now) == []


def test_unreachable_or_unknown_clients_are_not_judged() -> None:
    assert run([300.0] * 4, 0.0, ok=False) == []
    assert observe(CHECK, prim(*(my(300.0) for _ in range(4)), my(0.0, None))) == []


def test_baseline_skips_ticks_without_rates() -> None:
    (o,) = run([None, 400.0, None, 400.0, 400.0], 4.0)
    assert o.numbers["baseline_ticks"] == 3 and o.numbers["before_per_s"] == 400.0


def test_hints_from_the_same_tick() -> None:
    swap = HostRates(swap_in_pages_per_s=400.0, major_faults_per_s=90.0,
                     disk_max_util_pct=99.0, cpu_iowait_pct=35.0)
    (o,) = run([300.0] * 4, 3.0, host=swap, Threads_running=7,
               Rpl_semi_sync_master_wait_sessions=5, Innodb_row_lock_current_waits=2)
    for phrase in ("the host swaps (400 pages/s, 90 major faults/s)", "a disk is saturated",
                   "5 sessions wait for a semi-sync ACK", "2 row-lock waits",
                   "7 threads running"):
        assert phrase in o.cause, o.cause
    assert o.numbers["semi_sync_wait_sessions"] == 5 and o.numbers["threads_running"] == 7


def test_no_hint_gives_the_general_causes() -> None:
    (o,) = run([300.0] * 4, 3.0)
    assert "global or metadata lock" in o.cause


def test_redis_replica_following_its_master_is_not_flagged() -> None:
    pairs = [(rd(1000.0), rd(900.0, role="replica", redis_role="replica"))] * 4
    pairs.append((rd(10.0), rd(5.0, role="replica", redis_role="replica")))
    (o,) = observe(CHECK, series(pairs))
    assert o.node == "primary"
    # the master is fine but the replica's own clients stall: judged
    pairs[-1] = (rd(1000.0), rd(5.0, role="replica", redis_role="replica"))
    (o,) = observe(CHECK, series(pairs))
    assert o.node == "replica" and o.key == "redis"


def test_redis_drop_with_mysql_drop_on_the_node_says_so() -> None:
    nodes = [rd(600.0, qps=300.0) for _ in range(4)] + [rd(5.0, qps=3.0)]
    obs = {o.key: o for o in observe(CHECK, prim(*nodes))}
    assert set(obs) == {"redis", "mysql"}
    assert "stuck on MySQL" in obs["redis"].cause


def test_opens_after_three_ticks_and_closes_when_throughput_returns() -> None:
    ticks = prim(*(my(300.0) for _ in range(5)), *(my(5.0) for _ in range(4)),
                 *(my(300.0) for _ in range(3)))
    open_now, opened = run_check(CHECK, ticks[:9])
    assert list(opened) == [7]  # collapsed in ticks 5, 6, 7
    assert open_now[0].since_seq == 5
    closed, _ = run_check(CHECK, ticks)
    assert closed == []


def test_the_gate_is_quiet_only_where_nothing_is_reported() -> None:
    """The gate (``quiet`` from the gauges alone) on a MySQL and a Redis series whose
    earlier rates sit on, between and below its LEVELS (1, 10, 100/s) and fall to 5 %-100 % of them,
    with a baseline floor between and on the levels: never quiet where ``evaluate``
    reports, and quiet where an idle source's jitter is below the floor (the case the
    levels are for)."""
    gate = CHECK.gate
    assert gate is not None
    peaks = (0.5, 1.0, 5.0, 10.0, 50.0, 100.0, 500.0)  # on, between and below the levels
    falls = (0.05, 0.3, 1.0)
    limits = [CHECK.thresholds(min_baseline_per_s=least, warning_ratio=ratio)
              for least in (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 150.0, 500.0, 1000.0)
              for ratio in (0.1, 0.3, 0.8)]
    tally = GateTally()
    for q_peak in peaks:
        for q_fall in falls:
            for ops_peak in peaks:
                for ops_fall in falls:
                    def both(qps: float, ops: float) -> NodeTick:
                        return node("primary", redis=RedisSample(role="master",  # type: ignore[arg-type]
                                                                 connected_clients=10),
                                    mysql=MysqlSample(gauges={"Threads_connected": 20}),
                                    rates=NodeRates(redis=RedisRates(ops_per_s=ops),
                                                    mysql=MysqlRates(qps=qps)))
                    w = Window(prim(*[both(q_peak, ops_peak)] * 5,
                                    both(q_peak * q_fall, ops_peak * ops_fall)))
                    judge_gate(CHECK, w, limits, tally,
                               f"{(q_peak, q_fall, ops_peak, ops_fall)}")
    assert not tally.hidden, tally.hidden[:3]
    # 7,848 of 9,387 when written
    assert tally.quiet > 0.8 * tally.silent, (tally.quiet, tally.silent)
    # a busy source holding its rate and an idle one falling to 0: quiet at the defaults
    w = Window(prim(*[rd(5000.0, qps=3.0)] * 5, rd(5000.0, qps=0.0)))
    assert gate.quiet(gate.measure(w), CHECK.thresholds())
    # a rate a hair below warning_ratio x baseline whose quotient rounds to the ratio
    # itself (29,951.999999999996 / 99,840 == 0.3): reported, so never quiet
    w = Window(prim(*[my(99840.0)] * 5, my(29951.999999999996)))
    t = CHECK.thresholds(warning_ratio=0.3)
    assert CHECK.evaluate(w, t) and not gate.quiet(gate.measure(w), t)
