"""What an Oracle MySQL 9.7 replica says, said back in its own words: Source/Replica
statement and column names (8.4 and 9.x accept no other), the applier error's time as a
date, on a real pair (the lab's ``mysql-9.7``)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest
from labpool import MYSQL97, group

from replmon.lab import Lab
from replmon.model.findings import Severity
from replmon.scenarios import mysql_healthy, stop_thread
from replmon.testing.scenarios import LabScenario, run_lab_scenario

pytestmark = [pytest.mark.live, group(MYSQL97)]

DUP_ID = 900001


@contextlib.contextmanager
def duplicate_key(lab: Lab) -> Iterator[None]:
    """A row written on the replica outside the binlog, then the same id on the primary:
    the applier stops on error 1062. Undone: the replica's row removed (again outside
    the binlog, no errant GTID), the applier restarted, the primary's row deleted."""
    def on_replica(stmt: str) -> None:
        conn = lab.replica.root_connection()
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                cur.execute(stmt)
        finally:
            conn.close()

    on_replica(f"INSERT INTO lab.t (id, v) VALUES ({DUP_ID}, 1)")
    lab.primary.sql(f"INSERT INTO lab.t (id, v) VALUES ({DUP_ID}, 2)")
    try:
        yield
    finally:
        on_replica(f"DELETE FROM lab.t WHERE id = {DUP_ID}")
        lab.replica.sql("START REPLICA SQL_THREAD")
        lab.primary.sql(f"DELETE FROM lab.t WHERE id = {DUP_ID}")
        mysql_healthy(lab)


async def test_a_stopped_applier_is_told_in_mysqls_words(mysql97: Lab) -> None:
    sc = LabScenario("SQL thread stopped on MySQL 9.7", "mysql_replication",
                     induce=lambda lab: stop_thread(lab, "SQL_THREAD"),
                     min_severity=Severity.CRITICAL)
    out = await run_lab_scenario(mysql97, sc)
    f = out.first(sc.check, sc.min_severity)
    assert f is not None
    assert f.title == "SQL thread stopped (last_sql_errno 0)"
    assert "STOP REPLICA SQL_THREAD" in f.cause and "START REPLICA SQL_THREAD" in f.next_step
    assert "SLAVE" not in f.cause + f.next_step
    pair_lag = out.first("pair_lag")
    if pair_lag is not None:  # the write load kept the primary moving: measured lag
        assert "Seconds_Behind_Source says NULL" in pair_lag.title, pair_lag.title


async def test_an_applier_error_gives_its_time_as_a_date(mysql97: Lab) -> None:
    sc = LabScenario("duplicate key on MySQL 9.7", "mysql_replication", induce=duplicate_key,
                     min_severity=Severity.CRITICAL, load={})
    out = await run_lab_scenario(mysql97, sc)
    f = out.first(sc.check, sc.min_severity)
    assert f is not None
    # MySQL says '261126 05:16:36'; a person reads '2026-11-26 05:16:36'
    m = re.search(r"last_sql_errno (\d+) at (\S+ \S+):", f.title)
    assert m is not None, f.title
    assert m[1] == "1062"
    assert re.fullmatch(r"20\d\d-\d\d-\d\d \d\d:\d\d:\d\d", m[2]), m[2]
    assert f.numbers["last_sql_error_time"] == m[2]
