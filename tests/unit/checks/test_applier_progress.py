"""applier_progress on channels parsed from real MariaDB 10.11 captures
(tests/fixtures/mysql/), their positions moved tick by tick."""

from __future__ import annotations

from typing import Any

from replmon.checks.applier_progress import CHECK
from test_mysql_replication import HEALTHY, ch, pair, ticks_of

from replmon.model.findings import Severity
from replmon.testing.synth import observe

BASE = HEALTHY.read_source_log_pos or 0


def series(n: int, *, read_step: int = 300, exec_step: int = 0, **change: Any) -> list[Any]:
    """``n`` ticks at 1 s: the receiver gains ``read_step`` bytes a tick, the applier
    ``exec_step``."""
    return ticks_of(*(pair(ch(HEALTHY, read_source_log_pos=BASE + read_step * i,
                              exec_source_log_pos=BASE + exec_step * i,
                              sql_state="Waiting for global read lock", **change))
                      for i in range(n)))


def test_stuck_applier_with_work_waiting_warns_after_30_s() -> None:
    assert observe(CHECK, series(30)) == []  # 29 s
    (o,) = observe(CHECK, series(31))
    assert (o.node, o.key, o.severity) == ("replica", "default", Severity.WARNING)
    # stuck since the first tick replmon saw: "at least"
    assert o.title.startswith("applier stuck for at least 30 s at binlog.000001:73,104 while "
                              "received up to binlog.000001:82,104 (8.8 KiB waiting); "
                              "Seconds_Behind_Master 0 s; applier: Waiting for global read lock")
    assert o.numbers["stuck_s"] == 30 and o.numbers["backlog_bytes"] == 9000


def test_a_stall_that_began_in_view_gives_its_length() -> None:
    moving = [t.model_copy(update={"seq": i, "wall": 1000.0 + i})
              for i, t in enumerate([*series(10, exec_step=300)[:10], *series(45)[10:]])]
    (o,) = observe(CHECK, moving)
    assert o.title.startswith("applier stuck for 34 s at binlog.000001:73,104 while")


def test_stuck_for_three_minutes_is_critical() -> None:
    (o,) = observe(CHECK, series(182))
    assert o.severity is Severity.CRITICAL


def test_an_applier_that_moves_is_quiet() -> None:
    assert observe(CHECK, series(60, exec_step=290)) == []


def test_an_idle_replica_is_not_stuck() -> None:
    assert observe(CHECK, series(60, read_step=0)) == []


def test_a_delayed_replica_waiting_on_its_delay_is_not_stuck() -> None:
    assert observe(CHECK, series(60, sql_delay=3600, sql_remaining_delay=3500)) == []


def test_a_stopped_thread_is_mysql_replications_finding_not_this() -> None:
    assert observe(CHECK, series(60, sql_running=False)) == []
    assert observe(CHECK, series(60, io_running="Connecting")) == []


def test_the_stall_restarts_when_the_applier_moves_once() -> None:
    ticks = series(60)
    moved = ticks_of(pair(ch(HEALTHY, read_source_log_pos=BASE + 300 * 60,
                             exec_source_log_pos=BASE + 100)))
    after = ticks_of(*(pair(ch(HEALTHY, read_source_log_pos=BASE + 300 * (61 + i),
                              exec_source_log_pos=BASE + 100)) for i in range(20)))
    joined = [*ticks, *moved, *after]
    joined = [t.model_copy(update={"seq": i, "wall": 1000.0 + i}) for i, t in enumerate(joined)]
    assert observe(CHECK, joined) == []  # 20 s since it last moved
