"""config_drift on the lab: auto_increment_increment=2 on the primary only is flagged
from the first ticks; on both nodes it is not a drift."""

from __future__ import annotations

import pytest

from replmon.lab import Lab
from replmon.model.findings import Severity
from replmon.testing.scenarios import judge, run_lab_scenario
from replmon.testing.scenarios.drift import LAB

pytestmark = pytest.mark.live


async def test_increment_on_one_node_only_is_flagged(lab: Lab) -> None:
    sc = LAB[0]
    out = await run_lab_scenario(lab, sc, until_found=True)
    ok, why = judge(out, sc.min_severity)
    assert ok, why
    f = out.first()
    assert f is not None and f.check == "config_drift" and f.severity is Severity.WARNING
    assert f.title == "auto_increment_increment differs: primary 2, replica 1"


async def test_increment_on_both_is_no_drift(lab: Lab) -> None:
    sc = LAB[1]
    out = await run_lab_scenario(lab, sc)
    ok, why = judge(out, sc.min_severity)
    assert ok, why
    assert not [f for u in out.opened.values() for f in u
                if f.check == "config_drift" and f.key == "auto_increment_increment"]
