"""The replica's true-lag facts, read every tick on a server that has a replication
channel (``LagFacts``): its clock (one timed SELECT), pt-heartbeat's rows when a table is
configured, and on Oracle MySQL 8.0+ the applier's commit timestamps from
performance_schema. Read only; a missing table or privilege is a one-line note in the
facts, logged once, and the sample stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pymysql

from replmon.errors import ParseError
from replmon.model.lag import ApplierTimes, LagFacts
from replmon.sources.mysql_connect import error_code
from replmon.sources.mysql_green import begin, elapsed_ms
from replmon.sources.mysql_values import as_text, nullable_number, parse_int

CLOCK_QUERY = "SELECT UNIX_TIMESTAMP(NOW(6)), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())"
"""The replica's clock and its session time zone's offset from UTC (seconds)."""

APPLIER_TIMES_QUERY = (
    "SELECT CHANNEL_NAME,"
    " MIN(IF(APPLYING_TRANSACTION = '', NULL,"
    " UNIX_TIMESTAMP(APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP))),"
    " MAX(IF(LAST_APPLIED_TRANSACTION = '', NULL,"
    " UNIX_TIMESTAMP(LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP)))"
    " FROM performance_schema.replication_applier_status_by_worker GROUP BY CHANNEL_NAME"
)
"""Oracle MySQL 8.0+: per channel, the original commit (the source's clock, epoch
seconds) of the oldest transaction being applied and of the newest applied."""

_DENIED_OR_MISSING = {1044, 1142, 1143, 1227, 1370, 1146, 1049, 1054}

Note = Callable[[str, BaseException], str]
_TABLE = re.compile(r"^[A-Za-z0-9_$]{1,64}\.[A-Za-z0-9_$]{1,64}$")


def quote_table(name: str) -> str:
    """``db.table`` as a quoted identifier for ``heartbeat_query``; anything else is
    refused (the name comes from the config and goes into SQL)."""
    if not _TABLE.match(name):
        raise ValueError(f"heartbeat_table: expected db.table (letters, digits, _ $), "
                         f"got {name[:80]!r}")
    db, table = name.split(".")
    return f"`{db}`.`{table}`"


def heartbeat_query(table: str) -> str:
    """pt-heartbeat's rows, ts as epoch seconds (``table`` already quoted)."""
    return f"SELECT server_id, UNIX_TIMESTAMP(ts) FROM {table}"


def parse_clock(row: Sequence[Any] | None) -> tuple[float | None, float | None]:
    """(server clock, time zone offset rounded to 15 min) of CLOCK_QUERY's row."""
    if row is None or len(row) < 2:
        raise ParseError("clock query: expected 2 columns")
    tz = nullable_number("tz_offset", row[1])
    return nullable_number("UNIX_TIMESTAMP(NOW(6))", row[0]), (
        None if tz is None else round(tz / 900.0) * 900.0)


def parse_heartbeat_epochs(rows: Iterable[Sequence[Any]]) -> dict[int, float]:
    """(server_id, UNIX_TIMESTAMP(ts)) rows -> server_id -> epoch seconds; a row whose ts
    the server could not read (NULL, 0) is left out."""
    out: dict[int, float] = {}
    for row in rows:
        if len(row) < 2 or row[0] is None:
            continue
        sid = parse_int("server_id", row[0])
        ts = nullable_number("UNIX_TIMESTAMP(ts)", row[1])
        if sid is not None and ts is not None and ts > 0:
            out[sid] = ts
    return out


def parse_applier_times(rows: Iterable[Sequence[Any]]) -> list[ApplierTimes]:
    """APPLIER_TIMES_QUERY's rows; a timestamp of 0 (not known to the source) is None."""
    out = []
    for row in rows:
        if len(row) != 3:
            raise ParseError(f"applier times: expected 3 columns, got {len(row)}")
        applying, applied = (nullable_number(n, v) for n, v in
                             (("applying", row[1]), ("applied", row[2])))
        # no validation (Struct.trusted): a str and nullable_number's floats
        out.append(ApplierTimes.trusted(
            channel=as_text(row[0]) or "",
            applying_commit=applying if applying and applying > 0 else None,
            applied_commit=applied if applied and applied > 0 else None))
    return out


def read_lag_facts(conn: pymysql.connections.Connection[Any], *, heartbeat_table: str | None,
                   applier: bool, note: Note) -> tuple[LagFacts, bool]:
    """This replica's LagFacts, and whether to read the applier's timestamps next time
    (False after the server refused them: no performance_schema, no privilege)."""
    hb: dict[int, float] = {}
    hb_error = applier_error = None
    times: list[ApplierTimes] = []
    with conn.cursor() as cur:
        sent, start = begin(conn)
        cur.execute(CLOCK_QUERY)
        row = cur.fetchone()
        elapsed = elapsed_ms(conn, start)
        server_time, tz = parse_clock(row)
        if heartbeat_table:
            try:
                cur.execute(heartbeat_query(heartbeat_table))
                hb = parse_heartbeat_epochs(cur.fetchall())
            except ParseError as e:
                hb_error = note(f"heartbeat table {heartbeat_table.replace('`', '')}", e)
            except pymysql.err.MySQLError as e:
                if error_code(e) not in _DENIED_OR_MISSING:
                    raise
                name = heartbeat_table.replace("`", "")
                text = note("heartbeat", e).removeprefix("heartbeat: ")  # logged once, with
                # the positions' reading of the same table
                hb_error = (f"heartbeat table {name}: {text}; GRANT SELECT ON {name} TO the "
                            "replmon account (pt-heartbeat --update writes it)")
        if applier:
            try:
                cur.execute(APPLIER_TIMES_QUERY)
                times = parse_applier_times(cur.fetchall())
            except ParseError as e:
                applier_error = note("applier timestamps", e)
            except pymysql.err.MySQLError as e:
                if error_code(e) not in _DENIED_OR_MISSING:
                    raise
                applier_error = note("applier timestamps", e)
                applier = False
    # no validation (Struct.trusted), every tick of a replica: parse_clock's floats, the
    # clock's floats, parse_heartbeat_epochs' new dict of int -> float, the ApplierTimes
    # just built in a new list, error texts (str or None)
    return LagFacts.trusted(
        server_time=server_time, tz_offset_s=tz, sent_wall=sent, elapsed_ms=elapsed,
        heartbeat=hb, heartbeat_error=hb_error, applier=times, applier_error=applier_error,
        heartbeat_table=heartbeat_table.replace("`", "") if heartbeat_table else None,
    ), applier
