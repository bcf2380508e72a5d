"""Redis Sentinel on the lab, real: one failover run serves every assertion about it
(it costs ~25 s, most of it Sentinel turning the old master into a replica: it polls a
replica's INFO every 10 s). A real Sentinel (redis-server --sentinel, quorum 1, down
after 1 s) promotes the replica's Redis while the master is stalled (SIGSTOP), under a
write load; replmon, sampling all along with ``--sentinel``:

- the lab: Sentinel's master, the load's writes and the old master follow (was
  test_lab_switch_live's own run);
- roles: the promoted node is Redis's primary, and with MySQL left where it was the
  roles are half done, a warning once held 3 s (was test_roles_live's own run);
- the Sentinel source: its view (o_down, the failover's states, the new master and
  epoch), its events (+switch-master...) and the roles finding that names what
  Sentinel did.

Redis is switched back (planned) after. A Sentinel that is not there, or hangs, is a
source error on the pair while the ticks go on on time (the second test, ~2 s)."""

from __future__ import annotations

import asyncio
import socket

import pytest
from test_lab_switch_live import RATE, assert_rate, redis_sets, state

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab_sentinel import lab_sentinel, sentinel_failover
from replmon.lab_switch import redis_switchover, wait_redis_link
from replmon.labload import WriteLoad
from replmon.model.findings import Severity
from replmon.model.sentinel import SentinelSample
from replmon.model.tick import Tick

pytestmark = pytest.mark.live


async def test_a_sentinel_failover_is_followed_named_and_told(lab: Lab) -> None:
    assert not lab.switched
    start = state(lab)
    old, new = lab.primary, lab.replica
    eng = build_engine({"roles": {"hold": "3s"}}, entry_points=False)
    ticks: list[Tick] = []
    worst, title = Severity.INFO, ""
    with WriteLoad(lab, rate=RATE) as load:
        try:
            with lab_sentinel(lab) as sentinel:
                assert sentinel.master_addr() == (old.host, old.redis_port)
                settings = lab.settings(0.5)
                settings["sentinel"] = {"host": sentinel.host, "port": sentinel.port}
                async with build_collector(build_config(settings)) as c:
                    failover = asyncio.ensure_future(
                        asyncio.to_thread(sentinel_failover, lab, sentinel))
                    after = 0
                    async for t in c.ticks():
                        ticks.append(t)
                        for f in eng.feed(t).open:
                            if f.check == "roles":
                                worst, title = max(worst, f.severity), f.title
                        after += failover.done()
                        if after >= 4:  # 2 s after Sentinel finished
                            break
                    sw = failover.result()
                # the lab: Sentinel's master and the writes follow
                assert (sw.old, sw.new) == ("primary", "replica")
                assert sentinel.master_addr() == (new.host, new.redis_port)
                assert lab.redis_primary is new and lab.mysql_primary is old
                # promoted after down-after (1 s), its vote and REPLICAOF NO ONE
                assert 1.0 <= sw.promoted_wall - sw.fenced_wall <= 10.0, sw
                sets = redis_sets(new)
                await asyncio.sleep(1.0)
                assert redis_sets(new) > sets, load.summary()
                wait_redis_link(old, new, 5)
        finally:
            if lab.redis_primary is not lab.primary:
                redis_switchover(lab)
        assert lab.redis_primary is old
        sets = redis_sets(old)
        await asyncio.sleep(1.0)
        assert redis_sets(old) > sets
        assert_rate(load, 1)
    assert state(lab) == start

    # roles: Redis's primary is the promoted node; half done with MySQL left behind
    layers = [t.roles.layer("redis") for t in ticks if t.roles is not None]
    seen = [(lr.state, lr.primary) for lr in layers if lr is not None]
    assert seen[0] == ("direction", "lab-primary")
    assert seen[-1] == ("direction", "lab-replica"), seen[-5:]
    assert worst is Severity.WARNING and "Redis: lab-replica is the primary" in title, title

    # the Sentinel source: every tick read, its view through the failover, its events
    samples = [t.sentinel for t in ticks]
    assert all(isinstance(s, SentinelSample) and s.status.ok for s in samples), \
        {s.status.state for s in samples if s is not None}
    ok = [s for s in samples if s is not None]
    assert ok[0].master_node == "lab-primary" and ok[0].last_switch is None
    assert ok[-1].master_node == "lab-replica" and ok[-1].name == "lab"
    assert any(s.down == "o_down" for s in ok), "the stalled master never o_down"
    kinds = [e.kind for s in ok for e in s.events]
    assert {"+sdown", "+odown", "+failover-end", "+switch-master"} <= set(kinds), kinds
    last = ok[-1].last_switch
    assert last is not None and (last.old_node, last.new_node) == ("lab-primary",
                                                                    "lab-replica")
    assert last.epoch is not None and last.epoch == ok[-1].config_epoch >= 1
    assert sw.fenced_wall < last.wall < sw.done_wall
    assert abs(last.wall - sw.promoted_wall) < 2.0, (last.wall, sw.promoted_wall)
    assert "Sentinel promoted lab-replica at" in title and f"epoch {last.epoch}" in title, \
        title
    assert lab.redis_password not in "".join(t.model_dump_json() for t in ticks)


async def test_a_sentinel_down_or_hung_is_a_source_error_and_ticks_go_on(lab: Lab) -> None:
    """Nothing listening (refused), then a socket that accepts and never answers
    (hung): the Sentinel's state says so, the pair's sources are read and the ticks are
    on time; source_health tells it on the pair."""
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)  # never accepted: connects, then no answer
    free = socket.socket()
    free.bind(("127.0.0.1", 0))  # bound, not listening: refused
    try:
        for port, want in ((free.getsockname()[1], "unreachable"),
                           (hung.getsockname()[1], "timeout")):
            settings = lab.settings(0.2)
            settings["sentinel"] = {"host": "127.0.0.1", "port": port}
            eng = build_engine({"source_health": {"open_after": "0.3s"}},
                               entry_points=False)
            upd = None
            async with build_collector(build_config(settings)) as c:
                ts = [t async for t in c.ticks(6)]
            for t in ts:
                upd = eng.feed(t)
            assert upd is not None
            states = [t.sentinel.status.state.value for t in ts if t.sentinel is not None]
            assert states[-1] == want, states
            assert all(t.primary.redis.status.ok and t.replica.mysql.status.ok for t in ts)
            # The Sentinel costs a tick at most the source timeout (0.8 x 0.2 s): a
            # hung one without it would hold the tick until the OS gave up. The 0.3 s on
            # top is the machine's, not the design's (the suite runs 4 workers on 2
            # cores: a tick's start may be late, which the tick says; its length holds).
            timeout_ms = 1000 * build_config(settings).source_timeout
            assert max(t.duration_ms for t in ts) <= timeout_ms + 300, [
                (t.seq, round(t.duration_ms), round(t.start_lag_ms)) for t in ts]
            (f,) = [f for f in upd.open if f.check == "source_health"]
            assert (f.node, f.key, f.title.split(":")[0]) == ("pair", "sentinel",
                                                              f"Sentinel {want}")
    finally:
        hung.close()
        free.close()
