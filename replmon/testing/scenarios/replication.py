"""Replication broken, late or expensive: MySQL threads and lag, the Redis link and full
resyncs, on the lab and in seed 002's numbers.

Every lab situation is undone in the context manager's ``finally`` (START SLAVE,
UNLOCK TABLES, SIGCONT, REPLICAOF back to the master, the backlog size back), and
waits until replication is healthy again, so the next test finds a normal lab.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pymysql

from replmon.lab.faults import (  # the lab's faults and waits live in the product (the demo)
    mysql_healthy,
    redis_link_down,
    redis_link_up,
    slave_status,
    stop_thread,
    wait_for,
)
from replmon.lab.node import free_port
from replmon.model.findings import Severity
from replmon.model.redis import RedisRates, RedisReplica, RedisSample
from replmon.model.tick import NodeRates, Tick
from replmon.testing.scenarios import LabScenario, SeedScenario, nothing
from replmon.testing.synth import node, series

LAG_TABLE = "lab.t_lag"
LONG_STATEMENT_S = 600
"""How long ago the imitated long statement started on the primary."""


# --- MySQL ------------------------------------------------------------------------

@contextlib.contextmanager
def long_statement_lag(lab: Any) -> Iterator[None]:
    """The replica's applier stuck in a transaction whose statement started
    LONG_STATEMENT_S ago on the primary: Seconds_Behind_Master is now minus the
    event's timestamp, which is the statement's start time.

    A real 10-minute statement is imitated: the primary's session sets its
    timestamp back (the binlog events carry it) and inserts one row, while a session
    on the replica holds LOCK TABLES on that table, so the applier waits on it as it
    would work through a long statement; the write load queues up behind it."""
    p, r = lab.primary, lab.replica
    p.sql(f"CREATE TABLE IF NOT EXISTS {LAG_TABLE} (id INT PRIMARY KEY AUTO_INCREMENT, "
          f"v INT NOT NULL DEFAULT 0) ENGINE=InnoDB")
    lab.wait_replica_caught_up(timeout=30)
    locker = r.root_connection()
    try:
        with locker.cursor() as cur:
            cur.execute(f"LOCK TABLES {LAG_TABLE} WRITE")
        writer = p.root_connection()
        try:
            with writer.cursor() as cur:
                cur.execute(f"SET timestamp = UNIX_TIMESTAMP() - {LONG_STATEMENT_S}")
                cur.execute(f"INSERT INTO {LAG_TABLE} (v) VALUES (1)")
        finally:
            writer.close()
        wait_for(lambda: (slave_status(lab).get("Seconds_Behind_Master") or 0)
                 >= LONG_STATEMENT_S, "the applier blocked on the old statement", 10)
        yield
    finally:
        with contextlib.suppress(pymysql.err.Error), locker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
        locker.close()
        mysql_healthy(lab)


@contextlib.contextmanager
def applier_blocked(lab: Any) -> Iterator[None]:
    """A session on the replica holds LOCK TABLES lab.t WRITE: the applier waits for it
    while the write load goes on, and the lag grows for real, about 60 s per minute."""
    locker = lab.replica.root_connection()
    try:
        with locker.cursor() as cur:
            cur.execute("LOCK TABLES lab.t WRITE")
        yield
    finally:
        with contextlib.suppress(pymysql.err.Error), locker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
        locker.close()
        mysql_healthy(lab)


@contextlib.contextmanager
def pause_replica_mysql(lab: Any) -> Iterator[None]:
    lab.replica.pause_mysql()
    try:
        yield
    finally:
        lab.replica.resume_mysql()
        mysql_healthy(lab)


# --- Redis ------------------------------------------------------------------------

@contextlib.contextmanager
def redis_full_resync(lab: Any) -> Iterator[None]:
    """Seed 002's situation: the replica reconnects and cannot continue partially.
    The master's backlog is cut to its minimum (16 KiB), the replica's link is down
    while 64 KiB are written, and the replica reconnects: the offset it asks for is
    no longer in the backlog, so the master forks and sends a full RDB."""
    mc = lab.primary.redis()
    old = mc.config_get("repl-backlog-size")["repl-backlog-size"]
    try:
        mc.config_set("repl-backlog-size", 16384)
        with lab.replica.redis() as rc:
            rc.replicaof("127.0.0.1", free_port())
            for i in range(4):
                mc.set(f"lab:resync:{i}", "x" * 16384)
            rc.replicaof("127.0.0.1", lab.primary.redis_port)
        yield
    finally:
        with lab.replica.redis() as rc:
            rc.replicaof("127.0.0.1", lab.primary.redis_port)
        mc.config_set("repl-backlog-size", old)
        mc.delete(*[f"lab:resync:{i}" for i in range(4)])
        mc.close()
        redis_link_up(lab)


@contextlib.contextmanager
def pause_replica_redis(lab: Any) -> Iterator[None]:
    lab.replica.pause_redis()
    try:
        yield
    finally:
        lab.replica.resume_redis()
        redis_link_up(lab)


# --- seed 002 -----------------------------------------------------------------------

GIB = 1024 ** 3
CRIT = Severity.CRITICAL


def _seed_002() -> tuple[list[Tick], int]:
    """Seed 002: Redis 2.6.5 master without persistence on a 16 GB host, at 84.78 % memory
    (table 4-1, 90 million keys), a replica reconnecting: Redis 2.6 had no PSYNC, so
    every reconnect is a full sync (SYNC -> fork -> RDB -> load). 2.6 has no sync_full
    counter and no offsets: the resync shows as the master's slave line in wait_bgsave
    and the replica syncing."""
    used = int(0.8478 * 16 * GIB)

    def pair(state: str, syncing: bool) -> tuple[Any, Any]:
        m = RedisSample(version="2.6.5", role="master", used_memory=used,
                        total_system_memory=16 * GIB, connected_replicas=1,
                        replicas=[RedisReplica(ip="192.168.0.45", port=6379, state=state)])
        rep = RedisSample(version="2.6.5", role="replica", master_host="192.168.0.42",
                          master_port=6379, link_status="down" if syncing else "up",
                          sync_in_progress=syncing, last_io_seconds_ago=0)
        return (node("primary", redis=m, rates=NodeRates(redis=RedisRates())),
                node("replica", redis=rep))
    return series([pair("online", False)] * 3 + [pair("wait_bgsave", True)] * 6), 3


SEEDS = [
    SeedScenario("seed 002: replica reconnects to a Redis 2.6 master at 85 % of RAM",
                 "redis_replication", _seed_002, min_severity=CRIT),
]


# --- the lab ------------------------------------------------------------------------

LAB = [
    LabScenario("replica SQL thread stopped under write load", "mysql_replication",
                induce=lambda lab: stop_thread(lab, "SQL_THREAD"), min_severity=CRIT),
    LabScenario("replica IO thread stopped under write load", "mysql_replication",
                induce=lambda lab: stop_thread(lab, "IO_THREAD"), min_severity=CRIT),
    LabScenario(f"replica applying a statement begun {LONG_STATEMENT_S} s ago on the primary",
                "mysql_replication", induce=long_statement_lag, min_severity=CRIT),
    LabScenario("replica MySQL paused (SIGSTOP)", "mysql_replication",
                induce=pause_replica_mysql, min_severity=CRIT),
    LabScenario("Redis replica link down (REPLICAOF a dead port)", "redis_replication",
                induce=redis_link_down, min_severity=CRIT),
    LabScenario("Redis full resync: reconnect after a 16 KiB backlog overran",
                "redis_replication", induce=redis_full_resync),
    LabScenario("Redis replica paused (SIGSTOP)", "redis_replication",
                induce=pause_replica_redis, min_severity=CRIT),
    LabScenario("healthy pair under write load", "", induce=nothing),
]

LAG_GROWTH = LabScenario(
    "replica applier blocked by a table lock under write load: lag grows", "mysql_replication",
    induce=applier_blocked, ticks=24,
    settings={"mysql_replication": {"growth_min_span_s": 4.0, "growth_min_rise_s": 3.0}})
"""Not in LAB: growth needs growth_min_span_s of readings by definition, so it cannot
flag within 3 ticks of the onset; shortened spans keep the live test to ~15 s."""
