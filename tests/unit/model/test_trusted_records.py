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
