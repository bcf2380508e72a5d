"""The lab's primary refusing writes, in each of the ways a real one does (read_only,
max_connections, offline_mode, a full disk; Redis NOREPLICAS, OOM, MISCONF, no master),
and the waits until the application's writes go through again. Context managers on a
started Lab, as replmon.lab.faults' (which this module uses for its waits)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
import redis

from replmon.errors import LabError
from replmon.lab.faults import mysql_healthy, redis_link_up, slave_status, wait_for
from replmon.lab.node import free_port, unmount


@contextlib.contextmanager
def redis_no_master(lab: Any) -> Iterator[None]:
    """The Redis master told to follow a port where nothing listens (a failover that
    demoted it and promoted no one): both nodes are replicas, and every write gets
    "READONLY You can't write against a read only replica.". Undone: REPLICAOF NO ONE
    on it, and its replica's link up again."""
    node = lab.redis_primary
    with node.redis() as r:
        r.replicaof("127.0.0.1", free_port())
    try:
        yield
    finally:
        with node.redis() as r:
            r.replicaof("NO", "ONE")
        redis_link_up(lab)
        wait_redis_writes(lab)


# Each fault below makes the MySQL primary or the Redis master of now refuse the
# application's writes the way a production server does, and on exit puts back the
# exact values it changed and waits until a write goes through again.

ER_CON_COUNT_ERROR = 1040
"""MySQL/MariaDB's "Too many connections"."""
KNOCK_S = 0.2
"""Seconds between the application's connection attempts while max_connections is hit."""
PROBE_KEY = "lab:probe"
"""The key the Redis faults write to tell whether writes go through (deleted after)."""
MISCONF_KEY = "lab:misconf"
"""A key for the failing BGSAVE to save (with none, its child ends before it is killed)."""
SAVE_DELAY_US = 1_000_000
"""rdb-key-save-delay while the BGSAVE to kill runs: microseconds per key saved."""


def app_connection(lab: Any, node: Any = None) -> pymysql.connections.Connection[Any]:
    """A connection as the application account (``lab.app_user``, no admin privileges)
    over TCP to ``node``'s MySQL (the primary of now by default)."""
    node = node or lab.mysql_primary
    return pymysql.connect(host=node.host, port=node.mysql_port, user=lab.app_user,
                           password=lab.app_password, database="lab", autocommit=True,
                           connect_timeout=2, read_timeout=5, ssl_disabled=True)


def app_write(lab: Any) -> None:
    """One INSERT into lab.t by the application on the MySQL primary, rolled back (the
    server checks read_only at the INSERT; nothing stays, nothing replicates). Raises
    what the server refuses (pymysql.err.MySQLError)."""
    conn = app_connection(lab)
    try:
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("INSERT INTO lab.t (v) VALUES (0)")
            cur.execute("ROLLBACK")
    finally:
        conn.close()


def redis_write(lab: Any) -> None:
    """SET of a new key on the Redis master, then DEL: raises what the server refuses."""
    with lab.redis_primary.redis() as r:
        r.set(PROBE_KEY, "1")
        r.delete(PROBE_KEY)


def _writes_work(write: Callable[[Any], None], lab: Any) -> bool:
    try:
        write(lab)
    except (pymysql.err.MySQLError, redis.exceptions.RedisError):
        return False
    return True


def wait_mysql_writes(lab: Any, timeout: float = 30.0) -> None:
    wait_for(lambda: _writes_work(app_write, lab),
             "the application's writes on the MySQL primary", timeout)


def wait_redis_writes(lab: Any, timeout: float = 30.0) -> None:
    wait_for(lambda: _writes_work(redis_write, lab), "writes on the Redis master", timeout)


@contextlib.contextmanager
def primary_read_only(lab: Any) -> Iterator[None]:
    """SET GLOBAL read_only=ON on the MySQL primary (Oracle MySQL: super_read_only=ON
    too). The server refuses the application's writes (reads and replication go on):
    ERROR 1290 (HY000) "The MariaDB server is running with the --read-only option so it
    cannot execute this statement" (MySQL 9.7: "The MySQL server ...", the same
    --read-only: the application has no SUPER). Undone: both back as they were."""
    node = lab.mysql_primary
    names = ["read_only", "super_read_only"] if lab.is_mysql else ["read_only"]
    before = {n: node.sql(f"SELECT @@global.{n}")[0][0] for n in names}
    try:
        for n in names:
            node.sql(f"SET GLOBAL {n} = ON")
        yield
    finally:
        for n in reversed(names):  # super_read_only first: read_only=OFF would clear it
            node.sql(f"SET GLOBAL {n} = %s", _setting(before[n]))
        wait_mysql_writes(lab)


SPACE_WAIT_S = 60.0
"""How often MySQL and MariaDB look for free space again while a write waits for it:
a disk-full stall lasts up to this long after the space is freed."""


@contextlib.contextmanager
def disk_full(lab: Any) -> Iterator[None]:
    """An INSERT on the MySQL primary stalled on a full disk: a MyISAM table whose DATA
    DIRECTORY is a 256 KiB tmpfs the lab mounts under its own dir, the rest of that
    filesystem filled by a file, and one session inserting a 60 kB row. The server
    answers "Disk is full writing './lab/spill.MYD' (Errcode: 28 "No space left on
    device"). Waiting for someone to free space..." in its log and the session waits
    in the state "Waiting for someone to free space" (seen on MariaDB 10.11; MySQL 8.0+
    refuse a MyISAM DATA DIRECTORY: LabError). Written with sql_log_bin=0 (root's
    session): both nodes of the lab share one filesystem, so the replica must not
    create the table too. Undone: the filler removed; the server looks again once a
    minute, so the INSERT ends up to 60 s later; then the table dropped and the tmpfs
    unmounted (``Lab.stop`` unmounts what a killed run left)."""
    node = lab.mysql_primary
    if lab.is_mysql:
        raise LabError("disk_full: Oracle MySQL 8.0+ take no DATA DIRECTORY for MyISAM "
                       "(no symbolic links); the lab makes this fault on MariaDB")
    spill = node.spill_dir
    spill.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0777", "replmon-lab-full",
                    str(spill)], check=True, capture_output=True, timeout=10)
    conn = node.root_connection(read_timeout=int(SPACE_WAIT_S * 2))
    done = threading.Event()
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DROP TABLE IF EXISTS lab.spill")
            cur.execute("CREATE TABLE lab.spill (id INT PRIMARY KEY AUTO_INCREMENT, v BLOB) "
                        f"ENGINE=MyISAM DATA DIRECTORY='{lab.mysql_root.inside(spill)}'")
        with contextlib.suppress(OSError), open(spill / "filler", "wb") as f:
            while True:  # to the last block (the close may be the write that fails)
                f.write(bytes(4096))
                f.flush()

        def insert() -> None:
            with contextlib.suppress(pymysql.err.MySQLError), conn.cursor() as cur:
                cur.execute("INSERT INTO lab.spill (v) VALUES (REPEAT('x', 60000))")
            done.set()

        threading.Thread(target=insert, daemon=True, name="lab-disk-full").start()
        wait_for(lambda: node.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                                  "WHERE STATE LIKE 'Waiting for someone to free space%'"
                                  )[0][0] > 0, "an INSERT waiting for disk space", 10)
        yield
    finally:
        (spill / "filler").unlink(missing_ok=True)
        done.wait(SPACE_WAIT_S + 10)
        conn.close()
        with contextlib.suppress(pymysql.err.MySQLError), node.root_connection() as root, \
                root.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DROP TABLE IF EXISTS lab.spill")
        unmount(spill)
        if not done.is_set():
            raise LabError("disk_full: the INSERT still waits 70 s after the space was freed")


@contextlib.contextmanager
def offline_mode(lab: Any) -> Iterator[None]:
    """SET GLOBAL offline_mode=ON on the MySQL primary (Oracle MySQL only: MariaDB has no
    such mode): the server disconnects every session without CONNECTION_ADMIN (SUPER)
    and refuses new ones with ERROR 3032 (HY000) "The server is currently in offline
    mode": the application's, replmon's own and the replica's receiver (the replication
    account has no CONNECTION_ADMIN). Undone: OFF, the receiver started again if it gave
    up, the replica caught up."""
    if not lab.is_mysql:
        raise LabError("offline_mode: MariaDB has no offline mode (Oracle MySQL 5.7.5+)")
    node = lab.mysql_primary
    try:
        node.sql("SET GLOBAL offline_mode = ON")
        yield
    finally:
        node.sql("SET GLOBAL offline_mode = OFF")
        wait_mysql_writes(lab)
        # the replica's receiver was refused too and gives up after its retry count
        # (seen: "This was attempt 10/10" after a minute): started again if it stopped
        if slave_status(lab).get("Slave_IO_Running") == "No":
            lab.mysql_replica.sql("START REPLICA IO_THREAD")
        mysql_healthy(lab)


def _setting(value: Any) -> str:
    """A boolean variable's value as SELECT @@global gave it (1/0), for SET GLOBAL; a
    word (an enum's) as it is."""
    return ("ON" if value else "OFF") if isinstance(value, int) else str(value)


def _knock(lab: Any, node: Any, held: list[Any], stop: threading.Event) -> None:
    """Connect as the application every KNOCK_S until ``stop``; a connection that gets
    in (a slot freed) is kept, so the server stays full."""
    while not stop.wait(KNOCK_S):
        with contextlib.suppress(pymysql.err.MySQLError):
            held.append(app_connection(lab, node))


@contextlib.contextmanager
def max_connections_reached(lab: Any) -> Iterator[None]:
    """Every connection the MySQL primary allows in use: max_connections set to the
    connections of now plus 3 (MariaDB's floor: 10), idle application connections opened
    until the next is refused, then the one extra connection the server keeps for an
    account with SUPER/CONNECTION ADMIN taken by root too. A new connection, root's
    included, fails with ERROR 1040 (08004) "Too many connections"; those already open
    (the monitor's, the write load's, replication's) keep working. A thread connects as
    the application every 0.2 s, refused each time: Connection_errors_max_connections
    grows (it counts only the refusals once the extra connection is taken too; below
    that, the server lets the account log in and then refuses it, uncounted). Undone:
    every connection closed, max_connections back."""
    node = lab.mysql_primary
    before = int(node.sql("SELECT @@global.max_connections")[0][0])
    admin = node.root_connection()  # opened first: the way back in when all is taken

    def value(query: str) -> int:
        with admin.cursor() as cur:
            cur.execute(query)
            row = cur.fetchone()
        if row is None:
            raise LabError(f"{query}: no row")
        return int(row[-1])

    held: list[Any] = []
    stop = threading.Event()
    knock = threading.Thread(target=_knock, args=(lab, node, held, stop), daemon=True,
                             name="lab-max-connections")
    try:
        now = value("SHOW GLOBAL STATUS LIKE 'Threads_connected'")
        with admin.cursor() as cur:
            cur.execute(f"SET GLOBAL max_connections = {now + 3}")
        limit = value("SELECT @@global.max_connections")
        for _ in range(limit + 1):
            try:
                held.append(app_connection(lab, node))
            except pymysql.err.OperationalError as e:
                if e.args[0] != ER_CON_COUNT_ERROR:
                    raise
                break
        else:
            raise LabError(f"max_connections={limit}: {limit + 1} application "
                           "connections opened, none refused")
        with contextlib.suppress(pymysql.err.OperationalError):  # someone may have it
            held.append(node.root_connection())
        knock.start()
        yield
    finally:
        stop.set()
        if knock.is_alive():
            knock.join(5)
        for conn in held:
            with contextlib.suppress(Exception):
                conn.close()
        try:
            with admin.cursor() as cur:
                cur.execute(f"SET GLOBAL max_connections = {before}")
        finally:
            admin.close()
        wait_mysql_writes(lab)


def _redis_config(lab: Any, names: tuple[str, ...]) -> dict[str, str]:
    """CONFIG GET of ``names`` on the Redis master of now."""
    with lab.redis_primary.redis() as r:
        got = {n: r.config_get(n).get(n) for n in names}
    missing = [n for n, v in got.items() if v is None]
    if missing:
        raise LabError(f"this Redis has no {', '.join(missing)} setting")
    return {n: str(v) for n, v in got.items()}


@contextlib.contextmanager
def _redis_settings_kept(lab: Any, names: tuple[str, ...]) -> Iterator[redis.Redis]:
    """A client of the Redis master of now; on the way out, ``names`` set back as they
    were (in reverse order) and the writes waited for."""
    node = lab.redis_primary
    before = _redis_config(lab, names)
    try:
        with node.redis() as r:
            yield r
    finally:
        with node.redis() as r:
            for name in reversed(names):
                r.config_set(name, before[name])
        wait_redis_writes(lab)


@contextlib.contextmanager
def redis_noreplicas(lab: Any) -> Iterator[None]:
    """min-replicas-to-write 2 and min-replicas-max-lag 10 on the Redis master, which has
    one replica: with fewer good replicas than that, it refuses every write (reads go
    on; INFO says min_slaves_good_slaves:1): "NOREPLICAS Not enough good replicas to
    write.". Undone: both settings back as they were."""
    with _redis_settings_kept(lab, ("min-replicas-max-lag", "min-replicas-to-write")) as r:
        r.config_set("min-replicas-max-lag", "10")
        r.config_set("min-replicas-to-write", "2")
        yield


@contextlib.contextmanager
def redis_oom(lab: Any) -> Iterator[None]:
    """maxmemory-policy noeviction and maxmemory 256 KiB (or more, until a SET is
    refused) under the Redis master's used_memory: nothing may be evicted, so it
    refuses every command that may use more memory (SET, INCR, LPUSH...; reads and DEL
    go on): "OOM command not allowed when used memory > 'maxmemory'." (redis-py raises
    OutOfMemoryError without the "OOM "). The replica has no maxmemory and only
    follows. Undone: both settings back as they were."""
    with _redis_settings_kept(lab, ("maxmemory-policy", "maxmemory")) as r:
        r.config_set("maxmemory-policy", "noeviction")
        margin = 256 << 10
        while True:
            mem = r.info("memory")
            used = int(mem["used_memory"]) - int(mem.get("mem_not_counted_for_evict", 0))
            r.config_set("maxmemory", str(max(1, used - margin)))
            try:
                r.set(PROBE_KEY, "1")
            except redis.exceptions.OutOfMemoryError:
                break
            r.delete(PROBE_KEY)
            if used - margin <= 1:
                raise LabError(f"Redis accepts a SET at maxmemory=1 (used {used})")
            margin *= 2
        yield


def _persistence(r: redis.Redis) -> dict[str, Any]:
    return dict(r.info("persistence"))


def _kill_bgsave(r: redis.Redis) -> None:
    """SIGKILL the Redis server's forked child (one runs at a time: the BGSAVE's)."""
    import psutil  # type: ignore[import-untyped]

    server = psutil.Process(int(r.info("server")["process_id"]))
    wait_for(lambda: bool(server.children()), "the BGSAVE child forked", 5)
    for child in server.children():
        with contextlib.suppress(psutil.NoSuchProcess):
            child.send_signal(signal.SIGKILL)


@contextlib.contextmanager
def redis_misconf(lab: Any) -> Iterator[None]:
    """The Redis master's last RDB snapshot failed while it must save (save "3600 1")
    and stop-writes-on-bgsave-error is yes: it refuses every write, from any client
    (and PING too): "MISCONF Redis is configured to save RDB snapshots, but it's
    currently unable to persist to disk. Commands that may modify the data set are
    disabled, because this instance is configured to report errors during writes if RDB
    snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs
    for details about the RDB error." (Valkey: "MISCONF Valkey is ..."). The failure:
    BGSAVE with rdb-key-save-delay 1 s per key (a hidden test setting; Redis 6.2 to 8.0
    and Valkey 8.1 and 9.1 of the lab all take it) and its forked child SIGKILLed, as
    the kernel's OOM killer does in production (a full disk or an unwritable dir are
    the other causes; the latter stops no server run as root): the log says
    "Background saving terminated by signal 9", INFO rdb_last_bgsave_status:err. The
    delay stays while the fault lasts, so a save Redis retries (a save point due) does
    not end it. Undone: a BGSAVE still running killed, rdb-key-save-delay back, a
    BGSAVE that succeeds (dump.rdb in the lab's dir), save and
    stop-writes-on-bgsave-error back as they were."""
    node = lab.redis_primary
    before = _redis_config(lab, ("rdb-key-save-delay", "save", "stop-writes-on-bgsave-error"))
    try:
        with node.redis() as r:
            r.config_set("rdb-key-save-delay", str(SAVE_DELAY_US))
            r.config_set("save", "3600 1")
            r.config_set("stop-writes-on-bgsave-error", "yes")
            r.set(MISCONF_KEY, "1")
            wait_for(lambda: not _persistence(r)["rdb_bgsave_in_progress"],
                     "no fork running on the Redis master")
            r.bgsave()
            _kill_bgsave(r)
            wait_for(lambda: not _persistence(r)["rdb_bgsave_in_progress"],
                     "the killed BGSAVE reaped")
            if _persistence(r)["rdb_last_bgsave_status"] != "err":
                raise LabError("the BGSAVE ended before it was killed")
        yield
    finally:
        with node.redis() as r:
            if _persistence(r)["rdb_bgsave_in_progress"]:
                _kill_bgsave(r)  # a retried save, still slowed down
            wait_for(lambda: not _persistence(r)["rdb_bgsave_in_progress"],
                     "no fork running on the Redis master")
            r.config_set("rdb-key-save-delay", before["rdb-key-save-delay"])
            r.bgsave(schedule=True)  # (after a replica's full sync that may have begun)
            wait_for(lambda: (p := _persistence(r))["rdb_last_bgsave_status"] == "ok"
                     and not p["rdb_bgsave_in_progress"], "a BGSAVE that succeeds")
            r.config_set("save", before["save"])
            r.config_set("stop-writes-on-bgsave-error", before["stop-writes-on-bgsave-error"])
            r.delete(MISCONF_KEY)
        wait_redis_writes(lab)
