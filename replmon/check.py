"""The public API for check modules (checks/*.py and third-party plug-ins): what a
check author uses, nothing of the engine's.

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

Rules: ``evaluate`` is pure (no I/O, no clock, no globals, no caches of its own): the
same window always gives the same observations, live or in replay. It reads rates from
``tick.<role>.rates``, raw samples from ``tick.<role>.<kind>``, columns over time from
``w.series`` and what both nodes' samples say together from ``w.pair`` (the pair view:
each node's newest binlog reading, the replica's channel, the clocks' offset, the lag);
the window is read-only (the checks of a tick share it). Durations are seconds, never
ticks. It returns data, never widgets. A check that raises is reported by the engine as
a finding of its own (check id "engine"), never silently dropped. docs/checks.md,
"Writing a check", walks through one; its "A gate" says when a gate is worth having.
"""

from __future__ import annotations

import math
import statistics
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from replmon.model import gtid
from replmon.model.base import SourceState, SourceStatus
from replmon.model.drbd import (
    DrbdConnection,
    DrbdDeviceRates,
    DrbdPeerDevice,
    DrbdPeerDeviceRates,
    DrbdResource,
)
from replmon.model.failures import (
    Failure,
    failure,
    short_words,
    steady_error,
    unresolved_name,
)
from replmon.model.findings import NodeRef, Number, Observation, Severity
from replmon.model.host import DiskRates
from replmon.model.incidents import Explains
from replmon.model.lag import MeasuredLag
from replmon.model.mysql import BinlogStatus, ReplicaChannel, ReplicationWords
from replmon.model.parts import kept_parts
from replmon.model.redis import RedisReplica, RedisSample
from replmon.model.roles import LAYER_NAMES, LayerRole, Roles, group_label
from replmon.model.sentinel import failover_busy
from replmon.model.tick import SOURCE_KINDS, NodeTick, Role, Tick
from replmon.pair import (
    LAG_WINDOW_S,
    PairView,
    gtid_slave_pos,
    gtid_slave_pos_inserts,
    node_clock,
    redis_clock,
)
from replmon.units import (
    Seconds,
    fmt_byte_rate,
    fmt_bytes,
    fmt_duration,
    fmt_link_speed,
    fmt_setting,
    tick_clock,
)

__all__ = [
    # the contract
    "Check", "Observation", "Seconds", "Severity", "Thresholds", "Window",
    # a check's quick test (optional): see Gate
    "Gate", "Gauges", "GATE_LEVELS", "LevelGauges", "quiet_by_level", "round_down", "round_up",
    "Restate", "changed_limits",  # a gate's restate (optional)
    "Explains",  # what a check's findings can explain (replmon.model.incidents)
    "PairView",  # w.pair (replmon.pair)
    # the replica's true lag (w.pair.lag: replmon.model.lag.MeasuredLag) and its window
    "LAG_WINDOW_S", "MeasuredLag",
    "gtid_slave_pos", "gtid_slave_pos_inserts",  # a MariaDB replica's own bookkeeping
    # helpers
    "baseline_drop", "fmt", "node_clock", "numbers", "redis_clock", "source_ok",
    "span_ticks",
    # sizes and rates in titles, as every view writes them (replmon.units: IEC bytes)
    "fmt_byte_rate", "fmt_bytes", "fmt_duration", "fmt_link_speed", "fmt_setting",
    "tick_clock",  # a tick's wall time as the screen shows it (HH:MM:SS, local time)
    # the pair's roles as the servers say them (Tick.roles; replmon.roles observes them)
    "LAYER_NAMES", "LayerRole", "Roles", "group_label",
    "failover_busy",  # what a Redis Sentinel is doing about the master (its failover)
    "gtid",  # GTID set/position arithmetic (replmon.model.gtid)
    # why a source could not be read, by class of cause (replmon.model.failures)
    "Failure", "failure", "short_words", "steady_error", "unresolved_name",
    # what a window holds, for type hints and field access (the records of replmon.model)
    "SOURCE_KINDS", "BinlogStatus", "DiskRates", "DrbdConnection", "DrbdDeviceRates",
    "DrbdPeerDevice", "DrbdPeerDeviceRates", "DrbdResource", "NodeRef", "NodeTick", "Number",
    "RedisReplica", "RedisSample", "ReplicaChannel", "ReplicationWords", "Role", "SourceState",
    "SourceStatus", "Tick",
]


SOURCE_FILES: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()
"""Each Thresholds subclass's module file, noted as the class is made: where
replmon.output.checkdoc reads its fields' docstrings (a check loaded from a file need not
stay in sys.modules)."""


class Thresholds(BaseModel):
    """Per-check settings; a check subclasses it with its own limits (one docstring each,
    with the unit). All of them can be set in the TOML config under ``[checks.<id>]``."""

    # (the fields' docstrings: replmon.output.checkdoc.field_docs, from SOURCE_FILES)
    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if file:
            SOURCE_FILES[cls] = file

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


_set = object.__setattr__
"""How a Window or a Gate sets its own attributes (their ``__setattr__`` refuses)."""

T = TypeVar("T", bound=Thresholds)
V = TypeVar("V")

Gauges = tuple[float | None, ...]
"""A check's gauges at one tick (``Gate.measure``): numbers, None where unknown. A check
names them with a ``typing.NamedTuple`` of its own (``Gate(..., gauges=ThatClass)``)."""
G = TypeVar("G", bound=Gauges)
Restate = Callable[[list[Observation], G], list[Observation] | None]
"""A gate's restate for one pair of thresholds: (what ``evaluate`` saw with the recorded
ones at a tick, the tick's gauges) -> what it sees with the new ones; None: cannot tell."""


def changed_limits(was: Thresholds, now: Thresholds) -> frozenset[str]:
    """The thresholds of a check that differ between ``was`` and ``now``, but those only
    the engine reads (``enabled`` and the hold times: Thresholds' own)."""
    return frozenset(k for k in type(now).model_fields if k not in Thresholds.model_fields
                     and getattr(was, k, None) != getattr(now, k))


class Gate(Generic[T, G]):
    """A check's quick test, so that a re-check with other thresholds need not decode
    the ticks where the check cannot see anything (optional; docs/checks.md, "A gate",
    says when one is worth its cost and walks through one).

    ``measure(w)`` gives a few numbers of the window that do not depend on the
    thresholds (the worst iowait of the two nodes, the measured lag), as the check's
    ``gauges`` class, a ``typing.NamedTuple`` whose field names say what each number is:
    the engine computes them every tick, live and in a re-run, and the recorder stores
    them in the chunk's observations frame, by position (field names in every tick
    would make the frame larger). ``quiet(gauges, t)`` says from those numbers alone
    that ``evaluate(w, t)`` would return nothing: the engine then does not call
    ``evaluate``. Because the engine skips ``evaluate`` on ``quiet`` live and in every
    re-run alike, a re-check that reads the stored gauges instead of the ticks finds
    exactly what observing every tick again finds. ``quiet`` must only be True where
    ``evaluate`` finds nothing: else the gate hides what the check would have seen
    (tests/unit/test_gates.py runs every gate against its check's ``evaluate`` on real
    ticks, with the default thresholds and with others). Round a gauge that ``quiet``
    compares from below (``gauge < limit``) with ``round_up`` (one compared from above
    with ``round_down``), so that it stays short in the recording and ``quiet`` stays on
    the safe side.

    The stored gauges come back as plain tuples: ``Gate.quiet`` names them with
    ``gauges`` (this is the one place where that happens) before the check's ``quiet``
    reads them. A stored tuple of another length (gauges added since) raises
    TypeError, and a re-check then decodes those ticks. ``gauges`` None: the check's
    ``quiet`` takes them as ``measure`` gave them, or as stored (a plain tuple).

    ``restate(was, now)`` (optional), for a check loud for long stretches whose
    observations change with its limits only in ways the stored ones tell (drbd_peer:
    a disconnected peer's severity): given the recorded thresholds and the new ones, a
    ``Restate``, ``(seen, gauges) ->`` what ``evaluate(w, now)`` returns at a tick
    where ``evaluate(w, was)`` returned ``seen`` (None where it cannot tell), or None
    when no tick can be restated so. A re-check then reads the stored observations
    instead of decoding the ticks (reuse.py); tests/unit/test_gates.py holds it to
    ``evaluate`` on real ticks for every pair of thresholds it tries."""

    __slots__ = ("_quiet", "_restate", "gauges", "measure")
    measure: Callable[[Window], G]
    gauges: type[G] | None
    _quiet: Callable[[G, T], bool]
    _restate: Callable[[T, T], Restate[G] | None] | None

    def __init__(self, measure: Callable[[Window], G], quiet: Callable[[G, T], bool],
                 gauges: type[G] | None = None,
                 restate: Callable[[T, T], Restate[G] | None] | None = None) -> None:
        if gauges is not None and not hasattr(gauges, "_make"):
            raise TypeError(f"Gate(gauges=...) takes a typing.NamedTuple class, not {gauges!r}")
        _set(self, "measure", measure)
        _set(self, "gauges", gauges)
        _set(self, "_quiet", quiet)
        _set(self, "_restate", restate)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Gate is read-only (not even {name!r} can be set)")

    def quiet(self, g: Gauges, t: T) -> bool:
        """The check's ``quiet`` on ``g``: what ``measure`` gave, or a tick's gauges as the
        recording stored them (a plain tuple, named here)."""
        named = self.gauges
        if named is not None and type(g) is not named:
            g = named._make(g)  # type: ignore[attr-defined]
        return self._quiet(cast("G", g), t)

    def restater(self, was: T, now: T) -> Restate[Gauges] | None:
        """The check's ``restate(was, now)`` (None without one), taking the gauges as
        ``quiet`` does."""
        got = self._restate(was, now) if self._restate is not None else None
        named = self.gauges
        if got is None or named is None:
            return cast("Restate[Gauges] | None", got)
        make, at = named._make, got  # type: ignore[attr-defined]
        return lambda seen, g: at(seen, g if type(g) is named else make(g))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by its arguments: setattr refuses
        return Gate, (self.measure, self._quiet, self.gauges, self._restate)

    def __repr__(self) -> str:
        what = self.gauges.__name__ if self.gauges is not None else "unnamed"
        return f"Gate({self.measure.__qualname__}, {self._quiet.__qualname__}, gauges={what})"


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
    explains: tuple[Explains, ...] = ()
    """Which other checks' findings this check's findings can explain, where and why
    (replmon/model/incidents.py): findings linked so form one incident under its root."""
    reads: tuple[str, ...] | None = None
    """The parts of a node's tick the check reads, from any tick of its window
    (``replmon.model.parts.PARTS``: "mysql", "rates.drbd", ...); None: all of them. A
    check with a long window that names them lets the engine keep only the parts the
    long checks name of the ticks older than what the checks without ``reads`` look at
    (a tick is ~36 KB, most of it counters and rates: 300 s of whole ticks at 5 s hold
    2.2 MB per pair, 440 MB at 200 pairs). Reading a part no check named raises
    DroppedPartError (the engine shows a "check failed" finding); one that another
    check named is kept, so tests/unit/test_check_reads.py runs every check on ticks
    thinned to its own list."""

    gate: Gate[T, Any] | None = None
    """The check's quick test (``Gate``); None: ``evaluate`` runs every tick, and a
    re-check with other thresholds decodes every tick for it."""
    service: str | None = None
    """The service ("mysql", "redis", "drbd") whose direction the check judges: each
    tick of its window has that service's primary as ``primary`` (``Tick.oriented``:
    Redis under Sentinel may have failed over while MySQL stayed). None: the pair's
    (the first service's); a check that reads several services orients the others
    itself (``w.last.oriented("redis")``)."""

    def __post_init__(self) -> None:
        if self.reads is not None:
            kept_parts(self.reads)  # an unknown part name is the author's error, at load


def span_ticks(seconds: float, interval: float, min_samples: int = 1) -> int:
    """Ticks that cover ``seconds`` at ``interval`` (at least ``min_samples``): a check's
    window, a stall, a median's span. The engine and ``Window.span`` both use it."""
    return max(min_samples, round(seconds / interval))


class Window:
    """Recent ticks, oldest first; ``last`` is the tick being judged. Read-only: the
    checks of a tick share one window, so nothing of it can be changed (its attributes,
    its ``ticks`` and ``series``: tuples here, the engine's lists raise on any change)."""

    __slots__ = ("_pair", "last", "ticks")
    ticks: Sequence[Tick]
    """The window's ticks, oldest first."""
    last: Tick
    """The tick being judged (``ticks[-1]``)."""
    _pair: PairView | None

    def __init__(self, ticks: Iterable[Tick]) -> None:
        kept = tuple(ticks)
        if not kept:
            raise ValueError("a window holds at least one tick")
        _set(self, "ticks", kept)
        _set(self, "last", kept[-1])
        _set(self, "_pair", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Window is read-only (not even {name!r} can be set): the "
                             "checks of a tick share it")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Window is read-only (not even {name!r} can be deleted)")

    @property
    def pair(self) -> PairView:
        """The pair view: what both nodes' samples at the last tick say together, which
        several checks need (each node's newest binlog reading, the replica's channel
        from the primary, the clocks' offset): worked out once per tick and shared
        (``replmon.pair``)."""
        view = self._pair
        if view is None:
            view = PairView(self.ticks)
            _set(self, "_pair", view)
        return view

    def __len__(self) -> int:
        return len(self.ticks)

    def __iter__(self) -> Iterator[Tick]:
        return iter(self.ticks)

    def tail(self, n: int) -> Sequence[Tick]:
        """The last ``n`` ticks (fewer at the start of a session)."""
        return self.ticks[-n:]

    def start_within(self, seconds: float) -> int:
        """Index of the oldest tick at most ``seconds`` older than the last
        (``last.wall - tick.wall <= seconds``); ticks' walls only grow."""
        ticks, last = self.ticks, self.last
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
        tick = self.last if back == 0 else self.ticks[-1 - back]
        return getattr(tick, role)  # type: ignore[no-any-return]

    def span(self, seconds: float, min_samples: int = 1) -> int:
        """The number of ticks that covers ``seconds`` at this window's interval (at
        least ``min_samples``): what a check passes to ``series``/``tail`` so that a
        duration means the same at --interval 0.2 and 5."""
        return span_ticks(seconds, self.last.interval, min_samples)

    def series(self, role: Role, get: Callable[[NodeTick], V],
               n: int | None = None) -> Sequence[V]:
        """``get`` applied to ``role`` over the last ``n`` ticks (all by default), oldest
        first, read-only. ``get`` must be pure (the same node, the same value): the
        engine computes it once per tick and keeps the values from tick to tick, so a
        fresh lambda per call costs what a module-level function does."""
        ticks = self.ticks if n is None or n >= len(self.ticks) else self.ticks[-n:]
        return tuple([get(getattr(t, role)) for t in ticks])


def round_up(value: float | None, digits: int = 3) -> float | None:
    """``value`` rounded up (toward +infinity) to ``digits`` significant digits:
    1234.5 -> 1240.0, 0.01231 -> 0.0124, -2.345 -> -2.34. A gauge compared as ``gauge <
    limit`` is short in the recording and never smaller than the value it stands for.
    Arithmetic only (~0.4 us a call, ``bench/bench_checks.py --gates``; ``math.floor``
    ~0.1 us): a gated check rounds its gauges every tick."""
    if value is None or value == 0 or not math.isfinite(value):
        return value
    places = digits - 1 - math.floor(math.log10(abs(value)))
    if places > 0:  # k / 10**places: the float nearest a short decimal (its repr is short)
        scale = 10.0 ** places
        k = math.ceil(value * scale)
        out = k / scale
        return out if out >= value else (k + 1) / scale  # the product rounded down
    step = 10.0 ** -places
    k = math.ceil(value / step)
    out = k * step
    return float(out if out >= value else (k + 1) * step)


def round_down(value: float | None, digits: int = 3) -> float | None:
    """``value`` rounded down (toward -infinity) to ``digits`` significant digits: for a
    gauge that ``quiet`` compares from above (``gauge >= limit``)."""
    got = round_up(None if value is None else -value, digits)
    return None if got is None else -got




GATE_LEVELS = (1.0, 10.0, 100.0)
"""Loads (per second) at which a gate keeps the lowest ratio of the series at or above
it (``quiet_by_level``): one "lowest ratio" of all series would stay loud while any
series is nearly idle (a few statements a second, no rows)."""


class LevelGauges(NamedTuple):
    """The gauges of a check that judges a ratio of series under load (stmt_vs_rows,
    throughput_collapse), for ``quiet_by_level``."""

    top: float | None
    """The highest load of a series judged, /s, rounded up (0 without one)."""
    lowest_from_1: float | None
    """The lowest ratio of a series with a load of at least GATE_LEVELS[0] (1/s),
    rounded down; None without one."""
    lowest_from_10: float | None
    """... of at least GATE_LEVELS[1] (10/s)."""
    lowest_from_100: float | None
    """... of at least GATE_LEVELS[2] (100/s)."""


def quiet_by_level(g: LevelGauges, floor: float, limit: float) -> bool:
    """Quiet for ``g``: when the highest load is below ``floor`` (no series is judged),
    or when the lowest ratio at the highest level not above ``floor`` is at least
    ``limit`` (every series judged, at ``floor`` or more, is among them). Not quiet for
    a ``floor`` below the first level that the highest load reaches, nor for a NaN
    floor (stmt_vs_rows, throughput_collapse)."""
    top, lows = g.top, g[1:]
    if top is not None and top < floor:
        return True
    for level, low in reversed(list(zip(GATE_LEVELS, lows, strict=True))):
        if level <= floor:
            return low is None or low >= limit
    return False


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
