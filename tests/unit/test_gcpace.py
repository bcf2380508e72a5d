"""A headless command's full collections (``record``, ``--plain``: replmon.gcpace.Paced)
are paced by seconds, between two ticks, whatever the interval: while the pipeline runs
allocation counts start none, and when it closes Python's thresholds are as before."""

from __future__ import annotations

import gc

import pytest
from frozenheap import frozen_kept
from test_collector import TimedHost, pair

from replmon import gcpace
from replmon.engine import Update
from replmon.model.tick import Tick
from replmon.pipeline import CallbackReader, Pipeline


class Clock:
    """The time a reader reads: set by the test, tick by tick."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("interval", "late"), [(0.2, 0.0), (1.0, 0.0), (0.2, 0.15),
                                                (1.0, 0.9)])
def test_a_pass_every_so_many_seconds_at_any_interval(interval: float, late: float) -> None:
    """Ticks for 60 s, every other one ``late`` seconds late: a pass each 10.5 s after
    the first tick (due at 10.5, 21, ... 52.5 s: five), at 0.2 s ticks as at 1 s ticks;
    each on the first tick at or after its due time, not pushed back by a late one."""
    clock = Clock()
    paced = gcpace.Paced(every=10.5, clock=clock)
    passes_at: list[float] = []
    try:
        for i in range(round(60 / interval)):
            clock.now = 100.0 + i * interval + (late if i % 2 else 0.0)
            before = paced.passes
            paced.on_tick(None, None)
            if paced.passes > before:
                passes_at.append(round(clock.now - 100.0, 2))
    finally:
        paced.close()
    assert len(passes_at) == 5, passes_at
    for k, at in enumerate(passes_at, start=1):
        assert 10.5 * k <= at < 10.5 * k + interval + late, passes_at


def test_after_a_stall_one_pass_and_the_cadence_starts_again() -> None:
    clock = Clock()
    paced = gcpace.Paced(every=10.0, clock=clock)
    try:
        for t in (0.0, 1.0, 35.0, 36.0, 44.0, 45.0, 46.0):  # nothing from 1 s to 35 s
            clock.now = 100.0 + t
            paced.on_tick(None, None)
            if t == 35.0:
                assert paced.passes == 1, "one pass for the stall, not three"
    finally:
        paced.close()
    assert paced.passes == 2  # at 35 s, then at 45 s (10 s after it)


async def test_the_pipeline_of_a_headless_command_paces_them() -> None:
    """In a live pipeline (ticks every 0.05 s for ~1.5 s, passes every 0.3 s): full
    passes are made, allocation counts start none meanwhile, thresholds restored after."""
    before = gc.get_threshold()
    paced = gcpace.Paced(every=0.3)
    during: list[tuple[int, int, int]] = []
    monos: list[float] = []

    def note(t: Tick, _: Update | None) -> None:
        during.append(gc.get_threshold())
        monos.append(t.mono)

    full = gc.get_stats()[2]["collections"]
    c = pair({"host": TimedHost()}, {"host": TimedHost()}, 0.05)
    async with c:
        await Pipeline(c.ticks(30), None, [paced, CallbackReader(note)]).run()
    # at most one a 0.3 s (however late the ticks came on a busy machine), and some
    assert 2 <= paced.passes <= (monos[-1] - monos[0]) / 0.3 + 1, paced.passes
    # the passes were full ones (and start() may have made one more, when not frozen)
    assert gc.get_stats()[2]["collections"] - full >= paced.passes
    # from the first tick on, allocation counts started no full pass; after, as before
    assert all(t == (before[0], before[1], gcpace._NEVER) for t in during), during[:3]
    assert gc.get_threshold() == before


def test_a_reader_closed_before_its_first_tick_changes_nothing() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    paced = gcpace.Paced()
    paced.close()
    assert gc.get_threshold() == before
    assert frozen_kept(gc.get_freeze_count(), frozen), (gc.get_freeze_count(), frozen)
    assert paced.passes == 0
