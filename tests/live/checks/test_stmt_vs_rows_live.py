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
    rates = [t.primary.rates.mysql.rows_updated_per_update for t in out.ticks[1:]]
    assert all(r is not None and r > 0.9 for r in rates), rates
