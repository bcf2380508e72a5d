"""semi_sync on the lab: MariaDB 10.11 has semi-sync built in. Enabled on both with a
500 ms timeout it is ON and quiet; with the replica's IO thread stopped under write load
the primary falls back to async after its timeout: flagged."""

from __future__ import annotations

import contextlib

import pytest

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.model.findings import Finding, Severity
from replmon.testing.scenarios.pair import semi_sync_on, semi_sync_then_replica_io_stopped

pytestmark = pytest.mark.live


async def test_primary_falling_back_to_async_is_flagged(lab: Lab) -> None:
    opened: dict[int, list[Finding]] = {}
    stopped_seq = 8
    with semi_sync_on(lab), WriteLoad(lab, rate=200), contextlib.ExitStack() as fault:
        engine = build_engine(entry_points=False)
        async with build_collector(build_config(lab.settings(0.5))) as c:
            async for t in c.ticks(24):
                upd = engine.feed(t)
                found = [f for f in upd.opened if f.check == "semi_sync"]
                if found:
                    opened[t.seq] = found
                if t.seq == stopped_seq - 1:
                    fault.enter_context(semi_sync_then_replica_io_stopped(lab))
    assert opened, "semi_sync never opened"
    seq, (f, *_) = min(opened.items())
    assert seq > stopped_seq  # quiet while semi-sync was ON
    # 0.5 s timeout + open_after 3 s, at 0.5 s a tick, and a tick of slack each side
    assert (seq - stopped_seq) * 0.5 <= 0.5 + 3.0 + 1.0, seq
    assert (f.node, f.key, f.severity) == ("primary", "source", Severity.WARNING)
    assert "fell back to async" in f.title


async def test_switching_semi_sync_off_is_not_a_fallback(lab: Lab) -> None:
    """An admin turning semi-sync off makes its status OFF at once while replmon's copy
    of the variables could be a minute old: the source re-reads them when the status
    changes, so the check never sees "enabled, status OFF"."""
    seen: list[Finding] = []
    with semi_sync_on(lab), WriteLoad(lab, rate=200):
        engine = build_engine(entry_points=False)
        async with build_collector(build_config(lab.settings(0.5))) as c:
            async for t in c.ticks(20):
                seen += [f for f in engine.feed(t).opened if f.check == "semi_sync"]
                if t.seq == 4:
                    lab.primary.sql("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
                    lab.replica.sql("SET GLOBAL rpl_semi_sync_slave_enabled = OFF")
                if t.seq == 19:
                    assert t.primary.mysql.semi_sync.source_enabled is False
    assert seen == []
