"""Pair lag: how far the replica is behind the primary, measured on both sides.

Seconds_Behind_Master is the replica's opinion: it compares the event being applied
with the replica's clock, so it reads 0 while the IO thread is far behind on a slow
link (the SQL thread has applied all it received), NULL when a thread is down, and
stays low while one huge transaction is applied (a replica has shown 0 for 14 hours
that way). replmon reads both nodes, so it measures instead:

The lag judged is the tick's true lag (``Tick.lag``, which the collector measures once a
tick as ``w.pair.lag`` does over this check's window, and a recording keeps: the screen and
``check``'s perfdata show the same; ``w.pair.lag`` for a recording made before ticks
carried it), from the best source that knows it:

- with pt-heartbeat running (``heartbeat_table = "percona.heartbeat"``), its row of the
  primary's server_id read on the replica every tick, corrected by the clock offset
  replmon measures between the nodes (replmon only reads the table; pt-heartbeat
  --update writes it);
- else the servers' own commit timestamps (Oracle MySQL 8.0+, MariaDB 11.6+);
- else measured on both nodes: every ``positions_every`` seconds (2 s) both nodes read
  their own binlog position and GTIDs in the same tick (MariaDB ``@@gtid_binlog_pos``,
  MySQL ``@@gtid_executed``, ``SHOW MASTER STATUS`` / ``SHOW BINARY LOG STATUS``), and
  the replica's executed position (``Gtid_Slave_Pos`` / ``Executed_Gtid_Set``, and
  ``Relay_Master_Log_File``/``Exec_Master_Log_Pos``) is compared with them: the age of
  the oldest primary reading the replica has not executed yet. The primary was at
  position P at time t; if the replica has not executed P now, its data is older than
  now - t: the lag a reader of the replica sees, not an estimate from rates, to the
  resolution of the readings (2 s) and over the check's window (300 s; a longer lag
  reads "at least 300 s").

The title names the source, and gives the **transactions behind** (GTIDs the replica
lacks) and **bytes behind** (same binlog file).

**Replica behind while Seconds_Behind_Master says otherwise** (key = the channel):
the measured lag is at least ``lag_after`` (10 s) while Seconds_Behind_Master is
NULL or less than half of it: warning; critical from ``lag_critical`` (120 s). When
Seconds_Behind_Master agrees, mysql_replication's lag finding says it and this one is
quiet; a delayed replica (``SQL_Delay``) is behind by design and judged against its
delay. The title shows both numbers side by side, the transactions and bytes behind.

What to do: with the receiver behind (slow link, IO thread down) look at the link
(latency_bound, link_saturation) and Read_Master_Log_Pos against the primary's
position; with the applier behind (a huge transaction, a lock) see applier_progress
and the replica's SHOW PROCESSLIST.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import Field

from replmon.check import (
    LAG_WINDOW_S,
    Check,
    Explains,
    Gate,
    MeasuredLag,
    Observation,
    ReplicaChannel,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    fmt_bytes,
    numbers,
    round_up,
)

_TABLE = r"^([A-Za-z0-9_$]{1,64}\.[A-Za-z0-9_$]{1,64})?$"


class Limits(Thresholds):
    open_after: Seconds = 4.0
    """Seconds (s) the condition must hold before the finding opens (two readings)."""
    close_after: Seconds = 4.0
    """Seconds (s) the condition must be clear before the finding closes."""
    lag_after: Seconds = 10.0
    """Seconds (s) of measured lag from which it is judged."""
    lag_critical: Seconds = 120.0
    """Seconds (s) of measured lag that make it critical."""
    heartbeat_table: str = Field(default="", pattern=_TABLE)
    """pt-heartbeat's table as db.table (e.g. "percona.heartbeat"); replmon reads it on
    the replica every tick and never writes to it. "" = none (the top-level
    ``heartbeat_table`` says the same and wins)."""


_HOW = {"heartbeat": "by pt-heartbeat", "history": "measured on both nodes"}


def _judged(w: Window) -> tuple[MeasuredLag, ReplicaChannel, float | None, str, str] | None:
    """The true lag (``w.pair.tick_lag``: ``Tick.lag``, else ``w.pair.lag``), the replica's
    channel, the lag judged (s), how it was measured and "at least " when it is a lower
    bound; None without a channel."""
    ch = w.pair.channel
    if ch is None:  # no channel: the lag is not worked out (an old recording's costs)
        return None
    lag = w.pair.tick_lag
    if lag is None:
        return None
    how = _HOW.get(lag.source or "", f"by the {lag.source_words}")
    if lag.seconds is None:
        return lag, ch, lag.at_least_s, how, "at least "
    return lag, ch, lag.seconds, how, ""


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    lag_s: float | None
    """The lag judged, s, rounded up; None without one."""


def measure(w: Window) -> Gauges:
    j = _judged(w)
    return Gauges(None if j is None else round_up(j[2]))


def quiet(g: Gauges, t: Limits) -> bool:
    """No lag judged, or one below ``lag_after``: ``evaluate`` reports a lag at or over
    it only (the other thresholds set its severity)."""
    return g.lag_s is None or g.lag_s < t.lag_after


def evaluate(w: Window, t: Limits) -> list[Observation]:
    j = _judged(w)
    if j is None:
        return []
    true, ch, lag, how, at_least = j
    if lag is None or lag < t.lag_after:
        return []
    sbm = ch.seconds_behind
    if ch.sql_delay and lag <= ch.sql_delay + t.lag_after:
        return []  # a delayed replica, behind by its delay
    if sbm is not None and sbm >= lag / 2:
        return []  # the replica's own figure agrees: mysql_replication reports it
    said = "NULL" if sbm is None else f"{fmt(sbm)} s"
    wd = w.last.replica.mysql.words
    trx, nbytes = w.pair.behind
    parts = [f"{fmt(trx)} transactions" if trx is not None else "",
             f"{fmt_bytes(nbytes)} of binlog" if nbytes else ""]
    behind_txt = " and ".join(p for p in parts if p)
    p = w.pair.primary_binlog
    return [Observation.trusted(
        key=ch.name or "default", node="replica",
        severity=Severity.CRITICAL if lag >= t.lag_critical else Severity.WARNING,
        title=(f"replica {at_least}{fmt(lag)} s behind the primary ({how}"
               + (f": {behind_txt}" if behind_txt else "")
               + f") while {wd.lag} says {said}"),
        numbers=numbers(lag_s=lag, lag_at_least=bool(at_least), lag_source=true.source,
                        lag_bound_s=true.bound_s, seconds_behind_s=sbm,
                        transactions_behind=trx, bytes_behind=nbytes,
                        primary_file=p and p.file, primary_pos=p and p.position,
                        primary_gtid=p and p.gtid_executed[:120],
                        replica_exec_file=ch.relay_source_log_file,
                        replica_exec_pos=ch.exec_source_log_pos,
                        replica_read_pos=ch.read_source_log_pos,
                        replica_gtid=ch.gtid_executed[:120],
                        io_running=ch.io_running, sql_running=ch.sql_running),
        cause=(f"{wd.lag} only measures the applier against what the replica "
               "received: it reads 0 when the receiver is behind (a slow or saturated "
               "link), NULL when a thread is stopped, and stays low while one long "
               "transaction is applied"),
        next_step=(f"Compare {wd.read_pos} with the primary's position: behind = the "
                   "link or the IO thread (latency_bound, link_saturation); received but "
                   "not executed = the applier (applier_progress, SHOW PROCESSLIST on the "
                   "replica)"),
    )]


EXPLAINS: tuple[Explains, ...] = ()
"""It explains no other finding: it is a consequence or stands alone."""


CHECK = Check(id="pair_lag", title="Pair lag", needs=("mysql",), thresholds=Limits,
              evaluate=evaluate, window=LAG_WINDOW_S, explains=EXPLAINS,
              reads=("mysql", "redis"), gate=Gate(measure, quiet, gauges=Gauges), service="mysql")
