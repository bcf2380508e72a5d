"""derive_mysql_rates on real captured pairs (tests/fixtures/mysql/): rates over real
monotonic time, row vs statement counters, and no rates across a restart or FLUSH STATUS."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from replmon.model.base import SourceState, SourceStatus
from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates, derive_mysql_rates
from replmon.sources.mysql_parse import build_mysql_sample, parse_global_status, parse_variables

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mysql"


def _load_helper() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mysql_rows", FIXTURES / "mysql_rows.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rows = _load_helper()
MARIADB = "10.11.19-MariaDB-0+deb12u1-log"


def load(
    status: str, mono: float, variables: str | None = None, version: str = MARIADB
) -> MysqlSample:
    s = build_mysql_sample(
        version=version,
        status=parse_global_status(rows.status_rows(status)),
        variables=parse_variables(rows.status_rows(variables)) if variables else {},
    )
    return s.model_copy(update={"mono": mono, "wall": 1_700_000_000.0 + mono})


# The lab captures were taken ~2 s apart (Uptime 151 -> 153); use exactly 2 s.
PRIMARY_A = load("mariadb10.11_lab_primary_status_a.tsv", 100.0)
PRIMARY_B = load("mariadb10.11_lab_primary_status_b.tsv", 102.0)
REPLICA_A = load("mariadb10.11_lab_replica_status_a.tsv", 100.0)
REPLICA_B = load("mariadb10.11_lab_replica_status_b.tsv", 102.0)


def test_primary_rates_statements_and_rows() -> None:
    r = derive_mysql_rates(PRIMARY_A, PRIMARY_B)
    assert (r.dt_s, r.reset, r.row_counters) == (2.0, None, "handler")
    # 250 UPDATEs of existing ids + 50 of missing ids, 40 INSERTs, 10 DELETEs, no SELECTs
    assert r.com_update_per_s == pytest.approx(300 / 2)
    assert r.com_insert_per_s == pytest.approx(40 / 2)
    assert r.com_delete_per_s == pytest.approx(10 / 2)
    assert r.com_select_per_s == 0.0
    assert r.iud_per_s == pytest.approx(350 / 2)
    assert r.qps == pytest.approx((398 - 45) / 2)
    # rows actually changed: the 50 UPDATEs that matched nothing changed no row
    assert r.rows_updated_per_s == pytest.approx(250 / 2)
    assert r.rows_inserted_per_s == pytest.approx(40 / 2)
    assert r.rows_deleted_per_s == pytest.approx(10 / 2)
    assert r.rows_read_per_s == pytest.approx((269 - 9) / 2)
    assert r.rows_updated_per_update == pytest.approx(250 / 300)
    # every counter gets a rate, by status name
    assert set(r.counters) == set(PRIMARY_B.counters)
    assert r.counters["Com_update"] == pytest.approx(150.0)
    assert r.counters["Bytes_received"] == pytest.approx((19177 - 4976) / 2)
    # buffer pool: 4144 logical reads, no physical read in the interval
    assert r.bp_read_requests_per_s == pytest.approx((6113 - 1969) / 2)
    assert r.bp_hit_pct == pytest.approx(100.0)


def test_replica_applies_row_events() -> None:
    """MariaDB counts applied row events in Com_*; Handler_write/delete also carry one
    mysql.gtid_slave_pos insert (and later purge) per replicated transaction."""
    r = derive_mysql_rates(REPLICA_A, REPLICA_B)
    assert r.qps == pytest.approx(1.0)  # only our own two polls
    assert r.com_update_per_s == pytest.approx(250 / 2)  # row events, not the 300 statements
    assert r.rows_updated_per_s == pytest.approx(250 / 2)
    assert r.rows_inserted_per_s == pytest.approx((40 + 300) / 2)
    assert r.rows_deleted_per_s == pytest.approx((10 + 256) / 2)


def test_rates_use_real_elapsed_time() -> None:
    late = PRIMARY_B.model_copy(update={"mono": 104.0})
    assert derive_mysql_rates(PRIMARY_A, late).com_update_per_s == pytest.approx(300 / 4)


def test_restart_gives_no_rates() -> None:
    """Uptime fell: the MariaDB dev server's reading (Uptime 5322) followed by the lab
    primary's (Uptime 153) looks exactly like a restart."""
    before = load("mariadb10.11_global_status.tsv", 50.0)
    r = derive_mysql_rates(before, PRIMARY_B)
    assert (r.reset, r.dt_s) == ("restart", 52.0)
    assert r.counters == {} and r.errors_by_code_per_s == {}
    values = r.model_dump(exclude={"dt_s", "reset", "counters", "errors_by_code_per_s"})
    assert all(v is None for v in values.values()), values


def test_flush_status_gives_no_rates() -> None:
    flushed = PRIMARY_B.model_copy(update={"uptime_since_flush_s": 1})
    r = derive_mysql_rates(PRIMARY_A, flushed)
    assert r.reset == "flush"
    assert (r.qps, r.rows_updated_per_s, r.bp_hit_pct, r.counters) == (None, None, None, {})


def test_version_change_counts_as_restart() -> None:
    upgraded = PRIMARY_B.model_copy(update={"version": "10.11.20-MariaDB-log"})
    assert derive_mysql_rates(PRIMARY_A, upgraded).reset == "restart"


def test_one_counter_going_down_gives_none_for_that_counter_only() -> None:
    counters = dict(PRIMARY_B.counters, Bytes_received=1)
    cur = PRIMARY_B.model_copy(update={"counters": counters})
    r = derive_mysql_rates(PRIMARY_A, cur)
    assert r.reset is None
    assert r.counters["Bytes_received"] is None
    assert r.counters["Com_update"] == pytest.approx(150.0)
    assert r.com_update_per_s == pytest.approx(150.0)


def test_no_previous_failed_or_frozen_clock_gives_empty_rates() -> None:
    down = SourceStatus(state=SourceState.UNREACHABLE, error="down")
    failed = MysqlSample(status=down, mono=103.0)
    assert derive_mysql_rates(None, PRIMARY_B) == MysqlRates()
    assert derive_mysql_rates(failed, PRIMARY_B) == MysqlRates()
    assert derive_mysql_rates(PRIMARY_A, failed) == MysqlRates()
    assert derive_mysql_rates(PRIMARY_B, PRIMARY_B) == MysqlRates()


def test_hit_pct_none_without_requests_and_orzdba_formula() -> None:
    idle = PRIMARY_A.model_copy(update={"mono": 101.0})
    assert derive_mysql_rates(PRIMARY_A, idle).bp_hit_pct is None
    busy = dict(PRIMARY_A.counters)
    busy["Innodb_buffer_pool_read_requests"] += 1000
    busy["Innodb_buffer_pool_reads"] += 10
    cur = PRIMARY_A.model_copy(update={"mono": 101.0, "counters": busy})
    assert derive_mysql_rates(PRIMARY_A, cur).bp_hit_pct == pytest.approx(99.0)


def test_row_family_change_gives_no_row_rates() -> None:
    mysql8 = load("mysql8.0.30_global_status.txt", 103.0, version="8.0.30")
    mysql8 = mysql8.model_copy(update={"uptime_s": 10_000, "uptime_since_flush_s": 10_000,
                                       "version": PRIMARY_B.version})
    r = derive_mysql_rates(PRIMARY_B, mysql8)
    assert r.row_counters is None
    assert r.rows_updated_per_s is None
    assert r.rows_updated_per_update is None


def test_innodb_family_rates() -> None:
    a = load("mysql8.0.30_global_status.txt", 10.0, version="8.0.30")
    counters = dict(a.counters, Innodb_rows_updated=500, Com_update=1000)
    b = a.model_copy(update={"mono": 11.0, "uptime_s": 153, "uptime_since_flush_s": 153,
                             "counters": counters, "rows_updated": 500})
    r = derive_mysql_rates(a, b)
    assert r.row_counters == "innodb"
    assert r.rows_updated_per_s == pytest.approx(500.0)
    assert r.rows_updated_per_update == pytest.approx(0.5)  # seed 004: half the UPDATEs miss
