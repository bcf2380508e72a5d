"""mysql_replication's wording for a replication thread that is stopped or not connected:
what the receiver's (IO) or the applier's (SQL) error means, its likely cause and the next
step, in the server's own words (Source/Replica on MySQL 8.0.22+, Master/Slave on MariaDB
and older MySQL). Pure functions of one channel and the words of its server.

Not a check: the plug-in loader skips the ``_`` modules of this package. Only
checks/mysql_replication.py imports it; tests/unit/checks/test_mysql_replication_advice.py
holds its causes and next steps to the facts of each error.
"""

from __future__ import annotations

from replmon.check import ReplicaChannel, ReplicationWords, Severity, fmt_bytes

Part = tuple[Severity, str, str, str]
"""severity, title part, cause, next step."""


def since(when: str) -> str:
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


def io_advice(ch: ReplicaChannel, wd: ReplicationWords, src: str,
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
                "backup the replica was made from",
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


def sql_stopped(ch: ReplicaChannel, wd: ReplicationWords, flavour: str | None) -> Part:
    """The stopped applier: what its error means, with the failing worker's own error
    where MySQL 8 gives it (SHOW REPLICA STATUS then only says "Coordinator stopped
    because there were error(s) in the worker(s)")."""
    relay = "; received changes pile up in the relay log unapplied" + _relay(ch) + "."
    if ch.worker_errno:
        title = (f"SQL thread stopped (worker {ch.worker_id} error {ch.worker_errno}"
                 f"{since(ch.worker_error_time)} on {ch.failed_gtid or 'an unknown GTID'}: "
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
            f"{since(ch.last_sql_error_time)}"
            f"{': ' + ch.last_sql_error if ch.last_sql_error else ''})",
            why + relay, step)


def stopped_by_hand(ch: ReplicaChannel, wd: ReplicationWords) -> tuple[str, str]:
    """(cause, next step) when both threads are stopped without an error: STOP SLAVE."""
    return (f"replication was stopped without an error: STOP {wd.replica} by hand, or not "
            f"started after a restart ({_var(wd, 'skip-slave-start')}); nothing arrives "
            f"from the source and nothing is applied" + _relay(ch) + ".",
            f"If nobody stopped it on purpose (a backup, a maintenance): START {wd.replica}; "
            "watch the lag come down.")

