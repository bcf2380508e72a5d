"""Pure functions for the processlist: the query for the longest-running active threads
(information_schema.PROCESSLIST), its rows as ``ProcessRow``, and the statements' password
literals scrubbed (a processlist is shown and recorded); the sessions stalled on a full
disk (``SPACE_WAITS_QUERY``, every tick).

Input shape: rows of ``processlist_query`` (ID, USER, HOST, DB, COMMAND, time, STATE,
INFO), values as pymysql gives them. A row that is not that shape raises
``replmon.errors.ParseError``, never another exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from replmon.errors import ParseError
from replmon.model.mysql import PROCESS_INFO_CHARS, Flavour, ProcessRow
from replmon.sources.mysql_values import as_text

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


SPACE_WAIT_STATE = "Waiting for someone to free space"
"""The state of a session whose write hit a full disk (datadir, binlog, tmpdir): MySQL
and MariaDB check the space again every 60 s and go on once there is some ("How MySQL
Handles a Full Disk" in the manual). Seen on MariaDB 10.11, a MyISAM table on a full
filesystem: the INSERT stays in this state until the server's next look after a file
was removed (60 s)."""

SPACE_WAITS_QUERY = (f"SELECT COUNT(*), COALESCE(MAX(TIME), 0) FROM information_schema.PROCESSLIST "
                     f"WHERE STATE LIKE '{SPACE_WAIT_STATE}%'")
"""How many sessions wait for disk space, and the longest wait (s): one row."""


def parse_space_waits(rows: Sequence[Sequence[Any]]) -> tuple[int, int]:
    """(sessions waiting, longest wait in s) from ``SPACE_WAITS_QUERY``'s one row."""
    if len(rows) != 1 or len(rows[0]) != 2:
        raise ParseError(f"sessions waiting for disk space: expected one row of 2 columns, "
                         f"got {rows!r:.80}")
    try:
        return int(rows[0][0]), int(rows[0][1] or 0)
    except (TypeError, ValueError):
        raise ParseError(f"sessions waiting for disk space: unreadable {rows[0]!r:.80}") from None


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
        text = as_text(info)
        out.append(ProcessRow(id=pid, time_s=round(time_s, 3), user=as_text(user) or "",
                              host=as_text(host) or "", db=as_text(db),
                              command=as_text(command) or "",
                              state=as_text(state) or None,
                              info=scrub_statement(text[:PROCESS_INFO_CHARS]) if text else None))
    return out
