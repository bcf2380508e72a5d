"""The primary refuses writes (the writes_refused check): on the lab, each way a real
primary refuses (replmon.lab.faults: read_only left on, max_connections reached, Redis
NOREPLICAS, OOM with noeviction, MISCONF after a failed BGSAVE), and in synthetic ticks
(the same situations as the sources report them, for the unit tests: a refusal that
stays is critical after the fence, one during a switchover is info).

The lab entries run on the default lab (MariaDB 10.11 + Redis 7.0,
tests/live/test_writes_refused_live.py) and in the version matrix on MySQL 9.7 +
Valkey 8.1 only (tests/live/test_matrix_live.py says why)."""

from __future__ import annotations

from replmon.lab.refusals import (
    max_connections_reached,
    primary_read_only,
    redis_misconf,
    redis_noreplicas,
    redis_oom,
)
from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeTick, Tick
from replmon.testing.scenarios import LabScenario, SeedScenario
from replmon.testing.synth import node, series, status

REFUSED = "writes_refused"


def _mysql(*, replica: bool, read_only: str = "OFF", connected: int = 20,
           refused: int = 0) -> MysqlSample:
    chans = [ReplicaChannel(io_running="Yes", sql_running=True)] if replica else []
    return MysqlSample(status=status("ok"), flavour="mariadb", version="10.11.6",
                       variables={"read_only": "ON" if replica else read_only,
                                  "server_id": "2" if replica else "1",
                                  "max_connections": "151"},
                       gauges={"Threads_connected": connected},
                       counters={"Connection_errors_max_connections": refused},
                       replication=chans)


def _redis(*, master: bool, **more: object) -> RedisSample:
    return RedisSample(status=status("ok"), role="master" if master else "replica",
                       master_replid="a835", master_repl_offset=70_000,
                       **more)  # type: ignore[arg-type]


def _pair(p_mysql: MysqlSample | None = None, p_redis: RedisSample | None = None
          ) -> tuple[NodeTick, NodeTick]:
    return (node("primary", mysql=p_mysql or _mysql(replica=False),
                 redis=p_redis or _redis(master=True)),
            node("replica", mysql=_mysql(replica=True), redis=_redis(master=False)))


def read_only_left_on() -> tuple[list[Tick], int]:
    """The primary's read_only ON from tick 4 (a failover script stopped half-way)."""
    return series([_pair()] * 4 + [_pair(_mysql(replica=False, read_only="ON"))] * 12), 4


def noreplicas() -> tuple[list[Tick], int]:
    """min-replicas-to-write 2 with one good replica, from tick 4."""
    bad = _redis(master=True, min_replicas=(2, 10), good_replicas=1)
    return series([_pair()] * 4 + [_pair(p_redis=bad)] * 12), 4


def oom() -> tuple[list[Tick], int]:
    """used_memory at maxmemory with noeviction, from tick 4."""
    full = _redis(master=True, used_memory=100 << 20, maxmemory=100 << 20,
                  maxmemory_policy="noeviction")
    return series([_pair()] * 4 + [_pair(p_redis=full)] * 12), 4


SEEDS = [
    # opened at info (a switchover's fence looks the same for fence_s); critical after
    # it: tests/unit/checks/test_writes_refused.py
    SeedScenario("synthetic: the primary's read_only left ON", REFUSED, read_only_left_on,
                 min_severity=Severity.INFO),
    SeedScenario("synthetic: Redis min-replicas-to-write 2 with one replica", REFUSED,
                 noreplicas, min_severity=Severity.INFO),
    SeedScenario("synthetic: Redis at maxmemory with noeviction", REFUSED, oom,
                 min_severity=Severity.INFO),
]

LAB = [
    LabScenario("the MySQL primary's read_only left ON", REFUSED, induce=primary_read_only,
                min_severity=Severity.INFO),
    LabScenario("the MySQL primary at max_connections, clients refused (ERROR 1040)",
                REFUSED, induce=max_connections_reached, min_severity=Severity.INFO),
    LabScenario("Redis min-replicas-to-write 2 with one replica (NOREPLICAS)", REFUSED,
                induce=redis_noreplicas, min_severity=Severity.INFO),
    LabScenario("Redis at maxmemory with noeviction (OOM)", REFUSED, induce=redis_oom,
                min_severity=Severity.INFO),
    LabScenario("Redis's BGSAVE failed with stop-writes-on-bgsave-error (MISCONF)", REFUSED,
                induce=redis_misconf, min_severity=Severity.INFO),
]
