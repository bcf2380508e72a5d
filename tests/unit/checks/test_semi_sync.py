"""semi_sync on the lab primary's and replica's real MariaDB 10.11 status and variables
(tests/fixtures/mysql/), with the semi-sync state each case needs."""

from __future__ import annotations

from replmon.checks.semi_sync import CHECK
from test_mysql_replication import ROWS

from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample, SemiSync
from replmon.sources.mysql_parse import build_mysql_sample, parse_global_status, parse_variables
from replmon.sources.mysql_replica_parse import parse_replica_status
from replmon.testing.synth import node, observe, tick


def sample(status: str, variables: str, replica: str | None = None) -> MysqlSample:
    """A MysqlSample from the lab's captures, the way MysqlSource builds one."""
    return build_mysql_sample(
        version="10.11.19-MariaDB-0+deb12u1-log",
        status=parse_global_status(ROWS.status_rows(status)),
        variables=parse_variables(ROWS.status_rows(variables)),
        replication=parse_replica_status(ROWS.dict_rows(replica, typed=True), "mariadb")
        if replica else [])

PRIMARY = sample("mariadb10.11_lab_primary_status_a.tsv", "mariadb10.11_lab_primary_variables.tsv")
REPLICA = sample("mariadb10.11_lab_replica_status_a.tsv", "mariadb10.11_lab_replica_variables.tsv",
                 "mariadb10.11_lab_show_all_slaves_status.txt")


def run(p: MysqlSample, r: MysqlSample = REPLICA) -> list:
    return observe(CHECK, [tick(0, primary=node("primary", mysql=p),
                                replica=node("replica", mysql=r))])


def semi(s: MysqlSample, **kw: object) -> MysqlSample:
    return s.model_copy(update={"semi_sync": SemiSync(**kw)})  # type: ignore[arg-type]


def test_the_labs_pair_without_semi_sync_is_quiet() -> None:
    assert PRIMARY.semi_sync.source_enabled is False  # as captured: OFF
    assert run(PRIMARY) == []


def test_enabled_and_on_is_quiet() -> None:
    assert run(semi(PRIMARY, source_enabled=True, source_active=True, source_clients=1),
               semi(REPLICA, replica_enabled=True, replica_active=True)) == []


def test_enabled_but_off_is_a_fallback_to_async() -> None:
    counters = {**PRIMARY.counters, "Rpl_semi_sync_master_no_tx": 42,
                "Rpl_semi_sync_master_no_times": 1}
    p = semi(PRIMARY, source_enabled=True, source_active=False, source_clients=0)
    (o,) = run(p.model_copy(update={"counters": counters}))
    assert (o.node, o.key, o.severity) == ("primary", "source", Severity.WARNING)
    assert o.title == ("semi-sync enabled but the primary fell back to async (0 semi-sync "
                       "replicas connected, 42 commits not acknowledged)")
    assert o.numbers["no_times"] == 1


def test_replica_enabled_but_not_acknowledging() -> None:
    (o,) = run(PRIMARY, semi(REPLICA, replica_enabled=True, replica_active=False))
    assert (o.node, o.key) == ("replica", "replica") and "IO_THREAD" in o.next_step
