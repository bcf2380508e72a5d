"""The positions read (``mysql_reads.read_positions``) parsed from rows as the servers return
them: MariaDB 10.11 captured on the lab (pymysql tuples), MySQL 8.0/8.4 as their manuals
print SHOW MASTER STATUS / SHOW BINARY LOG STATUS; pt-heartbeat's rows as the one heartbeat
read (``mysql_lag_reads``) returns them: ``UNIX_TIMESTAMP(ts)`` of pt-heartbeat's
varchar(26) ISO ts, a Decimal with microseconds."""

from __future__ import annotations

from decimal import Decimal

import pytest

from replmon.errors import ParseError
from replmon.sources.mysql_binlog_parse import (
    binlog_status_query,
    build_binlog_status,
    parse_binlog_status,
)
from replmon.sources.mysql_lag_reads import heartbeat_query, parse_heartbeat_epochs, quote_table

# MariaDB 10.11.x on the lab: SELECT @@gtid_binlog_pos, @@gtid_binlog_state, @@server_id, '',
# UNIX_TIMESTAMP(NOW(6)) and SHOW MASTER STATUS
MARIADB_ROW = ("0-1-1682", "0-1-1682", 1, "", Decimal("1795604766.063139"))
MARIADB_MASTER_STATUS = ("binlog.000001", 411085, "", "")
# MySQL 8.4 manual, SHOW BINARY LOG STATUS: File, Position, Binlog_Do_DB,
# Binlog_Ignore_DB, Executed_Gtid_Set
MYSQL_BINARY_LOG_STATUS = ("source-bin.000002", 1307, "test", "manual,mysql",
                           "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5")


def test_mariadb_reading() -> None:
    file, pos = parse_binlog_status(MARIADB_MASTER_STATUS)
    b = build_binlog_status(MARIADB_ROW, file=file, position=pos, sent_wall=1795604766.06,
                            elapsed_ms=0.31)
    assert (b.file, b.position, b.gtid_executed, b.gtid_binlog_state, b.server_id) == (
        "binlog.000001", 411085, "0-1-1682", "0-1-1682", 1)
    assert b.server_time == pytest.approx(1795604766.063139)
    assert b.server_uuid == "" and b.error is None


def test_mysql_reading_and_its_multiline_gtid_set() -> None:
    row = ("8e349184-bc14-11e3-8d4c-0800272864ba:1-30,\n8e3648e4-bc14-11e3-8d4c-0800272864ba:1-7",
           "", 163, "8e349184-bc14-11e3-8d4c-0800272864ba", "1795604766.063139")
    file, pos = parse_binlog_status(MYSQL_BINARY_LOG_STATUS)
    b = build_binlog_status(row, file=file, position=pos)
    assert (b.file, b.position, b.server_id) == ("source-bin.000002", 1307, 163)
    assert b.gtid_executed == ("8e349184-bc14-11e3-8d4c-0800272864ba:1-30,"
                               "8e3648e4-bc14-11e3-8d4c-0800272864ba:1-7")


def test_binary_log_off_is_no_position() -> None:
    assert parse_binlog_status(None) == ("", None)
    with pytest.raises(ParseError):
        parse_binlog_status(("only-a-file",))
    with pytest.raises(ParseError):
        build_binlog_status(("0-1-5",))


def test_the_statement_per_server() -> None:
    assert binlog_status_query("mysql", "8.4.3") == "SHOW BINARY LOG STATUS"
    assert binlog_status_query("mysql", "8.0.40") == "SHOW MASTER STATUS"
    assert binlog_status_query("mariadb", "10.11.19-MariaDB") == "SHOW MASTER STATUS"


def test_pt_heartbeat_rows() -> None:
    """server_id -> epoch seconds; a row without a server_id, or whose ts the server could
    not read (NULL, 0), is left out; anything else that is not a number is refused."""
    rows = [(1, Decimal("1795604766.500000")), (2, Decimal("1795604705.000000")),
            (None, Decimal("1795604766.0")), (3, None), (4, Decimal("0.000000"))]
    hb = parse_heartbeat_epochs(rows)
    assert set(hb) == {1, 2} and hb[1] - hb[2] == pytest.approx(61.5)
    with pytest.raises(ParseError):
        parse_heartbeat_epochs([(1, "yesterday")])
    assert heartbeat_query(quote_table("percona.heartbeat")) == \
        "SELECT server_id, UNIX_TIMESTAMP(ts) FROM `percona`.`heartbeat`"


@pytest.mark.parametrize("bad", ["heartbeat", "a.b.c", "p`; DROP TABLE x", "a.b c", ""])
def test_heartbeat_table_name_is_refused_unless_db_dot_table(bad: str) -> None:
    with pytest.raises(ValueError, match="expected db.table"):
        quote_table(bad)
    assert quote_table("percona.heartbeat") == "`percona`.`heartbeat`"
