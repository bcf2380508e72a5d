"""errant_writes on the lab: read_only off on the replica and one INSERT there: flagged
with the replica's own GTID (MariaDB 0-2-N); undone (RESET MASTER on the replica): closed.
The healthy lab under write load stays quiet (test_accuracy's healthy scenario too)."""

from __future__ import annotations

import pytest

from replmon.lab import Lab
from replmon.testing.scenarios import judge, run_lab_scenario
from replmon.testing.scenarios.pair import LAB

pytestmark = pytest.mark.live


async def test_an_insert_on_the_replica_is_flagged_with_its_gtid(lab: Lab) -> None:
    (sc,) = [s for s in LAB if s.check == "errant_writes"]
    out = await run_lab_scenario(lab, sc, until_found=True)
    ok, why = judge(out, sc.min_severity)
    assert ok, why
    f = out.first()
    assert f is not None and f.node == "replica"
    assert "written on the replica itself (server_id 2)" in f.title, f.title
    assert f.title.startswith("errant transactions on the replica: 0-2-")
    # and gone once undone: the replica's binlog state no longer holds it
    state = lab.replica.sql("SELECT @@gtid_binlog_state")[0][0]
    assert "0-2-" not in state, state


async def test_sql_thread_stopped_scenario_flags_pair_lag_on_time(lab: Lab) -> None:
    (sc,) = [s for s in LAB if s.check == "pair_lag"]
    out = await run_lab_scenario(lab, sc, until_found=True)
    ok, why = judge(out, sc.min_severity)
    assert ok, why
