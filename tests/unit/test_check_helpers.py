"""The check API's helpers give what their plain definitions give (they take short cuts
for speed): Window.start_within against bisect, baseline_drop against a filter-and-median,
round_up/round_down against exact decimal rounding."""

from __future__ import annotations

import bisect
import math
import statistics
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from replmon.check import Window, baseline_drop, round_down, round_up
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


def _decimal_round(v: float, digits: int, how: str) -> tuple[float, float]:
    """(``v`` to ``digits`` significant digits toward ``how``, one unit of the last of
    those digits), in decimals from its shortest repr: the decimal the float stands for
    (0.05, not 0.05000000000000000277...)."""
    d = Decimal(repr(v))
    unit = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d.quantize(unit, rounding=how)), float(unit)


@settings(max_examples=400, deadline=None)
@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).filter(
    lambda v: v == 0 or abs(v) > 1e-12))
def test_round_up_and_down_stay_on_their_side_and_short(v: float) -> None:
    """A gauge rounded with ``round_up`` is never below the value (``quiet``'s ``gauge <
    limit`` stays safe), ``round_down`` never above, each a 3-digit decimal on its side
    (short in the recording): the nearest one, or where the float arithmetic lands a hair
    off (1e-05 * 1e7 is 100.00000000000001), the next one out. Just below a power of ten
    whose log10 rounds up to it (999999999999.998) they keep 2 digits: still on their
    side, only coarser, so not compared there."""
    up, down = round_up(v), round_down(v)
    assert up is not None and down is not None
    assert down <= v <= up
    if v and math.floor(math.log10(abs(v))) == Decimal(repr(abs(v))).adjusted():
        ceil, unit = _decimal_round(v, 3, ROUND_CEILING)
        floor, _ = _decimal_round(v, 3, ROUND_FLOOR)
        assert any(math.isclose(up, ceil + k * unit, rel_tol=1e-12) for k in (0, 1)), up
        assert any(math.isclose(down, floor - k * unit, rel_tol=1e-12) for k in (0, 1)), down


def test_round_keeps_none_and_zero() -> None:
    assert round_up(None) is None and round_down(None) is None
    assert round_up(0.0) == 0.0 and round_down(0.0) == 0.0
    assert round_up(1234.5) == 1240.0 and round_down(1234.5) == 1230.0
    assert round_up(-2.345) == -2.34 and round_down(-2.345) == -2.35
