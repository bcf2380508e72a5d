"""semi_sync on the lab: MariaDB 10.11 has semi-sync built in. Enabled on both with a
500 ms timeout it is ON and quiet; with the replica's IO thread stopped under write load
the primary falls back to async after its timeout: flagged."""

from __future__ import annotations

import pytest

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab, WriteLoad
from replmon.model.findings import Finding, Severity
from replmon.testing.scenarios.replication import mysql_healthy, wait_for

pytestmark = pytest.mark.live


async def test_primary_falling_back_to_async_is_flagged(lab: Lab) -> None:
    p, r = lab.primary, lab.replica
    p.sql("SET GLOBAL rpl_semi_sync_master_timeout = 500")
    p.sql("SET GLOBAL rpl_semi_sync_master_enabled = ON")
    r.sql("SET GLOBAL rpl_semi_sync_slave_enabled = ON")
    r.sql("STOP SLAVE IO_THREAD")
    r.sql("START SLAVE IO_THREAD")
    opened: dict[int, list[Finding]] = {}
    stopped_seq = 8
    try:
        with WriteLoad(lab, rate=200):
            wait_for(lambda: p.sql("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_status'")
                     [0][1] == "ON", "semi-sync ON on the primary", 20)
            engine = build_engine(entry_points=False)
            async with build_collector(build_config(lab.settings(0.5))) as c:
                async for t in c.ticks(24):
                    upd = engine.feed(t)
                    found = [f for f in upd.opened if f.check == "semi_sync"]
                    if found:
                        opened[t.seq] = found
                    if t.seq == stopped_seq - 1:
                        r.sql("STOP SLAVE IO_THREAD")
    finally:
        p.sql("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        r.sql("SET GLOBAL rpl_semi_sync_slave_enabled = OFF")
        r.sql("START SLAVE IO_THREAD")
        mysql_healthy(lab)
    assert opened, "semi_sync never opened"
    seq, (f, *_) = min(opened.items())
    assert seq > stopped_seq  # quiet while semi-sync was ON
    # 0.5 s timeout + open_after 3 s, at 0.5 s a tick, and a tick of slack each side
    assert (seq - stopped_seq) * 0.5 <= 0.5 + 3.0 + 1.0, seq
    assert (f.node, f.key, f.severity) == ("primary", "source", Severity.WARNING)
    assert "fell back to async" in f.title
