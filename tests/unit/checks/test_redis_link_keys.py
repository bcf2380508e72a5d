"""redis_replication's link: a key for each condition (#54 leftovers). A finding keeps
its worst severity and its story, so a link that went down and came back with a full
sync under one key read as one finding renamed; now they are two findings, the sync
explained by the outage in one incident. On INFO captured from real servers."""

from __future__ import annotations

from replmon.checks.redis_replication import CHECK
from test_redis_replication import MASTER, load, primary, replica, ticks_of

from replmon.model.incidents import IncidentTracker, explains
from replmon.model.redis import RedisSample
from replmon.testing.synth import run_check, status


def test_a_link_down_then_its_full_sync_are_two_findings_of_one_incident() -> None:
    down = load("redis7.0_replica_down")
    syncing = load("redis7.0_master_fullsync")  # the master lists it in wait_bgsave
    ticks = ticks_of(*[(primary(MASTER), replica(down))] * 4,
                     *[(primary(syncing), replica(down))] * 4)
    _, opened = run_check(CHECK, ticks)
    found = [f for fs in opened.values() for f in fs if f.node == "replica"]
    assert [(f.node, f.key) for f in found] == [("replica", "link/down"),
                                               ("replica", "link/sync")], found
    first, then = found
    assert "down" in first.title and "full sync" in then.title
    links = {CHECK.id: CHECK.explains}
    assert explains(first, then, links) is not None
    tracker = IncidentTracker(links)
    tracker.update(then.since_wall, found)
    (incident,) = tracker.open
    assert [f.key for f in incident.roots] == ["link/down"]


def test_each_condition_of_the_link_has_its_own_key() -> None:
    dead = RedisSample(status=status("timeout", "no answer for 0.8 s", since=0.0))
    keys = {
        run_check(CHECK, ticks_of(*[(primary(MASTER), replica(r))] * 4))[0][0].key
        for r in (dead, load("redis7.0_replica_down"), MASTER)}
    assert keys == {"link/unreadable", "link/down", "link/master"}
