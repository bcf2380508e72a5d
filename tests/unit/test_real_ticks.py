"""loop_ticks (dicts copied where a lap changes them, made Ticks by msgspec) against the
way it made them before (each dict through json, advanced in place, then
Tick.model_validate): the same Ticks, value for value and type for type, on every
shipped session and on the lab fixture with DRBD added (dicts in), over several laps."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from replmon.model.tick import NO_RATES, Tick
from replmon.session.recording import open_recording
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.real_ticks import _OFFSETS, _add, _dump, loop_ticks, with_drbd

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = sorted((ROOT / "sample_sessions").glob("*.rmrec"))
FIXTURES = ROOT / "tests" / "fixtures"


def reference(real: Sequence[Tick] | Sequence[dict[str, Any]], count: int) -> Iterator[Tick]:
    """loop_ticks as it was (rates aside: both attach them with the same RateTracker),
    its leaves gathered without a generator."""
    dicts = [_dump(t) if isinstance(t, Tick) else t for t in real]
    n = len(dicts)
    texts = [json.dumps(d) for d in dicts]
    monos = [d["mono"] for d in dicts]
    step = (monos[-1] - monos[0]) / (n - 1)
    span = monos[-1] - monos[0] + step
    series: dict[tuple[Any, ...], list[Any]] = {}

    def collect(o: Any, path: tuple[Any, ...]) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                collect(v, (*path, k))
        elif isinstance(o, list):
            for i, v in enumerate(o):
                collect(v, (*path, i))
        else:
            series.setdefault(path, []).append(o)

    for d in dicts:
        collect(d, ())
    counters: list[tuple[tuple[Any, ...], int]] = []
    clocks: list[tuple[Any, ...]] = []
    for path, vs in series.items():
        if len(vs) != n or path in (("seq",), ("slot",)):
            continue
        if path[-1] in ("wall", "mono", "due_mono") and all(isinstance(v, float) for v in vs):
            clocks.append(path)
        elif (all(type(v) is int for v in vs) and vs[-1] > vs[0]
              and all(a <= b for a, b in zip(vs, vs[1:], strict=False))):
            counters.append((path, vs[-1] - vs[0] + max(1, round((vs[-1] - vs[0]) / (n - 1)))))
    master = dict(counters).get(("primary", "redis", "master_repl_offset"))
    if master is not None:
        counters = [(p, master if p[-1] in _OFFSETS else g) for p, g in counters]
    for i in range(count):
        lap, j = divmod(i, n)
        d = json.loads(texts[j])
        d["seq"] = d["slot"] = i
        if lap:
            for path in clocks:
                _add(d, path, lap * span)
            for path, grow in counters:
                _add(d, path, lap * grow)
        yield Tick.model_validate(d)


def leaves(o: object, path: str = "") -> Iterator[tuple[str, type, object]]:
    """Every value in a tick with its path and exact type (an int is not a float)."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield from leaves(v, f"{path}.{k}")
    elif isinstance(o, (list, tuple)):
        yield path, type(o), None
        for i, v in enumerate(o):
            yield from leaves(v, f"{path}[{i}]")
    elif hasattr(o, "_field_names"):
        yield path, type(o), None
        for name in o._field_names:
            yield from leaves(getattr(o, name), f"{path}.{name}")
    else:
        yield path, type(o), o


def same(ours: list[Tick], ref: list[Tick], laps_of: int) -> None:
    """Equal ticks; every number of the same type (JSON writes an int as 1, a float as
    1.0); every value's type, path by path, on the first two and the last tick of each
    lap (the same fields of the same dicts on every other tick)."""
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        assert a == b, f"tick {b.seq}"
        assert msgspec.json.encode(a) == msgspec.json.encode(b), f"tick {b.seq}"
        if i % laps_of in (0, 1, laps_of - 1):
            assert list(leaves(a)) == list(leaves(b)), f"tick {b.seq}"
        assert a.primary.rates is NO_RATES and a.replica.rates is NO_RATES


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_the_same_ticks_as_model_validate_on_every_shipped_session(path: Path) -> None:
    with open_recording(path) as rec:
        real = list(rec.ticks())
    count = 2 * len(real) + 3  # three laps, the last one begun
    ours = list(loop_ticks(real, count))
    same(ours, list(reference([_dump(t) for t in real], count)), len(real))
    assert ours[-1].mono > ours[len(real)].mono > real[-1].mono  # the clocks moved on


def test_the_same_ticks_from_dicts_with_drbd() -> None:
    drbd = parse_proc_drbd((FIXTURES / "drbd" / "seed_844_primary_wfconnection.txt")
                           .read_text(encoding="utf-8"))
    lab = [Tick.model_validate_json(line) for line in
           (FIXTURES / "ticks" / "lab_pair.jsonl").read_text().splitlines()]
    # from the lab's second tick: each dict's seq is not its place in the loop
    dicts = with_drbd(lab[1:], {"primary": drbd, "replica": drbd})
    before = json.dumps(dicts)
    count = 3 * len(dicts) + 1
    ours = list(loop_ticks(dicts, count))
    same(ours, list(reference(dicts, count)), len(dicts))
    assert json.dumps(dicts) == before  # the dicts given are not changed
    kib = [t.primary.drbd.resources[0].devices[0].written_kib or 0 for t in ours]
    assert kib[-1] > kib[len(dicts)] > kib[0]  # a counter went on counting
    # rates attached as the collector attaches them, on the same ticks
    rated = list(loop_ticks(dicts, count, rates=True))
    assert [t.model_copy(update={"primary": t.primary.model_copy(update={"rates": NO_RATES}),
                                 "replica": t.replica.model_copy(update={"rates": NO_RATES})})
            for t in rated] == ours
    assert rated[-1].primary.rates != NO_RATES
