"""MySQL replication: is the replica receiving and applying the primary's changes?

Reads the replication status (SHOW ALL SLAVES STATUS on MariaDB, SHOW REPLICA
STATUS on MySQL) of both nodes, one finding per replication channel and condition:
its threads (key = the channel name, "default" for the unnamed one) and its lag (key
"<channel>/lag"), each its own finding, so a stopped thread started again closes as
what it was and the lag it left opens beside it, in the same incident. The replica is
judged always; the primary only when it has channels of its own (circular or
multi-source setups).

- **IO (receiver) thread** ``No``: critical, nothing arrives from the source;
  ``Connecting``: warning (the receiver retries), critical once it has been
  connecting for ``connecting_critical_s``. The title names the source host:port
  and the last IO error; the cause and next step follow ``Last_IO_Errno`` and its
  text: 0 stopped by hand (or still connecting), 2003 nothing listens / times out
  / no route (reach the host and port), 2005 the host name does not resolve, 1045
  the replication account's login refused, 1130 no account for the replica's
  address, 2061 caching_sha2_password without TLS or the public key, 1593 equal
  server ids, 1236 (MySQL 8: 13114) the source cannot send from the replica's
  position: binlogs purged (re-seed the replica), the binlog off, an event over
  max_allowed_packet, or a replica that diverged (errant transactions).
- **SQL (applier) thread stopped**: critical, with ``Last_SQL_Errno`` and the
  error text, when it happened (MySQL ``Last_SQL_Error_Timestamp``; the IO
  finding likewise) and how much relay log waits unapplied (``Relay_Log_Space``).
  The cause follows the error (on MySQL 8 the failing worker's own, from
  performance_schema): 0 stopped by hand (``STOP SLAVE SQL_THREAD``, a ``START
  SLAVE UNTIL`` that arrived, a skipped start), 1062 duplicate key and 1032 row
  not found (a write on the replica, an inconsistent copy), 1317 a killed
  statement, 1205/1213 a lock held on the replica, 1146/1049 a table or database
  the replica lacks, 1594 a corrupt relay log (fetched again from the executed
  position). Both threads stopped without an error is one ``STOP SLAVE``.
  While the receiver is not connected MySQL goes on printing the lag it had when it
  lost the source: the finding shows it as that, never as live lag.
- **Lag**: ``Seconds_Behind_Master`` minus the configured ``SQL_Delay``
  (a delayed replica is not late) above ``lag_warning_s`` (30 s) is a warning,
  above ``lag_critical_s`` (300 s) critical. Lag that grows steadily over the last
  ``growth_window_s`` (60 s; at least ``growth_min_rise_s`` more over at least
  ``growth_min_span_s``, never dipping more than ``growth_max_dip_s`` below its
  peak) is a warning even below the threshold: the replica applies slower than
  the primary writes and will not catch up by itself. The growth is given in s
  per minute. Seconds_Behind_Master only measures the applier: with a slow link it
  can read 0 while the receiver is far behind.
- **Lag NULL while both threads run**: warning; the server does not know how far
  behind it is (usually just after the receiver reconnected, before an event came);
  pair_lag measures it from both nodes meanwhile.
- **The replica's MySQL cannot be read** (unreachable, timeout, auth refused...):
  critical on the replica, key "": replmon cannot see replication at all. The
  title carries the source's error text; source_health reports the source itself.
- **Replication status not readable** (``replication_error``, e.g. a missing
  REPLICA MONITOR / REPLICATION CLIENT grant): info on the primary (it is only
  needed there for multi-source setups), warning on the replica; the hint names
  the GRANT.
- **No channel at all on the replica** while the primary's MySQL is up: warning,
  the replica is not replicating (never configured, or ``RESET SLAVE ALL``).
- **Group Replication channels** (``group_replication_applier``/``_recovery``) are
  recognised and not judged as asynchronous replication: their receiver idles by
  design; a group member's health is its own check, which replmon does not have yet.

Opens after 2 s (``open_after``): a stopped thread is unambiguous, and one
odd sample must not page anyone.

What to do: each finding's next step is for its error, in the server's words
(Source/Replica on MySQL 8.0.22+, Master/Slave on MariaDB): for a stopped applier,
fix what the error names (compare the row on both nodes for 1062/1032, find the
blocker for 1205), then ``START SLAVE SQL_THREAD``; for the receiver, reach the
source's host and port, its name, its replication account, or re-seed the replica
when the binlogs it needs are gone; for growing lag, look at what the applier is
doing (``SHOW PROCESSLIST``: a long statement, a lock held on the replica) and at
the replica's disk; lag that is falling is catching up (the finding says how long
to go at that rate).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Number,
    Observation,
    ReplicaChannel,
    Role,
    Seconds,
    Severity,
    SourceState,
    Thresholds,
    Window,
    fmt,
    numbers,
    round_up,
    source_ok,
)

from ._mysql_replication_advice import Part, io_advice, since, sql_stopped, stopped_by_hand


class Limits(Thresholds):
    open_after: Seconds = 2.0
    """Seconds (s) the condition must hold, tick after tick, before the finding opens
    (2 s: a stopped thread is unambiguous)."""
    lag_warning_s: float = 30.0
    """Seconds of applier lag (beyond SQL_Delay) above which it is a warning."""
    lag_critical_s: float = 300.0
    """Seconds of applier lag above which it is critical."""
    growth_window_s: float = 60.0
    """Seconds of history looked at for steadily growing lag."""
    growth_min_span_s: float = 20.0
    """Seconds of uninterrupted lag readings needed before growth is judged."""
    growth_min_rise_s: float = 10.0
    """Seconds the lag must have grown over that span to count as growing."""
    growth_max_dip_s: float = 2.0
    """Seconds the lag may fall below its running peak and still be 'steady' growth."""
    connecting_critical_s: float = 60.0
    """Seconds a receiver may stay 'Connecting' before it is critical."""


def channel_key(ch: ReplicaChannel) -> str:
    """A channel's threads' finding: its name, "default" for the unnamed one."""
    return ch.name or "default"


def lag_key(ch: ReplicaChannel) -> str:
    """A channel's lag finding ("default/lag"): another condition than a thread not
    running, so its own finding (in the same incident: ``EXPLAINS``), not a rename of
    the threads' one when a stopped thread is started again and the replica catches up."""
    return f"{channel_key(ch)}/lag"


def effective_lag(ch: ReplicaChannel) -> int | None:
    """Seconds_Behind_Master minus the configured delay; None when unknown or a thread is down."""
    if ch.seconds_behind is None or ch.io_running != "Yes" or not ch.sql_running:
        return None
    return max(0, ch.seconds_behind - (ch.sql_delay or 0))


def _lag(node: NodeTick, name: str) -> int | None:
    """One channel's effective lag (None: unknown, a thread down, no such channel or no
    MySQL; the first channel of that name counts)."""
    if not source_ok(node, "mysql"):
        return None
    for ch in node.mysql.replication:
        if ch.name == name:
            return effective_lag(ch)
    return None


def _io_states(node: NodeTick) -> dict[str, str | None] | None:
    """Channel name -> Slave_IO_Running; None without MySQL."""
    if not source_ok(node, "mysql"):
        return None
    out: dict[str, str | None] = {}
    for ch in node.mysql.replication:
        out.setdefault(ch.name, ch.io_running)
    return out


def _lags(w: Window, role: Role, name: str) -> Sequence[int | None]:
    """One channel's effective lag over the window (``_lag``): one column of the engine's
    cache, shared by ``lag_trend`` and the gate."""
    return w.series(role, lambda n: _lag(n, name))


def lag_trend(w: Window, role: Role, name: str, t: Limits, *, min_rise: float | None = None
              ) -> tuple[float, float, float, bool] | None:
    """(slope s/min, rise s, span s, steady) over the trailing run of lag readings within
    growth_window_s; None when that run spans less than growth_min_span_s, or rose less
    than ``min_rise`` s (when only growth matters, the fit is not worth computing)."""
    lags = _lags(w, role, name)
    recent = lags[w.start_within(t.growth_window_s):]
    if None in recent:  # the run starts after the last tick without a reading
        recent = recent[len(recent) - recent[::-1].index(None):]
    run = cast("list[int]", recent[::-1])  # the trailing run of readings, newest first
    ticks, first = w.ticks, len(lags) - len(run)
    if len(run) < 3 or ticks[-1].wall - ticks[first].wall < t.growth_min_span_s:
        return None
    if min_rise is not None and run[0] - run[-1] < min_rise:
        return None
    pts = [(ticks[first + k].wall, float(lag)) for k, lag in enumerate(reversed(run))]
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx * 60.0
    peak, steady = pts[0][1], True
    for _, y in pts:
        peak = max(peak, y)
        steady = steady and y >= peak - t.growth_max_dip_s
    return slope, pts[-1][1] - pts[0][1], pts[-1][0] - pts[0][0], steady


def _connecting_for(w: Window, role: Role, name: str) -> float:
    """Seconds the channel has been 'Connecting' without interruption (within the window)."""
    states = w.series(role, _io_states)
    i = len(states)
    while i > 0 and (s := states[i - 1]) is not None and s.get(name, "") == "Connecting":
        i -= 1
    return w.last.wall - (w.ticks[i].wall if i < len(states) else w.last.wall)


def _channel_numbers(ch: ReplicaChannel, src: str) -> dict[str, Number]:
    """The numbers every finding on a channel starts with."""
    return numbers(io_running=ch.io_running, sql_running=ch.sql_running,
                   seconds_behind_s=ch.seconds_behind, sql_delay_s=ch.sql_delay, source=src,
                   last_io_errno=ch.last_io_errno, last_sql_errno=ch.last_sql_errno,
                   source_uuid=ch.source_uuid or None, relay_log_space_bytes=ch.relay_log_space,
                   lag_when_receiver_lost_source_s=ch.seconds_behind_stale,
                   last_io_error_time=ch.last_io_error_time or None,
                   last_sql_error_time=ch.last_sql_error_time or None,
                   retried_transactions=ch.retried_transactions,
                   worker_errno=ch.worker_errno or None, failed_gtid=ch.failed_gtid or None,
                   worker_error_time=ch.worker_error_time or None,
                   applying_age_s=ch.applying_age_s, applied_latency_s=ch.applied_latency_s)


def judge_channel(w: Window, role: Role, ch: ReplicaChannel, t: Limits) -> Observation | None:
    wd = w.node(role).mysql.words  # the server's own words: Source/Replica on MySQL 8.0.22+
    src = f"{ch.source_host}:{ch.source_port if ch.source_port is not None else '?'}"
    connecting_s: float | None = None
    parts: list[Part] = []
    io_err = (f", last_io_errno {ch.last_io_errno}{since(ch.last_io_error_time)}: "
              f"{ch.last_io_error}" if ch.last_io_errno else "")
    if ch.seconds_behind_stale is not None:
        io_err += (f"; lag {fmt(ch.seconds_behind_stale)} s when it lost the source "
                   "(not live: the lag now is unknown)")
    node = w.node(role).mysql
    other = w.node("primary" if role == "replica" else "replica")
    src_wd = other.mysql.words if source_ok(other, "mysql") and other.mysql.version else None
    if ch.io_running == "No":
        parts.append((Severity.CRITICAL, f"IO thread not running (source {src}{io_err})",
                      *io_advice(ch, wd, src, src_wd)))
    elif ch.io_running == "Connecting":
        secs = _connecting_for(w, role, ch.name)
        connecting_s = round(secs, 1)
        sev = Severity.CRITICAL if secs >= t.connecting_critical_s else Severity.WARNING
        parts.append((sev, f"IO thread Connecting to {src} for {fmt(secs)} s{io_err}",
                      *io_advice(ch, wd, src, src_wd)))
    if not ch.sql_running:
        parts.append(sql_stopped(ch, wd, node.flavour))
        if (ch.io_running == "No" and not ch.last_io_errno and not ch.last_sql_errno
                and not ch.worker_errno):  # STOP SLAVE: one cause, one step for both
            cause, step = stopped_by_hand(ch, wd)
            parts = [(Severity.CRITICAL, "; ".join(p[1] for p in parts), cause, step)]
    if parts:
        nums = _channel_numbers(ch, src)
        if connecting_s is not None:
            nums["connecting_s"] = connecting_s
        return _merge(role, ch, channel_key(ch), parts, nums)
    lag = effective_lag(ch)
    if lag is None:
        return _merge(role, ch, lag_key(ch), [(
            Severity.WARNING, f"lag unknown ({wd.lag} NULL) with both threads running",
            "the server prints no lag although both threads run: usually just after the "
            "receiver (re)connected, before it received an event to time.",
            f"Check {wd.show}\\G for {wd.io_state} and Last_IO_Error; while it stays NULL, "
            "pair_lag measures the lag from both nodes.")],
            _channel_numbers(ch, src))
    # below the warning level only growth can raise a finding: skip the fit without it
    trend = lag_trend(w, role, ch.name, t,
                      min_rise=None if lag >= t.lag_warning_s else t.growth_min_rise_s)
    slope = trend[0] if trend else None
    growing = (trend is not None and trend[3] and trend[1] >= t.growth_min_rise_s
               and trend[0] > 0)
    if lag >= t.lag_critical_s:
        sev = Severity.CRITICAL
    elif lag >= t.lag_warning_s or growing:
        sev = Severity.WARNING
    else:
        return None
    nums = _channel_numbers(ch, src)  # built only now: most ticks return above
    nums["lag_s"] = lag
    nums["lag_trend_s_per_min"] = None if slope is None else round(slope, 1)
    limit = t.lag_critical_s if sev is Severity.CRITICAL else t.lag_warning_s
    title = f"replication lag {fmt(lag)} s"
    if lag >= t.lag_warning_s:
        title += f" (over {fmt(limit)} s)"
    if growing and trend is not None:
        title += f", growing {fmt(trend[0], 1)} s/min over {fmt(trend[2])} s"
        nums["growth_s_per_min"] = round(trend[0], 1)
    elif slope is not None and slope < 0:
        title += f", falling {fmt(-slope, 1)} s/min (catching up)"
    step = ("SHOW PROCESSLIST on the replica: what is the applier on, is it waiting for a "
            "lock? Compare disk await on both nodes.")
    if not growing and slope is not None and slope < 0:
        togo = lag / -slope  # s / (s/min): minutes
        cause = ("the replica fell behind (a burst of writes, a long transaction, replication "
                 "stopped for a while) and now applies faster than the primary writes: it is "
                 "catching up, "
                 + ("under a minute" if togo < 1 else f"about {fmt(togo)} min")
                 + " to go at this rate.")
        step = "Nothing to do while it keeps falling; if it stops falling: " + step
    else:
        cause = ("the applier executes slower than the primary writes: a long statement or "
                 "transaction, a lock held on the replica, a slow replica disk, or a "
                 "single-threaded applier behind a parallel primary.")
    if ch.sql_delay:
        cause += f" (The configured delay of {ch.sql_delay} s is already subtracted.)"
    return _merge(role, ch, lag_key(ch), [(sev, title, cause, step)], nums)


def _merge(role: Role, ch: ReplicaChannel, key: str, parts: list[Part],
           nums: dict[str, Number]) -> Observation:
    parts.sort(key=lambda p: -p[0])
    return Observation.trusted(
        key=key, node=role, severity=parts[0][0],
        title="; ".join(p[1] for p in parts), numbers=nums,
        cause=" ".join(p[2][0].upper() + p[2][1:] for p in parts),
        next_step=parts[0][3])


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position): lags rounded
    up, None without a channel judged by its lag."""

    loud: float
    """1 when the window holds something reported whatever the thresholds, else 0."""
    lag_s: float | None
    """The largest lag of a channel judged by its lag, s."""
    rise_s: float | None
    """The largest rise of such a channel's lag over its trailing run of readings in the
    window, s: the lag now minus the run's lowest."""


def measure(w: Window) -> Gauges:
    loud = w.node("replica").mysql.status.state not in (SourceState.OK, SourceState.ABSENT)
    lag: int | None = None
    rise: int | None = None
    primary_ok = source_ok(w.node("primary"), "mysql")
    for role in ("primary", "replica"):
        node = w.node(role)
        if not source_ok(node, "mysql"):
            continue
        m = node.mysql
        if m.replication_error or (role == "replica" and not m.replication and primary_ok):
            loud = True
            continue
        for ch in m.replication:
            if ch.group_replication:
                continue
            now = effective_lag(ch)
            if now is None:  # a thread not running or no lag: reported, as judge_channel
                loud = True
                continue
            lag = now if lag is None else max(lag, now)
            lags = _lags(w, role, ch.name)
            last = lags[-1]
            if last is None:
                continue  # lag_trend's run is empty: no growth
            up_by = 0  # lags are at least 0: none rose to a last lag of 0
            if last > 0:
                try:
                    up_by = last - min(cast("Sequence[int]", lags))
                except TypeError:  # a tick without a lag: the run starts after the last
                    run = lags[len(lags) - lags[::-1].index(None):]
                    up_by = last - min(cast("Sequence[int]", run))
            rise = up_by if rise is None else max(rise, up_by)
    return Gauges(1.0 if loud else 0.0, round_up(lag), round_up(rise))


def quiet(g: Gauges, t: Limits) -> bool:
    """Reported whatever the thresholds (the replica's MySQL unreadable, replication
    status unreadable, no channel, a thread not running, the lag NULL): never quiet.
    Else a channel is reported only for a lag of at least ``lag_warning_s`` or
    ``lag_critical_s`` (``connecting_critical_s`` sets a severity alone), or for growth:
    a rise of at least ``growth_min_rise_s`` from the first reading of a trailing run
    within ``growth_window_s``, which is a part of the whole window's trailing run, so
    at most the rise measured over that. NaN limits are never quiet."""
    lag, rise = g.lag_s, g.rise_s
    return (g.loud == 0.0
            and (lag is None or (lag < t.lag_warning_s and lag < t.lag_critical_s))
            and (rise is None or rise < t.growth_min_rise_s))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    last = w.last
    primary, replica = w.node("primary"), w.node("replica")
    st = replica.mysql.status
    if st.state not in (SourceState.OK, SourceState.ABSENT):
        # the status's since-time is the sample's, a hair after the tick's wall: never
        # "-0.0 s"
        down_s = max(0.0, last.wall - st.since) if st.since is not None else None
        out.append(Observation.trusted(
            key="", node="replica", severity=Severity.CRITICAL,
            title=(f"replica MySQL {st.state.value} for {fmt(down_s, 1)} s: cannot see "
                   f"replication at all ({st.error or 'no detail'})"),
            numbers=numbers(state=st.state.value, down_s=down_s, error=st.error),
            cause=st.hint or ("replmon cannot read the replica's MySQL: it is down, hung "
                              "(timeout), overloaded, or refuses the monitoring account."),
            next_step=("On the replica: is mariadbd/mysqld running and answering a local "
                       f"client? Then read {replica.mysql.words.show}\\G there.")))
    for role in ("primary", "replica"):
        node = w.node(role)
        if not source_ok(node, "mysql"):
            continue
        m = node.mysql
        if m.replication_error:
            out.append(Observation.trusted(
                key="", node=role,
                severity=Severity.INFO if role == "primary" else Severity.WARNING,
                title=f"replication status not readable: {m.replication_error}",
                numbers=numbers(error=m.replication_error),
                cause="the monitoring account lacks the privilege to read replication status.",
                next_step=m.replication_hint or "Grant REPLICA MONITOR (MariaDB) or "
                                                "REPLICATION CLIENT (MySQL) to the account."))
            continue
        if role == "replica" and not m.replication and source_ok(primary, "mysql"):
            out.append(Observation.trusted(
                key="channels", node="replica", severity=Severity.WARNING,
                title="replica is not replicating: no channel configured (0 channels)",
                numbers=numbers(channels=0),
                cause="the replica's MySQL has no replication channel (never set up, or "
                      f"RESET {m.words.replica} ALL), so it does not follow the primary.",
                next_step=f"{m.words.change} ... on the replica, then START "
                          f"{m.words.replica}."))
        for ch in m.replication:
            if ch.group_replication:
                continue  # not an async replica's channel: its threads idle by design
            o = judge_channel(w, role, ch, t)
            if o is not None:
                out.append(o)
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("mysql_replication", "same",
             "a replication thread that did not run left the replica behind: once it runs "
             "again the replica catches up, with lag (its own finding, not a rename)",
             before_s=0.0, effect_key="*/lag"),
    Explains("pair_lag", "same",
             "a stopped or failing replication thread leaves the replica behind while "
             "Seconds_Behind_Master reads NULL"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="mysql_replication", title="MySQL replication", needs=("mysql",),
              thresholds=Limits, evaluate=evaluate, window=300.0, explains=EXPLAINS,
              reads=("mysql",), gate=Gate(measure, quiet, gauges=Gauges), service="mysql")
