"""Pure functions for the server's own binlog, GTIDs and clock, read every
``positions_every`` seconds (``BinlogStatus``): the positions query, SHOW MASTER STATUS
(SHOW BINARY LOG STATUS on MySQL >= 8.2) and pt-heartbeat's table.

Input shapes: one row of the positions query (a tuple of 5 values), one row of the binlog
status (File, Position), and pt-heartbeat's (server_id, ts) rows. Anything else raises
``replmon.errors.ParseError``, never another exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from replmon.errors import ParseError
from replmon.model.mysql import BinlogStatus, Flavour, version_tuple
from replmon.sources.mysql_values import (
    as_text,
    gtid_set_text,
    nullable_number,
    parse_int,
    text_or_empty,
)

MARIADB_POSITIONS_QUERY = (
    "SELECT @@global.gtid_binlog_pos, @@global.gtid_binlog_state, @@global.server_id, "
    "'', UNIX_TIMESTAMP(NOW(6)), @@global.gtid_slave_pos"
)
MYSQL_POSITIONS_QUERY = (
    "SELECT @@global.gtid_executed, '', @@global.server_id, @@global.server_uuid, "
    "UNIX_TIMESTAMP(NOW(6)), ''"
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
    return text_or_empty("File", row[0]), parse_int("Position", row[1], nullable=True)


def parse_heartbeat(rows: Iterable[Sequence[Any]]) -> dict[int, float]:
    """pt-heartbeat rows (server_id, ts) as server_id -> seconds. ``ts`` is the writer's
    clock as pt-heartbeat writes it ("2026-11-25T11:00:00.123456", no zone), read as
    naive: only differences of one writer's ts mean anything."""
    out: dict[int, float] = {}
    for row in rows:
        if len(row) < 2 or row[0] is None or row[1] is None:
            continue
        sid = parse_int("server_id", row[0])
        text = as_text(row[1]) or ""
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
    uuid, server clock[, MariaDB's gtid_slave_pos]) and the binlog status."""
    if row is None or len(row) < 5:
        raise ParseError("positions query: expected 5 or 6 columns")
    clock = nullable_number("UNIX_TIMESTAMP(NOW(6))", row[4])
    return BinlogStatus(
        file=file, position=position,
        gtid_executed=gtid_set_text("gtid", row[0]),
        gtid_binlog_state=gtid_set_text("state", row[1]),
        server_id=parse_int("server_id", row[2], nullable=True),
        server_uuid=text_or_empty("uuid", row[3]),
        gtid_slave_pos=gtid_set_text("slave_pos", row[5]) if len(row) > 5 else "",
        server_time=clock, sent_wall=sent_wall, elapsed_ms=elapsed_ms,
        heartbeat=dict(heartbeat), error=error)
