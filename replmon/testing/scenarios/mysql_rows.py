"""Seed 004 on the lab and in the seed's own numbers: statements vs rows."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates
from replmon.model.tick import NodeRates, Tick
from replmon.testing.scenarios import LabScenario, SeedScenario, nothing
from replmon.testing.synth import node, series, status

AUTO_INC_TABLE = "lab.t_autoinc2"


@contextlib.contextmanager
def auto_increment_2(lab: Any) -> Iterator[None]:
    """auto_increment_increment=2 on the primary while a fresh table is filled, so its
    ids are 1, 3, 5, ...; the load then draws ids from 1..2 x rows: half miss."""
    p = lab.primary
    p.sql(f"DROP TABLE IF EXISTS {AUTO_INC_TABLE}")
    p.sql("SET GLOBAL auto_increment_increment = 2")
    try:
        yield
    finally:
        p.sql("SET GLOBAL auto_increment_increment = 1")
        p.sql(f"DROP TABLE IF EXISTS {AUTO_INC_TABLE}")


def _seed_004(upd: float, rows: float, inc: str) -> tuple[list[Tick], int]:
    def pair(u: float | None, r: float | None) -> tuple[Any, Any]:
        sample = MysqlSample(variables={"auto_increment_increment": inc})
        rates = NodeRates(mysql=MysqlRates(com_update_per_s=u, rows_updated_per_s=r,
                                           row_counters="innodb"))
        # Seed 004 compares two standalone hosts, not a pair: no replica to judge.
        off = MysqlSample(status=status("absent", "seed 004 has no replica"))
        return node("primary", mysql=sample, rates=rates), node("replica", mysql=off)
    # orzdba prints one line per second; the first tick has no rates yet.
    return series([pair(None, None)] + [pair(upd, rows)] * 8), 1


SEEDS = [
    SeedScenario("seed 004 host A: 47,240 upd/s vs 23,489 rows/s", "stmt_vs_rows",
                 lambda: _seed_004(47240.0, 23489.0, "2")),
    SeedScenario("seed 004 host B: 31,653 upd/s vs 31,522 rows/s", "",
                 lambda: _seed_004(31653.0, 31522.0, "1")),
]

# The WriteLoad samples its id range when it starts, so the table with the
# empty ids must exist before it: setup makes the server state, the load (on the
# fresh table) is the onset. run_lab_scenario enters setup before the load.
LAB = [
    LabScenario("auto_increment_increment=2, random-id UPDATEs", "stmt_vs_rows",
                induce=nothing, setup=auto_increment_2,
                load={"rate": 400, "rows": 500, "table": AUTO_INC_TABLE, "id_max": 1000,
                      "redis": False},
                healthy_ticks=1),
    LabScenario("auto_increment_increment=1, same load", "",
                induce=nothing,
                load={"rate": 400, "rows": 500, "table": "lab.t_autoinc1", "id_max": 500,
                      "redis": False},
                healthy_ticks=1),
]
