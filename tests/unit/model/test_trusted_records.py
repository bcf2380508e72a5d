"""The records replmon builds without validation (``Struct.trusted``): the Redis and MySQL
samples from their parsers, and the rates a RateTracker derives, hold each value with
the exact type that validation would give it (an int is not left where a field says
float), on the real captures and every shipped session."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typedleaves import typed_leaves

from replmon.model.base import Struct
from replmon.model.mysql import MysqlSample
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeRates, RateTracker
from replmon.session import open_recording
from replmon.sources.mysql_parse import (
    build_mysql_sample,
    detect_flavour,
    parse_global_status,
    parse_variables,
)
from replmon.sources.mysql_replica_parse import parse_replica_status
from replmon.sources.redis_parse import build_redis_sample, parse_info
from replmon.testing.canned_mysql import CannedConnection

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SESSIONS = sorted((Path(__file__).resolve().parents[3] / "sample_sessions").glob("*.rmrec"))


def _as_validated(record: Struct) -> object:
    return typed_leaves(type(record).model_validate(record.model_dump()))


@pytest.mark.parametrize("path", sorted((FIXTURES / "redis").glob("*.txt")), ids=lambda p: p.name)
def test_redis_sample_as_validation_builds_it(path: Path) -> None:
    s = build_redis_sample(parse_info(path.read_bytes().decode()))
    assert isinstance(s, RedisSample)
    assert typed_leaves(s) == _as_validated(s)


def _rows() -> object:
    where = FIXTURES / "mysql" / "mysql_rows.py"
    spec = importlib.util.spec_from_file_location("mysql_rows", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MARIADB = "5.5.5-10.11.19-MariaDB-0+deb12u1-log"


@pytest.mark.parametrize(("version", "status", "variables", "replica"), [
    (MARIADB, "mariadb10.11_global_status.tsv", "mariadb10.11_global_variables.tsv",
     "mariadb10.11_lab_show_all_slaves_status.txt"),
    (MARIADB, "mariadb10.11_lab_primary_status_a.tsv", "mariadb10.11_lab_primary_variables.tsv",
     None),
    ("8.0.30", "mysql8.0.30_global_status.txt", None,
     "mysql8.0.30_show_slave_status_multi_source.txt"),
    ("8.0.30", "mysql8.0.30_global_status.txt", None, "mysql8.0_show_replica_status.txt"),
])
def test_mysql_sample_as_validation_builds_it(version: str, status: str, variables: str | None,
                                              replica: str | None) -> None:
    rows = _rows()
    s = build_mysql_sample(
        version=version, status=parse_global_status(rows.status_rows(status)),  # type: ignore[attr-defined]
        variables=parse_variables(rows.status_rows(variables)) if variables else {},  # type: ignore[attr-defined]
        replication=parse_replica_status(rows.dict_rows(replica, typed=True),  # type: ignore[attr-defined]
                                         detect_flavour(version)) if replica else (),
        rtt_ms=0.4, space_waits=(1, 3))
    assert isinstance(s, MysqlSample) and s.counters
    assert typed_leaves(s) == _as_validated(s)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_rates_as_validation_builds_them(path: Path) -> None:
    with open_recording(path) as rec:
        ticks = list(rec.ticks())
    tracker = RateTracker()
    for t in ticks:
        for node in (t.primary, t.replica):
            rates = tracker.rates(node)
            assert isinstance(rates, NodeRates)
            assert typed_leaves(rates) == _as_validated(rates), (t.seq, node.role)


def test_the_sessions_derive_every_kind_of_rates() -> None:
    """(The test above compares rates really derived, not only the empty ones.)"""
    with open_recording(next(p for p in SESSIONS if p.stem == "healthy_steady_load")) as rec:
        ticks = list(rec.ticks())[:3]
    tracker = RateTracker()
    rates = [tracker.rates(t.replica) for t in ticks][-1]
    assert rates.host.dt_s and rates.mysql.dt_s and rates.redis.dt_s
    assert rates.host.nics and rates.mysql.counters
    with open_recording(next(p for p in SESSIONS if p.stem == "drbd_peer_disconnected")) as rec:
        ticks = list(rec.ticks())[:3]
    tracker = RateTracker()
    rates = [tracker.rates(t.primary) for t in ticks][-1]
    assert rates.drbd.dt_s and rates.drbd.devices and rates.drbd.peer_devices


# --- the tick's other records, built without validation since #56 -------------------

def test_a_record_left_to_its_defaults_is_built_as_validation_builds_it() -> None:
    """``trusted`` fills a field left out with its default factory's record built by that
    record's own ``trusted`` (a sample's ``status``, the rates' parts): the same record."""
    from replmon.model.drbd import DrbdSample
    from replmon.model.host import HostSample
    from replmon.model.sentinel import SentinelSample
    from replmon.model.tick import NodeTick

    for cls in (RedisSample, MysqlSample, HostSample, DrbdSample, SentinelSample, NodeRates):
        assert typed_leaves(cls.trusted()) == typed_leaves(cls()), cls.__name__
    node = NodeTick.trusted(role="primary", name="db1")
    assert typed_leaves(node) == typed_leaves(NodeTick(role="primary", name="db1"))


def test_binlog_status_as_validation_builds_it() -> None:
    from decimal import Decimal

    from replmon.sources.mysql_binlog_parse import build_binlog_status, parse_binlog_status

    file, pos = parse_binlog_status(("binlog.000001", 411085, "", ""))
    for row in [("0-1-1682", "0-1-1682", 1, "", Decimal("1795604766.063139")),
                ("0-1-1682", "0-1-1682", "1", "", Decimal("1795604766.063139"), "0-2-5"),
                ("uuid:1-30,\nuuid2:1-7", "", 163, "uuid", "1795604766.063139"),
                ("", "", None, None, None)]:
        b = build_binlog_status(row, file=file, position=pos, sent_wall=1795604766.06,
                                elapsed_ms=0.31, error="binlog: denied")
        assert typed_leaves(b) == _as_validated(b), row


def test_lag_facts_as_validation_builds_them() -> None:
    from decimal import Decimal

    from replmon.sources.mysql_lag_reads import read_lag_facts

    conn = CannedConnection({"NOW(6)": [(Decimal("1795604766.063139"), 3600)],
                  "server_id": [(1, Decimal("1795604765.5")), (2, 0), (None, None)],
                  "CHANNEL_NAME": [("", Decimal("1795604765.25"), Decimal("1795604765.5")),
                                   ("b", None, 0)]})
    facts, applier = read_lag_facts(conn, heartbeat_table="`hb`.`heartbeat`",  # type: ignore[arg-type]
                                    applier=True, note=lambda what, e: f"{what}: {e}")
    assert applier and facts.heartbeat and len(facts.applier) == 2
    assert typed_leaves(facts) == _as_validated(facts)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_roles_and_lags_as_validation_builds_them(path: Path) -> None:
    """The Orienter's LayerRoles and Roles and the LagTracker's MeasuredLag and
    RedisLagEstimate, over a session's nodes as given (and once with the walls as ints,
    as some tests give them)."""
    from replmon.roles import Orienter
    from replmon.truelag import LagTracker

    with open_recording(path) as rec:
        ticks = list(rec.ticks())
    for as_int in (False, True):
        orienter, lag = Orienter(), LagTracker()
        for t in ticks:
            given = sorted(t.nodes, key=lambda n: n.given_role != "primary")
            wall = int(t.wall) if as_int else t.wall
            p, r, roles = orienter.orient(given[0], given[1], wall)
            assert typed_leaves(roles) == _as_validated(roles), (t.seq, as_int)
            tick = t.model_copy(update={"primary": p, "replica": r, "roles": roles})
            est = lag.redis(tick.oriented("redis"))
            if est is not None:
                assert typed_leaves(est) == _as_validated(est), t.seq
            measured = lag.measure(tick.oriented("mysql"))
            if measured is not None:
                assert typed_leaves(measured) == _as_validated(measured), t.seq



@pytest.mark.parametrize("how", ["heartbeat", "server"])
def test_measured_lag_from_heartbeat_or_server_as_validation_builds_it(how: str) -> None:
    """(The sessions measure only from pair_lag's history: the replica's facts are given
    here a pt-heartbeat row of the primary, or MySQL's applier timestamps.)"""
    from replmon.model.lag import ApplierTimes, LagFacts
    from replmon.truelag import LagTracker

    with open_recording(next(p for p in SESSIONS if p.stem == "healthy_steady_load")) as rec:
        ticks = list(rec.ticks())
    lag, kinds = LagTracker(), set()
    for t in ticks:
        m = t.replica.mysql
        if not m.replication:
            continue
        ch = m.replication[0]
        facts = LagFacts(server_time=t.wall + 0.25, sent_wall=t.wall, elapsed_ms=0.4)
        if how == "heartbeat":
            sid = ch.source_server_id or 1
            facts = facts.model_copy(update={"heartbeat": {sid: t.wall - 1.5},
                                             "heartbeat_table": "hb.heartbeat"})
            m = m.model_copy(update={"lag_facts": facts})
        else:
            facts = facts.model_copy(update={"applier": [
                ApplierTimes(channel=ch.name, applying_commit=t.wall - 2.0)]})
            m = m.model_copy(update={"lag_facts": facts, "flavour": "mysql",
                                     "version": "8.4.3"})
        replica = t.replica.model_copy(update={"mysql": m})
        measured = lag.measure(t.model_copy(update={"replica": replica}))
        assert measured is not None
        assert typed_leaves(measured) == _as_validated(measured), t.seq
        kinds.add(measured.source)
    assert how in kinds, kinds


async def test_ticks_and_failed_samples_as_validation_builds_them() -> None:
    """The collector's Tick (its clock given as ints), a source's failed sample and a
    switched-off source's."""
    from replmon.collector import Collector, NodeSources
    from replmon.model.host import HostSample
    from replmon.sources.base import Source

    class Failing(Source[HostSample]):
        kind = "host"
        sample_type = HostSample

        async def _fetch(self) -> HostSample:
            raise FileNotFoundError("/proc/drbd")

    now = iter(range(1000, 2000))
    c = Collector(NodeSources("primary", "p", {"host": Failing(timeout=1.0)}),
                  NodeSources("replica", "r", {}, off_reason={"host": "switched off"}),
                  interval=1, clock=lambda: next(now))
    tick = await c.sample_once(seq=0, slot=0, due=999)
    assert tick.primary.host.status.state == "absent" and tick.replica.host.status.error
    assert typed_leaves(tick) == _as_validated(tick)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_the_checks_observations_as_validation_builds_them(path: Path) -> None:
    """What every built-in check observes over a session (``Observation.trusted``), and the
    engine's copy with the node's name, as validation builds them from the same values."""
    from replmon.engine import build_engine
    from replmon.model.findings import Observation

    with open_recording(path) as rec:
        ticks = list(rec.ticks())
    engine = build_engine(entry_points=False)
    seen = 0
    for t in ticks:
        for _, o in engine.observe(t):
            twin = Observation(**{n: getattr(o, n) for n in Observation.model_fields})
            assert typed_leaves(o) == typed_leaves(twin), (t.seq, o)
            seen += 1
    assert seen or path.stem == "healthy_steady_load"


def test_a_channel_with_its_applier_detail_as_validation_builds_it() -> None:
    """with_applier sets parse_applier_workers' detail on the channel without validation."""
    from replmon.model.mysql import ReplicaChannel
    from replmon.sources.mysql_replica_parse import parse_applier_workers, with_applier

    details = parse_applier_workers([
        ("", 1, 1062, "Worker 1 failed executing transaction 'u:8' at source log binlog.1, "
         "end_log_pos 2210; Duplicate entry", "2026-11-26 17:10:11", "u:8", "0.412000",
         "0.105046", "2026-11-26 17:10:11.204699"),
        ("", 2, 0, "", None, "", None, "0.108227", "2026-11-26 17:10:11.189096")])
    stopped = ReplicaChannel(name="", sql_running=False, last_sql_errno=1062)
    running = ReplicaChannel(name="", sql_running=True, last_sql_errno=0)
    for ch in with_applier([stopped, running], details):
        assert ch.applying_age_s == 0.412
        assert typed_leaves(ch) == _as_validated(ch)
