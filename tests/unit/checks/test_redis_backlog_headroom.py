"""redis_backlog_headroom on the real Redis 7.0 master capture (one replica, the default
1 MiB backlog), its replication offset advanced tick by tick at a given write rate."""

from __future__ import annotations

from replmon.checks.redis_backlog_headroom import CHECK
from test_redis_replication import MASTER, REPLICA_UP, primary, replica

from replmon.model.findings import Severity
from replmon.model.tick import Tick
from replmon.testing.synth import gate_hides, observe, tick


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
                              "16 KiB at 10 KiB/s of writes")
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


def limited(rate: float, limit: tuple[int, int, int], bgsave_s: int | None = 0,
            n: int = 40) -> list[Tick]:
    """run() with the master's replica output-buffer limit as CONFIG GET gave it and
    the last RDB save's duration as INFO gave it."""
    return [t.model_copy(update={"primary": t.primary.model_copy(update={
        "redis": t.primary.redis.model_copy(update={
            "replica_buffer_limit": limit, "rdb_last_bgsave_time_s": bgsave_s})})})
        for t in run(rate, n)]


def test_redis_defaults_are_quiet_at_the_labs_rate() -> None:
    """256 MiB hard, 64 MiB soft for 60 s (redis.conf's default)."""
    assert observe(CHECK, limited(10_700, (268435456, 67108864, 60))) == []


def test_a_hard_limit_below_one_second_of_writes_is_a_warning() -> None:
    (o,) = observe(CHECK, limited(10_700, (8192, 4096, 1)))
    assert (o.node, o.key, o.severity) == ("primary", "output_buffer", Severity.WARNING)
    assert o.title.startswith("a full sync to the replica cannot finish: 10 KiB of writes "
                              "during a sync of at least 1 s passes the hard limit of 8 KiB")
    assert o.numbers["buffer_needed_bytes"] == 10_700.0


def test_the_soft_limit_held_longer_than_its_seconds_is_a_warning() -> None:
    # 40 kB/s, a 30 s RDB save: above 1 MiB after 26 s, the sync lasts at least 30 s
    # (the backlog's own warning, 26 s of headroom, comes with it)
    def buffer(limit: tuple[int, int, int]) -> list[str]:
        return [o.title for o in observe(CHECK, limited(40_000, limit, bgsave_s=30))
                if o.key == "output_buffer"]
    (title,) = buffer((0, 1 << 20, 3))
    assert "after 26.2 s and stays above it for 3 s before a sync of at least 30 s" in title
    assert buffer((0, 1 << 20, 10)) == []


def test_no_limit_or_no_reading_is_quiet() -> None:
    assert [o.key for o in observe(CHECK, limited(1e6, (0, 0, 0), bgsave_s=600))] == ["backlog"]
    assert observe(CHECK, run(10_700)) == []  # replica_buffer_limit None: not read


def test_the_gate_hides_no_output_buffer_or_short_rate_window_finding() -> None:
    """The shipped recordings hold no output buffer finding and no rate that changes
    within a minute: here the limits of the tests above, and a master idle for a minute
    that then writes 40 kB/s (a 6 s or 30 s ``rate_window`` sees 26 s of headroom while
    the whole window still averages over the idle ticks);
    each threshold from 1/10 to 10 times its default: where the gate is quiet,
    ``evaluate`` sees nothing."""
    jump = run(0, 60) + [t.model_copy(update={"seq": 60 + t.seq, "wall": t.wall + 60})
                         for t in run(40_000, 60)]
    cases = [jump, limited(10_700, (8192, 4096, 1)), limited(40_000, (0, 1 << 20, 3), 30),
             limited(40_000, (0, 1 << 20, 10), 30), limited(1e6, (0, 0, 0), 600),
             run(40_000, n=60, restart_at=35)]
    base = CHECK.thresholds().model_dump()
    limits = [{}] + [{k: v * f} for k, v in base.items()
                     if k not in ("enabled", "open_after", "open_min_samples", "close_after")
                     for f in (0.1, 0.5, 2.0, 10.0)]
    for ticks in cases:
        hidden, seen = gate_hides(CHECK, ticks, limits)
        assert seen and not hidden, hidden[:3]
