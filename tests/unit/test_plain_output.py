"""The plain text writer: aligned rows, state words in place of numbers, headers repeated."""

from __future__ import annotations

import io
import time

import pytest

from replmon.model.base import SourceState, SourceStatus
from replmon.model.drbd import DrbdSample
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.mysql_rates import MysqlRates
from replmon.model.redis import RedisRates, RedisSample
from replmon.model.tick import NodeRates, NodeTick, Tick
from replmon.output.plain import PlainWriter, human

ABSENT = DrbdSample(status=SourceStatus(state=SourceState.ABSENT, error="no DRBD"))


def tick(seq: int, *, replica_mysql: MysqlSample | None = None) -> Tick:
    rates = NodeRates(
        mysql=MysqlRates(com_update_per_s=47240.0, rows_updated_per_s=23489.0,
                         com_insert_per_s=12.0, com_delete_per_s=0.0, com_select_per_s=950.0),
        redis=RedisRates(ops_per_s=1234.0),
    )
    primary = NodeTick(role="primary", name="db163", drbd=ABSENT, rates=rates,
                       redis=RedisSample(role="master", connected_replicas=1,
                                         used_memory=900, maxmemory=1000))
    replica = NodeTick(
        role="replica", name="db162", drbd=ABSENT, rates=rates,
        mysql=replica_mysql or MysqlSample(replication=[ReplicaChannel(
            io_running="Yes", sql_running=False, seconds_behind=None)]),
        redis=RedisSample(role="replica", link_status="down"),
    )
    return Tick(seq=seq, interval=1.0, wall=1_700_000_000.0 + seq, mono=seq, due_mono=seq,
                slot=seq, primary=primary, replica=replica)


def lines_for(ticks: list[Tick], **kw: int) -> list[str]:
    out = io.StringIO()
    w = PlainWriter(out, localtime=time.gmtime, **kw)
    for t in ticks:
        w.write(t)
    return out.getvalue().splitlines()


def test_rows_line_up_under_the_header_and_show_the_numbers() -> None:
    lines = lines_for([tick(0)])
    header, p, r = lines[1], lines[2], lines[3]
    assert p.startswith("22:13:20  P db163")
    assert r.startswith("22:13:20  R db162")
    bars = [i for i, ch in enumerate(header) if ch == "|"]
    assert bars, header
    for row in (p, r):
        assert [i for i, ch in enumerate(row) if ch == "|"] == bars, row
    assert "47k" in p and "23k" in p  # upd/s vs rows updated/s side by side
    assert "90%" in p and "r=1" in p  # Redis memory against maxmemory, replica count
    assert "NULL Y/N" in r and "down" in r  # SQL thread stopped: lag NULL


def test_group_absent_on_both_nodes_is_left_out() -> None:
    header = lines_for([tick(0)])[0]
    assert "drbd" not in header
    assert "mysql" in header and "redis" in header


def test_a_failing_source_prints_its_state_word_instead_of_numbers() -> None:
    down = MysqlSample(status=SourceStatus(state=SourceState.UNREACHABLE, error="refused"))
    r = lines_for([tick(0, replica_mysql=down)])[3]
    assert "unreachable" in r
    assert "47k" not in r.split("|")[2]  # the mysql group holds the word, not stale numbers


def test_after_a_switchover_each_row_names_its_own_node() -> None:
    """The roles follow the servers (#40): the P row is db162's once db162 is the
    primary (it named the first tick's primary, db163, against db162's numbers)."""
    before = tick(0)
    p, r = before.primary, before.replica
    after = tick(1).model_copy(update={
        "primary": r.model_copy(update={"role": "primary", "given": "replica"}),
        "replica": p.model_copy(update={"role": "replica", "given": "primary"})})
    lines = lines_for([before, after])
    assert lines[2].startswith("22:13:20  P db163") and lines[3].startswith("22:13:20  R db162")
    assert lines[4].startswith("22:13:21  P db162") and lines[5].startswith("22:13:21  R db163")


def test_header_repeats_every_n_rows() -> None:
    lines = lines_for([tick(i) for i in range(5)], header_every=4)
    headers = [i for i, ln in enumerate(lines) if ln.startswith("time")]
    assert headers == [1, 7, 13]  # 2 header lines + 4 rows (2 ticks) per block


@pytest.mark.parametrize(("value", "text"), [
    (None, "    -"), (0, "    0"), (950, "  950"), (1234, " 1.2k"), (47240, "  47k"),
    (4_500_000, " 4.5M"), (-3, "   -3"),
])
def test_human_fits_five_columns(value: float | None, text: str) -> None:
    assert human(value) == text
