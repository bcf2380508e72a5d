"""A thinned tick's kept parts held as bytes: what a live engine keeps of a tick older
than the last minute.

A thinned tick (``replmon.model.parts.thin``) still holds its kept samples and rates as
records: the Redis sample and its counters (~60 Python objects a node), the MySQL
samples, the DRBD states, the rates, each object a small block of Python's allocator,
kept four minutes after the whole tick went. Nearly nothing reads them there: a check
reads an old tick through its window's series columns, computed when the tick was new,
and reads a kept part again only to fill a column first asked for later (a DRBD link
that appeared) or to walk back through a resync or a lag. ``pack`` replaces each kept
part by a ``PackedPart``: its record's field values as one msgpack array (a Redis sample
~600 bytes, a replica's MySQL sample ~1,100, a DRBD one ~180), decoded again when
something reads it. What the engine and the true lag's tracker hold after 900 of the
lab's ticks (``bench/bench_memory.py held``): 4,405 KiB in 59,886 blocks at 1 s with
MySQL's samples kept as records, 4,125 KiB in 47,585 now (of which the last minute's
whole ticks are ~30,000 blocks); at 5 s (a fleet's pair) 942 -> 900 KiB. The true lag's
tracker (``replmon.truelag``) keeps of its older ticks only the primary's binlog reading,
packed. Packing costs ~8 µs a part, ~7 parts a tick; a re-run's short-lived engines do
not pack.

Not compressed: deflating each part with a dictionary of its class's first records made
them 4-8 times smaller (3,159 KiB held at 1 s; ``replmon record`` 0.4-0.9 MB lower), but
not flatter after minute 5, and in one of two hour-long runs glibc's heap crept +560 KiB
from minute 5 to 62 against +100 without it (in the other both gained ~+190): zlib takes
its state and a 32 KiB output buffer from glibc's heap for every part, ~7 a tick
(docs/benchmarks.md, 2026-12-07, evening, #56).

A ``PackedPart`` reads like its record (an attribute, a method, ``==``); the last one
opened is kept decoded, so a getter that reads several fields of one part decodes it
once. What the record held as a ``DroppedPart`` (a Redis sample's counters, when no long
check names them) is a DroppedPart again when opened, and still raises on a read.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from replmon.model.mysql import MysqlSample
from replmon.model.parts import SAMPLES, DroppedPart
from replmon.model.tick import NodeTick, Tick

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
    get = operator.attrgetter(*names)
    return names, msgspec.msgpack.Decoder(row), (get if len(names) > 1 else lambda r: (get(r),))


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
        _setattr(self, "_blob", _ENCODE(values))
        _setattr(self, "_cls", cls)
        _setattr(self, "_drops", drops)
        peek = PEEK.get(cls)
        if peek is None:
            _setattr(self, "_nones", _NO_NONES)
        else:
            nones = frozenset([f for f in peek if getattr(record, f) is None])
            _setattr(self, "_nones", _SHARED.setdefault(nones, nones))

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


def _pack(value: Any) -> Any:
    """``value`` packed when it is a record (None, a DroppedPart or a packed part: as is)."""
    if value is None or type(value) is DroppedPart or type(value) is PackedPart:
        return value
    return PackedPart(value)


def _pack_node(node: NodeTick) -> NodeTick:
    changes: dict[str, Any] = {k: _pack(getattr(node, k)) for k in PACKED}
    rates = node.rates
    kept_rates = {k: _pack(v) for k in SAMPLES if type(v := getattr(rates, k)) is not DroppedPart}
    if kept_rates:
        changes["rates"] = type(rates)._replace(rates, kept_rates)
    out: NodeTick = NodeTick._replace(node, changes)
    return out


def pack(tick: Tick) -> Tick:
    """A copy of ``tick`` (a thinned one: ``thin``) whose nodes' samples and rates are
    ``PackedPart``s; what was dropped stays a DroppedPart, None stays None. The tick's
    and the nodes' own fields (seq, wall, roles, names) are as they were."""
    out: Tick = Tick._replace(tick, {"primary": _pack_node(tick.primary),
                                     "replica": _pack_node(tick.replica)})
    return out
