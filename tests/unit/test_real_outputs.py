"""Outputs other people published (tests/fixtures/real/, origins in its README.md), each
fed to the replmon parser that reads it, with the fields a DBA reads first asserted from
TABLE below (issue #30 item 4).

Every expected value was read off the file itself, by eye (sizes printed in MiB by
/proc/drbd are written as ``N * 1024`` KiB; summed Redis keyspaces as sums), never pasted
from the parser's output, so a row fails when the parser misreads its file. A row where
replmon misreads a real output is a strict xfail naming the field: the other fields of
that row must still match (a plain assertion), and the misread field alone raises
``Misread``, the only failure the xfail accepts.

Outputs that are not what the command prints (re-wrapped or indented by their authors)
are either left out of the corpus or must be refused with ParseError (``rejected``).
Files no replmon parser reads yet (performance_schema tables, drbdadm status, events2)
are kept in the corpus and listed in EXCLUDED; ``test_corpus_and_table_agree`` keeps the
folder, the table, EXCLUDED and the README in step.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest

from replmon.errors import ParseError
from replmon.model.drbd import DrbdSample
from replmon.sources.drbd_parse import parse_drbdsetup_json, parse_proc_drbd
from replmon.sources.mysql_binlog_parse import parse_binlog_status
from replmon.sources.mysql_replica_parse import parse_replica_status
from replmon.sources.redis_parse import build_redis_sample, parse_info

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = FIXTURES / "real"


def _load_mysql_rows() -> ModuleType:
    """tests/fixtures/mysql/mysql_rows.py: the mysql client's \\G and +---+ text as the
    rows pymysql returns."""
    spec = importlib.util.spec_from_file_location(
        "mysql_rows", FIXTURES / "mysql" / "mysql_rows.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mysql_rows = _load_mysql_rows()

Kind = Literal["replica", "binlog", "redis", "redis-section", "proc", "json"]
Facts = tuple[dict[str, Any], list[dict[str, Any]]]
"""What a reader hands the comparison: the output's own fields and one dict per item
(replication channel, /proc/drbd minor, DRBD 9 peer device, Redis replica line)."""


class Misread(AssertionError):
    """A field replmon reads wrong on a real output (the only failure a row's xfail accepts)."""


class Starts:
    """Equal to any text that starts with ``prefix``: a long error message whose start is
    what a DBA reads, or a multi-line GTID set (mysql_rows.read_vertical does not join
    the continuation lines the client prints, so only the first line is asserted)."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.startswith(self.prefix)

    def __repr__(self) -> str:
        return f"Starts({self.prefix!r})"


@dataclass(frozen=True)
class Row:
    """One published output and what its DBA-facing fields must read."""

    path: str
    """Relative to tests/fixtures: ``real/...`` for the corpus, ``mysql/...`` for an
    earlier fixture the corpus shares (same bytes; referenced, not copied)."""
    kind: Kind
    top: Mapping[str, Any] = field(default_factory=dict)
    items: Sequence[Mapping[str, Any]] = ()
    flavour: Literal["mysql", "mariadb"] = "mysql"
    version: str = ""
    """redis-section only: the redis_version that an INFO REPLICATION excerpt lacks."""
    rejected: str = ""
    """When set, the parser must refuse the file with a ParseError matching this."""
    misread: tuple[str, ...] = ()
    """Fields replmon is known to misread here (the row is then a strict xfail)."""


# --- readers: one per kind, each returning Facts ---------------------------------------


def _text(row: Row) -> str:
    return (FIXTURES / row.path).read_bytes().decode("utf-8")  # CRLF kept as sent


def _replica(row: Row) -> Facts:
    rows = mysql_rows.dict_rows(str(FIXTURES / row.path), typed=True)  # as pymysql types them
    channels = parse_replica_status(rows, row.flavour)
    return {}, [{**c.model_dump(), "applier_backlog_bytes": c.applier_backlog_bytes}
                for c in channels]


def _binlog(row: Row) -> Facts:
    (only,) = mysql_rows.dict_rows(str(FIXTURES / row.path), typed=True)
    file, position = parse_binlog_status(tuple(only.values()))  # the default cursor's tuple
    return {"file": file, "position": position}, []


def _redis(row: Row) -> Facts:
    info = parse_info(_text(row))
    if row.kind == "redis-section":
        with pytest.raises(ParseError, match="redis_version is missing"):
            build_redis_sample(info)  # replmon reads the whole INFO, never a section alone
        info = {"redis_version": row.version, **info}
    s = build_redis_sample(info)
    top = {k: v for k, v in s.model_dump().items() if k not in ("counters", "replicas")}
    return {**top, **s.counters}, [r.model_dump() for r in s.replicas]


def _drbd_items(sample: DrbdSample) -> list[dict[str, Any]]:
    """One flat dict per peer device, with its resource, device and connection."""
    out = []
    for r in sample.resources:
        for c in r.connections:
            for p in c.peer_devices:
                (d,) = [d for d in r.devices if d.volume == p.volume]
                rs = p.resync
                out.append({
                    "resource": r.name, "node_id": r.node_id, "role": r.role,
                    "suspended": r.suspended, "wo": r.write_ordering,
                    "minor": d.minor, "disk": d.disk_state, "size_kib": d.size_kib,
                    "quorum": d.quorum, "dw": d.written_kib, "dr": d.read_kib,
                    "lo": d.lower_pending, "ap": d.upper_pending, "al_suspended": d.al_suspended,
                    "peer": c.peer, "peer_node_id": c.peer_node_id, "peer_role": c.peer_role,
                    "cs": c.cs, "conn": c.connection_state, "protocol": c.protocol,
                    "flags": c.io_flags, "volume": p.volume, "repl": p.replication_state,
                    "peer_disk": p.peer_disk_state, "ns": p.sent_kib, "nr": p.received_kib,
                    "oos": p.out_of_sync_kib, "pe": p.pending, "ua": p.unacked, "ep": p.epochs,
                    "in_sync_pct": p.percent_in_sync, "resync": rs is not None,
                    "sync_pct": rs and rs.percent_done, "sync_left_kib": rs and rs.left_kib,
                    "sync_total_kib": rs and rs.total_kib, "eta_s": rs and rs.eta_s,
                    "speed_kib_s": rs and rs.speed_kib_s,
                    "avg_speed_kib_s": rs and rs.avg_speed_kib_s,
                    "stalled": rs and rs.stalled,
                })
    return out


def _proc(row: Row) -> Facts:
    s = parse_proc_drbd(_text(row))
    return {"version": s.version, "flavour": s.flavour, "notes": s.notes}, _drbd_items(s)


def _json(row: Row) -> Facts:
    s = parse_drbdsetup_json(_text(row))
    return {"flavour": s.flavour}, _drbd_items(s)


READERS: dict[Kind, Callable[[Row], Facts]] = {
    "replica": _replica, "binlog": _binlog, "redis": _redis, "redis-section": _redis,
    "proc": _proc, "json": _json,
}


# --- the table ----------------------------------------------------------------------

MS = "real/mysql-replica-status/"
MA = "real/mariadb/"
RE = "real/redis/"
DR = "real/drbd/"
ZEROS = "0" * 40
"""master_replid2 of a server never promoted."""


def case(id_: str, row: Row, *, xfail: str = "",
         raises: type[Exception] = Misread) -> Any:  # pytest's ParameterSet is not public
    """A TABLE entry; ``xfail`` (the reason) marks a real output replmon misreads."""
    marks = [pytest.mark.xfail(strict=True, raises=raises, reason=xfail)] if xfail else []
    return pytest.param(row, id=id_, marks=marks)


def ch(**fields: Any) -> dict[str, Any]:
    """Expected fields of one replication channel, healthy unless a field says otherwise."""
    return {"io_running": "Yes", "sql_running": True, "last_io_errno": 0,
            "last_sql_errno": 0, "last_sql_error": "", **fields}


def minor(n: int, cs: str, ro: str, ds: str, proto: str | None, flags: str,
          **fields: Any) -> dict[str, Any]:
    """Expected fields of one /proc/drbd minor, written as /proc/drbd prints them."""
    role, peer_role = ro.split("/")
    disk, peer_disk = ds.split("/")
    return {"resource": str(n), "minor": n, "cs": cs, "role": role, "peer_role": peer_role,
            "disk": disk, "peer_disk": peer_disk, "protocol": proto, "flags": flags, **fields}


NO_RESYNC = {"resync": False, "sync_pct": None}
UUID_57 = "7664fad8-49fd-11e8-a546-4201c0a8010a"
UUID_834 = "bd4b724b-ab29-11ee-826f-000c294bd026"
ND1 = "61221e31-1ef3-11ed-a56a-0242ac120002"
ND2 = "6151d979-1ef3-11ed-a509-0242ac120003"
SLAVE_IDLE = "Slave has read all relay log; waiting for more updates"
TABLE = [
    # --- MySQL SHOW SLAVE STATUS / SHOW REPLICA STATUS ------------------------------
    case("mysql5.7-manual-gtid-tls", Row(MS + "mysqldocs_5.7_show_slave_status_gtid_tls.txt",
         "replica", items=[ch(
             name="", seconds_behind=0, source_host="localhost", source_port=13000,
             source_server_id=1, source_uuid="3e11fa47-71ca-11e1-9e33-c80aa9429562",
             source_log_file="source-bin.000002", read_source_log_pos=1307,
             relay_source_log_file="source-bin.000002", exec_source_log_pos=1307,
             applier_backlog_bytes=0, relay_log_space=1858, using_gtid=True,
             gtid_retrieved="3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5",
             gtid_executed="3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5",
             sql_delay=0, sql_remaining_delay=None,
             io_state="Waiting for master to send event",
             sql_state="Reading event from the relay log")])),
    case("mysql5.7-delayed-43200-caught-up", Row(
         MS + "dbanote_mysql5.7_show_slave_status_sql_delay_43200.txt", "replica", items=[ch(
             name="", seconds_behind=0, source_host="192.168.1.10", source_port=3306,
             source_server_id=1, source_uuid=UUID_57, source_log_file="mysql-bin.000241",
             read_source_log_pos=52288747, relay_source_log_file="mysql-bin.000241",
             exec_source_log_pos=52288747, applier_backlog_bytes=0,
             relay_log_space=52289254, sql_delay=43200, sql_remaining_delay=None,
             sql_state=SLAVE_IDLE, using_gtid=True,
             gtid_retrieved=f"{UUID_57}:13798-2409815",
             gtid_executed=Starts(f"{UUID_57}:1-2409815,"))])),
    case("mysql5.7.26-delayed-remaining-14-tabs", Row(
         MS + "dbanote_mysql5.7_show_slave_status_remaining_delay_14_tabmangled.txt",
         "replica", items=[ch(
             name="", seconds_behind=43186, source_host="192.168.1.10", source_port=3306,
             source_server_id=1, source_uuid=UUID_57, source_log_file="mysql-bin.000241",
             read_source_log_pos=51736680, relay_source_log_file="mysql-bin.000239",
             exec_source_log_pos=92768280, applier_backlog_bytes=None,
             relay_log_space=2005255224, sql_delay=43200, sql_remaining_delay=14,
             sql_state="Waiting until MASTER_DELAY seconds after master executed event",
             io_state="Waiting for master to send event", using_gtid=True,
             gtid_retrieved=f"{UUID_57}:13798-2409150",
             gtid_executed=Starts(f"{UUID_57}:1-1299009,"))])),
    case("mysql5.7-delayed-sql-stopped-1317", Row(
         MS + "dbanote_mysql5.7_show_slave_status_delayed_sql_error_1317.txt", "replica",
         items=[ch(
             name="", sql_running=False, seconds_behind=None, seconds_behind_stale=None,
             source_host="192.168.1.10", source_port=3306, source_server_id=1,
             source_uuid=UUID_57, source_log_file="mysql-bin.001243",
             read_source_log_pos=283153122, relay_source_log_file="mysql-bin.001218",
             exec_source_log_pos=88670087, applier_backlog_bytes=None,
             relay_log_space=27127851102, last_sql_errno=1317,
             last_sql_error="Error 'Query execution was interrupted' on query. Default "
                            "database: 'niuniuh5_db'. Query: 'DROP TABLE ",
             last_sql_error_time="2021-05-07 18:28:00", sql_delay=43200,
             sql_remaining_delay=None, sql_state="", using_gtid=False, gtid_retrieved="",
             gtid_executed="")])),
    case("mysql8.0-manual-replica-status", Row(
         "mysql/mysql8.0_show_replica_status.txt", "replica", items=[ch(
             name="", seconds_behind=0, source_host="127.0.0.1", source_port=13000,
             source_server_id=1, source_uuid="73f86016-978b-11ee-ade5-8d2a2a562feb",
             source_log_file="master-bin.000001", read_source_log_pos=927,
             relay_source_log_file="master-bin.000001", exec_source_log_pos=927,
             applier_backlog_bytes=0, relay_log_space=1355, using_gtid=True,
             gtid_retrieved="73f86016-978b-11ee-ade5-8d2a2a562feb:1-3",
             gtid_executed="73f86016-978b-11ee-ade5-8d2a2a562feb:1-3",
             io_state="Waiting for source to send event",
             sql_state="Replica has read all relay log; waiting for more updates")])),
    case("mysql8.0.30-2ch-netdata-table", Row(
         MS + "netdata_mysql8.0.30_replica_status_2ch_tabular.txt", "replica", items=[
             ch(name="master1", seconds_behind=0, source_host="mysql-master1",
                source_port=3306, source_server_id=1, source_uuid=ND1,
                source_log_file="mysql-bin-1.000003", read_source_log_pos=975,
                exec_source_log_pos=975, applier_backlog_bytes=0, relay_log_space=1599,
                using_gtid=True, gtid_retrieved=f"{ND1}:1-3",
                gtid_executed=f"{ND1}:1-3,{ND2}:1-3"),
             ch(name="master2", seconds_behind=0, source_host="mysql-master2",
                source_port=3306, source_server_id=2, source_uuid=ND2,
                source_log_file="mysql-bin-1.000003", read_source_log_pos=974,
                exec_source_log_pos=974, applier_backlog_bytes=0, relay_log_space=1598,
                using_gtid=True, gtid_retrieved=f"{ND2}:1-3",
                gtid_executed=f"{ND1}:1-3,{ND2}:1-3")])),
    case("aurora-mysql8-receiver-stopped-13114", Row(
         MS + "notes_aurora_mysql8_show_replica_status_io_13114_sbs0_mysqlsh.txt", "replica",
         items=[ch(
             name="", io_running="No", seconds_behind=None, seconds_behind_stale=0,
             source_host="xxxxxxx-xxxx-xxx-xxxxx-xxxxxx-xx.xxxxxxxxxxxx.xxxxxxxxx"
                         ".rds.amazonaws.com",
             source_port=3306, source_server_id=0,
             source_uuid="7868ba12-6342-3cbb-9b8f-ca35a09bf469", source_log_file="",
             read_source_log_pos=4, exec_source_log_pos=0, applier_backlog_bytes=None,
             last_io_errno=13114,
             last_io_error="Got fatal error 1236 from source when reading data from binary "
                           "log: 'Binary log is not open'",
             last_io_error_time="2025-10-08 12:41:17", io_state="",
             sql_state="Replica has read all relay log; waiting for more updates",
             using_gtid=True, gtid_retrieved="",
             gtid_executed="1b31a695-a3f4-11f0-a8a0-42010a246409:1-45")])),
    case("mysql8.0.34-applier-stopped-1410", Row(
         MS + "notes_mysql8.0.34_show_slave_status_coordinator_stopped_1410_termwrapped.txt",
         "replica", items=[ch(
             name="", sql_running=False, seconds_behind=None, seconds_behind_stale=None,
             source_host="192.168.131.99", source_port=3306, source_server_id=1,
             source_uuid=UUID_834, source_log_file="binlog.000068", read_source_log_pos=586,
             relay_source_log_file="binlog.000061", exec_source_log_pos=1766,
             applier_backlog_bytes=None, relay_log_space=9989536, last_sql_errno=1410,
             last_sql_error=Starts(
                 "Coordinator stopped because there were error(s) in the worker(s). The most "
                 "recent failure being: Worker 1 failed "),
             last_sql_error_time="2024-03-02 23:30:53",
             io_state="Waiting for source to send event", sql_state="", using_gtid=True,
             gtid_retrieved=f"{UUID_834}:424253-426568",
             gtid_executed=Starts("2218063c-aef7-11ee-9e40-000c29f059d3:1-6,"))])),
    # --- MariaDB SHOW [ALL] SLAVE[S] STATUS, SHOW MASTER/BINLOG STATUS -----------------
    case("mariadb11.6-all-slaves-event-time", Row(
         MA + "mariadbdocs_show_all_slaves_status_11.6_event_time_fields.txt", "replica",
         flavour="mariadb", items=[ch(
             name="", seconds_behind=6, source_host="db01.example.com", source_port=3306,
             source_server_id=1, source_log_file="mariadb-bin.000021",
             read_source_log_pos=17315, relay_source_log_file="mariadb-bin.000021",
             exec_source_log_pos=17146, applier_backlog_bytes=169, relay_log_space=17972,
             using_gtid=True, gtid_retrieved="0-1-2042", gtid_executed="0-1-2041",
             gtid_executed_server_wide=True, sql_state="Updating", retried_transactions=0,
             received_heartbeats=0, heartbeat_period=60.0, sql_delay=0,
             # the three 11.6+ columns: naive seconds (2024-12-12 06:53:52/50 as if UTC)
             source_event_time=1733986432.0, replica_event_time=1733986430.0,
             event_time_diff_s=2.0)])),
    case("mariadb-show-slave-status-slave-pos", Row(
         MA + "mariadbdocs_show_slave_status_slave_pos_optimistic.txt", "replica",
         flavour="mariadb", items=[ch(
             name="", seconds_behind=6, source_host="db01.example.com", source_port=3306,
             source_server_id=1, read_source_log_pos=17315, exec_source_log_pos=17146,
             applier_backlog_bytes=169, relay_log_space=17972, using_gtid=True,
             gtid_retrieved="0-1-2042", gtid_executed="", gtid_executed_server_wide=False,
             sql_state="Updating")])),
    case("mariadb-enterprise-replica-status", Row(
         MA + "mariadbdocs_enterprise_show_replica_status_slave_pos.txt", "replica",
         flavour="mariadb", items=[ch(
             name="", seconds_behind=0, source_host="192.0.2.1", source_port=3306,
             source_server_id=1, source_log_file="mariadb-bin.000001",
             read_source_log_pos=645, exec_source_log_pos=645, applier_backlog_bytes=0,
             relay_log_space=1259, using_gtid=True, gtid_retrieved="0-1-2",
             gtid_executed="", io_state="Waiting for master to send event",
             sql_state=SLAVE_IDLE)])),
    case("mariadb-skysql-file-position", Row(
         MA + "mariadbdocs_skysql_replication_status_using_gtid_no.txt", "replica",
         flavour="mariadb", items=[ch(
             name="", seconds_behind=0, source_host="mariadb1.example.com",
             source_port=3306, source_server_id=200, source_log_file="mysql-bin.000001",
             read_source_log_pos=462, exec_source_log_pos=462, applier_backlog_bytes=0,
             relay_log_space=985, using_gtid=False, gtid_retrieved="", gtid_executed="",
             sql_state=SLAVE_IDLE)])),
    case("mariadb10.8.4-2conn-netdata-table", Row(
         "mysql/mariadb10.8.4_show_all_slaves_status_multi_source.txt", "replica",
         flavour="mariadb", items=[
             ch(name=name, seconds_behind=0, source_host="master", source_port=3306,
                source_server_id=765, source_log_file="mysql-bin.000002",
                read_source_log_pos=342, exec_source_log_pos=342, applier_backlog_bytes=0,
                relay_log_space=2785, using_gtid=False, gtid_retrieved="",
                gtid_executed="0-308-9", gtid_executed_server_wide=True,
                received_heartbeats=1767, heartbeat_period=30.0, sql_state=SLAVE_IDLE)
             for name in ("Master1", "Master2")])),
    case("mariadb-show-master-status", Row(
         MA + "mariadbdocs_show_master_status.txt", "binlog",
         top={"file": "mariadb-bin.000003", "position": 343})),
    case("mariadb12.3-show-binlog-status", Row(
         MA + "mariadbdocs_show_binlog_status_12.3_gtid_binlog_pos.txt", "binlog",
         top={"file": "mariadb-bin.000016", "position": 475})),
    # --- Redis / Valkey INFO ----------------------------------------------------------
    case("redis3.2.3-cluster-master-crash-report", Row(
         RE + "notes_redis3.2.3_cluster_master_1replica_crashreport_info.txt", "redis",
         top={"version": "3.2.3", "role": "master", "uptime_s": 55047,
              "connected_clients": 2, "used_memory": 3538520, "maxmemory": 0,
              "maxmemory_policy": "noeviction", "mem_fragmentation_ratio": 1.52,
              "aof_enabled": True, "rdb_last_bgsave_status": "ok",
              "rdb_changes_since_last_save": 92909, "instantaneous_ops_per_sec": 1375,
              "connected_replicas": 1, "master_repl_offset": 5315960, "master_replid": None,
              "master_replid2": None, "repl_backlog_active": True,
              "repl_backlog_first_byte_offset": 4267385, "repl_backlog_histlen": 1048576,
              "link_status": None, "sync_full": 1, "keys": 5979, "expires": 0},
         items=[{"ip": "127.0.0.1", "port": 7005, "state": "online", "offset": 5288790,
                 "lag_s": 1}])),
    case("redis3.x-replica-never-up-timeout", Row(
         RE + "notes_redis3x_replica_timeout_link_down_since_epoch.txt", "redis-section",
         version="3.x",
         top={"role": "replica", "master_host": "192.168.2.20", "master_port": 6379,
              "link_status": "down", "last_io_seconds_ago": None, "sync_in_progress": False,
              "repl_offset": 1, "replica_read_only": True, "connected_replicas": 0,
              "master_repl_offset": 0, "repl_backlog_active": False,
              "link_down_since_seconds": None})),
    case("redis3.x-replica-never-up-noauth", Row(
         RE + "notes_redis3x_replica_noauth_link_down_since_epoch.txt", "redis-section",
         version="3.x",
         top={"role": "replica", "master_host": "127.0.0.1", "master_port": 6379,
              "link_status": "down", "last_io_seconds_ago": None, "sync_in_progress": False,
              "repl_offset": 1, "replica_read_only": True, "connected_replicas": 0,
              "link_down_since_seconds": None})),
    case("redis4.0.11-replica-link-down-295s", Row(
         RE + "notes_redis4.0.11_replica_link_down_295s_info_replication.txt",
         "redis-section", version="4.0.11",
         top={"role": "replica", "master_host": "172.16.18.13", "master_port": 6379,
              "link_status": "down", "last_io_seconds_ago": None, "sync_in_progress": False,
              "link_down_since_seconds": 295, "repl_offset": 20049,
              "replica_read_only": True, "master_replid":
              "4175e22073495f3a6819310dc1e94e0055bf5c4e", "master_replid2": ZEROS,
              "second_repl_offset": None, "master_repl_offset": 20049,
              "repl_backlog_active": True, "repl_backlog_histlen": 20049,
              "connected_replicas": 0})),
    case("redis4.0.11-new-master-after-failover", Row(
         RE + "notes_redis4.0.11_info_all_new_master_after_sentinel_failover_2replicas.txt",
         "redis",
         top={"version": "4.0.11", "role": "master", "uptime_s": 5463,
              "run_id": "a3e54ad34e437e3af238fb5899020d398d7a676a",
              "connected_clients": 7, "used_memory": 2106232, "maxmemory": 0,
              "mem_fragmentation_ratio": 5.36, "aof_enabled": True,
              "connected_replicas": 2,
              "master_replid": "9e86f0ce6f3f8a2e1ed266cef9d639a7e81293e0",
              "master_replid2": "b318cd330edc63ab3fd6e8952b167029678c7543",
              "master_repl_offset": 175436, "second_repl_offset": 100232,
              "repl_backlog_active": True, "repl_backlog_first_byte_offset": 167,
              "repl_backlog_histlen": 175270, "sync_full": 2, "sync_partial_ok": 0,
              "sync_partial_err": 2, "keys": 1, "link_status": None},
         items=[{"ip": ip, "port": 6379, "state": "online", "offset": 175150, "lag_s": 1}
                for ip in ("172.16.18.14", "172.16.18.13")])),
    case("redis6.0.9-master-alone-resp-header", Row(
         RE + "netdata_redis6.0.9_info_all_master_no_replicas.txt", "redis",
         top={"version": "6.0.9", "role": "master", "uptime_s": 252812,
              "run_id": "5d97fd948bbf6cb68458685fc747f9f9019c3fc4",
              "connected_clients": 1, "used_memory": 867160, "maxmemory": 0,
              "maxmemory_policy": "noeviction", "mem_fragmentation_ratio": 4.96,
              "aof_enabled": False, "rdb_last_bgsave_status": "ok",
              "connected_replicas": 0,
              "master_replid": "3f0ad529c9c59a17834bde8ae85f09f77609ecb1",
              "master_replid2": ZEROS, "second_repl_offset": None, "master_repl_offset": 0,
              "repl_backlog_active": False, "sync_full": 0, "keys": 4, "expires": 0})),
    case("redis7-replica-full-sync-starting", Row(
         RE + "notes_redis7_replica_fullsync_start_minus1_sentinels.txt", "redis-section",
         version="7.x",
         top={"role": "replica", "master_host": "127.0.0.1", "master_port": 6379,
              "link_status": "down", "last_io_seconds_ago": None, "sync_in_progress": True,
              "read_repl_offset": 0, "repl_offset": 0, "sync_total_bytes": None,
              "sync_read_bytes": 0, "sync_left_bytes": None, "sync_perc": None,
              "sync_last_io_seconds_ago": 0, "link_down_since_seconds": None,
              "replica_read_only": True, "failover_state": "no-failover",
              "master_replid": "b3f6f4263e52c3be442a1fa9740c6ac197f30b30",
              "master_replid2": ZEROS, "master_repl_offset": 0, "second_repl_offset": None,
              "repl_backlog_active": False, "connected_replicas": 0})),
    case("redis7.4.0-master-2replicas-promoted", Row(
         RE + "redisexporter_redis7.4.0_info_all_master_2replicas_replid2.txt", "redis",
         top={"version": "7.4.0", "role": "master", "uptime_s": 3503939,
              "run_id": "d57a856ea44f5252ccca5c6eef5662ee44a22642",
              "server_time": 1730045798.756384, "connected_clients": 536,
              "maxclients": 10000, "blocked_clients": 10, "used_memory": 27514219712,
              "used_memory_rss": 26951938048, "used_memory_peak": 28271280688,
              "maxmemory": 0, "maxmemory_policy": "noeviction",
              "total_system_memory": 33672261632, "mem_fragmentation_ratio": 0.98,
              "rdb_bgsave_in_progress": True, "rdb_changes_since_last_save": 26716,
              "aof_enabled": False, "instantaneous_ops_per_sec": 238, "sync_full": 766,
              "sync_partial_ok": 0, "sync_partial_err": 766, "total_error_replies": 855,
              "error_counts": {"BUSYKEY": 3, "ERR": 228, "EXECABORT": 35, "LOADING": 588,
                               "NOSCRIPT": 1},
              "connected_replicas": 2, "failover_state": "no-failover",
              "master_replid": "483dbe4b878ee700cd76746334c9c3303733adc4",
              "master_replid2": "d0c740965b559c71e64097bbe6597ad1ed64c284",
              "master_repl_offset": 127763635259, "second_repl_offset": 9051173903,
              "repl_backlog_active": True, "repl_backlog_size": 1048576,
              "repl_backlog_first_byte_offset": 127762511837,
              "repl_backlog_histlen": 1123423, "keys": 25472026 + 18,
              "expires": 24849338 + 13},
         items=[{"ip": "192.168.150.63", "port": 6379, "state": "online",
                 "offset": 127763393630, "lag_s": 0},
                {"ip": "192.168.150.89", "port": 6379, "state": "online",
                 "offset": 127763585576, "lag_s": 0}])),
    case("valkey-unstable-primary-default-info", Row(
         RE + "valkeydoc_valkey_unstable_info_default_master.txt", "redis",
         # Valkey's own version (valkey_version), not the redis_version:7.2.4 it also prints
         top={"server": "valkey", "version": "255.255.255", "role": "master",
              "uptime_s": 94798,
              "run_id": "e0abe2248cad0c6d9cb2445d8e6b73448f567f74",
              "server_time": 1714701488.527373, "connected_clients": 1,
              "maxclients": 10000, "used_memory": 4757704, "maxmemory": 0,
              "mem_fragmentation_ratio": 2.80, "instantaneous_ops_per_sec": 91,
              "total_error_replies": 55, "connected_replicas": 0,
              "failover_state": "no-failover",
              "master_replid": "488d931b7e08f8e091f674ea64480165971a25f1",
              "master_replid2": ZEROS, "master_repl_offset": 0, "second_repl_offset": None,
              "repl_backlog_active": False, "keys": 0, "expires": 0})),
    case("valkey-doc-replicaof-no-one-indented", Row(
         RE + "valkeydoc_valkey_after_replicaof_no_one_replid2_indented.txt",
         "redis-section", version="valkey", rejected="INFO field role is missing")),
    case("valkey-doc-replica-truncated-indented", Row(
         RE + "valkeydoc_valkey_replica_of_redis_link_up_truncated_indented.txt",
         "redis-section", version="valkey", rejected="INFO field role is missing")),
    # --- DRBD 8.3 / 8.4 /proc/drbd (LINBIT build and in-kernel srcversion forms) --------
    case("drbd8.3.8-syncsource-42pct-delay-probe", Row(
         DR + "checkmk_proc_8.3.8_syncsource_delay_probe.txt", "proc",
         top={"version": "8.3.8", "flavour": "8", "notes": []},
         items=[minor(0, "SyncSource", "Primary/Secondary", "UpToDate/Inconsistent", "C",
                      "r----", conn="Connected", repl="SyncSource", ns=12031428, nr=0,
                      dw=12031364, dr=1175992347, lo=37, pe=0, ua=37, ep=1, wo="barrier",
                      oos=301729988, resync=True, sync_pct=42.4,
                      sync_left_kib=294656 * 1024, sync_total_kib=510908 * 1024,
                      eta_s=1 * 3600 + 23 * 60 + 28, speed_kib_s=60172.0,
                      avg_speed_kib_s=51448.0, stalled=False)])),
    case("drbd8.3.8-syncsource-stalled", Row(
         DR + "checkmk_proc_8.3.8_syncsource_stalled.txt", "proc",
         top={"version": "8.3.8", "flavour": "8", "notes": []},
         items=[minor(0, "SyncSource", "Primary/Secondary", "UpToDate/Inconsistent", "C",
                      "r----", repl="SyncSource", ns=11545876, dw=11545900, oos=523171100,
                      resync=True, sync_pct=0.1, sync_left_kib=510908 * 1024,
                      sync_total_kib=510908 * 1024, eta_s=None, speed_kib_s=None,
                      stalled=True)])),
    case("drbd8.3.12-secondary-connected", Row(
         DR + "linbit_ug84_proc_8.3.12_pre_upgrade.txt", "proc",
         top={"version": "8.3.12", "flavour": "8", "notes": []},
         items=[minor(0, "Connected", "Secondary/Primary", "UpToDate/UpToDate", "C",
                      "r-----", conn="Connected", repl="Established", ns=0, nr=33300,
                      dw=33300, oos=0, wo="barrier", **NO_RESYNC)])),
    case("drbd8.4.0-3minors", Row(
         DR + "linbit_ug84_proc_8.4.0_3minors.txt", "proc",
         top={"version": "8.4.0", "flavour": "8", "notes": []},
         items=[minor(0, "Connected", "Secondary/Secondary", "UpToDate/UpToDate", "C",
                      "r-----", dr=656, oos=0, **NO_RESYNC),
                minor(1, "Connected", "Primary/Secondary", "UpToDate/UpToDate", "C", "r---",
                      dr=0, oos=0, **NO_RESYNC),
                minor(2, "Connected", "Secondary/Primary", "UpToDate/UpToDate", "C", "r---",
                      oos=0, **NO_RESYNC)])),
    case("drbd8.4.1-inconsistent-before-first-sync", Row(
         DR + "linbit_ug84_proc_8.4.1_inconsistent_oos.txt", "proc",
         top={"version": "8.4.1", "flavour": "8", "notes": []},
         items=[minor(0, "Connected", "Secondary/Secondary", "Inconsistent/Inconsistent",
                      "C", "r-----", repl="Established", oos=524236, **NO_RESYNC)])),
    case("drbd8.4.3-srcversion-4minors-protoA", Row(
         DR + "pybofh_test_proc_8.4.3_4minors_protoA.txt", "proc",
         top={"version": "8.4.3", "flavour": "8", "notes": []},
         items=[minor(0, "Connected", "Primary/Secondary", "UpToDate/UpToDate", "A",
                      "r-----", ns=4716, nr=0, dw=164979224, dr=9365172, lo=5, pe=7, ua=11,
                      ap=13, ep=19, wo="flush", oos=21, **NO_RESYNC),
                minor(1, "Connected", "Primary/Secondary", "UpToDate/UpToDate", "A",
                      "r-----", ns=592, dw=4741300, oos=0),
                minor(2, "Connected", "Primary/Secondary", "UpToDate/UpToDate", "A",
                      "r-----", ns=7752, dw=8046176, oos=0),
                minor(3, "Connected", "Primary/Secondary", "UpToDate/UpToDate", "A",
                      "r-----", ns=804, dw=17367120, oos=0)])),
    case("drbd8.4.11-srcversion-standalone-no-protocol", Row(
         DR + "rootdrbd_proc_8.4.11_standalone_no_protocol.txt", "proc",
         top={"version": "8.4.11", "flavour": "8", "notes": []},
         items=[minor(0, "StandAlone", "Primary/Unknown", "UpToDate/DUnknown", None,
                      "r----s", conn="StandAlone", repl="Off", suspended=False,
                      al_suspended=True, dw=28201, dr=827253, wo="flush", oos=20970844,
                      **NO_RESYNC)])),
    case("drbd8.4.11-srcversion-wfconnection", Row(
         DR + "rootdrbd_proc_8.4.11_wfconnection_suspended_flag.txt", "proc",
         top={"version": "8.4.11", "flavour": "8", "notes": []},
         items=[minor(0, "WFConnection", "Primary/Unknown", "UpToDate/DUnknown", "C",
                      "r----s", conn="Connecting", repl="Off", al_suspended=True, dw=19252,
                      dr=489978, oos=20970844, **NO_RESYNC)])),
    # --- DRBD 9 drbdsetup status --json -----------------------------------------------
    case("drbd9-json-syncsource-nan-eta", Row(
         DR + "saltshaptools_drbdsetup_status_json_syncsource_nan.txt", "json",
         top={"flavour": "9"},
         items=[{"resource": "shanghai", "node_id": 1, "role": "Primary", "suspended": False,
                 "wo": "flush", "minor": 2, "disk": "UpToDate", "size_kib": 409600,
                 "quorum": True, "lo": 3, "peer": "SLE12-sp4-node2", "peer_node_id": 2,
                 "conn": "Connected", "peer_role": "Secondary", "repl": "SyncSource",
                 "peer_disk": "Inconsistent", "oos": 409600, "in_sync_pct": 0.0,
                 "resync": True, "sync_pct": 0.0, "sync_left_kib": 409600,
                 "sync_total_kib": 819200 // 2, "eta_s": None}])),
]

_PFS = "kept for the coming performance_schema reader"
_DRBD9_TEXT = "kept for the coming DRBD 9 text reader (drbdadm status / drbdsetup events2)"
EXCLUDED: dict[str, str] = {
    **{f"real/mysql8-ps/{name}": _PFS for name in (
        "dbanote_mysql8.0.18_applier_status_gr_tabular_tabindented.txt",
        "dbanote_mysql8.0.18_connection_status_gr_recovery_2061.txt",
        "mysqldocs_8.0_pfs_replication_connection_status_2ch.txt",
        "notes_greatsql8.0_applier_status_gr_2ch.txt",
        "notes_mysql8.0.19_connection_status_3ch_gr_multiline_gtidset.txt",
        "notes_mysql8.0.34_by_worker_error_1410_applying_set.txt",
        "notes_mysql8.0_connection_status_gr_recovery_error_2061_old_wording.txt",
        "notes_mysql8_by_worker_gr_applier_limit1.txt",
        "notes_mysql8_connection_status_gr_recovery_error_2061_new_wording.txt",
        "notes_mysql8_prod_by_worker_4rows_applying_in_flight.txt",
    )},
    **{DR + name: _DRBD9_TEXT for name in (
        "drbdutils_test_events2_statistics_syncsource_done.txt",
        "linbit_ug9_drbdadm_status_3peers_connecting.txt",
        "saltshaptools_drbdadm_status_2res_2peers_2vols.txt",
        "saltshaptools_drbdadm_status_syncsource_done.txt",
    )},
}
"""Corpus files no replmon parser reads yet, with why they are kept."""


# --- the tests --------------------------------------------------------------------------

_ABSENT = "<no such field>"


def _pick(got: Mapping[str, Any], want: Mapping[str, Any], keep: Callable[[str], bool],
          ) -> dict[str, Any]:
    return {k: got.get(k, _ABSENT) for k in want if keep(k)}


def _compare(row: Row, top: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """Every field the row names, the item count included; misread fields last."""

    def view(keep: Callable[[str], bool]) -> tuple[Any, Any]:
        empty: Mapping[str, Any] = {}
        pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = list(
            zip_longest(items, row.items, fillvalue=empty))
        got = (_pick(top, row.top, keep), len(items), [_pick(g, w, keep) for g, w in pairs])
        want = ({k: v for k, v in row.top.items() if keep(k)}, len(row.items),
                [{k: v for k, v in w.items() if keep(k)} for _, w in pairs])
        return got, want

    got, want = view(lambda k: k not in row.misread)
    assert got == want, row.path
    got, want = view(lambda k: k in row.misread)
    if got != want:
        raise Misread(f"{row.path}: expected {want}, got {got}")


@pytest.mark.parametrize("row", TABLE)
def test_real_output(row: Row) -> None:
    read = READERS[row.kind]
    if row.rejected:  # not what the command prints: the parser must refuse it
        with pytest.raises(ParseError, match=row.rejected):
            read(row)
        return
    top, items = read(row)
    _compare(row, top, items)


def test_corpus_and_table_agree() -> None:
    """Every file of tests/fixtures/real/ is in TABLE or EXCLUDED (not both), every path
    they name exists, and the README has a row for each."""
    tabled = [p.values[0].path for p in TABLE]
    assert len(tabled) == len(set(tabled)), "a file is in TABLE twice"
    assert not set(tabled) & set(EXCLUDED), "a file is both tested and excluded"
    on_disk = {f"real/{p.relative_to(CORPUS).as_posix()}" for p in CORPUS.rglob("*")
               if p.is_file() and p.name != "README.md"}
    named = {p for p in tabled if p.startswith("real/")} | set(EXCLUDED)
    assert on_disk == named, (sorted(on_disk - named), sorted(named - on_disk))
    assert [p for p in tabled if not (FIXTURES / p).is_file()] == []
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    assert [p for p in sorted(on_disk | set(tabled)) if Path(p).name not in readme] == []
