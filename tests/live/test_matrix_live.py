"""The version matrix: every lab scenario (replmon.testing.scenarios' LAB: the situation
each check exists for, induced on live servers) on the servers people run beside this
machine's MariaDB 10.11 and Redis 7.0 (which the rest of the live tests use): MariaDB
11.8 and Oracle MySQL 9.7 (Debian trixie and sid, in chroots), Redis 6.2 and Valkey
9.1 (PyPI wheels), Redis 8.0 and Valkey 8.1 (trixie).

Each scenario must open its check's finding at its severity, its condition seen within
the onset deadline (max(3 s, 2 ticks)), and nothing of that check before the situation.
A scenario that cannot happen on a server says why in SKIP_ON (a fact of the server, not
a failure of replmon's).
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from labpool import MATRIX, LabPool, Versions, group, name

from replmon.config import build_config
from replmon.factory import build_collector
from replmon.lab.load import WriteLoad
from replmon.model.base import SourceState
from replmon.testing.scenarios import LabScenario, Outcome, all_scenarios, run_lab_scenario

pytestmark = pytest.mark.live

_, LAB = all_scenarios()

REDIS_CHECKS = {"redis_replication", "redis_backlog_headroom", "memory_ceiling"}

CANNOT_HAPPEN: dict[tuple[str, str], str] = {
    ("mysql", "replica applying a statement begun 600 s ago on the primary"):
        "the scenario imitates an old statement with SET timestamp under a write load; "
        "Oracle MySQL's multi-threaded applier (replica_parallel_workers=4, its default "
        "since 8.0.27) computes Seconds_Behind_Source from the transactions queued after "
        "it, so it reads 1, 2, 3 s... (measured on 9.7.4), not 600 s; the growing lag of a "
        "blocked applier is the scenario that holds there",
}
"""(product, scenario name): why the situation cannot be made on that server."""


def needs_redis_only(sc: LabScenario) -> bool:
    return sc.check in REDIS_CHECKS or (sc.check == "two_primaries" and "Redis" in sc.name)


def cases() -> list[object]:
    out: list[object] = []
    for versions in MATRIX:
        mysql, redis = versions
        for sc in LAB:
            if not sc.check:
                continue  # the healthy baselines: the default lab's tests hold them
            if sc.check == "writes_refused":
                # test_writes_refused_live runs them on MariaDB 10.11 + Redis 7.0 and
                # MySQL 9.7 + Valkey 8.1, through to critical and back: what differs
                # between servers is the variables' names and the errors' words, which
                # those two cover (the suite's 8 minutes)
                continue
            redis_case = needs_redis_only(sc)
            if not redis_case and mysql is None:
                continue  # a lab without MySQL: here for its Redis
            server = redis if redis_case or mysql is None else mysql
            if (server.split("-")[0], sc.name) in CANNOT_HAPPEN:
                continue
            lab = versions
            if redis_case:
                # Redis checks judge Redis: no MySQL writes beside (that load cost the
                # servers ~18 % of a core at 300/s, measured) and no MySQL sampled (two
                # sources every tick); nothing of MySQL is what they are about. So they
                # run on a lab of that Redis alone (started in ~1 s), in a group of its
                # own: not in line behind the MySQL lab's tests (the MySQL 9.7 lab's
                # group is the suite's longest chain, ~370 s with them, ~44 s of which
                # were Valkey 8.1's)
                sc = dataclasses.replace(sc, mysql=False)
                lab = (None, redis)
            out.append(pytest.param(lab, sc, marks=group(lab),
                                    id=f"{server}-{sc.check}-{_short(sc.name)}"))
    return out


def _short(name: str) -> str:
    words = ("".join(c for c in w if c.isalnum() or c in "_=.") for w in name.split()[:5])
    return "-".join(w for w in words if w)


def describe(out: Outcome) -> list[tuple[int, list[tuple[str, str, str]]]]:
    return [(seq, [(f.check, f.severity.name, f.title) for f in fs])
            for seq, fs in sorted(out.opened.items())]


@pytest.mark.parametrize(("versions", "sc"), cases())
async def test_the_scenario_is_flagged_on_every_server(
        lab_pool: LabPool, versions: Versions, sc: LabScenario) -> None:
    lab = lab_pool.get(*versions)
    out = await run_lab_scenario(lab, sc, until_found=True)
    early = [f for f in out.above_info(out.onset_seq) if f.check == sc.check]
    assert not early, describe(out)
    f = out.first(sc.check, sc.min_severity)
    assert f is not None, describe(out)
    assert out.on_time(sc.min_severity), (out.onset_delay_s(sc.min_severity), describe(out))


PRODUCT_NAME = {"mariadb": "MariaDB", "mysql": "MySQL", "redis": "Redis", "valkey": "Valkey"}


@pytest.mark.parametrize("versions", [pytest.param(v, marks=group(v), id=name(v))
                                      for v in MATRIX])
async def test_every_source_samples_and_names_its_server(
        lab_pool: LabPool, versions: Versions) -> None:
    """The collector on each lab: every source ok, replication seen on both sides, and
    each server named as itself (Valkey as Valkey with its own version, not the Redis
    7.2.4 it says for clients), in the tick and in ``sample --json``. A lab without
    MySQL (Redis 6.2, Valkey 9.1): its Redis only, the MySQL source switched off and
    said so ("absent"); the MariaDB 10.11 these labs ran beside is the default lab's,
    whose tests (test_collector_live, test_mysql_source) check it."""
    lab = lab_pool.get(*versions)
    mysql = versions[0].split("-") if versions[0] is not None else None
    redis = versions[1].split("-")
    with WriteLoad(lab, rate=300, mysql=mysql is not None):
        async with build_collector(build_config(lab.settings(0.5))) as c:
            ticks = [t async for t in c.ticks(4)]
    last = ticks[-1]
    for node in last.nodes:
        states = {k: s.state for k, s in node.statuses().items() if k != "drbd"}
        assert states == {"host": SourceState.OK,
                          "mysql": SourceState.OK if mysql else SourceState.ABSENT,
                          "redis": SourceState.OK}, (node.name, node.statuses())
        if mysql:
            assert node.mysql.flavour == mysql[0]
            assert node.mysql.version.startswith(mysql[1] + ".")
        assert node.redis.server == redis[0] and node.redis.version.startswith(redis[1] + ".")
        assert node.redis.product.startswith(f"{PRODUCT_NAME[redis[0]]} {redis[1]}.")
    p, r = last.primary, last.replica
    if mysql:
        (ch,) = r.mysql.replication
        assert ch.sql_running and ch.io_running == "Yes"
        assert ch.gtid_executed  # MariaDB's d-s-n or MySQL's uuid:1-N, read as it came
        assert p.mysql.binlog is not None or any(t.primary.mysql.binlog for t in ticks)
        assert p.rates.mysql.qps is not None and p.rates.mysql.qps > 50
    assert p.redis.role == "master" and r.redis.role == "replica"
    assert r.redis.link_status == "up"
    assert p.rates.redis.ops_per_s is not None and p.rates.redis.ops_per_s > 50
    dumped = json.loads(last.model_dump_json())  # what sample --json writes
    assert dumped["replica"]["redis"]["server"] == redis[0]
    assert lab.monitor_password not in json.dumps(dumped)
    assert lab.redis_password not in json.dumps(dumped)
