"""Situations only a pair view flags (#15): an applier that runs but applies nothing,
semi-sync fallen back to async, a Redis backlog that covers seconds of outage, two
clocks apart (SEEDS only: the lab's nodes share one clock), a replica behind while
Seconds_Behind_Master says 0, writes made on the replica.

SEEDS rebuild each from the lab's own numbers (MariaDB 10.11 positions and the ~10.7
KiB/s replication stream its write load makes, measured on sample_sessions/); LAB makes
each happen on the lab. Where a check's condition needs a duration by definition
(applier_progress's stall), the scenario shortens it, as LAG_GROWTH does for lag growth.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from replmon.lab.faults import mysql_healthy, stop_thread, wait_for, write_on_replica
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel, SemiSync
from replmon.model.redis import RedisReplica, RedisSample
from replmon.model.tick import Tick
from replmon.testing.scenarios import LabScenario, SeedScenario
from replmon.testing.synth import node, series

BINLOG = "binlog.000001"
EVENT_BYTES = 290
"""Bytes of binlog per row event of the lab's write load (73,104 -> 73,394 for one)."""
STREAM_B_S = 10_700
"""Bytes/s of Redis replication stream under the lab's write load."""
STALL = {"applier_progress": {"stall_after": "2s"}}
PAIR_LAG = {"pair_lag": {"lag_after": "2s"}}
TX_PER_S = 300
"""Transactions/s of the lab's write load (one row event each)."""


def _channel(read: int, executed: int, state: str) -> ReplicaChannel:
    return ReplicaChannel(
        io_running="Yes", sql_running=True, seconds_behind=0, source_host="127.0.0.1",
        source_port=40303, source_server_id=1, source_log_file=BINLOG,
        read_source_log_pos=read, relay_source_log_file=BINLOG, exec_source_log_pos=executed,
        using_gtid=True, io_state="Waiting for master to send event", sql_state=state)


def applier_stuck(healthy: int = 6, stuck: int = 10) -> tuple[list[Tick], int]:
    """300 row events/s applied as they arrive, then the applier waits on a global read
    lock while events keep arriving; SQL thread Yes, Seconds_Behind_Master 0."""
    pairs = []
    stop = 73_104 + EVENT_BYTES * 300 * healthy
    for i in range(healthy + stuck):
        read = 73_104 + EVENT_BYTES * 300 * i
        ch = (_channel(read, read, "Slave has read all relay log; waiting for more updates")
              if i < healthy else _channel(read, stop, "Waiting for global read lock"))
        pairs.append((node("primary", mysql=MysqlSample()),
                      node("replica", mysql=MysqlSample(replication=[ch]))))
    return series(pairs), healthy


def semi_sync_fallback(healthy: int = 6, after: int = 8) -> tuple[list[Tick], int]:
    """Semi-sync on both; the replica's acks stop and the primary's status goes OFF."""
    pairs = []
    for i in range(healthy + after):
        on = i < healthy
        p = MysqlSample(semi_sync=SemiSync(source_enabled=True, source_active=on,
                                           source_clients=1 if on else 0),
                        counters={"Rpl_semi_sync_master_no_tx": 0 if on else 30 * (i - healthy)})
        r = MysqlSample(semi_sync=SemiSync(replica_enabled=True, replica_active=on),
                        replication=[_channel(73_104, 73_104, "")])
        pairs.append((node("primary", mysql=p), node("replica", mysql=r)))
    return series(pairs), healthy


def backlog_shrunk(healthy: int = 14, after: int = 8) -> tuple[list[Tick], int]:
    """The lab's stream into a 1 MiB backlog (98 s of headroom), then CONFIG SET
    repl-backlog-size 16384 (1.5 s)."""
    pairs = []
    for i in range(healthy + after):
        off = 1_000_000 + STREAM_B_S * i
        p = RedisSample(role="master", connected_replicas=1, master_repl_offset=off,
                        repl_backlog_active=True,
                        repl_backlog_size=1 << 20 if i < healthy else 16_384,
                        replicas=[RedisReplica(ip="127.0.0.1", port=6380, state="online",
                                               offset=off, lag_s=0)])
        r = RedisSample(role="replica", master_host="127.0.0.1", master_port=6379,
                        link_status="up", repl_offset=off)
        pairs.append((node("primary", redis=p), node("replica", redis=r)))
    return series(pairs), healthy


def clock_jump(healthy: int = 6, after: int = 8) -> tuple[list[Tick], int]:
    """Both Redis answer INFO within 2 ms of replmon's clock; then the replica's clock
    jumps 5 s ahead (a VM resumed without a time sync)."""
    pairs = []
    t0 = 1_700_000_000.0
    for i in range(healthy + after):
        wall = t0 + i
        p = RedisSample(role="master", wall=wall, elapsed_ms=2.0, server_time=wall + 0.001)
        r = RedisSample(role="replica", wall=wall + 0.003, elapsed_ms=2.0,
                        server_time=wall + 0.004 + (5.0 if i >= healthy else 0.0))
        pairs.append((node("primary", redis=p), node("replica", redis=r)))
    return series(pairs), healthy


def slow_link(healthy: int = 6, after: int = 12) -> tuple[list[Tick], int]:
    """The lab's 300 transactions/s; then the receiver falls behind (a saturated link):
    the replica applies all it received, so Seconds_Behind_Master stays 0, while the
    primary's GTID runs ahead. Both nodes read their binlog every 2 ticks (2 s)."""
    pairs = []
    stuck = 100 + TX_PER_S * (healthy - 1)  # the last tick that got everything
    for i in range(healthy + after):
        seq = 100 + TX_PER_S * i
        have = seq if i < healthy else stuck + 5 * (i - healthy)  # a trickle gets through
        pos = 73_104 + EVENT_BYTES * (have - 100)
        ch = _channel(pos, pos, "Slave has read all relay log; waiting for more updates")
        ch = ch.model_copy(update={"gtid_executed": f"0-1-{have}",
                                   "gtid_executed_server_wide": True})
        read = i % 2 == 0
        pb = BinlogStatus(file=BINLOG, position=73_104 + EVENT_BYTES * (seq - 100),
                          gtid_executed=f"0-1-{seq}", gtid_binlog_state=f"0-1-{seq}",
                          server_id=1) if read else None
        rb = BinlogStatus(file=BINLOG, position=pos, gtid_executed=f"0-1-{have}",
                          gtid_binlog_state=f"0-1-{have}", server_id=2) if read else None
        pairs.append((node("primary", mysql=MysqlSample(binlog=pb)),
                      node("replica", mysql=MysqlSample(replication=[ch], binlog=rb))))
    return series(pairs), healthy


def replica_written(healthy: int = 6, after: int = 8) -> tuple[list[Tick], int]:
    """MariaDB: one INSERT made on the replica (read_only off): its binlog state gains
    an entry of its own server_id, 0-2-<seq>, that the primary never wrote."""
    pairs = []
    for i in range(healthy + after):
        seq = 100 + TX_PER_S * i
        state = f"0-1-{seq}" + (f",0-2-{100 + TX_PER_S * healthy + 1}" if i >= healthy else "")
        pb = BinlogStatus(file=BINLOG, position=73_104, gtid_executed=f"0-1-{seq}",
                          gtid_binlog_state=f"0-1-{seq}", server_id=1)
        rb = BinlogStatus(file=BINLOG, position=73_104, gtid_executed=f"0-1-{seq}",
                          gtid_binlog_state=state, server_id=2)
        ch = _channel(73_104, 73_104, "").model_copy(update={"gtid_executed": f"0-1-{seq}"})
        pairs.append((node("primary", mysql=MysqlSample(binlog=pb)),
                      node("replica", mysql=MysqlSample(replication=[ch], binlog=rb))))
    return series(pairs), healthy


SEEDS = [
    SeedScenario("applier waits on a read lock, SQL thread Yes, lag 0 (stall shortened to "
                 "2 s)", "applier_progress", applier_stuck, settings=STALL),
    SeedScenario("semi-sync primary falls back to async", "semi_sync", semi_sync_fallback),
    SeedScenario("Redis backlog shrunk to 16 KiB under the lab's stream", "redis_backlog_headroom",
                 backlog_shrunk),
    SeedScenario("replica's clock jumps 5 s ahead", "clock_skew", clock_jump),
    SeedScenario("receiver falls behind on a slow link, Seconds_Behind_Master 0 (lag "
                 "threshold 2 s)", "pair_lag", slow_link, settings=PAIR_LAG),
    SeedScenario("an INSERT made on the replica (MariaDB GTID 0-2-N)", "errant_writes",
                 replica_written),
]


# --- the lab ------------------------------------------------------------------------

@contextlib.contextmanager
def read_lock_on_replica(lab: Any) -> Iterator[None]:
    """FLUSH TABLES WITH READ LOCK on the replica: its applier waits, SQL thread Yes."""
    locker = lab.replica.root_connection()
    try:
        with locker.cursor() as cur:
            cur.execute("FLUSH TABLES WITH READ LOCK")
        yield
    finally:
        with contextlib.suppress(Exception), locker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
        locker.close()
        mysql_healthy(lab)


@contextlib.contextmanager
def semi_sync_then_replica_io_stopped(lab: Any) -> Iterator[None]:
    """The replica's IO thread stopped (semi-sync was switched on by ``semi_sync_on``
    before the collector started: it reads variables about once a minute)."""
    lab.replica.sql("STOP REPLICA IO_THREAD")
    try:
        yield
    finally:
        lab.replica.sql("START REPLICA IO_THREAD")


@contextlib.contextmanager
def semi_sync_on(lab: Any) -> Iterator[None]:
    """Semi-sync switched on on both nodes (MariaDB: built in, master/slave names;
    Oracle MySQL: the semisync_source/_replica plugins installed first, source/replica
    names), the replica's IO thread restarted so that it acks."""
    p, r = lab.primary, lab.replica
    src, rep = ("source", "replica") if lab.is_mysql else ("master", "slave")
    if lab.is_mysql:
        for node, plugin in ((p, "source"), (r, "replica")):
            if not node.sql("SELECT 1 FROM information_schema.PLUGINS WHERE PLUGIN_NAME = %s",
                            f"rpl_semi_sync_{plugin}"):
                node.sql(f"INSTALL PLUGIN rpl_semi_sync_{plugin} SONAME 'semisync_{plugin}.so'")
    p.sql(f"SET GLOBAL rpl_semi_sync_{src}_timeout = 500")
    p.sql(f"SET GLOBAL rpl_semi_sync_{src}_enabled = ON")
    r.sql(f"SET GLOBAL rpl_semi_sync_{rep}_enabled = ON")
    r.sql("STOP REPLICA IO_THREAD")
    r.sql("START REPLICA IO_THREAD")
    try:
        wait_for(lambda: p.sql(f"SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_{src}_status'")
                 [0][1] == "ON", "semi-sync ON on the primary", 20)
        yield
    finally:
        p.sql(f"SET GLOBAL rpl_semi_sync_{src}_enabled = OFF")
        r.sql(f"SET GLOBAL rpl_semi_sync_{rep}_enabled = OFF")
        r.sql("STOP REPLICA IO_THREAD")
        r.sql("START REPLICA IO_THREAD")
        mysql_healthy(lab)


@contextlib.contextmanager
def redis_setting(lab: Any, name: str, value: str) -> Iterator[None]:
    """CONFIG SET ``name`` ``value`` on the lab's primary Redis, its old value back after."""
    r = lab.primary.redis()
    old = r.config_get(name)[name]
    r.config_set(name, value)
    try:
        yield
    finally:
        r.config_set(name, old)


def small_backlog(lab: Any) -> contextlib.AbstractContextManager[None]:
    return redis_setting(lab, "repl-backlog-size", "16384")


LAB = [
    LabScenario("replica holds FLUSH TABLES WITH READ LOCK under write load (stall shortened "
                "to 2 s)", "applier_progress", induce=read_lock_on_replica, settings=STALL),
    LabScenario("semi-sync on, then the replica's IO thread stopped under write load",
                "semi_sync", induce=semi_sync_then_replica_io_stopped, setup=semi_sync_on),
    LabScenario("replica's SQL thread stopped under write load (lag threshold 0.5 s: the "
                "binlog is read every 2 s)",
                "pair_lag", induce=lambda lab: stop_thread(lab, "SQL_THREAD"),
                settings={"pair_lag": {"lag_after": "0.5s"}},
                # the first binlog reading after the stop comes within positions_every
                # (2 s, wall-clock aligned) plus a tick; the lag is seen lag_after (0.5 s)
                # later, at a tick: 2 + 0.5 + 0.5 + 0.5 s. ONSET_S (3 s) was only met when
                # the reading fell early (seen +5.5 s failed once under a loaded machine)
                deadline_s=2.0 + 0.5 + 0.5 + 0.5,
                # then open_after 4 s: 7 s of ticks (the default 14) left no slack under
                # a loaded CI machine
                ticks=24),
    LabScenario("read_only off on the replica and one INSERT there", "errant_writes",
                induce=write_on_replica, load={},
                # both nodes' GTIDs read in one tick, every positions_every (2 s, on the
                # wall clock): two nodes sampled either side of a 2 s boundary read in
                # different ticks, so the pair may come one period later: 2 + 2 s and a
                # tick (seen +3.5 s failed ONSET_S's 3 s once, "late ticks: none")
                deadline_s=2.0 + 2.0 + 0.5),
    LabScenario("CONFIG SET repl-backlog-size 16384 under write load",
                "redis_backlog_headroom", induce=small_backlog, healthy_ticks=24,
                settings={"redis_backlog_headroom": {"min_rate_span": "5s"}}),
]
