"""Incidents from findings and their checks' declarations (replmon/model/incidents.py):
one cause and its consequences in one incident under the cause, unrelated findings
apart, in either order of opening, and the same from the same findings."""

from __future__ import annotations

from replmon.model.findings import Finding, NodeRef, Severity
from replmon.model.incidents import Explains, IncidentTracker, explains, incidents_of

LINKS = {
    "memory_ceiling": (
        Explains("memory_ceiling", "same", "Redis past the RAM makes the host swap",
                 cause_key="redis_memory", effect_key="swap"),
        Explains("throughput_collapse", "same", "a swapping Redis waits on the disk",
                 cause_key="swap"),
    ),
    "config_drift": (
        Explains("stmt_vs_rows", "either", "auto_increment_increment differs: UPDATEs by "
                 "id miss their rows", cause_key="auto_increment_increment"),
    ),
    "applier_progress": (
        Explains("mysql_replication", "same", "a stuck applier makes the lag grow",
                 effect_key="lag"),
    ),
}


def finding(check: str, node: NodeRef, since: float, key: str = "",
            sev: Severity = Severity.WARNING) -> Finding:
    return Finding(check=check, node=node, key=key, severity=sev, worst=sev, title=check,
                   since_seq=int(since), since_wall=1000.0 + since, last_seq=int(since))


def run(*steps: tuple[float, list[Finding]]) -> IncidentTracker:
    t = IncidentTracker(LINKS)
    for wall, fs in steps:
        t.update(1000.0 + wall, fs)
    return t


def test_a_cause_and_its_consequences_are_one_incident_under_the_cause() -> None:
    """seed002: Redis grew past the RAM, the host swaps, throughput collapses."""
    redis = finding("memory_ceiling", "primary", 0, "redis_memory", Severity.CRITICAL)
    swap = finding("memory_ceiling", "primary", 5, "swap", Severity.CRITICAL)
    ops = finding("throughput_collapse", "primary", 8, sev=Severity.CRITICAL)
    t = run((0, [redis]), (5, [redis, swap]), (8, [redis, swap, ops]))
    (inc,) = t.incidents
    assert inc.root == redis and inc.consequences == [swap, ops]
    assert inc.severity is Severity.CRITICAL and inc.opened_wall == 1000.0 and inc.open


def test_the_order_of_opening_does_not_matter() -> None:
    """The symptom first (stmt_vs_rows holds less long than config_drift): once the
    cause opens it joins, and becomes the root."""
    drift = finding("config_drift", "pair", 1, "auto_increment_increment")
    stmt = finding("stmt_vs_rows", "primary", 0, "update")
    t = run((1, [stmt]), (2, [drift, stmt]))
    (inc,) = t.incidents
    assert inc.roots == [drift] and inc.consequences == [stmt]


def test_unrelated_findings_open_at_the_same_time_stay_apart() -> None:
    drift = finding("config_drift", "pair", 0, "auto_increment_increment")
    swap = finding("memory_ceiling", "replica", 0, "swap")
    t = run((0, [drift, swap]))
    assert sorted(len(i.findings) for i in t.incidents) == [1, 1]
    assert {i.root.check for i in t.incidents} == {"config_drift", "memory_ceiling"}


def test_a_consequence_without_its_cause_invents_none() -> None:
    ops = finding("throughput_collapse", "primary", 0)
    (inc,) = run((0, [ops])).incidents
    assert inc.roots == [ops] and inc.consequences == []


def test_the_declared_node_and_key_and_time_are_kept() -> None:
    swap_r = finding("memory_ceiling", "replica", 0, "swap")
    ops_p = finding("throughput_collapse", "primary", 1)  # other node: not "same"
    assert explains(swap_r, ops_p, LINKS) is None
    other_drift = finding("config_drift", "pair", 0, "server_id")  # not that setting
    assert explains(other_drift, finding("stmt_vs_rows", "primary", 1), LINKS) is None
    late_cause = finding("config_drift", "pair", 100, "auto_increment_increment")
    early = finding("stmt_vs_rows", "primary", 0)  # 100 s before it: not its effect
    assert explains(late_cause, early, LINKS) is None
    assert explains(late_cause, finding("stmt_vs_rows", "replica", 80), LINKS) is not None


def test_an_incident_closes_with_its_last_finding_and_a_later_one_opens_another() -> None:
    stuck = finding("applier_progress", "replica", 0, sev=Severity.CRITICAL)
    lag = finding("mysql_replication", "replica", 3, "lag")
    t = run((0, [stuck]), (3, [stuck, lag]), (10, [lag]), (20, []))
    (inc,) = t.incidents
    assert inc.closed_wall == 1020.0 and not inc.open and inc.root == stuck
    assert inc.closed_at == {("applier_progress", "replica", "", 0): 1010.0,
                             ("mysql_replication", "replica", "lag", 3): 1020.0}
    t.update(1030.0, [finding("mysql_replication", "replica", 30, "lag")])
    assert [i.id for i in t.incidents] == [1, 2]


def test_a_finding_that_links_two_incidents_merges_them() -> None:
    """Swap seen on its own, throughput on its own (no link between them on different
    nodes... here the same node, opened before the swap check held long enough), then
    Redis memory that explains the swap: one incident."""
    ops = finding("throughput_collapse", "primary", 0)
    redis = finding("memory_ceiling", "primary", 1, "redis_memory")
    t = run((0, [ops]), (1, [ops, redis]))
    assert len(t.open) == 2  # Redis memory does not explain throughput by itself
    swap = finding("memory_ceiling", "primary", 2, "swap")
    t.update(1002.0, [ops, redis, swap])
    (inc,) = t.open
    assert inc.id == 1 and inc.root == redis and set(inc.findings) == {
        ("throughput_collapse", "primary", "", 0), ("memory_ceiling", "primary",
                                                    "redis_memory", 1),
        ("memory_ceiling", "primary", "swap", 2)}


def test_the_same_findings_give_the_same_incidents() -> None:
    a = finding("config_drift", "pair", 0, "auto_increment_increment")
    b = finding("stmt_vs_rows", "primary", 1, "update")
    c = finding("memory_ceiling", "replica", 1, "swap")
    stream = [(1000.0, [a]), (1001.0, [a, b, c]), (1002.0, [c, b, a])]
    one, two = incidents_of(stream, LINKS), incidents_of(stream, LINKS)
    assert [(i.id, i.root.check, sorted(i.findings)) for i in one] == \
        [(i.id, i.root.check, sorted(i.findings)) for i in two]
    assert [(i.id, i.root.check, len(i.findings)) for i in one] == [
        (1, "config_drift", 2), (2, "memory_ceiling", 1)]
