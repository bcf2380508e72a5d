"""Fixed ticks for the TUI tests: real ticks sampled from the lab once
(tests/fixtures/ticks/lab_pair.jsonl, made with `replmon sample --lab --json`),
so the screens are deterministic and show real numbers."""

from __future__ import annotations

from pathlib import Path

from replmon.model.base import SourceState, SourceStatus
from replmon.model.mysql import MysqlSample
from replmon.model.tick import Tick

FIXTURE = Path(__file__).parent.parent / "fixtures" / "ticks" / "lab_pair.jsonl"


def lab_ticks() -> list[Tick]:
    return [Tick.model_validate_json(line) for line in FIXTURE.read_text().splitlines()]


def with_replica_mysql_down(tick: Tick, since: float) -> Tick:
    down = MysqlSample(status=SourceStatus(
        state=SourceState.UNREACHABLE, since=since,
        error="(2003) Can't connect to MySQL server on '127.0.0.1' ([Errno 111] refused)"),
        wall=tick.wall, mono=tick.mono)
    replica = tick.replica.model_copy(update={"mysql": down})
    return tick.model_copy(update={"replica": replica})
