"""Pure functions from the rows pymysql returns to replmon's MySQL model.

Input shapes (what ``cursor.fetchall()`` gives):

* SHOW GLOBAL STATUS / SHOW GLOBAL VARIABLES: a sequence of ``(name, value)``
  tuples (default cursor) or of ``{"Variable_name": ..., "Value": ...}`` dicts
  (DictCursor). Values are ``str`` (or ``bytes``, ``None``).
* SHOW ALL SLAVES STATUS / SHOW REPLICA STATUS / SHOW SLAVE STATUS: a sequence of
  dicts (DictCursor), one per connection/channel. pymysql hands numeric columns
  over as ``int`` (``Slave_heartbeat_period`` as ``float``), NULL as ``None``;
  the parser also takes the same values as text, the way the ``mysql`` client
  prints them ("NULL" for NULL).

Anything that is not the expected shape (a counter that is not a decimal
integer, a row without the I/O-thread column, "Maybe" where Yes/No belongs)
raises ``replmon.errors.ParseError``, never another exception.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, TypeGuard

from pydantic import ValidationError

from replmon.errors import ParseError
from replmon.model.mysql import (
    COUNTER_FIELDS,
    GAUGE_FIELDS,
    PROCESS_INFO_CHARS,
    VARIABLE_NAMES,
    BinlogStatus,
    Flavour,
    IoRunning,
    MysqlSample,
    ProcessRow,
    ReplicaChannel,
    RowFamily,
    SemiSync,
    clean_version,
    version_tuple,
)

_INT = re.compile(r"[+-]?[0-9]{1,40}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]{1,40}(?:\.[0-9]{0,40})?|\.[0-9]{1,40})(?:[eE][+-]?[0-9]{1,3})?")
_TRUE = frozenset({"ON", "YES", "1", "TRUE"})
_FALSE = frozenset({"OFF", "NO", "0", "FALSE"})
_HANDLER_READS = (
    "Handler_read_first", "Handler_read_key", "Handler_read_next", "Handler_read_prev",
    "Handler_read_rnd", "Handler_read_rnd_next",
)
_SEMI_SYNC_STATUS = (
    "Rpl_semi_sync_master_status", "Rpl_semi_sync_source_status",
    "Rpl_semi_sync_slave_status", "Rpl_semi_sync_replica_status",
)
STATUS_NAMES: tuple[str, ...] = (
    *COUNTER_FIELDS, *GAUGE_FIELDS, *_SEMI_SYNC_STATUS, "Uptime", "Uptime_since_flush_status",
)
"""Every status variable the parser reads; MysqlSource asks the server for just these."""


@dataclass(frozen=True)
class GlobalStatus:
    """The parts of SHOW GLOBAL STATUS replmon keeps."""

    uptime_s: int | None = None
    uptime_since_flush_s: int | None = None
    counters: dict[str, int] = field(default_factory=dict)
    gauges: dict[str, int | float] = field(default_factory=dict)
    source_active: bool | None = None
    replica_active: bool | None = None
    row_counters: RowFamily | None = None
    rows: dict[str, int | None] = field(default_factory=dict)
    """rows_inserted/updated/deleted/read taken from the ``row_counters`` family."""


# --- scalars -------------------------------------------------------------------


def _text(value: object) -> str | None:
    """A status/column value as text; None for SQL NULL."""
    if type(value) is str:  # what pymysql gives for status values: the common case first
        return value
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise ParseError(f"unexpected boolean {value!r}")
    if isinstance(value, int | float):
        return str(value)
    raise ParseError(f"unexpected value of type {type(value).__name__}")


def parse_int(name: str, value: object, *, nullable: bool = False) -> int | None:
    """A decimal integer (pymysql int or text). "NULL"/None only when ``nullable``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if _is_digits(value):  # most status values: no strip, no regex (0.37 µs, not 0.68)
        return int(value)
    text = _text(value)
    if text is None or (nullable and text.strip().upper() == "NULL"):
        if nullable:
            return None
        raise ParseError(f"{name}: NULL where a number is expected")
    text = text.strip()
    if not _INT.fullmatch(text):
        raise ParseError(f"{name}: expected an integer, got {text[:40]!r}")
    return int(text)


def _is_digits(value: object) -> TypeGuard[str]:
    """Text that _INT matches as it is (1 to 40 ASCII digits, nothing to strip), found
    without the regex: the parse_int/parse_number fast path."""
    return type(value) is str and value.isdigit() and value.isascii() and len(value) <= 40


def parse_number(name: str, value: object) -> int | float:
    """An integer or a finite decimal (for gauges such as average wait times)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ParseError(f"{name}: expected a finite number, got {value!r}")
    if isinstance(value, float):
        return value
    if _is_digits(value):
        return int(value)
    text = _text(value)
    if text is None:
        raise ParseError(f"{name}: NULL where a number is expected")
    text = text.strip()
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return number
    raise ParseError(f"{name}: expected a number, got {text[:40]!r}")


def parse_bool(name: str, value: object) -> bool:
    """ON/OFF, YES/NO, 1/0, TRUE/FALSE (any case)."""
    text = _text(value)
    word = "" if text is None else text.strip().upper()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ParseError(f"{name}: expected ON/OFF, got {(text or 'NULL')[:40]!r}")


# --- SHOW GLOBAL STATUS / VARIABLES ----------------------------------------------


def _pairs(rows: Iterable[Any], what: str) -> dict[str, str | None]:
    """Name -> text value from (name, value) tuples or Variable_name/Value dicts."""
    out: dict[str, str | None] = {}
    for row in rows:
        if type(row) is tuple and len(row) == 2:
            # pymysql's default cursor, tested first: isinstance(row, Mapping) is a slow
            # ABC check (with the _text fast path: 13 µs instead of 95 for 67 rows)
            name, value = row
        elif isinstance(row, Mapping):
            lower = {str(k).lower(): v for k, v in row.items()}
            if "variable_name" not in lower or "value" not in lower:
                raise ParseError(f"{what}: row without Variable_name/Value: {list(row)[:4]}")
            name, value = lower["variable_name"], lower["value"]
        elif isinstance(row, Sequence) and not isinstance(row, str | bytes) and len(row) == 2:
            name, value = row[0], row[1]
        else:
            raise ParseError(f"{what}: expected (name, value) rows, got {type(row).__name__}")
        key = _text(name)
        if not key:
            raise ParseError(f"{what}: row without a name")
        out[key] = _text(value)
    return out


def parse_global_status(rows: Iterable[Any]) -> GlobalStatus:
    """Counters, gauges, uptimes, semi-sync state and the row family from SHOW GLOBAL STATUS.

    Names are matched exactly as the server prints them (Uptime, Com_update, ...).
    Raises ParseError when a kept value is not numeric or nothing usable is there."""
    raw = _pairs(rows, "SHOW GLOBAL STATUS")
    if "Uptime" not in raw:
        raise ParseError("SHOW GLOBAL STATUS has no Uptime")
    counters: dict[str, int] = {}
    for name in COUNTER_FIELDS:
        if name in raw:
            value = parse_int(name, raw[name])
            assert value is not None
            if value < 0:
                raise ParseError(f"{name}: counter is negative ({value})")
            counters[name] = value
    gauges = {name: parse_number(name, raw[name]) for name in GAUGE_FIELDS if name in raw}

    def flag(*names: str) -> bool | None:
        for name in names:
            if name in raw:
                return parse_bool(name, raw[name])
        return None

    family, rows_ = _row_family(raw, counters)
    flush_name = "Uptime_since_flush_status"
    flush = None if flush_name not in raw else parse_int(flush_name, raw[flush_name])
    return GlobalStatus(
        uptime_s=parse_int("Uptime", raw["Uptime"]),
        uptime_since_flush_s=flush,
        counters=counters,
        gauges=gauges,
        source_active=flag("Rpl_semi_sync_source_status", "Rpl_semi_sync_master_status"),
        replica_active=flag("Rpl_semi_sync_replica_status", "Rpl_semi_sync_slave_status"),
        row_counters=family,
        rows=rows_,
    )


def _row_family(
    raw: Mapping[str, str | None], counters: Mapping[str, int]
) -> tuple[RowFamily | None, dict[str, int | None]]:
    """Innodb_rows_* where the server has Innodb_rows_updated, else Handler_*."""
    if "Innodb_rows_updated" in raw:
        return "innodb", {
            "rows_inserted": counters.get("Innodb_rows_inserted"),
            "rows_updated": counters.get("Innodb_rows_updated"),
            "rows_deleted": counters.get("Innodb_rows_deleted"),
            "rows_read": counters.get("Innodb_rows_read"),
        }
    if "Handler_update" not in counters:
        return None, {}
    read = counters.get("Rows_read")
    if read is None and all(n in counters for n in _HANDLER_READS):
        read = sum(counters[n] for n in _HANDLER_READS)
    return "handler", {
        "rows_inserted": counters.get("Handler_write"),
        "rows_updated": counters.get("Handler_update"),
        "rows_deleted": counters.get("Handler_delete"),
        "rows_read": read,
    }


def parse_variables(rows: Iterable[Any]) -> dict[str, str]:
    """The VARIABLE_NAMES subset of SHOW GLOBAL VARIABLES, lower-case names, raw text
    (NULL becomes "")."""
    raw = _pairs(rows, "SHOW GLOBAL VARIABLES")
    wanted = set(VARIABLE_NAMES)
    return {k.lower(): v or "" for k, v in raw.items() if k.lower() in wanted}


# --- replication status ------------------------------------------------------------

def _io_running(name: str, value: object) -> IoRunning:
    word = (_text(value) or "").strip().lower()
    if word == "yes":
        return "Yes"
    if word == "no":
        return "No"
    if word == "connecting":
        return "Connecting"
    raise ParseError(f"{name}: expected Yes/No/Connecting, got {(_text(value) or 'NULL')[:40]!r}")


def _str(_name: str, value: object) -> str:
    text = _text(value) or ""
    return "" if text.upper() == "NULL" else text


_ERROR_TIME = re.compile(r"([0-9]{2})([0-9]{2})([0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2})")


def _error_time(name: str, value: object) -> str:
    """MySQL's Last_*_Error_Timestamp, 'YYMMDD hh:mm:ss' in the server's time zone, as
    '20YY-MM-DD hh:mm:ss' (a date a person reads); any other text as it came."""
    text = _str(name, value)
    m = _ERROR_TIME.fullmatch(text.strip())
    return f"20{m[1]}-{m[2]}-{m[3]} {m[4]}" if m else text


def _nint(name: str, value: object) -> int | None:
    return parse_int(name, value, nullable=True)


def _nnumber(name: str, value: object) -> float | None:
    """A decimal column (a pymysql Decimal, or text) as a float; None for NULL/empty."""
    if isinstance(value, Decimal):
        return float(value)
    if value is None or (_text(value) or "").strip() in ("", "NULL"):
        return None
    return float(parse_number(name, value))


def _errno(name: str, value: object) -> int:
    return parse_int(name, value, nullable=True) or 0


def _gtid_set(_name: str, value: object) -> str:
    """A GTID set on one line (MySQL prints "uuid:1-5,\nuuid2:1-9")."""
    return "".join((_text(value) or "").split())


_COLUMNS: dict[str, tuple[Callable[[str, Any], Any], tuple[str, ...]]] = {
    # field: (converter, column names: MySQL 8.0.22+ first, then the old/MariaDB ones)
    "io_running": (_io_running, ("replica_io_running", "slave_io_running")),
    "sql_running": (parse_bool, ("replica_sql_running", "slave_sql_running")),
    "seconds_behind": (_nint, ("seconds_behind_source", "seconds_behind_master")),
    "source_host": (_str, ("source_host", "master_host")),
    "source_port": (_nint, ("source_port", "master_port")),
    "source_server_id": (_nint, ("source_server_id", "master_server_id")),
    "source_log_file": (_str, ("source_log_file", "master_log_file")),
    "read_source_log_pos": (_nint, ("read_source_log_pos", "read_master_log_pos")),
    "relay_source_log_file": (_str, ("relay_source_log_file", "relay_master_log_file")),
    "exec_source_log_pos": (_nint, ("exec_source_log_pos", "exec_master_log_pos")),
    "io_state": (_str, ("replica_io_state", "slave_io_state")),
    "sql_state": (_str, ("replica_sql_running_state", "slave_sql_running_state")),
    "name": (_str, ("channel_name", "connection_name")),
    "gtid_retrieved": (_gtid_set, ("retrieved_gtid_set", "gtid_io_pos")),
    "gtid_executed": (_gtid_set, ("executed_gtid_set", "gtid_slave_pos")),
    "last_io_errno": (_errno, ("last_io_errno",)),
    "last_io_error": (_str, ("last_io_error",)),
    "last_sql_errno": (_errno, ("last_sql_errno",)),
    "last_sql_error": (_str, ("last_sql_error",)),
    "sql_delay": (_nint, ("sql_delay",)),
    "sql_remaining_delay": (_nint, ("sql_remaining_delay",)),
    "relay_log_space": (_nint, ("relay_log_space",)),
    "source_uuid": (_str, ("source_uuid", "master_uuid")),
    "last_io_error_time": (_error_time, ("last_io_error_timestamp",)),
    "last_sql_error_time": (_error_time, ("last_sql_error_timestamp",)),
    "retried_transactions": (_nint, ("retried_transactions",)),
    "received_heartbeats": (_nint, ("slave_received_heartbeats", "replica_received_heartbeats")),
    "heartbeat_period": (_nnumber, ("slave_heartbeat_period", "replica_heartbeat_period")),
}


def parse_replica_status(rows: Iterable[Any], flavour: Flavour) -> list[ReplicaChannel]:
    """One ReplicaChannel per row of MariaDB SHOW ALL SLAVES STATUS / SHOW SLAVE
    STATUS, MySQL SHOW SLAVE STATUS (old names) or SHOW REPLICA STATUS (8.0.22+
    names). Column names are matched case-insensitively; no rows = not a replica.

    The dialect is recognised from the column names themselves (MySQL 8.0.22+
    answers the old SHOW SLAVE STATUS with the old names), so today ``flavour``
    changes nothing; it is part of the signature so a flavour-specific quirk can
    be handled here without touching callers."""
    out: list[ReplicaChannel] = []
    for row in rows:
        if not isinstance(row, Mapping):
            raise ParseError(f"replica status: expected dict rows, got {type(row).__name__}")
        # lower-case keys for matching, original names kept for error messages
        out.append(_channel({str(k).lower(): (str(k), v) for k, v in row.items()}))
    return out


APPLIER_WORKERS_QUERY = (
    "SELECT CHANNEL_NAME, WORKER_ID, LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE,"
    " IF(LAST_ERROR_NUMBER = 0, NULL,"
    " DATE_FORMAT(LAST_ERROR_TIMESTAMP, '%Y-%m-%d %H:%i:%s')) AS error_time,"
    " APPLYING_TRANSACTION,"
    " IF(APPLYING_TRANSACTION = '', NULL, TIMESTAMPDIFF(MICROSECOND,"
    " APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP, NOW(6)) / 1e6) AS applying_age_s,"
    " IF(LAST_APPLIED_TRANSACTION = '', NULL, TIMESTAMPDIFF(MICROSECOND,"
    " LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP,"
    " LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP) / 1e6) AS applied_latency_s,"
    " LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP AS applied_at"
    " FROM performance_schema.replication_applier_status_by_worker"
)
"""Oracle MySQL 8.0.2+: each applier worker's error, its transaction and its timing. The
ages are computed by the server (its clock against the source's commit timestamps, as
Seconds_Behind_Source is); a few rows, read when due, never every tick."""


@dataclass(frozen=True)
class ApplierDetail:
    """What the workers of one channel say (parse_applier_workers)."""

    worker_errno: int = 0
    worker_error: str = ""
    worker_error_time: str = ""
    worker_id: int | None = None
    failed_gtid: str = ""
    applying_age_s: float | None = None
    applied_latency_s: float | None = None


def parse_applier_workers(rows: Iterable[Sequence[Any]]) -> dict[str, ApplierDetail]:
    """APPLIER_WORKERS_QUERY's rows -> one ApplierDetail per channel: the worker with an
    error (the earliest failure when several failed), the oldest transaction being
    applied (0.0 when no worker is busy) and the latency of the newest one applied."""
    by_channel: dict[str, list[Sequence[Any]]] = {}
    for row in rows:
        if len(row) != 9:
            raise ParseError(f"applier workers: expected 9 columns, got {len(row)}")
        by_channel.setdefault(_text(row[0]) or "", []).append(row)
    out: dict[str, ApplierDetail] = {}
    for channel, workers in by_channel.items():
        failed = sorted((w for w in workers if parse_int("LAST_ERROR_NUMBER", w[2])),
                        key=lambda w: _text(w[4]) or "")
        busy = [a for w in workers if (a := _maybe_float("applying_age_s", w[6])) is not None]
        done = [(str(w[8]), lat) for w in workers
                if (lat := _maybe_float("applied_latency_s", w[7])) is not None]
        f = failed[0] if failed else None
        out[channel] = ApplierDetail(
            worker_errno=(parse_int("LAST_ERROR_NUMBER", f[2]) or 0) if f else 0,
            worker_error=_worker_message(_text(f[3]) or "") if f else "",
            worker_error_time=(_text(f[4]) or "") if f else "",
            worker_id=parse_int("WORKER_ID", f[1]) if f else None,
            failed_gtid=(_text(f[5]) or "") if f else "",
            applying_age_s=round(max(busy), 3) if busy else 0.0,
            applied_latency_s=round(max(done)[1], 3) if done else None,
        )
    return out


_WORKER_PREFIX = re.compile(r"Worker \d+ failed executing transaction '[^']*' at (?:source|master)"
                            r" log [^,]*, end_log_pos \d+; ")
_WORKER_SUFFIX = re.compile(r"; the event's (?:source|master) log .*$")


def _worker_message(text: str) -> str:
    """A worker's message without what replmon shows on its own (the worker, the GTID, the
    binlog coordinates repeated at both ends): "Could not execute Write_rows event on table
    lab.t; Duplicate entry '9' for key 't.PRIMARY', Error_code: 1062; handler error ..."."""
    return _WORKER_SUFFIX.sub("", _WORKER_PREFIX.sub("", text, count=1)).strip()


def _maybe_float(name: str, value: object) -> float | None:
    text = _text(value)
    if text is None or text.upper() == "NULL":
        return None
    if not _FLOAT.fullmatch(text):
        raise ParseError(f"applier workers: {name}: expected a number, got {text[:40]!r}")
    return float(text)


def with_applier(channels: list[ReplicaChannel], details: Mapping[str, ApplierDetail]
                 ) -> list[ReplicaChannel]:
    """The channels with their workers' detail. A worker's error is kept only while the
    channel's applier still reports one (it clears at START REPLICA)."""
    out = []
    for ch in channels:
        d = details.get(ch.name)
        if d is None:
            out.append(ch)
            continue
        keep_error = bool(ch.last_sql_errno and d.worker_errno)
        fields = dataclasses.asdict(d if keep_error else ApplierDetail())
        fields.update(applying_age_s=d.applying_age_s, applied_latency_s=d.applied_latency_s)
        out.append(dataclasses.replace(ch, **fields))
    return out


def _channel(row: Mapping[str, tuple[str, Any]]) -> ReplicaChannel:
    values: dict[str, Any] = {}
    for field_name, (convert, names) in _COLUMNS.items():
        for n in names:  # the first name the row has (a loop, not next() on a generator
            if n in row:  # per field: parse_replica_status of a row 25 µs instead of 40)
                values[field_name] = convert(*row[n])
                break
    if "io_running" not in values or "sql_running" not in values:
        raise ParseError("replica status row has no Slave_IO_Running/Replica_IO_Running column")
    values["using_gtid"] = _using_gtid(row)
    values["gtid_executed_server_wide"] = "executed_gtid_set" not in row and "gtid_slave_pos" in row
    if values["io_running"] != "Yes" and values.get("seconds_behind") is not None:
        values["seconds_behind_stale"] = values.pop("seconds_behind")  # not live lag
    try:
        return ReplicaChannel.model_validate(values)
    except ValidationError as e:  # defensive: every value above is already checked
        raise ParseError(f"replica status: {e.errors()[0].get('msg', e)}") from None


def _using_gtid(row: Mapping[str, tuple[str, Any]]) -> bool | None:
    """MariaDB Using_Gtid (No / Slave_Pos / Current_Pos) or MySQL Auto_Position (0/1)."""
    if "using_gtid" in row:
        text = (_text(row["using_gtid"][1]) or "").strip().lower()
        if text in ("no", ""):
            return False
        if text in ("slave_pos", "current_pos"):
            return True
        raise ParseError(f"Using_Gtid: unexpected value {text[:40]!r}")
    if "auto_position" in row:
        value = parse_int(*row["auto_position"], nullable=True)
        return None if value is None else value != 0
    return None


# --- version and the whole sample ----------------------------------------------------


def detect_flavour(version: str) -> Flavour:
    """"mariadb" when the version string mentions MariaDB, else "mysql"."""
    return "mariadb" if "mariadb" in version.lower() else "mysql"


def replica_status_query(flavour: Flavour, version: str) -> str:
    """The statement that lists every replication connection on this server."""
    if flavour == "mariadb":
        return "SHOW ALL SLAVES STATUS"
    return "SHOW REPLICA STATUS" if version_tuple(version) >= (8, 0, 22) else "SHOW SLAVE STATUS"


def build_mysql_sample(
    *,
    version: str,
    status: GlobalStatus,
    variables: Mapping[str, str],
    replication: Sequence[ReplicaChannel] = (),
    replication_error: str | None = None,
    replication_hint: str | None = None,
    rtt_ms: float | None = None,
    variables_age_s: float | None = None,
    binlog: BinlogStatus | None = None,
    processlist: list[ProcessRow] | None = None,
    processlist_error: str | None = None,
) -> MysqlSample:
    """Assemble a MysqlSample (status ok is stamped later by Source.sample())."""

    def enabled(*names: str) -> bool | None:
        for name in names:
            if name in variables:
                return parse_bool(name, variables[name])
        return None

    semi = SemiSync(
        source_enabled=enabled("rpl_semi_sync_source_enabled", "rpl_semi_sync_master_enabled"),
        source_active=status.source_active,
        source_clients=_first_int(
            status.gauges, "Rpl_semi_sync_source_clients", "Rpl_semi_sync_master_clients"
        ),
        replica_enabled=enabled("rpl_semi_sync_replica_enabled", "rpl_semi_sync_slave_enabled"),
        replica_active=status.replica_active,
    )
    version = clean_version(version)
    return MysqlSample(
        flavour=detect_flavour(version),
        version=version,
        rtt_ms=rtt_ms,
        uptime_s=status.uptime_s,
        uptime_since_flush_s=status.uptime_since_flush_s,
        counters=dict(status.counters),
        gauges=dict(status.gauges),
        semi_sync=semi,
        row_counters=status.row_counters,
        rows_inserted=status.rows.get("rows_inserted"),
        rows_updated=status.rows.get("rows_updated"),
        rows_deleted=status.rows.get("rows_deleted"),
        rows_read=status.rows.get("rows_read"),
        variables=dict(variables),
        variables_age_s=variables_age_s,
        replication=list(replication),
        replication_error=replication_error,
        replication_hint=replication_hint,
        binlog=binlog,
        processlist=processlist,
        processlist_error=processlist_error,
    )


def _first_int(values: Mapping[str, int | float], *names: str) -> int | None:
    for name in names:
        if name in values:
            return int(values[name])
    return None


# --- the server's own binlog, GTIDs and clock (every positions_every seconds) -----------

MARIADB_POSITIONS_QUERY = (
    "SELECT @@global.gtid_binlog_pos, @@global.gtid_binlog_state, @@global.server_id, "
    "'', UNIX_TIMESTAMP(NOW(6))"
)
MYSQL_POSITIONS_QUERY = (
    "SELECT @@global.gtid_executed, '', @@global.server_id, @@global.server_uuid, "
    "UNIX_TIMESTAMP(NOW(6))"
)
_TABLE = re.compile(r"^[A-Za-z0-9_$]{1,64}\.[A-Za-z0-9_$]{1,64}$")


def binlog_status_query(flavour: Flavour, version: str) -> str:
    """SHOW BINARY LOG STATUS on MySQL >= 8.2 (the only name in 8.4), else SHOW MASTER
    STATUS (MariaDB keeps it; SHOW BINLOG STATUS is its alias from 10.5.2)."""
    if flavour == "mysql" and version_tuple(version) >= (8, 2, 0):
        return "SHOW BINARY LOG STATUS"
    return "SHOW MASTER STATUS"


def binlog_grant_hint(flavour: Flavour) -> str:
    if flavour == "mariadb":
        return "GRANT BINLOG MONITOR ON *.* TO the replmon account (MariaDB >= 10.5)"
    return "GRANT REPLICATION CLIENT ON *.* TO the replmon account"


def quote_table(name: str) -> str:
    """``db.table`` as a quoted identifier for the heartbeat read; anything else is
    refused (the name comes from the config and goes into SQL)."""
    if not _TABLE.match(name):
        raise ValueError(f"heartbeat_table: expected db.table (letters, digits, _ $), "
                         f"got {name[:80]!r}")
    db, table = name.split(".")
    return f"`{db}`.`{table}`"


def parse_binlog_status(row: Sequence[Any] | None) -> tuple[str, int | None]:
    """(File, Position) of a SHOW MASTER|BINARY LOG STATUS row; ("", None) for no row
    (binary log off)."""
    if not row:
        return "", None
    if len(row) < 2:
        raise ParseError(f"binlog status: expected File and Position, got {len(row)} column(s)")
    return _str("File", row[0]), parse_int("Position", row[1], nullable=True)


def parse_heartbeat(rows: Iterable[Sequence[Any]]) -> dict[int, float]:
    """pt-heartbeat rows (server_id, ts) as server_id -> seconds. ``ts`` is the writer's
    clock as pt-heartbeat writes it ("2026-11-25T11:00:00.123456", no zone), read as
    naive: only differences of one writer's ts mean anything."""
    out: dict[int, float] = {}
    for row in rows:
        if len(row) < 2 or row[0] is None or row[1] is None:
            continue
        sid = parse_int("server_id", row[0])
        text = _text(row[1]) or ""
        try:
            stamp = datetime.fromisoformat(text.strip().replace(" ", "T"))
        except ValueError:
            raise ParseError(f"heartbeat ts: not a timestamp: {text[:40]!r}") from None
        if sid is not None:
            out[sid] = stamp.replace(tzinfo=UTC).timestamp()
    return out


def build_binlog_status(row: Sequence[Any] | None, *, file: str = "",
                        position: int | None = None, heartbeat: Mapping[int, float] = {},
                        sent_wall: float | None = None, elapsed_ms: float | None = None,
                        error: str | None = None) -> BinlogStatus:
    """A BinlogStatus from the positions query's row (gtid, binlog state, server_id,
    uuid, server clock) and the binlog status."""
    if row is None or len(row) < 5:
        raise ParseError("positions query: expected 5 columns")
    clock = _nnumber("UNIX_TIMESTAMP(NOW(6))", row[4])
    return BinlogStatus(
        file=file, position=position,
        gtid_executed=_gtid_set("gtid", row[0]), gtid_binlog_state=_gtid_set("state", row[1]),
        server_id=parse_int("server_id", row[2], nullable=True), server_uuid=_str("uuid", row[3]),
        server_time=clock, sent_wall=sent_wall, elapsed_ms=elapsed_ms,
        heartbeat=dict(heartbeat), error=error)


# --- processlist --------------------------------------------------------------------

_PROCESS_SKIP = "('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID')"
"""Commands that are not work: idle connections, the event scheduler, and a primary's
binlog senders (they run for as long as a replica is connected)."""


def processlist_query(flavour: Flavour, limit: int = 10) -> str:
    """The ``limit`` longest-running active threads, longest first; the statement cut to
    PROCESS_INFO_CHARS on the server (MariaDB's TIME_MS gives the time to the ms)."""
    t = "TIME_MS / 1000" if flavour == "mariadb" else "TIME"
    return (f"SELECT ID, USER, HOST, DB, COMMAND, {t}, STATE, LEFT(INFO, {PROCESS_INFO_CHARS}) "
            f"FROM information_schema.PROCESSLIST WHERE COMMAND NOT IN {_PROCESS_SKIP} "
            f"AND ID <> CONNECTION_ID() ORDER BY {t} DESC LIMIT {int(limit)}")


_SECRET_TOKENS = re.compile(
    r"""'(?:[^'\\]|\\.|'')*(?:'|$)|"(?:[^"\\]|\\.|"")*(?:"|$)"""  # a literal (or cut open)
    r"|(?:\b|_)(?:PASSWORD|IDENTIFIED)\b",
    re.IGNORECASE | re.DOTALL)


def scrub_statement(sql: str) -> str:
    """``sql`` with every string literal after the word PASSWORD or IDENTIFIED (outside
    a literal) replaced by '***': CREATE USER ... IDENTIFIED BY '...', SET PASSWORD,
    CHANGE MASTER TO MASTER_PASSWORD='...', a literal cut open by the length limit. A
    processlist is shown and recorded, and no password may be in either."""
    armed = False

    def one(m: re.Match[str]) -> str:
        nonlocal armed
        tok = m.group()
        if tok[0] in "'\"":
            return "'***'" if armed else tok
        armed = True
        return tok

    return _SECRET_TOKENS.sub(one, sql)


def parse_processlist(rows: Iterable[Sequence[Any]]) -> list[ProcessRow]:
    """Rows of ``processlist_query`` (ID, USER, HOST, DB, COMMAND, time, STATE, INFO)."""
    out = []
    for row in rows:
        if len(row) < 8:
            raise ParseError(f"processlist: expected 8 columns, got {len(row)}")
        ident, user, host, db, command, secs, state, info = row[:8]
        try:
            time_s = float(secs) if secs is not None else 0.0
            pid = int(ident)
        except (TypeError, ValueError):
            raise ParseError(f"processlist: unreadable id/time {ident!r}/{secs!r}") from None
        text = _text(info)
        out.append(ProcessRow(id=pid, time_s=round(time_s, 3), user=_text(user) or "",
                              host=_text(host) or "", db=_text(db), command=_text(command) or "",
                              state=_text(state) or None,
                              info=scrub_statement(text[:PROCESS_INFO_CHARS]) if text else None))
    return out
