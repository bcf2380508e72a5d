"""Config drift: settings that must agree (or must differ) between the two nodes.

A replica is the primary of tomorrow's failover, and half of a pair's surprises are a
setting nobody compared: in the field notes, UPDATEs that changed no row came from
``auto_increment_increment=2`` on one node only. replmon reads both nodes' settings
(MySQL SHOW GLOBAL VARIABLES about once a minute; Redis INFO every tick and CONFIG GET
client-output-buffer-limit, min-replicas-to-write and min-replicas-max-lag every minute)
and compares them. One observation per setting (key = the setting, under its MySQL 8.0.26+
name where a flavour renamed it; the title says the name the server has):

- **warning**, the pair misbehaves now or after a failover:
  ``auto_increment_increment`` differs (rows written with other keys on each side);
  ``server_id`` equal on both (a replica ignores events with its own server_id, and two
  replicas of the same id kick each other off the source); ``binlog_format`` differs
  (row vs statement changes what replicates after a failover); ``gtid_mode`` /
  ``gtid_strict_mode`` differ (GTID auto-positioning breaks on failover); ``log_bin``
  differs (the node without a binary log cannot be a source: nothing can follow it after
  a failover); ``lower_case_table_names`` differs (a table named in another letter case is
  another table, or none, on the other side: replication stops); ``sql_mode`` differs (the
  same statement is handled differently, the nodes diverge, with row-based replication
  too); a node's ``replica_max_allowed_packet`` (MariaDB ``slave_max_allowed_packet``)
  below the other node's ``max_allowed_packet`` (its replication threads refuse an event
  the source accepted: the receiver stops); Redis ``maxmemory`` or ``maxmemory-policy``
  differs (after a failover the new master evicts differently, or runs out of memory);
  Redis ``min-replicas-to-write`` differs (after a failover the new master refuses every
  write while the old one is down, or stops guarding against lost writes; read on Redis
  7.0+ and Valkey, whose CONFIG GET takes several parameters).
- **info**, worth knowing before a failover: ``sync_binlog``,
  ``innodb_flush_log_at_trx_commit`` (durability), ``max_connections``,
  ``innodb_buffer_pool_size`` (capacity), the server versions;
  ``log_replica_updates`` / ``log_slave_updates`` (the new primary's binary log holds
  another history), ``enforce_gtid_consistency`` (MySQL: statements one node refuses),
  ``binlog_row_image`` (what the binary log records of a row), ``collation_server``
  (the default character set and collation of new databases), ``time_zone`` (of new
  sessions), ``transaction_isolation`` / ``tx_isolation``, ``max_allowed_packet`` (the
  largest statement clients may send), ``replica_parallel_workers`` /
  ``slave_parallel_threads`` (applier threads), ``replica_preserve_commit_order``
  (MySQL: commit order of parallel appliers); Redis ``repl-backlog-size``,
  ``client-output-buffer-limit replica``, ``appendonly`` and version; equal
  ``auto_increment_offset`` while the increment is above 1 (master-master keys collide).

``read_only`` on the replica is two_primaries' finding, not repeated here. A setting one
node does not report (an older server, a source down, another flavour's setting) is not
compared. The reasons follow the manuals: MySQL Reference Manual 8.0/8.4/9.x "Replication
Features and Issues" (Replication and Server SQL Mode, Replication and Variables,
Replication and max_allowed_packet, Replication and Time Zones, Replication and Character
Sets), "Switching Sources During Failover" and the system variable reference; MariaDB's
"Global Transaction ID" and system variable pages; Redis/Valkey's replication page and
CONFIG GET. Not compared, on those facts: ``explicit_defaults_for_timestamp`` (carried in
the binary log with each statement), ``system_time_zone`` (the host zone's abbreviation as
of the server's start, CET or CEST for one and the same zone: ``time_zone`` is compared),
``binlog_checksum`` (a replica reads its source's algorithm when it connects),
``gtid_domain_id`` / ``gtid_ignore_duplicates`` (MariaDB: for independent, concurrently
written sources), ``innodb_autoinc_lock_mode`` (a node's own risk with statement-based
logging, not the pair's).

What to do: make the setting the same in both nodes' my.cnf / redis.conf (and SET
GLOBAL / CONFIG SET now), or document why it differs.
"""

from __future__ import annotations

from collections.abc import Callable

from replmon.check import (
    Check,
    Explains,
    NodeTick,
    Observation,
    Severity,
    Thresholds,
    Window,
    fmt_setting,
    numbers,
)


class Limits(Thresholds):
    open_after: float = 2.0
    """Seconds (s) a difference must be seen before the finding opens (settings change
    rarely: two readings)."""


# Reasons from the manuals; MySQL pages are https://dev.mysql.com/doc/refman/8.4/en/<page>
# (the same page in 8.0 and 9.x), MariaDB's under https://mariadb.com/kb/en/.
MUST_AGREE: tuple[tuple[str, Severity, str], ...] = (
    ("auto_increment_increment", Severity.WARNING,
     "each node generates AUTO_INCREMENT keys with its own step: rows written on one side "
     "get other keys than the same statements on the other (UPDATEs by id that "
     "then change no row on the other node)"),
    ("binlog_format", Severity.WARNING,
     "after a failover the binary log switches between row and statement events: what "
     "replicates, and how safely, changes with the primary"),
    ("gtid_mode", Severity.WARNING,
     "GTID positioning works on one side only: a failover cannot re-point the replica by "
     "GTID"),
    ("gtid_strict_mode", Severity.WARNING,
     "one side stops on an out-of-order GTID, the other accepts it: a failover changes "
     "whether divergence stops replication"),
    # replication-solutions-switch.html: "Replicas should be run with binary logging
    # enabled ... the replica is ready to become a source"; MariaDB's default is OFF
    ("log_bin", Severity.WARNING,
     "one node writes no binary log, and a server without one cannot be a source: after a "
     "failover to it the other node has nothing to replicate from"),
    # replication-features-variables.html (use the same lower_case_table_names on source
    # and replica); identifier-case-sensitivity.html (MySQL 8.0+: fixed when the data
    # directory is initialised)
    ("lower_case_table_names", Severity.WARNING,
     "the nodes store and compare table names in different letter case: a statement or "
     "row event naming a table finds another table, or none, on the other side, and "
     "replication stops"),
    # replication-features-sql-mode.html: different SQL modes "may cause the same INSERT
    # statements to be handled differently ... leading the source and replica to diverge
    # ... whether you are using statement-based or row-based replication"
    ("sql_mode", Severity.WARNING,
     "the same statement is handled differently on each node (strictness, zero dates, "
     "truncation, partitioning): source and replica diverge, with row-based replication "
     "too, and after a failover the application's statements fail or store other values"),
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
    # replication-solutions-switch.html: without GTIDs, replicas "should also be run with
    # --log-replica-updates=OFF"; MySQL's default is ON, MariaDB's OFF
    ("log_replica_updates", Severity.INFO,
     "one node writes the transactions it replicates into its own binary log, the other "
     "does not: after a failover the new primary's binary log holds another history "
     "(chained replicas, binlog backups and change-data capture see other events)"),
    # replication-options-gtids.html (enforce_gtid_consistency; MySQL only)
    ("enforce_gtid_consistency", Severity.INFO,
     "one node refuses the statements GTIDs cannot log safely (CREATE TABLE ... SELECT, "
     "transactional and non-transactional tables in one transaction), the other runs "
     "them: after a failover they fail, and gtid_mode=ON needs it ON on both"),
    # replication-options-binary-log.html (binlog_row_image: full, minimal, noblob;
    # MariaDB also fullnodup)
    ("binlog_row_image", Severity.INFO,
     "after a failover the binary log records other columns of each changed row: "
     "consumers that need whole rows (change-data capture, MariaDB flashback, a replica "
     "whose tables differ) get less, or more"),
    # replication-features-charset.html; the session collation travels with each logged
    # statement, the global one is the default of new databases
    ("collation_server", Severity.INFO,
     "after a failover databases created without a character set get another default "
     "character set or collation: comparisons, sorting and unique keys differ between "
     "old and new tables"),
    # replication-features-timezone.html (the session time zone travels with each logged
    # statement; SYSTEM means each host's own zone)
    ("time_zone", Severity.INFO,
     "after a failover new sessions run in another time zone: NOW() stored in DATETIME "
     "columns shifts, TIMESTAMP values read back as other local times"),
    ("transaction_isolation", Severity.INFO,
     "after a failover transactions run at another default isolation level: other "
     "locking and other anomalies for the application"),
    # replication-features-max-allowed-packet.html
    ("max_allowed_packet", Severity.INFO,
     "after a failover the new primary refuses statements and rows bigger than its "
     "limit that the old one accepted (or accepts bigger ones)"),
    # replication-options-replica.html (replica_parallel_workers, 8.0.27+ default 4);
    # MariaDB's slave_parallel_threads (default 0)
    ("replica_parallel_workers", Severity.INFO,
     "the nodes apply replicated transactions with another number of worker threads: "
     "after a failover the new replica keeps up, or lags, differently"),
    # replication-options-replica.html (replica_preserve_commit_order; MySQL only, MariaDB
    # always commits in order)
    ("replica_preserve_commit_order", Severity.INFO,
     "one node commits the transactions it applies in parallel in the source's order, "
     "the other may not: after a failover readers of the replica can see states that "
     "never existed on the primary"),
    ("version", Severity.INFO,
     "the servers run different versions: replication from newer to older is unsupported, "
     "and behaviour can differ after a failover"),
)

NAMES: dict[str, tuple[str, ...]] = {
    "log_replica_updates": ("log_replica_updates", "log_slave_updates"),
    "transaction_isolation": ("transaction_isolation", "tx_isolation"),
    "replica_parallel_workers": ("replica_parallel_workers", "slave_parallel_threads",
                                 "slave_parallel_workers"),
    "replica_preserve_commit_order": ("replica_preserve_commit_order",
                                      "slave_preserve_commit_order"),
    "replica_max_allowed_packet": ("replica_max_allowed_packet", "slave_max_allowed_packet"),
}
"""Each name a setting has, the first a node reports being its value: MySQL 8.0.26+ says
replica_* (and still the slave_* aliases, 9.7 too), MariaDB (11.8 too) and older MySQL
slave_* only; MariaDB's slave_parallel_threads is MySQL's replica_parallel_workers.
transaction_isolation: MySQL 5.7.20+ (tx_isolation before, removed in 8.0), MariaDB
11.1+ (tx_isolation before, and still)."""

REDIS: tuple[tuple[str, Callable[[NodeTick], object], Severity, str], ...] = (
    ("maxmemory", lambda n: n.redis.maxmemory, Severity.WARNING,
     "after a failover the new master runs with another memory ceiling: it evicts, refuses "
     "writes or grows where the old one did not"),
    ("maxmemory-policy", lambda n: n.redis.maxmemory_policy, Severity.WARNING,
     "after a failover the new master evicts by another rule (or refuses writes instead)"),
    # redis.io/docs/latest/operate/oss_and_stack/management/replication/ ("Allow writes
    # only with N attached replicas"); the NOREPLICAS error page
    ("min-replicas-to-write", lambda n: _min_replicas(n.redis.min_replicas),
     Severity.WARNING,
     "after a failover the new master refuses every write while fewer replicas are in "
     "reach (NOREPLICAS: with the old master down, all of them), or stops refusing and "
     "the guard against losing acknowledged writes is gone"),
    ("repl-backlog-size", lambda n: n.redis.repl_backlog_size, Severity.INFO,
     "after a failover the new master covers another length of link outage with partial "
     "resyncs"),
    ("client-output-buffer-limit replica", lambda n: n.redis.replica_buffer_limit,
     Severity.INFO,
     "after a failover full syncs to the new replica are cut off at another size"),
    # redis.io persistence page (AOF vs RDB snapshots)
    ("appendonly", lambda n: _yes_no(n.redis.aof_enabled), Severity.INFO,
     "after a failover the new master persists in another way (append-only file or "
     "snapshots only): a restart of it loses another amount of writes"),
    ("redis version", lambda n: n.redis.product, Severity.INFO,
     "the nodes run different Redis/Valkey versions: replication from newer to older is "
     "unsupported"),
)


def _min_replicas(v: tuple[int, int] | None) -> str | None:
    """min-replicas-to-write with its max-lag; the lag means nothing while it is 0."""
    if v is None:
        return None
    return f"{v[0]} (max-lag {v[1]} s)" if v[0] else "0"


def _yes_no(v: bool | None) -> str | None:
    return None if v is None else ("yes" if v else "no")


def _obs(name: str, sev: Severity, p: object, r: object, why: str, how: str,
         shown: str | None = None) -> Observation:
    shown = shown or name  # the name the server has (key: the MySQL 8.0.26+ one)
    # sizes as every view writes them, exact where the short form rounds ("64 MiB",
    # "7.6 MiB (8,005,061 B)"): nothing of the value is lost
    a, b = fmt_setting(name, p), fmt_setting(name, r)
    return Observation.trusted(
        key=name, node="pair", severity=sev,
        title=f"{shown} {how}: primary {a}, replica {b}",
        numbers=numbers(setting=shown, primary=a, replica=b),
        cause=why,
        next_step=f"Set {shown} alike in both nodes' config files (and at runtime), or "
                  "document why it differs")


_AGREE_NAMES = tuple(dict.fromkeys(
    n for name, _, _ in MUST_AGREE for n in NAMES.get(name, (name,))))
"""Every variable MUST_AGREE compares, each once, in order."""


def _setting(v: dict[str, str], name: str) -> tuple[str, str] | None:
    """(the name this node reports the setting under, its value); None: not reported."""
    for n in NAMES.get(name, (name,)):
        if n in v:
            return n, v[n]
    return None


def _differing(pv: dict[str, str], pversion: str, rv: dict[str, str], rversion: str
               ) -> list[Observation]:
    """The MUST_AGREE settings whose values differ (case and spaces aside)."""
    out = []
    for name, sev, why in MUST_AGREE:
        ps, rs = _setting(pv, name), _setting(rv, name)
        if ps is None or rs is None:
            continue
        (shown, a), (_, b) = ps, rs
        if name == "version":
            a, b = pversion or a, rversion or b
        if a.strip().upper() != b.strip().upper():
            out.append(_obs(name, sev, a, b, why, "differs", shown))
    return out


def _mysql(p: NodeTick, r: NodeTick) -> list[Observation]:
    pv, rv = p.mysql.variables, r.mysql.variables
    pversion, rversion = p.mysql.version, r.mysql.version
    # Settings change about never and this runs every tick: when every variable MUST_AGREE
    # compares reads the same on both nodes (the usual pair), none of them differs
    same = pversion == rversion and tuple(map(pv.get, _AGREE_NAMES)) == tuple(
        map(rv.get, _AGREE_NAMES))
    out = [] if same else _differing(pv, pversion, rv, rversion)
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
    out += _packet(pv, rv)
    return out


def _packet(pv: dict[str, str], rv: dict[str, str]) -> tuple[Observation, ...]:
    """A node's replication threads take events up to its replica_max_allowed_packet
    (slave_max_allowed_packet; 1 GiB by default, which is also max_allowed_packet's
    ceiling), whatever its max_allowed_packet: below what the other node accepts from its
    clients, a big row or statement stops replication (replication-features-max-allowed-
    packet.html). Now on the replica; after a failover on the primary."""
    for src, dst, sv, dv, when in (("primary", "replica", pv, rv, ""),
                                   ("replica", "primary", rv, pv, " after a failover")):
        sent = sv.get("max_allowed_packet")
        cap = None if sent is None else _setting(dv, "replica_max_allowed_packet")
        if cap is None or sent is None:
            continue
        name, limit = cap
        try:
            below = int(limit) < int(sent)
        except ValueError:
            continue
        if not below:
            continue
        vals = {dst: f"{name} {fmt_setting(name, limit)}",
                src: f"max_allowed_packet {fmt_setting('max_allowed_packet', sent)}"}
        return (Observation.trusted(
            key="replica_max_allowed_packet", node="pair", severity=Severity.WARNING,
            title=f"{name} below the other node's max_allowed_packet{when}: primary "
                  f"{vals['primary']}, replica {vals['replica']}",
            numbers=numbers(setting=name, primary=vals["primary"], replica=vals["replica"]),
            cause=f"the {dst}'s replication threads refuse a binary log event bigger than "
                  f"its {name} ({fmt_setting(name, limit)}), while the {src} accepts "
                  f"statements and rows up to {fmt_setting('max_allowed_packet', sent)} from "
                  "its clients: the first such event stops "
                  f"replication{when} (error 1153 or 1236 in the replica status)",
            next_step=f"Raise {name} on the {dst} to at least the {src}'s "
                      "max_allowed_packet (1 GiB, the default, covers any packet)"),)
    return ()


def _redis(p: NodeTick, r: NodeTick) -> list[Observation]:
    a, b = p.redis, r.redis  # in REDIS's order, read directly: this runs every tick
    pvals = (a.maxmemory, a.maxmemory_policy, _min_replicas(a.min_replicas),
             a.repl_backlog_size, a.replica_buffer_limit, _yes_no(a.aof_enabled), a.version)
    rvals = (b.maxmemory, b.maxmemory_policy, _min_replicas(b.min_replicas),
             b.repl_backlog_size, b.replica_buffer_limit, _yes_no(b.aof_enabled), b.version)
    if pvals == rvals:
        return []  # the usual pair
    return [_obs(name, sev, x, y, why, "differs")
            for (name, _, sev, why), x, y in zip(REDIS, pvals, rvals, strict=True)
            if x is not None and y is not None and x != y]


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    if w.pair.mysql_ok:
        out += _mysql(*w.last.oriented("mysql").nodes)
    if w.pair.redis_ok:  # Redis's own primary (under Sentinel it may be the other node)
        out += _redis(*w.last.oriented("redis").nodes)
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("stmt_vs_rows", "either",
             "keys generated with another auto_increment step on each node: UPDATEs by id miss"
             " their rows",
             cause_key="auto_increment_increment"),
    Explains("stmt_vs_rows", "either",
             "keys generated from another auto_increment offset on each node: UPDATEs by id "
             "miss their rows",
             cause_key="auto_increment_offset"),
    Explains("errant_writes", "either",
             "a replica without read_only takes writes its primary never had",
             cause_key="read_only"),
    Explains("two_primaries", "pair",
             "a replica without read_only is a second writable node",
             cause_key="read_only"),
    Explains("redis_backlog_headroom", "either",
             "the node with the smaller repl-backlog-size covers a shorter outage",
             cause_key="repl-backlog-size"),
    Explains("redis_replication", "either",
             "a replica's client-output-buffer-limit below the master's writes during a sync "
             "drops the link",
             cause_key="client-output-buffer-limit"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="config_drift", title="Config drift", needs=("mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=1.0, explains=EXPLAINS)
