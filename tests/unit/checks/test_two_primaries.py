"""two_primaries on synthetic windows: MySQL read_only on both nodes, Redis roles, with
samples built by the real parsers from the real fixtures where they exist."""

from __future__ import annotations

from pathlib import Path

import pytest
from replmon.checks import two_primaries
from replmon.checks.two_primaries import CHECK

from replmon.model.findings import Observation, Severity
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.sources.redis_parse import build_redis_sample, parse_info
from replmon.testing.scenarios import primaries, run_seed_scenario
from replmon.testing.synth import node, observe, run_check, status, tick

REDIS_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "redis"


def my(ro: str | None, *, replica: bool = False, io: str = "Yes", sql: bool = True,
       sro: str | None = None, ok: bool = True) -> MysqlSample:
    if not ok:
        return MysqlSample(status=status("unreachable", "connection refused"))
    v = {} if ro is None else {"read_only": ro}
    if sro is not None:
        v["super_read_only"] = sro
    chans = [ReplicaChannel(io_running=io, sql_running=sql)] if replica else []  # type: ignore[arg-type,unused-ignore]
    return MysqlSample(variables=v, replication=chans)


def mysql_pair(p: MysqlSample, r: MysqlSample) -> list[Observation]:
    return observe(CHECK, [tick(1, primary=node("primary", mysql=p),
                                replica=node("replica", mysql=r))])


def test_both_writable_while_replicating_is_critical() -> None:
    (o,) = mysql_pair(my("OFF"), my("OFF", replica=True))
    assert (o.node, o.key, o.severity) == ("pair", "mysql", Severity.CRITICAL)
    assert "read_only=OFF on both nodes" in o.title and "diverge" in o.title
    assert "still replicating" in o.title and "break replication" in o.cause
    assert o.numbers["replica_io_running"] is True and o.numbers["replica_read_only"] == "OFF"


@pytest.mark.parametrize(("io", "sql", "words"), [
    ("No", False, "IO stopped, SQL stopped"),
    ("Connecting", True, "IO stopped, SQL running"),
])
def test_both_writable_not_replicating_says_so(io: str, sql: bool, words: str) -> None:
    (o,) = mysql_pair(my("OFF"), my("OFF", replica=True, io=io, sql=sql))
    assert words in o.title and "diverges" in o.cause


def test_both_writable_replica_promoted_without_channel() -> None:
    (o,) = mysql_pair(my("0"), my("0"))  # numeric spelling
    assert "no replication channel" in o.title and o.numbers["replica_channels"] == 0


@pytest.mark.parametrize(("p", "r"), [
    (my("OFF"), my("ON", replica=True)),                 # the normal pair
    (my("OFF"), my("ON", replica=True, sro="ON")),       # MySQL 8 super_read_only
    (my("ON"), my("OFF", replica=True)),                 # roles swapped: one writer
    (my("ON"), my("ON", replica=True)),                  # nobody writable: not this check
    (my(None), my("OFF", replica=True)),                 # primary's variables not read yet
    (my("OFF", ok=False), my("OFF", replica=True)),      # primary unreachable
    (my("OFF"), my("OFF", replica=True, ok=False)),      # replica unreachable
    (my("OFF"), my("weird", replica=True)),              # unknown value: not judged
])
def test_quiet(p: MysqlSample, r: MysqlSample) -> None:
    assert mysql_pair(p, r) == []


def redis_fixture(name: str) -> RedisSample:
    return build_redis_sample(parse_info((REDIS_FIXTURES / name).read_text(encoding="utf-8")))


def test_redis_fixture_roles_feed_the_check() -> None:
    # the real parser's output for a real master and its replica: one master, quiet
    m, r = redis_fixture("redis7.0_master.txt"), redis_fixture("redis7.0_replica_up.txt")
    assert (m.role, r.role) == ("master", "replica")
    quiet = [tick(1, primary=node("primary", redis=m), replica=node("replica", redis=r))]
    assert observe(CHECK, quiet) == []
    both = [tick(1, primary=node("primary", redis=m), replica=node("replica", redis=m))]
    (o,) = observe(CHECK, both)
    assert (o.key, o.severity) == ("redis", Severity.CRITICAL)
    assert "same replication ids" in o.title  # the same INFO on both: same replid


def test_redis_two_masters_session_opens_in_3_ticks() -> None:
    ticks, onset = primaries.redis_flip()
    assert observe(CHECK, ticks[:onset]) == []
    open_now, opened = run_check(CHECK, ticks)
    assert list(opened) == [onset + 2]
    (f,) = open_now
    assert f.key == "redis" and f.since_seq == onset
    assert "70,000 vs 69,990" in f.title and "different replication ids" in f.title
    assert f.numbers["replica_replid"] == "c0ff"


def test_redis_unreachable_side_is_not_judged() -> None:
    down = RedisSample(status=status("timeout", "no answer"))
    m = RedisSample(role="master")
    assert observe(CHECK, [tick(1, primary=node("primary", redis=m),
                                replica=node("replica", redis=down))]) == []


def test_mysql_flip_seed_scenario_flags_critical_within_3_ticks() -> None:
    (sc,) = primaries.SEEDS
    out = run_seed_scenario(sc)
    f = out.first("two_primaries", Severity.CRITICAL)
    assert f is not None and f.key == "mysql" and out.ticks_to_flag == 3
    assert out.first("two_primaries", Severity.CRITICAL) is f
    _, opened = run_check(CHECK, primaries.mysql_flip("ON")[0])
    assert opened == {}  # replica stays read-only: nothing


def test_closes_after_the_replica_is_read_only_again() -> None:
    def t(seq: int, ro: str) -> object:
        return tick(seq, primary=node("primary", mysql=my("OFF")),
                    replica=node("replica", mysql=my(ro, replica=True)))
    bad = [t(i, "OFF") for i in range(4)]
    still, _ = run_check(CHECK, bad + [t(i, "ON") for i in (4, 5)])  # type: ignore[arg-type]
    assert len(still) == 1  # two clear ticks are not enough
    after, _ = run_check(CHECK, bad + [t(i, "ON") for i in (4, 5, 6)])  # type: ignore[arg-type]
    assert after == []


def test_drbd_two_primaries_is_left_to_drbd_peer() -> None:
    dual = parse_proc_drbd("version: 8.4.4 (api:1/proto:86-101)\n"
                           " 0: cs:WFConnection ro:Primary/Unknown ds:UpToDate/DUnknown C r-----\n"
                           "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 oos:8\n")
    t = tick(1, primary=node("primary", drbd=dual), replica=node("replica", drbd=dual))
    assert observe(CHECK, [t]) == []
    assert "drbd_peer" in (two_primaries.__doc__ or "")
