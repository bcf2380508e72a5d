"""mysql_replication and redis_replication on the lab: broken threads, a replica applying
an old statement, a hung replica, a Redis link down and a full resync, and a healthy
pair under load that stays quiet."""

from __future__ import annotations

import pytest

from replmon.lab import Lab
from replmon.model.findings import Finding, Severity
from replmon.testing.scenarios import LabScenario, Outcome, onset_deadline_s, run_lab_scenario
from replmon.testing.scenarios import replication as R

pytestmark = pytest.mark.live


def by_name(fragment: str) -> LabScenario:
    (sc,) = [s for s in R.LAB if fragment in s.name]
    return sc


async def flagged(lab: Lab, fragment: str) -> tuple[Outcome, Finding]:
    sc = by_name(fragment)
    out = await run_lab_scenario(lab, sc, until_found=True)
    f = out.first(sc.check, sc.min_severity)
    assert f is not None, [(s, [(g.check, g.title) for g in fs]) for s, fs in out.opened.items()]
    assert out.on_time(sc.min_severity), out.onset_delay_s(sc.min_severity)
    return out, f


def healthy_first(out: Outcome, check: str) -> None:
    """Nothing of ``check`` above info before the situation was induced."""
    assert not [f for f in out.above_info(out.onset_seq) if f.check == check]


async def test_sql_thread_stopped_flags_critical(lab: Lab) -> None:
    out, f = await flagged(lab, "SQL thread stopped")
    healthy_first(out, "mysql_replication")
    assert (f.node, f.key) == ("replica", "default")
    assert f.title == "SQL thread stopped (last_sql_errno 0)"


async def test_io_thread_stopped_flags_critical(lab: Lab) -> None:
    _, f = await flagged(lab, "IO thread stopped")
    assert f.title == f"IO thread not running (source 127.0.0.1:{lab.primary.mysql_port})"
    assert f.numbers["io_running"] == "No"


async def test_replica_applying_an_old_statement_shows_its_lag(lab: Lab) -> None:
    _, f = await flagged(lab, "statement begun")
    lag = f.numbers["lag_s"]
    assert isinstance(lag, int) and R.LONG_STATEMENT_S <= lag < R.LONG_STATEMENT_S + 30
    assert "over 300 s" in f.title


async def test_applier_blocked_under_load_shows_growing_lag(lab: Lab) -> None:
    # Growth needs growth_min_span_s of readings, so this one is not held to 3 s: the
    # scenario shortens the span to 4 s; it must be seen within that plus 3 s.
    out = await run_lab_scenario(lab, R.LAG_GROWTH, until_found=True)
    f = out.first()
    assert f is not None and f.severity is Severity.WARNING
    delay = out.onset_delay_s()
    assert delay is not None and delay <= 4 + onset_deadline_s(R.LAG_GROWTH.interval), delay
    rate = f.numbers["growth_s_per_min"]
    assert isinstance(rate, float) and 30 < rate < 90, f.title  # 1 s of lag per second
    assert "growing" in f.title


async def test_replica_mysql_paused_cannot_see_replication(lab: Lab) -> None:
    _, f = await flagged(lab, "MySQL paused")
    assert (f.node, f.key) == ("replica", "")
    assert "replica MySQL timeout" in f.title and "cannot see replication at all" in f.title


async def test_redis_link_down_flags_critical(lab: Lab) -> None:
    out, f = await flagged(lab, "link down")
    healthy_first(out, "redis_replication")
    assert (f.node, f.key) == ("replica", "link/down")
    # Redis prints master_last_io_seconds_ago:-1 with no link: unknown, said in words (#19)
    assert f.numbers["last_io_seconds_ago"] is None and "down for" in f.title
    assert "(no I/O from the master)" in f.title


async def test_redis_full_resync_after_the_backlog_overran(lab: Lab) -> None:
    out, _ = await flagged(lab, "full resync")
    full = [f for fs in out.opened.values() for f in fs if f.key == "full_resync"]
    assert full, out.opened
    f = full[0]
    assert f.node == "primary" and f.severity is Severity.WARNING  # a tiny lab data set
    assert f.numbers["full_syncs"] == 1 or f.numbers["syncing_replicas"]
    assert "a fork and an RDB transfer" in f.cause
    with lab.primary.redis() as mc:  # restored
        assert mc.config_get("repl-backlog-size")["repl-backlog-size"] != "16384"


async def test_redis_replica_paused_is_critical(lab: Lab) -> None:
    _, f = await flagged(lab, "Redis replica paused")
    assert f.key == "link/unreadable" and "replica Redis timeout" in f.title


async def test_healthy_pair_under_load_stays_quiet(lab: Lab) -> None:
    out = await run_lab_scenario(lab, by_name("healthy"))
    for check in ("mysql_replication", "redis_replication"):
        assert out.first(check, Severity.WARNING) is None, out.opened
    lags = [c.seconds_behind for t in out.ticks for c in t.replica.mysql.replication]
    assert lags and all(v is not None and v <= 1 for v in lags), lags
