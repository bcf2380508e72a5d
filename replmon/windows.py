"""The engine's windows: the ticks each check sees, and the columns ``Window.series``
reads from.

Every check has its own window (``Check.window`` seconds); the engine keeps one list of
ticks per window length, one append and one delete a tick (a fresh slice per window and
tick would copy 500 references and touch as many ticks, most of them long out of the
CPU's caches), and hands every check of that length the same ``EngineWindow``.

A check asks ``w.series(role, get)`` every tick for its whole window; computed afresh,
a 300-tick window costs 300 getter calls per tick. An ``EngineWindow`` answers from a
``SeriesCache`` instead: one column per (role, what the getter computes), which gains
one value per tick. What a getter computes is ``getter_key``: its code and the values it
closes over, so a check written the plain way, with a fresh lambda per call, finds the
column the previous tick's copy filled.

None of this is the check authors' API (``replmon.check`` is): a check reads the same
values from a plain ``Window`` as from the engine's. The tick lists and columns it hands
out are ``ReadOnlyList``: a list whose mutation raises, so a check cannot change what the
next check, or the next tick, reads.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from types import FunctionType
from typing import Any, NoReturn, TypeVar, cast

from replmon.check import Window
from replmon.model.base import SourceState
from replmon.model.packed import pack
from replmon.model.parts import kept_parts, thin
from replmon.model.tick import NodeTick, Role, Tick
from replmon.pair import BinlogMarks, PairView, lag_clock

V = TypeVar("V")

PRUNE_EVERY = 64
"""Ticks between two prunes of the series cache."""


class ReadOnlyList(list[V]):
    """A list that checks can read but not change: every mutating method raises
    TypeError. Reading is a list's own (C) code; a slice is a new, plain list. Its owner
    in this module changes it through ``list``'s own methods."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a window's ticks and series are read-only: a check must not "
                        "change what the other checks read")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


_append = list.append
_extend = list.extend
_setitem = list.__setitem__
_delitem = list.__delitem__


_set = object.__setattr__  # how the owner sets a Window's attributes (Window refuses)
_OK = SourceState.OK


class EngineWindow(Window):
    """The engine's Window of one length: its kept tick list as is (no copy), ``series``
    from the engine's columns. One per length for the whole feed, moved on by each tick
    (``Windows.add``)."""

    __slots__ = ("_cache", "_marks")
    _cache: SeriesCache
    _marks: BinlogMarks | None

    def __init__(self, ticks: ReadOnlyList[Tick], cache: SeriesCache,
                 marks: BinlogMarks | None = None) -> None:
        """``marks``: the windows' binlog marks (None: the pair view looks back for the
        newest readings, as a plain Window's does)."""
        # not Window.__init__, which copies the ticks into a tuple; ``last`` comes with
        # the first tick (``Windows.add``)
        _set(self, "ticks", ticks)
        _set(self, "_pair", None)
        _set(self, "_cache", cache)
        _set(self, "_marks", marks)
        if ticks:
            _set(self, "last", ticks[-1])

    @property
    def pair(self) -> PairView:
        """As ``Window.pair``, the newest binlog readings taken from the marks."""
        view = self._pair
        if view is None:
            marks = self._marks
            view = PairView(self.ticks, None if marks is None else marks.newest(len(self.ticks)),
                            self._clocks)
            _set(self, "_pair", view)
        return view

    def _clocks(self, role: Role) -> Sequence[tuple[float, float] | None]:
        """``role``'s clock reading of every tick (the true lag's clock offset), kept as a
        series column: one reading worked out per tick, not 30."""
        return self.series(role, lag_clock)

    def series(self, role: Role, get: Callable[[NodeTick], V],
               n: int | None = None) -> Sequence[V]:
        ticks, last, cache = self.ticks, self.last, self._cache
        try:
            col = cache.by_getter[role].get(get)
        except (KeyError, TypeError):  # a new role, or an unhashable callable
            col = None
        if col is None:
            col = cache.column(get, role)
            if col is None:  # not cacheable: computed afresh
                fresh = tuple([get(getattr(t, role)) for t in ticks])
                return fresh if n is None or n >= len(fresh) else fresh[-n:]
        vals, size = col.vals, len(ticks)
        if size > col.keep:
            col.keep = size
        if size > 1 and ticks[-2].seq == col.last_seq and len(vals) >= size - 1:
            _append(vals, get(getattr(last, role)))  # the usual case: one tick more
            if len(vals) > col.keep:  # one value more than the longest window: a memmove
                _delitem(vals, 0)
        elif last.seq != col.last_seq or len(vals) < size:  # (else: asked in this tick)
            cache.fill(col, get, role, ticks)
        col.last_seq = last.seq
        if n is not None and n < size:
            size = n
        return vals if len(vals) == size else tuple(vals[-size:])  # whole: no copy


class Thinner:
    """``thin`` for the feeds of one engine: a tick that several feeds thin to the same
    parts in the same tick (the pair's, MySQL's, Redis's and DRBD's feeds hold the same
    tick objects while each service's primary is the pair's) is copied once, and every
    feed keeps that one copy. Remembers the last tick only, until ``forget``.

    With ``packed``, the copy's kept parts are bytes until read (``replmon.model.packed``:
    a live command's engine, which holds its windows for hours; a re-run's engines are
    short-lived and pay ~60 µs a tick less)."""

    __slots__ = ("_tick", "_keep", "_out", "_packed")

    def __init__(self, packed: bool = False) -> None:
        self._tick: Tick | None = None
        self._keep: frozenset[str] = frozenset()
        self._out: Tick | None = None
        self._packed = packed

    def __call__(self, tick: Tick, keep: frozenset[str]) -> Tick:
        if tick is self._tick and keep == self._keep and self._out is not None:
            return self._out
        out = thin(tick, keep)
        if self._packed:
            out = pack(out)
        self._out = out
        self._tick, self._keep = tick, keep
        return out

    def forget(self) -> None:
        """Let go of the last tick (a whole one, which no window holds any more)."""
        self._tick = self._out = None


class Windows:
    """The engine's windows of one feed: for each window length the last ticks, one
    ``EngineWindow`` on them, and the columns their ``series`` share.

    Thinning (``plan``'s ``whole`` and ``keep``): the last ``whole`` ticks stay whole;
    an older tick, which only the windows of checks that name their ``reads`` still
    hold, is replaced in every window by its copy with only the parts in ``keep``
    (``replmon.model.parts.thin`` through ``thinner``, once per tick, and once for
    the feeds that share it), and the whole tick is freed."""

    def __init__(self, thinner: Thinner | None = None) -> None:
        self._thinner = thinner or Thinner()
        self.by_length: dict[int, EngineWindow] = {}
        """Window length in ticks -> its window."""
        self._kept: list[tuple[int, ReadOnlyList[Tick], EngineWindow]] = []
        """(length, its ticks, its window) for each length, longest first."""
        self._cache = SeriesCache()
        self._marks = BinlogMarks()
        self._seq = -1
        """Seq of the last tick added."""
        self._whole: int | None = None
        """Ticks kept whole at the end of the windows (None: every tick)."""
        self._keep: frozenset[str] = frozenset()
        """The parts kept of older ticks."""

    @property
    def ticks(self) -> Sequence[Tick]:
        """The longest window's ticks, oldest first (older ones thinned)."""
        return self._kept[0][1] if self._kept else ()

    def plan(self, lengths: Iterable[int], ticks: Sequence[Tick], whole: int | None = None,
             keep: Iterable[str] = ()) -> None:
        """Keep windows of these lengths from now on, filled from ``ticks`` (the newest
        ticks seen, oldest first); with ``whole``, only the last ``whole`` ticks whole and
        the parts in ``keep`` of older ones. After a thinning plan, only the ticks still
        whole carry over to the next plan (a thinned tick lacks what a new plan may
        need)."""
        lengths = sorted(set(lengths), reverse=True)
        if self._whole is not None:
            ticks = ticks[-self._whole:] if self._whole else ()
        if whole is not None and (not lengths or lengths[0] <= whole):
            whole = None  # no window is longer than the whole ticks: nothing to thin
        self._whole, self._keep = whole, kept_parts(keep)
        self.by_length = {n: EngineWindow(ReadOnlyList(ticks[-n:]), self._cache, self._marks)
                          for n in lengths}
        self._kept = [(n, cast("ReadOnlyList[Tick]", w.ticks), w)
                      for n, w in self.by_length.items()]
        self._marks.refill(self._kept[0][1] if self._kept else ())
        if whole is not None and self._kept:
            for back in range(whole + 1, len(self._kept[0][1]) + 1):
                self._thin(back)

    def _thin(self, back: int) -> None:
        """Thin the tick ``back`` places from the end of every window that holds it."""
        tick = self._thinner(self._kept[0][1][-back], self._keep)
        for _, view, _ in self._kept:
            if len(view) < back:
                break  # (longest first)
            _setitem(view, -back, tick)

    def add(self, tick: Tick) -> dict[int, EngineWindow]:
        """``tick`` added to every window: each length's window for this tick, its pair
        view not made yet. A tick whose seq does not follow the last one's starts a new
        feed: the columns are cleared (their values are not its)."""
        if tick.seq <= self._seq:
            self._cache.clear()
        self._seq = tick.seq
        self._marks.add(tick)  # (before thinning: the tick is whole)
        append, delete, set_ = _append, _delitem, _set
        for n, view, w in self._kept:
            append(view, tick)
            if len(view) > n:
                delete(view, 0)
            set_(w, "last", tick)
            if w._pair is not None:
                set_(w, "_pair", None)  # a new tick, a new pair view
        whole = self._whole
        if whole is not None and len(self._kept[0][1]) > whole:
            self._thin(whole + 1)  # the tick that just left the whole ones
        return self.by_length

    def done(self, tick: Tick) -> None:
        """Every check has read ``tick``'s windows (the columns' pruning runs)."""
        self._cache.prune(tick.seq)

    def clear(self) -> None:
        """Forget every tick (not the lengths, nor what is kept whole)."""
        self._cache.clear()
        self._marks.refill(())
        self._seq = -1
        for _, view, _ in self._kept:
            _delitem(view, slice(None))


class _Column:
    __slots__ = ("getter", "keep", "last_seq", "vals")

    def __init__(self, getter: object) -> None:
        self.getter = getter
        """The first getter object seen for this column (found by identity after)."""
        self.last_seq = -1
        self.keep = 1
        """The longest window that asked for this column."""
        self.vals: ReadOnlyList[Any] = ReadOnlyList()


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
    as the column itself (read-only) or a slice of it.

    A column per (role, what the getter computes) holds the values of consecutive ticks,
    newest last. Ticks are told apart by seq, which only grows within one feed (the
    engine clears the cache when it does not); columns no check asked for in the last
    ``PRUNE_EVERY`` ticks are dropped (at most twice that after their last use)."""

    def __init__(self) -> None:
        self._cols: dict[str, dict[Hashable, _Column]] = {"primary": {}, "replica": {}}
        self.by_getter: dict[str, dict[object, _Column]] = {"primary": {}, "replica": {}}
        """The column of a getter object seen before (a module-level function): one
        identity lookup instead of its key."""
        self._ticks = 0
        """Ticks since the last prune."""
        self._pruned_at = -1
        """Seq of the last prune's tick."""

    def column(self, get: Callable[[NodeTick], object], role: str) -> _Column | None:
        """The column for what ``get`` computes (made when new); None: not cacheable."""
        if role not in self._cols:
            self._cols[role], self.by_getter[role] = {}, {}
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
            self.by_getter[role][get] = col
        return col

    @staticmethod
    def fill(col: _Column, get: Callable[[NodeTick], object], role: str,
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
            _setitem(vals, slice(None), [get(getattr(t, role)) for t in ticks])  # new, or a gap
        elif new:
            _extend(vals, [get(getattr(t, role)) for t in ticks[old:]])
        if len(vals) > col.keep:
            _delitem(vals, slice(None, -col.keep))

    def prune(self, seq: int) -> None:
        """After tick ``seq``: every ``PRUNE_EVERY`` ticks, forget the columns not asked
        for since the previous prune (a disk that went away). A column asked for only on
        some ticks (a reading taken every other tick) stays: dropping it would cost its
        whole window again when next asked. Memory only: a column skipped for some ticks
        is filled in when asked again (``fill``), so it never has a hole."""
        self._ticks += 1
        if self._ticks < PRUNE_EVERY:
            return
        self._ticks = 0
        since, self._pruned_at = self._pruned_at, seq
        for by_key in (*self._cols.values(), *self.by_getter.values()):
            for k in [k for k, c in by_key.items() if c.last_seq < since]:
                del by_key[k]

    def clear(self) -> None:
        for by_key in (*self._cols.values(), *self.by_getter.values()):
            by_key.clear()
        self._ticks = 0
        self._pruned_at = -1
