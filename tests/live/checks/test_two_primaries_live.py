"""Two primaries on the lab: a promoted Redis replica and a writable MariaDB replica flag
within 3 ticks; the lab's normal state (replica read_only=ON, Redis replica following)
does not; every scenario leaves the lab as it found it."""

from __future__ import annotations

import pytest

from replmon.lab import Lab
from replmon.model.findings import Severity
from replmon.testing.scenarios import primaries, run_lab_scenario

pytestmark = pytest.mark.live


def redis_role(lab: Lab) -> str:
    with lab.replica.redis() as rc:
        return str(rc.info("replication")["role"])


async def test_lab_baseline_is_one_writer(lab: Lab) -> None:
    assert lab.replica.sql("SELECT @@global.read_only")[0][0] == 1
    out = await run_lab_scenario(lab, primaries.LAB[2])
    assert out.first("two_primaries", Severity.INFO) is None
    last = out.ticks[-1]
    assert last.replica.mysql.variables["read_only"] == "ON"
    assert (last.primary.redis.role, last.replica.redis.role) == ("master", "replica")


async def test_redis_replicaof_no_one_flags_within_3_s_and_restores(lab: Lab) -> None:
    out = await run_lab_scenario(lab, primaries.LAB[0], until_found=True)
    f = out.first()
    assert f is not None, [(t.primary.redis.role, t.replica.redis.role) for t in out.ticks]
    assert (f.key, f.node, f.severity) == ("redis", "pair", Severity.CRITICAL)
    assert out.on_time(), out.onset_delay_s()
    assert f.numbers["same_replid"] is False  # the promoted replica took a new replid
    assert all(t.replica.redis.role == "replica" for t in out.ticks[:out.onset_seq])
    # restored: following the primary again, link up, caught up (waited for by the scenario)
    assert redis_role(lab) == "slave"


async def test_mysql_replica_read_only_off_flags_within_3_s_and_restores(lab: Lab) -> None:
    out = await run_lab_scenario(lab, primaries.LAB[1], until_found=True)
    f = out.first(min_severity=Severity.CRITICAL)
    assert f is not None, [t.replica.mysql.variables.get("read_only") for t in out.ticks]
    assert (f.key, f.node) == ("mysql", "pair")
    assert out.on_time(), out.onset_delay_s()
    assert "still replicating" in f.title  # the replica kept its threads running
    assert f.numbers["replica_read_only"] == "OFF"
    assert lab.replica.sql("SELECT @@global.read_only")[0][0] == 1
