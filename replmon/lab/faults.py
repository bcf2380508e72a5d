"""Faults the lab can inject, and the waits that tell the lab is healthy again.

Every fault is a context manager on a started Lab (replmon.lab): entering it makes the
situation, leaving it undoes it and waits until the pair is healthy again (START REPLICA,
REPLICAOF back to the master, the setting back), so the lab can be reused. The demo
(``replmon --lab --scenario NAME``, replmon.lab.demo), the live tests, the lab scenarios of
replmon.testing.scenarios and the accuracy bench all inject these same faults, so the
demo shows what the tests prove.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
import redis

from replmon.errors import LabError
from replmon.lab.node import free_port

# --- waiting for the lab -------------------------------------------------------------

def wait_for(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll ``cond`` every 50 ms until it holds; TimeoutError naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"lab: {what} not reached in {timeout:g} s")
        time.sleep(0.05)


def slave_status(lab: Any) -> dict[str, Any]:
    """The MySQL replica's SHOW REPLICA STATUS row (MariaDB >= 10.5, MySQL >= 8.0.22),
    with MySQL's Replica_*/*Source* columns also under MariaDB's Slave_*/*Master* names.
    The replica of now (``lab.mysql_replica``: the other node after a switchover)."""
    conn = lab.mysql_replica.root_connection(cursorclass=pymysql.cursors.DictCursor)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW REPLICA STATUS")
            row = dict(cur.fetchone() or {})
    finally:
        conn.close()
    for name, value in list(row.items()):
        row.setdefault(name.replace("Replica_", "Slave_").replace("Source", "Master"), value)
    return row


def mysql_healthy(lab: Any) -> None:
    """Both threads running and the replica caught up with the primary."""
    wait_for(lambda: (s := slave_status(lab)).get("Slave_IO_Running") == "Yes"
             and s.get("Slave_SQL_Running") == "Yes", "both replication threads running")
    lab.wait_replica_caught_up(timeout=30)


def redis_link_up(lab: Any, timeout: float = 30.0) -> None:
    """The Redis replica of now linked up to the master of now."""
    with lab.redis_replica.redis() as rc:
        def up() -> bool:
            info = rc.info("replication")
            return bool(info.get("master_link_status") == "up"
                        and info.get("master_port") == lab.redis_primary.redis_port)
        wait_for(up, "Redis replica link up to the master", timeout)


@contextlib.contextmanager
def stop_thread(lab: Any, thread: str) -> Iterator[None]:
    lab.replica.sql(f"STOP REPLICA {thread}")
    try:
        yield
    finally:
        lab.replica.sql("START REPLICA")
        mysql_healthy(lab)


@contextlib.contextmanager
def redis_link_down(lab: Any) -> Iterator[None]:
    """The replica told to follow a port where nothing listens: its link goes down."""
    with lab.replica.redis() as rc:
        rc.replicaof("127.0.0.1", free_port())
    try:
        yield
    finally:
        with lab.replica.redis() as rc:
            rc.replicaof(lab.primary.repl_host, lab.primary.redis_port)
        redis_link_up(lab)


FILL_PREFIX = "lab:mem:"
"""Keys written by the eviction scenario (deleted when it ends)."""
VALUE_BYTES = 8192
PREFILL_BYTES = 4 << 20


def wait_redis_replica(lab: Any, timeout: float = 10.0) -> None:
    """Wait until the Redis replica is online and has acknowledged the master's offset
    of now (it acknowledges about once a second; later writes are not waited for)."""
    deadline = time.monotonic() + timeout
    with lab.primary.redis() as r:
        target = int(r.info("replication")["master_repl_offset"])
        while time.monotonic() < deadline:
            rep = r.info("replication").get("slave0")
            if (isinstance(rep, dict) and rep.get("state") == "online"
                    and int(rep.get("offset", -1)) >= target):
                return
            time.sleep(0.05)
    raise LabError(f"Redis replica did not acknowledge offset {target} in {timeout} s")


def _fill(lab: Any, stop: threading.Event, value_bytes: int, rate: float) -> None:
    """SET new keys of ``value_bytes`` at ~``rate``/s until ``stop``."""
    value = "x" * value_bytes
    n = 0
    with lab.primary.redis() as r:
        while not stop.is_set():
            try:
                r.set(f"{FILL_PREFIX}{n}", value)
            except redis.exceptions.RedisError:
                stop.wait(0.1)  # OOM when nothing is left to evict: back off
            n += 1
            stop.wait(1.0 / rate)


@contextlib.contextmanager
def redis_at_maxmemory(lab: Any) -> Iterator[None]:
    """maxmemory just above the master's used_memory (at 95 % at once) with allkeys-lru,
    and 8 KiB values written at ~200/s: Redis sits at its ceiling and evicts. The
    replica has no maxmemory and only follows the master's evictions.

    4 MiB of values are written first, and the replica waited for: Redis 7's
    replication buffer (the backlog) grows with the stream up to repl-backlog-size and
    cannot be evicted, so without evictable data and a full backlog before the limit
    is set, Redis would evict everything and still refuse writes (OOM)."""
    r = lab.primary.redis()
    policy = r.config_get("maxmemory-policy")["maxmemory-policy"]
    limit = r.config_get("maxmemory")["maxmemory"]
    stop = threading.Event()
    filler = threading.Thread(target=_fill, args=(lab, stop, VALUE_BYTES, 200.0),
                              name="lab-redis-fill", daemon=True)
    try:
        with r.pipeline(transaction=False) as pipe:
            for n in range(PREFILL_BYTES // VALUE_BYTES):
                pipe.set(f"{FILL_PREFIX}pre{n}", "p" * VALUE_BYTES)
            pipe.execute()
        wait_redis_replica(lab)
        used = int(r.info("memory")["used_memory"])
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.config_set("maxmemory", str(int(used / 0.95)))
        filler.start()
        yield
    finally:
        stop.set()
        if filler.is_alive():
            filler.join(10)
        r.config_set("maxmemory", limit)
        r.config_set("maxmemory-policy", policy)
        keys = list(r.scan_iter(match=FILL_PREFIX + "*", count=1000))
        for i in range(0, len(keys), 500):
            r.unlink(*keys[i:i + 500])
        r.close()
        wait_redis_replica(lab)


def kill_monitor_connections(node: Any) -> None:
    """Drop replmon's monitoring connections on ``node`` so its MysqlSource reconnects
    (and so re-reads SHOW GLOBAL VARIABLES) on its next sample."""
    user = node.lab.monitor_user
    for (cid,) in node.sql("SELECT id FROM information_schema.processlist WHERE user = %s",
                           user):
        with contextlib.suppress(Exception):  # it may have gone by itself meanwhile
            node.sql(f"KILL CONNECTION {int(cid)}")


@contextlib.contextmanager
def mysql_replica_writable(lab: Any) -> Iterator[None]:
    """SET GLOBAL read_only=OFF on the replica (which keeps replicating)."""
    r = lab.replica
    before = r.sql("SELECT @@global.read_only")[0][0]
    r.sql("SET GLOBAL read_only = OFF")
    kill_monitor_connections(r)
    try:
        yield
    finally:
        r.sql(f"SET GLOBAL read_only = {'ON' if before else 'OFF'}")
        lab.wait_replica_caught_up()


@contextlib.contextmanager
def write_on_replica(lab: Any) -> Iterator[None]:
    """read_only off on the replica and one INSERT there (into a table of its own, so
    the applier never meets it): an errant transaction in its binlog. Undone with the
    table dropped unlogged and, on MariaDB, RESET MASTER on the replica (its binlog state
    forgets the GTID; its replication position is gtid_slave_pos, untouched); on Oracle
    MySQL, where the replica's gtid_executed is also its replication position, the way
    MySQL's manual gives: an empty transaction on the primary for each errant GTID."""
    r = lab.replica
    r.sql("SET GLOBAL read_only = OFF")
    r.sql("CREATE TABLE IF NOT EXISTS lab.errant (id INT PRIMARY KEY) ENGINE=InnoDB")
    r.sql("INSERT INTO lab.errant VALUES (1)")
    try:
        yield
    finally:
        conn = r.root_connection()
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                cur.execute("DROP TABLE IF EXISTS lab.errant")
                if not lab.is_mysql:
                    cur.execute("RESET MASTER")
        finally:
            conn.close()
        if lab.is_mysql:
            empty_transactions_on_primary(lab)
        r.sql("SET GLOBAL read_only = ON")
        mysql_healthy(lab)


def empty_transactions_on_primary(lab: Any) -> None:
    """Oracle MySQL: give the primary an empty transaction for each GTID the replica has
    and it lacks, so that the pair agrees again (and the replica skips them)."""
    primary_set = lab.primary.sql("SELECT @@GLOBAL.gtid_executed")[0][0]
    errant = lab.replica.sql("SELECT GTID_SUBTRACT(@@GLOBAL.gtid_executed, %s)",
                             primary_set)[0][0]
    conn = lab.primary.root_connection()
    try:
        with conn.cursor() as cur:
            for gtid in _each_gtid(str(errant or "")):
                cur.execute(f"SET GTID_NEXT = '{gtid}'")
                cur.execute("BEGIN")
                cur.execute("COMMIT")
            cur.execute("SET GTID_NEXT = 'AUTOMATIC'")
    finally:
        conn.close()


def _each_gtid(gtid_set: str) -> Iterator[str]:
    """Every 'uuid:n' (or 'uuid:tag:n', MySQL 8.3+) of a MySQL GTID set
    ('uuid:1-3:7:tag:1,uuid2:4'; small sets only)."""
    for part in gtid_set.replace("\n", "").split(","):
        uuid, *pieces = part.strip().split(":")
        prefix = uuid
        for piece in pieces:
            if not piece[:1].isdigit():  # a tag: the intervals after it are its own
                prefix = f"{uuid}:{piece}"
                continue
            lo, _, hi = piece.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                yield f"{prefix}:{n}"


@contextlib.contextmanager
def increment_2(lab: Any, *, both: bool) -> Iterator[None]:
    """SET GLOBAL auto_increment_increment = 2 on the primary (and the replica)."""
    nodes = [lab.primary, lab.replica] if both else [lab.primary]
    for n in nodes:
        n.sql("SET GLOBAL auto_increment_increment = 2")
    try:
        yield
    finally:
        for n in nodes:
            n.sql("SET GLOBAL auto_increment_increment = 1")


@contextlib.contextmanager
def auto_increment_on_primary(lab: Any) -> Iterator[None]:
    """auto_increment_increment=2 on the primary only (seed 004's root cause), the
    monitoring connections dropped so replmon re-reads the variables at once."""
    with increment_2(lab, both=False):
        kill_monitor_connections(lab.primary)
        yield
    kill_monitor_connections(lab.primary)
