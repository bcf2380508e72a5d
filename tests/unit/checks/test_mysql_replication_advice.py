"""#31 item 8: every cause and next step of mysql_replication follows the facts of its
finding: the error number and text the server gave, in the server's own words (MySQL
8.0.22+ says Source/Replica, MariaDB Master/Slave).

Each case is a real SHOW SLAVE/REPLICA STATUS capture (tests/fixtures/mysql/, the lab's;
tests/fixtures/real/, published ones) or, for an error no capture holds, the lab's
capture with that error's number and the server's own message put in (the message as
MySQL/MariaDB print it, named in each case)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from replmon.checks.mysql_replication import CHECK

from replmon.model.findings import Observation, Severity
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.tick import Tick
from replmon.sources.mysql_replica_parse import parse_replica_status
from replmon.testing.synth import node, observe, tick

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _rows() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mysql_rows", FIXTURES / "mysql" / "mysql_rows.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROWS = _rows()


def capture(path: str, flavour: str = "mariadb") -> ReplicaChannel:
    """The first channel of a capture under tests/fixtures/."""
    rows = ROWS.dict_rows(str(FIXTURES / path), typed=True)
    return parse_replica_status(rows, flavour)[0]  # type: ignore[arg-type]


SQL_STOPPED = capture("mysql/mariadb10.11_lab_show_all_slaves_status_sql_stopped.txt")
IO_CONNECTING = capture("mysql/mariadb10.11_lab_show_all_slaves_status_io_connecting.txt")
HEALTHY = capture("mysql/mariadb10.11_lab_show_all_slaves_status.txt")

MARIADB = {"flavour": "mariadb", "version": "10.11.19-MariaDB-0+deb12u1-log"}
MYSQL8 = {"flavour": "mysql", "version": "8.0.36"}
MYSQL57 = {"flavour": "mysql", "version": "5.7.44-log"}


def judge(ch: ReplicaChannel, server: dict[str, str] = MARIADB, n: int = 1) -> Observation:
    """The one finding on ``ch`` (held ``n`` ticks) on a replica of that server."""
    r = node("replica", mysql=MysqlSample(replication=[ch], **server))  # type: ignore[arg-type]
    ticks = [tick(i, primary=node("primary", mysql=MysqlSample(**server)),  # type: ignore[arg-type]
                  replica=r) for i in range(n)]
    (o,) = observe(CHECK, ticks)
    return o


def edited(base: ReplicaChannel, **change: Any) -> ReplicaChannel:
    return base.model_copy(update=change)


def text(o: Observation) -> str:
    return o.cause + " " + o.next_step


# --- the applier (SQL thread) ---------------------------------------------------------


@pytest.mark.parametrize(("server", "stop", "start", "other"), [
    (MARIADB, "STOP SLAVE SQL_THREAD", "START SLAVE SQL_THREAD", "REPLICA"),
    (MYSQL8, "STOP REPLICA SQL_THREAD", "START REPLICA SQL_THREAD", "SLAVE"),
], ids=["mariadb-master-slave", "mysql8-source-replica"])
def test_errno_0_is_a_stop_by_hand_in_the_servers_words(
        server: dict[str, str], stop: str, start: str, other: str) -> None:
    """The lab's capture after STOP SLAVE SQL_THREAD: Last_SQL_Errno 0. Nothing failed,
    so no error is blamed: never the duplicate key of #31's report."""
    o = judge(SQL_STOPPED, server)
    assert o.title == "SQL thread stopped (last_sql_errno 0)"
    assert o.cause.startswith("The applier was stopped without an error: by hand")
    assert stop in o.cause and "UNTIL" in o.cause
    assert o.next_step.startswith("If nobody stopped it on purpose")
    assert start in o.next_step
    assert other not in text(o)
    for wrong in ("duplicate", "Duplicate", "writes on the replica", "Fix the error", "1062"):
        assert wrong not in text(o), wrong


DUP_MARIADB = ("Could not execute Write_rows_v1 event on table lab.t; Duplicate entry '7' "
               "for key 'PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; "
               "the event's master log binlog.000001, end_log_pos 2210")
"""MariaDB 10.11's Last_SQL_Error for a row the replica already had."""


def test_1062_duplicate_key_blames_writes_on_the_replica_mariadb() -> None:
    o = judge(edited(SQL_STOPPED, last_sql_errno=1062, last_sql_error=DUP_MARIADB))
    assert o.cause.startswith("The applier stopped on error 1062, duplicate key: a row the "
                              "source inserted already exists on the replica")
    assert "a client writing on the replica" in o.cause and "read_only" in o.cause
    assert "errant_writes" in o.next_step and "super_read_only" in o.next_step
    assert "SET GLOBAL sql_slave_skip_counter=1" in o.next_step  # MariaDB skips by counter
    assert "pt-table-sync" in o.next_step
    assert o.next_step.endswith("START SLAVE SQL_THREAD and watch the lag come down.")
    assert "by hand" not in o.cause


# Captured on the lab's mysql-9.7 (tests/unit/test_mysql_parse.py MYSQL97_WORKERS): the
# failing worker's own error, which SHOW REPLICA STATUS hides behind "Coordinator stopped".
GTID_97 = "3b770c16-e9bc-11f1-acd6-02fc00000001:8"
DUP_97 = ("Could not execute Write_rows event on table lab.t; Duplicate entry '900001' for "
          "key 't.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY")


def test_1062_of_a_mysql_worker_skips_by_its_gtid() -> None:
    ch = edited(SQL_STOPPED, last_sql_errno=1062, worker_errno=1062, worker_id=1,
                worker_error=DUP_97, failed_gtid=GTID_97, using_gtid=True)
    o = judge(ch, {"flavour": "mysql", "version": "9.7.4"})
    assert o.title.startswith(f"SQL thread stopped (worker 1 error 1062 on {GTID_97}")
    assert o.cause.startswith(f"Applier worker 1 failed on transaction {GTID_97} with error "
                              "1062, duplicate key")
    assert (f"SET GTID_NEXT='{GTID_97}'; BEGIN; COMMIT; SET GTID_NEXT='AUTOMATIC'"
            in o.next_step)
    assert "START REPLICA SQL_THREAD" in o.next_step and "SLAVE" not in text(o)


NOT_FOUND = ("Could not execute Update_rows_v1 event on table lab.t; Can't find record in "
             "'t', Error_code: 1032; handler error HA_ERR_KEY_NOT_FOUND; the event's master "
             "log binlog.000001, end_log_pos 4031")
"""MariaDB's Last_SQL_Error for an UPDATE of a row the replica does not have."""


def test_1032_row_not_found_names_the_missing_row() -> None:
    o = judge(edited(SQL_STOPPED, last_sql_errno=1032, last_sql_error=NOT_FOUND))
    assert "error 1032, row not found: a row the source updated or deleted does not exist " \
           "on the replica" in o.cause
    assert "seeded without it" in o.cause
    assert o.next_step.startswith("Look up the row named in the error (table and key) on "
                                  "the primary")
    assert "Skipping the transaction would leave the row different" in o.next_step
    assert "duplicate" not in text(o)


def test_1317_interrupted_on_a_real_mysql57_capture_is_a_kill_not_bad_data() -> None:
    """Published capture: a delayed 5.7 replica whose DROP TABLE was killed."""
    ch = capture("real/mysql-replica-status/dbanote_mysql5.7_show_slave_status_delayed_"
                 "sql_error_1317.txt", "mysql")
    assert (ch.last_sql_errno, ch.sql_running) == (1317, False)
    o = judge(ch, MYSQL57)
    assert "query execution was interrupted: the applier's statement was killed" in o.cause
    assert o.next_step.startswith("START SLAVE SQL_THREAD: the statement runs again")
    assert "duplicate" not in text(o) and "errant" not in text(o)


def test_1205_lock_wait_timeout_points_at_the_blocker_on_the_replica() -> None:
    ch = edited(SQL_STOPPED, last_sql_errno=1205, last_sql_error=(
        "Slave SQL thread retried transaction 10 time(s) in vain, giving up. Consider raising "
        "the value of the slave_transaction_retries variable. Last_Error: Lock wait timeout "
        "exceeded; try restarting transaction"))
    o = judge(ch)
    assert "lock held by a session on the replica" in o.cause
    assert "slave_transaction_retries" in o.cause
    assert "INNODB_TRX" in o.next_step
    mysql8 = judge(ch, MYSQL8)
    assert "replica_transaction_retries" in mysql8.cause  # the 8.0.26+ name


def test_1146_missing_table_points_at_filters_and_the_seed() -> None:
    o = judge(edited(SQL_STOPPED, last_sql_errno=1146, last_sql_error=(
        "Error executing row event: 'Table 'lab.t2' doesn't exist'")))
    assert "table or database missing on the replica" in o.cause
    assert "sql_log_bin=0" in o.cause and "replication filter" in o.cause
    assert "SHOW CREATE TABLE on both nodes" in o.next_step


RELAY = ("Relay log read failure: Could not parse relay log event entry. The possible "
         "reasons are: the master's binary log is corrupted (you can check this by running "
         "'mysqlbinlog' on the binary log), the slave's relay log is corrupted (you can "
         "check this by running 'mysqlbinlog' on the relay log), a network problem, or a "
         "bug in the master's or slave's MySQL code.")


def test_1594_relay_log_corrupt_refetches_from_the_executed_position() -> None:
    ch = edited(SQL_STOPPED, last_sql_errno=1594, last_sql_error=RELAY, using_gtid=False)
    o = judge(ch)
    assert "relay log read failure" in o.cause
    assert (f"CHANGE MASTER TO MASTER_LOG_FILE='{ch.relay_source_log_file}', "
            f"MASTER_LOG_POS={ch.exec_source_log_pos}") in o.next_step
    with_gtid = judge(edited(ch, using_gtid=True), MYSQL8)
    assert "RESET REPLICA (not ALL" in with_gtid.next_step
    assert "SOURCE_LOG_FILE" not in with_gtid.next_step  # not allowed with auto-position


def test_coordinator_error_points_at_the_workers_table() -> None:
    """Published capture (MySQL 8.0.34): Last_SQL_Errno 1410 with only the coordinator's
    text; the worker's own error is in performance_schema."""
    ch = capture("real/mysql-replica-status/notes_mysql8.0.34_show_slave_status_"
                 "coordinator_stopped_1410_termwrapped.txt", "mysql")
    assert ch.last_sql_errno == 1410 and not ch.sql_running
    o = judge(ch, {"flavour": "mysql", "version": "8.0.34"})
    assert o.cause.startswith("The applier stopped on error 1410, the coordinator's message")
    assert "replication_applier_status_by_worker" in o.cause
    assert "and that table" in o.next_step
    assert "duplicate" not in text(o)


# --- the receiver (IO thread) ---------------------------------------------------------


def test_io_connecting_2003_connection_refused_is_about_reachability() -> None:
    """The lab's capture with the primary's MySQL stopped: errno 2003, '(111 "Connection
    refused")': nothing listens on the source's port."""
    o = judge(IO_CONNECTING)
    assert o.severity is Severity.WARNING
    assert o.cause.startswith("The receiver keeps retrying after error 2003: nothing listens "
                              "on 127.0.0.1:40303")
    assert "port" in o.cause and "bind_address" in o.cause
    assert o.next_step.startswith("From the replica: nc -zv 127.0.0.1 40303")
    assert "Once it answers, it reconnects by itself, every Connect_Retry seconds" \
        in o.next_step  # Connecting: the receiver retries, nothing to start
    assert o.next_step.endswith("a wrong address: STOP SLAVE; CHANGE MASTER TO "
                                "MASTER_HOST=..., MASTER_PORT=...; START SLAVE.")


def test_2003_timeout_blames_the_network_not_the_server() -> None:
    msg = ("error connecting to master 'repl@10.0.0.5:3306' - retry-time: 60 retries: 1 "
           "message: Can't connect to MySQL server on '10.0.0.5:3306' (110)")
    o = judge(edited(IO_CONNECTING, last_io_error=msg, source_host="10.0.0.5",
                     source_port=3306), MYSQL8)
    assert "connecting to 10.0.0.5:3306 times out: a firewall drops the packets" in o.cause
    assert "nc -zv 10.0.0.5 3306" in o.next_step
    assert "STOP REPLICA; CHANGE REPLICATION SOURCE TO SOURCE_HOST=" in o.next_step
    gave_up = judge(edited(IO_CONNECTING, io_running="No", last_io_error=msg), MYSQL8)
    assert gave_up.cause.startswith("The receiver stopped after error 2003: connecting to ")
    assert "Once it answers, START REPLICA IO_THREAD" in gave_up.next_step


def test_2005_unknown_host_is_about_name_resolution() -> None:
    msg = ("error connecting to master 'repl@db-primary:3306' - retry-time: 60 retries: 1 "
           "message: Unknown MySQL server host 'db-primary' (-2)")
    o = judge(edited(IO_CONNECTING, last_io_errno=2005, last_io_error=msg,
                     source_host="db-primary", source_port=3306))
    assert "error 2005: the source's host name db-primary does not resolve" in o.cause
    assert o.next_step.startswith("On the replica: getent hosts db-primary")


def test_1045_access_denied_is_the_replication_accounts_login() -> None:
    msg = ("error connecting to master 'repl@10.0.0.5:3306' - retry-time: 60 retries: 1 "
           "message: Access denied for user 'repl'@'10.0.0.6' (using password: YES)")
    o = judge(edited(IO_CONNECTING, last_io_errno=1045, last_io_error=msg))
    assert "error 1045: the source refuses the replication account's login" in o.cause
    assert "mysql.user" in o.next_step
    assert "STOP SLAVE; CHANGE MASTER TO MASTER_USER=..., MASTER_PASSWORD=...; START " \
           "SLAVE" in o.next_step
    assert "nothing listens" not in o.cause


def test_2061_caching_sha2_asks_for_the_public_key() -> None:
    """The message of tests/fixtures/real/mysql8-ps/ (MySQL 8's group-replication recovery
    channel, the same receiver code)."""
    msg = ("error connecting to master 'repl@10.255.210.9:3306' - retry-time: 60 retries: 1 "
           "message: Authentication plugin 'caching_sha2_password' reported error: "
           "Authentication requires secure connection.")
    o = judge(edited(IO_CONNECTING, last_io_errno=2061, last_io_error=msg), MYSQL8)
    assert "caching_sha2_password" in o.cause
    assert o.next_step.startswith("STOP REPLICA; CHANGE REPLICATION SOURCE TO "
                                  "GET_SOURCE_PUBLIC_KEY=1; START REPLICA")


def test_connecting_without_an_error_yet_says_it_hangs() -> None:
    o = judge(edited(IO_CONNECTING, last_io_errno=0, last_io_error=""))
    assert "is connecting and has no error yet" in o.cause
    assert "2003" not in o.cause and "refuses" not in o.cause


def test_13114_binary_log_not_open_on_a_real_capture() -> None:
    """Published capture (MySQL 8 replica of an Aurora source): Replica_IO_Running No,
    Last_IO_Errno 13114, "Got fatal error 1236 ...: 'Binary log is not open'"."""
    ch = capture("real/mysql-replica-status/notes_aurora_mysql8_show_replica_status_io_"
                 "13114_sbs0_mysqlsh.txt", "mysql")
    assert (ch.io_running, ch.last_io_errno) == ("No", 13114)
    o = judge(ch, MYSQL8)
    assert o.title.startswith("IO thread not running (source ")
    assert o.cause.startswith("The receiver stopped after error 13114: the source's binary "
                              "log is off (log_bin)")
    assert o.next_step.startswith("Turn log_bin on at the source")


PURGED_MYSQL = (
    "Got fatal error 1236 from source when reading data from binary log: 'Cannot replicate "
    "because the source purged required binary logs. Replicate the missing transactions "
    "from elsewhere, or provision a new replica from backup. Consider increasing the "
    "source's binary log expiration period.'")
PURGED_FILE = ("Got fatal error 1236 from master when reading data from binary log: 'Could "
               "not find first log file name in binary log index file'")


@pytest.mark.parametrize(("errno", "msg", "server", "reset"), [
    (13114, PURGED_MYSQL, MYSQL8, "RESET MASTER"),
    (13114, PURGED_MYSQL, {"flavour": "mysql", "version": "8.4.3"},
     "RESET BINARY LOGS AND GTIDS"),
    (1236, PURGED_FILE, MARIADB, "RESET MASTER"),
], ids=["mysql8.0-gtid", "mysql8.4-gtid", "mariadb-file"])
def test_1236_purged_binlogs_means_reseeding(errno: int, msg: str, server: dict[str, str],
                                             reset: str) -> None:
    ch = edited(HEALTHY, io_running="No", seconds_behind=None, last_io_errno=errno,
                last_io_error=msg)
    o = judge(ch, server)
    assert o.severity is Severity.CRITICAL
    assert f"error {errno}: the source has purged binlogs the replica still needs" in o.cause
    assert "PURGE BINARY LOGS" in o.cause and reset in o.cause
    assert o.next_step.startswith("Re-seed the replica from a fresh backup of the primary")


def test_1236_diverged_replica_is_errant_transactions_not_purge() -> None:
    msg = ("Got fatal error 1236 from master when reading data from binary log: 'Error: "
           "connecting slave requested to start from GTID 0-1-9000, which is not in the "
           "master's binlog. Since the master's binlog contains GTIDs with higher sequence "
           "numbers, it probably means that the slave has diverged due to executing extra "
           "erroneous transactions'")
    o = judge(edited(HEALTHY, io_running="No", seconds_behind=None, last_io_errno=1236,
                     last_io_error=msg))
    assert "transactions the source never had" in o.cause and "purged" not in o.cause
    assert "errant_writes" in o.next_step


def test_1236_of_another_kind_compares_positions() -> None:
    msg = ("Got fatal error 1236 from master when reading data from binary log: 'Client "
           "requested master to start replication from position > file size'")
    o = judge(edited(HEALTHY, io_running="No", seconds_behind=None, last_io_errno=1236,
                     last_io_error=msg), MYSQL57)
    assert "cannot send from the position the replica asks for" in o.cause
    assert "Master_Log_File and Read_Master_Log_Pos with SHOW BINARY LOGS" in o.next_step


def test_1593_equal_server_ids() -> None:
    msg = ("Fatal error: The slave I/O thread stops because master and slave have equal "
           "MySQL server ids; these ids must be different for replication to work")
    o = judge(edited(HEALTHY, io_running="No", seconds_behind=None, last_io_errno=1593,
                     last_io_error=msg), MYSQL57)
    assert "same server_id" in o.cause and "auto.cnf" in o.next_step


def test_io_thread_stopped_by_hand_says_so() -> None:
    o = judge(edited(HEALTHY, io_running="No", seconds_behind=None), MYSQL8)
    assert o.title == "IO thread not running (source 127.0.0.1:40303)"
    assert "stopped without an error: STOP REPLICA IO_THREAD" in o.cause
    assert o.next_step == ("If nobody stopped it on purpose (a maintenance): START REPLICA "
                           "IO_THREAD.")


@pytest.mark.parametrize(("server", "word"), [(MARIADB, "SLAVE"), (MYSQL8, "REPLICA")])
def test_both_threads_stopped_by_hand_is_one_stop(server: dict[str, str], word: str) -> None:
    """STOP SLAVE: both threads down, no error: one cause, START for both."""
    o = judge(edited(SQL_STOPPED, io_running="No"), server)
    assert "IO thread not running" in o.title and "SQL thread stopped" in o.title
    assert o.cause.startswith(f"Replication was stopped without an error: STOP {word} by "
                              "hand")
    assert "relay logs hold" in o.cause
    assert o.next_step == (f"If nobody stopped it on purpose (a backup, a maintenance): "
                           f"START {word}; watch the lag come down.")


def test_an_io_error_and_a_stopped_applier_keep_both_causes() -> None:
    o = judge(edited(SQL_STOPPED, io_running="No", last_io_errno=1236,
                     last_io_error=PURGED_FILE))
    assert "purged" in o.cause and "stopped without an error: by hand" in o.cause
    assert o.next_step.startswith("Re-seed the replica")


# --- lag --------------------------------------------------------------------------------


def lag_ticks(values: list[int]) -> list[Tick]:
    return [tick(i, primary=node("primary", mysql=MysqlSample(**MARIADB)),  # type: ignore[arg-type]
                 replica=node("replica", mysql=MysqlSample(
                     replication=[edited(HEALTHY, seconds_behind=v)], **MARIADB)))  # type: ignore[arg-type]
            for i, v in enumerate(values)]


def test_lag_falling_is_catching_up_with_the_time_to_go() -> None:
    (o,) = observe(CHECK, lag_ticks(list(range(200, 170, -1))))  # 60 s/min down, 171 s
    assert "falling 60.0 s/min (catching up)" in o.title
    assert "it is catching up, about 3 min to go at this rate" in o.cause
    assert "slower than the primary writes" not in o.cause
    assert o.next_step.startswith("Nothing to do while it keeps falling")


def test_lag_growing_is_the_applier_too_slow() -> None:
    (o,) = observe(CHECK, lag_ticks(list(range(26))))
    assert "growing" in o.title
    assert o.cause.startswith("The applier executes slower than the primary writes")
    assert o.next_step.startswith("SHOW PROCESSLIST on the replica")


def test_lag_null_with_both_threads_running_points_at_the_measured_lag() -> None:
    o = judge(edited(HEALTHY, seconds_behind=None), MYSQL8)
    assert o.title == "lag unknown (Seconds_Behind_Source NULL) with both threads running"
    assert "pair_lag" in o.next_step and "Replica_IO_State" in o.next_step
