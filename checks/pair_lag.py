"""Pair lag: how far the replica is behind the primary, measured on both sides.

Seconds_Behind_Master is the replica's opinion: it compares the event being applied
with the replica's clock, so it reads 0 while the IO thread is far behind on a slow
link (the SQL thread has applied all it received), NULL when a thread is down, and
stays low while one huge transaction is applied (a replica has shown 0 for 14 hours
that way). replmon reads both nodes, so it measures instead:

- every ``positions_every`` seconds (2 s) both nodes read their own binlog position
  and GTIDs in the same tick (MariaDB ``@@gtid_binlog_pos``, MySQL ``@@gtid_executed``,
  ``SHOW MASTER STATUS`` / ``SHOW BINARY LOG STATUS``);
- the replica's executed position (``Gtid_Slave_Pos`` / ``Executed_Gtid_Set``, and
  ``Relay_Master_Log_File``/``Exec_Master_Log_Pos``) is compared with them:
  **transactions behind** (GTIDs the replica lacks), **bytes behind** (same binlog
  file), and **seconds behind**: the age of the oldest primary reading the replica
  has not executed yet. The primary was at position P at time t; if the replica has
  not executed P now, its data is older than now - t. This is the lag a reader of
  the replica sees, not an estimate from rates, to the resolution of the readings
  (2 s) and over the check's window (300 s; a longer lag reads "at least 300 s").
- with pt-heartbeat running (``heartbeat_table = "percona.heartbeat"``), the
  heartbeat row of the primary's server_id read on both nodes in the same tick:
  primary's ts minus the replica's copy of it, no clock comparison involved (replmon
  only reads the table; pt-heartbeat --update writes it).
- better still, the tick's **true lag** (``replmon.truelag``: the heartbeat table read on
  the replica every tick, or the servers' own commit timestamps on MySQL 8.0+ and MariaDB
  11.6+), known from the first tick: the title then says which source measured it.

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

from pydantic import Field

from replmon.check import (
    LAG_WINDOW_S,
    Check,
    Explains,
    Gate,
    Gauges,
    LagMeasure,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    fmt_bytes,
    numbers,
    up,
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
    both nodes every ``positions_every`` seconds and never writes to it. "" = none."""


def _judged(w: Window) -> tuple[LagMeasure, float | None, str, str] | None:
    """The measure (``w.pair.lag``), the lag judged (s), how it was measured and "at
    least " when it is a lower bound; None without a measure."""
    m = w.pair.lag
    if m is None:
        return None
    lag = m.hb_lag_s if m.hb_lag_s is not None else m.lag_s
    how = "by pt-heartbeat" if m.hb_lag_s is not None else "measured on both nodes"
    at_least = "at least " if m.open and m.hb_lag_s is None else ""
    true = w.last.lag
    if true is not None and true.seconds is not None and true.source != "history":
        # the tick's true lag (replmon.truelag): known from the first tick, not only once
        # the history covers the lag
        how = "by pt-heartbeat" if true.source == "heartbeat" else f"by the {true.source_words}"
        lag, at_least = true.seconds, ""
    return m, lag, how, at_least


def gauges(w: Window) -> Gauges:
    """(the lag judged, s, rounded up; None without one)."""
    j = _judged(w)
    return (None if j is None else up(j[1]),)


def quiet(g: Gauges, t: Limits) -> bool:
    return g[0] is None or g[0] < t.lag_after


def evaluate(w: Window, t: Limits) -> list[Observation]:
    j = _judged(w)
    if j is None:
        return []
    m, lag, how, at_least = j
    if lag is None or lag < t.lag_after:
        return []
    ch = m.channel
    sbm = ch.seconds_behind
    if ch.sql_delay and lag <= ch.sql_delay + t.lag_after:
        return []  # a delayed replica, behind by its delay
    if sbm is not None and sbm >= lag / 2:
        return []  # the replica's own figure agrees: mysql_replication reports it
    said = "NULL" if sbm is None else f"{fmt(sbm)} s"
    wd = w.last.replica.mysql.words
    parts = [f"{fmt(m.transactions)} transactions" if m.transactions is not None else "",
             f"{fmt_bytes(m.bytes)} of binlog" if m.bytes else ""]
    behind_txt = " and ".join(p for p in parts if p)
    p = m.newest
    return [Observation(
        key=ch.name or "default", node="replica",
        severity=Severity.CRITICAL if lag >= t.lag_critical else Severity.WARNING,
        title=(f"replica {at_least}{fmt(lag)} s behind the primary ({how}"
               + (f": {behind_txt}" if behind_txt else "")
               + f") while {wd.lag} says {said}"),
        numbers=numbers(lag_s=lag, lag_at_least=m.open, heartbeat_lag_s=m.hb_lag_s,
                        measured_lag_s=m.lag_s, seconds_behind_s=sbm,
                        transactions_behind=m.transactions, bytes_behind=m.bytes,
                        primary_file=p.file, primary_pos=p.position,
                        primary_gtid=p.gtid_executed[:120],
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
              reads=("mysql",), gate=Gate(gauges, quiet), service="mysql")
