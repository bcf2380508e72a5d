"""Roles per service on real servers (#51).

1. The README's one-machine form (``--primary 127.0.0.1 --replica 127.0.0.1`` with
   ports: both nodes on one host) beside two named nodes, sampling the same lab at the
   same time through a planned switchover of MySQL and Redis, an unplanned failover
   (the primary node lost: its MySQL and Redis killed, the replica promoted) and the
   old primary rejoining: the same roles, the same findings, tick for tick, on MariaDB
   10.11 + Redis 7.0 and on MySQL 9.7 + Valkey 8.1.
2. A MySQL-only switchover where MySQL and Redis are said to move together, beside a
   Sentinel: flagged half done.

A Redis Sentinel failing Redis over alone while MySQL stays is test_sentinel_live.py's
(one failover run serves every assertion about it).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections.abc import Callable
from typing import Any

import pytest
from labpool import MYSQL97, group

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.lab.sentinel import lab_sentinel
from replmon.lab.switch import node_lost, rejoin, switch_back, switched, switchover
from replmon.model.findings import Finding, Severity
from replmon.model.tick import Tick

pytestmark = pytest.mark.live

INTERVAL = 0.5


def one_machine(settings: dict[str, Any]) -> dict[str, Any]:
    """The lab's keys as the README's one-machine form gives them: both nodes' host
    127.0.0.1 and no name (replmon names them)."""
    out = copy.deepcopy(settings)
    for role in ("primary", "replica"):
        out[role].pop("name", None)
        out[role]["host"] = "127.0.0.1"
    return out


async def sample_while(configs: list[dict[str, Any]], steps: Callable[[], None],
                       settled: Callable[[list[Tick]], bool] | None = None,
                       settle_s: float = 20.0) -> list[list[Tick]]:
    """Each config's ticks while ``steps`` runs in a thread (and one tick after); with
    ``settled``, then until it holds for every config's ticks (at most ``settle_s``)."""
    done = asyncio.Event()
    stepped, calm = asyncio.Event(), asyncio.Event()  # steps done; then settled
    out: list[list[Tick]] = [[] for _ in configs]

    async def watch(i: int) -> None:
        async with build_collector(build_config(configs[i])) as c:
            async for t in c.ticks():
                out[i].append(t)
                if done.is_set():
                    return
                if stepped.is_set() and settled is not None \
                        and all(settled(ts) for ts in out):
                    calm.set()

    watchers = [asyncio.ensure_future(watch(i)) for i in range(len(configs))]
    try:
        await asyncio.to_thread(steps)
        if settled is not None:
            stepped.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(calm.wait(), settle_s)
    finally:
        done.set()
        await asyncio.wait_for(asyncio.gather(*watchers), 10)
    return out


def opened(ticks: list[Tick], settings: dict[str, Any] | None = None
           ) -> tuple[list[Finding], list[Finding]]:
    """(every finding that opened, the open ones at the end) of every check."""
    eng = build_engine(settings, entry_points=False)
    found: list[Finding] = []
    upd = None
    for t in ticks:
        upd = eng.feed(t)
        found += upd.opened
    assert upd is not None
    return found, upd.open


def _switch_fail_rejoin(lab: Lab, marks: dict[str, float]) -> None:
    time.sleep(3)
    marks["switch"] = time.time()
    switchover(lab)  # MySQL and Redis: lab-replica the primary
    time.sleep(4)
    marks["lost"] = time.time()
    node_lost(lab)  # lab-replica lost: lab-primary promoted
    time.sleep(6)
    rejoin(lab, lab.replica)
    marks["rejoined"] = time.time()
    time.sleep(5)


def answered(ts: list[Tick], seconds: float = 5.0) -> bool:
    """Every node's MySQL and Redis answered at each tick of the last ``seconds``: a node
    restarted under the write load may answer a read late (0.4 s) a few seconds after its
    rejoin (seen once in a suite), which keeps its loss's findings open; the test judges
    the end once it answers, as the rejoin's 5 s usually give."""
    n = int(seconds / INTERVAL)
    return len(ts) >= n and all(node.mysql.status.ok and node.redis.status.ok
                                for t in ts[-n:] for node in t.nodes)


def check_one_machine_form(lab: Lab) -> None:
    named = lab.settings(INTERVAL)
    alike = one_machine(named)
    marks: dict[str, float] = {}
    assert lab.mysql_primary is lab.primary and lab.redis_primary is lab.primary
    with WriteLoad(lab, rate=150):
        try:
            by_name, by_port = asyncio.run(sample_while(
                [named, alike], lambda: _switch_fail_rejoin(lab, marks), answered))
        finally:
            if lab.replica.mysql_proc is None or lab.replica.redis_proc is None:
                rejoin(lab, lab.replica)
            switch_back(lab)
    assert lab.mysql_primary is lab.primary and lab.redis_primary is lab.primary
    ports = {f"127.0.0.1:{n.mysql_port}" for n in lab.nodes}
    assert {n.name for n in by_port[0].nodes} == ports  # told apart by their ports
    assert {n.name for n in by_name[0].nodes} == {"lab-primary", "lab-replica"}

    def given_primary(ts: list[Tick]) -> list[str | None]:
        return [t.primary.given for t in ts]

    # the same roles, the same findings, by identity
    found: dict[str, list[Finding]] = {}
    for form, ts in (("named", by_name), ("one machine", by_port)):
        fs, open_ = opened(ts)
        found[form] = fs
        # switched over, then back by the failover: the given replica primary between
        assert "replica" in given_primary(ts) and given_primary(ts)[-1] == "primary", form
        events = [f for f in fs if f.check == "roles"]
        names = {t.primary.given: t.primary.name for t in ts}
        assert [(f.severity, f.given, f.title.split(" is now")[0]) for f in events] == [
            (Severity.INFO, "replica", names["replica"]),
            (Severity.INFO, "primary", names["primary"])], [f.title for f in events]
        # A tick's wall is when its sampling began: a tick begun up to one interval before
        # a mark samples after it (a suite saw MySQL refused on a tick begun 0.3 s before
        # node_lost's mark, the sample late on the loaded machine)
        switch, lost = marks["switch"] - INTERVAL, marks["lost"] - INTERVAL
        assert events[0].since_wall >= switch and events[1].since_wall >= lost, (marks, events)
        # nothing above info but what the lost node's absence causes while it is gone
        loud = [f for f in fs if f.severity > Severity.INFO]
        # (+ two ticks: the rejoin's own full sync is seen on the tick after it, at once
        # since the lab's Redis no longer waits 5 s to start one)
        seen_by = marks["rejoined"] + 2 * INTERVAL
        assert all(lost <= f.since_wall <= seen_by for f in loud), [
            (f.check, f.key, f.title, round(f.since_wall - marks["lost"], 1),
             round(marks["rejoined"] - marks["lost"], 1)) for f in loud]
        # (the lost node's own, by identity, and the master's full sync of its empty
        # Redis when it rejoins)
        assert all(f.given == "replica" or f.key == "full_resync" for f in loud), [
            (f.check, f.given, f.key, f.title) for f in loud]
        assert any(f.given == "replica" and f.check == "source_health" for f in loud)
        not_replicating = [f.title for f in fs if "no channel configured" in f.title
                           or "Redis is a master" in f.title or "both" in f.title]
        assert not_replicating == [], (form, not_replicating)
        # at the end nothing but the rejoin's full sync, said for resync_hold_s (60 s)
        assert [f.key for f in open_ if f.severity > Severity.INFO] in ([], ["full_resync"]), \
            (form, [f.title for f in open_])
        # how long the MySQL replica has followed: its receiver's processlist time
        assert any(ch.connected_s is not None for t in ts[-4:]
                   for ch in t.replica.mysql.replication), form
    # the same findings (not the same order: the two forms are two collectors, and two
    # findings of one tick open in either order, the lost node's MySQL or its Redis first)
    ident = [sorted((f.check, f.given or "", f.key if f.check != "roles" else "", f.severity)
                    for f in found[form]) for form in ("named", "one machine")]
    assert ident[0] == ident[1]


def test_one_machine_form_is_judged_as_two_named_nodes_mariadb(lab: Lab) -> None:
    check_one_machine_form(lab)


@group(MYSQL97)
def test_one_machine_form_is_judged_as_two_named_nodes_mysql97(mysql97: Lab) -> None:
    check_one_machine_form(mysql97)


def test_a_mysql_only_switchover_is_half_done_when_redis_should_move_with_it(
        lab: Lab) -> None:
    with WriteLoad(lab, rate=150), lab_sentinel(lab) as sentinel:
        settings = lab.settings(INTERVAL)
        settings["sentinel"] = {"host": sentinel.host, "port": sentinel.port}
        settings["roles"] = {"together": ["mysql", "redis"]}
        checks = {"roles": {"hold": "3s"}}

        def steps() -> None:
            with switched(lab, ("mysql",)):
                time.sleep(6)

        (ticks,) = asyncio.run(sample_while([settings], steps))
    eng = build_engine(checks, entry_points=False)
    half: list[Finding] = []
    for t in ticks:
        half += [f for f in eng.feed(t).open if f.key == "half_done"]
    assert max((f.severity for f in half), default=None) is Severity.WARNING, \
        [f.title for f in half]
    assert "Redis: lab-primary is the primary" in half[-1].title, half[-1].title
