"""MysqlSource against the lab's real MariaDB primary + replica (GTID, binlog_format=ROW).

The lab is shared by the whole session: every test that changes it (a stopped
thread, a paused or restarted server, an extra account) restores it in ``finally``."""

from __future__ import annotations

import asyncio
import logging
import os
import time

import pymysql
import pytest

from replmon.endpoints import MysqlEndpoint
from replmon.lab import Lab
from replmon.model.base import SourceState
from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates, derive_mysql_rates
from replmon.sources.mysql import MysqlSource

pytestmark = pytest.mark.live


async def sample_once(endpoint: MysqlEndpoint, **kwargs: float) -> MysqlSample:
    async with MysqlSource(endpoint, **kwargs) as src:
        return await src.sample()


def numbers(rates: MysqlRates) -> list[float]:
    """Every numeric rate in ``rates`` (per-counter ones included), Nones left out."""
    dump = rates.model_dump()
    out = [v for v in dump.pop("counters").values() if v is not None]
    out += [v for v in dump.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    return out


def write_load(lab: Lab, updates: int, inserts: int) -> None:
    """Single-row autocommit UPDATEs of existing ids and INSERTs on the primary, as root
    over its unix socket on one connection (node.sql() would connect per statement)."""
    conn = pymysql.connect(
        unix_socket=lab.primary.mysql_socket, user="root", autocommit=True, ssl_disabled=True
    )
    try:
        with conn.cursor() as cur:
            for i in range(1, updates + 1):
                cur.execute("UPDATE lab.t SET v = v + 1 WHERE id = %s", (i,))
            for i in range(inserts):
                cur.execute("INSERT INTO lab.t (v) VALUES (%s)", (i,))
    finally:
        conn.close()


def ensure_rows(lab: Lab, n: int) -> None:
    have = lab.primary.sql("SELECT COUNT(*) FROM lab.t")[0][0]
    if have < n:
        lab.primary.sql("INSERT INTO lab.t (v) VALUES " + ",".join(["(0)"] * (n - have)))
    lab.wait_replica_caught_up()


async def test_statement_and_row_counters_move_under_write_load(lab: Lab) -> None:
    ensure_rows(lab, 200)
    async with (
        MysqlSource(lab.primary.mysql_endpoint()) as psrc,
        MysqlSource(lab.replica.mysql_endpoint()) as rsrc,
    ):
        p1, r1 = await psrc.sample(), await rsrc.sample()
        write_load(lab, updates=200, inserts=60)
        lab.wait_replica_caught_up()
        p2, r2 = await psrc.sample(), await rsrc.sample()
    for s in (p1, p2, r1, r2):
        assert s.status.ok, s.status
        assert (s.flavour, s.row_counters) == ("mariadb", "handler")

    assert p2.counters["Com_update"] - p1.counters["Com_update"] >= 200
    assert p2.counters["Com_insert"] - p1.counters["Com_insert"] >= 60
    assert p2.rows_updated is not None
    assert p1.rows_updated is not None
    assert p2.rows_updated - p1.rows_updated >= 200
    prates = derive_mysql_rates(p1, p2)
    assert prates.reset is None
    assert prates.com_update_per_s is not None
    assert prates.com_update_per_s > 0
    assert prates.rows_updated_per_s is not None
    assert prates.rows_updated_per_s > 0
    assert prates.rows_inserted_per_s is not None
    assert prates.rows_inserted_per_s > 0
    assert prates.qps is not None
    assert prates.qps > 0
    assert prates.rows_updated_per_update == pytest.approx(1.0, abs=0.05)

    # The replica applies the primary's ROW events: its rows move too.
    rrates = derive_mysql_rates(r1, r2)
    assert rrates.rows_updated_per_s is not None
    assert rrates.rows_updated_per_s > 0
    assert r2.rows_updated is not None
    assert r1.rows_updated is not None
    assert r2.rows_updated - r1.rows_updated >= 200
    assert all(v >= 0 for v in numbers(prates) + numbers(rrates))


async def test_replica_status_on_replica_empty_on_primary(lab: Lab) -> None:
    lab.wait_replica_caught_up()
    replica = await sample_once(lab.replica.mysql_endpoint())
    primary = await sample_once(lab.primary.mysql_endpoint())

    assert replica.status.ok, replica.status
    (ch,) = replica.replication
    assert (ch.name, ch.io_running, ch.sql_running, ch.using_gtid) == ("", "Yes", True, True)
    assert ch.seconds_behind is not None
    assert 0 <= ch.seconds_behind <= 5
    assert (ch.source_host, ch.source_port, ch.source_server_id) == (
        "127.0.0.1", lab.primary.mysql_port, 1,
    )
    assert ch.gtid_executed
    assert ch.last_io_errno == 0
    assert ch.last_sql_errno == 0
    assert replica.replication_error is None
    assert (replica.variables["read_only"], replica.variables["server_id"]) == ("ON", "2")
    assert replica.variables["binlog_format"] == "ROW"
    assert replica.variables_age_s is not None
    assert 0 <= replica.variables_age_s < 1
    assert replica.rtt_ms is not None
    assert 0 < replica.rtt_ms < 100
    assert replica.uptime_s is not None
    assert replica.uptime_s >= 0
    assert "MariaDB" in replica.version

    assert primary.status.ok, primary.status
    assert primary.replication == []
    assert primary.replication_error is None
    assert (primary.variables["read_only"], primary.variables["server_id"]) == ("OFF", "1")


async def test_stopped_sql_thread_shows_in_next_sample(lab: Lab) -> None:
    async with MysqlSource(lab.replica.mysql_endpoint()) as src:
        before = await src.sample()
        assert before.replication[0].sql_running is True
        try:
            lab.replica.sql("STOP SLAVE SQL_THREAD")
            stopped = await src.sample()
        finally:
            lab.replica.sql("START SLAVE SQL_THREAD")
            lab.wait_replica_caught_up()
        after = await src.sample()
    assert stopped.status.ok, stopped.status
    (ch,) = stopped.replication
    assert (ch.io_running, ch.sql_running, ch.seconds_behind) == ("Yes", False, None)
    assert after.replication[0].sql_running is True


async def test_primary_restart_gives_reset_and_no_negative_rates(lab: Lab) -> None:
    async with MysqlSource(lab.primary.mysql_endpoint()) as src:
        first = await src.sample()
        # a lab started for this test reads Uptime 0, as the restarted server will: up 2 s
        # first, so "less than before" can tell the restart (this test first on a worker)
        for _ in range(10):
            if first.uptime_s is None or first.uptime_s >= 2:
                break
            await asyncio.sleep(0.5)
            first = await src.sample()
        assert first.status.ok, first.status
        try:
            lab.primary.restart_mysql()
        finally:
            lab.wait_replica_caught_up(timeout=30)
        # the kept connection is dead; the source replaces it within this sample
        second = await src.sample()
        await asyncio.sleep(0.2)
        third = await src.sample()
    assert second.status.ok, second.status
    assert third.status.ok, third.status
    assert second.uptime_s is not None
    assert first.uptime_s is not None
    assert second.uptime_s < first.uptime_s
    reset = derive_mysql_rates(first, second)
    assert reset.reset == "restart"
    assert numbers(reset) == [reset.dt_s]  # nothing but the interval itself
    after = derive_mysql_rates(second, third)
    assert after.reset is None
    assert after.qps is not None
    assert all(v >= 0 for v in numbers(after))


async def test_flush_status_gives_flush_reset(lab: Lab) -> None:
    async with MysqlSource(lab.replica.mysql_endpoint()) as src:
        first = await src.sample()
        await asyncio.sleep(1.1)  # Uptime_since_flush_status counts whole seconds
        lab.replica.sql("FLUSH LOCAL STATUS")
        second = await src.sample()
    assert first.status.ok
    assert second.status.ok
    rates = derive_mysql_rates(first, second)
    assert rates.reset == "flush"
    assert rates.qps is None
    assert rates.counters == {}


async def test_closed_port_is_unreachable_and_backs_off(lab: Lab) -> None:
    endpoint = MysqlEndpoint(host="127.0.0.1", port=lab.free_port(), user="replmon",
                             connect_timeout=0.5)
    async with MysqlSource(endpoint) as src:
        started = time.monotonic()
        first = await src.sample()
        second = await src.sample()  # within the 1 s backoff: no new attempt
        elapsed = time.monotonic() - started
    assert first.status.state is SourceState.UNREACHABLE, first.status
    assert first.status.error is not None
    assert "Can't connect" in first.status.error
    assert "refused" in first.status.error
    assert first.status.error.startswith(f"replmon@127.0.0.1:{endpoint.port}: ")
    assert first.status.hint
    assert second.status.state is SourceState.UNREACHABLE
    assert second.status.error is not None
    assert "next connection attempt" in second.status.error
    assert elapsed < 0.5
    assert first.counters == {}
    assert first.replication == []


async def test_wrong_password_is_auth_and_never_shown(
    lab: Lab, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-" + os.urandom(8).hex()
    endpoint = lab.replica.mysql_endpoint(password=wrong)
    src = MysqlSource(endpoint)
    async with src:
        s = await src.sample()
    assert s.status.state is SourceState.AUTH, s.status
    assert s.status.error is not None
    assert "Access denied" in s.status.error
    assert "using password: YES" in s.status.error
    assert s.status.hint
    texts = [s.model_dump_json(), str(s.status), repr(s), repr(src), repr(endpoint),
             str(endpoint), caplog.text]
    assert caplog.text  # the failure was logged, and is checked below
    for text in texts:
        assert wrong not in text
    # nor does the right password leak from a good sample
    good = await sample_once(lab.replica.mysql_endpoint())
    assert good.status.ok
    assert lab.monitor_password not in good.model_dump_json() + caplog.text


async def test_paused_server_times_out_then_recovers(lab: Lab) -> None:
    async with MysqlSource(lab.replica.mysql_endpoint(), timeout=0.5) as src:
        assert (await src.sample()).status.ok
        lab.replica.pause_mysql()
        try:
            t0 = time.monotonic()
            hung = await src.sample()
            t1 = time.monotonic()
            still = await src.sample()
            t2 = time.monotonic()
        finally:
            lab.replica.resume_mysql()
        assert hung.status.state is SourceState.TIMEOUT, hung.status
        assert 0.4 <= t1 - t0 < 0.9
        assert still.status.state is SourceState.TIMEOUT, still.status
        assert still.status.error is not None
        assert "still pending" in still.status.error
        assert t2 - t1 < 0.1
        recovered = None
        for _ in range(20):
            s = await src.sample()
            if s.status.ok:
                recovered = s
                break
            await asyncio.sleep(0.2)
    assert recovered is not None, "source did not recover after SIGCONT"
    assert recovered.replication[0].io_running in ("Yes", "Connecting")


async def test_missing_replication_privilege_keeps_sample_ok(lab: Lab) -> None:
    user, password = "replmon_nogrant", "ng-" + os.urandom(6).hex()
    lab.primary.sql(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
    try:
        lab.wait_replica_caught_up()
        s = await sample_once(lab.replica.mysql_endpoint(user=user, password=password))
    finally:
        lab.primary.sql(f"DROP USER '{user}'@'%'")
        lab.wait_replica_caught_up()
    assert s.status.ok, s.status
    assert s.counters["Questions"] > 0
    assert s.replication == []
    assert s.replication_error is not None
    assert "(1227)" in s.replication_error
    assert s.replication_hint is not None
    assert "REPLICA MONITOR" in s.replication_hint
    assert password not in s.model_dump_json()


async def test_cpu_cost_per_sample(lab: Lab) -> None:
    """Process CPU (all threads) of one sample; printed for the report, loosely bounded."""
    async with MysqlSource(lab.replica.mysql_endpoint()) as src:
        await src.sample()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(100):
            s = await src.sample()
            assert s.status.ok, s.status
        cpu = (time.process_time() - cpu0) / 100
        wall = (time.perf_counter() - wall0) / 100
    print(f"MysqlSource.sample(): {cpu * 1000:.2f} ms CPU, {wall * 1000:.2f} ms wall per call")
    assert cpu < 0.05


async def test_close_while_hung_does_not_block_or_leak(lab: Lab) -> None:
    src = MysqlSource(lab.replica.mysql_endpoint(), timeout=0.3)
    await src.open()
    assert (await src.sample()).status.ok
    lab.replica.pause_mysql()
    try:
        hung = await src.sample()
        t0 = time.monotonic()
        await src.close()  # must not wait for the blocked worker thread
        assert time.monotonic() - t0 < 0.1
    finally:
        lab.replica.resume_mysql()
    assert hung.status.state is SourceState.TIMEOUT
    for _ in range(30):  # the worker finishes after SIGCONT and drops its connection
        if src._conn is None:
            break
        await asyncio.sleep(0.1)
    assert src._conn is None


async def test_variables_are_reread_when_due(lab: Lab) -> None:
    async with MysqlSource(lab.replica.mysql_endpoint(), variables_every=0.4) as src:
        first = await src.sample()
        await asyncio.sleep(0.2)
        cached = await src.sample()
        await asyncio.sleep(0.3)
        fresh = await src.sample()
    assert first.variables_age_s is not None
    assert cached.variables_age_s is not None
    assert fresh.variables_age_s is not None
    assert first.variables_age_s < 0.1
    assert cached.variables_age_s >= 0.2
    assert fresh.variables_age_s < 0.1
    assert first.variables == cached.variables == fresh.variables


async def test_a_switchover_rereads_the_variables_at_once(lab: Lab) -> None:
    """The replica promoted (its channel gone, read_only OFF) shows read_only OFF in the
    sample that sees its channel gone, not variables_every later (#40: the recorded
    switchover showed the new primary "ro on" for 30 s); the same made a replica again."""
    from replmon.lab.switch import switched

    node = lab.replica
    async with MysqlSource(node.mysql_endpoint(), variables_every=3600) as src:
        before = await src.sample()
        with switched(lab, ("mysql",)):
            promoted = await src.sample()
        back = await src.sample()
    assert before.replication and before.variables["read_only"] == "ON"
    assert not promoted.replication and promoted.variables["read_only"] == "OFF"
    assert promoted.variables_age_s is not None and promoted.variables_age_s < 1.0
    assert back.replication and back.variables["read_only"] == "ON"


async def test_not_a_mysql_server_is_an_error_status(lab: Lab) -> None:
    """Pointed at Redis: the handshake is garbage; the sample fails, sample() never raises."""
    endpoint = MysqlEndpoint(host="127.0.0.1", port=lab.primary.redis_port, user="replmon",
                             connect_timeout=0.5, read_timeout=0.5)
    s = await sample_once(endpoint)
    assert s.status.state in (SourceState.ERROR, SourceState.UNREACHABLE), s.status
    assert s.status.error


async def test_processlist_only_when_asked_scrubbed_of_passwords(lab: Lab) -> None:
    """A statement that runs on the replica shows in its processlist (user, time, cut and
    scrubbed statement) once asked, and only then: not read otherwise, read every
    processlist_every while wanted, once after capture_processlist."""
    secret = "pw-" + os.urandom(6).hex()
    sql = f"SELECT SLEEP(30) AS waiting, PASSWORD('{secret}') AS p /* {'x' * 150} */"
    with lab.replica.running(sql) as ident:
        async with MysqlSource(lab.replica.mysql_endpoint(), processlist_every=0.5) as src:
            plain = await src.sample()
            assert plain.status.ok and plain.processlist is None  # no cost unless asked
            src.want_processlist(10)
            wanted = await src.sample()
            assert wanted.processlist is not None and wanted.processlist_error is None
            rows = {r.id: r for r in wanted.processlist}
            mine = rows[ident]
            assert mine.user == "root" and mine.command == "Query"
            assert mine.info is not None and mine.info.startswith("SELECT SLEEP(30) AS waiting")
            assert len(mine.info) <= 125 and "PASSWORD('***')" in mine.info
            assert mine.time_s >= 0.2
            assert any(r.command == "Slave_SQL" for r in wanted.processlist)  # the applier
            assert secret not in wanted.model_dump_json()
            times = [r.time_s for r in wanted.processlist]
            assert times == sorted(times, reverse=True)
            between = await src.sample()
            assert between.processlist is None  # within processlist_every
            await asyncio.sleep(0.5)
            assert (await src.sample()).processlist is not None  # due again
            src.want_processlist(0)
            await asyncio.sleep(0.5)
            assert (await src.sample()).processlist is None  # stopped
            src.capture_processlist()
            once = await src.sample()
            assert once.processlist is not None and ident in {r.id for r in once.processlist}
            assert (await src.sample()).processlist is None  # once only
