"""#34 on the lab: the SQL-thread-stopped and auto-increment scenarios each give one
incident with the expected root, its other findings under it."""

from __future__ import annotations

import pytest

from replmon.engine import build_engine
from replmon.lab import Lab
from replmon.model.incidents import IncidentTracker, causality
from replmon.output.incidents import incident_line
from replmon.testing.scenarios import run_lab_scenario
from replmon.testing.scenarios.mysql_rows import LAB as ROWS
from replmon.testing.scenarios.replication import LAB as REPLICATION

pytestmark = pytest.mark.live


async def incidents(lab: Lab, sc: object) -> IncidentTracker:
    tracker = IncidentTracker(causality(build_engine(entry_points=False).checks))
    await run_lab_scenario(lab, sc,  # type: ignore[arg-type]
                           on_tick=lambda t, upd: tracker.update(t.wall, upd.open))
    return tracker


def warn_plus(tracker: IncidentTracker) -> list[object]:
    return [i for i in tracker.incidents if i.severity >= 1]


async def test_the_sql_thread_stopped_is_one_incident_under_mysql_replication(
        lab: Lab) -> None:
    (sc,) = [s for s in REPLICATION if s.name.startswith("replica SQL thread stopped")]
    tracker = await incidents(lab, sc)
    (inc,) = warn_plus(tracker)  # type: ignore[misc]
    assert inc.root.check == "mysql_replication" and inc.root.node == "replica", \
        incident_line(inc)
    assert {f.check for f in inc.consequences} <= {"pair_lag", "applier_progress"}


async def test_auto_increment_drift_is_one_incident_under_config_drift(lab: Lab) -> None:
    (sc,) = [s for s in ROWS if s.check == "stmt_vs_rows"]
    tracker = await incidents(lab, sc)
    (inc,) = warn_plus(tracker)  # type: ignore[misc]
    assert (inc.root.check, inc.root.key) == ("config_drift", "auto_increment_increment"), \
        incident_line(inc)
    assert [f.check for f in inc.consequences] == ["stmt_vs_rows"], incident_line(inc)
