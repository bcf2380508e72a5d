"""The public API for check modules (checks/*.py and third-party plug-ins).

A check module exposes one object, ``CHECK``::

    \"\"\"Statements vs rows: ...  (the module docstring is the user-facing text)\"\"\"
    from replmon.check import Check, Thresholds, Window, Observation, Severity

    class Limits(Thresholds):
        min_update_per_s: float = 100.0
        \"\"\"UPDATE statements/s below which the ratio is not judged.\"\"\"

    def evaluate(w: Window, t: Limits) -> list[Observation]:
        ...

    CHECK = Check(id="stmt_vs_rows", title="Statements vs rows", needs=("mysql",),
                  thresholds=Limits, evaluate=evaluate)

Rules: ``evaluate`` is pure (no I/O, no clock, no globals): the same window
always gives the same observations, live or in replay. It reads rates from
``tick.<role>.rates`` and raw samples from ``tick.<role>.<kind>``. It returns
data, never widgets. A check that raises is reported by the engine as a
finding of its own (check id "engine"), never silently dropped.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from replmon.model import gtid
from replmon.model.base import SourceState
from replmon.model.drbd import (
    DrbdConnection,
    DrbdDeviceRates,
    DrbdPeerDevice,
    DrbdPeerDeviceRates,
    DrbdResource,
)
from replmon.model.findings import NodeRef, Number, Observation, Severity
from replmon.model.host import DiskRates
from replmon.model.mysql import BinlogStatus, ReplicaChannel, ReplicationWords
from replmon.model.redis import RedisReplica, RedisSample
from replmon.model.tick import SOURCE_KINDS, NodeTick, Role, Tick
from replmon.units import Seconds, fmt_byte_rate, fmt_bytes, fmt_link_speed, fmt_setting

__all__ = [
    # the contract
    "Check", "Observation", "Seconds", "Severity", "Thresholds", "Window",
    # helpers
    "baseline_drop", "fmt", "numbers", "source_ok", "span_ticks",
    # sizes and rates in titles, as every view writes them (replmon.units: IEC bytes)
    "fmt_byte_rate", "fmt_bytes", "fmt_link_speed", "fmt_setting",
    "gtid",  # GTID set/position arithmetic (replmon.model.gtid)
    # what a window holds, for type hints and field access (the records of replmon.model)
    "SOURCE_KINDS", "BinlogStatus", "DiskRates", "DrbdConnection", "DrbdDeviceRates",
    "DrbdPeerDevice", "DrbdPeerDeviceRates", "DrbdResource", "NodeRef", "NodeTick", "Number",
    "RedisReplica", "RedisSample", "ReplicaChannel", "ReplicationWords", "Role", "SourceState",
    "Tick",
]


class Thresholds(BaseModel):
    """Per-check settings; a check subclasses it with its own limits (one docstring each,
    with the unit). All of them can be set in the TOML config under ``[checks.<id>]``."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Run this check at all."""
    open_after: Seconds = Field(default=3.0, ge=0)
    """Seconds (s) the condition must hold, tick after tick, before the finding opens
    ("3s", "1m" in TOML). At 1 s a hold of 3 s is 3 ticks; at 0.2 s 15; at 5 s the
    ``open_min_samples`` below."""
    open_min_samples: int = Field(default=2, ge=1)
    """Ticks in a row the condition must hold at least, on top of ``open_after``: at a
    long interval one sample is a blip, not a state."""
    close_after: Seconds = Field(default=3.0, ge=0)
    """Seconds (s) the condition must be clear before the finding closes."""


T = TypeVar("T", bound=Thresholds)
V = TypeVar("V")


@dataclass(frozen=True)
class Check(Generic[T]):
    id: str
    title: str
    needs: tuple[str, ...]
    """Source kinds read (host, drbd, mysql, redis): documentation, and the TUI greys a
    check out when none of them is present."""
    thresholds: type[T]
    evaluate: Callable[[Window, T], list[Observation]]
    window: float = 60.0
    """Seconds of history the check looks at (the engine keeps the largest of all checks;
    ``Window.span`` turns a duration into ticks at the recording's interval)."""
    doc: str = ""
    """Filled from the module docstring by the loader."""


def span_ticks(seconds: float, interval: float, min_samples: int = 1) -> int:
    """Ticks that cover ``seconds`` at ``interval`` (at least ``min_samples``): a check's
    window, a stall, a median's span. The engine and ``Window.span`` both use it."""
    return max(min_samples, round(seconds / interval))


class Window:
    """Recent ticks, oldest first; ``last`` is the tick being judged."""

    def __init__(self, ticks: Sequence[Tick], cache: SeriesCache | None = None) -> None:
        if not ticks:
            raise ValueError("a window holds at least one tick")
        self.ticks = ticks
        self._cache = cache

    def __len__(self) -> int:
        return len(self.ticks)

    def __iter__(self) -> Iterator[Tick]:
        return iter(self.ticks)

    @property
    def last(self) -> Tick:
        return self.ticks[-1]

    def tail(self, n: int) -> Sequence[Tick]:
        """The last ``n`` ticks (fewer at the start of a session)."""
        return self.ticks[-n:]

    def start_within(self, seconds: float) -> int:
        """Index of the oldest tick at most ``seconds`` older than the last
        (``last.wall - tick.wall <= seconds``); ticks' walls only grow."""
        ticks = self.ticks
        last = ticks[-1]
        end = last.wall
        if end - ticks[0].wall <= seconds:
            return 0  # the whole window: a check asking for its own window's length
        n, interval = len(ticks), last.interval
        lo, hi = 0, n
        back = seconds / interval if interval > 0 and seconds >= 0 else n
        if back < n:
            # Ticks are usually one interval apart: the answer is then within a tick or two
            # of where that puts it. When it is (the tick before a is too old, b is not),
            # bisect only between them.
            i = n - 1 - int(back)
            if i > 0 and end - ticks[i].wall <= seconds < end - ticks[i - 1].wall:
                return i  # exactly where it puts it: the usual case
            a, b = max(i - 2, 0), min(i + 2, n - 1)
            if end - ticks[b].wall <= seconds and (a == 0 or end - ticks[a - 1].wall > seconds):
                lo, hi = a, b
        while lo < hi:  # bisect by hand: a key function would cost a call per step
            mid = (lo + hi) // 2
            if end - ticks[mid].wall > seconds:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def node(self, role: Role, back: int = 0) -> NodeTick:
        """``role``'s share of the tick ``back`` ticks before the last."""
        return getattr(self.ticks[-1 - back], role)  # type: ignore[no-any-return]

    def span(self, seconds: float, min_samples: int = 1) -> int:
        """The number of ticks that covers ``seconds`` at this window's interval (at
        least ``min_samples``): what a check passes to ``series``/``tail`` so that a
        duration means the same at --interval 0.2 and 5."""
        return span_ticks(seconds, self.ticks[-1].interval, min_samples)

    def series(self, role: Role, get: Callable[[NodeTick], V],
               n: int | None = None) -> list[V]:
        """``get`` applied to ``role`` over the last ``n`` ticks (all by default), oldest
        first. The list may be the engine's cached column itself: read it, do not change
        it (checks are pure)."""
        if self._cache is not None:  # the column holds the whole window: one slice, at most
            vals = self._cache.values(get, role, self.ticks)
            return vals if n is None or n >= len(vals) else vals[-n:]  # type: ignore[return-value]
        ticks = self.ticks if n is None or n >= len(self.ticks) else self.ticks[-n:]
        return [get(getattr(t, role)) for t in ticks]


PRUNE_EVERY = 64
"""Ticks between two prunes of the series cache."""


class _Column:
    __slots__ = ("getter", "keep", "last_seq", "vals")

    def __init__(self, getter: object) -> None:
        self.getter = getter
        """The first getter object seen for this column (found by identity after)."""
        self.last_seq = -1
        self.keep = 1
        """The longest window that asked for this column."""
        self.vals: list[object] = []


def getter_key(get: Callable[..., object]) -> Hashable | None:
    """What a getter computes, as a dict key: its code plus the values it closes over
    (and its defaults; a captured function by its own key; a bound method's object).
    Two getters with equal keys compute the same thing (checks are pure), so a lambda or
    closure made anew on every call, ``w.series(role, lambda n: _iops(n, disk))``, finds
    the column the previous tick's copy filled. None when a captured value cannot be
    read (a cell not yet bound); a key holding an unhashable value (a list) fails to
    hash, and ``SeriesCache`` then computes that getter's values without caching."""
    if type(get) is not FunctionType:
        func = getattr(get, "__func__", None)  # a bound method: its function and object
        return get if func is None else (getter_key(func), getattr(get, "__self__", None))
    cells = get.__closure__
    if cells is None:
        defaults = get.__defaults__
        return get.__code__ if defaults is None else (get.__code__, defaults)
    try:
        if len(cells) == 1 and get.__defaults__ is None:  # the usual closure: one name
            v = cells[0].cell_contents
            return (get.__code__, getter_key(v) if type(v) is FunctionType else v)
        return (get.__code__, get.__defaults__, *[
            getter_key(v) if type(v := c.cell_contents) is FunctionType else v for c in cells])
    except ValueError:  # an empty cell
        return None


class SeriesCache:
    """Values of ``Window.series`` kept from tick to tick by the engine, so a check that
    scans its whole window each tick computes one new value per tick and gets the rest
    as a list slice (a 300-tick window otherwise costs 300 getter calls per tick).

    A column per (role, what the getter computes) holds the values of consecutive ticks,
    newest last. What a getter computes is ``getter_key``: its code and what it closes
    over, so a check written the plain way, with a fresh lambda per call, is cached like
    a module-level function. Ticks are told apart by seq, which only grows within one
    feed (the engine clears the cache when it does not); columns no check asked for
    in the last ``PRUNE_EVERY`` ticks are dropped (at most twice that after their
    last use)."""

    def __init__(self) -> None:
        self._cols: dict[str, dict[Hashable, _Column]] = {"primary": {}, "replica": {}}
        self._by_getter: dict[str, dict[object, _Column]] = {"primary": {}, "replica": {}}
        """The column of a getter object seen before (a module-level function): one
        identity lookup instead of its key."""
        self._ticks = 0
        """Ticks since the last prune."""
        self._pruned_at = -1
        """Seq of the last prune's tick."""

    def _column(self, get: Callable[[NodeTick], object], role: str) -> _Column | None:
        """The column for what ``get`` computes (made when new); None: not cacheable."""
        if role not in self._cols:
            self._cols[role], self._by_getter[role] = {}, {}
        key = getter_key(get)
        if key is None:
            return None
        cols = self._cols[role]
        try:
            col = cols.get(key)
        except TypeError:  # an unhashable captured value
            return None
        if col is None:
            col = cols[key] = _Column(get)
        if col.getter is get:  # the same object next tick: found by identity
            self._by_getter[role][get] = col
        return col

    def values(self, get: Callable[[NodeTick], object], role: str,
               ticks: Sequence[Tick]) -> list[object]:
        try:
            col = self._by_getter[role].get(get)
        except (KeyError, TypeError):  # a new role, or an unhashable callable
            col = None
        if col is None:
            col = self._column(get, role)
            if col is None:
                return [get(getattr(t, role)) for t in ticks]
        vals, last, n = col.vals, col.last_seq, len(ticks)
        if n > 1 and ticks[-2].seq == last and len(vals) >= n - 1:
            vals.append(get(getattr(ticks[-1], role)))  # the usual case: one tick more
        elif ticks[-1].seq == last and len(vals) >= n:
            pass  # asked again within the tick
        else:
            self._fill(col, get, role, ticks)
        col.last_seq = ticks[-1].seq
        if n > col.keep:
            col.keep = n
        if len(vals) > col.keep:  # one value more than the longest window: a memmove
            del vals[:-col.keep]
        return vals if len(vals) == n else vals[-n:]  # the whole column: no copy

    @staticmethod
    def _fill(col: _Column, get: Callable[[NodeTick], object], role: str,
              ticks: Sequence[Tick]) -> None:
        """Bring the column up to ``ticks``: the values it lacks, or all of them anew."""
        vals, last = col.vals, col.last_seq
        if len(ticks) > 1 and ticks[-2].seq == last:
            new = 1
        else:
            new = 0
            for t in reversed(ticks):
                if t.seq <= last:
                    break
                new += 1
        old = len(ticks) - new  # ticks the column should already hold, ending at last
        if old == 0 or ticks[old - 1].seq != last or len(vals) < old:
            vals[:] = [get(getattr(t, role)) for t in ticks]  # new, or not contiguous: whole
        elif new == 1:
            vals.append(get(getattr(ticks[-1], role)))
        elif new:
            vals.extend(get(getattr(t, role)) for t in ticks[old:])

    def prune(self, seq: int) -> None:
        """After tick ``seq``: every ``PRUNE_EVERY`` ticks, forget the columns not asked
        for since the previous prune (a disk that went away). A column asked for only on
        some ticks (pair_lag's binlog readings, every other tick) stays: dropping it
        would cost its whole window again when next asked. Memory only: a column skipped
        for some ticks is filled in when asked again (``_fill``), so it never has a hole."""
        self._ticks += 1
        if self._ticks < PRUNE_EVERY:
            return
        self._ticks = 0
        since, self._pruned_at = self._pruned_at, seq
        for by_key in (*self._cols.values(), *self._by_getter.values()):
            for k in [k for k, c in by_key.items() if c.last_seq < since]:
                del by_key[k]

    def clear(self) -> None:
        for by_key in (*self._cols.values(), *self._by_getter.values()):
            by_key.clear()
        self._ticks = 0
        self._pruned_at = -1


def baseline_drop(values: Sequence[float | None], *, min_rate: float, min_ticks: int,
                  ratio: float) -> tuple[float, float, list[int]] | None:
    """(baseline, now, indexes of the baseline values) when the last value fell below
    ``ratio`` x the median of the earlier values that were at least ``min_rate``
    (at least ``min_ticks`` of them); None otherwise. A throughput fall, judged
    against the window's own recent past, so an idle server is never "collapsed"."""
    now = values[-1] if values else None
    if now is None:
        return None
    try:  # most ticks: the largest earlier value is a baseline value, and no fall from it
        top = max(cast("Sequence[float]", values[:-1]))
        if top >= min_rate and now >= ratio * top:
            return None
    except (TypeError, ValueError):
        pass  # a None among them (a tick without a rate), or no earlier value: filter below
    base = [v for v in values[:-1] if v is not None and v >= min_rate]
    if not base or len(base) < min_ticks or now >= ratio * max(base):
        return None  # the median is at most the max: no fall (and no sort, most ticks)
    before = statistics.median(base)
    if not now < ratio * before:
        return None
    idx = [i for i, v in enumerate(values[:-1]) if v is not None and v >= min_rate]
    return before, now, idx


_OK = SourceState.OK  # an enum member looked up once: SourceState.OK costs a lookup per call


def source_ok(node: NodeTick, kind: str) -> bool:
    return getattr(node, kind).status.state is _OK


def fmt(v: float | None, digits: int = 0) -> str:
    """Thousands separators for titles: 47240.4 -> '47,240'; None -> '?'. Counts and
    seconds; a number of bytes goes through ``fmt_bytes`` / ``fmt_byte_rate`` instead
    ("1.6 MiB", "633 KiB/s": the screen's units)."""
    if v is None:
        return "?"
    return f"{v:,.{digits}f}"


def numbers(**values: Any) -> dict[str, Number]:
    """Rounded numbers for a finding (floats to 3 significant decimals)."""
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in values.items()}
