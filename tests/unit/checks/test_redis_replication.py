"""redis_replication on INFO captured from real servers (tests/fixtures/redis/), on
synthetic offset series and on seed 002's numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from replmon.checks.redis_replication import CHECK, our_entry

from replmon.model.findings import Observation, Severity
from replmon.model.redis import RedisReplica, RedisSample, derive_redis_rates
from replmon.model.tick import NodeRates, NodeTick, Tick
from replmon.sources.redis_parse import build_redis_sample, parse_info
from replmon.testing.scenarios import replication, run_seed_scenario
from replmon.testing.synth import node, observe, run_check, status, tick

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "redis"
MIB = 1024 * 1024


def load(name: str, mono: float = 0.0) -> RedisSample:
    s = build_redis_sample(parse_info((FIXTURES / f"{name}.txt").read_bytes().decode()))
    return s.model_copy(update={"mono": mono})


def primary(cur: RedisSample, prev: RedisSample | None = None) -> NodeTick:
    return node("primary", redis=cur, rates=NodeRates(redis=derive_redis_rates(prev, cur)))


def replica(s: RedisSample) -> NodeTick:
    return node("replica", redis=s)


def ticks_of(*pairs: tuple[NodeTick, NodeTick]) -> list[Tick]:
    return [tick(i, primary=p, replica=r) for i, (p, r) in enumerate(pairs)]


def by_key(out: list[Observation]) -> dict[str, Observation]:
    return {o.key: o for o in out}


MASTER, REPLICA_UP = load("redis7.0_master"), load("redis7.0_replica_up")


def test_healthy_pair_is_quiet() -> None:
    assert observe(CHECK, ticks_of((primary(MASTER), replica(REPLICA_UP)))) == []


def test_link_down_with_the_master_dead() -> None:
    dead = RedisSample(status=status("unreachable", "connection refused"))
    (o,) = observe(CHECK, ticks_of((primary(dead), replica(load("redis7.0_replica_down")))))
    assert (o.node, o.key, o.severity) == ("replica", "link/down", Severity.CRITICAL)
    # #19: Redis prints master_last_io_seconds_ago:-1 with no link: unknown, said in words
    assert o.title == "replica link to 127.0.0.1:60401 down for 3 s (no I/O from the master)"
    assert o.numbers["link_down_since_s"] == 3 and o.numbers["last_io_seconds_ago"] is None
    assert "master's Redis does not answer" in o.cause


def test_link_down_with_the_master_up_blames_the_link() -> None:
    (o,) = observe(CHECK, ticks_of((primary(MASTER), replica(load("redis7.0_replica_down")))))
    # up until 3 s ago: the master or the network dropped it (a login that never worked,
    # masterauth, is the never-up case: test_redis_replication_advice.py)
    assert o.severity is Severity.CRITICAL and "broke 3 s ago" in o.cause
    assert "masterauth" in o.next_step


def test_diskless_full_sync_in_progress_on_both_sides() -> None:
    out = by_key(observe(CHECK, ticks_of((primary(load("redis7.0_master_fullsync")),
                                          replica(load("redis7.0_replica_fullsync"))))))
    link, full = out["link/sync"], out["full_resync"]
    assert link.severity is Severity.WARNING
    assert link.title == ("full sync from 127.0.0.1:60401 in progress: 144 KiB (total "
                          "unknown: diskless sync) received")
    assert link.numbers["sync_pct"] is None  # Redis printed 0.00 with the total unknown
    assert link.numbers["sync_read_bytes"] == 147503
    assert (full.node, full.severity) == ("primary", Severity.WARNING)
    assert full.title.startswith("full resync in progress: last fork blocked the master 0.5 ms")
    assert full.numbers["syncing_replicas"] == "127.0.0.1:44073"
    assert "a fork and an RDB transfer" in full.cause


def load_edited(name: str, old: str, new: str) -> RedisSample:
    """A real capture with one INFO line changed (the case it shows is named in the test)."""
    text = (FIXTURES / f"{name}.txt").read_bytes().decode()
    assert old in text
    return build_redis_sample(parse_info(text.replace(old, new)))


def test_a_full_sync_with_no_byte_for_25_s_is_stalled_not_in_progress() -> None:
    """#19: master_sync_last_io_seconds_ago was dropped, so a sync stuck for minutes read
    as one progressing. The real mid-sync capture with that line at 25 s."""
    stuck = load_edited("redis7.0_replica_fullsync", "master_sync_last_io_seconds_ago:0",
                        "master_sync_last_io_seconds_ago:25")
    out = by_key(observe(CHECK, ticks_of((primary(load("redis7.0_master_fullsync")),
                                          replica(stuck)))))
    link = out["link/sync"]
    assert link.severity is Severity.CRITICAL
    assert link.title.startswith("full sync from 127.0.0.1:60401 stalled: no data for 25 s")
    assert link.numbers["sync_last_io_seconds_ago"] == 25
    assert "repl-timeout" in link.cause


def test_a_replica_that_accepts_writes_is_flagged() -> None:
    """slave_read_only:0 on the real replica capture: writes there exist nowhere else."""
    open_ = load_edited("redis7.0_replica_up", "slave_read_only:1", "slave_read_only:0")
    assert open_.replica_read_only is False
    out = by_key(observe(CHECK, ticks_of((primary(MASTER), replica(open_)))))
    assert out["read_only"].severity is Severity.WARNING
    assert "replica-read-only no" in out["read_only"].title
    assert observe(CHECK, ticks_of((primary(MASTER), replica(REPLICA_UP)))) == []


def test_link_never_up_since_start_says_so() -> None:
    never = load_edited("redis7.0_replica_down", "master_link_down_since_seconds:3",
                        "master_link_down_since_seconds:-1")
    (o,) = observe(CHECK, ticks_of((primary(MASTER), replica(never))))
    assert o.title == ("replica link to 127.0.0.1:60401 down since the replica started "
                       "(never up) (no I/O from the master)")


def test_link_down_while_the_master_prepares_the_rdb_is_a_sync_not_an_outage() -> None:
    waiting = load("redis7.0_replica_down")  # diskless delay: link down, no sync flag yet
    link = by_key(observe(CHECK, ticks_of((primary(load("redis7.0_master_fullsync")),
                                           replica(waiting)))))["link/sync"]
    assert link.severity is Severity.WARNING and "master in wait_bgsave" in link.title


def test_sync_full_rising_is_a_full_resync_and_stays_up_for_the_hold() -> None:
    a, b = load("redis7.0_master_restarted", 0.0), load("redis7.0_master_maxmemory", 8.0)
    up = replica(load("redis7.0_replica_maxmemory"))
    first = (primary(a), up)
    resync = (primary(b, a), up)
    after = (primary(b, b.model_copy(update={"mono": 7.0})), up)
    ticks = ticks_of(first, resync, *[after] * 59)
    full = by_key(observe(CHECK, ticks[:2]))["full_resync"]
    assert full.title == ("1 full resync(s) in the last 60 s: last fork blocked the master "
                          "0.5 ms, master holds 1.6 MiB (0 % of RAM)")
    assert full.numbers["full_syncs"] == 1 and full.numbers["partial_syncs_refused"] == 1
    assert "repl-backlog-size 16 KiB" in full.cause and "refused 1 partial" in full.cause
    assert "full_resync" in by_key(observe(CHECK, ticks[:61]))  # 59 s later: still shown
    assert observe(CHECK, ticks_of(first, resync, *[after] * 61)) == []  # 61 s: gone


def test_a_restarted_master_counts_its_sync_full_since_start() -> None:
    old = load("redis7.0_master", 0.0)
    new = load("redis7.0_master_restarted", 5.0)  # new run_id: rates reset, sync_full 1
    out = by_key(observe(CHECK, ticks_of((primary(old), replica(REPLICA_UP)),
                                         (primary(new, old), replica(REPLICA_UP)))))
    assert out["full_resync"].numbers["full_syncs"] == 1


def test_first_tick_without_rates_reports_no_resync() -> None:
    assert "full_resync" not in by_key(observe(CHECK, ticks_of((primary(load(
        "redis7.0_master_maxmemory")), replica(load("redis7.0_replica_maxmemory"))))))


def test_seed_002_full_sync_of_a_master_at_85_pct_of_ram_is_critical() -> None:
    ticks, onset = replication.SEEDS[0].build()
    full = by_key(observe(CHECK, ticks))["full_resync"]
    assert full.severity is Severity.CRITICAL
    assert "master holds 14 GiB (85 % of RAM)" in full.title
    assert "copy-on-write" in full.cause
    quiet = observe(CHECK, ticks[:onset])
    assert quiet == []
    out = run_seed_scenario(replication.SEEDS[0])
    assert out.ticks_to_flag is not None and out.ticks_to_flag <= 3


def lag_tick(i: int, lag: int | None, backlog: int = 16 * MIB) -> Tick:
    off = 100 * MIB + i * MIB
    m = RedisSample(role="master", master_repl_offset=off, repl_backlog_size=backlog,
                    connected_replicas=1, replicas=[RedisReplica(
                        ip="10.0.0.2", port=6379, state="online" if lag is not None else
                        "send_bulk", offset=off - (lag or 0))])
    r = RedisSample(role="replica", master_host="10.0.0.1", master_port=6379, link_status="up")
    return tick(i, primary=primary(m), replica=replica(r))


def lags(values: list[int | None], **limits: Any) -> list[Observation]:
    out = observe(CHECK, [lag_tick(i, v) for i, v in enumerate(values)], **limits)
    return [o for o in out if o.key == "lag"]


def test_offset_lag_above_1_mib_and_growing_warns() -> None:
    (o,) = lags([2 * MIB, 3 * MIB, 3 * MIB, 4 * MIB, 5 * MIB])
    assert (o.node, o.severity) == ("replica", Severity.WARNING)
    assert o.title == "replica 5 MiB behind the master, growing 768 KiB/s (backlog 16 MiB)"
    assert o.numbers["lag_bytes"] == 5 * MIB


@pytest.mark.parametrize("values", [
    [2 * MIB] * 5,                               # above, but steady: keeping up
    [2 * MIB, 3 * MIB, MIB // 2, 4 * MIB, 5 * MIB],  # dipped under the threshold
    [2 * MIB, 3 * MIB, 4 * MIB, 5 * MIB],        # only 4 ticks of history
    [2 * MIB, 3 * MIB, None, 4 * MIB, 5 * MIB],  # not online for a tick
    [0, 100, 200, 300, 400],                     # growing, far below 1 MiB
])
def test_offset_lag_quiet_cases(values: list[int | None]) -> None:
    assert lags(values) == []


def test_offset_lag_beyond_the_backlog_is_critical_on_real_offsets() -> None:
    # redis-benchmark against a master: the replica acked 9,424 then 909,461 while the
    # master was at 909,461 then 2,703,959 (lag 0.86 -> 1.71 MiB, backlog 1 MiB).
    a, b = load("redis7.0_master_load_a", 0.0), load("redis7.0_master_load_b", 1.0)
    ticks = ticks_of((primary(a), replica(REPLICA_UP)), (primary(b, a), replica(REPLICA_UP)))
    (o,) = [x for x in observe(CHECK, ticks, lag_window=2, lag_warning_bytes=MIB // 2)
            if x.key == "lag"]
    assert o.severity is Severity.CRITICAL and o.numbers["lag_bytes"] == 1794498
    assert "forces a full resync" in o.cause


def test_our_replica_is_the_one_with_the_nearest_offset() -> None:
    m = RedisSample(replicas=[RedisReplica(ip="a", port=1, offset=10),
                              RedisReplica(ip="b", port=2, offset=500)])
    e = our_entry(m, RedisSample(repl_offset=480))
    assert e is not None and e.ip == "b"
    assert our_entry(RedisSample(), None) is None


@pytest.mark.parametrize("state", ["unreachable", "timeout", "auth"])
def test_replica_redis_not_readable_is_critical(state: str) -> None:
    dead = RedisSample(status=status(state, "no answer for 0.8 s", since=1_700_000_000.0))
    (o,) = observe(CHECK, [tick(3, primary=primary(MASTER), replica=replica(dead))])
    assert (o.key, o.severity) == ("link/unreadable", Severity.CRITICAL)
    assert o.title == f"replica Redis {state} for 3.0 s: cannot see its replication " \
                      f"(no answer for 0.8 s)"


def test_no_redis_on_the_replica_is_not_judged() -> None:
    absent = RedisSample(status=status("absent", "not configured"))
    assert observe(CHECK, [tick(1, replica=replica(absent))]) == []


def test_replica_that_became_a_master() -> None:
    (o,) = observe(CHECK, ticks_of((primary(MASTER), replica(load("redis7.0_standalone")))))
    assert o.severity is Severity.WARNING
    assert o.title == "replica's Redis is a master (0 replicas of its own): not replicating"


def test_replica_up_but_missing_from_the_masters_list() -> None:
    alone = load("redis7.0_standalone")  # a master with no replica at all
    (o,) = observe(CHECK, ticks_of((primary(alone), replica(REPLICA_UP))))
    assert (o.node, o.severity) == ("pair", Severity.WARNING)
    assert "lists 0 replicas, replication ids differ" in o.title
    other = MASTER.model_copy(update={"master_replid": "f" * 40})
    (o2,) = observe(CHECK, ticks_of((primary(other), replica(REPLICA_UP))))
    assert "replication ids differ" in o2.title and "lists 1 replicas" in o2.title


def test_opens_after_two_ticks() -> None:
    down = (primary(MASTER), replica(load("redis7.0_replica_down")))
    _, opened = run_check(CHECK, ticks_of(down, down, down))
    assert list(opened) == [1]
