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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from replmon.model.base import SourceState
from replmon.model.findings import NodeRef, Number, Observation, Severity
from replmon.model.tick import NodeTick, Role, Tick

__all__ = [
    "Check", "NodeRef", "Number", "Observation", "Role", "Severity", "Thresholds", "Window",
    "baseline_drop", "fmt", "numbers", "source_ok",
]


class Thresholds(BaseModel):
    """Per-check settings; a check subclasses it with its own limits (one docstring each,
    with the unit). All of them can be set in the TOML config under ``[checks.<id>]``."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Run this check at all."""
    open_after: int = Field(default=3, ge=1)
    """Ticks the condition must hold in a row before the finding opens."""
    close_after: int = Field(default=3, ge=1)
    """Ticks the condition must be clear in a row before the finding closes."""


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
    window: int = 60
    """Ticks of history the check looks at (the engine keeps the largest of all checks)."""
    doc: str = ""
    """Filled from the module docstring by the loader."""


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

    def node(self, role: Role, back: int = 0) -> NodeTick:
        """``role``'s share of the tick ``back`` ticks before the last."""
        return getattr(self.ticks[-1 - back], role)  # type: ignore[no-any-return]

    def series(self, role: Role, get: Callable[[NodeTick], V],
               n: int | None = None) -> list[V]:
        """``get`` applied to ``role`` over the last ``n`` ticks (all by default), oldest first."""
        ticks = self.ticks if n is None else self.ticks[-n:]
        if self._cache is None:
            return [get(getattr(t, role)) for t in ticks]
        col = self._cache.column(get, role)
        out: list[V] = []
        for t in ticks:
            v = col.get(t.seq, _MISSING)
            if v is _MISSING:
                v = col[t.seq] = get(getattr(t, role))
            out.append(v)  # type: ignore[arg-type]
        return out


_MISSING = object()


class SeriesCache:
    """Values of ``Window.series`` kept from tick to tick by the engine, so a check that
    scans its whole window each tick computes each tick's value once (a 300-tick window
    otherwise costs 300 getter calls per tick). Keyed by the getter object: module-level
    functions and lambdas hit; a closure made anew on each call just misses. Ticks are
    told apart by seq, which only grows within one feed (the engine clears the cache
    when it does not)."""

    def __init__(self) -> None:
        self._cols: dict[tuple[object, str], dict[int, object]] = {}
        self._used: set[tuple[object, str]] = set()

    def column(self, get: object, role: str) -> dict[int, object]:
        key = (get, role)
        self._used.add(key)
        col = self._cols.get(key)
        if col is None:
            col = self._cols[key] = {}
        return col

    def prune(self, oldest_seq: int) -> None:
        """After a tick: forget getters not used in it and seqs that left the window."""
        for key in list(self._cols):
            if key not in self._used:
                del self._cols[key]
                continue
            col = self._cols[key]
            old = []
            for seq in col:  # insertion order = seq order: the old ones come first
                if seq >= oldest_seq:
                    break
                old.append(seq)
            for seq in old:
                del col[seq]
        self._used.clear()

    def clear(self) -> None:
        self._cols.clear()
        self._used.clear()


def baseline_drop(values: Sequence[float | None], *, min_rate: float, min_ticks: int,
                  ratio: float) -> tuple[float, float, list[int]] | None:
    """(baseline, now, indexes of the baseline values) when the last value fell below
    ``ratio`` x the median of the earlier values that were at least ``min_rate``
    (at least ``min_ticks`` of them); None otherwise. A throughput fall, judged
    against the window's own recent past, so an idle server is never "collapsed"."""
    now = values[-1] if values else None
    idx = [i for i, v in enumerate(values[:-1]) if v is not None and v >= min_rate]
    if now is None or len(idx) < min_ticks:
        return None
    before = statistics.median(values[i] or 0.0 for i in idx)
    return (before, now, idx) if now < ratio * before else None


def source_ok(node: NodeTick, kind: str) -> bool:
    return getattr(node, kind).status.state is SourceState.OK


def fmt(v: float | None, digits: int = 0) -> str:
    """Thousands separators for titles: 47240.4 -> '47,240'; None -> '?'."""
    if v is None:
        return "?"
    return f"{v:,.{digits}f}"


def numbers(**values: Any) -> dict[str, Number]:
    """Rounded numbers for a finding (floats to 3 significant decimals)."""
    out: dict[str, Number] = {}
    for k, v in values.items():
        out[k] = round(v, 3) if isinstance(v, float) else v
    return out
