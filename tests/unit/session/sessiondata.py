"""Realistic ticks for the recording tests: the real lab ticks of
tests/fixtures/ticks/lab_pair.jsonl (all sources but DRBD), with a real parsed
/proc/drbd sample (tests/fixtures/drbd) added to both nodes, looped into longer
sessions by replmon.testing.real_ticks; and those with a DRBD peer that flaps
(flapping_ticks, the recording of test_rerun, test_stored_observations, test_cursor)."""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import pytest

import replmon.engine
from replmon.engine import Update, build_engine
from replmon.model.drbd import DrbdSample
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.real_ticks import loop_ticks, with_drbd

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FLAP_OPENS = replmon.engine.FLAP_OPENS
"""The engine's own flap detection, read before any test patches it (this module is
imported by conftest)."""


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


TICKS = 1200
CHUNK = 30  # 40 chunks; the engine's 300-tick window spans 10 of them
"""The flapping recording's length and chunk (test_rerun, test_cursor;
test_stored_observations and test_changes record the first LIVE_TICKS)."""

LIVE_TICKS = 750
"""The length of conftest's ``flap_live`` (test_stored_observations' and test_changes'
``live``): the first 750 of the flapping ticks (the DRBD peer down from tick 540 to 700
inside them), 25 chunks of 30. Stored observations are usable from chunk 10 on (the
300 s window before a chunk intact): 15 chunks, each a re-run's stored stretch with
findings opening, holding and closing across it, and the outage the steady stretch
``changes`` leaves out. (It was the 1,200 ticks of test_rerun's recording: the same
claims on twice as many chunks of the same flapping, at ~2.2 s of CPU for each run
observing every tick.)"""
SHARES_LIVE = pytest.mark.xdist_group("flap_live")
"""The tests that read ``flap_live`` run on one worker, which records it once (~2 s of
CPU; it was recorded once by test_stored_observations and again by test_changes)."""


def record_live(path: Path, ticks: list[Tick], chunk: int = CHUNK,
                rates: Literal["auto", "derive", "store"] = "auto") -> Path:
    """What ``replmon --record`` writes: each tick with the live engine's update."""
    engine = build_engine(entry_points=False)
    with RecordingWriter(path, meta_for(interval=ticks[0].interval), chunk_ticks=chunk,
                         rates=rates) as w:
        for t in ticks:
            w.write(t, engine.feed(t))
    return path


def dump(u: Update) -> tuple[Any, ...]:
    """What the re-run tests compare of an Update: seq, wall, the findings open, opened
    and closed."""
    return (u.seq, u.wall, [f.model_dump() for f in u.open],
            [f.model_dump() for f in u.opened], [f.model_dump() for f in u.closed])


def of_sample(stem: str) -> pytest.MarkDecorator:
    """The xdist group of the tests that take conftest's ``live_copy`` of one shipped
    session (test_report_facts', test_chart_facts'): one worker records it once."""
    return pytest.mark.xdist_group(f"live_copy-{stem}")


def by_sample(samples: Iterable[Path]) -> list[Any]:
    """``samples`` as parameters, each named by its stem and in its ``of_sample`` group."""
    return [pytest.param(p, id=p.stem, marks=of_sample(p.stem)) for p in samples]


def _drbd(name: str, edit: tuple[str, str] | None = None) -> DrbdSample:
    text = (FIXTURES / "drbd" / name).read_text(encoding="utf-8")
    if edit:
        assert edit[0] in text
        text = text.replace(*edit)
    return parse_proc_drbd(text)


def flapping_ticks() -> list[Tick]:
    """The lab pair's ticks, looped, with the primary's DRBD peer (seed 844's real
    /proc/drbd) WFConnection or, edited to the connected state, Connected, in runs
    of 1 to 12 ticks; and down from tick 540 to 700, across the part boundary at
    600, so what the checks say there ("down for 130 s") needs the ticks before it."""
    return list(_flapping_ticks())


@functools.cache
def _flapping_ticks() -> tuple[Tick, ...]:
    """flapping_ticks, made once in a process (four test modules use them; Ticks are
    immutable)."""
    down = _drbd("seed_844_primary_wfconnection.txt")
    up = _drbd("seed_844_primary_wfconnection.txt",
               ("cs:WFConnection ro:Primary/Unknown ds:UpToDate/DUnknown",
                "cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate"))
    replica = _drbd("seed_844_replica_connected.txt")
    base = list(loop_ticks(with_drbd(lab_ticks(), {"primary": down, "replica": replica}),
                           TICKS))
    rnd = random.Random(7)
    out: list[Tick] = []
    state = False
    while len(out) < TICKS:
        state = not state
        for _ in range(rnd.randint(1, 12)):
            if len(out) == TICKS:
                break
            t = base[len(out)]
            if state and not 540 <= len(out) <= 700:
                d = up.model_copy(update={"wall": t.primary.drbd.wall,
                                          "mono": t.primary.drbd.mono})
                t = t.model_copy(update={"primary": t.primary.model_copy(update={"drbd": d})})
            out.append(t)
    return tuple(out)
