"""The processlist rows and the password scrub (rows as pymysql returns them from the
lab's MariaDB 10.11, see tests/live/test_mysql_source.py for the live read)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from replmon.errors import ParseError
from replmon.sources.mysql_processlist_parse import (
    parse_processlist,
    parse_space_waits,
    processlist_query,
    scrub_statement,
)

# pymysql's rows of processlist_query("mariadb") on the lab's replica during a test:
# (ID, USER, HOST, DB, COMMAND, TIME_MS / 1000, STATE, LEFT(INFO, 120))
MARIADB_ROWS = [
    (6, "system user", "", None, "Slave_IO", Decimal("61.2810"),
     "Waiting for master to send event", None),
    (38, "root", "localhost", None, "Query", Decimal("1.5040"), "User sleep",
     "SELECT SLEEP(30) AS waiting, PASSWORD('pw-1a2b3c') AS p"),
    (8, "system user", "", None, "Slave_SQL", Decimal("0.0010"),
     "Slave has read all relay log; waiting for more updates", None),
]


def test_rows_parse_with_times_and_scrubbed_statement() -> None:
    rows = parse_processlist(MARIADB_ROWS)
    assert [r.id for r in rows] == [6, 38, 8]
    io, mine, sql = rows
    assert io.user == "system user" and io.command == "Slave_IO" and io.time_s == 61.281
    assert io.info is None and io.db is None
    assert mine.info == "SELECT SLEEP(30) AS waiting, PASSWORD('***') AS p"
    assert sql.state == "Slave has read all relay log; waiting for more updates"


def test_a_row_replmon_cannot_read_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="8 columns"):
        parse_processlist([(1, "root")])
    with pytest.raises(ParseError, match="unreadable"):
        parse_processlist([("x", "root", "", None, "Query", "soon", None, None)])


@pytest.mark.parametrize(("sql", "leak"), [
    ("CREATE USER 'app'@'%' IDENTIFIED BY 's3cr3t'", "s3cr3t"),
    ("ALTER USER app IDENTIFIED WITH mysql_native_password BY \"dq-pass\"", "dq-pass"),
    ("GRANT ALL ON *.* TO 'a'@'h' IDENTIFIED BY 'it''s-secret'", "secret"),
    ("SET PASSWORD FOR 'app'@'%' = PASSWORD('old-style')", "old-style"),
    ("CHANGE MASTER TO MASTER_HOST='db163', MASTER_USER='repl', MASTER_PASSWORD='rpl-pw'",
     "rpl-pw"),
    ("CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD = 'src-pw', SOURCE_HOST='x'", "src-pw"),
    ("CREATE USER x IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')", "ed-pw"),
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'cut-by-the-length-li", "cut-by"),  # cut open
])
def test_scrub_masks_every_password_literal(sql: str, leak: str) -> None:
    out = scrub_statement(sql)
    assert leak not in out and "'***'" in out
    assert out.split()[0] == sql.split()[0]  # the statement stays readable


def test_scrub_leaves_statements_without_passwords_alone() -> None:
    sql = "UPDATE t SET name = 'identified' WHERE id = 7"
    assert scrub_statement(sql) == sql
    assert "'app'" in scrub_statement("CREATE USER 'app'@'%' IDENTIFIED BY 'x'")


def test_query_names_the_server_time_column() -> None:
    assert "TIME_MS / 1000" in processlist_query("mariadb")
    mysql = processlist_query("mysql")
    assert "TIME_MS" not in mysql and "ORDER BY TIME DESC" in mysql
    assert "LIMIT 10" in mysql and "CONNECTION_ID()" in mysql


def test_sessions_waiting_for_disk_space() -> None:
    # SPACE_WAITS_QUERY's row on the lab's MariaDB 10.11 with one INSERT into a MyISAM
    # table on a full tmpfs (State "Waiting for someone to free space" for 2 s), and idle
    assert parse_space_waits(((1, Decimal("2")),)) == (1, 2)
    assert parse_space_waits(((0, 0),)) == (0, 0)
    for garbled in ((), ((1,),), (("x", 2),)):
        with pytest.raises(ParseError, match="waiting for disk space"):
            parse_space_waits(garbled)
