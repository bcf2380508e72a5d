"""What an Oracle MySQL 9.7 replica says, said back in its own words: Source/Replica
statement and column names (8.4 and 9.x accept no other), the applier error's time as a
date, on a real pair (the lab's ``mysql-9.7``)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cdp import blank_charts, html_in_chromium
from labpool import MYSQL97, group

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.faults import empty_transactions_on_primary, mysql_healthy, stop_thread, wait_for
from replmon.lab.load import WriteLoad
from replmon.lab.node import LabNode
from replmon.model.findings import Severity
from replmon.output.html_report import html_report
from replmon.output.report import render_text, report
from replmon.session import Recorder, meta_for, open_recording
from replmon.session.rerun import rerun_checks
from replmon.testing.cuts import cut_every_incident
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


async def test_an_applier_error_names_the_workers_own_error_its_gtid_and_time(
        mysql97: Lab) -> None:
    """SHOW REPLICA STATUS says only "Coordinator stopped because there were error(s) in
    the worker(s)"; the worker's row in performance_schema holds the duplicate key, the
    table and the transaction: the finding must say them."""
    sc = LabScenario("duplicate key on MySQL 9.7", "mysql_replication", induce=duplicate_key,
                     min_severity=Severity.CRITICAL, load={})
    out = await run_lab_scenario(mysql97, sc)
    f = out.first(sc.check, sc.min_severity)
    assert f is not None
    primary_uuid = mysql97.primary.sql("SELECT @@server_uuid")[0][0]
    m = re.fullmatch(r"SQL thread stopped \(worker (\d+) error 1062 at (\S+ \S+) on "
                     r"(\S+): (.*)\)", f.title)
    assert m is not None, f.title
    # MySQL's own time form is '261126 05:16:36'; a person reads '2026-11-26 05:16:36'
    assert re.fullmatch(r"20\d\d-\d\d-\d\d \d\d:\d\d:\d\d", m[2]), m[2]
    assert m[3].startswith(f"{primary_uuid}:") and f.numbers["failed_gtid"] == m[3]
    assert f"Duplicate entry '{DUP_ID}' for key 't.PRIMARY'" in m[4]
    assert "Coordinator stopped" not in f.title and "lab.t" in m[4]
    assert f"SET GTID_NEXT='{m[3]}'" in f.next_step and "START REPLICA" in f.next_step
    assert f.numbers["worker_errno"] == 1062 and f.numbers["last_sql_errno"] == 1062


async def test_the_appliers_own_timing_is_read_beside_the_pairs(mysql97: Lab) -> None:
    """LAST_APPLIED_TRANSACTION_* under a write load: the latency of the newest applied
    transaction (source commit to end of apply here) is read, small on a healthy pair."""
    with WriteLoad(mysql97, rate=100):
        async with build_collector(build_config(mysql97.settings(0.5))) as c:
            ticks = [t async for t in c.ticks(4)]
    (ch,) = ticks[-1].replica.mysql.replication
    assert ch.applied_latency_s is not None and 0 <= ch.applied_latency_s < 5, ch
    assert ch.applying_age_s is not None and 0 <= ch.applying_age_s < 5, ch
    assert ch.worker_errno == 0 and ch.failed_gtid == ""


@contextlib.contextmanager
def second_source(lab: Lab) -> Iterator[LabNode]:
    """A third MySQL 9.7 server replicated into the lab's replica on channel 'second' (a
    multi-source replica), with a table of its own. Undone: the channel reset, the server
    stopped, its GTIDs given to the primary as empty transactions (so that the pair's
    GTID sets agree again once the channel is gone)."""
    node = LabNode(lab, "source2", server_id=3)
    node.install_mysql()
    node.start_mysql()
    r = lab.replica
    try:
        conn = node.root_connection()
        try:
            with conn.cursor() as cur:  # not replicated: the replica has this account
                cur.execute("SET SESSION sql_log_bin = 0")
                cur.execute(f"CREATE USER '{lab.repl_user}'@'%' IDENTIFIED BY "
                            f"'{lab.repl_password}'")
                cur.execute(f"GRANT REPLICATION SLAVE ON *.* TO '{lab.repl_user}'@'%'")
        finally:
            conn.close()
        node.sql("CREATE DATABASE second")
        node.sql("CREATE TABLE second.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
        node.sql("INSERT INTO second.t (v) VALUES (1), (2), (3)")
        r.sql("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%s,"
              " SOURCE_USER=%s, SOURCE_PASSWORD=%s, SOURCE_AUTO_POSITION=1,"
              " SOURCE_CONNECT_RETRY=1, GET_SOURCE_PUBLIC_KEY=1 FOR CHANNEL 'second'",
              node.mysql_port, lab.repl_user, lab.repl_password)
        r.sql("START REPLICA FOR CHANNEL 'second'")
        wait_for(lambda: r.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE "
                               "TABLE_SCHEMA = 'second'")[0][0] == 1, "channel second", 30)
        yield node
    finally:
        with contextlib.suppress(Exception):
            r.sql("STOP REPLICA FOR CHANNEL 'second'")
            r.sql("RESET REPLICA ALL FOR CHANNEL 'second'")
        node.stop()
        conn = r.root_connection()
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                cur.execute("DROP DATABASE IF EXISTS second")
        finally:
            conn.close()
        empty_transactions_on_primary(lab)
        mysql_healthy(lab)


async def test_two_sources_each_channel_judged_on_its_own(mysql97: Lab) -> None:
    """A multi-source replica: the second channel's applier stopped is its own finding
    (key 'second'), the default channel stays quiet, and the second source's GTIDs on
    the replica are not errant writes (they came through a channel)."""
    with second_source(mysql97) as src2:
        src2_uuid = src2.sql("SELECT @@server_uuid")[0][0]
        sc = LabScenario("second channel's SQL thread stopped", "mysql_replication",
                         induce=lambda lab: stop_channel(lab, "second"),
                         min_severity=Severity.CRITICAL)
        out = await run_lab_scenario(mysql97, sc)
    # the last tick whose replica sample was read (on a loaded machine the very last one's
    # can time out: then it holds no channel, which says nothing about the channels)
    read = [k for k, t in enumerate(out.ticks) if t.replica.mysql.status.ok]
    assert read and read[-1] >= len(out.ticks) - 3, [t.replica.mysql.status for t in out.ticks]
    last = out.ticks[read[-1]]
    names = sorted(ch.name for ch in last.replica.mysql.replication)
    assert names == ["", "second"]
    second = [ch for ch in last.replica.mysql.replication if ch.name == "second"][0]
    assert second.source_uuid == src2_uuid and not second.sql_running
    f = out.first(sc.check, sc.min_severity)
    assert f is not None and f.key == "second", f
    assert f.title == "SQL thread stopped (last_sql_errno 0)"
    binlog = [t.replica.mysql.binlog for t in out.ticks if t.replica.mysql.binlog][-1]
    assert src2_uuid in binlog.gtid_executed  # the second source's GTIDs are on the replica
    mine = [(g.check, g.key, g.title) for fs in out.opened.values() for g in fs]
    assert not [m for m in mine if m[0] == "errant_writes"], mine
    assert not [m for m in mine if m[0] == "mysql_replication" and m[1] != "second"], mine


@contextlib.contextmanager
def stop_channel(lab: Lab, channel: str) -> Iterator[None]:
    lab.replica.sql(f"STOP REPLICA SQL_THREAD FOR CHANNEL '{channel}'")
    try:
        yield
    finally:
        lab.replica.sql(f"START REPLICA SQL_THREAD FOR CHANNEL '{channel}'")


async def test_a_mysql97_recording_replays_and_rechecks_the_same(mysql97: Lab,
                                                                 tmp_path: Path) -> None:
    """A session on Oracle MySQL 9.7 with a stopped applier: the file gives back the
    live ticks, the re-run of today's checks opens what the live engine opened, and the
    report names the finding in MySQL's words."""
    config = build_config(mysql97.settings(0.5))
    engine = build_engine(config.checks)
    path = tmp_path / "mysql97.rmrec"
    live, updates = [], []
    with WriteLoad(mysql97, rate=200):
        async with build_collector(config) as collector, \
                Recorder(path, meta_for(config, note="mysql-9.7 live test")) as rec:
            async for tick in collector.ticks(16):
                if tick.seq == 3:
                    mysql97.replica.sql("STOP REPLICA SQL_THREAD")
                upd = engine.feed(tick)
                rec.write(tick, upd)
                live.append(tick)
                updates.append(upd)
    mysql97.replica.sql("START REPLICA SQL_THREAD")
    mysql_healthy(mysql97)
    r = open_recording(path)
    assert r.problems == [] and len(r) == 16
    assert list(r.ticks()) == live
    assert r.meta.nodes["replica"].mysql_version.startswith("9.7.")
    opened = [(f.check, f.key, f.title) for u in updates for f in u.opened]
    assert ("mysql_replication", "default", "SQL thread stopped (last_sql_errno 0)") in opened
    again = [(f.check, f.key, f.title) for u in rerun_checks(r) for f in u.opened]
    assert again == opened
    text = render_text(report(r))
    assert "SQL thread stopped" in text
    assert mysql97.monitor_password.encode() not in path.read_bytes()
    page = tmp_path / "mysql97.html"
    page.write_text(html_report(r), encoding="utf-8")
    shot, = html_in_chromium([page])  # the HTML report of a MySQL 9.7 file, in a browser
    assert shot.errors == [] and shot.drawn == len(shot.boxes) > 0
    assert blank_charts(shot) == [] and "SQL thread stopped (last_sql_errno 0)" in shot.text
    assert "9.7." in shot.text and mysql97.monitor_password not in page.read_text()
    # replmon cut around its incident: the cut's re-check finds it as the whole file does
    cuts = cut_every_incident(path, tmp_path, margin_s=1.0)
    assert cuts and all(want and got == want for _, want, got in cuts), cuts
    with open_recording(cuts[0][0].path) as piece:
        assert piece.meta.nodes["replica"].mysql_version.startswith("9.7.")


async def test_an_errant_write_with_a_tagged_gtid(mysql97: Lab) -> None:
    """MySQL 8.3+ tags GTIDs ('uuid:tag:n'): a write on the replica under a tag is an
    errant transaction named with its tag, and the pair agrees again once the primary
    has it (as an empty transaction)."""
    r_uuid = mysql97.replica.sql("SELECT @@server_uuid")[0][0]

    @contextlib.contextmanager
    def tagged_write(lab: Lab) -> Iterator[None]:
        conn = lab.replica.root_connection()
        try:
            with conn.cursor() as cur:
                cur.execute("SET gtid_next = 'AUTOMATIC:errant_tag'")
                cur.execute("CREATE TABLE lab.tagged (id INT PRIMARY KEY)")
                cur.execute("SET gtid_next = 'AUTOMATIC'")
                cur.execute("SET SESSION sql_log_bin = 0")
                cur.execute("DROP TABLE lab.tagged")  # the row is gone, the GTID stays
        finally:
            conn.close()
        try:
            yield
        finally:
            empty_transactions_on_primary(lab)
            mysql_healthy(lab)

    sc = LabScenario("a tagged errant write on MySQL 9.7", "errant_writes",
                     induce=tagged_write, load={})
    out = await run_lab_scenario(mysql97, sc)
    f = out.first(sc.check, sc.min_severity)
    assert f is not None, out.opened
    assert f.title == f"1 errant transaction on the replica, not from the primary: first " \
                      f"{r_uuid}:errant_tag:1"
    assert f.numbers["count"] == 1
