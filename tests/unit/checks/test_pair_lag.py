"""pair_lag on ticks built from the lab's MariaDB 10.11 figures (positions, 300
transactions/s, GTIDs 0-1-N as captured) and MySQL GTID sets as the manual prints them:
the measured lag, and when it is flagged against Seconds_Behind_Master."""

from __future__ import annotations

from typing import Any

import pytest
from replmon.checks.pair_lag import CHECK

from replmon.check import Window
from replmon.model.findings import Severity
from replmon.model.lag import LagFacts, MeasuredLag
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel
from replmon.model.tick import Tick
from replmon.testing.scenarios.pair import BINLOG, EVENT_BYTES, slow_link
from replmon.testing.synth import node, observe, series

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def lagging(n: int, *, stop_at: int = 5, every: int = 2, mysql: bool = False,
            **channel: Any) -> list[Tick]:
    """``n`` ticks at 1 s, 300 transactions/s on the primary; the replica executes all
    of it until tick ``stop_at``, then nothing. The primary reads its binlog every
    ``every`` ticks."""
    pairs = []
    for i in range(n):
        seq, have = 100 + 300 * i, 100 + 300 * min(i, stop_at)
        g = (lambda k: f"{UUID}:1-{k}") if mysql else (lambda k: f"0-1-{k}")
        pb = BinlogStatus(file=BINLOG, position=EVENT_BYTES * seq, gtid_executed=g(seq),
                          server_id=1, server_uuid=UUID if mysql else "") \
            if i % every == 0 else None
        ch = ReplicaChannel(io_running="Yes", sql_running=True, source_server_id=1,
                            source_log_file=BINLOG, read_source_log_pos=EVENT_BYTES * seq,
                            relay_source_log_file=BINLOG,
                            exec_source_log_pos=EVENT_BYTES * have, gtid_executed=g(have))
        ch = ch.model_copy(update=channel)
        pairs.append((node("primary", mysql=MysqlSample(binlog=pb)),
                      node("replica", mysql=MysqlSample(replication=[ch]))))
    return series(pairs)


def test_a_caught_up_replica_measures_zero() -> None:
    pair = Window(lagging(10, stop_at=100)).pair
    m = pair.lag
    assert m is not None and (m.seconds, m.source, pair.behind) == (0.0, "history", (0, 0))


@pytest.mark.parametrize("mysql", [False, True], ids=["mariadb", "mysql"])
def test_lag_is_the_age_of_the_oldest_reading_not_executed(mysql: bool) -> None:
    pair = Window(lagging(21, mysql=mysql)).pair
    m = pair.lag
    # the replica stopped after tick 5: the reading of tick 6 is the oldest it lacks
    # (executed: tick 4's, 2 s before: the bound)
    assert m is not None and (m.seconds, m.bound_s, m.source) == (14.0, 2.0, "history")
    assert pair.behind == (300 * (20 - 5), 300 * 15 * EVENT_BYTES)


def test_behind_from_before_the_window_is_a_lower_bound() -> None:
    ts = lagging(30, stop_at=-1)  # never had any of it
    m = Window(ts[10:]).pair.lag
    assert m is not None and m.seconds is None and m.at_least_s == 19.0
    assert "at least 19.0 s behind" in m.detail


def test_the_ticks_own_lag_is_judged_where_the_window_knows_less() -> None:
    """A tick carries the lag the collector measured over its own 300 s (``Tick.lag``):
    the check judges that one, as the screen shows it, not the window's again; a replay
    of a recording cut 8 s in says what the live finding said (14 s), not the cut
    window's "at least 12 s"."""
    from replmon.truelag import LagTracker

    tracker, ts = LagTracker(), lagging(21, seconds_behind=0)
    ts = [t.model_copy(update={"lag": tracker.measure(t.oriented("mysql"))}) for t in ts]
    (live,) = observe(CHECK, ts)
    assert Window(ts[8:]).pair.lag.at_least_s == 12.0  # type: ignore[union-attr]  # cut
    (cut,) = observe(CHECK, ts[8:])
    assert cut.numbers == live.numbers and cut.numbers["lag_s"] == 14.0
    assert cut.numbers["lag_at_least"] is False
    (computed,) = observe(CHECK, [t.model_copy(update={"lag": None}) for t in ts[8:]])
    assert (computed.numbers["lag_s"], computed.numbers["lag_at_least"]) == (12.0, True)


def test_flagged_while_seconds_behind_master_says_0() -> None:
    (o,) = observe(CHECK, lagging(21, seconds_behind=0))
    assert (o.node, o.key, o.severity) == ("replica", "default", Severity.WARNING)
    assert o.title == ("replica 14 s behind the primary (measured on both nodes: 4,500 "
                       "transactions and 1.2 MiB of binlog) while Seconds_Behind_Master "
                       "says 0 s")
    assert o.numbers["seconds_behind_s"] == 0 and o.numbers["lag_s"] == 14.0


def test_flagged_while_it_says_null_and_critical_past_two_minutes() -> None:
    (o,) = observe(CHECK, lagging(140, sql_running=False, seconds_behind=None))
    assert o.severity is Severity.CRITICAL and "says NULL" in o.title


def test_quiet_when_seconds_behind_master_agrees() -> None:
    assert observe(CHECK, lagging(21, seconds_behind=13)) == []
    assert observe(CHECK, lagging(14, seconds_behind=0)) == []  # 7 s: below lag_after


def test_a_delayed_replica_is_judged_against_its_delay() -> None:
    assert observe(CHECK, lagging(40, sql_delay=30, seconds_behind=None)) == []
    assert observe(CHECK, lagging(60, sql_delay=30, seconds_behind=None)) != []


def test_by_position_when_there_are_no_gtids() -> None:
    (o,) = observe(CHECK, lagging(21, seconds_behind=0, gtid_executed=""))
    assert "1.2 MiB of binlog" in o.title and "transactions" not in o.title


def test_heartbeat_is_preferred_when_configured() -> None:
    """pt-heartbeat's row as the replica has it, read every tick: the primary's write of
    tick 5 is the last it applied (the clocks taken as equal: no reading of them)."""
    ts = lagging(21, seconds_behind=0)
    out = []
    for i, t in enumerate(ts):
        facts = LagFacts(server_time=t.wall, sent_wall=t.wall, elapsed_ms=0.0,
                         heartbeat={1: ts[min(i, 5)].wall}, heartbeat_table="percona.heartbeat")
        r = t.replica.mysql.model_copy(update={"lag_facts": facts})
        out.append(t.model_copy(update={"replica": t.replica.model_copy(update={"mysql": r})}))
    assert Window(out[:1]).pair.lag == MeasuredLag(  # from the first tick
        seconds=0.0, bound_s=0.0, source="heartbeat", channel="", detail=(
            "pt-heartbeat's row in percona.heartbeat (server_id 1), clocks taken as equal "
            "(not compared yet); its age includes pt-heartbeat's --interval"))
    (o,) = observe(CHECK, out)
    assert (o.numbers["lag_s"], o.numbers["lag_source"]) == (15.0, "heartbeat")
    assert "15 s behind the primary (by pt-heartbeat: 4,500 transactions" in o.title


def test_garbled_gtids_fall_back_to_positions_never_zero() -> None:
    pair = Window(lagging(21, gtid_executed="not a gtid")).pair
    assert pair.lag is not None and pair.behind[0] is None and pair.lag.seconds == 14.0


def test_the_slow_link_seed_opens_within_the_onset_target() -> None:
    ts, onset = slow_link()
    assert observe(CHECK, ts[:onset + 1], lag_after=2.0) == []
    (o,) = observe(CHECK, ts, lag_after=2.0)
    assert "says 0 s" in o.title


def test_the_table_name_is_checked_in_the_config() -> None:
    with pytest.raises(ValueError, match="pattern"):
        CHECK.thresholds.model_validate({"heartbeat_table": "x; DROP TABLE y"})
