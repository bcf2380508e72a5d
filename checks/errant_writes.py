"""Errant writes: transactions on the replica that did not come from the primary.

A write made directly on the replica (read_only off, a SUPER account, a maintenance
script pointed at the wrong host) diverges the data silently and, with GTIDs, is a
time bomb: after a failover the new replica asks for, or is asked for, transactions
the other side never had (MySQL: the auto-positioning fails or replays them; MariaDB
gtid_strict_mode stops replication). two_primaries catches a replica that *can* be
written; this catches the writes that already happened.

Every ``positions_every`` seconds (2 s) both nodes read their GTIDs in the same tick:

- **MySQL**: the replica's ``@@gtid_executed`` minus the primary's is what the primary
  never had. GTIDs of the primary's own ``server_uuid`` are left out (a transaction the
  primary committed after its reading and the replica applied before its own is not
  errant), and so are those of the replica's other sources (a multi-source replica's
  other channels, by their Source_UUID): what remains is written elsewhere: count and
  first GTID.
- **MariaDB**: ``@@gtid_binlog_state`` keeps the last GTID per (domain, server_id) in the
  binlog. An entry on the replica whose server_id is not the primary's and that the
  primary neither logged (its state lacks it, or has it at a lower seqno) nor applied
  as a replica (its ``@@gtid_slave_pos``) was written on the replica (its own
  server_id) or came from a third server. MariaDB keeps no count of them: the title gives
  the last such GTID per domain and server.

After a switchover the pair is judged as it is (the ``roles`` check): what a node wrote
while it was the primary was applied by the other, so it is history, not errant, after
any number of switchovers (MySQL: in the new primary's ``gtid_executed``; MariaDB: in its
``gtid_slave_pos`` when it did not log what it applied).

**Errant transactions** (key "gtid", node replica): warning while they exist (they do
not go away by themselves). Needs the binary log on the replica (MariaDB) / GTIDs on
(MySQL); quiet otherwise.

What to do: find what wrote them (the replica's binlog around that GTID:
``mysqlbinlog --include-gtids`` / ``mariadb-binlog``; the general log), compare the
rows with the primary, then either replay them on the primary or, once the data agrees,
inject empty transactions with those GTIDs on the primary (MySQL) / clean the replica's
gtid_binlog_state (MariaDB, RESET MASTER on the replica when it is safe). Keep
``read_only``/``super_read_only`` on the replica.
"""

from __future__ import annotations

from replmon.check import (
    BinlogStatus,
    Check,
    Explains,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    gtid,
    numbers,
)


class Limits(Thresholds):
    open_after: Seconds = 4.0
    """Seconds (s) the errant GTIDs must be seen before the finding opens (two readings:
    one reading could be two moments apart)."""


def errant_mysql(p: BinlogStatus, r: BinlogStatus,
                 other_sources: frozenset[str] = frozenset()) -> gtid.GtidSet:
    """The replica's GTIDs the primary lacks, the primary's own uuid and the uuids of the
    replica's other sources (a multi-source replica's other channels) left out; empty
    when there are none or the sets cannot be read."""
    if not r.gtid_executed:
        return {}
    try:
        mine, theirs = gtid.parse_gtid_set(r.gtid_executed), gtid.parse_gtid_set(p.gtid_executed)
        extra = gtid.subtract(mine, theirs)
    except ValueError:
        return {}
    skip = other_sources | ({p.server_uuid.lower()} if p.server_uuid else set())
    return {k: v for k, v in extra.items() if k.split(":")[0] not in skip}


def errant_maria(p: BinlogStatus, r: BinlogStatus,
                 other_sources: frozenset[int] = frozenset()) -> list[str]:
    """The replica's binlog-state GTIDs (last per domain and server) the primary did not
    write and does not have, those of the replica's other sources (other connections of
    a multi-source replica, by server_id) left out; [] when none or not readable."""
    if not r.gtid_binlog_state:
        return []
    try:
        mine = gtid.parse_maria(r.gtid_binlog_state)
        if all(s == p.server_id for _d, s in mine):
            return []  # only the primary's own GTIDs: the usual state, theirs not needed
        theirs = gtid.parse_maria(p.gtid_binlog_state)
    except ValueError:
        return []
    applied = _applied(p)
    return [f"{d}-{s}-{n}" for (d, s), n in mine.items()
            if s != p.server_id and n > theirs.get((d, s), 0) and s not in other_sources
            and n > applied.get((d, s), 0)]


def _applied(p: BinlogStatus) -> dict[tuple[int, int], int]:
    """(domain, server_id) -> seqno the primary applied as a replica (its
    ``gtid_slave_pos``): after a switchover, what the old primary wrote was applied by
    the new one, which with log_slave_updates off never logged it. Those writes are
    history, not errant."""
    if not p.gtid_slave_pos:
        return {}
    try:
        return gtid.parse_maria(p.gtid_slave_pos)
    except ValueError:
        return {}


def evaluate(w: Window, t: Limits) -> list[Observation]:
    found = w.pair.binlogs  # the two readings of the newest tick where both nodes read
    if found is None:
        return []
    p, r = found
    # A multi-source replica's other sources write GTIDs the primary lacks too: they are
    # left out, looked up only when there is a GTID to judge (the usual replica has none)
    channels = w.last.replica.mysql.replication
    if p.gtid_binlog_state or r.gtid_binlog_state:  # MariaDB
        gtids = errant_maria(p, r)
        if gtids:
            gtids = errant_maria(p, r, frozenset(
                ch.source_server_id for ch in channels
                if ch.source_server_id is not None and ch.source_server_id != p.server_id))
        if not gtids:
            return []
        own = [g for g in gtids if r.server_id is not None and g.split("-")[1] == str(r.server_id)]
        where = (f"written on the replica itself (server_id {fmt(r.server_id)})" if own
                 else "from a server that is not the primary")
        title = (f"errant transactions on the replica: {', '.join(gtids[:3])} in its binlog, "
                 f"{where}, not from the primary (server_id {fmt(p.server_id)})")
        nums = numbers(errant_gtids=", ".join(gtids), count=None,
                       replica_server_id=r.server_id, primary_server_id=p.server_id)
    else:
        errant = errant_mysql(p, r)
        if errant:
            errant = errant_mysql(p, r, frozenset(ch.source_uuid.lower() for ch in channels
                                                  if ch.source_uuid))
        if not errant:
            return []
        n = gtid.count(errant)
        title = (f"{fmt(n)} errant transaction{'s' if n != 1 else ''} on the replica, not "
                 f"from the primary: first {gtid.first(errant)}")
        nums = numbers(count=n, errant_gtids=gtid.format_set(errant),
                       replica_server_uuid=r.server_uuid, primary_server_uuid=p.server_uuid)
    return [Observation.trusted(
        key="gtid", node="replica", severity=Severity.WARNING, title=title, numbers=nums,
        cause=("a write made directly on the replica (read_only off, an account with "
               "SUPER / READ ONLY ADMIN, a script pointed at the wrong host): the data "
               "diverged, and a failover will trip over these GTIDs"),
        next_step=("Find the writer in the replica's binlog (mysqlbinlog/mariadb-binlog "
                   "around the GTID), reconcile the rows with the primary, then account "
                   "for the GTIDs (empty transactions on the primary, MySQL; RESET MASTER "
                   "on the replica when safe, MariaDB); keep read_only on"),
    )]


EXPLAINS: tuple[Explains, ...] = (
    Explains("mysql_replication", "either",
             "a row written on the replica first makes the replicated write fail (1062, 1032)"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="errant_writes", title="Errant writes", needs=("mysql",),
              thresholds=Limits, evaluate=evaluate, window=30.0, explains=EXPLAINS, service="mysql")
