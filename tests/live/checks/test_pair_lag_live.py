"""pair_lag on the lab: the replica's SQL thread stopped under write load, transactions
and bytes behind grow while Seconds_Behind_Master is NULL; a delayed replica
(MASTER_DELAY) measures its delay; a pt-heartbeat table (written here as pt-heartbeat
--update would: replmon only reads it, on the replica every tick) gives the lag."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import pytest

from replmon.check import Window
from replmon.config import MysqlConfig, build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.faults import mysql_healthy, stop_thread
from replmon.lab.load import WriteLoad
from replmon.model.tick import Tick

pytestmark = pytest.mark.live

INTERVAL = 0.5
POSITIONS_EVERY: float = MysqlConfig.model_fields["positions_every"].default
"""How often both nodes read their binlog position (2 s by default)."""


async def _run(lab: Lab, n: int, settings: dict[str, object] | None = None,
               at: dict[int, contextlib.AbstractContextManager[None]] | None = None,
               ) -> tuple[list[Tick], list[tuple[int, float | None, int | None, int | None]],
                          dict[str, tuple[int, str]]]:
    """n ticks with every check; ``at`` enters a context at a tick. Returns the ticks,
    (seq, lag, transactions, bytes) per tick and {check: (seq, title)} of what opened."""
    engine = build_engine(settings or {}, entry_points=False)
    ticks: list[Tick] = []
    measured = []
    opened: dict[str, tuple[int, str]] = {}
    cfg = lab.settings(INTERVAL)
    if settings:
        cfg["checks"] = settings
    with contextlib.ExitStack() as stack:
        async with build_collector(build_config(cfg)) as c:
            async for t in c.ticks(n):
                ticks.append(t)
                for f in engine.feed(t).opened:
                    opened.setdefault(f.check, (t.seq, f.title))
                pair = Window(ticks).pair
                m = pair.lag
                measured.append((t.seq, None if m is None else m.seconds, *pair.behind))
                if at and t.seq in at:
                    stack.enter_context(at[t.seq])
    return ticks, measured, opened


async def test_sql_thread_stopped_transactions_and_bytes_grow_while_sbm_is_null(
        lab: Lab) -> None:
    with WriteLoad(lab, rate=300):
        ticks, measured, opened = await _run(
            lab, 40, {"pair_lag": {"lag_after": "5s"}},
            at={5: stop_thread(lab, "SQL_THREAD")})
    before = [m for m in measured if m[0] <= 5]
    # caught up: 0 s, as readings come (the first may come late on a saturated machine: a
    # fresh clone's suite, 2026-12-05, measured nothing before tick 5; None is "not yet")
    assert all(m[1] in (None, 0.0) for m in before) and before[-1][1] == 0.0, before
    late = [m for m in measured if m[0] >= 30]
    assert all(m[2] is not None and m[2] > 1000 for m in late), late  # 300/s for > 10 s
    assert late[-1][2] > late[0][2] and late[-1][3] > late[0][3]  # growing, in bytes too
    # lag: time since the first reading the replica lacks (readings every 2 s)
    stopped_wall = ticks[6].wall
    assert late[-1][1] is not None
    assert abs(late[-1][1] - (ticks[-1].wall - stopped_wall)) <= 2.0 + INTERVAL, late[-1]
    assert ticks[-1].replica.mysql.replication[0].seconds_behind is None
    seq, title = opened["pair_lag"]
    assert "while Seconds_Behind_Master says NULL" in title and "transactions" in title
    # 5 s of lag, <= 2 s until the first reading it lacks, open_after 4 s, a tick of
    # slack: seconds of wall time from the stop (the holds are seconds), the tick as long
    # as the longest spacing of the ticks meanwhile (on time: INTERVAL; a loaded suite
    # delays them, and counting ticks x INTERVAL missed the bound: tick 31, 12.5 s)
    onset = next(t.wall for t in ticks if t.seq == seq)
    spacing = max(b.wall - a.wall for a, b in zip(ticks, ticks[1:], strict=False)
                  if stopped_wall <= a.wall < onset)
    assert onset - stopped_wall <= 5 + 2 + 4 + max(1.0, spacing), (
        seq, onset - stopped_wall, spacing)


@contextlib.contextmanager
def master_delay(lab: Lab, seconds: int) -> Iterator[None]:
    r = lab.replica
    r.sql("STOP SLAVE")
    r.sql(f"CHANGE MASTER TO MASTER_DELAY = {seconds}")
    r.sql("START SLAVE")
    try:
        yield
    finally:
        r.sql("STOP SLAVE")
        r.sql("CHANGE MASTER TO MASTER_DELAY = 0")
        r.sql("START SLAVE")
        mysql_healthy(lab)


async def test_a_delayed_replica_measures_its_delay_and_is_not_flagged(lab: Lab) -> None:
    with master_delay(lab, 6), WriteLoad(lab, rate=100):
        _, measured, opened = await _run(lab, 36, {"pair_lag": {"lag_after": "3s"}})
    lags = [m[1] for m in measured[-8:] if m[1] is not None]
    # The bounds follow from the measurement, not from a run: binlog events carry whole
    # seconds, so a 6 s SQL_Delay holds an event for (5, 6] s; the primary's position is
    # read every positions_every (2 s), so the oldest reading the replica lacks is up to
    # one reading younger than the delay; a tick's readings are stamped with the tick's
    # start and made up to one interval later. Above: the delay, plus one interval for
    # the apply and the replica's reading. Below, 0.1 s more: the readings are taken on
    # ticks, whose starts the scheduler delays by milliseconds, so two readings can be a
    # little more than positions_every apart (a fresh clone's suite, 2026-12-06, read
    # 2.498 s against 2.5).
    low, high = 6 - 1 - POSITIONS_EVERY - INTERVAL - 0.1, 6 + INTERVAL + 0.5
    assert lags and all(low <= x <= high for x in lags), (low, high, measured[-8:])
    assert "pair_lag" not in opened, opened  # behind by design (SQL_Delay)


@contextlib.contextmanager
def pt_heartbeat(lab: Lab, every: float = 0.25) -> Iterator[None]:
    """What ``pt-heartbeat --update -D percona --create-table`` does on the primary."""
    p = lab.primary
    p.sql("CREATE DATABASE IF NOT EXISTS percona")
    p.sql("CREATE TABLE IF NOT EXISTS percona.heartbeat (ts varchar(26) NOT NULL, "
          "server_id int unsigned NOT NULL PRIMARY KEY, file varchar(255) DEFAULT NULL, "
          "position bigint unsigned DEFAULT NULL)")
    p.sql(f"GRANT SELECT ON percona.heartbeat TO '{lab.monitor_user}'@'%'")
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            p.sql("REPLACE INTO percona.heartbeat (ts, server_id) VALUES "
                  "(DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), @@server_id)")
            time.sleep(every)

    th = threading.Thread(target=beat, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join(5)


async def test_heartbeat_lag_with_the_applier_stopped(lab: Lab) -> None:
    settings = {"pair_lag": {"heartbeat_table": "percona.heartbeat", "lag_after": "4s"}}
    with pt_heartbeat(lab):
        ticks, _, opened = await _run(lab, 30, settings,
                                      at={5: stop_thread(lab, "SQL_THREAD")})
    assert "pair_lag" in opened and "by pt-heartbeat" in opened["pair_lag"][1], opened
    last = ticks[-1]
    assert last.lag is not None and last.lag.source == "heartbeat", last.lag
    assert last.lag == Window(ticks).pair.lag  # the tick carries the window's lag
    facts = last.replica.mysql.lag_facts
    assert facts is not None and facts.heartbeat_error is None and facts.heartbeat
    assert last.lag.seconds is not None
    assert abs(last.lag.seconds - (last.wall - ticks[6].wall)) <= 1.0 + INTERVAL, last.lag


async def test_a_heartbeat_table_not_in_pt_heartbeats_format_is_a_note(lab: Lab) -> None:
    p = lab.primary
    p.sql("CREATE DATABASE IF NOT EXISTS percona")
    p.sql("CREATE TABLE IF NOT EXISTS percona.not_hb (ts varchar(26), server_id int)")
    p.sql("INSERT INTO percona.not_hb VALUES ('yesterday', 1)")
    p.sql(f"GRANT SELECT ON percona.not_hb TO '{lab.monitor_user}'@'%'")
    settings = {"pair_lag": {"heartbeat_table": "percona.not_hb"},
                "errant_writes": {"enabled": False}}
    ticks, _, _ = await _run(lab, 4, settings)
    # the first reading of a cold connection may miss the 0.4 s timeout on a loaded
    # machine: judge the last tick the replica's MySQL answered
    read = [t for t in ticks if t.replica.mysql.status.ok]
    assert read, [t.replica.mysql.status for t in ticks]
    facts, lag = read[-1].replica.mysql.lag_facts, read[-1].lag
    # UNIX_TIMESTAMP('yesterday') is NULL: no row of the primary, said in the lag's words
    assert facts is not None and facts.heartbeat == {} and facts.heartbeat_error is None
    assert lag is not None and lag.source == "history", lag
    assert "heartbeat table percona.not_hb has no row of the primary" in lag.detail, lag
    missing = {"pair_lag": {"heartbeat_table": "percona.nope"}}
    ticks, _, _ = await _run(lab, 3, missing)
    read = [t for t in ticks if t.replica.mysql.status.ok]
    assert read, [t.replica.mysql.status for t in ticks]
    facts = read[-1].replica.mysql.lag_facts
    # MariaDB answers "denied" for a table the account may not see, existing or not
    assert facts is not None and facts.heartbeat_error is not None, facts
    assert "denied" in facts.heartbeat_error and "GRANT SELECT ON percona.nope" in \
        facts.heartbeat_error, facts.heartbeat_error
    assert read[-1].primary.mysql.binlog is None or read[-1].primary.mysql.binlog.error is None
