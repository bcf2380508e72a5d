"""The check author's Window: read-only (its ticks, its series, its attributes, its pair
view), in a plain Window as in the engine's, which every check of a tick shares; and the
pair view (``w.pair``): made once per tick and window, shared by that tick's checks,
and holding what its facts say."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replmon.check import Check, NodeTick, Observation, Thresholds, Window
from replmon.engine import Engine, configure
from replmon.model.base import SourceState, SourceStatus
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.model.tick import Role, Tick
from replmon.testing.synth import node, series

FAILED = SourceStatus(state=SourceState.UNREACHABLE, error="connection refused")


def reading(seq: int, server_id: int = 1, **more: Any) -> BinlogStatus:
    return BinlogStatus(file="binlog.000001", position=1000 + seq, gtid_executed=f"0-1-{seq}",
                        server_id=server_id, **more)


def pair_ticks(n: int, *, every: int = 2, channels: list[ReplicaChannel] | None = None
               ) -> list[Tick]:
    """``n`` ticks; both nodes read their binlog every ``every`` ticks (on tick 0, 2...)."""
    chans = channels if channels is not None else [ReplicaChannel(source_server_id=1)]
    return series((node("primary", mysql=MysqlSample(
                       binlog=reading(i) if i % every == 0 else None)),
                   node("replica", mysql=MysqlSample(
                       binlog=reading(i, 2) if i % every == 0 else None, replication=chans)))
                  for i in range(n))


def run(*evaluates: Callable[[Window, Thresholds], list[Observation]], n: int = 5,
        window: float = 10.0, ticks: list[Tick] | None = None) -> None:
    checks = [Check(id=f"probe{k}", title="probe", needs=(), thresholds=Thresholds,
                    evaluate=e, window=window) for k, e in enumerate(evaluates)]
    engine = Engine(configure(checks))
    for t in ticks if ticks is not None else pair_ticks(n):
        for seen in engine.observe(t):
            assert seen[0] != "engine", seen[1].title  # a probe's assert failed


def _refused(change: Callable[[], object]) -> bool:
    try:
        change()
    except (TypeError, AttributeError):
        return True
    return False


def _name(n: NodeTick) -> str:
    return n.name


def changes_refused(w: Window) -> list[str]:
    """Every way a check could change what the next check reads, tried on ``w``: the
    names of those that did NOT raise."""
    ticks: Any = w.ticks  # (typed Sequence: mypy refuses these changes already)
    col: Any = w.series("primary", _name)
    tries: dict[str, Callable[[], object]] = {
        "ticks.append": lambda: ticks.append(w.last),
        "ticks[0] =": lambda: ticks.__setitem__(0, w.last),
        "del ticks[0]": lambda: ticks.__delitem__(0),
        "ticks.sort": lambda: ticks.sort(),
        "ticks.clear": lambda: ticks.clear(),
        "series.append": lambda: col.append("x"),
        "series[-1] =": lambda: col.__setitem__(-1, "x"),
        "series.pop": lambda: col.pop(),
        "series +=": lambda: col.__iadd__(["x"]),
        "w.ticks =": lambda: setattr(w, "ticks", []),
        "w.last =": lambda: setattr(w, "last", None),
        "del w.last": lambda: delattr(w, "last"),
        "w.pair =": lambda: setattr(w, "pair", None),
        "w.pair.channel =": lambda: setattr(w.pair, "channel", None),
        "w.pair.primary_binlog =": lambda: setattr(w.pair, "primary_binlog", None),
    }
    return [name for name, change in tries.items() if not _refused(change)]


def test_a_plain_window_cannot_be_changed() -> None:
    ticks = pair_ticks(5)
    w = Window(ticks)
    assert changes_refused(w) == []
    assert list(w.ticks) == ticks and w.last is ticks[-1]
    assert list(w.series("primary", _name)) == ["db163"] * 5


def test_the_engines_window_cannot_be_changed_and_the_next_check_reads_it_whole() -> None:
    before: list[tuple[int, list[str], Any]] = []

    def vandal(w: Window, t: Thresholds) -> list[Observation]:
        before.append((len(w), list(w.series("primary", _name)), w.last))
        assert changes_refused(w) == []
        return []

    def reader(w: Window, t: Thresholds) -> list[Observation]:
        assert (len(w), list(w.series("primary", _name)), w.last) == before[-1]
        return []

    run(vandal, reader, n=12)
    assert len(before) == 12 and before[-1][0] == 10  # the window filled up, then slid


def test_the_pair_view_is_made_once_per_tick_and_shared_by_its_checks() -> None:
    views: list[list[object]] = []

    def first(w: Window, t: Thresholds) -> list[Observation]:
        views.append([w.pair, w.pair.primary_binlog])
        return []

    def second(w: Window, t: Thresholds) -> list[Observation]:
        assert w.pair is views[-1][0]  # the same view, its facts worked out once
        assert w.pair.primary_binlog is views[-1][1]
        views[-1].append(w.pair)
        return []

    run(first, second, n=4)
    assert len({id(v[0]) for v in views}) == 4  # a new view each tick
    assert all(v[0] is v[2] for v in views)


def test_newest_readings_and_their_ticks() -> None:
    w = Window(pair_ticks(6))  # readings on ticks 0, 2, 4
    p = w.pair
    assert p.primary_binlog == reading(4) and p.primary_binlog_at == 4
    assert p.replica_binlog == reading(4, 2) and p.replica_binlog_at == 4
    assert p.binlogs == (reading(4), reading(4, 2))
    one = Window(pair_ticks(6)[-1:])  # the last tick alone: no reading in it
    assert (one.pair.primary_binlog, one.pair.primary_binlog_at, one.pair.binlogs) \
        == (None, -1, None)


def test_a_reading_of_a_failed_sample_does_not_count() -> None:
    ticks = pair_ticks(6)
    last = ticks[4]
    failed = last.primary.model_copy(update={
        "mysql": last.primary.mysql.model_copy(update={"status": FAILED})})
    ticks[4] = last.model_copy(update={"primary": failed})
    p = Window(ticks).pair
    assert p.primary_binlog == reading(2) and p.primary_binlog_at == 2  # the one before
    assert p.binlogs is None  # the newest tick where both read has a failed sample
    assert not Window(ticks[:5]).pair.mysql_ok and Window(ticks[:4]).pair.mysql_ok


def test_the_channel_from_the_primary() -> None:
    one = ReplicaChannel(name="", source_server_id=7)
    assert Window(pair_ticks(3, channels=[one])).pair.channel == one  # the only one
    other, mine = ReplicaChannel(name="b", source_server_id=9), \
        ReplicaChannel(name="a", source_server_id=1)
    group = ReplicaChannel(name="group_replication_applier")
    w = Window(pair_ticks(3, channels=[group, other, mine]))
    assert w.pair.channels == (other, mine)  # group replication's left out
    assert w.pair.channel == mine  # by the primary's server_id
    assert Window(pair_ticks(1, channels=[])).pair.channel is None
    assert Window(pair_ticks(3, channels=[group])).pair.channel is None


def test_the_clock_offset_from_the_tighter_reading() -> None:
    def clocked(role: Role, redis_off: float, redis_ms: float,
                mysql_off: float | None = None, mysql_ms: float = 0.0) -> NodeTick:
        wall = 1000.0
        redis = RedisSample(wall=wall, elapsed_ms=redis_ms,
                            server_time=wall + redis_ms / 2000 + redis_off)
        binlog = None if mysql_off is None else BinlogStatus(
            sent_wall=wall, elapsed_ms=mysql_ms, server_time=wall + mysql_ms / 2000 + mysql_off)
        return node(role, redis=redis, mysql=MysqlSample(binlog=binlog))

    w = Window(series([(clocked("primary", 2.0, 4.0), clocked("replica", 0.5, 2.0))]))
    assert w.pair.clock_offset_s == pytest.approx(1.5)
    assert w.pair.clock_bound_s == pytest.approx(0.003)
    w = Window(series([(clocked("primary", 2.0, 4.0, mysql_off=1.0, mysql_ms=1.0),
                        clocked("replica", 0.5, 2.0))]))
    assert w.pair.clock_offset_s == pytest.approx(0.5)  # the primary's MySQL is tighter
    assert w.pair.clock_bound_s == pytest.approx(0.0015)
    w = Window(series([(clocked("primary", 2.0, 4.0), node("replica"))]))
    assert (w.pair.clock_offset_s, w.pair.clock_bound_s) == (None, None)


def test_what_checks_reach_is_not_a_cache_they_could_change() -> None:
    """No check keeps a cache of its own (the engine keeps the columns, the window the
    pair view), and the GTID helpers' memoised answers are read-only."""
    import ast

    import replmon.checks  # type: ignore[import-not-found,unused-ignore]

    from replmon.check import gtid

    domains = gtid.maria_domains("0-1-5,1-2-7")
    assert domains == {0: 5, 1: 7}
    with pytest.raises(TypeError):
        domains[0] = 6  # type: ignore[index]
    folder = Path(replmon.checks.__file__).parent
    found = []
    for path in sorted(folder.glob("*.py")):
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in n.names] if isinstance(n, ast.ImportFrom)
                     and n.module == "functools" else [n.attr] if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == "functools" else [])
            found += [f"{path.name}: functools.{x}" for x in names
                      if x in ("lru_cache", "cache", "cached_property")]
    assert found == []


def test_the_engines_newest_readings_are_what_looking_back_finds() -> None:
    """The engine's windows keep each node's newest binlog reading as ticks come
    (``windows.BinlogMarks``) instead of looking back through the window for it: the same
    readings and ticks as a plain Window of the same ticks, in windows of two lengths
    that slide, with readings every 3 ticks on the primary, a failed sample's reading
    that does not count, a replica that never reads one, and a new feed after."""
    ticks = series((node("primary", mysql=MysqlSample(
                        binlog=reading(i) if i % 3 == 0 else None,
                        status=FAILED if i == 9 else SourceStatus())),
                    node("replica", mysql=MysqlSample(replication=[ReplicaChannel()])))
                   for i in range(40))
    facts: list[tuple[Any, ...]] = []

    def probe(w: Window, t: Thresholds) -> list[Observation]:
        plain = Window(w.ticks).pair
        mine = w.pair
        got = (mine.primary_binlog, mine.primary_binlog_at, mine.replica_binlog,
               mine.replica_binlog_at, mine.binlogs)
        assert got == (plain.primary_binlog, plain.primary_binlog_at, plain.replica_binlog,
                       plain.replica_binlog_at, plain.binlogs)
        facts.append((len(w), got[1]))
        return []

    checks = [Check(id=f"probe{k}", title="probe", needs=(), thresholds=Thresholds,
                    evaluate=probe, window=window) for k, window in enumerate((4.0, 10.0))]
    engine = Engine(configure(checks))
    for t in [*ticks, *ticks[:8]]:  # then seq starts again at 0: a new feed
        for seen in engine.observe(t):
            assert seen[0] != "engine", seen[1].title
    lengths = {n for n, _ in facts}
    assert lengths == {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
    assert (4, -1) in facts and (4, 3) in facts and (10, 9) in facts  # none in it, then one
