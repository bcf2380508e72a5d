"""Two primaries on the lab (Redis replica promoted, MariaDB replica made writable) and
in synthetic ticks (the read_only flip without the lab's reconnect trick).

MysqlSource re-reads SHOW GLOBAL VARIABLES only every ``variables_every`` seconds (60,
not settable from the config) or after a reconnect. So that the lab scenario does not
wait a minute, it kills the monitoring account's connections on the replica right
after ``SET GLOBAL read_only=OFF``: the source reconnects within the next sample and
reads the variables afresh. On a real pair the same flip is seen within a minute.

The lab replica's baseline is read_only=ON (Lab.start sets it with SET GLOBAL; a
restart of the replica's mariadbd would lose it).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any, Literal

from replmon.lab.faults import mysql_replica_writable
from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeTick, Tick
from replmon.testing.scenarios import LabScenario, SeedScenario, nothing
from replmon.testing.synth import node, series


def wait_for(cond: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"lab did not recover in {timeout:.0f} s: {what}")
        time.sleep(0.05)


def redis_caught_up(lab: Any) -> None:
    """Wait until the Redis replica's link is up and it has the primary's offset."""
    with lab.replica.redis() as rc, lab.primary.redis() as pc:
        wait_for(lambda: rc.info("replication").get("master_link_status") == "up",
                 "Redis replica link up")
        target = int(pc.info("replication")["master_repl_offset"])
        wait_for(lambda: int(rc.info("replication").get("slave_repl_offset", -1)) >= target,
                 f"Redis replica offset >= {target}")


@contextlib.contextmanager
def redis_replica_promoted(lab: Any) -> Iterator[None]:
    """REPLICAOF NO ONE on the replica: two Redis masters until restored."""
    with lab.replica.redis() as rc:
        rc.execute_command("REPLICAOF", "NO", "ONE")
        try:
            yield
        finally:
            rc.execute_command("REPLICAOF", lab.primary.host, str(lab.primary.redis_port))
            redis_caught_up(lab)


# --- synthetic: the read_only flip as replmon sees it on a real pair ----------------


IoState = Literal["Yes", "No", "Connecting"]


def _mysql(read_only: str, replica: bool, io: IoState = "Yes") -> MysqlSample:
    chans = [ReplicaChannel(io_running=io, sql_running=io == "Yes")] if replica else []
    return MysqlSample(variables={"read_only": read_only, "server_id": "2" if replica else "1"},
                       replication=chans)


def mysql_flip(replica_ro: str = "OFF", io: IoState = "Yes") -> tuple[list[Tick], int]:
    """Four ticks with the replica read_only=ON, then ``replica_ro`` (as MysqlSource
    reports it once its variables are re-read)."""
    def pair(ro: str) -> tuple[NodeTick, NodeTick]:
        return (node("primary", mysql=_mysql("OFF", False)),
                node("replica", mysql=_mysql(ro, True, io)))
    return series([pair("ON")] * 4 + [pair(replica_ro)] * 6), 4


def redis_flip() -> tuple[list[Tick], int]:
    """Both Redis servers role master from tick 4 (the replica promoted)."""
    def pair(promoted: bool) -> tuple[NodeTick, NodeTick]:
        p = RedisSample(role="master", master_replid="a835", master_repl_offset=70_000,
                        connected_replicas=0 if promoted else 1)
        r = RedisSample(role="master" if promoted else "replica",
                        master_replid="c0ff" if promoted else "a835", master_repl_offset=69_990)
        return node("primary", redis=p), node("replica", redis=r)
    return series([pair(False)] * 4 + [pair(True)] * 6), 4


SEEDS = [
    # Stands in for the lab's read_only flip as a real pair would show it (no reconnect).
    SeedScenario("synthetic: MySQL replica read_only ON -> OFF, still replicating",
                 "two_primaries", mysql_flip, min_severity=Severity.CRITICAL),
]

LAB = [
    LabScenario("Redis replica REPLICAOF NO ONE (two masters)", "two_primaries",
                induce=redis_replica_promoted),
    LabScenario("MariaDB replica SET GLOBAL read_only=OFF (monitor reconnect forces a "
                "variables re-read)", "two_primaries", induce=mysql_replica_writable),
    LabScenario("lab baseline under load: replica read_only=ON, Redis replica following", "",
                induce=nothing),
]
