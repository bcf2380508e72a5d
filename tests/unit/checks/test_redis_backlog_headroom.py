"""redis_backlog_headroom on the real Redis 7.0 master capture (one replica, the default
1 MiB backlog), its replication offset advanced tick by tick at a given write rate."""

from __future__ import annotations

from replmon.checks.redis_backlog_headroom import CHECK
from test_redis_replication import MASTER, REPLICA_UP, primary, replica

from replmon.model.findings import Severity
from replmon.model.tick import Tick
from replmon.testing.synth import observe, tick


def run(rate: float, n: int = 40, backlog: int | None = None, restart_at: int | None = None
        ) -> list[Tick]:
    out = []
    for i in range(n):
        new = restart_at is not None and i >= restart_at  # a new process: new id, from 0
        off = (int(rate * (i - (restart_at or 0))) if new
               else (MASTER.master_repl_offset or 0) + int(rate * i))
        m = MASTER.model_copy(update={"master_repl_offset": off, **(
            {"repl_backlog_size": backlog} if backlog else {}),
            **({"master_replid": "f" * 40} if new else {})})
        out.append(tick(i, primary=primary(m), replica=replica(REPLICA_UP)))
    return out


def test_the_labs_write_rate_with_the_default_backlog_is_quiet() -> None:
    assert MASTER.repl_backlog_size == 1024 * 1024 and MASTER.connected_replicas == 1
    assert observe(CHECK, run(10_700)) == []  # 98 s of headroom, as measured on the lab


def test_a_16_kib_backlog_under_the_same_writes_is_critical() -> None:
    (o,) = observe(CHECK, run(10_700, backlog=16384))
    assert (o.node, o.key, o.severity) == ("primary", "backlog", Severity.CRITICAL)
    assert o.title.startswith("Redis backlog covers 1.5 s of link outage: repl-backlog-size "
                              "16 KiB at 10.4 KiB/s of writes")
    assert "CONFIG SET repl-backlog-size 627kb" in o.next_step


def test_between_5_and_60_s_is_a_warning() -> None:
    (o,) = observe(CHECK, run(40_000))  # 1 MiB / 40 kB/s = 26 s
    assert o.severity is Severity.WARNING and o.numbers["headroom_s"] == 26.214


def test_too_few_seconds_of_readings_or_an_idle_master_say_nothing() -> None:
    assert observe(CHECK, run(40_000, n=10)) == []  # 9 s < min_rate_span
    assert observe(CHECK, run(500, backlog=16384)) == []  # 500 B/s: idle


def test_a_restart_restarts_the_rate() -> None:
    assert observe(CHECK, run(40_000, n=40, restart_at=35)) == []  # 4 s since the restart
    assert observe(CHECK, run(40_000, n=60, restart_at=35))  # 24 s since: judged again
