"""Seed 004 reproduced on the lab: auto_increment_increment=2 flags, 1 does not."""

from __future__ import annotations

import pytest

from replmon.lab import Lab
from replmon.testing.scenarios import mysql_rows, run_lab_scenario

pytestmark = pytest.mark.live


async def test_auto_increment_2_with_random_id_updates_flags_within_3_s(lab: Lab) -> None:
    out = await run_lab_scenario(lab, mysql_rows.LAB[0], until_found=True)
    f = out.first()
    assert f is not None, [t.primary.rates.mysql for t in out.ticks]
    assert f.node == "primary" and f.key == "update"
    assert out.on_time(), out.onset_delay_s()
    assert "auto_increment_increment=2" in f.cause
    per = f.numbers["rows_per_statement"]
    assert isinstance(per, float) and 0.3 < per < 0.7  # about half the ids are empty


async def test_auto_increment_1_same_load_stays_quiet(lab: Lab) -> None:
    out = await run_lab_scenario(lab, mysql_rows.LAB[1])
    assert out.first("stmt_vs_rows") is None
    # one row per UPDATE on the ticks MySQL answered (a sample that timed out on the
    # saturated suite machine has no rates: the source's right answer, not this test's
    # subject; most ticks must have answered)
    got = [(t.primary.mysql.status.state.value, t.primary.rates.mysql.rows_updated_per_update)
           for t in out.ticks[1:]]
    rates = [r for state, r in got if state == "ok" and r is not None]
    assert len(rates) >= 0.8 * len(got), got
    assert all(r > 0.9 for r in rates), got
