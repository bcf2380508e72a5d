"""The true lag (``PairView.lag``, as the collector's ``replmon.truelag`` attaches it to
each tick) on synthetic ticks: each source, its clock correction, the order of
preference, the reasons when unknown, the Redis estimate (the live test holds them to a
real pt-heartbeat: tests/live/test_truelag_live.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from replmon.model.lag import ApplierTimes, LagFacts, lag_summary
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.model.tick import Tick
from replmon.testing.synth import T0, node, tick
from replmon.truelag import LagTracker

MARIA = "10.11.19-MariaDB-0+deb12u1-log"


def _tick(seq: int, *, replica_mysql: dict[str, Any], channel: dict[str, Any],
          primary_binlog: BinlogStatus | None = None, version: str = MARIA,
          facts: LagFacts | None = None, primary_clock: float | None = None) -> Tick:
    wall = T0 + seq
    ch = ReplicaChannel(io_running="Yes", sql_running=True, source_server_id=1, **channel)
    rm = MysqlSample(flavour="mysql" if "MariaDB" not in version else "mariadb",
                     version=version, replication=[ch], lag_facts=facts, **replica_mysql)
    if primary_clock is not None:  # the primary's clock read at replmon's wall, exactly
        primary_binlog = (primary_binlog or BinlogStatus(server_id=1)).model_copy(update={
            "server_time": wall + primary_clock, "sent_wall": wall, "elapsed_ms": 0.0})
    pm = MysqlSample(flavour=rm.flavour, version=version, binlog=primary_binlog)
    return tick(seq, primary=node("primary", mysql=pm), replica=node("replica", mysql=rm))


def _facts(seq: int, **kw: Any) -> LagFacts:
    """The replica's facts with its clock = replmon's (read at the tick's wall)."""
    return LagFacts(server_time=T0 + seq, sent_wall=T0 + seq, elapsed_ms=0.0, tz_offset_s=0.0,
                    **kw)


def test_heartbeat_lag_is_corrected_by_the_measured_clock_offset() -> None:
    """The primary's clock 3 s ahead: its ts 3 s in the replica's future; lag 7 s, not 4."""
    tr = LagTracker()
    t = _tick(0, replica_mysql={}, channel={}, primary_clock=3.0,
              facts=_facts(0, heartbeat={1: T0 - 4.0}, heartbeat_table="percona.heartbeat"))
    lag = tr.measure(t)
    assert lag is not None and lag.source == "heartbeat"
    assert lag.seconds == pytest.approx(7.0) and lag.clock_offset_s == pytest.approx(3.0)
    assert "clock offset +3.000 s" in lag.detail
    assert lag_summary(lag).startswith("replica 7.0 s behind (+/- 0.0 s, heartbeat table)")


def test_a_missing_heartbeat_table_is_one_line_and_the_next_source_answers() -> None:
    tr = LagTracker()
    err = "heartbeat table percona.heartbeat: Table 'percona.heartbeat' doesn't exist (1146)"
    t = _tick(0, replica_mysql={}, channel={"gtid_retrieved": "0-1-10",
                                            "gtid_executed": "0-1-10"},
              version="11.8.3-MariaDB", facts=_facts(0, heartbeat_error=err,
                                                             heartbeat_table="percona.heartbeat"))
    lag = tr.measure(t)
    assert lag is not None and lag.source == "server" and lag.seconds == 0.0


def test_mariadb_11_6_event_time_when_behind() -> None:
    """Slave_last_event_time 25 s old (naive local time, zone +1 h), not caught up."""
    tr = LagTracker()
    naive = T0 - 25.0 + 3600.0
    t = _tick(0, replica_mysql={}, version="11.8.3-MariaDB", channel={
        "gtid_retrieved": "0-1-20", "gtid_executed": "0-1-10", "replica_event_time": naive},
        facts=_facts(0).model_copy(update={"tz_offset_s": 3600.0}))
    lag = tr.measure(t)
    assert lag is not None and lag.source == "server"
    assert lag.seconds == pytest.approx(25.0) and lag.bound_s == pytest.approx(1.0)
    assert "clocks are not compared" not in lag.detail  # the replica's own reading counts


def test_mysql_applier_times_applying_then_stopped() -> None:
    tr = LagTracker()
    v = "9.7.0"
    busy = _facts(0, applier=[ApplierTimes(applying_commit=T0 - 2.5, applied_commit=T0 - 3)])
    lag = tr.measure(_tick(0, replica_mysql={}, version=v, facts=busy, channel={
        "gtid_retrieved": "u:1-9", "gtid_executed": "u:1-9"}))
    assert lag is not None and lag.seconds == pytest.approx(2.5)
    idle = _facts(1, applier=[ApplierTimes(applied_commit=T0 - 40.0)])
    lag = tr.measure(_tick(1, replica_mysql={}, version=v, facts=idle, channel={
        "gtid_retrieved": "u:1-90", "gtid_executed": "u:1-9"}))
    assert lag is not None and lag.seconds == pytest.approx(41.0) and lag.source == "server"


def test_history_only_gives_a_lower_bound_then_the_lag() -> None:
    """MariaDB 10.11 without a heartbeat table: the primary's position read every 2 s
    (0-1-4 at tick 0, 0-1-6 at tick 2...); the replica at 0-1-3 (behind the first reading:
    a lower bound only), then from tick 4 at 0-1-6 (tick 2's reading): at tick 8 the
    oldest reading it lacks is tick 4's: 4 s, to within the 2 s between readings."""
    tr = LagTracker()
    out = []
    for seq in range(0, 9):
        binlog = BinlogStatus(server_id=1, gtid_executed=f"0-1-{seq + 4}") \
            if seq % 2 == 0 else None
        executed = "0-1-3" if seq < 4 else "0-1-6"
        out.append(tr.measure(_tick(seq, replica_mysql={}, primary_binlog=binlog,
                                    channel={"gtid_executed": executed})))
    first = out[0]
    assert first is not None and first.seconds is None and first.at_least_s == 0.0
    assert first.detail.startswith("MariaDB 10.11 without a heartbeat table: at least 0.0 s "
                                   "behind, measurable after more than")
    last = out[-1]
    assert last is not None and last.source == "history"
    assert last.seconds == pytest.approx(4.0) and last.bound_s == pytest.approx(2.0)


def test_no_channel_and_no_reading_say_why() -> None:
    tr = LagTracker()
    t = _tick(0, replica_mysql={}, channel={})
    lag = tr.measure(t)
    assert lag is not None and lag.seconds is None
    assert lag.detail == ("MariaDB 10.11 without a heartbeat table: measurable after 2 s of "
                          "history (no reading of the primary's position yet)")
    assert "True" not in lag_summary(lag) and "None" not in lag_summary(lag)


def test_redis_estimate_divides_bytes_by_the_primarys_write_rate() -> None:
    tr = LagTracker()
    est = []
    for seq in range(6):
        p = RedisSample(role="master", master_repl_offset=1000 * seq)
        r = RedisSample(role="replica", repl_offset=1000 * min(seq, 2))
        t = tick(seq, primary=node("primary", redis=p), replica=node("replica", redis=r))
        tr.measure(t)
        est.append(tr.redis(t))
    assert est[0] is not None and est[0].seconds == 0.0
    assert est[-1] is not None and est[-1].bytes == 3000
    assert est[-1].seconds == pytest.approx(3.0) and est[-1].rate_bytes_per_s == 1000.0


def test_heartbeat_table_from_the_command_line_a_pair_file_a_fleet_file_or_pair_lag() -> None:
    from replmon.cli import config_from_args
    from replmon.cli_args import build_parser
    from replmon.config import build_config
    from replmon.errors import ConfigError
    from replmon.resolve import resolve
    from replmon.settings import build_fleet

    nodes = {"primary": {"host": "db1"}, "replica": {"host": "db2"}}
    old = build_config({**nodes, "checks": {"pair_lag": {"heartbeat_table": "a.hb"}}})
    assert resolve(old).replica.mysql_heartbeat_table == "a.hb"
    both = build_config({**nodes, "heartbeat_table": "b.hb",
                         "checks": {"pair_lag": {"heartbeat_table": "a.hb"}}})
    assert resolve(both).replica.mysql_heartbeat_table == "b.hb"  # the top-level key wins
    fleet = build_fleet({"heartbeat_table": "f.hb", "pair": [
        {"name": "x", **nodes}, {"name": "y", **nodes, "heartbeat_table": "y.hb"}]})
    assert [resolve(p.config).replica.mysql_heartbeat_table for p in fleet.pairs] == \
        ["f.hb", "y.hb"]
    args = build_parser().parse_args(["check", "--primary", "db1", "--replica", "db2",
                       "--heartbeat-table", "c.hb"])
    assert resolve(config_from_args(args)).primary.mysql_heartbeat_table == "c.hb"
    with pytest.raises(ConfigError, match="heartbeat_table"):
        build_config({**nodes, "heartbeat_table": "x; DROP TABLE y"})


def test_the_engines_window_and_a_plain_one_give_the_same_lag() -> None:
    """The engine's window takes the nodes' clock readings from a kept series column;
    the collector and perfdata work them out from the ticks: the same lag at every tick.
    The primary's clock drifts ahead by 10 ms a tick and its Redis round trips take 10 %
    longer each tick: the reading picked (the newest within twice the tightest of the
    last 30 s) is told by its offset, so a column off by one tick gives another."""
    from replmon.check import Window
    from replmon.windows import Windows

    windows = Windows()
    windows.plan([300], [])
    tracker = LagTracker()
    ticks, older = [], 0
    for seq in range(80):
        wall, ahead = T0 + seq, 2.0 + 0.01 * seq
        half = 0.0005 * 1.1 ** seq

        def redis(ahead: float, half: float, wall: float = wall) -> RedisSample:
            return RedisSample(role="master", server_time=wall + half + ahead,
                               wall=wall, elapsed_ms=2000 * half)
        t = _tick(seq, replica_mysql={}, channel={}, facts=_facts(
            seq, heartbeat={1: wall + ahead - 3.0}, heartbeat_table="percona.heartbeat"
        ).model_copy(update={"elapsed_ms": 400.0}))  # the replica's own reading: loose
        t = t.model_copy(update={
            "primary": t.primary.model_copy(update={"redis": redis(ahead, half)}),
            "replica": t.replica.model_copy(update={"redis": redis(0.0, 0.0005)})})
        ticks.append(t)
        engine = windows.add(t)[300].pair.lag
        assert engine == Window(ticks).pair.lag == tracker.measure(t), seq
        assert engine is not None and engine.clock_offset_s is not None
        older += engine.clock_offset_s < ahead - 0.005  # an older, tighter reading
    assert older > 40 and engine.clock_offset_s == pytest.approx(2.0 + 0.01 * 56)


SESSIONS = sorted((Path(__file__).resolve().parents[2] / "sample_sessions").glob("*.rmrec"))


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_the_tracker_measures_as_a_window_of_whole_ticks_does(path: Path) -> None:
    """The tracker keeps a tick's MySQL samples as records only while the tick is the
    last; older ones hold the primary's as bytes and not the replica's. At every tick of
    every shipped recording (replicas stopped, lagging, switched over) its lag is the one
    a plain window of the same ticks kept whole gives, and what it holds is so thinned."""
    from replmon.check import Window, span_ticks
    from replmon.model.packed import PackedPart
    from replmon.model.parts import DroppedPart
    from replmon.pair import LAG_WINDOW_S
    from replmon.session.recording import open_recording

    tracker, whole, walked = LagTracker(), cast("list[Tick]", []), 0
    pair: tuple[str, str] | None = None
    for i, recorded in enumerate(open_recording(path).ticks()):
        t = recorded.oriented("mysql")
        if (t.primary.given_role, t.replica.given_role) != pair:  # the tracker starts anew
            pair, whole = (t.primary.given_role, t.replica.given_role), []
        whole = [*whole, t][-span_ticks(LAG_WINDOW_S, t.interval):]
        got, want = tracker.measure(t), Window(whole).pair.lag
        assert got == want, (path.stem, i)
        walked += want is not None and want.source == "history" and bool(want.seconds)
        kept = tracker._ticks
        assert len(kept) == len(whole) and type(kept[-1].replica.mysql) is MysqlSample
        for old in kept[:-1]:
            assert type(old.primary.mysql) is PackedPart or old.primary.mysql.binlog is None
            assert type(old.replica.mysql) is DroppedPart, (path.stem, i)
    if path.stem == "replica_lag_growing":  # the history walked back through older ticks'
        assert walked > 100, walked  # packed samples (MariaDB 10.11: no commit timestamps)
