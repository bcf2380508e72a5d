"""The MySQL source's reads besides SHOW GLOBAL STATUS and VARIABLES, each a statement or
a few on the kept connection: the replication status, the server's own positions (binlog,
GTIDs, clock) and the processlist (``replmon.sources.mysql``
decides when each is due; the mysql_*_parse modules read the rows).

``Statements`` is what this server answers, learned on the current connection: the
replication status and binlog status statements for its version, the older name after a
server refused the newer one (1064), None after a missing privilege; the next connection
starts afresh. A refused or unreadable reading becomes a note (``Note``: the source's,
logged once) and the sample stands; a connection error is raised for the source to
reconnect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pymysql
import pymysql.cursors

from replmon.endpoints import MysqlEndpoint
from replmon.errors import ParseError
from replmon.model.mysql import BinlogStatus, Flavour, ProcessRow
from replmon.sources.mysql_binlog_parse import (
    MARIADB_POSITIONS_QUERY,
    MYSQL_POSITIONS_QUERY,
    binlog_grant_hint,
    binlog_status_query,
    build_binlog_status,
    parse_binlog_status,
)
from replmon.sources.mysql_connect import error_code, error_text, is_connection_error
from replmon.sources.mysql_green import begin, elapsed_ms
from replmon.sources.mysql_processlist_parse import parse_processlist, processlist_query
from replmon.sources.mysql_replica_parse import (
    APPLIER_WORKERS_QUERY,
    replica_status_query,
    replication_grant_hint,
)
from replmon.sources.mysql_values import parse_bool

_DENIED_CODES = {1044, 1142, 1143, 1227, 1370}  # no privilege for this one query

Note = Callable[[str, BaseException], str]
"""The source's note of what could not be read (``what``, the error): "what: text"."""


@dataclass
class Statements:
    """What this server answers, as learned on the current connection."""

    replica: str = "SHOW SLAVE STATUS"
    """The replication status (SHOW SLAVE STATUS after a newer name was refused)."""
    binlog: str | None = None
    """SHOW MASTER STATUS or its MySQL 8.2+ name; None after it was refused (until the
    next connection)."""
    applier: str | None = APPLIER_WORKERS_QUERY
    """The applier workers' table; None after the server refused it (until the next
    connection)."""
    applier_times: bool = True
    """performance_schema's applier commit timestamps (Oracle MySQL 8.0+ replicas, every
    tick); False after the server refused them (until the next connection)."""

    @classmethod
    def for_server(cls, flavour: Flavour, version: str) -> Statements:
        """A new connection's: the names this server's version knows."""
        return cls(replica=replica_status_query(flavour, version),
                   binlog=binlog_status_query(flavour, version))


# pymysql's private members (a result's fields and rows) are what DictCursor overrides:
# its stubs do not declare them, so the bases are typed as Any here
_DictCursorBase: Any = pymysql.cursors.DictCursor
_Cursor: Any = pymysql.cursors.Cursor


class DictCursor(_DictCursorBase):  # type: ignore[misc]
    """pymysql's DictCursor (2.2), each column's key found with a set of the keys so far
    rather than in their list: a key met again takes its table's name
    ("table.name"), as there. SHOW ALL SLAVES STATUS has 62 columns, on every node
    every tick (a primary's result has none of its rows but all of its columns): 1,891
    string comparisons a statement, ~15 us, for the same keys."""

    def _do_get_result(self) -> None:
        _Cursor._do_get_result(self)  # (DictCursorMixin's own base)
        fields: list[str] = []
        if self.description:
            seen: set[str] = set()
            for f in self._result.fields:
                name = f.name
                if name in seen:
                    name = f.table_name + "." + name
                fields.append(name)
                seen.add(name)
            self._fields = fields
        rows = self._rows  # type: ignore[has-type]
        if fields and rows:
            self._rows = [self._conv_row(r) for r in rows]


if not all(callable(getattr(_DictCursorBase, n, None))
           for n in ("_do_get_result", "_conv_row")):  # pragma: no cover (a pymysql
    # that renamed them: its own DictCursor, slower, rather than a replica read that fails)
    DictCursor = _DictCursorBase  # type: ignore[misc]


def read_replication(conn: pymysql.connections.Connection[Any], st: Statements,
                     ep: MysqlEndpoint, flavour: Flavour, version: str
                     ) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """Rows of the replication status, or ([], error, hint) on a missing privilege."""
    with conn.cursor(DictCursor) as cur:
        try:
            cur.execute(st.replica)
        except pymysql.err.MySQLError as e:
            code = error_code(e)
            if code == 1227:
                text = f"{st.replica}: {error_text(ep, e)}"
                hint = replication_grant_hint(flavour, version, ep.user)
                return [], text, hint
            if code == 1064 and st.replica != "SHOW SLAVE STATUS":
                st.replica = "SHOW SLAVE STATUS"  # an older server: fall back once
                cur.execute(st.replica)
            else:
                raise
        return list(cur.fetchall()), None, None


def read_positions(conn: pymysql.connections.Connection[Any], st: Statements,
                   flavour: Flavour, variables: Mapping[str, str], note: Note) -> BinlogStatus:
    """This server's binlog position, GTIDs, server id and clock (see BinlogStatus)."""
    errors: list[str] = []
    with conn.cursor() as cur:
        sent, start = begin(conn)
        cur.execute(MARIADB_POSITIONS_QUERY if flavour == "mariadb"
                    else MYSQL_POSITIONS_QUERY)
        row = cur.fetchone()
        elapsed = elapsed_ms(conn, start)
        file, position = "", None
        if st.binlog and parse_bool("log_bin", variables.get("log_bin", "OFF")):
            try:
                cur.execute(st.binlog)
                file, position = parse_binlog_status(cur.fetchone())
            except pymysql.err.MySQLError as e:
                if error_code(e) == 1064 and st.binlog != "SHOW MASTER STATUS":
                    st.binlog = "SHOW MASTER STATUS"  # older server: once
                elif error_code(e) in _DENIED_CODES:
                    st.binlog = None  # not again on this connection
                    hint = binlog_grant_hint(flavour)
                    errors.append(f"{note('binlog', e)}; {hint}")
                else:
                    raise
    return build_binlog_status(row, file=file, position=position,
                               sent_wall=sent, elapsed_ms=elapsed,
                               error="; ".join(errors) or None)


def read_processlist(conn: pymysql.connections.Connection[Any], flavour: Flavour, note: Note
                     ) -> tuple[list[ProcessRow], str | None]:
    """The longest-running active threads; ([], note) when the server refuses."""
    with conn.cursor() as cur:
        try:
            cur.execute(processlist_query(flavour))
        except pymysql.err.MySQLError as e:
            if is_connection_error(e):
                raise
            return [], note("processlist", e)
        try:
            return parse_processlist(cur.fetchall()), None
        except ParseError as e:  # a reply replmon cannot read: noted, the sample stands
            return [], note("processlist", e)


RECEIVER_TIMES_QUERY = (
    "SELECT TIME FROM information_schema.PROCESSLIST WHERE USER = 'system user' AND STATE IN "
    "('Waiting for master to send event', 'Waiting for source to send event')")
"""The seconds each connected replication receiver has waited in its state: MariaDB and
MySQL keep it from the connection on, while events come (measured on MariaDB 10.11 and
MySQL 9.7 under 200-300 writes/s: it grows by the wall clock)."""


def read_receiver_times(conn: pymysql.connections.Connection[Any], note: Note) -> list[int]:
    """The connected receivers' times (s), longest first; [] when the server refuses
    (no PROCESS privilege shows no system threads: then nothing is said)."""
    with conn.cursor() as cur:
        try:
            cur.execute(RECEIVER_TIMES_QUERY)
        except pymysql.err.MySQLError as e:
            if is_connection_error(e):
                raise
            note("receiver times", e)
            return []
        rows = cur.fetchall()
    return sorted((int(r[0]) for r in rows if r and isinstance(r[0], int | float)),
                  reverse=True)
