"""Two primaries: both nodes accept writes, so the two copies drift apart.

Covers MySQL/MariaDB and Redis only. DRBD Primary on both nodes is reported by the
drbd_peer check (key = the resource), not here, so it is never reported twice.

- **MySQL/MariaDB**: reads ``read_only`` and ``super_read_only`` (MySQL 5.7+/8) from
  each node's ``SHOW GLOBAL VARIABLES``. A node is writable when ``read_only`` is OFF.
  Both writable is critical: a write that lands on the replica (a misrouted client,
  a VIP that moved, a failover script that promoted it) is not on the primary; while
  the replica still replicates it may also break replication (duplicate key, row not
  found), and once replication stopped the two sides simply diverge. The finding says
  whether the replica's IO/SQL threads run. On the replica, ``read_only=ON`` with
  ``super_read_only=OFF`` still lets accounts with SUPER (root) write; the numbers
  show both. replmon re-reads variables about once a minute (and after a reconnect),
  so a change of read_only shows up within that minute plus ``open_after`` (3 s).
- **Redis**: both servers report ``role:master`` (critical): the replica was promoted
  (``REPLICAOF NO ONE``, a Sentinel/cluster failover) while the old master still
  runs. Clients writing to either side diverge, and whichever is made a replica again
  throws its own data away in a full sync. The numbers carry both replication ids
  and offsets. While a Redis Sentinel (``--sentinel``) is failing the master over, or
  within its ``failover-timeout`` after it promoted a replica (the old master, back,
  is a master until Sentinel reconfigures it), that is Sentinel's failover: the
  ``roles`` check tells it as one event; past that, two masters are critical here.

A node whose MySQL or Redis cannot be read, or whose read_only was not read, is not
judged. What to do: make one side read-only (``SET GLOBAL read_only=ON``, and
``super_read_only=ON`` on MySQL 8) or a replica again (``REPLICAOF <host> <port>``),
after deciding which side's writes to keep; find who wrote to the wrong side
(binlog / ``MONITOR``) and fix the routing or failover tooling.
"""

from __future__ import annotations

from replmon.check import (
    Check,
    Explains,
    NodeTick,
    Observation,
    Severity,
    Thresholds,
    Window,
    failover_busy,
    fmt,
    numbers,
)

OFF = {"OFF", "0"}
ON = {"ON", "1"}


class Limits(Thresholds):
    """No thresholds of its own: both writable is never fine for a primary/replica pair."""


def _writable(n: NodeTick) -> bool | None:
    """True (read_only OFF), False (ON), None (not read or unknown value)."""
    ro = n.mysql.variables.get("read_only", "").upper()
    return True if ro in OFF else False if ro in ON else None


def _mysql(w: Window) -> Observation | None:
    if not w.pair.mysql_ok:
        return None
    p, r = w.last.oriented("mysql").nodes
    if not (_writable(p) and _writable(r)):
        return None
    chans = r.mysql.replication
    io = any(c.io_running == "Yes" for c in chans)
    sql = any(c.sql_running for c in chans)
    if io and sql:
        state = "replica still replicating"
        cause = ("writes that land on the replica are not on the primary and can break "
                 "replication (duplicate key, row not found); a failover would serve them")
    elif chans:
        state = f"replication IO {'running' if io else 'stopped'}, SQL " \
                f"{'running' if sql else 'stopped'}"
        cause = ("replication is not applying: the two servers now take writes independently "
                 "and their data diverges")
    else:
        state = "replica has no replication channel"
        cause = ("the replica was promoted (RESET SLAVE) while the primary still takes "
                 "writes: two independent primaries, writes on both sides diverge")
    return Observation.trusted(
        key="mysql", node="pair", severity=Severity.CRITICAL,
        title=f"MySQL read_only=OFF on both nodes ({state}): writes on both sides diverge",
        numbers=numbers(primary_read_only=p.mysql.variables.get("read_only"),
                        replica_read_only=r.mysql.variables.get("read_only"),
                        replica_super_read_only=r.mysql.variables.get("super_read_only"),
                        replica_io_running=io, replica_sql_running=sql,
                        replica_channels=len(chans)),
        cause=cause,
        next_step=("on the replica: SET GLOBAL read_only=ON (and super_read_only=ON on MySQL 8), "
                   "in its my.cnf too; then check its binlog / GTID set for writes that did "
                   "not come from the primary (gtid_executed vs the primary's)"),
    )


def _redis(w: Window) -> Observation | None:
    if not w.pair.redis_ok:
        return None
    p, r = w.last.oriented("redis").nodes
    if not (p.redis.role == "master" and r.redis.role == "master"):
        return None
    if failover_busy(w.last.sentinel, w.last.wall):
        return None  # Sentinel's failover, settling: the roles check tells it as one event
    same_id = p.redis.master_replid is not None and p.redis.master_replid == r.redis.master_replid
    return Observation.trusted(
        key="redis", node="pair", severity=Severity.CRITICAL,
        title=(f"Redis role master on both nodes (offsets {fmt(p.redis.master_repl_offset)} "
               f"vs {fmt(r.redis.master_repl_offset)}, "
               f"{'same' if same_id else 'different'} replication ids): "
               f"writes on both sides diverge"),
        numbers=numbers(primary_offset=p.redis.master_repl_offset,
                        replica_offset=r.redis.master_repl_offset,
                        primary_replid=p.redis.master_replid,
                        replica_replid=r.redis.master_replid, same_replid=same_id,
                        primary_replicas=p.redis.connected_replicas,
                        replica_replicas=r.redis.connected_replicas),
        cause=("the replica was promoted (REPLICAOF NO ONE, a Sentinel or cluster failover) "
               "while the old master still runs: each takes its own writes, and the side made "
               "a replica again loses its writes in a full sync"),
        next_step=("decide which side's data to keep; make the other a replica again "
                   "(REPLICAOF <host> <port>) and fix whatever promoted it (Sentinel config, "
                   "failover script); clients must point at one master"),
    )


def evaluate(w: Window, t: Limits) -> list[Observation]:
    return [o for o in (_mysql(w), _redis(w)) if o is not None]


EXPLAINS: tuple[Explains, ...] = (
    Explains("errant_writes", "either", "two writable nodes: writes land on the replica too"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="two_primaries", title="Two primaries", needs=("mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=1.0, explains=EXPLAINS)
