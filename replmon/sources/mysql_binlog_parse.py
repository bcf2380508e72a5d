"""Pure functions for the server's own binlog, GTIDs and clock, read every
``positions_every`` seconds (``BinlogStatus``): the positions query and SHOW MASTER STATUS
(SHOW BINARY LOG STATUS on MySQL >= 8.2).

Input shapes: one row of the positions query (a tuple of 5 values) and one row of the
binlog status (File, Position). Anything else raises
``replmon.errors.ParseError``, never another exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replmon.errors import ParseError
from replmon.model.mysql import BinlogStatus, Flavour, version_tuple
from replmon.sources.mysql_values import (
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


def parse_binlog_status(row: Sequence[Any] | None) -> tuple[str, int | None]:
    """(File, Position) of a SHOW MASTER|BINARY LOG STATUS row; ("", None) for no row
    (binary log off)."""
    if not row:
        return "", None
    if len(row) < 2:
        raise ParseError(f"binlog status: expected File and Position, got {len(row)} column(s)")
    return text_or_empty("File", row[0]), parse_int("Position", row[1], nullable=True)


def build_binlog_status(row: Sequence[Any] | None, *, file: str = "",
                        position: int | None = None,
                        sent_wall: float | None = None, elapsed_ms: float | None = None,
                        error: str | None = None) -> BinlogStatus:
    """A BinlogStatus from the positions query's row (gtid, binlog state, server_id,
    uuid, server clock[, MariaDB's gtid_slave_pos]) and the binlog status."""
    if row is None or len(row) < 5:
        raise ParseError("positions query: expected 5 or 6 columns")
    clock = nullable_number("UNIX_TIMESTAMP(NOW(6))", row[4])
    # no validation (Struct.trusted): every value is already its field's type (the
    # helpers' str, int and float; the caller's parse_binlog_status, clock floats and
    # error text); 2.0 -> 0.7 µs, read by both nodes every positions_every seconds
    return BinlogStatus.trusted(
        file=file, position=position,
        gtid_executed=gtid_set_text("gtid", row[0]),
        gtid_binlog_state=gtid_set_text("state", row[1]),
        server_id=parse_int("server_id", row[2], nullable=True),
        server_uuid=text_or_empty("uuid", row[3]),
        gtid_slave_pos=gtid_set_text("slave_pos", row[5]) if len(row) > 5 else "",
        server_time=clock, sent_wall=sent_wall, elapsed_ms=elapsed_ms,
        error=error)
