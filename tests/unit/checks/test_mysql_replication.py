"""mysql_replication on channels parsed from real captures (tests/fixtures/mysql/) and on
synthetic lag series."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from replmon.checks.mysql_replication import CHECK

from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.tick import NodeTick, Tick
from replmon.sources.mysql_replica_parse import parse_replica_status
from replmon.testing.synth import node, observe, run_check, status, tick

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mysql"


def _rows() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mysql_rows", FIXTURES / "mysql_rows.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROWS = _rows()


def channels(name: str, flavour: str = "mariadb") -> list[ReplicaChannel]:
    return parse_replica_status(ROWS.dict_rows(name, typed=True), flavour)  # type: ignore[arg-type]


HEALTHY = channels("mariadb10.11_lab_show_all_slaves_status.txt")[0]
SQL_STOPPED = channels("mariadb10.11_lab_show_all_slaves_status_sql_stopped.txt")[0]
IO_CONNECTING = channels("mariadb10.11_lab_show_all_slaves_status_io_connecting.txt")[0]


def ch(base: ReplicaChannel = HEALTHY, **change: Any) -> ReplicaChannel:
    return base.model_copy(update=change)


def pair(*chs: ReplicaChannel, replica: MysqlSample | None = None,
         primary: MysqlSample | None = None) -> tuple[NodeTick, NodeTick]:
    r = replica if replica is not None else MysqlSample(replication=list(chs))
    return node("primary", mysql=primary or MysqlSample()), node("replica", mysql=r)


def ticks_of(*pairs: tuple[NodeTick, NodeTick], interval: float = 1.0) -> list[Tick]:
    return [tick(i, primary=p, replica=r, interval=interval) for i, (p, r) in enumerate(pairs)]


def obs(*chs: ReplicaChannel, **kw: Any) -> list[Any]:
    return observe(CHECK, ticks_of(pair(*chs, **kw)))


def lag_series(values: Sequence[int | None], interval: float = 1.0) -> list[Tick]:
    return ticks_of(*(pair(ch(seconds_behind=v)) for v in values), interval=interval)


def test_healthy_lab_replica_is_quiet() -> None:
    assert obs(HEALTHY) == []


def test_sql_thread_stopped_by_hand_is_critical() -> None:
    (o,) = obs(SQL_STOPPED)
    assert (o.node, o.key, o.severity) == ("replica", "default", Severity.CRITICAL)
    assert "SQL thread stopped (last_sql_errno 0)" in o.title
    assert "by hand" in o.cause
    assert o.numbers["sql_running"] is False and o.numbers["seconds_behind_s"] is None


def test_sql_thread_stopped_on_an_error_names_it() -> None:
    err = ("Could not execute Write_rows_v1 event on table lab.t; "
           "Duplicate entry '7' for key 'PRIMARY'")
    (o,) = obs(ch(SQL_STOPPED, last_sql_errno=1062, last_sql_error=err))
    assert o.severity is Severity.CRITICAL
    assert "last_sql_errno 1062" in o.title and "Duplicate entry '7'" in o.title
    assert "error 1062" in o.cause and o.numbers["last_sql_errno"] == 1062


def test_io_connecting_is_a_warning_with_the_source_and_error() -> None:
    (o,) = obs(IO_CONNECTING)
    assert o.severity is Severity.WARNING
    assert "Connecting to 127.0.0.1:40303" in o.title
    assert "last_io_errno 2003" in o.title and "Connection refused" in o.title
    assert o.numbers["source"] == "127.0.0.1:40303"


def test_stopped_applier_says_when_and_how_much_relay_log_waits() -> None:
    """#19: Last_SQL_Error_Timestamp (MySQL) and Relay_Log_Space reach the finding. The
    real stopped-applier capture (MariaDB has no timestamp column) with MySQL's added."""
    stopped = ch(SQL_STOPPED, last_sql_errno=1062, last_sql_error="Duplicate entry '7'",
                 last_sql_error_time="2025-11-25 08:40:01")
    (o,) = obs(stopped)
    assert "SQL thread stopped (last_sql_errno 1062 at 2025-11-25 08:40:01: Duplicate" in o.title
    assert SQL_STOPPED.relay_log_space is not None
    assert o.numbers["relay_log_space_bytes"] == SQL_STOPPED.relay_log_space
    assert "relay logs hold 72 KiB" in o.cause


def test_lag_printed_while_connecting_is_shown_as_stale_never_as_lag() -> None:
    """#19: a receiver reconnecting (MySQL printed 156 s): the finding is about the
    receiver, and 156 s is the lag when it lost the source, not live lag."""
    stale = ch(IO_CONNECTING, seconds_behind=None, seconds_behind_stale=156)
    (o,) = obs(stale)
    assert "lag 156 s when it lost the source (not live" in o.title
    assert o.numbers["seconds_behind_s"] is None
    assert o.numbers["lag_when_receiver_lost_source_s"] == 156


def test_group_replication_channels_are_not_judged_as_async_replicas() -> None:
    """MySQL lists group_replication_applier in SHOW REPLICA STATUS with its receiver
    idle (No) by design: not 'IO thread not running'."""
    gr = ch(HEALTHY, name="group_replication_applier", io_running="No", source_host="",
            seconds_behind=None)
    assert gr.group_replication and obs(gr) == []
    (o,) = obs(gr, ch(SQL_STOPPED, name="async"))  # the async channel still is
    assert o.key == "async"


def test_io_connecting_for_a_minute_turns_critical() -> None:
    ticks = ticks_of(*[pair(IO_CONNECTING)] * 62)
    (o,) = observe(CHECK, ticks)
    assert o.severity is Severity.CRITICAL and "for 61 s" in o.title
    (early,) = observe(CHECK, ticks[:30])
    assert early.severity is Severity.WARNING


def test_io_thread_no_is_critical() -> None:
    (o,) = obs(ch(io_running="No", seconds_behind=None))
    assert o.severity is Severity.CRITICAL
    assert o.title == "IO thread not running (source 127.0.0.1:40303)"


def test_both_threads_down_make_one_finding_naming_both() -> None:
    (o,) = obs(ch(SQL_STOPPED, io_running="No"))
    assert o.severity is Severity.CRITICAL
    assert "IO thread not running" in o.title and "SQL thread stopped" in o.title


@pytest.mark.parametrize(("lag", "sev", "text"), [
    (29, None, ""),
    (30, Severity.WARNING, "replication lag 30 s (over 30 s)"),
    (299, Severity.WARNING, "replication lag 299 s (over 30 s)"),
    (300, Severity.CRITICAL, "replication lag 300 s (over 300 s)"),
    (4000, Severity.CRITICAL, "replication lag 4,000 s (over 300 s)"),
])
def test_lag_thresholds(lag: int, sev: Severity | None, text: str) -> None:
    out = obs(ch(seconds_behind=lag))
    if sev is None:
        assert out == []
        return
    (o,) = out
    assert o.severity is sev and o.title == text and o.numbers["lag_s"] == lag


def test_a_delayed_replica_is_not_late() -> None:
    assert obs(ch(seconds_behind=3620, sql_delay=3600)) == []
    (o,) = obs(ch(seconds_behind=3660, sql_delay=3600))
    assert "lag 60 s" in o.title and "3600 s is already subtracted" in o.cause


def test_lag_null_while_both_threads_run() -> None:
    (o,) = obs(ch(seconds_behind=None))
    assert o.severity is Severity.WARNING and "NULL" in o.title


def test_lag_growing_steadily_below_the_threshold_warns_with_the_rate() -> None:
    # a blocked applier at 1 s ticks: lag 0, 1, 2, ... 25 s; never above 30 s
    (o,) = observe(CHECK, lag_series(list(range(26))))
    assert o.severity is Severity.WARNING
    assert o.title == "replication lag 25 s, growing 60.0 s/min over 25 s"
    assert o.numbers["growth_s_per_min"] == pytest.approx(60.0)


def test_integer_steps_of_half_second_ticks_still_count_as_steady() -> None:
    values = [i // 2 for i in range(50)]  # 0,0,1,1,2,2... at 0.5 s ticks: 60 s/min
    (o,) = observe(CHECK, lag_series(values, interval=0.5))
    assert o.numbers["growth_s_per_min"] == pytest.approx(60.0, rel=0.05)


@pytest.mark.parametrize("values", [
    [0, 1, 0, 0, 1, 1, 0, 2, 0, 1] * 4,           # healthy jitter
    list(range(12)),                               # growing, but only 11 s of history
    list(range(13)) + [5] + list(range(6, 20)),    # fell back by 7 s: not steady
    [5] * 20 + list(range(5, 12)),                 # rose only 6 s: below growth_min_rise_s
])
def test_lag_that_is_not_steady_growth_stays_quiet(values: list[int]) -> None:
    assert observe(CHECK, lag_series(values)) == []


def test_a_null_reading_restarts_the_growth_history() -> None:
    values: list[int | None] = [*range(20), None, *range(20, 30)]  # 10 s after the gap
    assert observe(CHECK, lag_series(values)) == []


def test_lag_above_threshold_and_falling_says_catching_up() -> None:
    (o,) = observe(CHECK, lag_series(list(range(200, 170, -1))))
    assert o.severity is Severity.WARNING
    assert "falling 60.0 s/min (catching up)" in o.title


@pytest.mark.parametrize("state", ["unreachable", "timeout", "auth", "error"])
def test_replica_mysql_not_readable_is_critical(state: str) -> None:
    dead = MysqlSample(status=status(state, "no answer for 0.8 s", since=1_700_000_000.0))
    (o,) = observe(CHECK, [tick(5, replica=node("replica", mysql=dead))])
    assert (o.node, o.key, o.severity) == ("replica", "", Severity.CRITICAL)
    assert o.title == (f"replica MySQL {state} for 5.0 s: cannot see replication at all "
                       f"(no answer for 0.8 s)")


def test_replica_without_mysql_configured_is_not_judged() -> None:
    absent = MysqlSample(status=status("absent", "not configured"))
    assert observe(CHECK, [tick(1, replica=node("replica", mysql=absent))]) == []


def test_missing_grant_is_info_on_the_primary_warning_on_the_replica() -> None:
    hint = "GRANT REPLICA MONITOR ON *.* TO 'replmon'@'%'"
    bad = MysqlSample(replication_error="SHOW ALL SLAVES STATUS: access denied (1227)",
                      replication_hint=hint)
    out = observe(CHECK, ticks_of(pair(HEALTHY, primary=bad)))
    (o,) = out
    assert (o.node, o.severity) == ("primary", Severity.INFO)
    assert "access denied (1227)" in o.title and o.next_step == hint
    (r,) = observe(CHECK, ticks_of(pair(replica=bad)))
    assert (r.node, r.severity) == ("replica", Severity.WARNING)


def test_replica_with_no_channel_while_the_primary_is_up() -> None:
    (o,) = obs()
    assert (o.node, o.key, o.severity) == ("replica", "channels", Severity.WARNING)
    assert o.title == "replica is not replicating: no channel configured (0 channels)"
    down = MysqlSample(status=status("unreachable", "refused"))
    assert obs(primary=down) == []


def test_every_channel_is_judged_on_either_node() -> None:
    two = channels("mysql8.0.30_show_slave_status_multi_source.txt", "mysql")
    assert obs(*two) == []
    broken = [two[0], ch(two[1], sql_running=False, seconds_behind=None)]
    p = node("primary", mysql=MysqlSample(replication=broken))
    out = observe(CHECK, [tick(1, primary=p, replica=node("replica", mysql=MysqlSample(
        replication=[HEALTHY])))])
    (o,) = out
    assert (o.node, o.key) == ("primary", "master2")


def test_opens_after_two_ticks_and_closes_after_three_clear() -> None:
    bad = [pair(SQL_STOPPED)] * 3
    good = [pair(HEALTHY)] * 3
    open_now, opened = run_check(CHECK, ticks_of(*bad))
    assert list(opened) == [1] and open_now[0].since_seq == 0
    assert run_check(CHECK, ticks_of(*bad, *good))[0] == []
    assert len(run_check(CHECK, ticks_of(*bad, *good[:2]))[0]) == 1
