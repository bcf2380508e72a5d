"""The shipped recordings' incidents, asserted exactly (#34): `replmon check --replay`
groups each recording's findings under the root its checks' declarations give."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.commands import check_replay
from replmon.output.nagios import render_json, status_line

SESSIONS = Path(__file__).resolve().parents[2] / "sample_sessions"

# recording -> every incident of more than one finding: (root(s), the others), each
# finding as check/node/key; and what the status line leads with
EXPECTED = {
    "redis_swapping_past_ceiling": (
        [(["memory_ceiling/primary/redis_memory"],
          ["memory_ceiling/replica/redis_memory", "memory_ceiling/primary/paging",
           "throughput_collapse/primary/redis"])],
        "incident on primary redis42: Redis uses 14 GiB, 87 % of the host's 16 GiB RAM, no "
        "maxmemory: it will swap → replica: Redis uses 14 GiB → Swapping: 497 pages/s in → "
        "Redis ops/s 74,460 -> 6,778"),
    "auto_increment_updates_miss": (
        [(["config_drift/pair/auto_increment_increment"], ["stmt_vs_rows/primary/update"])],
        "incident on the pair: auto_increment_increment differs: primary 2, replica 1 → "
        "primary: UPDATE 312/s but handler rows 155/s"),
    "replica_lag_growing": (
        [(["applier_progress/replica/default"], ["mysql_replication/replica/default/lag"])],
        "incident on replica lab-replica: applier stuck"),
    "redis_maxmemory_evictions": (
        [(["memory_ceiling/primary/redis_memory"], ["memory_ceiling/primary/evictions"])],
        "incident on primary lab-primary: Redis used_memory 7.7 MiB of maxmemory 7.7 MiB"),
    "redis_link_down_full_resync": (
        [(["config_drift/pair/repl-backlog-size"],
          ["redis_backlog_headroom/primary/backlog", "redis_replication/primary/full_resync",
           "redis_replication/replica/link/sync"])],
        "incident on the pair: repl-backlog-size differs: primary 16 KiB, replica 1 MiB → "
        "primary: Redis backlog covers 4.4 s"),
    "replica_sql_stopped": (
        [(["mysql_replication/replica/default"], ["pair_lag/replica/default"])],
        "incident on replica lab-replica: SQL thread stopped (last_sql_errno 0) → replica "
        "119 s behind the primary; replica 119.0 s behind (+/- 2.0 s, pair_lag history)"),
    "healthy_steady_load": ([], "no problem found"),
    "planned_switchover": ([], "no problem found"),
    "drbd_peer_disconnected": ([], "primary db163: drbd0: peer disconnected"),
}


def ident(f: object) -> str:
    return f"{f.check}/{f.node}/{f.key}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_recording_gives_its_incidents(name: str) -> None:
    run = check_replay(str(SESSIONS / f"{name}.rmrec"))
    groups, lead = EXPECTED[name]
    got = [([ident(r) for r in i.roots], [ident(f) for f in i.consequences])
           for i in run.incidents if len(i.findings) > 1]
    assert got == groups
    assert lead in status_line(run)
    # every finding of the run is in exactly one incident
    members = [fid for i in run.incidents for fid in i.findings]
    assert len(members) == len(set(members)) == len({(f.check, f.node, f.key, f.since_seq)
                                                     for f in [*run.open, *run.cleared]})


def test_the_json_carries_the_incidents() -> None:
    import json

    run = check_replay(str(SESSIONS / "auto_increment_updates_miss.rmrec"))
    (inc,) = json.loads(render_json(run))["incidents"]
    assert inc["root"]["check"] == "config_drift" and inc["severity"] == "warning"
    assert [f["check"] for f in inc["findings"]] == ["config_drift", "stmt_vs_rows"]
    assert inc["closed"] is None and inc["opened"] == run.incidents[0].opened_wall
