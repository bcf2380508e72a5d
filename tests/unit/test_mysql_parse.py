"""MySQL/MariaDB parsing on real captured output (tests/fixtures/mysql/, origins in
its README.md) and on garbage: a result or ParseError, never another exception."""

from __future__ import annotations

import contextlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replmon.errors import ParseError
from replmon.model.mysql import (
    COUNTER_FIELDS,
    MysqlSample,
    ReplicaChannel,
    clean_version,
    replication_words,
    version_tuple,
)
from replmon.sources.mysql_parse import (
    STATUS_NAMES,
    build_mysql_sample,
    detect_flavour,
    parse_global_status,
    parse_variables,
)
from replmon.sources.mysql_replica_parse import (
    parse_applier_workers,
    parse_replica_status,
    replica_status_query,
    with_applier,
)
from replmon.sources.mysql_values import parse_int, parse_number

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mysql"


def _load_helper() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mysql_rows", FIXTURES / "mysql_rows.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rows = _load_helper()

MARIADB_VERSION = "5.5.5-10.11.19-MariaDB-0+deb12u1-log"  # as pymysql's get_server_info() says


def sample(status: str, variables: str | None = None, replica: str | None = None) -> MysqlSample:
    """A MysqlSample built from fixture files, the way MysqlSource builds one."""
    version = MARIADB_VERSION if status.startswith("mariadb") else "8.0.30"
    flavour = detect_flavour(version)
    return build_mysql_sample(
        version=version,
        status=parse_global_status(rows.status_rows(status)),
        variables=parse_variables(rows.status_rows(variables)) if variables else {},
        replication=parse_replica_status(rows.dict_rows(replica, typed=True), flavour)
        if replica
        else (),
    )


# --- SHOW GLOBAL STATUS -----------------------------------------------------------


def test_mariadb_10_11_status_exact_values() -> None:
    s = sample("mariadb10.11_global_status.tsv", "mariadb10.11_global_variables.tsv")
    assert (s.flavour, s.version) == ("mariadb", "10.11.19-MariaDB-0+deb12u1-log")
    assert (s.uptime_s, s.uptime_since_flush_s) == (5322, 5322)
    c = s.counters
    assert (c["Questions"], c["Queries"], c["Com_select"], c["Connections"]) == (15, 15, 3, 10)
    assert (c["Bytes_received"], c["Bytes_sent"]) == (1705, 3952)
    assert (c["Innodb_buffer_pool_read_requests"], c["Innodb_buffer_pool_reads"]) == (1227, 170)
    assert (c["Rpl_semi_sync_master_yes_tx"], c["Rpl_semi_sync_master_no_tx"]) == (0, 0)
    # MariaDB 10.11 has no Innodb_rows_* and no Innodb_os_log_fsyncs at all
    assert not any(n.startswith("Innodb_rows_") for n in c)
    assert "Innodb_os_log_fsyncs" not in c
    assert set(c) <= set(COUNTER_FIELDS)
    g = s.gauges
    assert (g["Threads_running"], g["Threads_connected"], g["Threads_cached"]) == (1, 1, 0)
    assert g["Innodb_buffer_pool_pages_total"] == 8112
    assert (g["Innodb_buffer_pool_pages_free"], g["Innodb_buffer_pool_pages_dirty"]) == (7811, 12)
    assert (g["Innodb_buffer_pool_pages_data"], g["Open_tables"], g["Open_files"]) == (301, 10, 23)
    assert g["Rpl_semi_sync_master_clients"] == 0


def test_mariadb_10_11_uses_handler_row_counters() -> None:
    s = sample("mariadb10.11_global_status.tsv")
    assert s.row_counters == "handler"
    assert (s.rows_inserted, s.rows_updated, s.rows_deleted, s.rows_read) == (1, 2, 0, 9)


def test_mysql_8_0_30_status_exact_values() -> None:
    s = sample("mysql8.0.30_global_status.txt")
    assert (s.flavour, s.uptime_s, s.uptime_since_flush_s) == ("mysql", 152, 152)
    c = s.counters
    assert (c["Questions"], c["Queries"], c["Com_select"], c["Connections"]) == (15, 27, 2, 25)
    assert (c["Handler_write"], c["Handler_update"], c["Handler_delete"]) == (1966, 373, 8)
    assert (c["Innodb_buffer_pool_read_requests"], c["Innodb_buffer_pool_reads"]) == (16723, 878)
    assert (c["Innodb_data_read"], c["Innodb_data_written"]) == (14453760, 6128128)
    assert (c["Innodb_os_log_written"], c["Innodb_os_log_fsyncs"]) == (147968, 69)
    assert (c["Bytes_received"], c["Bytes_sent"], c["Threads_created"]) == (5584, 70700, 2)
    assert s.gauges["Innodb_buffer_pool_pages_total"] == 8192
    assert (s.gauges["Threads_running"], s.gauges["Open_tables"]) == (2, 127)
    # 8.0 has the InnoDB row counters (system-schema rows are counted apart)
    assert s.row_counters == "innodb"
    assert (s.rows_inserted, s.rows_updated, s.rows_deleted, s.rows_read) == (0, 0, 0, 0)
    assert "Rows_read" not in c
    assert s.semi_sync.source_active is None  # no semi-sync plugin loaded


def test_status_accepts_dict_rows_and_bytes() -> None:
    dict_rows = [
        {"Variable_name": b"Uptime", "Value": b"7"},
        {"Variable_name": "Com_update", "Value": "3"},
    ]
    st_ = parse_global_status(dict_rows)
    assert (st_.uptime_s, st_.counters, st_.row_counters) == (7, {"Com_update": 3}, None)


@pytest.mark.parametrize(
    ("rows_", "match"),
    [
        ([], "no Uptime"),
        ([("Uptime", "12"), ("Com_update", "12abc")], "Com_update"),
        ([("Uptime", "12"), ("Com_update", "-1")], "negative"),
        ([("Uptime", None)], "NULL"),
        ([("Uptime", "1"), ("Threads_running", "lots")], "Threads_running"),
        ([("Uptime", "1"), ("Rpl_semi_sync_master_status", "MAYBE")], "ON/OFF"),
        ([("Uptime",)], "name, value"),
        (["Uptime 1"], "name, value"),
        ([{"name": "Uptime"}], "Variable_name"),
    ],
)
def test_status_garbage_is_a_parse_error(rows_: list[Any], match: str) -> None:
    with pytest.raises(ParseError, match=match):
        parse_global_status(rows_)


def test_number_parsing_edges() -> None:
    assert parse_int("x", " 42 ") == 42
    assert parse_int("x", "NULL", nullable=True) is None
    assert parse_number("x", "30.000") == 30.0
    for junk in ("1e999", "nan", "inf", "١٢", "1_000", "0x10", "", " "):
        with pytest.raises(ParseError):
            parse_number("x", junk)
    with pytest.raises(ParseError):
        parse_int("x", True)
    with pytest.raises(ParseError):
        parse_int("x", "9" * 5000)  # Python's int() would raise ValueError here


# --- SHOW GLOBAL VARIABLES ---------------------------------------------------------


def test_variables_subset_and_semi_sync_flags() -> None:
    v = parse_variables(rows.status_rows("mariadb10.11_lab_replica_variables.tsv"))
    assert v["read_only"] == "ON"
    assert (v["server_id"], v["binlog_format"]) == ("2", "ROW")
    assert (v["log_bin"], v["sync_binlog"]) == ("ON", "0")
    assert (v["auto_increment_increment"], v["auto_increment_offset"]) == ("1", "1")
    assert v["innodb_flush_log_at_trx_commit"] == "2"
    assert v["version"] == "10.11.19-MariaDB-0+deb12u1-log"
    assert "gtid_slave_pos" not in v  # captured, but not in replmon's subset
    s = sample("mariadb10.11_lab_replica_status_b.tsv", "mariadb10.11_lab_replica_variables.tsv")
    assert s.semi_sync.model_dump() == {
        "source_enabled": False, "source_active": False, "source_clients": 0,
        "replica_enabled": False, "replica_active": False,
    }
    primary = parse_variables(rows.status_rows("mariadb10.11_lab_primary_variables.tsv"))
    assert (primary["read_only"], primary["server_id"]) == ("OFF", "1")


# --- replication status -----------------------------------------------------------

HEALTHY_MARIADB = "mariadb10.11_lab_show_all_slaves_status.txt"
HEALTHY_MYSQL = "mysql8.0_show_replica_status.txt"


@pytest.mark.parametrize("typed", [False, True])
def test_mariadb_all_slaves_status_exact(typed: bool) -> None:
    (ch,) = parse_replica_status(rows.dict_rows(HEALTHY_MARIADB, typed=typed), "mariadb")
    assert ch == ReplicaChannel(
        name="", io_running="Yes", sql_running=True, seconds_behind=0,
        source_host="127.0.0.1", source_port=40303, source_server_id=1,
        source_log_file="binlog.000001", read_source_log_pos=73104,
        relay_source_log_file="binlog.000001", exec_source_log_pos=73104,
        using_gtid=True, gtid_retrieved="0-1-307", gtid_executed="0-1-307", sql_delay=0,
        io_state="Waiting for master to send event",
        sql_state="Slave has read all relay log; waiting for more updates",
        # #19: the columns a DBA reads first
        gtid_executed_server_wide=True, relay_log_space=73709, retried_transactions=0,
        received_heartbeats=4, heartbeat_period=30.0,
    )
    assert ch.applier_backlog_bytes == 0


@pytest.mark.parametrize("typed", [False, True])
def test_mysql_8_replica_status_exact(typed: bool) -> None:
    (ch,) = parse_replica_status(rows.dict_rows(HEALTHY_MYSQL, typed=typed), "mysql")
    uuid = "73f86016-978b-11ee-ade5-8d2a2a562feb"
    assert ch == ReplicaChannel(
        name="", io_running="Yes", sql_running=True, seconds_behind=0,
        source_host="127.0.0.1", source_port=13000, source_server_id=1,
        source_log_file="master-bin.000001", read_source_log_pos=927,
        relay_source_log_file="master-bin.000001", exec_source_log_pos=927,
        using_gtid=True, gtid_retrieved=f"{uuid}:1-3", gtid_executed=f"{uuid}:1-3", sql_delay=0,
        io_state="Waiting for source to send event",
        sql_state="Replica has read all relay log; waiting for more updates",
        relay_log_space=1355, source_uuid=uuid,
    )


def test_the_texts_of_two_readings_are_one_object() -> None:
    """A replica answers the same host, binlog files, thread states and (idle) GTID sets
    tick after tick: one string each, not one per tick, since the engine keeps a tick's
    replication part 300 s (#56). Two readings, each of its own copy of the capture."""
    a, b = (parse_replica_status(rows.dict_rows(HEALTHY_MYSQL, typed=True), "mysql")[0]
            for _ in range(2))
    for name in ("source_host", "source_log_file", "relay_source_log_file", "io_state",
                 "sql_state", "source_uuid", "gtid_retrieved", "gtid_executed"):
        assert getattr(a, name), name
        assert getattr(a, name) is getattr(b, name), name


APPLIER_FIELDS = ("worker_errno", "worker_error", "worker_error_time", "worker_id",
                  "failed_gtid", "applying_age_s", "applied_latency_s")


def test_mariadb_and_mysql_dialects_fill_the_same_fields() -> None:
    """Every field is filled from both dialects (none left at its default by a missing
    column): the normalised schema really is one schema."""
    maria = parse_replica_status(rows.dict_rows(HEALTHY_MARIADB), "mariadb")[0]
    mysql = parse_replica_status(rows.dict_rows(HEALTHY_MYSQL), "mysql")[0]
    for field in ("io_running", "sql_running", "seconds_behind", "last_io_errno", "last_sql_errno"):
        assert getattr(maria, field) == getattr(mysql, field), field
    defaults = ReplicaChannel()
    for ch in (maria, mysql):
        unset = {
            f for f in ReplicaChannel.model_fields
            if getattr(ch, f) == getattr(defaults, f) and f not in ("name", "last_io_errno",
            "last_io_error", "last_sql_errno", "last_sql_error", "sql_delay",
            # healthy: no error time, no delay waiting, live lag; one dialect only:
            "last_io_error_time", "last_sql_error_time", "sql_remaining_delay",
            "seconds_behind_stale", "gtid_executed_server_wide", "source_uuid",
            "retried_transactions", "received_heartbeats", "heartbeat_period",
            # MariaDB 11.6+ only (the fixture is 10.11's): test_real_outputs reads them
            "source_event_time", "replica_event_time", "event_time_diff_s",
            # not in SHOW REPLICA STATUS: MySQL's performance_schema (with_applier), the
            # receiver's processlist time (MysqlSource._connected)
            "connected_s", *APPLIER_FIELDS)
        }
        assert unset == set(), unset


def test_sql_thread_stopped_keeps_null_lag_as_none() -> None:
    (ch,) = parse_replica_status(
        rows.dict_rows("mariadb10.11_lab_show_all_slaves_status_sql_stopped.txt", typed=True),
        "mariadb",
    )
    assert (ch.io_running, ch.sql_running, ch.seconds_behind) == ("Yes", False, None)
    assert (ch.read_source_log_pos, ch.exec_source_log_pos) == (73394, 73104)
    assert ch.applier_backlog_bytes == 290
    assert (ch.gtid_retrieved, ch.gtid_executed, ch.sql_state) == ("0-1-308", "0-1-307", "")


def test_io_thread_preparing_is_connecting() -> None:
    """MariaDB 10.11 right after START SLAVE (seen in the lab's switchovers): the real
    capture with its IO thread's word edited to Preparing."""
    row = rows.dict_rows("mariadb10.11_lab_show_all_slaves_status_io_connecting.txt")[0]
    row["Slave_IO_Running"] = "Preparing"
    (ch,) = parse_replica_status([row], "mariadb")
    assert ch.io_running == "Connecting"


def test_io_thread_connecting_with_error() -> None:
    (ch,) = parse_replica_status(
        rows.dict_rows("mariadb10.11_lab_show_all_slaves_status_io_connecting.txt"), "mariadb"
    )
    assert (ch.io_running, ch.sql_running, ch.seconds_behind) == ("Connecting", True, None)
    assert ch.last_io_errno == 2003
    assert ch.last_io_error.startswith("error reconnecting to master 'repl@127.0.0.1:40303'")
    assert ch.io_state == "Reconnecting after a failed master event read"


def test_lag_printed_while_the_receiver_reconnects_is_stale_not_live() -> None:
    """#19: MySQL goes on printing the last Seconds_Behind while its receiver is
    Connecting (a published case showed 156 s). The real MySQL 8.0 capture with its IO
    state edited to Connecting and its lag to 156: live lag unknown, 156 kept as stale."""
    row = dict(rows.dict_rows(HEALTHY_MYSQL)[0])
    assert row["Replica_IO_Running"] == "Yes"
    row.update({"Replica_IO_Running": "Connecting", "Seconds_Behind_Source": "156",
                "Last_IO_Errno": "2005"})
    (ch,) = parse_replica_status([row], "mysql")
    assert (ch.seconds_behind, ch.seconds_behind_stale) == (None, 156)


def test_executed_past_read_is_unknown_backlog_not_zero() -> None:
    row = dict(rows.dict_rows(HEALTHY_MARIADB)[0])
    row["Exec_Master_Log_Pos"] = str(int(row["Read_Master_Log_Pos"]) + 500)
    (ch,) = parse_replica_status([row], "mariadb")
    assert ch.applier_backlog_bytes is None


def test_mariadb_show_slave_status_without_all() -> None:
    capture = rows.dict_rows("mariadb10.11_lab_show_slave_status.txt")
    (ch,) = parse_replica_status(capture, "mariadb")
    assert (ch.name, ch.io_running, ch.seconds_behind) == ("", "Yes", 0)
    assert ch.gtid_retrieved == "0-1-307"
    assert ch.gtid_executed == ""  # Gtid_Slave_Pos is only in SHOW ALL SLAVES STATUS


def test_multi_source_mysql_old_names_and_mariadb() -> None:
    mysql = parse_replica_status(
        rows.dict_rows("mysql8.0.30_show_slave_status_multi_source.txt", typed=True), "mysql"
    )
    assert [(c.name, c.source_host, c.read_source_log_pos, c.source_server_id) for c in mysql] == [
        ("master1", "mysql-master1", 975, 1), ("master2", "mysql-master2", 974, 2),
    ]
    assert all(c.using_gtid and c.seconds_behind == 0 for c in mysql)
    assert mysql[0].gtid_executed == (
        "61221e31-1ef3-11ed-a56a-0242ac120002:1-3,6151d979-1ef3-11ed-a509-0242ac120003:1-3"
    )
    maria = parse_replica_status(
        rows.dict_rows("mariadb10.8.4_show_all_slaves_status_multi_source.txt"), "mariadb"
    )
    assert [(c.name, c.using_gtid, c.source_server_id, c.gtid_executed) for c in maria] == [
        ("Master1", False, 765, "0-308-9"), ("Master2", False, 765, "0-308-9"),
    ]


def test_mysql_gtid_set_newlines_are_removed() -> None:
    row = dict(rows.dict_rows(HEALTHY_MYSQL)[0])
    row["Executed_Gtid_Set"] = "a:1-3,\nb:1-9"
    assert parse_replica_status([row], "mysql")[0].gtid_executed == "a:1-3,b:1-9"


def test_not_a_replica_is_empty() -> None:
    assert parse_replica_status([], "mariadb") == []


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"Slave_IO_Running": "Maybe"}, "Yes/No/Connecting"),
        ({"Slave_SQL_Running": None}, "ON/OFF"),
        ({"Seconds_Behind_Master": "soon"}, "Seconds_Behind_Master"),
        ({"Read_Master_Log_Pos": "12.5"}, "Read_Master_Log_Pos"),
        ({"Using_Gtid": "Sometimes"}, "Using_Gtid"),
    ],
)
def test_replica_status_garbage_is_a_parse_error(change: dict[str, Any], match: str) -> None:
    row = {**rows.dict_rows(HEALTHY_MARIADB)[0], **change}
    with pytest.raises(ParseError, match=match):
        parse_replica_status([row], "mariadb")


def test_replica_row_without_thread_columns_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="IO_Running"):
        parse_replica_status([{"Master_Host": "x"}], "mysql")
    with pytest.raises(ParseError, match="dict rows"):
        parse_replica_status([("a", "b")], "mysql")


# --- version / dialect --------------------------------------------------------------


def test_versions_and_statement_choice() -> None:
    assert clean_version(MARIADB_VERSION) == "10.11.19-MariaDB-0+deb12u1-log"
    assert detect_flavour(MARIADB_VERSION) == "mariadb"
    assert detect_flavour("8.0.30") == "mysql"
    assert version_tuple(MARIADB_VERSION) == (10, 11, 19)
    assert version_tuple("8.0") == (8, 0, 0)
    assert version_tuple("junk") == (0, 0, 0)
    assert replica_status_query("mariadb", "10.11.19-MariaDB") == "SHOW ALL SLAVES STATUS"
    assert replica_status_query("mysql", "8.0.22") == "SHOW REPLICA STATUS"
    assert replica_status_query("mysql", "8.4.0") == "SHOW REPLICA STATUS"
    assert replica_status_query("mysql", "8.0.21") == "SHOW SLAVE STATUS"
    assert replica_status_query("mysql", "5.7.44-log") == "SHOW SLAVE STATUS"


def test_status_query_names_cover_every_kept_field() -> None:
    wanted = {"Uptime", "Uptime_since_flush_status", "Rpl_semi_sync_master_status"}
    assert wanted <= set(STATUS_NAMES)
    assert set(COUNTER_FIELDS) <= set(STATUS_NAMES)


# --- property tests: junk values give a result or ParseError, never another exception --

JUNK = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.binary(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(["NULL", "ON", "off", "Yes", "Connecting", "1e999", "  7 ", "-0", "١"]),
)
STATUS_FIXTURES = ["mariadb10.11_global_status.tsv", "mysql8.0.30_global_status.txt"]
REPLICA_FIXTURES = [
    HEALTHY_MARIADB, HEALTHY_MYSQL, "mariadb10.8.4_show_all_slaves_status_multi_source.txt",
]


@settings(max_examples=300, deadline=None)
@given(
    fixture=st.sampled_from(STATUS_FIXTURES),
    picks=st.lists(st.tuples(st.sampled_from(STATUS_NAMES), JUNK), max_size=6),
)
def test_status_with_junk_values_parses_or_raises_parse_error(
    fixture: str, picks: list[tuple[str, Any]]
) -> None:
    base = dict(rows.status_rows(fixture))
    base.update(dict(picks))
    with contextlib.suppress(ParseError):
        parse_global_status(list(base.items()))


@settings(max_examples=300, deadline=None)
@given(
    fixture=st.sampled_from(REPLICA_FIXTURES),
    picks=st.lists(st.tuples(st.integers(min_value=0, max_value=80), JUNK), max_size=6),
    flavour=st.sampled_from(["mariadb", "mysql"]),
)
def test_replica_status_with_junk_values_parses_or_raises_parse_error(
    fixture: str, picks: list[tuple[int, Any]], flavour: str
) -> None:
    row = dict(rows.dict_rows(fixture)[0])
    keys = list(row)
    for i, value in picks:
        row[keys[i % len(keys)]] = value
    with contextlib.suppress(ParseError):
        parse_replica_status([row], flavour)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(JUNK, JUNK), JUNK, st.dictionaries(st.text(max_size=5), JUNK, max_size=3)
        ),
        max_size=5,
    )
)
def test_arbitrary_rows_parse_or_raise_parse_error(junk_rows: list[Any]) -> None:
    for fn in (parse_global_status, parse_variables):
        with contextlib.suppress(ParseError):
            fn(junk_rows)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("261126 05:16:36", "2026-11-26 05:16:36"),  # MySQL's YYMMDD hh:mm:ss
        ("", ""),
        ("NULL", ""),
        ("yesterday", "yesterday"),  # not MySQL's form: kept as the server said it
    ],
)
def test_applier_error_time_reads_as_a_date(raw: str, shown: str) -> None:
    row = dict(rows.dict_rows(HEALTHY_MYSQL, typed=False)[0])
    row["Last_SQL_Error_Timestamp"] = raw
    row["Last_IO_Error_Timestamp"] = raw
    (ch,) = parse_replica_status([row], "mysql")
    assert (ch.last_sql_error_time, ch.last_io_error_time) == (shown, shown)


@pytest.mark.parametrize(
    ("flavour", "version", "lag", "show", "reset"),
    [
        ("mysql", "9.7.4-2", "Seconds_Behind_Source", "SHOW REPLICA STATUS",
         "RESET BINARY LOGS AND GTIDS"),
        ("mysql", "8.0.22", "Seconds_Behind_Source", "SHOW REPLICA STATUS", "RESET MASTER"),
        ("mysql", "8.0.21", "Seconds_Behind_Master", "SHOW SLAVE STATUS", "RESET MASTER"),
        ("mariadb", "11.8.3-MariaDB", "Seconds_Behind_Master", "SHOW SLAVE STATUS",
         "RESET MASTER"),
    ],
)
def test_replication_words_follow_the_server(flavour: str, version: str, lag: str, show: str,
                                             reset: str) -> None:
    w = replication_words(flavour, version)  # type: ignore[arg-type]
    assert (w.lag, w.show, w.reset_binlogs) == (lag, show, reset)


# Captured on the lab's mysql-9.7 (Oracle MySQL 9.7.4-2, Debian sid) on 2026-11-26: the
# APPLIER_WORKERS_QUERY rows after a duplicate key stopped worker 1 (four workers).
_UUID = "3b770c16-e9bc-11f1-acd6-02fc00000001"
_DUP_MESSAGE = (
    f"Worker 1 failed executing transaction '{_UUID}:8' at source log binlog.000001, "
    "end_log_pos 2210; Could not execute Write_rows event on table lab.t; Duplicate entry "
    "'900001' for key 't.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; "
    "the event's source log binlog.000001, end_log_pos 2210")
MYSQL97_WORKERS = [
    ("", 1, 1062, _DUP_MESSAGE, "2026-11-26 17:10:11", f"{_UUID}:8", "0.412000", "0.105046",
     "2026-11-26 17:10:11.204699"),
    ("", 2, 0, "", None, "", None, "0.108227", "2026-11-26 17:10:11.189096"),
    ("", 3, 0, "", None, "", None, None, "0000-00-00 00:00:00.000000"),
    ("", 4, 0, "", None, "", None, None, "0000-00-00 00:00:00.000000"),
]


def test_applier_workers_give_the_failing_workers_own_error() -> None:
    (name, d), = parse_applier_workers(MYSQL97_WORKERS).items()
    assert name == ""
    assert (d.worker_id, d.worker_errno, d.worker_error_time, d.failed_gtid) == (
        1, 1062, "2026-11-26 17:10:11", f"{_UUID}:8")
    assert d.worker_error == ("Could not execute Write_rows event on table lab.t; Duplicate "
                              "entry '900001' for key 't.PRIMARY', Error_code: 1062; handler "
                              "error HA_ERR_FOUND_DUPP_KEY")
    assert d.applying_age_s == 0.412  # the failed transaction is still "applying"
    assert d.applied_latency_s == 0.105  # the newest applied (worker 1's, 17:10:11.204699)


def test_applier_detail_joins_its_channel_only_while_the_error_stands() -> None:
    details = parse_applier_workers(MYSQL97_WORKERS)
    stopped = ReplicaChannel(name="", sql_running=False, last_sql_errno=1062)
    running = ReplicaChannel(name="", sql_running=True, last_sql_errno=0)
    other = ReplicaChannel(name="second")
    a, b, c = with_applier([stopped, running, other], details)
    assert (a.worker_errno, a.failed_gtid) == (1062, f"{_UUID}:8")
    assert (b.worker_errno, b.failed_gtid, b.applied_latency_s) == (0, "", 0.105)
    assert c == other  # no row of its own: unchanged


def test_idle_workers_are_an_applying_age_of_zero_and_garbage_is_a_parse_error() -> None:
    (d,) = parse_applier_workers([r for r in MYSQL97_WORKERS if r[2] == 0]).values()
    assert (d.worker_errno, d.applying_age_s, d.applied_latency_s) == (0, 0.0, 0.108)
    with pytest.raises(ParseError, match="applier workers"):
        parse_applier_workers([("", 1, 0, "", None, "", "soon", None, "")])
    with pytest.raises(ParseError, match="expected 9 columns"):
        parse_applier_workers([("", 1)])
