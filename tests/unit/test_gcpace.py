"""A headless command's full collections (``record``, ``--plain``: replmon.gcpace.Paced)
are paced by seconds, between two ticks, whatever the interval: while the pipeline runs
allocation counts start none, and when it closes Python's thresholds are as before."""

from __future__ import annotations

import gc

import pytest
from test_collector import TimedHost, pair

from replmon import gcpace
from replmon.engine import Update
from replmon.model.tick import Tick
from replmon.pipeline import CallbackReader, Pipeline

EVERY = 0.3
"""Seconds between two paced passes here (FULL_EVERY_S is 10)."""


@pytest.mark.parametrize(("interval", "ticks"), [(0.02, 60), (0.1, 12)])
async def test_full_collections_come_every_so_many_seconds_at_any_interval(
        interval: float, ticks: int) -> None:
    before = gc.get_threshold()
    paced = gcpace.Paced(every=EVERY)
    during: list[tuple[int, int, int]] = []
    monos: list[float] = []

    def note(t: Tick, _: Update | None) -> None:
        during.append(gc.get_threshold())
        monos.append(t.mono)

    full = gc.get_stats()[2]["collections"]
    c = pair({"host": TimedHost()}, {"host": TimedHost()}, interval)
    async with c:
        await Pipeline(c.ticks(ticks), None, [paced, CallbackReader(note)]).run()
    span = monos[-1] - monos[0]  # ~1.2 s at either interval
    # a pass each EVERY seconds after the first tick's start(): never more, at most one
    # fewer (the last tick may come just before a pass is due)
    assert int(span / EVERY) - 1 <= paced.passes <= int(span / EVERY), (paced.passes, span)
    assert paced.passes >= 2
    # the passes were full ones (and start() may have made one more, when not frozen)
    assert gc.get_stats()[2]["collections"] - full >= paced.passes
    # from the first tick on, allocation counts started no full pass; after, as before
    assert all(t == (before[0], before[1], gcpace._NEVER) for t in during), during[:3]
    assert gc.get_threshold() == before


def test_a_reader_closed_before_its_first_tick_changes_nothing() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    paced = gcpace.Paced()
    paced.close()
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    assert paced.passes == 0
