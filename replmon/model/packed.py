"""A thinned tick held as bytes: what a live engine, and the true lag's tracker, keep of
a tick older than the last minute.

A thinned tick (``replmon.model.parts.thin``) still holds its kept samples and rates as
records: the Redis sample and its counters (~60 Python objects a node), the MySQL
samples, the DRBD states, the rates, each object a small block of Python's allocator,
kept four minutes after the whole tick went. Nearly nothing reads them there: a check
reads an old tick through its window's series columns, computed when the tick was new,
and reads a kept part again only to fill a column first asked for later (a DRBD link
that appeared) or to walk back through a resync or a lag.

So a kept tick is a ``PackedTick``: one block of bytes (1-5 KiB) holding the tick's own
fields and each kept part as a ``PackedPart``'s bytes, its record's field values as one
msgpack array (a Redis sample ~600 bytes, a replica's MySQL sample ~1,100, a DRBD one
~180). Its seq and wall are read as they are; anything else opens it (unpickled into a
Tick of PackedParts), and a PackedPart decodes its record when read. First the parts
alone were bytes, in a Tick of ~45 objects: held memory fell (``bench/bench_memory.py
held``: 4,405 KiB in 59,886 blocks after 900 of the lab's ticks with MySQL's samples
as records, 4,125 KiB in 47,585), but those objects, made among the whole tick's ~700
that go 60 s later and freed 240 s after them, kept pools of the allocator partly used,
and the first turnover of the 300 s windows (minutes 5 to 10 of a session) touched new
ones (docs/benchmarks.md, #56). Packing costs ~80 µs a tick; a re-run's short-lived
engines do not pack.

Not compressed: deflating each part with a dictionary of its class's first records made
them 4-8 times smaller (3,159 KiB held at 1 s; ``replmon record`` 0.4-0.9 MB lower), but
not flatter after minute 5, and in one of two hour-long runs glibc's heap crept +560 KiB
from minute 5 to 62 against +100 without it (in the other both gained ~+190): zlib takes
its state and a 32 KiB output buffer from glibc's heap for every part, ~7 a tick
(docs/benchmarks.md, 2026-12-07, evening, #56).

A ``PackedPart`` reads like its record (an attribute, a method, ``==``), a
``PackedTick`` like its tick; the last one of each opened is kept decoded, so a getter
that reads several fields of one part, or a walk that reads several of one tick, decodes
it once. What the record held as a ``DroppedPart`` (a Redis sample's counters, when no
long check names them) is that DroppedPart again when opened, and still raises on a
read.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import operator
import pickle
import struct as struct_
import threading
import typing
from array import array
from collections.abc import Callable
from typing import Any, NoReturn

import msgspec

from replmon.model.mysql import MysqlSample
from replmon.model.parts import SAMPLES, DroppedPart
from replmon.model.tick import NodeRates, NodeTick, Tick

_setattr = object.__setattr__
_ENCODE = msgspec.msgpack.Encoder().encode

opened = 0
"""PackedParts decoded so far (benches and tests: how often old parts are read again)."""


@functools.cache
def _layout(cls: Any) -> tuple[tuple[str, ...], msgspec.msgpack.Decoder[Any],
                               Callable[[Any], tuple[Any, ...]]]:
    """``cls``'s fields in order, the decoder of their values packed as an array (a
    record's own encoding is a map: its field names in every blob, half its bytes), and
    a getter of those values as a tuple (``operator.attrgetter``: one C call a record)."""
    hints = typing.get_type_hints(cls)
    names = tuple(f.name for f in dataclasses.fields(cls))
    row = msgspec.defstruct(f"{cls.__name__}Row", [(n, hints[n]) for n in names],
                            array_like=True)
    return names, msgspec.msgpack.Decoder(row), _getter(names)


@functools.cache
def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A getter of these fields' values as a tuple (``operator.attrgetter``: one C call a
    record)."""
    get = operator.attrgetter(*names)
    return get if len(names) > 1 else lambda r: (get(r),)


@functools.cache
def _defaults(cls: Any) -> dict[str, Any]:
    """Field -> a value of its type that stands for a DroppedPart while the record is
    encoded (its default)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


_SHARED: dict[Any, Any] = {}
"""Each distinct drops tuple and set of None fields seen (``PackedPart._drops`` and
``_nones``), so that the parts of every tick share one (a drops tuple is 4 small objects
a part, kept with its tick for 300 s). Bounded: the fields a record has that can be
dropped or peeked, in the few combinations an engine's plan makes."""


PEEK: dict[type, tuple[str, ...]] = {MysqlSample: ("binlog",)}
"""Fields of a record that a walk back through old ticks tests for None, kept as that
fact beside the bytes: pair_lag's history steps over the ticks without a binlog reading
(``positions_every``: one in two) without decoding their MySQL samples."""

_NO_NONES: frozenset[str] = frozenset()


def _part_state(record: Any) -> tuple[Any, bytes, tuple[tuple[str, DroppedPart], ...],
                                      frozenset[str]]:
    """What a PackedPart of ``record`` holds: its class, its field values as msgpack (a
    DroppedPart as the field's default), the fields that were DroppedParts, and which of
    its ``PEEK`` fields are None."""
    cls: Any = type(record)
    names, _, get = _layout(cls)
    values = get(record)
    drops: tuple[tuple[str, DroppedPart], ...] = ()
    if DroppedPart in map(type, values):  # (a scan in C: most parts drop nothing)
        drops = tuple((f, v) for f, v in zip(names, values, strict=True)
                      if type(v) is DroppedPart)
        drops = _SHARED.setdefault(drops, drops)  # one tuple for every part so thinned
        defaults = _defaults(cls)
        values = tuple([defaults[f] if type(v) is DroppedPart else v
                        for f, v in zip(names, values, strict=True)])
    peek = PEEK.get(cls)
    nones = _NO_NONES
    if peek is not None:
        nones = frozenset([f for f in peek if getattr(record, f) is None])
        nones = _SHARED.setdefault(nones, nones)
    return cls, _ENCODE(values), drops, nones


class PackedPart:
    """A record held as msgpack bytes until read: any attribute of the record (a field,
    a method) is read from it decoded."""

    __slots__ = ("_blob", "_cls", "_drops", "_nones")
    _blob: bytes
    _cls: Any
    _drops: tuple[tuple[str, DroppedPart], ...]
    """The record's fields that were DroppedParts (encoded as their defaults)."""
    _nones: frozenset[str]
    """Of the record's ``PEEK`` fields, those that are None: read without decoding."""

    def __init__(self, record: Any) -> None:
        cls, blob, drops, nones = _part_state(record)
        _setattr(self, "_blob", blob)
        _setattr(self, "_cls", cls)
        _setattr(self, "_drops", drops)
        _setattr(self, "_nones", nones)

    def open(self) -> Any:
        """The record, decoded (the same object again while no other part was opened)."""
        global _last, opened
        last = _last  # (one read: another thread may open another part meanwhile)
        if last[0] is self:
            return last[1]
        names, decoder, _ = _layout(self._cls)
        row = decoder.decode(self._blob)
        record = object.__new__(self._cls)
        for f in names:
            _setattr(record, f, getattr(row, f))
        for f, dropped in self._drops:
            _setattr(record, f, dropped)
        opened += 1
        _last = (self, record)
        return record

    def __getattr__(self, name: str) -> Any:
        if name in self._nones:
            return None
        if name.startswith("__"):  # introspection (copy, pickle, hasattr): not a field
            raise AttributeError(name)
        return getattr(self.open(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self._cls.__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedPart):
            other = other.open()
        return bool(self.open() == other)

    __hash__ = None  # type: ignore[assignment]  # as the records' (eq, not hashed)

    def __repr__(self) -> str:
        return f"PackedPart({self.open()!r})"

    @property
    def nbytes(self) -> int:
        return len(self._blob)


_last: tuple[PackedPart | None, Any] = (None, None)

PACKED = ("host", "drbd", "mysql", "redis")
"""The samples packed (every kind's rates are): all of them."""


# --- a thinned tick as one block ----------------------------------------------------

_CLASSES: list[Any] = []
"""The record classes packed ticks hold, by the index their bytes name them with."""
_CLASS_AT: dict[Any, int] = {}
_SHARED_OBJS: list[Any] = []
"""Objects every packed tick shares (DroppedParts, ``_SHARED``'s tuples and sets), by
the index their bytes name them with: one object again when opened, not a copy a tick.
Kept here, so an id is never reused. Bounded as ``_SHARED`` is."""
_SHARED_AT: dict[int, int] = {}


def _index(obj: Any, table: list[Any], at: dict[Any, int], key: Any) -> int:
    i = at.get(key)
    if i is None:
        i = at[key] = len(table)
        table.append(obj)
    return i


def _record(i: int, values: tuple[Any, ...]) -> Any:
    """A record of class ``_CLASSES[i]`` with ``values`` (unvalidated: they were its own)."""
    cls = _CLASSES[i]
    out = object.__new__(cls)
    for f, v in zip(cls._field_names, values, strict=True):
        _setattr(out, f, v)
    return out


def _shared(i: int) -> Any:
    return _SHARED_OBJS[i]


def _part(cls: int, blob: bytes, drops: int, nones: int) -> PackedPart:
    out = object.__new__(PackedPart)
    _setattr(out, "_blob", blob)
    _setattr(out, "_cls", _CLASSES[cls])
    _setattr(out, "_drops", _SHARED_OBJS[drops])
    _setattr(out, "_nones", _SHARED_OBJS[nones])
    return out


class _Pickler(pickle.Pickler):
    """pickle, with a record as its class's index and its values (no field names, no
    module path), a shared object as its index, a PackedPart as its bytes."""

    def reducer_override(self, obj: Any) -> Any:
        t = type(obj)
        if t is DroppedPart:
            return _shared, (_index(obj, _SHARED_OBJS, _SHARED_AT, id(obj)),)
        if t in _PART_CLASSES:  # a node's sample or rates: as a PackedPart's bytes
            cls, blob, drops, nones = _part_state(obj)
        elif t is PackedPart:  # (the true lag's reading: packed already)
            cls, blob, drops, nones = obj._cls, obj._blob, obj._drops, obj._nones
        elif hasattr(t, "_field_names") and not isinstance(obj, type):  # another record
            return _record, (_index(t, _CLASSES, _CLASS_AT, t), _getter(t._field_names)(obj))
        else:
            return NotImplemented
        return _part, (_index(cls, _CLASSES, _CLASS_AT, cls), blob,
                       _index(drops, _SHARED_OBJS, _SHARED_AT, id(drops)),
                       _index(nones, _SHARED_OBJS, _SHARED_AT, id(nones)))


SEGMENT = 32 * 1024
"""Bytes of one segment of a ``_Store``: ~6 of a live engine's kept ticks, ~25 of the true
lag's."""


class _Store:
    """Where the packed ticks' bytes live: segments of SEGMENT bytes, each filled in turn
    and used again once every tick in it has gone (a tick's handle counts it out when
    freed). The ticks go in the order they came, give or take a window's length, so a
    segment empties a few minutes after it filled: the same few dozen segments from the
    first turnover on, where a block of its own a tick left glibc's heap with holes the
    next tick's block did not fit (docs/benchmarks.md, #56)."""

    __slots__ = ("free", "head", "live", "lock", "released", "segments", "used")

    def __init__(self) -> None:
        self.segments: list[bytearray] = []
        self.live = array("l")
        """Each segment's ticks not yet freed."""
        self.free: list[int] = []
        """Segments with none (to fill again)."""
        self.head = -1
        """The segment being filled."""
        self.used = 0
        """Its bytes filled."""
        self.released: list[int] = []
        """The segment of each handle freed since the last ``put``: its ``__del__`` only
        appends here (it may run in any thread, at any allocation); ``put`` counts them out."""
        self.lock = threading.Lock()

    def put(self, data: memoryview) -> tuple[int, int]:
        """``data`` copied into a segment: (the segment, the offset)."""
        n = len(data)
        with self.lock:
            released, live = self.released, self.live
            while released:
                i = released.pop()
                live[i] -= 1
                if live[i] == 0 and i != self.head:
                    self._drop(i)
            if self.head < 0 or self.used + n > len(self.segments[self.head]):
                if self.head >= 0 and live[self.head] == 0:
                    self._drop(self.head)
                self.head, self.used = self._take(n), 0
            off = self.used
            self.segments[self.head][off:off + n] = data
            self.used += n
            live[self.head] += 1
            return self.head, off

    def _take(self, n: int) -> int:
        if n <= SEGMENT and self.free:
            return self.free.pop()
        self.segments.append(bytearray(max(n, SEGMENT)))
        self.live.append(0)
        return len(self.segments) - 1

    def _drop(self, i: int) -> None:
        if len(self.segments[i]) == SEGMENT:
            self.free.append(i)
        else:  # a tick bigger than a segment had one of its own: let it go
            self.segments[i] = bytearray()


STORES = (_Store(), _Store())
"""The engines' windows' ticks, the true lag trackers' ticks: each store's ticks live as
long, so its segments empty in the order they filled."""
ENGINES, LAGS = 0, 1
_RELEASED = tuple(s.released for s in STORES)
_HANDLE = struct_.Struct("<BIIIqd")
"""A packed tick's own bytes: its store, segment, offset and length, its seq and wall."""


class PackedTick(bytes):
    """A thinned tick, its kept parts packed (``pack``), as one block of bytes: what a
    live engine's windows and the true lag's tracker hold of a tick older than the last
    minute. ``seq`` and ``wall`` are read from its first bytes; any other attribute from
    the tick opened (unpickled; the last one opened is kept, so a walk that reads several
    fields of one tick opens it once).

    Why one block: a thinned tick as objects was ~45 small blocks of Python's allocator
    (the Tick, its nodes and rates, floats, the parts and their bytes), made as the tick
    came, among the ~700 of the whole tick that go 60 s later, and freed 240 s after
    those. Scattered so, they kept pools of the allocator partly used, and the first
    turnover of the 300 s windows (minutes 5 to 10) touched new ones
    (docs/benchmarks.md, #56). A block this size (1-5 KiB) is glibc's, one a tick."""

    __slots__ = ()

    @property
    def seq(self) -> int:
        seq: int = _HANDLE.unpack_from(self)[4]
        return seq

    @property
    def wall(self) -> float:
        wall: float = _HANDLE.unpack_from(self)[5]
        return wall

    def __del__(self, _released: tuple[list[int], ...] = _RELEASED,
                _unpack: Callable[[bytes], tuple[Any, ...]] = _HANDLE.unpack_from) -> None:
        store, seg = _unpack(self)[:2]
        _released[store].append(seg)  # (bound here: still there at exit)

    def open(self) -> Tick:
        """The tick (the same object again while no other packed tick was opened)."""
        global _last_tick
        last = _last_tick  # (one read: another thread may open another tick meanwhile)
        if last[0] is self:
            return last[1]  # type: ignore[no-any-return]
        store, seg, off, n, _, _ = _HANDLE.unpack_from(self)
        tick: Tick = pickle.loads(memoryview(STORES[store].segments[seg])[off:off + n])
        _last_tick = (self, tick)
        return tick

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # introspection (copy, pickle, hasattr): not a field
            raise AttributeError(name)
        return getattr(self.open(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedTick):
            other = other.open()
        return bool(self.open() == other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # as a Tick's

    def __reduce__(self) -> NoReturn:
        raise TypeError("a PackedTick is not pickled: its bytes name records' classes "
                        "by this process's indices")

    def __repr__(self) -> str:
        return f"PackedTick({self.open()!r})"


_last_tick: tuple[PackedTick | None, Any] = (None, None)


_PART_CLASSES = frozenset([typing.get_type_hints(NodeTick)[k] for k in PACKED]
                          + [typing.get_type_hints(NodeRates)[k] for k in SAMPLES])
"""The records a node's samples and rates are: packed as a PackedPart's bytes."""


def pack_tick(tick: Tick, store: int = ENGINES) -> PackedTick:
    """``tick`` (a thinned one: ``thin``) as one block of bytes, which opens as a copy of
    it whose nodes' samples and rates are ``PackedPart``s; what was dropped stays a
    DroppedPart, None stays None, the tick's and the nodes' own fields (seq, wall, roles,
    names) are as they were."""
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(tick)
    data = buf.getbuffer()
    seg, off = STORES[store].put(data)
    return PackedTick(_HANDLE.pack(store, seg, off, len(data), tick.seq, tick.wall))
