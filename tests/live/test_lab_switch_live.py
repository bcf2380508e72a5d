"""The lab's switchovers and Sentinel failover (replmon.lab.switch, replmon.lab.sentinel)
on real servers, under a write load running before, during and after: the roles swap,
the load follows the new primary at its rate, the old primary replicates from it, and
switching back restores the start state. The session's lab is shared: every test
switches back in ``finally``. Sentinel's failover is tested in test_sentinel_live.py
(one run for the lab's, the roles' and the Sentinel source's assertions)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from labpool import MYSQL97, group

from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.lab.node import LabNode
from replmon.lab.switch import (
    replication_threads,
    switch_back,
    switchover,
)
from replmon.sources.mysql import MysqlSource

pytestmark = pytest.mark.live

RATE = 200.0
PHASE_S = 2.0
"""Seconds of load in each phase (before, switched, after)."""
MAX_ERRORS = 10
"""Statements the load may lose per switchover: those refused between the fence and the
new primary (a few ms) and the first one sent to a node that has just been fenced."""


def state(lab: Lab) -> dict[str, Any]:
    """What a switchover changes, per node: read_only (and super_read_only), the
    replication threads and their source port, the Redis role and master port."""
    out: dict[str, Any] = {}
    for n in lab.nodes:
        ro = "@@global.read_only, @@global.super_read_only" if lab.is_mysql else \
            "@@global.read_only"
        with n.redis() as rc:
            info = rc.info("replication")
        out[n.name] = (n.sql(f"SELECT {ro}")[0], replication_threads(n),
                       info["role"], info.get("master_port"))
    return out


def rows(node: LabNode) -> int:
    return int(node.sql("SELECT COUNT(*) FROM lab.t")[0][0])


def redis_sets(node: LabNode) -> int:
    """SET commands the node's Redis has run (INFO commandstats)."""
    with node.redis() as rc:
        return int(rc.info("commandstats").get("cmdstat_set", {}).get("calls", 0))


def assert_rate(load: WriteLoad, last: float) -> None:
    """The writes flow: statements succeeded in every whole second of the ``last``. A
    switch refuses writes for 5-40 ms (measured) and the load retries after 0.2 s, so a
    second without one is a load that did not follow the switch (or is stuck). How many
    it wrote is the machine's: with the suite's workers and a CPU hog beside it reached
    75/s of 200, and a bound on the rate (0.85, then 0.5 of the target) failed there."""
    seconds = load.per_second(last)
    assert len(seconds) == int(last) and min(seconds) > 0, (seconds, load.summary(last))


def assert_no_errant_gtids(lab: Lab) -> None:
    """The two nodes have the same transactions (after the load stopped, caught up)."""
    lab.wait_replica_caught_up(timeout=30)
    p, r = lab.primary, lab.replica
    if lab.is_mysql:
        gp = p.sql("SELECT @@GLOBAL.gtid_executed")[0][0]
        gr = r.sql("SELECT @@GLOBAL.gtid_executed")[0][0]
        assert p.sql("SELECT GTID_SUBTRACT(%s, %s)", gr, gp)[0][0] == "", (gp, gr)
        assert p.sql("SELECT GTID_SUBTRACT(%s, %s)", gp, gr)[0][0] == "", (gp, gr)
    else:
        states = [n.sql("SELECT @@GLOBAL.gtid_binlog_state")[0][0] for n in lab.nodes]
        assert states[0] == states[1], states


def assert_accounts(lab: Lab) -> None:
    """Both nodes have the lab's accounts, and the monitor reads all it needs on both:
    status, variables, its replication (on the replica of now) and binlog."""
    names = {lab.repl_user, lab.monitor_user, lab.app_user}
    for n in lab.nodes:
        have = {str(u) for (u,) in n.sql("SELECT user FROM mysql.user")}
        assert names <= have, (n.name, have)

    async def sample(node: LabNode) -> Any:
        async with MysqlSource(node.mysql_endpoint()) as src:
            return await src.sample()

    for n in lab.nodes:
        s = asyncio.run(sample(n))
        assert s.status.ok and s.replication_error is None, (n.name, s.status, s.replication_error)
        assert s.variables.get("read_only") == ("OFF" if n is lab.mysql_primary else "ON")
        if n is lab.mysql_replica:
            (ch,) = s.replication
            assert ch.io_running == "Yes" and ch.sql_running, ch
            assert ch.source_port == lab.mysql_primary.mysql_port


def check_switch_round_trip(lab: Lab) -> None:
    """Switch MySQL and Redis over under load, check the new roles, switch back."""
    assert not lab.switched, "the lab was left switched over by an earlier test"
    start = state(lab)
    old, new = lab.primary, lab.replica
    with WriteLoad(lab, rate=RATE) as load:
        time.sleep(PHASE_S)
        assert_rate(load, PHASE_S)
        try:
            t0 = time.time()
            done = switchover(lab)
            assert set(done) == {"mysql", "redis"}
            for sw in done.values():
                assert (sw.old, sw.new) == ("primary", "replica")
                assert t0 <= sw.fenced_wall <= sw.promoted_wall <= sw.done_wall <= time.time()
            assert lab.mysql_primary is new and lab.redis_primary is new
            # The old replica is writable, the old primary read_only and replicating from it.
            assert new.sql("SELECT @@global.read_only")[0][0] == 0
            assert old.sql("SELECT @@global.read_only")[0][0] == 1
            assert replication_threads(old) == ("Yes", "Yes", new.mysql_port)
            assert replication_threads(new) == ("", "", None)
            # Writes reach the new primary, and arrive on the old one.
            before, sets = rows(new), redis_sets(new)
            time.sleep(PHASE_S)
            assert rows(new) > before and redis_sets(new) > sets
            seen = rows(new)
            lab.wait_replica_caught_up()
            assert rows(old) >= seen
            with new.redis() as nc, old.redis() as oc:
                assert nc.info("replication")["role"] == "master"
                info = oc.info("replication")
                assert (info["role"], info["master_port"], info["master_link_status"]) == (
                    "slave", new.redis_port, "up")
            assert_rate(load, PHASE_S)
            assert load.errors <= MAX_ERRORS, load.summary()
            assert_accounts(lab)
        finally:
            back = switch_back(lab)
        assert set(back) == {"mysql", "redis"}
        assert lab.mysql_primary is old and lab.redis_primary is old
        before = rows(old)
        time.sleep(PHASE_S)
        assert rows(old) > before
        assert_rate(load, PHASE_S)
        assert load.errors <= 2 * MAX_ERRORS, load.summary()
    assert_no_errant_gtids(lab)
    assert rows(old) == rows(new)
    assert state(lab) == start
    assert_accounts(lab)


def test_switchover_and_back_mariadb_redis(lab: Lab) -> None:
    check_switch_round_trip(lab)


@group(MYSQL97)
def test_switchover_and_back_mysql97_valkey(mysql97: Lab) -> None:
    check_switch_round_trip(mysql97)


def test_half_done_switchover_moves_mysql_only(lab: Lab) -> None:
    start = state(lab)
    try:
        done = switchover(lab, ("mysql",))
        assert set(done) == {"mysql"}
        assert lab.mysql_primary is lab.replica and lab.redis_primary is lab.primary
        assert replication_threads(lab.primary) == ("Yes", "Yes", lab.replica.mysql_port)
        with lab.primary.redis() as rc:
            assert rc.info("replication")["role"] == "master"
    finally:
        switch_back(lab)
    assert not lab.switched and state(lab) == start
