"""Long, realistic sessions from a few real ticks, looped, resampled or given DRBD (benchmarks,
tests, reconstructions); ticks built from numbers instead are ``replmon.testing.synth``'s.

``loop_ticks(real, n)`` replays a short real capture over and over: every
value is a real one, cumulative counters keep counting (each lap adds what the
capture added), clocks keep advancing, so a 24 h session has the size and the
counter deltas of the real thing. ``with_drbd`` gives both nodes a DRBD sample
(from a parsed fixture) whose counters advance, for sessions with all four
sources where the lab has no DRBD.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from replmon.model.drbd import DrbdSample
from replmon.model.tick import RateTracker, Tick

Path_ = tuple[str | int, ...]
_CLOCKS = ("wall", "mono", "due_mono")


_OFFSETS = frozenset({"offset", "master_repl_offset", "repl_offset", "read_repl_offset",
                      "repl_backlog_first_byte_offset"})


def _leaves(o: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _leaves(v, (*path, i))
    else:
        yield path, o


def _add(d: Any, path: Path_, delta: float) -> None:
    for p in path[:-1]:
        d = d[p]
    d[path[-1]] += delta


def _dump(t: Tick) -> dict[str, Any]:
    return t.model_dump(mode="json", exclude={"primary": {"rates"}, "replica": {"rates"}})


def with_drbd(real: Sequence[Tick], samples: dict[str, DrbdSample], *,
              kib_per_s: float = 2048.0, seed: int = 0) -> list[dict[str, Any]]:
    """Tick dicts (no rates) of ``real`` with each role's DRBD sample set to
    ``samples[role]``, stamped with the host's clock; written/sent/received KiB grow
    by about ``kib_per_s`` per second."""
    rnd = random.Random(seed)
    out: list[dict[str, Any]] = []
    grown = 0
    prev_mono = real[0].mono if real else 0.0
    for t in real:
        grown += int(kib_per_s * (t.mono - prev_mono) * rnd.uniform(0.5, 1.5))
        prev_mono = t.mono
        d = _dump(t)
        for role, sample in samples.items():
            s = sample.model_dump(mode="json")
            host = d[role]["host"]
            s.update(wall=host["wall"], mono=host["mono"], elapsed_ms=rnd.uniform(0.05, 0.4))
            for path, v in list(_leaves(s)):
                if path[-1] in ("written_kib", "sent_kib", "received_kib") and v:
                    _add(s, path, grown)
            d[role]["drbd"] = s
        out.append(d)
    return out


def _growth_tree(steps: Sequence[tuple[Path_, float]]) -> dict[Any, Any]:
    """The leaves to advance, as a tree of their paths: a leaf's value is what it grows
    by per lap, every other node a dict of its children's keys."""
    root: dict[Any, Any] = {}
    for path, by in steps:
        node = root
        for p in path[:-1]:
            node = node.setdefault(p, {})
        node[path[-1]] = by
    return root


def _advanced(src: Any, tree: dict[Any, Any], lap: int) -> Any:
    """A copy of ``src`` (a dict or list) with the leaves in ``tree`` advanced by ``lap``
    times their growth; only the containers on their paths are copied (the rest shared:
    nothing here changes a value in place)."""
    out = src.copy()
    for k, sub in tree.items():
        out[k] = (_advanced(src[k], sub, lap) if type(sub) is dict
                  else src[k] + lap * sub)
    return out


def loop_ticks(real: Sequence[Tick] | Sequence[dict[str, Any]], count: int, *,
               rates: bool = False) -> Iterator[Tick]:
    """``count`` ticks made by repeating ``real`` (Ticks or their dicts): seq/slot
    renumbered, clocks shifted by one capture span per lap, and every int that only
    grew during the capture (a counter) advanced by what it grew per lap.
    ``rates=True`` attaches rates as the collector does (slower).

    Each tick is its dict, copied only where a lap changes it, made a Tick by msgspec
    (as ``tick_from_json`` makes recorded ones): the Tick that json and
    ``Tick.model_validate`` gave, at ~0.2 ms a tick instead of ~0.5 ms
    (tests/unit/test_real_ticks.py holds the two equal, type for type). ``real`` is not
    changed."""
    dicts = [_dump(t) if isinstance(t, Tick) else t for t in real]
    n = len(dicts)
    if n < 2:
        raise ValueError("loop_ticks needs at least two real ticks")
    grow: dict[Any, Any] = {}
    if count > n:  # a second lap: what it advances
        grow = _growth_tree(_lap_growth(dicts))
    tracker = RateTracker() if rates else None
    for i in range(count):
        lap, j = divmod(i, n)
        d = _advanced(dicts[j], grow, lap) if lap else dicts[j].copy()
        d["seq"] = d["slot"] = i
        t = msgspec.convert(d, Tick, str_keys=True)
        if tracker is not None:
            t = t.model_copy(update={"primary": tracker.attach(t.primary),
                                     "replica": tracker.attach(t.replica)})
        yield t


def _series(vs: list[Any], path: Path_, out: dict[Path_, list[Any]]) -> None:
    """Into ``out``, each leaf path under ``path`` that all of ``vs`` (the same place in
    each of a capture's dicts) have, with their values in order: the capture walked
    once, side by side (a path some dict lacks, or has no leaf at, is left out)."""
    first = vs[0]
    if isinstance(first, dict):
        if all(isinstance(v, dict) for v in vs):
            for k in first:
                if all(k in v for v in vs):
                    _series([v[k] for v in vs], (*path, k), out)
    elif isinstance(first, list):
        if all(isinstance(v, list) for v in vs):
            for i in range(min(len(v) for v in vs)):
                _series([v[i] for v in vs], (*path, i), out)
    elif not any(isinstance(v, (dict, list)) for v in vs):
        out[path] = vs


def _lap_growth(dicts: Sequence[dict[str, Any]]) -> list[tuple[Path_, float]]:
    """Each clock's and counter's path in ``dicts`` (a capture's ticks) with what it
    grows by per lap: a clock by the capture's span, a counter by what it grew."""
    n = len(dicts)
    monos = [d["mono"] for d in dicts]
    step = (monos[-1] - monos[0]) / (n - 1)
    span = monos[-1] - monos[0] + step
    series: dict[Path_, list[Any]] = {}
    _series(list(dicts), (), series)
    counters: list[tuple[Path_, int]] = []
    clocks: list[Path_] = []
    for path, vs in series.items():
        if path in (("seq",), ("slot",)):
            continue
        if path[-1] in _CLOCKS and all(isinstance(v, float) for v in vs):
            clocks.append(path)
        elif (all(type(v) is int for v in vs) and vs[-1] > vs[0]
              and all(a <= b for a, b in zip(vs, vs[1:], strict=False))):
            counters.append((path, vs[-1] - vs[0] + max(1, round((vs[-1] - vs[0]) / (n - 1)))))
    # Replication offsets (a Redis replica's, the master's, the backlog's) count the
    # same byte stream: they advance together, by the master's growth, or the looped
    # replica would fall a little further behind on every lap.
    master = dict(counters).get(("primary", "redis", "master_repl_offset"))
    if master is not None:
        counters = [(p, master if p[-1] in _OFFSETS else g) for p, g in counters]
    return [(p, span) for p in clocks] + list(counters)


def _between(a: Any, b: Any, f: float) -> Any:
    """``a`` moved the fraction ``f`` of the way to ``b``: numbers linearly (ints stay
    ints, so counters keep counting), everything else (states, names, shapes) as in ``a``
    until the tick that is ``b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _between(v, b[k], f) if k in b else v for k, v in a.items()}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_between(x, y, f) for x, y in zip(a, b, strict=True)]
    if type(a) is int and type(b) is int:
        return a + round((b - a) * f)
    if type(a) is float and type(b) is float:
        return a + (b - a) * f
    return a


def _mean(xs: Sequence[Any]) -> Any:
    """Numbers averaged leaf by leaf (None when one of them is), the rest as the last."""
    last = xs[-1]
    if isinstance(last, dict):
        return {k: _mean([x.get(k) if isinstance(x, dict) else None for x in xs])
                for k in last}
    if isinstance(last, (int, float)) and not isinstance(last, bool):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs):
            m = sum(xs) / len(xs)
            return round(m) if all(type(x) is int for x in xs) else m
        return None
    return last


def resample(ticks: Sequence[Tick], interval: float, *, rates: str = "derive") -> list[Tick]:
    """``ticks`` (taken at one interval) as if sampled every ``interval`` seconds, rates
    derived again as the collector would (``rates="derive"``), or, for ticks whose rates
    were made without counters behind them (replmon.testing.synth), carried over
    (``rates="keep"``: a fine tick takes the rates of the real tick that ends its
    interval, a coarse one the mean of the rates it spans).

    Longer interval (a whole multiple): every k-th tick, so counters' deltas and the
    rates span k times as long. Shorter interval (a whole fraction): k-1 ticks between
    each pair, numbers interpolated, states held until the next real tick, so a
    condition starts at the same second it did. Used to test that findings mean the
    same at 0.2 s, 1 s and 5 s (docs/checks.md)."""
    if not ticks:
        return []
    base = ticks[0].interval
    ratio = interval / base
    dicts = [_dump(t) for t in ticks]
    kept = [{r: getattr(t, r).rates.model_dump(mode="json") for r in ("primary", "replica")}
            for t in ticks]
    out: list[dict[str, Any]] = []
    out_rates: list[dict[str, Any]] = []
    if ratio >= 1:
        k = round(ratio)
        if abs(k - ratio) > 1e-6:
            raise ValueError(f"{interval} s is not a whole multiple of {base} s")
        out = dicts[::k]
        out_rates = [kept[0]] + [_mean(kept[i - k + 1: i + 1]) for i in range(k, len(dicts), k)]
    else:
        k = round(1 / ratio)
        if abs(k - 1 / ratio) > 1e-6:
            raise ValueError(f"{interval} s is not a whole fraction of {base} s")
        for i, (a, b) in enumerate(zip(dicts, dicts[1:], strict=False)):
            out.extend(_between(a, b, j / k) for j in range(k))
            out_rates.extend([kept[i]] + [kept[i + 1]] * (k - 1))
        out.append(dicts[-1])
        out_rates.append(kept[-1])
    tracker = RateTracker()
    res: list[Tick] = []
    for i, d in enumerate(out):
        d = {**d, "seq": i, "slot": i, "interval": interval}
        t = Tick.model_validate(d)
        if rates == "keep":
            upd = {r: getattr(t, r).model_copy(update={"rates": type(getattr(t, r).rates)
                                                        .model_validate(out_rates[i][r])})
                   for r in ("primary", "replica")}
        else:
            upd = {"primary": tracker.attach(t.primary), "replica": tracker.attach(t.replica)}
        res.append(t.model_copy(update=upd))
    return res
