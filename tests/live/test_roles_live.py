"""Roles follow the servers, on the lab (MariaDB 10.11 + Redis 7.0), under a write load
before, during and after the change: a planned switchover of MySQL and Redis is one
info event naming the new primary and nothing else (no not-replicating, no swapped
Redis, no errant GTIDs); the pair is handed on as it is; a half-done one (MySQL moved,
Redis not) is a warning after its hold. Each induce switches back on exit. The Sentinel
failover's run is test_sentinel_live.py's (one run serves every assertion about it)."""

from __future__ import annotations

import pytest

from replmon.lab import Lab
from replmon.model.findings import Severity
from replmon.testing.scenarios import LabScenario, run_lab_scenario
from replmon.testing.scenarios.roles import switched_over

pytestmark = pytest.mark.live


async def test_a_planned_switchover_is_one_event_and_the_pair_stays_quiet(lab: Lab) -> None:
    sc = LabScenario("planned switchover", "roles", induce=switched_over(("mysql", "redis")),
                     min_severity=Severity.INFO, ticks=24, load={"rate": 200})
    out = await run_lab_scenario(lab, sc)
    names = {t.primary.name for t in out.ticks}
    assert names == {"lab-primary", "lab-replica"}, names
    after = [t for t in out.ticks if t.seq >= out.onset_seq]
    last = after[-1]
    assert last.primary.name == "lab-replica" and last.replica.name == "lab-primary"
    assert last.roles is not None and last.roles.since is not None
    assert {lr.layer: lr.primary for lr in last.roles.layers if lr.state == "direction"} \
        == {"mysql": "lab-replica", "redis": "lab-replica"}, last.roles
    # read_only as it is now, not a minute late (variables re-read after the change)
    assert (last.primary.mysql.variables.get("read_only"),
            last.replica.mysql.variables.get("read_only")) == ("OFF", "ON")
    # the replica's channel (now on lab-primary) reads from lab-replica
    (ch,) = last.replica.mysql.replication
    assert ch.io_running == "Yes" and ch.sql_running
    event = out.first("roles", Severity.INFO)
    assert event is not None
    assert abs(event.since_wall - last.roles.since) < 1e-6
    noisy = [(f.check, f.title) for fs in out.opened.values() for f in fs
             if f.severity > Severity.INFO]
    assert noisy == [], noisy
    # the fence (read_only on the old primary, then the promotion: milliseconds) opens
    # nothing of the write path, not even at info (that would become critical later)
    refused = [f.title for fs in out.opened.values() for f in fs
               if f.check == "writes_refused"]
    assert refused == [], refused
    assert out.on_time(Severity.INFO), out.onset_delay_s(Severity.INFO)


async def test_a_half_done_switchover_is_a_warning_after_its_hold(lab: Lab) -> None:
    sc = LabScenario("MySQL switched over, Redis left", "roles",
                     induce=switched_over(("mysql",)), ticks=16, load={"rate": 200},
                     settings={"roles": {"hold": "3s"}})
    out = await run_lab_scenario(lab, sc)
    worst = [f for fs in out.opened.values() for f in fs if f.check == "roles"]
    assert worst, "no roles finding"
    last = out.ticks[-1]
    assert last.roles is not None and last.primary.name == "lab-replica"
    assert {lr.layer: lr.primary for lr in last.roles.layers if lr.state == "direction"} \
        == {"mysql": "lab-replica", "redis": "lab-primary"}
    # the finding escalated from info ("changing") to warning once held 3 s
    from replmon.engine import build_engine

    eng = build_engine(sc.settings, entry_points=False)
    upd = None
    for t in out.ticks:
        upd = eng.feed(t)
    assert upd is not None
    (f,) = [f for f in upd.open if f.check == "roles"]
    assert f.severity is Severity.WARNING, f.title
    assert "half done" in f.title and "Redis: lab-primary is the primary" in f.title, f.title
