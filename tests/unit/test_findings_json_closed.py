"""/findings.json (replmon serve) shows the findings that closed recently beside the
open ones (#54 leftovers): one who arrives after the heal sees what happened, as on the
screen. Today's checks over a recording of a real Redis link outage on the lab."""

from __future__ import annotations

import json
from pathlib import Path

from replmon.engine import build_engine
from replmon.fleet.http import findings_doc
from replmon.fleet.state import PairState
from replmon.model.findings import RECENT_MAX, RECENT_S
from replmon.model.incidents import causality
from replmon.session.recording import open_recording

SESSION = Path(__file__).resolve().parents[2] / "sample_sessions" / \
    "redis_link_down_full_resync.rmrec"


def test_recently_closed_findings_are_listed_after_the_open_ones() -> None:
    engine = build_engine()
    state = PairState("cache", 1.0, links=causality(engine.checks))
    with open_recording(str(SESSION)) as rec:
        for tick in rec:
            state.on_tick(tick, engine.feed(tick))
    doc = findings_doc([state])
    pair = doc["pairs"]["cache"]
    # the keys as before, the closed ones added
    assert set(pair) == {"interval_s", "last_tick", "nodes", "findings", "incidents", "closed"}
    closed = pair["closed"]
    assert 0 < len(closed) <= RECENT_MAX
    ends = [f["closed_wall"] for f in closed]
    assert ends == sorted(ends, reverse=True)  # newest first
    assert all(pair["last_tick"] - RECENT_S <= e <= pair["last_tick"] for e in ends)
    for f in closed:
        assert f["state"] == "closed" and f["worst"] and f["story"], f
        assert f["closed_time"].startswith("20"), f
    link = next(f for f in closed if f["check"] == "redis_replication"
                and f["key"].startswith("link/"))
    assert link["node"] == "replica" and link["worst"] == "warning", link
    open_ids = {(f["check"], f["node"], f["key"]) for f in pair["findings"]}
    assert not open_ids & {(f["check"], f["node"], f["key"]) for f in closed}
    assert len(json.dumps(doc)) < 64 * 1024  # capped: the page stays small
