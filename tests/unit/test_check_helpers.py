"""The check API's helpers give what their plain definitions give (they take short cuts
for speed): Window.start_within against bisect, baseline_drop against a filter-and-median."""

from __future__ import annotations

import bisect
import statistics

from hypothesis import given, settings
from hypothesis import strategies as st

from replmon.check import Window, baseline_drop
from replmon.model.tick import Tick
from replmon.testing.synth import node

PRIMARY, REPLICA = node("primary"), node("replica")


def ticks_at(walls: list[float], interval: float) -> list[Tick]:
    return [Tick(seq=i, interval=interval, wall=w, mono=0.0, due_mono=0.0, slot=i,
                 primary=PRIMARY, replica=REPLICA) for i, w in enumerate(walls)]


def start_within_spec(ticks: list[Tick], seconds: float) -> int:
    end = ticks[-1].wall
    return bisect.bisect_left(ticks, -seconds, key=lambda t: -(end - t.wall))


@settings(max_examples=400, deadline=None)
@given(steps=st.lists(st.sampled_from([1.0, 1.002, 0.998, 0.0, 3.0, 0.4, 1.7]), min_size=1,
                      max_size=70),
       interval=st.sampled_from([1.0, 0.5, 2.0, 0.0, -1.0]),
       seconds=st.one_of(st.sampled_from([0.0, 1.0, 2.0, 10.0, 60.0, -1.0, float("inf"),
                                          float("nan")]),
                         st.floats(min_value=0, max_value=120)))
def test_start_within_is_bisect(steps: list[float], interval: float, seconds: float) -> None:
    walls, w = [], 1_700_000_000.0
    for s in steps:
        w += s * abs(interval or 1.0)
        walls.append(w)
    ticks = ticks_at(walls, interval)
    assert Window(ticks).start_within(seconds) == start_within_spec(ticks, seconds)


def baseline_drop_spec(values: list[float | None], *, min_rate: float, min_ticks: int,
                       ratio: float) -> tuple[float, float, list[int]] | None:
    now = values[-1] if values else None
    if now is None:
        return None
    base = [v for v in values[:-1] if v is not None and v >= min_rate]
    if len(base) < max(min_ticks, 1):
        return None
    before = statistics.median(base)
    if not now < ratio * before:
        return None
    return before, now, [i for i, v in enumerate(values[:-1]) if v is not None and v >= min_rate]


@settings(max_examples=600, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.floats(min_value=0, max_value=1e6),
                                 st.sampled_from([0.0, 50.0, 100.0, 1000.0])), max_size=40),
       min_rate=st.sampled_from([0.0, 100.0]), min_ticks=st.integers(0, 5),
       ratio=st.sampled_from([0.1, 0.3, 1.0]))
def test_baseline_drop_is_filter_and_median(values: list[float | None], min_rate: float,
                                            min_ticks: int, ratio: float) -> None:
    got = baseline_drop(values, min_rate=min_rate, min_ticks=min_ticks, ratio=ratio)
    assert got == baseline_drop_spec(values, min_rate=min_rate, min_ticks=min_ticks,
                                     ratio=ratio)
