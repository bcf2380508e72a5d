"""Realistic ticks for the recording tests: the real lab ticks of
tests/fixtures/ticks/lab_pair.jsonl (all sources but DRBD), with a real parsed
/proc/drbd sample (tests/fixtures/drbd) added to both nodes, looped into longer
sessions by replmon.testing.synthetic."""

from __future__ import annotations

from pathlib import Path

from replmon.model.tick import Tick
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.synthetic import loop_ticks, with_drbd

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def lab_ticks() -> list[Tick]:
    text = (FIXTURES / "ticks" / "lab_pair.jsonl").read_text()
    return [Tick.model_validate_json(line) for line in text.splitlines()]


def four_source_ticks(count: int) -> list[Tick]:
    """``count`` ticks with host, DRBD, MySQL and Redis ok on both nodes, rates attached
    the way the collector attaches them."""
    primary = parse_proc_drbd((FIXTURES / "drbd" / "seed_844_primary_wfconnection.txt")
                              .read_text(encoding="utf-8"))
    replica = parse_proc_drbd((FIXTURES / "drbd" / "s1_846_replica_connected.txt").read_text())
    dicts = with_drbd(lab_ticks(), {"primary": primary, "replica": replica})
    return list(loop_ticks(dicts, count, rates=True))
