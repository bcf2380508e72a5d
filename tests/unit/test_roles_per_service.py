"""Roles per service (#51): each of MySQL, Redis and DRBD has its own primary; services
that move together form groups; nodes are told apart by identity, never by name.

On synthetic ticks oriented as the collector orients them (an Orienter per run): Redis
failed over alone is a settled state under Sentinel's default groups and a half-done
change when it should move with MySQL; every check judges its own service in that
service's direction; two nodes with one name are followed through a switchover as two
named ones are. tests/live/test_roles_per_service_live.py does it on real servers."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from replmon.checks import redis_replication, roles, two_primaries
from test_roles import AS_GIVEN, MID, MYSQL_ONLY, SWITCHED, A, B, mysql, pair

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.errors import ConfigError
from replmon.model.findings import Finding, Severity
from replmon.model.roles import LAYERS, Group, default_groups, parse_groups
from replmon.model.sentinel import SentinelSample, SentinelSwitch
from replmon.model.tick import NodeTick, Tick
from replmon.output.nagios import CheckSummary, render_json, render_text
from replmon.output.roles import service_roles
from replmon.resolve import resolve, together
from replmon.roles import Orienter
from replmon.testing.synth import T0, gate_hides, run_check, status

pytestmark = pytest.mark.usefixtures("utc")

SENTINEL_GROUPS = default_groups(sentinel=True)
REDIS_ONLY = pair(mysql(A, read_only=False), mysql(B, follows=A, read_only=True),
                  "replica", "master")
"""MySQL as given (db163 the primary), Redis failed over: db162 its master."""
BOTH_MASTERS = pair(mysql(A, read_only=False), mysql(B, follows=A, read_only=True),
                    "master", "master")
"""The old Redis master back, still a master, before Sentinel makes it a replica."""


def _caught_up(n: NodeTick) -> NodeTick:
    """``n`` with its channels saying lag 0 (test_roles' say nothing of it)."""
    chans = [c.model_copy(update={"seconds_behind": 0}) for c in n.mysql.replication]
    return n.model_copy(update={"mysql": n.mysql.model_copy(update={"replication": chans})})


def ticks(states: Sequence[tuple[NodeTick, NodeTick]], *, groups: Sequence[Group] = (LAYERS,),
          sentinel: Sequence[SentinelSample | None] | None = None,
          interval: float = 1.0) -> list[Tick]:
    """Ticks as the collector makes them from the nodes as given: oriented by one
    Orienter with ``groups``, each with its Sentinel sample."""
    o = Orienter(groups)
    out = []
    for i, (a, b) in enumerate((_caught_up(a), _caught_up(b)) for a, b in states):
        wall = T0 + i * interval
        s = sentinel[i] if sentinel is not None else None
        p, r, roles_ = o.orient(a, b, wall, s)
        out.append(Tick(seq=i, interval=interval, wall=wall, mono=i * interval,
                        due_mono=i * interval, slot=i, primary=p, replica=r, roles=roles_,
                        sentinel=s))
    return out


def engine_run(ts: Sequence[Tick], settings: dict[str, dict[str, object]] | None = None
               ) -> tuple[list[Finding], list[Finding]]:
    """(every finding that opened, the findings open at the end) of all the checks."""
    eng = build_engine(settings, entry_points=False)
    opened: list[Finding] = []
    upd = None
    for t in ts:
        upd = eng.feed(t)
        opened += upd.opened
    assert upd is not None
    return opened, upd.open


def test_the_groups_as_configured_and_by_default() -> None:
    assert default_groups(sentinel=False) == (("mysql", "redis", "drbd"),)
    assert SENTINEL_GROUPS == (("mysql", "drbd"), ("redis",))
    assert parse_groups(["Redis", "mysql"]) == (("mysql", "redis"), ("drbd",))
    assert parse_groups([["drbd", "mysql"], ["redis"]]) == (("mysql", "drbd"), ("redis",))
    for bad, why in ((["mysql", "mysql"], "named twice"), (["postgres"], "unknown service"),
                     ([], "list of services"), ("mysql", "list of services")):
        with pytest.raises(ValueError, match=why):
            parse_groups(bad)
    cfg = build_config({"primary": {"host": "a"}, "replica": {"host": "b"},
                        "roles": {"together": ["mysql", "redis"]}})
    assert together(cfg) == (("mysql", "redis"), ("drbd",))
    with pytest.raises(ConfigError, match=r"roles\.together: .*unknown service 'pg'"):
        build_config({"primary": {"host": "a"}, "replica": {"host": "b"},
                      "roles": {"together": ["pg"]}})
    # the default follows the Sentinel: Redis on its own when one is configured
    cfg = build_config({"primary": {"host": "a"}, "replica": {"host": "b"},
                        "sentinel": {"host": "s"}})
    assert resolve(cfg).together == SENTINEL_GROUPS


def test_redis_failed_over_alone_under_sentinel_is_a_settled_state() -> None:
    """Redis's primary is db162, MySQL's db163: each judged in its own direction, one
    info event for the change and nothing else, the pair still oriented by MySQL."""
    ts = ticks([AS_GIVEN] * 5 + [REDIS_ONLY] * 60, groups=SENTINEL_GROUPS)
    last = ts[-1]
    assert last.primary.name == A and last.roles is not None and last.roles.since is None
    redis = last.roles.layer("redis")
    assert redis is not None and redis.flipped and redis.held == B and redis.previous == A
    assert redis.changed == T0 + 5 and last.roles.at_odds() == []
    # the tick as Redis sees it: db162 the primary; MySQL's as it is
    rt = last.oriented("redis")
    assert (rt.primary.name, rt.replica.name, rt.primary.role) == (B, A, "primary")
    assert last.oriented("mysql") is last
    assert last.service_role(last.primary, "redis") == "replica"
    assert last.service_role(last.primary, "mysql") == "primary"
    opened, open_ = engine_run(ts)
    assert [(f.check, f.severity, f.key) for f in opened] == [
        ("roles", Severity.INFO, f"redis:{B}")], [(f.check, f.title) for f in opened]
    (event,) = open_
    assert event.title == (f"{B} is now the Redis primary (Redis since 22:13:25); {A} "
                           f"replicates from it; MySQL stays on {A}"), event.title
    # what the old code said of the same ticks: a replica's Redis that is a master
    assert run_check(redis_replication.CHECK, ts)[0] == []


def test_redis_failed_over_alone_when_it_moves_with_mysql_is_half_done() -> None:
    """[roles] together = ["mysql", "redis"]: the same ticks are a change half done, a
    warning after the hold and critical after critical_after."""
    together = parse_groups(["mysql", "redis"])
    ts = ticks([AS_GIVEN] * 5 + [REDIS_ONLY] * 130, groups=together)
    assert ts[-1].roles is not None and [lr.layer for lr in ts[-1].roles.at_odds()] == \
        ["redis"]
    (f,), _ = run_check(roles.CHECK, ts[:30])
    assert f.severity is Severity.WARNING and f.key == "half_done"
    assert f.title.startswith("roles half done for") and f"Redis: {B} is the primary" in \
        f.title, f.title
    (f,), _ = run_check(roles.CHECK, ts)
    assert f.severity is Severity.CRITICAL
    # and a MySQL-only switchover with Sentinel's groups, but MySQL and Redis together
    ts = ticks([AS_GIVEN] * 5 + [MYSQL_ONLY] * 30, groups=together)
    (f,), _ = run_check(roles.CHECK, ts)
    assert f.severity is Severity.WARNING and "Redis: db163 is the primary" in f.title


def sentinel(wall: float, master: str, given: str, *, switch_at: float | None = None,
             state: str = "", timeout_s: float = 180.0) -> SentinelSample:
    sw = None if switch_at is None else SentinelSwitch(
        wall=switch_at, old="10.0.0.3:6379", new="10.0.0.2:6379", old_node=A,
        new_node=master, epoch=3)
    return SentinelSample(status=status("ok"), wall=wall, name="shop",
                          master="10.0.0.2:6379", master_node=master, master_given=given,
                          flags=("master",), config_epoch=3, failover_state=state,
                          last_switch=sw, failover_timeout_s=timeout_s,
                          role_reported_s=wall - (switch_at or wall))


def test_a_sentinel_failover_settling_is_one_event_not_two_primaries() -> None:
    """The old master back and still a master for 20 s, within failover-timeout after
    Sentinel promoted db162: the roles event's (info), not two_primaries' critical;
    the same 20 s with no Sentinel doing anything are critical."""
    states = [AS_GIVEN] * 5 + [REDIS_ONLY] * 5 + [BOTH_MASTERS] * 20 + [REDIS_ONLY] * 10
    walls = [T0 + i for i in range(len(states))]
    busy = [None] * 5 + [sentinel(w, B, "replica", switch_at=T0 + 5) for w in walls[5:]]
    ts = ticks(states, groups=SENTINEL_GROUPS, sentinel=busy)
    opened, open_ = engine_run(ts)
    assert [f for f in opened if f.severity > Severity.INFO] == [], \
        [(f.check, f.title) for f in opened if f.severity > Severity.INFO]
    changing = [f for f in opened if f.key == "half_done"]
    assert changing and changing[0].title.startswith("Redis changing for"), changing
    assert re.search(r"; Sentinel promoted db162 \d+ s ago \(failover-timeout 180 s\)$",
                     changing[0].title), changing[0].title
    (event,) = [f for f in open_ if f.check == "roles"]
    assert event.title == f"Sentinel promoted {B}'s Redis at 22:13:25, epoch 3; MySQL " \
        f"stays on {A}", event.title
    # past failover-timeout (here 10 s): two masters are two primaries again
    late = [None] * 5 + [sentinel(w, B, "replica", switch_at=T0 + 5, timeout_s=10.0)
                         for w in walls[5:]]
    opened, _ = engine_run(ticks(states, groups=SENTINEL_GROUPS, sentinel=late))
    assert sorted((f.check, f.key, f.severity) for f in opened
                  if f.severity > Severity.INFO) == [
        ("redis_replication", "link/master", Severity.WARNING),  # the old master not following
        ("two_primaries", "redis", Severity.CRITICAL)]
    # and with no Sentinel at all: critical from the 3rd second both are masters
    _, opened_at = run_check(two_primaries.CHECK, ticks(states, groups=SENTINEL_GROUPS))
    assert [(seq, [f.severity for f in fs]) for seq, fs in opened_at.items()] == \
        [(12, [Severity.CRITICAL])]


def test_how_long_a_direction_has_held_comes_from_the_servers() -> None:
    """A session started long after the change: the replica's channel connected for an
    hour and its Redis link up 125 s say how long each direction has held."""
    a, b = AS_GIVEN
    ch = b.mysql.replication[0].model_copy(update={"connected_s": 3600})
    b = b.model_copy(update={
        "mysql": b.mysql.model_copy(update={"replication": [ch]}),
        "redis": b.redis.model_copy(update={"link_status": "up", "master_link_age_s": 125})})
    ts = ticks([(a, b)] * 3)
    r = ts[-1].roles
    assert r is not None
    my, rd = r.layer("mysql"), r.layer("redis")
    assert my is not None and rd is not None
    assert my.since == T0 - 3600 and rd.since == T0 - 125
    assert my.held_how == f"{B}'s channel connected for 1 h"
    assert rd.held_how == f"{B}'s link up 2 min 5 s"
    # at the third tick (2 s on): held 2 s longer than the servers said at the first
    got = {s.service: (s.primary, s.replica, round(s.held_s)) for s in service_roles(ts[-1])}
    assert got == {"mysql": (A, B, 3602), "redis": (A, B, 127)}
    # check's roles line and JSON
    summary = CheckSummary()
    for t in ts:
        summary.on_tick(t, None)
    run = summary.result(len(ts))
    text = render_text(run, table=False)
    assert text.splitlines()[1] == (
        f"roles: MySQL {A} → {B} for 1 h ({B}'s channel connected for 1 h); "
        f"Redis {A} → {B} for 2 min 7 s ({B}'s link up 2 min 5 s)"), text
    assert '"held_s": 3602.0' in render_json(run)


def test_two_nodes_with_one_name_are_followed_as_two_named_ones() -> None:
    """Both nodes called 127.0.0.1 (two nodes on one host, named by hand alike in an old
    recording): a switchover, a failover back and a rejoin give the same roles, the same
    events and the findings of each node apart, as db163 and db162 do."""
    states = [AS_GIVEN] * 5 + [MID] + [SWITCHED] * 20 + [AS_GIVEN] * 20

    def renamed(a: NodeTick, b: NodeTick) -> tuple[NodeTick, NodeTick]:
        return (a.model_copy(update={"name": "127.0.0.1"}),
                b.model_copy(update={"name": "127.0.0.1"}))

    named, alike = ticks(states), ticks([renamed(*s) for s in states])
    assert [t.primary.given for t in named] == [t.primary.given for t in alike]
    assert [t.primary.given for t in alike][6] == "replica"  # followed the switchover
    opened_named, _ = engine_run(named)
    opened_alike, _ = engine_run(alike)
    assert [(f.check, f.given, f.severity, f.since_seq) for f in opened_named] == \
        [(f.check, f.given, f.severity, f.since_seq) for f in opened_alike]
    assert [f.since_seq for f in opened_named if f.check == "roles"] == [6, 26]


def test_names_that_tell_nodes_apart() -> None:
    one_host = {"primary": {"host": "127.0.0.1", "mysql": {"port": 13306},
                            "redis": {"port": 16379}},
                "replica": {"host": "127.0.0.1", "mysql": {"port": 13307},
                            "redis": {"port": 16380}}}
    pair_ = resolve(build_config(one_host))
    assert (pair_.primary.name, pair_.replica.name) == ("127.0.0.1:13306", "127.0.0.1:13307")
    # MySQL off: by Redis's port; a name given is kept
    no_mysql = {k: {**v, "mysql": {"enabled": False}} for k, v in one_host.items()}
    no_mysql["primary"]["name"] = "127.0.0.1"
    pair_ = resolve(build_config(no_mysql))
    assert (pair_.primary.name, pair_.replica.name) == ("127.0.0.1", "127.0.0.1:16380")
    # two names given alike are refused, whatever their case
    same = {k: {**v, "name": n} for (k, v), n in zip(one_host.items(), ("db1", "DB1"),
                                                       strict=True)}
    with pytest.raises(ConfigError, match="both named 'db1': give them names that differ"):
        build_config(same)
    # distinct hosts keep their names
    pair_ = resolve(build_config({"primary": {"host": "db163"}, "replica": {"host": "db162"}}))
    assert (pair_.primary.name, pair_.replica.name) == ("db163", "db162")


def test_the_gates_hide_nothing_of_a_service_moving_alone() -> None:
    """roles' and redis_replication's gates against their evaluate on these windows
    (each threshold from 1/10 to 10 times its default): where a gate is quiet, evaluate
    sees nothing."""
    states = [AS_GIVEN] * 5 + [REDIS_ONLY] * 5 + [BOTH_MASTERS] * 20 + [REDIS_ONLY] * 10
    walls = [T0 + i for i in range(len(states))]
    busy = [None] * 5 + [sentinel(w, B, "replica", switch_at=T0 + 5, timeout_s=12.0)
                         for w in walls[5:]]
    cases = [ticks(states, groups=SENTINEL_GROUPS, sentinel=busy),
             ticks(states, groups=parse_groups(["mysql", "redis"])),
             ticks([AS_GIVEN] * 5 + [REDIS_ONLY] * 60, groups=SENTINEL_GROUPS)]
    for check in (roles.CHECK, redis_replication.CHECK):
        limits = [{}] + [{k: v * f} for k, v in check.thresholds().model_dump().items()
                         if isinstance(v, float) and v > 0 and k not in (
                             "open_after", "close_after") for f in (0.1, 10.0)]
        seen = 0
        for ts in cases:
            hidden, n = gate_hides(check, ts, limits)
            assert not hidden, (check.id, hidden[:3])
            seen += n
        assert seen, check.id  # evaluate saw something somewhere: the gates were tried


def test_a_service_unread_for_a_tick_mid_change_is_no_news_that_it_moved() -> None:
    """MySQL moved to db162, Redis not yet, and for three ticks Redis cannot be read on
    either node (timeouts on a busy machine): still half done, not a completed change
    that closes and opens again when Redis is read."""
    from replmon.model.redis import RedisSample

    unread = RedisSample(status=status("timeout", "no reply within 0.4 s"))
    blind = tuple(n.model_copy(update={"redis": unread}) for n in MYSQL_ONLY)
    ts = ticks([AS_GIVEN] * 5 + [MYSQL_ONLY] + [blind] * 3 + [SWITCHED] * 10)  # type: ignore[list-item]
    r = ts[7].roles
    assert r is not None and [lr.layer for lr in r.at_odds()] == ["redis"]
    _, opened_at = run_check(roles.CHECK, ts)
    # half done from MySQL's move (tick 5), said after settle (2 s): tick 7; the unread
    # ticks restart no clock
    assert [(seq, f.key) for seq, fs in opened_at.items() for f in fs] == [(7, "half_done"),
                                                                           (9, B)]


def test_a_node_rejoining_as_a_master_for_a_tick_does_not_reopen_the_change() -> None:
    """db162 promoted (MySQL and Redis); then db163, the old primary restarted, comes
    back: for a tick its Redis is a master and its MySQL follows no one (a rejoin before
    it is re-pointed), then it follows db162. The change stays one finding: a
    disagreement shorter than ``settle`` (2 s) neither closes it nor opens it again
    (seen live: the one-machine test's failover opened twice)."""
    rejoining = pair(mysql(A, read_only=False), mysql(B, read_only=False), "master", "master")
    ts = ticks([AS_GIVEN] * 5 + [SWITCHED] * 5 + [rejoining] + [SWITCHED] * 6)
    r = ts[10].roles
    assert r is not None and r.at_odds(), "the rejoining tick must disagree"
    _, opened_at = run_check(roles.CHECK, ts)
    assert [(seq, f.key) for seq, fs in opened_at.items() for f in fs] == [(5, B)]
    # a disagreement that lasts (4 ticks at 1 s, past settle) is said, and the change
    # after it is a finding again
    ts = ticks([AS_GIVEN] * 5 + [SWITCHED] * 5 + [rejoining] * 4 + [SWITCHED] * 6)
    _, opened_at = run_check(roles.CHECK, ts)
    keys = [f.key for fs in opened_at.values() for f in fs]
    assert keys[0] == B and "half_done" in keys, keys
