"""``Check.reads`` (#33): a check that names the parts of a tick it reads sees the same
with only those parts kept, and the engine keeps no more of older ticks than that.

Each check with ``reads`` runs on every tick of every shipped recording and seed
scenario three times: on whole ticks, on ticks thinned to its own ``reads`` (all of them,
the newest too: stricter than the engine, which keeps its newest ticks whole), and on
those ticks packed (``replmon.model.packed``: their kept parts as bytes, read back on
each access, as a live engine keeps its older ticks). The observations must be equal,
and a part the check reads but does not name raises DroppedPartError. The inputs cover
DRBD 8 and 9, MySQL replication stopped and lagging, Redis resyncs and memory, swapping,
DRBD congestion and pair lag.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from replmon.check import Check, Thresholds, Window, span_ticks
from replmon.engine import Engine, build_engine
from replmon.model.findings import Observation, Severity
from replmon.model.packed import PackedPart, pack
from replmon.model.parts import PARTS, DroppedPart, DroppedPartError, kept_parts, thin
from replmon.model.tick import Tick
from replmon.plugins import discover
from replmon.session.recording import open_recording
from replmon.testing.scenarios import all_scenarios

SESSIONS = sorted((Path(__file__).resolve().parents[2] / "sample_sessions").glob("*.rmrec"))
CHECKS, _ = discover(entry_points=False)
DECLARED = [c for c in CHECKS if c.reads is not None]
_TICKS: dict[Path, list[Tick]] = {}


def _ticks(path: Path) -> list[Tick]:
    if path not in _TICKS:
        _TICKS[path] = list(open_recording(path).ticks())
    return _TICKS[path]


def _inputs() -> list[tuple[str, list[Tick]]]:
    """Every shipped recording, and every seed scenario of the accuracy table (the DRBD
    congestion and pair lag cases no recording has)."""
    seeds, _ = all_scenarios()
    return ([(p.name, _ticks(p)) for p in SESSIONS]
            + [(sc.name, sc.build()[0]) for sc in seeds])


def test_the_long_checks_name_what_they_read() -> None:
    """Every check whose window is longer than a minute names its reads: it is what
    lets the engine thin (a long check without reads keeps every tick whole)."""
    long = sorted(c.id for c in CHECKS if c.window > 60.0)
    assert long and long == sorted(c.id for c in DECLARED if c.window > 60.0)


@pytest.mark.parametrize("check", DECLARED, ids=lambda c: c.id)
def test_a_check_sees_the_same_on_ticks_thinned_to_its_reads(check: Check[Any]) -> None:
    th = check.thresholds()
    keep = kept_parts(check.reads or ())
    compared = 0
    seen = 0
    inputs = _inputs()
    for name, ticks in inputs:
        thinned = [thin(t, keep) for t in ticks]
        packed = [pack(t) for t in thinned]
        n = span_ticks(check.window, ticks[0].interval)
        for i in range(len(ticks)):
            lo = max(0, i + 1 - n)
            whole = check.evaluate(Window(ticks[lo:i + 1]), th)
            try:
                part = check.evaluate(Window(thinned[lo:i + 1]), th)
            except DroppedPartError as e:
                pytest.fail(f"{check.id} on {name} tick {i}: {e}")
            assert part == whole, f"{check.id} on {name} tick {i}"
            assert check.evaluate(Window(packed[lo:i + 1]), th) == whole, \
                f"{check.id} on {name} tick {i}, packed"
            compared += 1
            seen += len(whole)
    assert compared == sum(len(t) for _, t in inputs) > 900
    assert seen, f"{check.id} saw nothing in any recording: the comparison proves little"


def test_a_part_not_named_raises_and_names_itself() -> None:
    tick = _ticks(SESSIONS[0])[-1]
    t = thin(tick, kept_parts(["mysql"]))
    assert t.primary.mysql.replication == tick.primary.mysql.replication
    assert t.seq == tick.seq and t.replica.name == tick.replica.name
    for read in (lambda: t.primary.host.hostname, lambda: t.replica.rates.mysql.questions_per_s,
                 lambda: t.primary.mysql.counters.get("Questions"),
                 lambda: t.primary.redis.status):
        with pytest.raises(DroppedPartError, match="Check\\(reads=..."):
            read()
    # no rates kept: one NodeRates stands for every node's of every tick
    other = thin(_ticks(SESSIONS[0])[-2], kept_parts(["mysql"]))
    assert t.primary.rates is t.replica.rates is other.primary.rates
    assert t.primary.rates is not tick.primary.rates
    with pytest.raises(ValueError, match="unknown tick part 'mysql.status'"):
        kept_parts(["mysql.status"])
    assert kept_parts(["redis.counters", "rates.mysql"]) == {"redis", "redis.counters",
                                                        "rates.mysql"}
    assert set(PARTS) >= {"host", "drbd", "mysql", "redis"}


def _reader(reads: tuple[str, ...] | None, window: float) -> Check[Any]:
    """A check that reads the first tick's host (a part), over ``window`` seconds."""
    def evaluate(w: Window, t: Thresholds) -> list[Observation]:
        mem = w.ticks[0].primary.host.hostname
        return [Observation(key="k", node="primary", severity=Severity.WARNING,
                            title=f"{mem}")]
    return Check(id="reader", title="reader", needs=("host",), thresholds=Thresholds,
                 evaluate=evaluate, window=window, reads=reads)


def _short() -> Check[Any]:
    return Check(id="short", title="short", needs=(), thresholds=Thresholds,
                 evaluate=lambda w, t: [], window=10.0)


@pytest.mark.check_raises  # the wrong declaration: the check reads a thinned part
def test_the_engine_thins_old_ticks_and_a_wrong_declaration_shows() -> None:
    ticks = _ticks(SESSIONS[0])
    right = Engine([(_reader(("host",), 120.0), Thresholds()), (_short(), Thresholds())])
    wrong = Engine([(_reader(("mysql",), 120.0), Thresholds()), (_short(), Thresholds())])
    for t in ticks[:40]:
        ok, bad = right.observe(t), wrong.observe(t)
    assert [o.title for _, o in ok] == [str(ticks[0].primary.host.hostname)]
    kept = right._windows.ticks
    assert len(kept) == 40
    assert isinstance(kept[0].primary.mysql, DroppedPart)  # older than 10 s: thinned
    assert kept[-10].primary.mysql is ticks[30].primary.mysql  # the last 10 s: whole
    assert isinstance(kept[-11].primary.mysql, DroppedPart)
    assert bad[0][0] == "engine" and "host of a tick older" in bad[0][1].title
    assert "'host' in Check(reads=...)" in bad[0][1].title


def test_a_thinned_tick_holds_a_fraction_of_the_bytes() -> None:
    """The point of it: what the long checks keep of a tick, against the whole tick
    (recorded ticks; live ones share their variables and strings, ~36 KB)."""
    keep = kept_parts(p for c in DECLARED for p in c.reads or ())
    tick = _ticks(SESSIONS[0])[-1]

    def size(o: object, seen: set[int]) -> int:
        if id(o) in seen or isinstance(o, DroppedPart):
            return 0
        seen.add(id(o))
        n = sys.getsizeof(o)
        if isinstance(o, dict):
            n += sum(size(k, seen) + size(v, seen) for k, v in o.items())
        elif isinstance(o, (list, tuple)):
            n += sum(size(v, seen) for v in o)
        elif hasattr(o, "__dataclass_fields__"):
            n += sum(size(getattr(o, f), seen) for f in o.__dataclass_fields__)
        return n

    whole, thinned = size(tick, set()), size(thin(tick, keep), set())
    assert thinned < whole / 2, (thinned, whole, sorted(keep))


def _service_reader(service: str, reads: tuple[str, ...], window: float) -> Check[Any]:
    return Check(id=f"{service}-reader", title="reader", needs=(), thresholds=Thresholds,
                 evaluate=lambda w, t: [], window=window, reads=reads, service=service)


def test_the_feeds_share_one_thinned_copy_of_each_old_tick() -> None:
    """The MySQL, Redis and DRBD checks' windows hold the same tick objects while each
    service's primary is the pair's: an old tick is thinned once, to what any of them
    reads, and each feed holds that one copy (four copies of each of the last 300 s
    were ~0.5 MB of a pair's 5 MB at 1 s: bench_memory.py held)."""
    ticks = _ticks(SESSIONS[0])
    readers = [_service_reader("mysql", ("mysql",), 120.0),
               _service_reader("redis", ("redis.counters", "rates.redis"), 120.0),
               _service_reader("drbd", ("drbd",), 60.0), _short()]
    engine = Engine([(c, Thresholds()) for c in readers], packed=True)
    for t in ticks[:100]:
        engine.observe(t)
    feeds = {s: f.ticks for s, f in engine._feeds.items()}
    assert set(feeds) == {None, "mysql", "redis", "drbd"}
    mysql, redis, drbd = feeds["mysql"], feeds["redis"], feeds["drbd"]
    assert len(mysql) == len(redis) == 100 and len(drbd) == 60
    for back in range(11, 61):  # older than the short check's 10 s: thinned, one copy
        old = mysql[-back]
        assert old is redis[-back] is drbd[-back], back
        assert old is not ticks[100 - back] and old.seq == ticks[100 - back].seq
        assert isinstance(old.primary.host, DroppedPart)  # nobody reads it
        # kept, as bytes (replmon.model.packed): read back equal
        assert type(old.primary.drbd) is PackedPart
        assert old.primary.drbd == ticks[100 - back].primary.drbd
        assert old.replica.redis == ticks[100 - back].replica.redis
    assert mysql[-61] is redis[-61]
    for back in range(1, 11):  # the newest: whole, the tick fed
        assert mysql[-back] is drbd[-back] is ticks[100 - back]
    assert engine._thinner._tick is None  # the whole tick let go after the tick


def test_a_live_engine_sees_the_same_with_its_old_parts_packed() -> None:
    """A live command's engine keeps the kept parts of its ticks older than a minute as
    bytes (``build_engine(live=True)``): every check observes the same at every tick of
    every input as with them kept as records."""
    compared = packed = 0
    for name, ticks in _inputs():
        live, plain = build_engine(entry_points=False, live=True), build_engine(entry_points=False)
        for i, t in enumerate(ticks):
            assert live.observe(t) == plain.observe(t), f"{name} tick {i}"
            compared += 1
        kept = live._feeds["redis"].ticks  # (the pair's own checks look back 60 s at most)
        assert len(kept) <= 60 or type(kept[0].primary.redis) is PackedPart, name
        packed += len(kept) > 60
    assert compared > 900 and packed


def test_a_live_engine_reads_no_packed_part_back_once_its_windows_are_full() -> None:
    """What makes the bytes cheap: a check reads an old tick through its window's series
    columns, filled when the tick was new; nothing decodes a packed part tick after tick
    (the lab's real ticks looped into 10 minutes at 1 s: none opened after the first 6)."""
    from replmon.model import packed
    from replmon.testing.real_ticks import loop_ticks

    path = Path(__file__).parent.parent / "fixtures" / "ticks" / "lab_pair.jsonl"
    real = [Tick.model_validate_json(line) for line in path.read_text().splitlines()]
    ticks = list(loop_ticks([t.model_dump(mode="json") for t in real], 600, rates=True))
    engine = build_engine(entry_points=False, live=True)
    for t in ticks[:360]:
        engine.observe(t)
    before = packed.opened
    for t in ticks[360:]:
        engine.observe(t)
    assert type(engine._feeds["redis"].ticks[0].primary.redis) is PackedPart
    assert packed.opened == before
