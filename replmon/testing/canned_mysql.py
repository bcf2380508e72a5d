"""A pymysql connection that answers with canned rows, for code that reads through a
cursor (``mysql_lag_reads``, ``mysql_binlog_parse``'s callers) without a server: the
trusted-record tests compare what it builds with its validated twin, and
bench/bench_build_tick.py times it. A query gets the rows of the first key of
``replies`` found in its text."""

from __future__ import annotations

Rows = list[tuple[object, ...]]


class CannedCursor:
    """pymysql's cursor, as far as the readers use it."""

    def __init__(self, replies: dict[str, Rows]) -> None:
        self.replies: dict[str, Rows] = replies
        self.rows: Rows = []

    def __enter__(self) -> CannedCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def execute(self, query: str) -> None:
        self.rows = next(rows for key, rows in self.replies.items() if key in query)

    def fetchone(self) -> object:
        return self.rows[0]

    def fetchall(self) -> object:
        return list(self.rows)


class CannedConnection:
    """pymysql's connection: a cursor per ``cursor()`` call, on the same replies."""

    def __init__(self, replies: dict[str, Rows]) -> None:
        self.replies = replies

    def cursor(self) -> CannedCursor:
        return CannedCursor(self.replies)
