"""Window.series columns are kept by the engine (replmon.windows) for any getter written
the plain way: a lambda or closure made anew on every call costs what a module-level
getter costs (one call per tick, not one per tick of the window), and getters that compute
different things never share a column."""

from __future__ import annotations

from typing import Any

import pytest

from replmon.check import Check, NodeTick, Observation, Thresholds, Window
from replmon.engine import Engine, configure
from replmon.model.tick import Tick
from replmon.testing.synth import node
from replmon.windows import PRUNE_EVERY, EngineWindow, ReadOnlyList, SeriesCache, getter_key

WINDOW = 50
TICKS = 200


def ticks(n: int) -> list[Tick]:
    return [Tick(seq=i, interval=1.0, wall=1_700_000_000.0 + i, mono=float(i), due_mono=float(i),
                 slot=i, primary=node("primary"), replica=node("replica")) for i in range(n)]


def run(evaluate: Any) -> None:
    check = Check(id="probe", title="probe", needs=(), thresholds=Thresholds,
                  evaluate=evaluate, window=WINDOW)
    engine = Engine(configure([check]))
    for t in ticks(TICKS):
        engine.observe(t)


calls = {"n": 0}


def registered(n: NodeTick) -> str:
    calls["n"] += 1
    return n.name


def with_registered(w: Window, t: Thresholds) -> list[Observation]:
    assert len(w.series("primary", registered)) == len(w)
    return []


def with_fresh_lambda(w: Window, t: Thresholds) -> list[Observation]:
    def count(n: NodeTick) -> str:
        calls["n"] += 1
        return n.name
    assert len(w.series("primary", lambda n: count(n))) == len(w)
    return []


def with_closure_per_disk(w: Window, t: Thresholds) -> list[Observation]:
    for disk in ("sda", "sdb"):
        def util(n: NodeTick, disk: str = disk) -> str:  # a default, not a cell
            calls["n"] += 1
            return f"{n.role}/{disk}"
        col = w.series("replica", util)
        assert col[-1] == f"replica/{disk}", "two disks shared a column"
    return []


def test_a_fresh_lambda_costs_what_a_registered_getter_costs() -> None:
    calls["n"] = 0
    run(with_registered)
    registered_calls = calls["n"]
    calls["n"] = 0
    run(with_fresh_lambda)
    assert registered_calls == calls["n"] == TICKS, (registered_calls, calls["n"])
    # (uncached, each would be called once per tick of the window: 8,775 times)


def test_getters_that_compute_different_things_get_different_columns() -> None:
    calls["n"] = 0
    run(with_closure_per_disk)
    assert calls["n"] == 2 * TICKS


def test_getter_keys() -> None:
    def make(x: object) -> Any:
        return lambda n: (n, x)
    assert getter_key(make("a")) == getter_key(make("a"))
    assert getter_key(make("a")) != getter_key(make("b"))
    with pytest.raises(TypeError):  # an unhashable capture: SeriesCache computes it uncached
        hash(getter_key(make([1])))
    assert getter_key(registered) == getter_key(registered)


def with_unhashable_capture(w: Window, t: Thresholds) -> list[Observation]:
    names = [w.last.seq]
    col = w.series("primary", lambda n: (n.role, names[0]))
    assert list(col) == [("primary", w.last.seq)] * len(w)  # computed anew: this tick's value
    return []


def test_an_unhashable_capture_is_computed_not_cached() -> None:
    run(with_unhashable_capture)


def every_other_tick(w: Window, t: Thresholds) -> list[Observation]:
    if w.last.seq % 2 == 0:  # as pair_lag reads the binlog readings, taken every 2 ticks
        assert len(w.series("primary", registered)) == len(w)
    return []


def test_a_column_asked_for_every_other_tick_survives_the_prunes() -> None:
    """A prune lands on a tick that does not ask for it (every 64 ticks): the column is
    kept, so each ask computes the ticks since the last one (2), not the whole window."""
    calls["n"] = 0
    run(every_other_tick)
    assert calls["n"] == TICKS - 1, calls["n"]  # up to the last even tick, each once


def test_a_column_no_longer_asked_for_is_dropped() -> None:
    cache = SeriesCache()
    feed = ticks(4 * PRUNE_EVERY)
    for i, tk in enumerate(feed):
        if i < 10:
            EngineWindow(ReadOnlyList(feed[: i + 1]), cache).series("primary", registered)
        cache.prune(tk.seq)
    assert cache.by_getter["primary"] == {} and cache._cols["primary"] == {}
