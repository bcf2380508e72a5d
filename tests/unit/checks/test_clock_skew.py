"""clock_skew on the real Redis 7.0 master and replica captures (tests/fixtures/redis/),
each stamped with the epoch time it was captured at (the fixtures' README), and with the
replica's clock moved."""

from __future__ import annotations

from replmon.checks.clock_skew import CHECK
from test_redis_replication import MASTER, REPLICA_UP, primary, replica

from replmon.check import Window
from replmon.model.findings import Severity
from replmon.model.mysql import BinlogStatus, MysqlSample
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeTick, Tick
from replmon.testing.synth import GateTally, judge_gate, node, observe, status, tick

MASTER_AT, REPLICA_AT = 1795389004.737801457, 1795389004.750286046
"""When each capture began (tests/fixtures/redis/README.md)."""


def stamped(s: RedisSample, at: float, elapsed_ms: float = 12.0, shift: float = 0.0
            ) -> RedisSample:
    assert s.server_time is not None
    return s.model_copy(update={"wall": at, "elapsed_ms": elapsed_ms,
                                "server_time": s.server_time + shift})


def ticks(shift: float = 0.0, elapsed_ms: float = 12.0, n: int = 5) -> list[Tick]:
    return [tick(i, primary=primary(stamped(MASTER, MASTER_AT + i)),
                 replica=replica(stamped(REPLICA_UP, REPLICA_AT + i, elapsed_ms, shift)))
            for i in range(n)]


def test_the_captures_clocks_agree() -> None:
    assert observe(CHECK, ticks()) == []


def test_a_replica_clock_5_s_ahead_is_a_warning() -> None:
    (o,) = observe(CHECK, ticks(shift=5.0))
    assert (o.node, o.key, o.severity) == ("pair", "clock", Severity.WARNING)
    assert o.title.startswith("clocks differ by 5.00 s (+/- 0.012 s): the replica's is ahead")


def test_a_minute_apart_is_critical() -> None:
    (o,) = observe(CHECK, ticks(shift=-60.0))
    assert o.severity is Severity.CRITICAL and "primary's is ahead" in o.title


def test_a_skew_the_measurement_cannot_prove_is_quiet() -> None:
    assert observe(CHECK, ticks(shift=1.5, elapsed_ms=2000.0)) == []  # +/- 1.006 s


def test_one_tight_reading_in_the_window_is_enough() -> None:
    loose = ticks(shift=3.0, elapsed_ms=5000.0)  # +/- 2.5 s: cannot tell
    tight = ticks(shift=3.0, n=1)[0].model_copy(update={"seq": 5, "wall": loose[-1].wall + 1})
    (o,) = observe(CHECK, [*loose, tight])
    assert o.numbers["bound_s"] == 0.012


NO_REDIS = RedisSample(status=status("absent", "no Redis on this node"))


def _mysql_node(role: str, wall: float, shift: float, elapsed_ms: float = 0.4) -> NodeTick:
    """A node with MySQL only, its clock read by the positions query (MariaDB 10.11 on the
    lab answered UNIX_TIMESTAMP(NOW(6)) in 0.2-3.4 ms)."""
    b = BinlogStatus(file="binlog.000001", position=411085, gtid_executed="0-1-1682",
                     server_id=1 if role == "primary" else 2, sent_wall=wall,
                     elapsed_ms=elapsed_ms, server_time=wall + elapsed_ms / 2000 + shift)
    return node(role, mysql=MysqlSample(binlog=b), redis=NO_REDIS)


def test_mysql_clocks_when_there_is_no_redis() -> None:
    """Read every 2 s: between readings the window's last reading still counts."""
    def ts(shift: float) -> list[Tick]:
        return [tick(i, primary=_mysql_node("primary", 1795604766.0 + i, 0.0)
                     if i % 2 == 0 else node("primary", redis=NO_REDIS),
                     replica=_mysql_node("replica", 1795604766.001 + i, shift)
                     if i % 2 == 0 else node("replica", redis=NO_REDIS))
                for i in range(7)]
    assert observe(CHECK, ts(0.0)) == []
    (o,) = observe(CHECK, ts(-4.0))
    assert o.title.startswith("clocks differ by 4.00 s (+/- 0.000 s): the primary's is ahead")
    assert observe(CHECK, ts(-4.0)[:-1]) != []  # the last tick had no reading: still open


def test_a_node_with_both_uses_the_tighter_reading() -> None:
    t = tick(0, primary=primary(stamped(MASTER, MASTER_AT)),
             replica=replica(stamped(REPLICA_UP, REPLICA_AT, elapsed_ms=12.0, shift=5.0)))
    b = BinlogStatus(sent_wall=REPLICA_AT, elapsed_ms=0.4, server_time=REPLICA_AT + 0.0002)
    r = t.replica.model_copy(update={"mysql": MysqlSample(binlog=b)})
    (o,) = observe(CHECK, [t])  # Redis alone: the replica 5 s ahead
    assert "replica's is ahead" in o.title
    assert observe(CHECK, [t.model_copy(update={"replica": r})]) == []  # MySQL: in step


def _mysql_ticks(shifts: list[float], every: int = 2, elapsed_ms: float = 0.4,
                 loose_from: int | None = None) -> list[Tick]:
    """MySQL-only ticks, the replica's clock ``shifts[i]`` s off at tick i, read every
    ``every`` ticks (none between readings: no proof then, the window's readings judged)
    in ``elapsed_ms``, from tick ``loose_from`` on in 600 ms (+/- 0.3 s: the tighter
    readings before are judged while in the window)."""
    at = 1795604766.0

    def replica_node(i: int, shift: float) -> NodeTick:
        slow = loose_from is not None and i >= loose_from
        return _mysql_node("replica", at + i + 0.001, shift, 600.0 if slow else elapsed_ms)

    return [tick(i, primary=_mysql_node("primary", at + i, 0.0) if i % every == 0
                 else node("primary", redis=NO_REDIS),
                 replica=replica_node(i, s) if i % every == 0
                 else node("replica", redis=NO_REDIS))
            for i, s in enumerate(shifts)]


def test_the_gate_is_quiet_only_where_nothing_is_reported() -> None:
    """``quiet`` on the gauges against ``evaluate`` at every tick of sessions whose clocks
    were apart earlier in the window, are apart now, or cannot be told apart, with
    ``max_skew_s`` from 0.01 to 10 s and ``window`` from 1 to 60 s (any window picks a
    reading of the check's own 30 s)."""
    gate = CHECK.gate
    assert gate is not None
    inputs = [_mysql_ticks([-4.0] * 10 + [0.0] * 30),
              _mysql_ticks([-4.0] * 10 + [0.0] * 30, loose_from=10),
              _mysql_ticks([0.0] * 20 + [3.0] * 5 + [0.0] * 15, every=3),
              _mysql_ticks([2.0] * 40, elapsed_ms=3000.0), ticks(shift=5.0, n=8),
              ticks(shift=1.5, elapsed_ms=2000.0), ticks(n=8)]
    limits = [CHECK.thresholds(max_skew_s=m, window=s)
              for m in (0.01, 0.1, 0.5, 1.0, 1.9, 2.5, 3.9, 4.1, 10.0)
              for s in (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0)]
    tally = GateTally()
    for ts in inputs:
        for i in range(1, len(ts) + 1):
            judge_gate(CHECK, Window(ts[max(0, i - 30):i]), limits, tally, f"tick {i}")
    assert not tally.hidden, tally.hidden[:3]
    assert tally.quiet > 1000 and tally.seen > 1000, (tally.quiet, tally.seen)
