"""Pure functions from the replication status pymysql returns to ``ReplicaChannel``:
SHOW ALL SLAVES STATUS / SHOW REPLICA STATUS / SHOW SLAVE STATUS, and on Oracle MySQL
8.0.2+ the applier workers' table (each worker's error, its transaction, its timing).

Input shape: a sequence of dicts (DictCursor), one per connection/channel. pymysql hands
numeric columns over as ``int`` (``Slave_heartbeat_period`` as ``float``), NULL as
``None``; the parser also takes the same values as text, the way the ``mysql`` client
prints them ("NULL" for NULL). The workers' rows are tuples (APPLIER_WORKERS_QUERY's
columns).

Anything that is not the expected shape (a row without the I/O-thread column, "Maybe"
where Yes/No belongs) raises ``replmon.errors.ParseError``, never another exception.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from replmon.errors import ParseError
from replmon.model.mysql import Flavour, IoRunning, ReplicaChannel, version_tuple
from replmon.sources.mysql_values import (
    FLOAT_TEXT,
    as_text,
    gtid_set_text,
    nullable_number,
    parse_bool,
    parse_int,
    text_or_empty,
)

# --- replication status ------------------------------------------------------------


def replica_status_query(flavour: Flavour, version: str) -> str:
    """The statement that lists every replication connection on this server."""
    if flavour == "mariadb":
        return "SHOW ALL SLAVES STATUS"
    return "SHOW REPLICA STATUS" if version_tuple(version) >= (8, 0, 22) else "SHOW SLAVE STATUS"


def replication_grant_hint(flavour: Flavour, version: str, user: str) -> str:
    """The GRANT that lets ``user`` read the replication status on this server."""
    if flavour == "mariadb" and version_tuple(version) >= (10, 5, 0):
        return (
            f"GRANT REPLICA MONITOR ON *.* TO '{user}'@'<host>' (alias SLAVE MONITOR, "
            "MariaDB >= 10.5.9); PROCESS is needed for SHOW ENGINE INNODB STATUS"
        )
    return (
        f"GRANT REPLICATION CLIENT ON *.* TO '{user}'@'<host>'; "
        "PROCESS is needed for SHOW ENGINE INNODB STATUS"
    )


def _io_running(name: str, value: object) -> IoRunning:
    word = (as_text(value) or "").strip().lower()
    if word == "yes":
        return "Yes"
    if word == "no":
        return "No"
    if word in ("connecting", "preparing"):
        # MariaDB (10.6+) says "Preparing" for a moment after START SLAVE, before the IO
        # thread connects (seen on the lab's 10.11 in every switchover): not receiving yet
        return "Connecting"
    raise ParseError(f"{name}: expected Yes/No/Connecting, got {(as_text(value) or 'NULL')[:40]!r}")


_ERROR_TIME = re.compile(r"([0-9]{2})([0-9]{2})([0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2})")


def _error_time(name: str, value: object) -> str:
    """MySQL's Last_*_Error_Timestamp, 'YYMMDD hh:mm:ss' in the server's time zone, as
    '20YY-MM-DD hh:mm:ss' (a date a person reads); any other text as it came."""
    text = text_or_empty(name, value)
    m = _ERROR_TIME.fullmatch(text.strip())
    return f"20{m[1]}-{m[2]}-{m[3]} {m[4]}" if m else text


def naive_seconds(name: str, value: object) -> float | None:
    """A server's naive date-time ("2024-12-12 06:53:52[.123]", or pymysql's datetime) as
    seconds since the epoch read as if UTC (the caller applies the time zone); None for
    NULL or empty."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC).timestamp()
    text = (as_text(value) or "").strip()
    if not text or text.upper() == "NULL":
        return None
    try:
        return datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise ParseError(f"{name}: not a date-time: {text[:40]!r}") from None


def _nint(name: str, value: object) -> int | None:
    return parse_int(name, value, nullable=True)


def _errno(name: str, value: object) -> int:
    return parse_int(name, value, nullable=True) or 0


_COLUMNS: dict[str, tuple[Callable[[str, Any], Any], tuple[str, ...]]] = {
    # field: (converter, column names: MySQL 8.0.22+ first, then the old/MariaDB ones)
    "io_running": (_io_running, ("replica_io_running", "slave_io_running")),
    "sql_running": (parse_bool, ("replica_sql_running", "slave_sql_running")),
    "seconds_behind": (_nint, ("seconds_behind_source", "seconds_behind_master")),
    "source_host": (text_or_empty, ("source_host", "master_host")),
    "source_port": (_nint, ("source_port", "master_port")),
    "source_server_id": (_nint, ("source_server_id", "master_server_id")),
    "source_log_file": (text_or_empty, ("source_log_file", "master_log_file")),
    "read_source_log_pos": (_nint, ("read_source_log_pos", "read_master_log_pos")),
    "relay_source_log_file": (text_or_empty, ("relay_source_log_file", "relay_master_log_file")),
    "exec_source_log_pos": (_nint, ("exec_source_log_pos", "exec_master_log_pos")),
    "io_state": (text_or_empty, ("replica_io_state", "slave_io_state")),
    "sql_state": (text_or_empty, ("replica_sql_running_state", "slave_sql_running_state")),
    "name": (text_or_empty, ("channel_name", "connection_name")),
    "gtid_retrieved": (gtid_set_text, ("retrieved_gtid_set", "gtid_io_pos")),
    "gtid_executed": (gtid_set_text, ("executed_gtid_set", "gtid_slave_pos")),
    "last_io_errno": (_errno, ("last_io_errno",)),
    "last_io_error": (text_or_empty, ("last_io_error",)),
    "last_sql_errno": (_errno, ("last_sql_errno",)),
    "last_sql_error": (text_or_empty, ("last_sql_error",)),
    "sql_delay": (_nint, ("sql_delay",)),
    "sql_remaining_delay": (_nint, ("sql_remaining_delay",)),
    "relay_log_space": (_nint, ("relay_log_space",)),
    "source_uuid": (text_or_empty, ("source_uuid", "master_uuid")),
    "last_io_error_time": (_error_time, ("last_io_error_timestamp",)),
    "last_sql_error_time": (_error_time, ("last_sql_error_timestamp",)),
    "retried_transactions": (_nint, ("retried_transactions",)),
    "received_heartbeats": (_nint, ("slave_received_heartbeats", "replica_received_heartbeats")),
    "heartbeat_period": (nullable_number, ("slave_heartbeat_period", "replica_heartbeat_period")),
    "source_event_time": (naive_seconds, ("master_last_event_time",)),
    "replica_event_time": (naive_seconds, ("slave_last_event_time",)),
    "event_time_diff_s": (nullable_number, ("master_slave_time_diff",)),
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
        names = _NAMES.get(keys := tuple(row))
        if names is None:
            if len(_NAMES) >= 64:
                _NAMES.clear()
            names = _NAMES[keys] = tuple((str(k).lower(), str(k)) for k in keys)
        out.append(_channel({low: (name, v) for (low, name), v in zip(names, row.values(),
                                                                     strict=True)}))
    return out


_NAMES: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}
"""A row's column names -> each one's (lower-case, as given): the same ~60 names every
tick, made into these once (62 ``str().lower()`` a row and tick, otherwise)."""


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
    # every value above is its field's type, from a converter that checked the text:
    # no validation (Struct.trusted), 3.1 -> 2.3 µs a channel
    return ReplicaChannel.trusted(**values)


def _using_gtid(row: Mapping[str, tuple[str, Any]]) -> bool | None:
    """MariaDB Using_Gtid (No / Slave_Pos / Current_Pos) or MySQL Auto_Position (0/1)."""
    if "using_gtid" in row:
        text = (as_text(row["using_gtid"][1]) or "").strip().lower()
        if text in ("no", ""):
            return False
        if text in ("slave_pos", "current_pos"):
            return True
        raise ParseError(f"Using_Gtid: unexpected value {text[:40]!r}")
    if "auto_position" in row:
        value = parse_int(*row["auto_position"], nullable=True)
        return None if value is None else value != 0
    return None


# --- the applier workers (Oracle MySQL 8.0.2+) ------------------------------------------


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
        by_channel.setdefault(as_text(row[0]) or "", []).append(row)
    out: dict[str, ApplierDetail] = {}
    for channel, workers in by_channel.items():
        failed = sorted((w for w in workers if parse_int("LAST_ERROR_NUMBER", w[2])),
                        key=lambda w: as_text(w[4]) or "")
        busy = [a for w in workers if (a := _maybe_float("applying_age_s", w[6])) is not None]
        done = [(str(w[8]), lat) for w in workers
                if (lat := _maybe_float("applied_latency_s", w[7])) is not None]
        f = failed[0] if failed else None
        out[channel] = ApplierDetail(
            worker_errno=(parse_int("LAST_ERROR_NUMBER", f[2]) or 0) if f else 0,
            worker_error=_worker_message(as_text(f[3]) or "") if f else "",
            worker_error_time=(as_text(f[4]) or "") if f else "",
            worker_id=parse_int("WORKER_ID", f[1]) if f else None,
            failed_gtid=(as_text(f[5]) or "") if f else "",
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
    text = as_text(value)
    if text is None or text.upper() == "NULL":
        return None
    if not FLOAT_TEXT.fullmatch(text):
        raise ParseError(f"applier workers: {name}: expected a number, got {text[:40]!r}")
    return float(text)


_NO_WORKER_ERROR: Mapping[str, Any] = dataclasses.asdict(ApplierDetail())
"""A channel's worker fields without an error (made once: ``asdict`` copies deeply)."""


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
        fields = dataclasses.asdict(d) if keep_error else dict(_NO_WORKER_ERROR)
        fields.update(applying_age_s=d.applying_age_s, applied_latency_s=d.applied_latency_s)
        # model_copy, not dataclasses.replace (which validates the whole channel again,
        # ~10 µs, every tick of a MySQL 8+ replica): parse_applier_workers' ints, strs and
        # floats (or None) are the channel's fields' types
        out.append(ch.model_copy(update=fields))
    return out
