"""stmt_vs_rows on synthetic windows and on seed 004's own numbers (orzdba, two hosts)."""

from __future__ import annotations

import pytest
from replmon.checks.stmt_vs_rows import CHECK

from replmon.check import Window
from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates
from replmon.model.tick import NodeRates
from replmon.testing.synth import GateTally, judge_gate, node, observe, run_check, status, tick


def mysql_node(role: str, upd: float | None, rows: float | None, *, inc: str = "1",
               family: str = "handler", ok: bool = True) -> object:
    sample = MysqlSample(variables={"auto_increment_increment": inc, "binlog_format": "ROW"})
    if not ok:
        sample = MysqlSample(status=status("unreachable", "connection refused"))
    rates = MysqlRates(com_update_per_s=upd, rows_updated_per_s=rows, row_counters=family)
    return node(role, mysql=sample, rates=NodeRates(mysql=rates))  # type: ignore[arg-type]


def one(upd: float | None, rows: float | None, **kw: object) -> list:
    p = mysql_node("primary", upd, rows, **kw)  # type: ignore[arg-type]
    return observe(CHECK, [tick(1, primary=p)])  # type: ignore[arg-type]


def test_seed_004_host_a_flags_with_the_auto_increment_cause() -> None:
    # orzdba on host A: upd 47,240/s, innodb rows upd 23,489/s, auto_increment_increment=2.
    (o,) = one(47240.0, 23489.0, inc="2", family="innodb")
    assert o.node == "primary" and o.key == "update"
    assert o.severity is Severity.WARNING
    assert "47,240" in o.title and "23,489" in o.title and "0.50" in o.title
    assert "auto_increment_increment=2" in o.cause and "~50 %" in o.cause
    assert o.numbers["rows_per_statement"] == pytest.approx(0.497, abs=0.001)


def test_seed_004_host_b_does_not_flag() -> None:
    assert one(31653.0, 31522.0, family="innodb") == []


def test_increment_one_still_flags_but_names_no_auto_increment_cause() -> None:
    (o,) = one(1000.0, 200.0)
    assert o.severity is Severity.CRITICAL  # 0.2 rows per statement
    assert "auto_increment" not in o.cause


@pytest.mark.parametrize(("upd", "rows"), [
    (50.0, 0.0),      # below the load gate: a trickle of no-op UPDATEs is not news
    (None, 10.0),     # no rate (first tick, counter reset)
    (500.0, None),
    (500.0, 1500.0),  # multi-row UPDATEs: more rows than statements is fine
])
def test_quiet_cases(upd: float | None, rows: float | None) -> None:
    assert one(upd, rows) == []


def test_unreachable_node_is_not_judged_here() -> None:
    assert one(47240.0, 23489.0, ok=False) == []


def test_opens_after_three_ticks_and_closes_after_three_clear() -> None:
    bad = [tick(i, primary=mysql_node("primary", 47240.0, 23489.0, inc="2"))  # type: ignore[arg-type]
           for i in range(1, 6)]
    good = [tick(i, primary=mysql_node("primary", 31653.0, 31522.0))  # type: ignore[arg-type]
            for i in range(6, 9)]
    open_now, opened = run_check(CHECK, bad)
    assert list(opened) == [3]  # held on ticks 1, 2, 3
    assert open_now[0].since_seq == 1
    open_after_clear, _ = run_check(CHECK, bad + good)
    assert open_after_clear == []
    still_open, _ = run_check(CHECK, bad + good[:2])
    assert len(still_open) == 1  # two clear ticks are not enough to close


def test_the_gate_is_quiet_only_where_nothing_is_reported() -> None:
    """The gate (``quiet`` from the gauges alone) on kinds at every mix of rates around
    its LEVELS (1, 10, 100 statements/s: on, between and below them) and ratios, with
    a load gate between and on them: never quiet where ``evaluate`` reports, and quiet
    where a nearly idle kind with no rows is below the load gate (the case the levels
    are for)."""
    gate = CHECK.gate
    assert gate is not None
    rates = (0.5, 1.0, 5.0, 10.0, 50.0, 100.0, 500.0)  # on, between and below the levels
    ratios = (0.2, 1.0, 2.0)
    limits = [CHECK.thresholds(min_statements_per_s=least, max_rows_per_statement=most)
              for least in (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 150.0, 500.0, 1000.0)
              for most in (0.3, 0.8, 1.5)]
    tally = GateTally()
    for upd in rates:
        for upd_per in ratios:
            for dele in rates:
                for del_per in ratios:
                    r = MysqlRates(com_update_per_s=upd, rows_updated_per_s=upd * upd_per,
                                   com_delete_per_s=dele, rows_deleted_per_s=dele * del_per,
                                   row_counters="innodb")
                    w = Window([tick(1, primary=node("primary", mysql=MysqlSample(),
                                                     rates=NodeRates(mysql=r)))])
                    judge_gate(CHECK, w, limits, tally, f"{(upd, upd_per, dele, del_per)}")
    assert not tally.hidden, tally.hidden[:3]
    assert tally.quiet > 0.9 * tally.silent  # 8,730 of 9,387 when written
    # a busy kind doing its rows and an idle one doing none: quiet at the default gate
    r = MysqlRates(com_update_per_s=500.0, rows_updated_per_s=500.0, com_delete_per_s=5.0,
                   rows_deleted_per_s=0.0, row_counters="innodb")
    w = Window([tick(1, primary=node("primary", rates=NodeRates(mysql=r)))])
    assert gate.quiet(gate.measure(w), CHECK.thresholds())
