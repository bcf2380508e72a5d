"""Planned switchovers on the lab (replmon.lab), done the way a DBA's runbook does them.

Each function swaps one layer's roles between the lab's two nodes, whichever is the
primary now (``lab.mysql_primary``, ``lab.redis_primary``), so calling it again switches
back; ``switchover(lab)`` does the layers asked for, ``switch_back(lab)`` restores the
lab's start state (the node started as primary is the primary of every layer).

MySQL/MariaDB (GTID, no transaction lost, none errant):

1. fence the old primary: ``SET GLOBAL read_only=ON`` (MariaDB; the application's
   account has no READ_ONLY ADMIN) or ``super_read_only=ON`` (Oracle MySQL);
2. wait until the replica has applied all the old primary wrote
   (``MASTER_GTID_WAIT(@@gtid_binlog_pos)`` / ``WAIT_FOR_EXECUTED_GTID_SET``);
3. promote the replica: ``STOP REPLICA; RESET REPLICA ALL; SET GLOBAL read_only=OFF``
   (MariaDB >= 10.5 takes REPLICA for SLAVE; MySQL: ``SET GLOBAL super_read_only=OFF,
   read_only=OFF``); from here on the lab's write loads write to it;
4. point the old primary at it: MariaDB first ``SET GLOBAL gtid_slave_pos =
   @@gtid_binlog_pos`` (a primary's gtid_slave_pos is stale or empty: with
   MASTER_USE_GTID=slave_pos it would ask for the whole history again), then
   ``CHANGE MASTER TO ..., MASTER_USE_GTID=slave_pos; START REPLICA`` (MariaDB has no
   CHANGE REPLICATION SOURCE TO); MySQL (8.4 and 9.x have no CHANGE MASTER) ``CHANGE
   REPLICATION SOURCE TO ..., SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1; START
   REPLICA``; then wait until it has caught up. On MySQL the demoted node's
   super_read_only goes back OFF once it replicates (read_only stays ON): the lab's
   replica baseline.

The accounts (replication, monitor, application) were made on the first primary and
replicated, so both nodes have them and replication works in both directions.

Redis/Valkey: ``CLIENT PAUSE WRITE`` on the old master (no write lost in between), wait
until the replica has its offset, ``REPLICAOF NO ONE`` on the replica, ``REPLICAOF <new
master>`` on the old master (its ``masterauth`` is the lab's password, as at start),
``CLIENT UNPAUSE``, wait for ``master_link_status:up``.

Each returns a ``LayerSwitch``: the wall times (``time.time()``) at which the old primary
was fenced, the new one took writes and the old one replicated again, for tests to
compare with what a monitor reports.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pymysql

from replmon.errors import LabError
from replmon.lab.node import LabNode
from replmon.lab.pair import LAYERS, Lab, Layer


@dataclass(frozen=True)
class LayerSwitch:
    """One layer's switchover (or failover), as it happened."""

    layer: Layer
    old: str
    """The node that was the primary (its name: "primary" or "replica")."""
    new: str
    """The node that is the primary now."""
    fenced_wall: float
    """When the old primary stopped taking writes (read_only, CLIENT PAUSE; for a
    failover: when it was stalled)."""
    promoted_wall: float
    """When the new primary took writes (read_only OFF, REPLICAOF NO ONE): the moment
    the roles changed."""
    done_wall: float
    """When the old primary replicated from the new one, caught up (link up)."""

    @property
    def refused_s(self) -> float:
        """Seconds during which neither node took writes."""
        return self.promoted_wall - self.fenced_wall

    @property
    def seconds(self) -> float:
        """The whole switchover, fence to replicating."""
        return self.done_wall - self.fenced_wall


def switchover(lab: Lab, layers: Sequence[Layer] = LAYERS, *, timeout: float = 30.0
               ) -> dict[Layer, LayerSwitch]:
    """Switch the roles of ``layers`` over (MySQL first, then Redis); ``layers=("mysql",)``
    leaves the pair half-switched. Calling it again switches back."""
    done: dict[Layer, LayerSwitch] = {}
    for layer in LAYERS:
        if layer in layers:
            done[layer] = SWITCH[layer](lab, timeout=timeout)
    return done


def switch_back(lab: Lab, *, timeout: float = 30.0) -> dict[Layer, LayerSwitch]:
    """Switch back every layer whose primary is not the node started as primary."""
    return switchover(lab, [layer for layer in LAYERS if lab.primary_of(layer) is not lab.primary],
                      timeout=timeout)


@contextlib.contextmanager
def switched(lab: Lab, layers: Sequence[Layer] = LAYERS, *, timeout: float = 30.0
             ) -> Iterator[dict[Layer, LayerSwitch]]:
    """Switch ``layers`` over for the block (yields what ``switchover`` returned), and
    back after it, also when the block fails."""
    done: dict[Layer, LayerSwitch] = {}
    try:
        for layer in LAYERS:
            if layer in layers:
                done[layer] = SWITCH[layer](lab, timeout=timeout)
        yield done
    finally:
        switchover(lab, [layer for layer in layers if layer in done], timeout=timeout)


# --- MySQL / MariaDB --------------------------------------------------------------------

def mysql_switchover(lab: Lab, *, timeout: float = 30.0) -> LayerSwitch:
    """Swap the MySQL roles: the replica promoted, the primary made its replica."""
    old, new = lab.mysql_primary, lab.mysql_replica
    fenced = _fence_mysql(lab, old, new, timeout)
    promoted = _promote_mysql(lab, new)
    # 4. The old primary replicates from the new one.
    _follow_mysql(lab, old, new, timeout)
    return LayerSwitch("mysql", old.name, new.name, fenced, promoted, time.time())


def _fence_mysql(lab: Lab, old: LabNode, new: LabNode, timeout: float) -> float:
    """1. and 2.: the old primary refuses the application's writes, and the replica has
    applied all it wrote; when it was fenced (wall time)."""
    mysql = lab.is_mysql
    if not mysql and not old.sql("SELECT @@GLOBAL.log_slave_updates")[0][0]:
        # Its binlog would lack what it applied: gtid_binlog_pos could not say where the
        # old primary resumes as a replica.
        raise LabError(f"switchover: log_slave_updates is OFF on {old.name}")
    # 1. Fence: the application's writes are refused from here on.
    old.sql("SET GLOBAL super_read_only = ON" if mysql else "SET GLOBAL read_only = ON")
    fenced = time.time()
    # 2. The replica applies everything the old primary wrote.
    if mysql:
        pos = str(old.sql("SELECT @@GLOBAL.gtid_executed")[0][0])
        res = new.sql("SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)", pos, timeout)
    else:
        pos = str(old.sql("SELECT @@GLOBAL.gtid_binlog_pos")[0][0])
        res = new.sql("SELECT MASTER_GTID_WAIT(%s, %s)", pos, timeout) if pos else [(0,)]
    if res[0][0] != 0:
        raise LabError(f"switchover: {new.name} did not apply {pos} of {old.name} in "
                       f"{timeout:g} s ({old.name} left read_only)")
    return fenced


def _promote_mysql(lab: Lab, new: LabNode) -> float:
    """3.: the replica takes writes (the lab's write loads follow); when (wall time)."""
    if lab.is_mysql:
        for stmt in ("STOP REPLICA", "RESET REPLICA ALL",
                     "SET GLOBAL super_read_only = OFF, read_only = OFF"):
            new.sql(stmt)
    else:
        for stmt in ("STOP REPLICA", "RESET REPLICA ALL", "SET GLOBAL read_only = OFF"):
            new.sql(stmt)
    promoted = time.time()
    lab.set_primary("mysql", new)
    return promoted


def _follow_mysql(lab: Lab, old: LabNode, new: LabNode, timeout: float) -> None:
    """4.: ``old`` replicates from ``new``, both threads running, caught up."""
    replicate_from(lab, old, new)
    # Both threads running (MariaDB's IO thread says "Connecting", then "Preparing",
    # before "Yes"), and caught up.
    _wait(lambda: replication_threads(old) == ("Yes", "Yes", new.mysql_port),
          f"{old.name}'s replication threads running from {new.name}", timeout)
    lab.wait_replica_caught_up(timeout=timeout)
    if lab.is_mysql:
        old.sql("SET GLOBAL super_read_only = OFF")  # read_only stays ON: the lab's baseline


def node_lost(lab: Lab, *, timeout: float = 30.0) -> dict[Layer, LayerSwitch]:
    """An unplanned failover: the primary node lost (its MySQL and Redis killed,
    SIGKILL), the replica promoted on both. The replica had all the primary wrote (the
    lab fences and waits first, as semi-sync would have it), so the old primary can
    rejoin as a replica of the new one (``rejoin``) without errant transactions."""
    old, new = lab.mysql_primary, lab.mysql_replica
    if lab.redis_primary is not old:
        raise LabError("node_lost: MySQL's and Redis's primaries are not one node")
    fenced = _fence_mysql(lab, old, new, timeout)
    with old.redis() as oc, new.redis() as nc:
        oc.execute_command("CLIENT", "PAUSE", str(int(timeout * 1000)), "WRITE")
        target = int(oc.info("replication")["master_repl_offset"])
        _wait(lambda: int(nc.info("replication").get("slave_repl_offset", -1)) >= target,
              f"Redis {new.name} at offset {target}", timeout)
    old.kill_mysql()
    old.kill_redis()
    lost = time.time()
    promoted = _promote_mysql(lab, new)
    with new.redis() as nc:
        nc.execute_command("REPLICAOF", "NO", "ONE")
    lab.set_primary("redis", new)
    return {"mysql": LayerSwitch("mysql", old.name, new.name, fenced, promoted, lost),
            "redis": LayerSwitch("redis", old.name, new.name, fenced, time.time(), lost)}


def rejoin(lab: Lab, node: LabNode, *, timeout: float = 30.0) -> None:
    """``node``, lost (``node_lost``), started again: its MySQL (read_only, as a
    restarted replica) replicates from the primary, its Redis is made a replica of the
    master; both caught up."""
    primary = lab.mysql_primary
    node.start_mysql()
    _follow_mysql(lab, node, primary, timeout)
    node.start_redis()
    with node.redis() as rc:
        rc.execute_command("REPLICAOF", lab.redis_primary.repl_host,
                           str(lab.redis_primary.redis_port))
    wait_redis_link(node, lab.redis_primary, timeout)


def replicate_from(lab: Lab, node: LabNode, source: LabNode) -> None:
    """Make ``node`` (read_only) a GTID replica of ``source`` with the lab's replication
    account, as Lab.start does, and start it."""
    if lab.is_mysql:
        node.sql(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST=%s, SOURCE_PORT=%s, SOURCE_USER=%s,"
            " SOURCE_PASSWORD=%s, SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1,"
            " GET_SOURCE_PUBLIC_KEY=1",
            source.repl_host, source.mysql_port, lab.repl_user, lab.repl_password)
        node.sql("START REPLICA")
        return
    # A primary's gtid_slave_pos is what it last applied as a replica (or empty): with
    # slave_pos it would ask its new master for everything since. Its binlog has all it
    # wrote and applied (log_slave_updates=ON, as the lab starts it), so that is where it
    # resumes (mysql_switchover checks it before it fences anything).
    node.sql("SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos")
    node.sql(
        "CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER=%s,"
        " MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
        source.repl_host, source.mysql_port, lab.repl_user, lab.repl_password)
    node.sql("START REPLICA")


def replication_threads(node: LabNode) -> tuple[str, str, int | None]:
    """(IO thread, SQL thread, source port) of ``node``'s SHOW REPLICA STATUS, in
    MariaDB's words ("Yes"/"No"/"Connecting"); ("", "", None) when it replicates from
    nothing."""
    conn = node.root_connection(cursorclass=pymysql.cursors.DictCursor)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW REPLICA STATUS")
            row = cur.fetchone() or {}
    finally:
        conn.close()
    io = row.get("Slave_IO_Running", row.get("Replica_IO_Running", ""))
    sql = row.get("Slave_SQL_Running", row.get("Replica_SQL_Running", ""))
    port = row.get("Master_Port", row.get("Source_Port"))
    return str(io or ""), str(sql or ""), None if port is None else int(port)


# --- Redis / Valkey ---------------------------------------------------------------------

def redis_switchover(lab: Lab, *, timeout: float = 30.0) -> LayerSwitch:
    """Swap the Redis roles: the replica promoted, the master made its replica."""
    old, new = lab.redis_primary, lab.redis_replica
    with old.redis() as oc, new.redis() as nc:
        pause_ms = int(timeout * 1000)
        oc.execute_command("CLIENT", "PAUSE", str(pause_ms), "WRITE")
        fenced = time.time()
        try:
            target = int(oc.info("replication")["master_repl_offset"])
            _wait(lambda: int(nc.info("replication").get("slave_repl_offset", -1)) >= target,
                  f"Redis {new.name} at offset {target}", timeout)
            nc.execute_command("REPLICAOF", "NO", "ONE")
            promoted = time.time()
            lab.set_primary("redis", new)
            oc.execute_command("REPLICAOF", new.repl_host, str(new.redis_port))
        finally:
            oc.execute_command("CLIENT", "UNPAUSE")
        wait_redis_link(old, new, timeout)
    return LayerSwitch("redis", old.name, new.name, fenced, promoted, time.time())


def wait_redis_link(node: LabNode, master: LabNode, timeout: float = 30.0) -> None:
    """Wait until ``node``'s Redis is a replica of ``master``'s with its link up."""
    with node.redis() as rc:
        def up() -> bool:
            info = rc.info("replication")
            return bool(info.get("role") == "slave" and info.get("master_link_status") == "up"
                        and info.get("master_port") == master.redis_port)
        _wait(up, f"Redis {node.name} linked up to {master.name}", timeout)


def _wait(cond: object, what: str, timeout: float) -> None:
    assert callable(cond)
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise LabError(f"switchover: {what} not reached in {timeout:g} s")
        time.sleep(0.02)


SWITCH = {"mysql": mysql_switchover, "redis": redis_switchover}
