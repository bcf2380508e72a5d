"""Roles follow the servers: each layer's direction read off the samples, the
orientation kept from tick to tick, the roles check's event and half-done warning, and
errant_writes after switchovers (tests/live/test_roles_live.py does it on real servers)."""

from __future__ import annotations

from typing import Any

import pytest
from replmon.checks import errant_writes, roles

from replmon.model.findings import Severity
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeTick, Tick
from replmon.roles import Orienter, mysql_says, redis_says
from replmon.testing.synth import T0, gate_hides, node, run_check, status

A, B = "db163", "db162"


SID = {A: 163, B: 162}

pytestmark = pytest.mark.usefixtures("utc")  # times in titles: tests/conftest.py


def mysql(name: str, *, follows: str | None = None, read_only: bool | None = None,
          ok: bool = True, connected: bool = True) -> MysqlSample:
    if not ok:
        return MysqlSample(status=status("unreachable", "refused"))
    channels = []
    if follows is not None:
        channels.append(ReplicaChannel(
            io_running="Yes", sql_running=True, source_host="10.0.0.1", source_port=3306,
            source_server_id=SID[follows] if connected else None))
    variables = {"server_id": str(SID[name])}
    if read_only is not None:
        variables["read_only"] = "ON" if read_only else "OFF"
    return MysqlSample(status=status("ok"), flavour="mariadb", variables=variables,
                       replication=channels)


def redis(role: str, replid: str = "r1") -> RedisSample:
    return RedisSample(status=status("ok"), role=role, master_replid=replid,  # type: ignore[arg-type]
                       master_host="10.0.0.1" if role == "replica" else None,
                       master_port=6379 if role == "replica" else None)


def pair(a_mysql: MysqlSample, b_mysql: MysqlSample, a_redis: str = "master",
         b_redis: str = "replica") -> tuple[NodeTick, NodeTick]:
    """The two nodes as given on the command line: A (--primary), B (--replica)."""
    return (node("primary", A, mysql=a_mysql, redis=redis(a_redis), given="primary"),
            node("replica", B, mysql=b_mysql, redis=redis(b_redis), given="replica"))


AS_GIVEN = pair(mysql(A, read_only=False), mysql(B, follows=A, read_only=True))
SWITCHED = pair(mysql(A, follows=B, read_only=True), mysql(B, read_only=False),
                "replica", "master")
MYSQL_ONLY = pair(mysql(A, follows=B, read_only=True), mysql(B, read_only=False))
MID = pair(mysql(A, read_only=True), mysql(B, read_only=False), "replica", "master")
"""B promoted, A not yet following: MySQL has no direction."""


def _named(said: tuple[Any, ...]) -> tuple[str, str]:
    """(state, the primary's name or "") of a layer's say (which names a node object)."""
    state, node_, _ = said
    return state, "" if node_ is None else node_.name


def test_each_layer_reads_its_direction() -> None:
    assert _named(mysql_says(*AS_GIVEN)) == ("direction", A)
    assert _named(mysql_says(*SWITCHED)) == ("direction", B)
    assert "db163's channel reads from db162 (server_id 162)" in mysql_says(*SWITCHED)[2]
    assert _named(mysql_says(*MID)) == ("none", "")
    assert _named(redis_says(*SWITCHED)) == ("direction", B)
    assert redis_says(*pair(mysql(A), mysql(B), "master", "master"))[0] == "none"
    # a ring: the writable one is the primary
    ring = pair(mysql(A, follows=B, read_only=False), mysql(B, follows=A, read_only=True))
    assert _named(mysql_says(*ring)) == ("direction", A)
    # a channel that never connected still points at the only other node
    fresh = pair(mysql(A, read_only=False), mysql(B, follows=A, connected=False))
    assert _named(mysql_says(*fresh)) == ("direction", A)
    # the primary down: the replica's channel says who the primary is
    down = pair(mysql(A, ok=False), mysql(B, follows=A))
    assert _named(mysql_says(*down)) == ("direction", A)


def ticks(states: list[tuple[NodeTick, NodeTick]], interval: float = 1.0) -> list[Tick]:
    """Ticks as the collector makes them: oriented by an Orienter."""
    o = Orienter()
    out = []
    for i, (a, b) in enumerate(states):
        wall = T0 + i * interval
        p, r, roles_ = o.orient(a, b, wall)
        out.append(Tick(seq=i, interval=interval, wall=wall, mono=i * interval,
                        due_mono=i * interval, slot=i, primary=p, replica=r, roles=roles_))
    return out


def test_the_pair_is_handed_on_as_it_is_and_the_names_stay() -> None:
    ts = ticks([AS_GIVEN] * 3 + [MID] * 2 + [SWITCHED] * 3)
    assert [t.primary.name for t in ts] == [A] * 3 + [B] * 5  # Redis moved first (MID)
    last = ts[-1]
    assert last.primary.name == B and last.primary.role == "primary"
    assert last.primary.given == "replica" and last.replica.given == "primary"
    assert last.roles is not None and last.roles.since == T0 + 3 and last.roles.previous == A
    mysql_layer = last.roles.layer("mysql")
    assert mysql_layer is not None and mysql_layer.since == T0 + 5


def test_a_switchover_is_one_info_event_that_stays_in_view() -> None:
    ts = ticks([AS_GIVEN] * 5 + [MID] + [SWITCHED] * 700)
    (seq, (f,)), = run_check(roles.CHECK, ts)[1].items()  # one finding, opened once
    # the layers disagreed for 1 s (MID: Redis first), under settle (2 s): not said; the
    # event opens when the change is complete
    assert seq == 6 and f.severity is Severity.INFO and f.node == "pair" and f.key == B
    (f,), _ = run_check(roles.CHECK, ts[:20])
    assert f.severity is Severity.INFO and f.worst is Severity.INFO
    assert f.title == (f"{B} is now the primary (MySQL since 22:13:26, Redis since "
                       f"22:13:25); {A} replicates from it"), f.title
    # in view for show_for (600 s) after the change, then closed
    assert run_check(roles.CHECK, ts[:600])[0]
    assert run_check(roles.CHECK, ts)[0] == []


def test_a_switch_back_while_the_switchover_is_in_view_is_an_event_of_its_own() -> None:
    """The switch back 60 s after the switchover: its own event at its own tick (it was
    the first event's title, under the first one's time), and the first one closes."""
    from replmon.engine import Engine

    ts = ticks([AS_GIVEN] * 5 + [SWITCHED] * 60 + [AS_GIVEN] * 30)
    eng = Engine([(roles.CHECK, roles.Limits())])
    opened, closed = {}, {}
    for t in ts:
        upd = eng.feed(t)
        opened.update({t.seq: upd.opened} if upd.opened else {})
        closed.update({t.seq: upd.closed} if upd.closed else {})
    assert sorted(opened) == [5, 65] and sorted(closed) == [65]
    (over,), (back,), (ended,) = opened[5], opened[65], closed[65]
    assert over.title.startswith(f"{B} is now the primary") and over.since_seq == 5
    assert back.title.startswith(f"{A} is now the primary") and back.since_seq == 65
    assert back.since_wall == ts[65].wall and "since 22:14:25" in back.title, back.title
    assert ended.ident == over.ident and ended.title == over.title
    assert [f.title for f in eng.open_findings] == [back.title]


def test_half_done_is_a_warning_after_its_hold_in_seconds_at_any_interval() -> None:
    for interval in (0.2, 1.0, 5.0):
        n = int(200 / interval)
        ts = ticks([AS_GIVEN] * 3 + [MYSQL_ONLY] * n, interval)
        _, opened = run_check(roles.CHECK, ts)
        fs = [f for fs in opened.values() for f in fs]
        assert fs and fs[0].severity is Severity.INFO and "changing" in fs[0].title
        open_, _ = run_check(roles.CHECK, ts[: 3 + int(14 / interval)])
        assert open_ and open_[0].severity is Severity.INFO, interval
        open_, _ = run_check(roles.CHECK, ts[: 3 + int(30 / interval)])
        assert open_ and open_[0].severity is Severity.WARNING, (interval, open_)
        assert "Redis: db163 is the primary" in open_[0].title, open_[0].title
        open_, _ = run_check(roles.CHECK, ts)
        assert open_[0].severity is Severity.CRITICAL


def test_redis_moved_alone_is_said_at_once_and_warned_after_the_hold() -> None:
    """MySQL as given, Redis failed over (Sentinel): the pair stays oriented by MySQL,
    the roles finding opens at once (changing) and warns after its hold."""
    redis_only = pair(mysql(A, read_only=False), mysql(B, follows=A, read_only=True),
                      "replica", "master")
    ts = ticks([AS_GIVEN] * 3 + [redis_only] * 40)
    assert ts[-1].primary.name == A and ts[-1].roles is not None and ts[-1].roles.since is None
    (seq, (f,)), = run_check(roles.CHECK, ts)[1].items()
    assert seq == 5 and f.severity is Severity.INFO and "Redis: db162 is the primary" in f.title
    assert f.key == "half_done" and f.title.startswith("roles changing for 2 s"), f.title
    (f,), _ = run_check(roles.CHECK, ts)
    assert f.severity is Severity.WARNING and "half done for" in f.title, f.title


def test_a_layer_on_one_node_only_says_nothing() -> None:
    """DRBD (or MySQL, Redis) configured on one node only is no direction: only a node
    whose source failed (down) lets the other node's say decide."""
    from replmon.model.drbd import DrbdResource, DrbdSample
    from replmon.roles import drbd_says

    a, b = AS_GIVEN
    primary_drbd = DrbdSample(status=status("ok"), resources=[DrbdResource(name="r0",
                                                                          role="Primary")])
    with_drbd = b.model_copy(update={"drbd": primary_drbd})
    assert drbd_says(a, with_drbd)[0] == "unknown"  # a has no DRBD at all (absent)
    a_down = a.model_copy(update={"drbd": DrbdSample(status=status("unreachable", "ssh"))})
    assert _named(drbd_says(a_down, with_drbd)) == ("direction", B)
    assert mysql_says(a, b.model_copy(update={"mysql": MysqlSample(
        status=status("absent", "not configured"))}))[0] == "unknown"


def test_roles_given_the_other_way_round_are_said_once_and_shown_as_they_are() -> None:
    ts = ticks([SWITCHED] * 5)
    assert ts[0].primary.name == B and ts[0].roles is not None and ts[0].roles.since is None
    open_, _ = run_check(roles.CHECK, ts)
    assert open_ and open_[0].severity is Severity.INFO and "not the other way round" in \
        open_[0].title


def test_a_healthy_pair_as_given_says_nothing() -> None:
    assert run_check(roles.CHECK, ticks([AS_GIVEN] * 30))[0] == []


def test_the_gate_hides_no_change_half_done_completed_or_swapped() -> None:
    """The shipped recordings hold a completed switchover only: here a half-done one (at
    odds from the 4th tick), a completed one, a switch back and roles the other way round
    from the start, each threshold from 1/10 to 10 times its default: where the gate is
    quiet, ``evaluate`` sees nothing."""
    redis_only = pair(mysql(A, read_only=False), mysql(B, follows=A, read_only=True),
                      "replica", "master")
    cases = [[AS_GIVEN] * 3 + [MYSQL_ONLY] * 200, [AS_GIVEN] * 3 + [redis_only] * 40,
             [AS_GIVEN] * 5 + [MID] + [SWITCHED] * 200 + [AS_GIVEN] * 30, [SWITCHED] * 20]
    limits = [{}] + [{k: v * f} for k, v in roles.Limits().model_dump().items()
                     if k in ("show_for", "settle", "hold", "critical_after")
                     for f in (0.1, 0.5, 2.0, 10.0)]
    for states in cases:
        hidden, seen = gate_hides(roles.CHECK, ticks(states), limits)
        assert seen and not hidden, hidden[:3]


def maria(binlog_state: str, slave_pos: str = "", sid: int = 1) -> BinlogStatus:
    return BinlogStatus(gtid_executed=binlog_state, gtid_binlog_state=binlog_state,
                        gtid_slave_pos=slave_pos, server_id=sid)


def test_what_the_old_primary_wrote_is_history_not_errant() -> None:
    """MariaDB with log_slave_updates off: db162 (server 2) now the primary applied db163's
    0-1-412 as a replica but never logged it; its gtid_slave_pos says it has it."""
    new_primary = maria("0-2-500", slave_pos="0-1-412", sid=2)
    old_primary = maria("0-1-412", sid=1)
    assert errant_writes.errant_maria(new_primary, old_primary) == []
    # without the slave position it was (the false alarm of #40)
    forgetful = maria("0-2-500", sid=2)
    assert errant_writes.errant_maria(forgetful, old_primary) == ["0-1-412"]
    # a write on the replica past what the primary applied is still errant
    assert errant_writes.errant_maria(new_primary, maria("0-1-413", sid=1)) == ["0-1-413"]


def test_a_finding_stays_with_its_node_by_name() -> None:
    from replmon.engine import build_engine

    eng = build_engine(entry_points=False)
    upd: Any = None
    for t in ticks([AS_GIVEN] * 3 + [SWITCHED] * 3):
        upd = eng.feed(t)
    # db163 (given as the primary) now replicates from db162 and has a finding of its
    # own: it is named db163 and keeps the role it was given, whatever its role now
    on_nodes = [(f.check, f.node, f.name, f.given) for f in upd.open if f.node != "pair"]
    assert on_nodes and all(name == A and given == "primary" for _, node, name, given
                            in on_nodes if node == "replica"), on_nodes
    assert all(name in (A, B) for _, _, name, _ in on_nodes), on_nodes
    assert any(f.check == "roles" for f in upd.open)


def test_a_tick_a_service_cannot_be_read_does_not_restart_a_half_done_clock() -> None:
    """MySQL switched over, Redis left: a tick at which either service's sources time out
    on both nodes (the layer unknown) is no news that anything moved. The half-done
    finding stays one finding, its held time counting from the switchover (it restarted
    at the timeout, closed the warning and said nothing for the next settle seconds:
    seen in the live test on a loaded machine)."""
    down = MysqlSample(status=status("unreachable", "timed out"))
    a, b = MYSQL_ONLY
    mysql_unseen = (a.model_copy(update={"mysql": down}), b.model_copy(update={"mysql": down}))
    gone = RedisSample(status=status("unreachable", "timed out"))
    redis_unseen = (a.model_copy(update={"redis": gone}), b.model_copy(update={"redis": gone}))
    for unseen in (mysql_unseen, redis_unseen):
        ts = ticks([AS_GIVEN] * 3 + [MYSQL_ONLY] * 20 + [unseen] + [MYSQL_ONLY] * 3)
        r = ts[23].roles
        assert r is not None and [lr.state for lr in r.layers if lr.state == "unknown"]
        # every layer's since as it was before the timeout
        assert [lr.since for lr in r.layers] == [lr.since for lr in ts[22].roles.layers]
        assert [lr.since for lr in ts[-1].roles.layers] == \
            [lr.since for lr in ts[22].roles.layers]
        open_, opened = run_check(roles.CHECK, ts)
        assert len([f for fs in opened.values() for f in fs]) == 1, opened  # opened once
        (f,) = open_
        assert f.severity is Severity.WARNING and "half done for 23 s" in f.title, f.title
