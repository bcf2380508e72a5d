"""redis_backlog_headroom on the lab: the default 1 MiB backlog and Redis's default
output buffer limits under the lab's write load are quiet; CONFIG SET repl-backlog-size
16384, or client-output-buffer-limit "replica 4096 2048 1", on the master makes it flag.

The write load is a fact each test checks, not an assumption: the master's replication
stream measured over each run (master_repl_offset growth) must reach what the finding
needs, or the test fails saying so with the figure. The runs are as long as the check's
own holds need (its 10 s rate span, then open_after), with 4 s to spare; a run that
should flag ends at the tick its finding opens."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import pytest

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.model.findings import Finding, Severity
from replmon.model.tick import Tick
from replmon.testing.scenarios.pair import redis_setting, small_backlog
from replmon.units import fmt_byte_rate

# one worker runs both tests: they share the module's runs (``runs``)
pytestmark = [pytest.mark.live, pytest.mark.xdist_group("redis_backlog_headroom")]

INTERVAL = 0.5
QUIET_TICKS = 30
FLAG_TICKS = int((10.0 + 3.0 + 4.0) / INTERVAL)
"""min_rate_span (10 s) + open_after (3 s) + 4 s: the ticks a flag needs, with slack."""


@dataclass
class Run:
    opened: list[Finding]
    rate: float
    """Bytes/s of the master's replication stream over the run."""

    def keyed(self, key: str) -> list[Finding]:
        return [f for f in self.opened if f.key == key]


async def _run(lab: Lab, ticks: int, until: str | None = None) -> Run:
    """``ticks`` ticks, or fewer: up to the one where a finding keyed ``until`` opens."""
    engine = build_engine(entry_points=False)
    opened: list[Finding] = []
    seen: list[Tick] = []
    async with build_collector(build_config(lab.settings(INTERVAL))) as c:
        async for t in c.ticks(ticks):
            seen.append(t)
            opened += [f for f in engine.feed(t).opened if f.check == "redis_backlog_headroom"]
            if until is not None and any(f.key == until for f in opened):
                break
    offs = [(t.wall, t.primary.redis.master_repl_offset) for t in seen
            if t.primary.redis.master_repl_offset is not None]
    rate = (offs[-1][1] - offs[0][1]) / (offs[-1][0] - offs[0][0]) if len(offs) > 1 else 0.0
    return Run(opened, rate)


def small_output_buffer(lab: Lab) -> contextlib.AbstractContextManager[None]:
    return redis_setting(lab, "client-output-buffer-limit", "replica 4096 2048 1")


@dataclass
class Runs:
    quiet: Run
    backlog: Run
    output_buffer: Run


@pytest.fixture(scope="module")
def runs(lab: Lab) -> Runs:
    """One write load: the defaults, then each small setting in turn (the quiet run is
    the same for both tests, so it runs once). Redis writes only: MySQL's would cost
    the servers CPU and tell this check nothing."""
    with WriteLoad(lab, rate=300, mysql=False):
        quiet = asyncio.run(_run(lab, QUIET_TICKS))
        with small_backlog(lab):
            backlog = asyncio.run(_run(lab, FLAG_TICKS, until="backlog"))
        with small_output_buffer(lab):
            output_buffer = asyncio.run(_run(lab, FLAG_TICKS, until="output_buffer"))
    return Runs(quiet, backlog, output_buffer)


def needs(run: Run, rate: float, what: str) -> None:
    """The load reached ``rate`` bytes/s of replication stream, or the test says it did
    not (the finding could not be expected)."""
    assert run.rate >= rate, (f"the lab's write load reached {fmt_byte_rate(run.rate)} of "
                              f"replication stream; {what} needs {fmt_byte_rate(rate)}")


def test_default_backlog_is_quiet_and_a_16_kib_one_flags(runs: Runs) -> None:
    needs(runs.quiet, 1024, "the check's min_rate_bytes_s")
    assert runs.quiet.keyed("backlog") == [], runs.quiet.opened
    # 16 KiB covers under 5 s (critical) from 3.3 KiB/s on
    needs(runs.backlog, 16384 / 5, "16 KiB covering under 5 s")
    found = runs.backlog.keyed("backlog")
    assert len(found) == 1, (fmt_byte_rate(runs.backlog.rate), runs.backlog.opened)
    f = found[0]
    assert f.severity >= Severity.WARNING and f.node == "primary"
    assert "repl-backlog-size 16 KiB" in f.title
    headroom = f.numbers["headroom_s"]
    assert isinstance(headroom, float) and headroom < 5.0, f.title


def test_an_output_buffer_limit_below_a_seconds_writes_flags(runs: Runs) -> None:
    """client-output-buffer-limit "replica 4096 2048 1" on the master: the source reads it
    (CONFIG GET, at connect), and the lab's ~10.7 KiB/s over the shortest sync (1 s)
    passes the 4 KiB hard limit (from 4 KiB/s on: 2.7 times under the load's rate).
    Redis's default (256 MiB) stays quiet."""
    assert runs.quiet.keyed("output_buffer") == [], runs.quiet.opened
    needs(runs.output_buffer, 4096, "a second's writes past the 4 KiB hard limit")
    found = runs.output_buffer.keyed("output_buffer")
    assert len(found) == 1, (fmt_byte_rate(runs.output_buffer.rate), runs.output_buffer.opened)
    f = found[0]
    assert f.severity is Severity.WARNING and f.node == "primary"
    assert "passes the hard limit of 4 KiB" in f.title
    assert "(client-output-buffer-limit replica 4 KiB 2 KiB 1 s)" in f.title
