"""Applier progress: the SQL thread says Yes, but is it applying anything?

Reads each replica channel's positions tick by tick: the executed position
(``Relay_Master_Log_File``/``Exec_Master_Log_Pos``, and the executed GTID set) and
the received one (``Master_Log_File``/``Read_Master_Log_Pos``, the retrieved GTID
set). A single-host tool sees ``Slave_SQL_Running: Yes`` and, often,
``Seconds_Behind_Master: 0``: a replica has shown 0 for 14 hours while it applied
one 8-million-row UPDATE, because the lag is computed from the event being applied
and a long event's clock only starts when it ends (pt-heartbeat exists for this).

- **Applier stuck** (key = the channel): both threads run, the replica has received
  more than it executed (the received position is ahead, or moved), and the executed
  position has not moved for ``stall_after`` (30 s): warning; critical after
  ``stall_critical_after`` (180 s; the check looks back 300 s, so a longer stall reads
  "at least 299 s"). The title gives how long, the executed and
  received positions, the bytes received but not applied, Seconds_Behind_Master as
  the server shows it, and the applier's own state text, which names what it waits
  on ("Waiting for global read lock", a row lock, "Update_rows_log_event::find_row"
  for a huge row event, "Waiting until MASTER_DELAY").
- A delayed replica (``SQL_Delay``) waiting on its delay is not stuck: it is quiet
  while ``SQL_Remaining_Delay`` counts down.
- An idle replica (nothing received beyond what it executed) is not stuck.

What to do: on the replica, ``SHOW PROCESSLIST`` (the system user's row shows the
statement or event and its time) and ``SHOW ENGINE INNODB STATUS`` (lock waits, the
transaction's rows); a FLUSH TABLES WITH READ LOCK held by a backup is a classic. A
huge row event will finish: watch the relay log space and the primary's binlog.
"""

from __future__ import annotations

from typing import NamedTuple

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
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
    source_ok,
)

Position = tuple[str, int | None, str]
"""(binlog file, position, GTID set): one side of a channel's progress."""


class Limits(Thresholds):
    open_after: Seconds = 2.0
    """Seconds (s) the condition must hold before the finding opens (the stall itself is
    already ``stall_after`` long)."""
    stall_after: Seconds = 30.0
    """Seconds (s) without any executed progress, with work waiting, before the applier
    counts as stuck."""
    stall_critical_after: Seconds = 180.0
    """Seconds (s) stuck after which it is critical (below the check's 300 s window)."""


def _channels(node: NodeTick) -> dict[str, tuple[Position, Position, bool]] | None:
    """Channel name -> (executed, received, applying): applying when both threads run
    and no configured delay holds the applier back."""
    if not source_ok(node, "mysql"):
        return None
    out: dict[str, tuple[Position, Position, bool]] = {}
    for ch in node.mysql.replication:
        if ch.group_replication or ch.name in out:
            continue
        out[ch.name] = (_executed(ch), _received(ch), _applying(ch))
    return out


def _executed(ch: ReplicaChannel) -> Position:
    return ch.relay_source_log_file, ch.exec_source_log_pos, ch.gtid_executed


def _received(ch: ReplicaChannel) -> Position:
    return ch.source_log_file, ch.read_source_log_pos, ch.gtid_retrieved


def _applying(ch: ReplicaChannel) -> bool:
    delayed = bool(ch.sql_delay) and ch.sql_remaining_delay is not None
    return ch.io_running == "Yes" and ch.sql_running and not delayed


def _behind(executed: Position, received: Position) -> bool:
    """The replica holds work it has not executed (by position in the same file, or a
    later file; by GTID set when positions are unknown)."""
    (ef, ep, eg), (rf, rp, rg) = executed, received
    if ef and rf and ep is not None and rp is not None:
        return (rf, rp) > (ef, ep) if rf != ef else rp > ep
    return bool(rg) and rg != eg


def stuck(w: Window, name: str) -> tuple[float, Position, Position] | None:
    """(seconds the executed position has not moved, executed, received) for channel
    ``name`` on the replica, when it is applying and holds unexecuted work; None else."""
    series = w.series("replica", _channels)
    now = series[-1]
    if now is None or name not in now:
        return None
    executed, received, applying = now[name]
    if not applying or not _behind(executed, received):
        return None
    i = len(series) - 1
    while i > 0:
        prev = series[i - 1]
        if prev is None or name not in prev or prev[name][0] != executed or not prev[name][2]:
            break
        i -= 1
    return w.last.wall - w.ticks[i].wall, executed, received


def _pos(p: Position) -> str:
    return f"{p[0]}:{fmt(p[1])}" if p[0] else (p[2] or "?")


def _stalled(w: Window) -> list[tuple[ReplicaChannel, float, Position, Position]]:
    """(channel, seconds its executed position has not moved, executed, received) for each
    replica channel that is applying, holds unexecuted work and did not move since the
    last tick (``stuck``): what ``evaluate`` judges against ``stall_after``, and the
    gate measures."""
    ticks = w.ticks
    out: list[tuple[ReplicaChannel, float, Position, Position]] = []
    before = ticks[-2].replica.mysql.replication if len(ticks) > 1 else []
    for k, ch in enumerate(w.pair.channels):  # () when the replica's MySQL is not read
        if not _applying(ch):
            continue
        # the same channel a tick ago: at the same place in the list, the usual case
        prev = before[k] if k < len(before) and before[k].name == ch.name \
            else next((c for c in before if c.name == ch.name), None)
        if prev is not None and _executed(prev) != _executed(ch):
            continue  # it moved since the last tick: the usual case, no history needed
        if not _behind(_executed(ch), _received(ch)):
            continue  # nothing waiting: an idle replica, no history needed either
        found = stuck(w, ch.name)
        if found is not None:
            out.append((ch, *found))
    return out


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    stall_s: float | None
    """The longest stall of a channel with work waiting, s, rounded up; None: none."""


def measure(w: Window) -> Gauges:
    secs = [s for _, s, _, _ in _stalled(w)]
    return Gauges(round_up(max(secs)) if secs else None)


def quiet(g: Gauges, t: Limits) -> bool:
    """``evaluate`` reports a channel of ``_stalled`` only when its stall is at least
    ``stall_after`` (``stall_critical_after`` sets the severity alone): below it for the
    longest one, or with no channel stalled (None), nothing. A NaN limit is never quiet."""
    return g.stall_s is None or g.stall_s < t.stall_after


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for ch, secs, executed, received in _stalled(w):
        if secs < t.stall_after:
            continue
        backlog = ch.applier_backlog_bytes
        state = ch.sql_state or "no state text"
        sbm = "NULL" if ch.seconds_behind is None else f"{fmt(ch.seconds_behind)} s"
        wd = w.last.replica.mysql.words
        at_least = "at least " if secs >= w.last.wall - w.ticks[0].wall else ""
        out.append(Observation.trusted(
            key=ch.name or "default", node="replica",
            severity=(Severity.CRITICAL if secs >= t.stall_critical_after
                      else Severity.WARNING),
            title=(f"applier stuck for {at_least}{fmt(secs)} s at {_pos(executed)} while "
                   f"received up to {_pos(received)}"
                   + (f" ({fmt_bytes(backlog)} waiting)" if backlog else "")
                   + f"; {wd.lag} {sbm}; applier: {state}"),
            numbers=numbers(stuck_s=secs, executed_file=executed[0],
                            executed_pos=executed[1], received_file=received[0],
                            received_pos=received[1], backlog_bytes=backlog,
                            seconds_behind_s=ch.seconds_behind, sql_state=ch.sql_state,
                            relay_log_space_bytes=ch.relay_log_space),
            cause=("the SQL thread runs but executes nothing: a long transaction or a huge "
                   f"row event ({wd.lag} stays low until it ends), a lock held "
                   "on the replica (FLUSH TABLES WITH READ LOCK of a backup, a row lock), or "
                   "a metadata lock"),
            next_step=("On the replica: SHOW PROCESSLIST (the system user's row: its state "
                       "and time) and SHOW ENGINE INNODB STATUS (lock waits); find and end "
                       "the lock holder, or let a huge event finish while watching "
                       "Relay_Log_Space"),
        ))
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("mysql_replication", "same",
             "an applier stuck on one transaction makes the lag grow",
             before_s=120.0),
    Explains("pair_lag", "same",
             "an applier stuck on one transaction leaves the replica behind",
             before_s=120.0),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="applier_progress", title="Applier progress", needs=("mysql",),
              thresholds=Limits, evaluate=evaluate, window=300.0, explains=EXPLAINS,
              reads=("mysql",), gate=Gate(measure, quiet, gauges=Gauges), service="mysql")
