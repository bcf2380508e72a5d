"""applier_progress on the lab: a FLUSH TABLES WITH READ LOCK held on the replica while
the primary writes stops the applier with its SQL thread running; flagged once the stall
lasts stall_after (shortened to 4 s here), closed once the lock is released."""

from __future__ import annotations

import contextlib
import time

import pytest

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.model.findings import Severity
from replmon.testing.scenarios.pair import read_lock_on_replica

pytestmark = pytest.mark.live

INTERVAL = 0.5
STALL_S = 4.0
SETTINGS = {"applier_progress": {"stall_after": f"{STALL_S}s"}}


async def test_read_lock_on_the_replica_is_a_stuck_applier_until_released(lab: Lab) -> None:
    engine = build_engine(SETTINGS, entry_points=False)
    opened: dict[str, float] = {}
    closed_at: float | None = None
    found = None
    locked_at = held_at = released_at = None
    walls: list[float] = []
    with contextlib.ExitStack() as fault, WriteLoad(lab, rate=300):
        async with build_collector(build_config(lab.settings(INTERVAL))) as c:
            async for t in c.ticks(44):
                walls.append(t.wall)
                upd = engine.feed(t)
                for f in upd.opened:
                    opened.setdefault(f.check, t.wall)
                    if f.check == "applier_progress":
                        found = f
                if any(f.check == "applier_progress" for f in upd.closed):
                    closed_at = t.wall
                if t.seq == 5:
                    locked_at = t.wall  # asked for after this tick
                    fault.enter_context(read_lock_on_replica(lab))
                    held_at = time.time()  # FLUSH TABLES WITH READ LOCK returned
                if t.seq == 30:
                    fault.close()  # UNLOCK TABLES
                    released_at = t.wall
    assert locked_at is not None and held_at is not None and released_at is not None
    assert "applier_progress" in opened, opened
    # The stall counts from the last tick the applier moved (tick 5 at the earliest); it
    # opens after open_after (2 s), within 3 ticks of both being due. Both are seconds of
    # wall time, and so is the slack: 3 ticks are 3 intervals when ticks come on time, but
    # on a loaded machine a tick comes late (sampling both nodes takes longer than the
    # interval; the collector skips, it does not burst) and the onset moves with it (11.5 s
    # after tick 5 in a loaded suite, ~6.5 s alone). The applier stops once the lock is
    # held (FLUSH TABLES waits for the applier's open tables and blocks this loop: no tick
    # meanwhile), not when it was asked for.
    onset = opened["applier_progress"]
    spacing = max(b - a for a, b in zip(walls, walls[1:], strict=False)
                  if held_at <= a < onset)
    tick = max(INTERVAL, spacing)
    assert onset - locked_at >= STALL_S, onset - locked_at
    assert onset - held_at <= STALL_S + 2.0 + 3 * tick, (onset - held_at, spacing,
                                                          held_at - locked_at)
    assert found is not None
    assert found.severity is Severity.WARNING and found.node == "replica"
    assert "applier stuck for" in found.title and "while received up to" in found.title
    assert "lock" in found.title.lower(), found.title  # the applier's state names the wait
    assert closed_at is not None and closed_at - released_at <= 5.0, (closed_at, released_at)
