"""Settings that differ between the two nodes (config_drift): seed 004's root cause,
auto_increment_increment=2 on one host and 1 on the other, as a pair; on the lab, the
same set on the primary only (flagged) and on both (not a drift)."""

from __future__ import annotations

from replmon.lab.faults import increment_2
from replmon.model.mysql import MysqlSample
from replmon.model.tick import Tick
from replmon.testing.scenarios import LabScenario, SeedScenario, nothing
from replmon.testing.synth import node, series

SEED_VARIABLES = {"binlog_format": "ROW", "server_id": "1", "auto_increment_offset": "1",
                  "version": "10.11.19-MariaDB-0+deb12u1-log"}


def seed_004_pair(healthy: int = 4, after: int = 6) -> tuple[list[Tick], int]:
    """Seed 004's two hosts as a pair: the primary's auto_increment_increment goes to 2."""
    pairs = []
    for i in range(healthy + after):
        inc = "2" if i >= healthy else "1"
        p = MysqlSample(variables={**SEED_VARIABLES, "auto_increment_increment": inc})
        r = MysqlSample(variables={**SEED_VARIABLES, "server_id": "2",
                                   "auto_increment_increment": "1"})
        pairs.append((node("primary", mysql=p), node("replica", mysql=r)))
    return series(pairs), healthy


SEEDS = [
    SeedScenario("seed 004 as a pair: auto_increment_increment 2 on the primary, 1 on the "
                 "replica", "config_drift", seed_004_pair),
]

# Variables are read at connect and about once a minute: the lab sets them before the
# collector starts (setup), and the first ticks must show the drift.
LAB = [
    LabScenario("auto_increment_increment=2 on the primary only", "config_drift",
                induce=nothing, setup=lambda lab: increment_2(lab, both=False), load={},
                healthy_ticks=1),
    LabScenario("auto_increment_increment=2 on both nodes: no drift", "",
                induce=nothing, setup=lambda lab: increment_2(lab, both=True), load={},
                healthy_ticks=1),
]
