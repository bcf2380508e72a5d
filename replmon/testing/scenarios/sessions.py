"""The shipped sample sessions (sample_sessions/): how each was made, and what
each must show. Recorded from the lab where the lab can produce the situation,
rebuilt from the field notes' published figures where it cannot (marked reconstructed).

    python -m replmon.testing.scenarios.sessions sample_sessions/     # remake them all (~20 min)
    python -m replmon.testing.scenarios.sessions sample_sessions/ auto_increment_updates_miss

tests/unit/test_sample_sessions.py re-runs today's checks over every shipped
session and asserts its expected findings.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

from replmon.testing.scenarios import LabScenario, SeedScenario, all_scenarios, run_lab_scenario

SUFFIX = ".rmrec"


@dataclass(frozen=True)
class Session:
    name: str
    """File stem in sample_sessions/."""
    title: str
    scenario: str
    """Name of the LabScenario or SeedScenario it is made from."""
    expect: tuple[str, ...]
    """Check ids that must open a finding (warning or worse) when today's checks re-run
    over the session; empty = nothing above info may open."""
    healthy_ticks: int = 30
    ticks: int = 120
    """Lab sessions: ticks before and after the situation is induced, at 1 Hz."""
    undo_after: int | None = None
    """Lab sessions: ticks after the onset at which the situation is undone in the
    recording (a switch back); None: it lasts to the end."""
    lags: bool = False
    """The MySQL replica falls behind: the recording holds its true lag, and ``check
    --replay`` measures it at the end (not U)."""


SESSIONS = (
    Session("healthy_steady_load", "healthy pair under a steady write load (lab)",
            "healthy pair under write load", (), healthy_ticks=150, ticks=30),
    Session("auto_increment_updates_miss", "auto_increment_increment=2 under random-id "
            "UPDATEs: half of them change no row (lab)",
            "auto_increment_increment=2, random-id UPDATEs",
            ("stmt_vs_rows", "config_drift"), healthy_ticks=1, ticks=150),
    Session("replica_sql_stopped", "replica SQL thread stopped under load (lab)",
            "replica SQL thread stopped under write load", ("mysql_replication", "pair_lag"),
            lags=True),
    Session("replica_lag_growing", "replica lag growing behind a lock on the replica (lab)",
            "replica applier blocked by a table lock under write load: lag grows",
            ("mysql_replication",), lags=True),
    Session("redis_link_down_full_resync", "Redis replica link down, then a full resync (lab)",
            "Redis full resync: reconnect after a 16 KiB backlog overran",
            ("redis_replication",)),
    Session("redis_maxmemory_evictions", "Redis at maxmemory, evicting (lab)",
            "Redis at maxmemory, allkeys-lru, evicting", ("memory_ceiling",)),
    Session("redis_writes_refused", "Redis refuses writes: min-replicas-to-write 2 with one "
            "replica (lab)", "Redis min-replicas-to-write 2 with one replica (NOREPLICAS)",
            ("writes_refused",), healthy_ticks=30, ticks=90),
    Session("planned_switchover", "planned switchover of MySQL and Redis under load, and "
            "back (lab)", "planned switchover of MySQL and Redis under write load (read_only, "
            "replica caught up and promoted, old primary replicating from it)", (),
            healthy_ticks=30, ticks=100, undo_after=60),
    Session("drbd_peer_disconnected", "DRBD peer to standby, primary in WFConnection with "
            "out-of-sync growing (reconstructed)",
            "DRBD peer db162 to standby, db163 WFConnection, oos 308 -> 65,724 KiB",
            ("drbd_peer",)),
    Session("redis_swapping_past_ceiling", "Redis past the memory ceiling, swapping, "
            "inserts collapse (reconstructed)",
            "Redis past the memory ceiling, swapping, inserts 73.5k -> 6.8k/s",
            ("memory_ceiling",)),
)


def _find(name: str) -> LabScenario | SeedScenario:
    seeds, labs = all_scenarios()
    from replmon.testing.scenarios.replication import LAG_GROWTH

    candidates: list[LabScenario | SeedScenario] = [*labs, LAG_GROWTH, *seeds]
    for sc in candidates:
        if sc.name == name:
            return sc
    raise KeyError(f"no scenario named {name!r}")


def make(session: Session, out_dir: Path) -> Path:
    from replmon.engine import build_engine
    from replmon.lab import Lab
    from replmon.session.format import meta_for
    from replmon.session.recorder import RecordingWriter

    path = out_dir / f"{session.name}{SUFFIX}"
    path.unlink(missing_ok=True)
    sc = _find(session.scenario)
    if isinstance(sc, SeedScenario):
        ticks, onset = sc.build()
        meta = meta_for(interval=ticks[0].interval, reconstructed=True,
                        note=f"{session.title}; rebuilt from the field notes' published figures "
                             f"(scenario {sc.name!r}); onset at tick {onset}")
        eng = build_engine(sc.settings, entry_points=False)
        with RecordingWriter(path, meta, rates="store") as w:
            for t in ticks:
                w.write(t, eng.feed(t))
        return path
    from replmon.config import build_config

    sc = dataclasses.replace(sc, interval=1.0, healthy_ticks=session.healthy_ticks,
                             ticks=session.ticks, undo_after=session.undo_after)
    undone = "" if session.undo_after is None \
        else f", undone at tick {session.healthy_ticks + session.undo_after}"
    with Lab() as lab:
        config = build_config({**lab.settings(1.0), "checks": sc.settings})
        meta = meta_for(config, note=f"{session.title}; lab scenario {sc.name!r}, induced "
                                     f"at tick {session.healthy_ticks}{undone}")
        with RecordingWriter(path, meta) as w:
            asyncio.run(run_lab_scenario(lab, sc, on_tick=w.write))
    return path


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "sample_sessions")
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(argv[1:])
    for s in SESSIONS:
        if wanted and s.name not in wanted:
            continue
        path = make(s, out)
        print(f"{path}: {path.stat().st_size / 1024:.0f} KiB", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
