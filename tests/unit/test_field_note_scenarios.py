"""Every field-note scenario (a ``SeedScenario``: ticks rebuilt from the field notes' own
figures) meets the accuracy target: its check flags within 3 ticks of onset; quiet ones
stay quiet. The lab scenarios run in tests/live/checks and bench/accuracy.py."""

from __future__ import annotations

import pytest

from replmon.testing.scenarios import SeedScenario, all_scenarios, judge, run_seed_scenario

SEEDS, _ = all_scenarios()


def test_there_are_seed_scenarios_for_each_seed_with_numbers() -> None:
    assert len(SEEDS) >= 2
    assert any("004" in s.name for s in SEEDS)


@pytest.mark.parametrize("sc", SEEDS, ids=[s.name for s in SEEDS])
def test_seed_scenario(sc: SeedScenario) -> None:
    out = run_seed_scenario(sc)
    ok, why = judge(out, sc.min_severity)
    assert ok, why
