"""writes_refused on synthetic ticks: each way a primary refuses writes opens at info
after 2 s and is critical once it has lasted fence_s (5 s), in seconds at any interval;
during a role change it stays info until switch_hold; what is normal (read_only on the
replica, noeviction far from maxmemory, an evicting cache at maxmemory) is quiet. The
live test (tests/live/test_writes_refused_live.py) makes real servers refuse."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from replmon.checks import writes_refused as wr

from replmon.engine import Engine
from replmon.model.findings import Finding, Severity
from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates
from replmon.model.redis import RedisRates, RedisSample
from replmon.model.tick import NodeRates, NodeTick, Tick
from replmon.testing.scenarios.writes import _mysql, _pair, _redis
from replmon.testing.synth import directed, node, oriented, series, status

pytestmark = pytest.mark.usefixtures("utc")


def worst_by_second(ticks: Sequence[Tick], **limits: object) -> dict[float, Severity]:
    """{seconds since the first tick: the worst writes_refused severity open}."""
    th = wr.CHECK.thresholds.model_validate(limits)
    eng = Engine([(wr.CHECK, th)])
    out: dict[float, Severity] = {}
    for t in ticks:
        fs = [f for f in eng.feed(t).open if f.check == "writes_refused"]
        if fs:
            out[round(t.wall - ticks[0].wall, 1)] = max(f.severity for f in fs)
    return out


def findings(ticks: Sequence[Tick]) -> list[Finding]:
    eng = Engine([(wr.CHECK, wr.CHECK.thresholds())])
    opened: list[Finding] = []
    for t in ticks:
        opened += eng.feed(t).opened
    return opened


def refusing(p: NodeTick, n: int, interval: float, healthy: int = 0) -> list[Tick]:
    """``healthy`` healthy seconds, then ``n`` seconds of the primary ``p``."""
    ok = _pair()
    pairs = [ok] * round(healthy / interval) + [(p, ok[1])] * round(n / interval)
    return series(pairs, interval=interval)


@pytest.mark.parametrize("interval", [0.5, 1.0, 2.0])
def test_read_only_left_on_is_info_after_2_s_and_critical_after_5_s(interval: float) -> None:
    p = node("primary", mysql=_mysql(replica=False, read_only="ON"), redis=_redis(master=True))
    worst = worst_by_second(refusing(p, 12, interval, healthy=4))
    first = min(worst)
    crit = min(s for s, sev in worst.items() if sev is Severity.CRITICAL)
    # the refusal begins at 4 s; opens once it has held 2 s (and two ticks), critical
    # once it has held 5 s (a tick stands for its interval, as the engine's holds count)
    assert 4 + 2 - interval <= first <= 4 + max(2, 2 * interval) - interval, worst
    assert worst[first] is Severity.INFO
    assert 4 + 5 - interval <= crit <= 4 + 5, worst


def test_read_only_in_the_servers_words_with_the_next_step() -> None:
    p = node("primary", mysql=_mysql(replica=False, read_only="ON"), redis=_redis(master=True))
    (f,) = findings(refusing(p, 10, 1.0))
    assert f.key == "mysql:read_only" and f.node == "primary" and f.given == "primary"
    assert f.title.startswith("db163 refuses writes: read_only=ON on the primary: every "
                              "write gets ERROR 1290 (HY000): The MariaDB server is running "
                              "with the --read-only option"), f.title
    assert "SET GLOBAL read_only=OFF" in f.next_step


def test_read_only_on_the_replica_and_a_quiet_primary_say_nothing() -> None:
    ok = _pair()  # the replica read_only=ON, replicating: normal
    assert findings(series([ok] * 20)) == []


def test_during_a_role_change_it_stays_info_until_switch_hold() -> None:
    """A switchover under way: db162 promoted for MySQL (db163 follows it) but still
    read_only (the runbook clears it last), Redis not moved yet: MySQL's and Redis's
    layers at odds. The refusal is part of that change for switch_hold (30 s), then
    critical."""
    a, b = directed("db162", "db163")
    b = b.model_copy(update={"mysql": b.mysql.model_copy(update={"variables": {
        **b.mysql.variables, "read_only": "ON"}})})
    ticks = oriented([directed("db163", "db163")] * 3 + [(a, b)] * 40)
    r = ticks[10].roles
    assert r is not None and r.at_odds(), "the layers must disagree"
    worst = worst_by_second(ticks)
    assert worst, "the promoted primary refuses writes"
    # (the refusal from 3 s; held 30 s at 32 s: a tick stands for its interval)
    assert all(sev is Severity.INFO for s, sev in worst.items() if s < 3 + 30 - 1), worst
    assert worst[max(worst)] is Severity.CRITICAL, worst
    eng = Engine([(wr.CHECK, wr.CHECK.thresholds())])
    for t in ticks[:10]:
        fs = eng.feed(t).open
    (f,) = fs
    assert f.node == "primary" and f.given == "replica" and "part of that event" in f.title


def test_max_connections_from_the_counters_and_from_replmons_own_1040() -> None:
    full = node("primary", mysql=_mysql(replica=False, connected=151, refused=0),
                redis=_redis(master=True))
    (f,) = findings(refusing(full, 8, 1.0))
    assert f.key == "mysql:connections" and "151 of max_connections 151 connected" in f.title
    assert "ERROR 1040 (HY000): Too many connections" in f.title
    own = node("primary", mysql=MysqlSample(status=status(
        "error", "MySQL error: monitor@db163:3306: Too many connections (1040)")),
        redis=_redis(master=True))
    (f,) = findings(refusing(own, 8, 1.0))
    assert f.key == "mysql:connections" and f.numbers["own_connection_refused"] is True
    assert "(replmon's own too)" in f.title


def test_offline_mode_refusing_replmon_too_is_the_refusal_not_a_hiccup() -> None:
    own = node("primary", mysql=MysqlSample(status=status(
        "error", "replmon@db163:3306: The server is currently in offline mode (3032)")),
        redis=_redis(master=True))
    worst = worst_by_second(refusing(own, 8, 1.0))
    assert worst and worst[max(worst)] is Severity.CRITICAL, worst
    (f,) = findings(refusing(own, 8, 1.0))
    assert f.key == "mysql:read_only" and f.numbers["own_connection_refused"] is True
    assert ("offline_mode=ON on the primary: every write gets ERROR 3032 (HY000): The "
            "server is currently in offline mode") in f.title, f.title
    assert "(replmon's own connection too)" in f.title


def test_writes_stalled_on_a_full_disk_on_the_primary_only() -> None:
    """Sessions "Waiting for someone to free space" hang their writes: critical on the
    primary after 5 s, with the minute the server waits before it looks again; the same
    on the replica is its applier's business (lag), not a refused write."""
    def stalled(replica: bool) -> MysqlSample:
        return _mysql(replica=replica).model_copy(update={"space_waits": 3,
                                                          "space_wait_s": 14})
    p = node("primary", mysql=stalled(False), redis=_redis(master=True))
    worst = worst_by_second(refusing(p, 10, 1.0))
    assert worst and worst[max(worst)] is Severity.CRITICAL, worst
    (f,) = findings(refusing(p, 10, 1.0))
    assert f.key == "mysql:disk_full" and f.numbers["sessions_waiting"] == 3
    assert f.title == ('db163 refuses writes: 3 sessions stalled on a full disk for up to '
                       '14 s ("Waiting for someone to free space"): writes hang, they do '
                       'not fail'), f.title
    assert "up to 60 s after space is freed" in f.next_step
    ok = _pair()
    r = node("replica", mysql=stalled(True), redis=_redis(master=False))
    assert findings(series([(ok[0], r)] * 12)) == []


def test_a_sample_that_failed_neither_ends_nor_restarts_the_refusal() -> None:
    """NOREPLICAS for 10 s at 0.5 s, one Redis INFO timed out every 2 s once the finding
    is open (a loaded machine): it is critical once the refusal has lasted fence_s, as
    without the gaps (it restarted its fence at each gap, and stayed info)."""
    bad = _redis(master=True, min_replicas=(2, 10), good_replicas=1)
    lost = RedisSample(status=status("timeout", "redis@db163:6379: timed out"))
    ok = _pair()
    pairs = [ok] * 4 + [((node("primary", mysql=_mysql(replica=False),
                                redis=lost if i > 5 and i % 4 == 3 else bad)), ok[1])
                        for i in range(20)]
    worst = worst_by_second(series(pairs, interval=0.5))
    assert worst and worst[max(worst)] is Severity.CRITICAL, worst


def test_refusals_counted_since_they_began_from_errorstats() -> None:
    """NOREPLICAS counted by INFO errorstats: 12 refused a second for 8 s."""
    def at(i: int) -> NodeTick:
        r = _redis(master=True, min_replicas=(2, 10), good_replicas=1,
                   error_counts={"NOREPLICAS": 12 * i})
        return node("primary", mysql=_mysql(replica=False), redis=r,
                    rates=NodeRates(redis=RedisRates(errors_by_kind_per_s={
                        "NOREPLICAS": 12.0} if i else {}), mysql=MysqlRates()))
    ok = _pair()
    ticks = series([(at(i), ok[1]) for i in range(9)])
    eng = Engine([(wr.CHECK, wr.CHECK.thresholds())])
    last: list[Finding] = []
    for t in ticks:
        last = eng.feed(t).open
    (f,) = last
    assert f.key == "redis:noreplicas" and f.severity is Severity.CRITICAL
    assert "NOREPLICAS Not enough good replicas to write" in f.title
    assert "1 good replicas of min-replicas-to-write 2" in f.title
    assert f.numbers["refused"] == 96 and f.numbers["refused_per_s"] == 12.0, f.numbers
    assert "96 refused since it began, 12.0/s now" in f.title


@pytest.mark.parametrize(("sample", "key"), [
    (RedisSample(status=status("ok"), role="master", used_memory=100, maxmemory=100,
                 maxmemory_policy="noeviction"), "redis:oom"),
    (RedisSample(status=status("ok"), role="master", rdb_last_bgsave_status="err",
                 stop_writes_on_bgsave_error=True, save_points="3600 1"), "redis:misconf"),
    (RedisSample(status=status("ok"), role="master", aof_enabled=True,
                 aof_last_write_status="err"), "redis:misconf"),
])
def test_each_redis_refusal(sample: RedisSample, key: str) -> None:
    p = node("primary", mysql=_mysql(replica=False), redis=sample)
    (f,) = findings(refusing(p, 8, 1.0))
    assert f.key == key, f.title


@pytest.mark.parametrize("sample", [
    # noeviction far from maxmemory; a cache evicting at maxmemory; no save points; the
    # BGSAVE failed but stop-writes-on-bgsave-error is off
    RedisSample(status=status("ok"), role="master", used_memory=10, maxmemory=100,
                maxmemory_policy="noeviction"),
    RedisSample(status=status("ok"), role="master", used_memory=100, maxmemory=100,
                maxmemory_policy="allkeys-lru"),
    RedisSample(status=status("ok"), role="master", rdb_last_bgsave_status="err",
                stop_writes_on_bgsave_error=True, save_points=""),
    RedisSample(status=status("ok"), role="master", rdb_last_bgsave_status="err",
                stop_writes_on_bgsave_error=False, save_points="3600 1"),
    RedisSample(status=status("ok"), role="master", min_replicas=(1, 10), good_replicas=1),
])
def test_what_refuses_nothing_is_quiet(sample: RedisSample) -> None:
    p = node("primary", mysql=_mysql(replica=False), redis=sample)
    assert findings(refusing(p, 10, 1.0)) == []


def test_no_redis_master_is_readonly() -> None:
    ok = _pair()
    both = (ok[0].model_copy(update={"redis": _redis(master=False)}), ok[1])
    (f,) = findings(series([both] * 8))
    assert f.key == "redis:readonly" and "READONLY You can't write against a read only " \
        "replica" in f.title


def test_oom_is_one_incident_under_redis_at_its_memory_ceiling() -> None:
    """Redis at maxmemory with noeviction: memory_ceiling's finding is the cause, the
    refused writes its consequence, one incident (at 160x50 they were two criticals)."""
    from replmon.checks import memory_ceiling

    from replmon.model.incidents import causality, incidents_of
    from replmon.testing.scenarios.writes import oom

    ticks, _ = oom()
    checks = [(c.CHECK, c.CHECK.thresholds()) for c in (memory_ceiling, wr)]
    eng = Engine(checks)
    updates = [(t.wall, eng.feed(t).open) for t in ticks]
    (inc,) = incidents_of(updates, causality(checks))
    assert [(f.check, f.key) for f in inc.roots] == [("memory_ceiling", "redis_memory")]
    assert [(f.check, f.key) for f in inc.consequences] == [("writes_refused", "redis:oom")]


def test_a_sample_that_failed_before_the_finding_opened_keeps_its_hold() -> None:
    """No Redis master (both nodes replicas: READONLY), and one replica INFO in three
    timed out from the start (a loaded machine; the Valkey lab's test missed its bound so):
    the refusal opens once it has held open_after, counted across the gaps (the engine
    forgot it at each gap, and it never opened)."""
    ok = _pair()
    lost = RedisSample(status=status("timeout", "redis@db162:6379: timed out"))
    both = ok[0].model_copy(update={"redis": _redis(master=False)})
    pairs = [(both, ok[1].model_copy(update={"redis": lost}) if i % 3 == 2 else ok[1])
             for i in range(16)]
    worst = worst_by_second(series(pairs, interval=0.5))
    assert worst and min(worst) <= 2.5, worst


def test_a_refusal_is_not_carried_past_carry_s() -> None:
    """The replica's INFO lost for good after 1 s of READONLY: what was seen is carried
    CARRY_S, then the refusal is not known any more (source_health says why)."""
    ok = _pair()
    lost = RedisSample(status=status("timeout", "redis@db162:6379: timed out"))
    both = ok[0].model_copy(update={"redis": _redis(master=False)})
    pairs = [(both, ok[1])] * 2 + [(both, ok[1].model_copy(update={"redis": lost}))] * 20
    ticks = series(pairs, interval=0.5)
    eng = Engine([(wr.CHECK, wr.CHECK.thresholds())])
    seen = [t.wall - ticks[0].wall for t in ticks
            if any(cid == "writes_refused" for cid, _ in eng.observe(t))]
    assert seen and max(seen) <= 1.0 + wr.CARRY_S, seen
