"""MySQL replication: is the replica receiving and applying the primary's changes?

Reads the replication status (SHOW ALL SLAVES STATUS on MariaDB, SHOW REPLICA
STATUS on MySQL) of both nodes, one finding per replication channel (key = the
channel name, "default" for the unnamed one). The replica is judged always; the
primary only when it has channels of its own (circular or multi-source setups).

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
  not found (a write on the replica, an inconsistent seed), 1317 a killed
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

from typing import cast

from replmon.check import (
    Check,
    Explains,
    NodeTick,
    Number,
    Observation,
    ReplicaChannel,
    ReplicationWords,
    Role,
    Seconds,
    Severity,
    SourceState,
    Thresholds,
    Window,
    fmt,
    fmt_bytes,
    numbers,
    source_ok,
)

Part = tuple[Severity, str, str, str]
"""severity, title part, cause, next step."""


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
    return ch.name or "default"


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


def lag_trend(w: Window, role: Role, name: str, t: Limits, *, min_rise: float | None = None
              ) -> tuple[float, float, float, bool] | None:
    """(slope s/min, rise s, span s, steady) over the trailing run of lag readings within
    growth_window_s; None when that run spans less than growth_min_span_s, or rose less
    than ``min_rise`` s (when only growth matters, the fit is not worth computing)."""
    lags = w.series(role, lambda n: _lag(n, name))
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


def _since(when: str) -> str:
    """" at <error time>" when the server says when (MySQL *_Error_Timestamp)."""
    return f" at {when}" if when else ""


def _relay(ch: ReplicaChannel) -> str:
    """The relay logs' size, for a stopped applier's cause (they fill the disk)."""
    if ch.relay_log_space is None:
        return ""
    return f" (relay logs hold {fmt_bytes(ch.relay_log_space)})"


def _prefix(wd: ReplicationWords) -> str:
    """SOURCE_ / MASTER_: the option prefix of this server's CHANGE statement."""
    return wd.delay.split("_", 1)[0] + "_"


def _var(wd: ReplicationWords, name: str) -> str:
    """A replication variable under this server's name: MySQL's Source/Replica words
    rename slave_* to replica_* (sql_slave_skip_counter -> sql_replica_skip_counter)."""
    return name.replace("slave", "replica") if wd.replica == "REPLICA" else name


SOURCE_LOG_ERRNOS = (1236, 13114)
"""The source refused to send from the replica's position: 1236
(ER_MASTER_FATAL_ERROR_READING_BINLOG), which MySQL 8 reports as 13114, "Got fatal
error 1236 from source when reading data from binary log: '...'"."""
_DIVERGED = ("diverged", "has more gtids")
"""Words of a 1236 whose cause is the replica's own extra transactions (MariaDB's "the
slave has diverged", MySQL's "Slave has more GTIDs than the master has")."""
_PURGED = ("purged", "could not find first log file", "not in the master's binlog",
           "could not find gtid state")
"""Words of a 1236 whose binlogs are gone (MySQL's file/position and GTID wordings,
MariaDB's GTID wordings)."""


def _io_advice(ch: ReplicaChannel, wd: ReplicationWords, src: str,
               src_wd: ReplicationWords | None = None) -> tuple[str, str]:
    """(cause, next step) of a receiver that is not running or not connected, from its
    last error number and text: the server's own words, not a guess (``src_wd``: the
    source's words, for what was run there)."""
    errno, text = ch.last_io_errno, ch.last_io_error.lower()
    stopped = ch.io_running == "No"
    host = ch.source_host or "?"
    port = ch.source_port if ch.source_port is not None else "?"
    pre = _prefix(wd)
    # after a fix on the source or the network: a stopped receiver is started again, a
    # connecting one retries by itself; a CHANGE needs replication stopped around it
    start = (f"START {wd.replica} IO_THREAD" if stopped
             else "it reconnects by itself, every Connect_Retry seconds")

    def change(*options: str) -> str:
        return f"STOP {wd.replica}; {wd.change} {', '.join(options)}; START {wd.replica}"

    if errno == 0:
        if stopped:
            return (f"the receiver was stopped without an error: STOP {wd.replica} IO_THREAD "
                    f"(or STOP {wd.replica}) by hand, or it was not started after a restart "
                    f"({_var(wd, 'skip-slave-start')}); nothing arrives from the source.",
                    f"If nobody stopped it on purpose (a maintenance): START {wd.replica} "
                    "IO_THREAD.")
        return ("the receiver is connecting and has no error yet: an attempt that hangs "
                "(a firewall that drops the packets, a source too busy to answer) stays "
                "like this until its timeout.",
                f"From the replica, connect to {src} (mysql -h {host} -P {port} with the "
                "replication account) and see where it hangs.")
    lead = f"the receiver {'stopped after' if stopped else 'keeps retrying after'} error {errno}: "
    if errno in SOURCE_LOG_ERRNOS or "fatal error 1236" in text:
        if "binary log is not open" in text:
            return (lead + "the source's binary log is off (log_bin): it has nothing to "
                    "send a replica.",
                    "Turn log_bin on at the source (a restart), then re-seed the replica from "
                    "a backup of the source taken after that.")
        if "max_allowed_packet" in text:
            return (lead + "an event in the source's binlog is larger than its "
                    "max_allowed_packet.",
                    "Raise max_allowed_packet on the source (and the replica's "
                    f"{_var(wd, 'slave_max_allowed_packet')}, 1 GiB at most), then {start}.")
        if any(w in text for w in _DIVERGED):
            return (lead + "the replica holds transactions the source never had (written on "
                    "the replica: errant transactions), so the source cannot continue from "
                    "the replica's GTID position.",
                    "See errant_writes for what was written on the replica; remove it there "
                    "(or apply it on the primary as well), or re-seed the replica from a "
                    f"fresh backup of the primary; then {start}.")
        if any(w in text for w in _PURGED):
            return (lead + "the source has purged binlogs the replica still needs "
                    "(binlog_expire_logs_seconds / expire_logs_days, PURGE BINARY LOGS, "
                    f"{(src_wd or wd).reset_binlogs}): what the replica lacks can no longer "
                    "be sent.",
                    "Re-seed the replica from a fresh backup of the primary (mariabackup, "
                    "xtrabackup, clone) and start it at the position that backup gives; "
                    "then keep binlogs longer than a replica may stay away.")
        return (lead + "the source cannot send from the position the replica asks for: its "
                "binlogs no longer hold it (purged or reset), or the position lies past the "
                "end of a binlog the source lost in a crash.",
                f"Compare the replica's {pre.title().rstrip('_')}_Log_File and {wd.read_pos} "
                "with SHOW BINARY LOGS on the source: if that file is gone, re-seed the "
                "replica from a fresh backup of the primary; if the source crashed, find "
                "what it lost before pointing the replica at its next binlog.")
    if errno == 2003 or "can't connect" in text:
        if "(111" in text or "connection refused" in text:
            why = (f"nothing listens on {src}: the source's MySQL is down, or listens on "
                   "another port or address (port, bind_address, skip_networking).")
        elif "(110" in text or "timed out" in text:
            why = (f"connecting to {src} times out: a firewall drops the packets, or the "
                   "host is down or unreachable.")
        elif "(113" in text or "no route" in text:
            why = f"there is no route from the replica to {host} (network, a firewall)."
        else:
            why = (f"the replica cannot open a TCP connection to {src}: the source's MySQL "
                   "is down, the host or port is wrong, or the network is in the way.")
        return (lead + why,
                f"From the replica: nc -zv {host} {port}, then mysql -h {host} -P {port} with "
                "the replication account; on the source: is mysqld up on that port and "
                f"address? Once it answers, {start}; a wrong address: "
                f"{change(f'{pre}HOST=...', f'{pre}PORT=...')}.")
    if errno == 2005 or ("unknown" in text and "server host" in text):
        return (lead + f"the source's host name {host} does not resolve on the replica "
                f"(DNS, /etc/hosts, or a typo in {pre}HOST).",
                f"On the replica: getent hosts {host}; fix the name service (then "
                f"{start}), or set the address: {change(f'{pre}HOST=...')}.")
    if errno == 1045 or "access denied" in text:
        return (lead + "the source refuses the replication account's login: a wrong user "
                f"or password in the replica's {wd.change} settings, or no such account "
                "for the replica's address on the source.",
                "On the source: SELECT user, host FROM mysql.user for the replication "
                f"account; from the replica, log in with it (mysql -h {host} -P {port} -u "
                f"... -p); a wrong password in the replica: "
                f"{change(f'{pre}USER=...', f'{pre}PASSWORD=...')}; an account fixed on "
                f"the source: {start}.")
    if errno == 1130 or "is not allowed to connect" in text:
        return (lead + "the source has no account for the replica's address (\"Host ... "
                "is not allowed to connect\").",
                "On the source, create the replication account for the replica's host "
                "(CREATE USER ...@'<replica address>'; GRANT REPLICATION SLAVE ON *.* TO "
                f"...); then {start}.")
    if errno == 2061 or "requires secure connection" in text:
        return (lead + "the replication account uses caching_sha2_password and the "
                "connection is neither TLS nor allowed to ask for the source's public key.",
                f"{change(f'GET_{pre}PUBLIC_KEY=1')} (or {pre}SSL=1 with TLS set up).")
    if errno == 1593 or "have equal" in text:
        return (lead + "the replica and the source have the same server_id (or "
                "server_uuid: a data directory copied with its auto.cnf).",
                "Give the replica its own server_id (my.cnf and SET GLOBAL server_id), or "
                f"remove the copied auto.cnf and restart it; then {start}.")
    return (lead + (ch.last_io_error or "no text given") + ".",
            f"Read Last_IO_Error in {wd.show}\\G and the replica's error log, fix the cause, "
            f"then {start}.")


def _skip_hint(ch: ReplicaChannel, wd: ReplicationWords, flavour: str | None,
               gtid_: str) -> str:
    """How to skip the one failing transaction on this server once its data is known to
    be right: MySQL with GTIDs needs an empty transaction of that GTID; MariaDB (with or
    without GTIDs) and file/position replication a skip counter."""
    if gtid_:
        return f"SET GTID_NEXT='{gtid_}'; BEGIN; COMMIT; SET GTID_NEXT='AUTOMATIC'"
    if flavour != "mariadb" and ch.using_gtid:
        return ("an empty transaction with the failing GTID: SET GTID_NEXT='...'; BEGIN; "
                "COMMIT; SET GTID_NEXT='AUTOMATIC' (performance_schema."
                "replication_applier_status_by_worker names it)")
    return f"SET GLOBAL {_var(wd, 'sql_slave_skip_counter')}=1"


def _sql_advice(errno: int, text: str, ch: ReplicaChannel, wd: ReplicationWords,
                flavour: str | None, gtid_: str = "") -> tuple[str, str]:
    """(what the error means and its likely cause, next step) of an applier stopped on
    ``errno``: the coordinator's Last_SQL_Errno, or on MySQL 8 the failing worker's own."""
    start = f"START {wd.replica} SQL_THREAD and watch the lag come down."
    low = text.lower()
    if errno == 1062 or "duplicate entry" in low:
        return ("duplicate key: a row the source inserted already exists on the replica, so "
                "something wrote it there first: a client writing on the replica (read_only "
                "off, or an account with SUPER), or the replica was seeded from an "
                "inconsistent copy or applied this transaction twice (a crash without "
                "crash-safe replication)",
                "Compare the row named in the error on both nodes and find who wrote it on "
                "the replica (errant_writes; the server_id in the replica's binlog); set "
                "read_only and super_read_only there. If the replica's row equals the "
                f"source's, skip this one transaction ({_skip_hint(ch, wd, flavour, gtid_)}); "
                "otherwise re-sync the table (pt-table-checksum, pt-table-sync). Then "
                + start)
    if errno == 1032 or "can't find record" in low or "key_not_found" in low:
        return ("row not found: a row the source updated or deleted does not exist on the "
                "replica: it was deleted or changed there (a write on the replica), or the "
                "replica was seeded without it (an inconsistent backup, replication filters)",
                "Look up the row named in the error (table and key) on the primary and copy "
                "it to the replica, or re-sync the table (pt-table-checksum, pt-table-sync); "
                "find who changed the replica (errant_writes). Skipping the transaction "
                "would leave the row different on the two nodes. Then " + start)
    if errno == 1317 or "execution was interrupted" in low:
        return ("query execution was interrupted: the applier's statement was killed (KILL "
                "on the replica, or a STOP or shutdown while it ran); it did not fail on the "
                "data",
                f"START {wd.replica} SQL_THREAD: the statement runs again from its start (a "
                "long one, a big ALTER, takes as long again); watch the lag come down.")
    if errno in (1205, 1213) or "lock wait timeout" in low or "deadlock found" in low:
        return ("lock wait timeout or deadlock: the applier waited for a lock held by a "
                "session on the replica (a long transaction, a backup, a report) and gave "
                f"up after its retries ({_var(wd, 'slave_transaction_retries')})",
                "Find the blocker on the replica (SHOW PROCESSLIST, "
                "information_schema.INNODB_TRX) and end it; then " + start)
    if errno in (1146, 1049) or "doesn't exist" in low or "unknown database" in low:
        return ("table or database missing on the replica: the event writes to an object "
                "the replica lacks: created on the source with sql_log_bin=0, skipped by a "
                "replication filter (Replicate_Do_*/Replicate_Ignore_*), or left out of the "
                "seed",
                f"Compare SHOW CREATE TABLE on both nodes and the filters in {wd.show}\\G; "
                "create what is missing as it is on the source; then " + start)
    if errno == 1594 or "relay log read failure" in low:
        pre = _prefix(wd)
        pos = ch.exec_source_log_pos
        redo = (f"STOP {wd.replica}; RESET {wd.replica} (not ALL: it drops the relay logs and "
                f"keeps the connection settings); START {wd.replica}: it fetches again what "
                "was not executed" if ch.using_gtid else
                f"STOP {wd.replica}; {wd.change} {pre}LOG_FILE='"
                f"{ch.relay_source_log_file or '<Relay_Master_Log_File>'}', {pre}LOG_POS="
                f"{pos if pos is not None else '<Exec_Master_Log_Pos>'} (the executed "
                f"position: the relay logs are dropped and fetched again); START {wd.replica}")
        return ("relay log read failure: the applier cannot read its relay log, corrupt "
                "after a crash or a full disk on the replica (or the source's binlog itself "
                "is corrupt)",
                f"Check the replica's disk and error log; then {redo}.")
    if errno == 0:
        return ("", "If nobody stopped it on purpose (a backup, a maintenance): " + start)
    where = (" (the coordinator's message; the failing worker's own error is in "
             "performance_schema.replication_applier_status_by_worker)"
             if "coordinator stopped" in low else "")
    return (where.strip(" ()"),
            f"Read the error in {wd.show}\\G{' and that table' if where else ''} and the "
            "replica's error log, fix its cause on the replica; then " + start)


def _sql_stopped(ch: ReplicaChannel, wd: ReplicationWords, flavour: str | None) -> Part:
    """The stopped applier: what its error means, with the failing worker's own error
    where MySQL 8 gives it (SHOW REPLICA STATUS then only says "Coordinator stopped
    because there were error(s) in the worker(s)")."""
    relay = "; received changes pile up in the relay log unapplied" + _relay(ch) + "."
    if ch.worker_errno:
        title = (f"SQL thread stopped (worker {ch.worker_id} error {ch.worker_errno}"
                 f"{_since(ch.worker_error_time)} on {ch.failed_gtid or 'an unknown GTID'}: "
                 f"{ch.worker_error})")
        what, step = _sql_advice(ch.worker_errno, ch.worker_error, ch, wd, flavour,
                                 ch.failed_gtid)
        return (Severity.CRITICAL, title,
                f"applier worker {ch.worker_id} failed on transaction "
                f"{ch.failed_gtid or '?'} with error {ch.worker_errno}"
                + (f", {what}" if what else "") + relay, step)
    errno = ch.last_sql_errno
    what, step = _sql_advice(errno, ch.last_sql_error, ch, wd, flavour)
    if errno:
        why = f"the applier stopped on error {errno}" + (f", {what}" if what else "")
    else:
        why = (f"the applier was stopped without an error: by hand (STOP {wd.replica} "
               f"SQL_THREAD, or STOP {wd.replica}), by a START {wd.replica} UNTIL that "
               f"reached its position, or not started after a restart "
               f"({_var(wd, 'skip-slave-start')})")
    return (Severity.CRITICAL,
            f"SQL thread stopped (last_sql_errno {errno}"
            f"{_since(ch.last_sql_error_time)}"
            f"{': ' + ch.last_sql_error if ch.last_sql_error else ''})",
            why + relay, step)


def _stopped_by_hand(ch: ReplicaChannel, wd: ReplicationWords) -> tuple[str, str]:
    """(cause, next step) when both threads are stopped without an error: STOP SLAVE."""
    return (f"replication was stopped without an error: STOP {wd.replica} by hand, or not "
            f"started after a restart ({_var(wd, 'skip-slave-start')}); nothing arrives "
            f"from the source and nothing is applied" + _relay(ch) + ".",
            f"If nobody stopped it on purpose (a backup, a maintenance): START {wd.replica}; "
            "watch the lag come down.")


def judge_channel(w: Window, role: Role, ch: ReplicaChannel, t: Limits) -> Observation | None:
    wd = w.node(role).mysql.words  # the server's own words: Source/Replica on MySQL 8.0.22+
    src = f"{ch.source_host}:{ch.source_port if ch.source_port is not None else '?'}"
    connecting_s: float | None = None
    parts: list[Part] = []
    io_err = (f", last_io_errno {ch.last_io_errno}{_since(ch.last_io_error_time)}: "
              f"{ch.last_io_error}" if ch.last_io_errno else "")
    if ch.seconds_behind_stale is not None:
        io_err += (f"; lag {fmt(ch.seconds_behind_stale)} s when it lost the source "
                   "(not live: the lag now is unknown)")
    node = w.node(role).mysql
    other = w.node("primary" if role == "replica" else "replica")
    src_wd = other.mysql.words if source_ok(other, "mysql") and other.mysql.version else None
    if ch.io_running == "No":
        parts.append((Severity.CRITICAL, f"IO thread not running (source {src}{io_err})",
                      *_io_advice(ch, wd, src, src_wd)))
    elif ch.io_running == "Connecting":
        secs = _connecting_for(w, role, ch.name)
        connecting_s = round(secs, 1)
        sev = Severity.CRITICAL if secs >= t.connecting_critical_s else Severity.WARNING
        parts.append((sev, f"IO thread Connecting to {src} for {fmt(secs)} s{io_err}",
                      *_io_advice(ch, wd, src, src_wd)))
    if not ch.sql_running:
        parts.append(_sql_stopped(ch, wd, node.flavour))
        if (ch.io_running == "No" and not ch.last_io_errno and not ch.last_sql_errno
                and not ch.worker_errno):  # STOP SLAVE: one cause, one step for both
            cause, step = _stopped_by_hand(ch, wd)
            parts = [(Severity.CRITICAL, "; ".join(p[1] for p in parts), cause, step)]
    if parts:
        nums = _channel_numbers(ch, src)
        if connecting_s is not None:
            nums["connecting_s"] = connecting_s
        return _merge(role, ch, parts, nums)
    lag = effective_lag(ch)
    if lag is None:
        return _merge(role, ch, [(
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
    return _merge(role, ch, [(sev, title, cause, step)], nums)


def _merge(role: Role, ch: ReplicaChannel, parts: list[Part], nums: dict[str, Number]
           ) -> Observation:
    parts.sort(key=lambda p: -p[0])
    return Observation(
        key=channel_key(ch), node=role, severity=parts[0][0],
        title="; ".join(p[1] for p in parts), numbers=nums,
        cause=" ".join(p[2][0].upper() + p[2][1:] for p in parts),
        next_step=parts[0][3])


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    last = w.last
    primary, replica = w.node("primary"), w.node("replica")
    st = replica.mysql.status
    if st.state not in (SourceState.OK, SourceState.ABSENT):
        down_s = last.wall - st.since if st.since is not None else None
        out.append(Observation(
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
            out.append(Observation(
                key="", node=role,
                severity=Severity.INFO if role == "primary" else Severity.WARNING,
                title=f"replication status not readable: {m.replication_error}",
                numbers=numbers(error=m.replication_error),
                cause="the monitoring account lacks the privilege to read replication status.",
                next_step=m.replication_hint or "Grant REPLICA MONITOR (MariaDB) or "
                                                "REPLICATION CLIENT (MySQL) to the account."))
            continue
        if role == "replica" and not m.replication and source_ok(primary, "mysql"):
            out.append(Observation(
                key="default", node="replica", severity=Severity.WARNING,
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
    Explains("pair_lag", "same",
             "a stopped or failing replication thread leaves the replica behind while "
             "Seconds_Behind_Master reads NULL"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="mysql_replication", title="MySQL replication", needs=("mysql",),
              thresholds=Limits, evaluate=evaluate, window=300.0, explains=EXPLAINS,
              reads=("mysql",))
