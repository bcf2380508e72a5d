"""Config drift: settings that must agree (or must differ) between the two nodes.

A replica is the primary of tomorrow's failover, and half of a pair's surprises are a
setting nobody compared: seed 004's UPDATEs that changed no row came from
``auto_increment_increment=2`` on one node only. replmon reads both nodes' settings
(MySQL SHOW GLOBAL VARIABLES about once a minute; Redis INFO every tick and CONFIG GET
client-output-buffer-limit every minute) and compares them. One observation per setting
(key = the setting):

- **warning**, the pair misbehaves now or after a failover:
  ``auto_increment_increment`` differs (rows written with other keys on each side);
  ``server_id`` equal on both (a replica ignores events with its own server_id, and two
  replicas of the same id kick each other off the source); ``binlog_format`` differs
  (row vs statement changes what replicates after a failover); ``gtid_mode`` /
  ``gtid_strict_mode`` differ (GTID auto-positioning breaks on failover); Redis
  ``maxmemory`` or ``maxmemory-policy`` differs (after a failover the new master evicts
  differently, or runs out of memory).
- **info**, worth knowing before a failover: ``sync_binlog``,
  ``innodb_flush_log_at_trx_commit`` (durability), ``max_connections``,
  ``innodb_buffer_pool_size`` (capacity), the server versions; Redis
  ``repl-backlog-size``, ``client-output-buffer-limit replica`` and version; equal
  ``auto_increment_offset`` while the increment is above 1 (master-master keys collide).

``read_only`` on the replica is two_primaries' finding, not repeated here. A setting one
node does not report (an older server, a source down) is not compared.

What to do: make the setting the same in both nodes' my.cnf / redis.conf (and SET
GLOBAL / CONFIG SET now), or document why it differs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from replmon.check import (
    Check,
    NodeTick,
    Observation,
    Severity,
    Thresholds,
    Window,
    numbers,
    source_ok,
)


class Limits(Thresholds):
    open_after: float = 2.0
    """Seconds (s) a difference must be seen before the finding opens (settings change
    rarely: two readings)."""


MUST_AGREE: tuple[tuple[str, Severity, str], ...] = (
    ("auto_increment_increment", Severity.WARNING,
     "each node generates AUTO_INCREMENT keys with its own step: rows written on one side "
     "get other keys than the same statements on the other (seed 004: UPDATEs by id that "
     "change no row)"),
    ("binlog_format", Severity.WARNING,
     "after a failover the binary log switches between row and statement events: what "
     "replicates, and how safely, changes with the primary"),
    ("gtid_mode", Severity.WARNING,
     "GTID positioning works on one side only: a failover cannot re-point the replica by "
     "GTID"),
    ("gtid_strict_mode", Severity.WARNING,
     "one side stops on an out-of-order GTID, the other accepts it: a failover changes "
     "whether divergence stops replication"),
    ("sync_binlog", Severity.INFO,
     "the two nodes make the binlog durable differently: after a failover a crash can lose "
     "more (or fewer) transactions than before"),
    ("innodb_flush_log_at_trx_commit", Severity.INFO,
     "the two nodes make commits durable differently: after a failover a crash can lose "
     "the last second of commits"),
    ("max_connections", Severity.INFO,
     "after a failover the new primary accepts another number of clients"),
    ("innodb_buffer_pool_size", Severity.INFO,
     "after a failover the new primary caches another amount of data: expect more reads"),
    ("version", Severity.INFO,
     "the servers run different versions: replication from newer to older is unsupported, "
     "and behaviour can differ after a failover"),
)

REDIS: tuple[tuple[str, Callable[[NodeTick], object], Severity, str], ...] = (
    ("maxmemory", lambda n: n.redis.maxmemory, Severity.WARNING,
     "after a failover the new master runs with another memory ceiling: it evicts, refuses "
     "writes or grows where the old one did not"),
    ("maxmemory-policy", lambda n: n.redis.maxmemory_policy, Severity.WARNING,
     "after a failover the new master evicts by another rule (or refuses writes instead)"),
    ("repl-backlog-size", lambda n: n.redis.repl_backlog_size, Severity.INFO,
     "after a failover the new master covers another length of link outage with partial "
     "resyncs"),
    ("client-output-buffer-limit replica", lambda n: n.redis.replica_buffer_limit,
     Severity.INFO,
     "after a failover full syncs to the new replica are cut off at another size"),
    ("redis version", lambda n: n.redis.product, Severity.INFO,
     "the nodes run different Redis/Valkey versions: replication from newer to older is "
     "unsupported"),
)


def _show(v: object) -> str:
    if isinstance(v, tuple):
        return " ".join(str(x) for x in v)
    return str(v)


def _obs(name: str, sev: Severity, p: object, r: object, why: str, how: str) -> Observation:
    return Observation(
        key=name, node="pair", severity=sev,
        title=f"{name} {how}: primary {_show(p)}, replica {_show(r)}",
        numbers=numbers(setting=name, primary=_show(p), replica=_show(r)),
        cause=why,
        next_step=f"Set {name} alike in both nodes' config files (and at runtime), or "
                  "document why it differs")


_MYSQL_NAMES = (*(name for name, _, _ in MUST_AGREE), "server_id", "auto_increment_offset")


def _mysql(p: NodeTick, r: NodeTick) -> tuple[Observation, ...]:
    pv, rv = p.mysql.variables, r.mysql.variables
    return _mysql_cached(tuple(map(pv.get, _MYSQL_NAMES)), p.mysql.version,
                         tuple(map(rv.get, _MYSQL_NAMES)), r.mysql.version)


@lru_cache(maxsize=16)
def _mysql_cached(pvals: tuple[str | None, ...], pversion: str,
                  rvals: tuple[str | None, ...], rversion: str) -> tuple[Observation, ...]:
    """Settings change about never and the check runs every tick: the comparison is
    cached by the settings' values (the observations are immutable records)."""
    pv = {n: v for n, v in zip(_MYSQL_NAMES, pvals, strict=True) if v is not None}
    rv = {n: v for n, v in zip(_MYSQL_NAMES, rvals, strict=True) if v is not None}
    out = []
    for name, sev, why in MUST_AGREE:
        a, b = pv.get(name), rv.get(name)
        if a is None or b is None:
            continue
        if name == "version":
            a, b = pversion or a, rversion or b
        if a.strip().upper() != b.strip().upper():
            out.append(_obs(name, sev, a, b, why, "differs"))
    a, b = pv.get("server_id"), rv.get("server_id")
    if a is not None and a == b:
        out.append(_obs("server_id", Severity.WARNING, a, b,
                        "a replica skips events carrying its own server_id (they look like "
                        "its own, come back), so writes with that id never replicate; two "
                        "replicas with one id disconnect each other", "is the same"))
    inc = pv.get("auto_increment_increment")
    a, b = pv.get("auto_increment_offset"), rv.get("auto_increment_offset")
    if inc not in (None, "1") and inc == rv.get("auto_increment_increment") and a is not None \
            and a == b:
        out.append(_obs("auto_increment_offset", Severity.INFO, a, b,
                        f"both nodes step by {inc} from the same offset: with writes on "
                        "both (master-master) their keys collide", "is the same"))
    return tuple(out)


def _redis(p: NodeTick, r: NodeTick) -> tuple[Observation, ...]:
    a, b = p.redis, r.redis  # in REDIS's order, read directly: this runs every tick
    return _redis_cached((a.maxmemory, a.maxmemory_policy, a.repl_backlog_size,
                          a.replica_buffer_limit, a.version),
                         (b.maxmemory, b.maxmemory_policy, b.repl_backlog_size,
                          b.replica_buffer_limit, b.version))


@lru_cache(maxsize=16)
def _redis_cached(pvals: tuple[object, ...], rvals: tuple[object, ...]
                  ) -> tuple[Observation, ...]:
    out = []
    for (name, _, sev, why), a, b in zip(REDIS, pvals, rvals, strict=True):
        if a is not None and b is not None and a != b:
            out.append(_obs(name, sev, a, b, why, "differs"))
    return tuple(out)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    p, r = w.node("primary"), w.node("replica")
    out: list[Observation] = []
    if source_ok(p, "mysql") and source_ok(r, "mysql"):
        out += _mysql(p, r)
    if source_ok(p, "redis") and source_ok(r, "redis"):
        out += _redis(p, r)
    return out


CHECK = Check(id="config_drift", title="Config drift", needs=("mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=1.0)
