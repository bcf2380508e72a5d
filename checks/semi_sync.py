"""Semi-synchronous replication: enabled, but is it still semi-synchronous?

Reads each node's semi-sync state: ``rpl_semi_sync_master_enabled`` /
``rpl_semi_sync_source_enabled`` (MySQL 8.0.26+ names) from its variables, and
``Rpl_semi_sync_master_status`` / ``_source_status`` and the ``_clients``,
``_no_tx`` and ``_no_times`` counters from its status. With semi-sync on, a commit
waits until a replica acknowledged it, so a failover loses nothing that was
acknowledged. When no replica acknowledges within ``rpl_semi_sync_master_timeout``
(10 s by default) the primary silently falls back to asynchronous replication and
keeps committing: the guarantee the setup was built for is gone, and nothing fails.

- **Primary fell back to async** (key "source"): semi-sync enabled, status OFF:
  warning. The numbers give the semi-sync clients, the commits not acknowledged
  (``no_tx``) and how often it fell back (``no_times``).
- **Replica enabled but not acknowledging** (key "replica"): the replica has
  ``rpl_semi_sync_slave_enabled`` ON, its IO thread runs, its status is OFF: warning
  (enabled after the IO thread started: it needs STOP/START SLAVE IO_THREAD).

Variables are re-read about once a minute (and after a reconnect), status every tick.

What to do: on the replica, is the IO thread running and semi-sync on
(``SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'``)? Restart its IO thread after enabling;
check the link's round trip against the timeout (the latency_bound check).
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
    fmt,
    numbers,
    source_ok,
)


class Limits(Thresholds):
    pass


def _counter(node: NodeTick, *names: str) -> int | None:
    for name in names:
        v = node.mysql.counters.get(name)
        if v is not None:
            return int(v)
    return None


def _side(node: NodeTick, old: str) -> str:
    """The plugin's word in its variable names: MySQL 8.0.26+'s semisync_source/_replica
    plugins say source/replica, the older ones and MariaDB master/slave."""
    new = "source" if old == "master" else "replica"
    return new if f"rpl_semi_sync_{new}_enabled" in node.mysql.variables else old


def _source(p: NodeTick) -> Observation | None:
    ss = p.mysql.semi_sync
    if not (ss.source_enabled and ss.source_active is False):
        return None
    no_tx = _counter(p, "Rpl_semi_sync_source_no_tx", "Rpl_semi_sync_master_no_tx")
    no_times = _counter(p, "Rpl_semi_sync_source_no_times", "Rpl_semi_sync_master_no_times")
    return Observation.trusted(
        key="source", node="primary", severity=Severity.WARNING,
        title=(f"semi-sync enabled but the primary fell back to async "
               f"({fmt(ss.source_clients)} semi-sync replicas connected, "
               f"{fmt(no_tx)} commits not acknowledged)"),
        numbers=numbers(source_enabled=True, source_active=False,
                        source_clients=ss.source_clients, no_tx=no_tx, no_times=no_times),
        cause=(f"no replica acknowledged a commit within rpl_semi_sync_{_side(p, 'master')}"
               "_timeout: the "
               "replica's IO thread is down, its semi-sync is off, or the link is slower than "
               "the timeout; the primary commits without waiting, so a failover now can lose "
               "transactions"),
        next_step=("On the replica: IO thread running? Rpl_semi_sync_replica_status (or "
                   "_slave_status) ON? (STOP REPLICA IO_THREAD; START REPLICA IO_THREAD, "
                   "or SLAVE on MariaDB, after enabling it). The "
                   "primary returns to semi-sync by itself once a replica catches up"),
    )


def _replica(r: NodeTick) -> Observation | None:
    ss = r.mysql.semi_sync
    if not (ss.replica_enabled and ss.replica_active is False):
        return None
    if not any(ch.io_running == "Yes" for ch in r.mysql.replication):
        return None  # mysql_replication reports the stopped receiver
    return Observation.trusted(
        key="replica", node="replica", severity=Severity.WARNING,
        title="semi-sync enabled on the replica but it does not acknowledge (status OFF)",
        numbers=numbers(replica_enabled=True, replica_active=False),
        cause=(f"rpl_semi_sync_{_side(r, 'slave')}_enabled was switched on while the IO "
               "thread ran: it "
               "takes effect at the next IO thread start"),
        next_step=f"STOP {r.mysql.words.replica} IO_THREAD; START {r.mysql.words.replica} "
                  "IO_THREAD on the replica",
    )


def evaluate(w: Window, t: Limits) -> list[Observation]:
    last = w.last
    p, r = last.primary, last.replica
    if not (p.mysql.semi_sync.source_enabled or r.mysql.semi_sync.replica_enabled):
        return []  # semi-sync not in use: the usual pair
    out: list[Observation] = []
    if source_ok(p, "mysql") and (o := _source(p)) is not None:
        out.append(o)
    if source_ok(r, "mysql") and (o := _replica(r)) is not None:
        out.append(o)
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("throughput_collapse", "either",
             "commits wait for a replica's ack (or for the timeout)"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="semi_sync", title="Semi-synchronous replication", needs=("mysql",),
              thresholds=Limits, evaluate=evaluate, window=1.0, explains=EXPLAINS, service="mysql")
