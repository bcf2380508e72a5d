"""derive_redis_rates on real captures. The two "load" captures were taken from
one master about a second apart under redis-benchmark; their capture times
(tests/fixtures/redis/README.md) stand in for the monotonic clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.model.base import SourceState, SourceStatus
from replmon.model.redis import RedisSample, derive_redis_rates, replica_lag_bytes
from replmon.sources.redis_parse import build_redis_sample, parse_info

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "redis"

# capture times (date +%s.%N just before each redis-cli INFO), see the README
T_LOAD_A = 1795389005.766447585
T_LOAD_B = 1795389006.780068818
T_RESTARTED = 1795389025.491461803
T_MAXMEMORY = 1795389033.661253236


def sample(name: str, mono: float) -> RedisSample:
    s = build_redis_sample(parse_info((FIXTURES / name).read_bytes().decode()))
    return s.model_copy(update={"mono": mono, "wall": mono})


def test_rates_under_benchmark_load_match_hand_computation() -> None:
    a = sample("redis7.0_master_load_a.txt", T_LOAD_A)
    b = sample("redis7.0_master_load_b.txt", T_LOAD_B)
    r = derive_redis_rates(a, b)
    dt = 1.013621233  # 006.780068818 - 005.766447585
    assert r.dt_s == pytest.approx(dt)
    assert r.reset is None
    assert r.ops_per_s == pytest.approx((127356 - 70746) / dt)  # ≈ 55849 commands/s
    assert r.ops_per_s == pytest.approx(55849.3, abs=0.1)
    assert r.connections_per_s == pytest.approx((627 - 476) / dt)
    assert r.hits_per_s == pytest.approx((20020 - 10481) / dt)
    assert r.misses_per_s == 0.0
    assert r.hit_pct == 100.0
    assert r.net_in_bytes_per_s == pytest.approx((3825003 - 1687045) / dt)
    assert r.net_out_bytes_per_s == pytest.approx((3632393 - 1391343) / dt)
    assert r.evicted_per_s == 0.0
    assert r.expired_per_s == 0.0
    assert r.rejected_connections_per_s == 0.0
    assert r.errors_per_s == 0.0
    assert (r.full_syncs, r.partial_syncs_ok, r.partial_syncs_err) == (0, 0, 0)
    # replica acked 909461 while the master was at 2703959: a gauge from b alone
    assert r.replica_lag_bytes == {"127.0.0.1:44073": 2703959 - 909461}


def test_evictions_and_resyncs_past_the_memory_ceiling() -> None:
    a = sample("redis7.0_master_restarted.txt", T_RESTARTED)
    b = sample("redis7.0_master_maxmemory.txt", T_MAXMEMORY)
    r = derive_redis_rates(a, b)
    dt = T_MAXMEMORY - T_RESTARTED
    assert r.reset is None
    assert r.evicted_per_s == pytest.approx(57965 / dt)
    assert r.ops_per_s == pytest.approx((60023 - 6) / dt)
    assert (r.full_syncs, r.partial_syncs_ok, r.partial_syncs_err) == (1, 1, 1)
    assert r.hit_pct is None  # no lookups at all in the interval
    assert r.replica_lag_bytes == {"127.0.0.1:44073": 0}


def test_restart_gives_reset_and_no_rates() -> None:
    a = sample("redis7.0_master_load_b.txt", 100.0)  # run_id 6762…, uptime 10
    b = sample("redis7.0_master_restarted.txt", 115.0)  # run_id 40de…, uptime 6
    r = derive_redis_rates(a, b)
    assert r.reset == "restart"
    assert r.dt_s == 15.0
    rates = r.model_dump(exclude={"dt_s", "reset", "replica_lag_bytes",
                                  "errors_by_kind_per_s"})
    assert all(v is None for v in rates.values()), rates
    assert r.errors_by_kind_per_s == {}
    assert r.replica_lag_bytes == {"127.0.0.1:44073": 84 - 70}  # the gauge still shows


def test_lower_uptime_alone_counts_as_restart() -> None:
    a = sample("redis7.0_master_load_b.txt", 100.0)
    b = a.model_copy(update={"mono": 101.0, "uptime_s": 1})
    assert derive_redis_rates(a, b).reset == "restart"


def test_resetstat_gives_no_rates_never_negative() -> None:
    a = sample("redis7.0_master_load_b.txt", 100.0)
    zeroed = {name: 0 for name in a.counters}
    b = a.model_copy(update={"mono": 101.0, "uptime_s": 11, "counters": zeroed})
    r = derive_redis_rates(a, b)
    assert r.reset == "resetstat"
    assert r.ops_per_s is None
    assert r.full_syncs is None


def test_no_previous_or_failed_samples_give_no_rates() -> None:
    b = sample("redis7.0_master_load_b.txt", 100.0)
    assert derive_redis_rates(None, b).ops_per_s is None
    assert derive_redis_rates(None, b).replica_lag_bytes == {"127.0.0.1:44073": 1794498}
    failed = RedisSample(status=SourceStatus(state=SourceState.TIMEOUT), wall=99.0, mono=99.0)
    assert derive_redis_rates(failed, b).ops_per_s is None
    assert derive_redis_rates(b, failed) == derive_redis_rates(None, failed)
    assert derive_redis_rates(b, failed).replica_lag_bytes == {}


def test_time_not_advancing_gives_no_rates() -> None:
    a = sample("redis7.0_master_load_a.txt", 100.0)
    b = sample("redis7.0_master_load_b.txt", 100.0)
    assert derive_redis_rates(a, b).ops_per_s is None


def test_replica_lag_only_for_online_replicas() -> None:
    s = sample("redis7.0_master_fullsync.txt", 1.0)  # replica still in wait_bgsave
    assert replica_lag_bytes(s) == {"127.0.0.1:44073": None}
    s = sample("redis4.0.10_cluster_master_2replicas.txt", 1.0)
    assert replica_lag_bytes(s) == {"172.16.35.76:8203": 14, "172.16.35.77:8203": 14}
    s = sample("redis6.2.5_master_ipv6_replica.txt", 1.0)
    assert replica_lag_bytes(s) == {"[::1]:6380": 0}
    assert replica_lag_bytes(sample("redis7.0_replica_up.txt", 1.0)) == {}
