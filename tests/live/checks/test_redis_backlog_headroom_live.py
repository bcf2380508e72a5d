"""redis_backlog_headroom on the lab: the default 1 MiB backlog under the lab's write
load is quiet; CONFIG SET repl-backlog-size 16384 on the master makes it flag."""

from __future__ import annotations

import pytest

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.labload import WriteLoad
from replmon.model.findings import Finding, Severity
from replmon.testing.scenarios.pair import small_backlog

pytestmark = pytest.mark.live


async def _run(lab: Lab, ticks: int) -> list[Finding]:
    engine = build_engine(entry_points=False)
    opened: list[Finding] = []
    async with build_collector(build_config(lab.settings(0.5))) as c:
        async for t in c.ticks(ticks):
            opened += [f for f in engine.feed(t).opened if f.check == "redis_backlog_headroom"]
    return opened


async def test_default_backlog_is_quiet_and_a_16_kib_one_flags(lab: Lab) -> None:
    with WriteLoad(lab, rate=300):
        assert await _run(lab, 30) == []
        with small_backlog(lab):
            (f,) = await _run(lab, 30)
    assert f.severity >= Severity.WARNING and f.node == "primary"
    assert "repl-backlog-size 16 KiB" in f.title
    headroom = f.numbers["headroom_s"]
    assert isinstance(headroom, float) and headroom < 5.0, f.title


async def test_an_output_buffer_limit_below_a_seconds_writes_flags(lab: Lab) -> None:
    """CONFIG SET client-output-buffer-limit "replica 8192 4096 1" on the master: the
    source reads it (CONFIG GET, at connect), and the lab's ~10.7 KiB/s over the shortest
    sync (1 s) passes the 8 KiB hard limit. Redis's default (256 MiB) stays quiet."""
    r = lab.primary.redis()
    default = r.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    with WriteLoad(lab, rate=300):
        assert [f for f in await _run(lab, 30) if f.key == "output_buffer"] == []
        r.config_set("client-output-buffer-limit", "replica 8192 4096 1")
        try:
            found = [f for f in await _run(lab, 30) if f.key == "output_buffer"]
        finally:
            r.config_set("client-output-buffer-limit", default)
    (f,) = found
    assert f.severity is Severity.WARNING and f.node == "primary"
    assert "passes the hard limit of 8 KiB" in f.title
    assert "(client-output-buffer-limit replica 8 KiB 4 KiB 1 s)" in f.title
