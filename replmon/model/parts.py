"""The parts of a node's tick, and a tick thinned to some of them.

A tick holds both nodes' whole samples and rates: ~36 KB once built (counters,
gauges, rates by the hundred). The engine keeps each pair's last 300 s of ticks for
its longest checks: at a 5 s interval, 60 ticks, ~2.2 MB per pair, 440 MB at 200 pairs
(issue #33). Those long checks read few parts of their older ticks (the replication
channels, the DRBD states, the Redis link), so a check may name what it reads
(``Check.reads``) and the engine keeps only those parts of the ticks that no check
without such a list looks at (replmon/windows.py).

A part that was not kept is a ``DroppedPart``: reading anything of it raises
``DroppedPartError``, which names the part, so a check that reads more than it names
fails loudly (a "check failed" finding) instead of seeing an empty value.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Iterable
from typing import Any, NoReturn

import msgspec

from replmon.model.tick import NO_RATES, NodeTick, Tick, tick_from_json

_setattr = object.__setattr__

PARTS: dict[str, str] = {
    "host": "the host sample (CPU, memory, disks, NICs; tick.<role>.host)",
    "drbd": "the DRBD sample (tick.<role>.drbd)",
    "mysql": "the MySQL sample without its counters, gauges and variables (status, "
             "replication channels, binlog position, uptime, row totals)",
    "mysql.counters": "MysqlSample.counters (implies mysql)",
    "mysql.gauges": "MysqlSample.gauges (implies mysql)",
    "mysql.variables": "MysqlSample.variables (implies mysql)",
    "redis": "the Redis sample without its counters",
    "redis.counters": "RedisSample.counters (implies redis)",
    "rates.host": "tick.<role>.rates.host",
    "rates.drbd": "tick.<role>.rates.drbd",
    "rates.mysql": "tick.<role>.rates.mysql",
    "rates.redis": "tick.<role>.rates.redis",
}
"""Part name -> what it is. A tick's own fields (seq, wall, interval, ...) and each
node's role and name are always kept."""

_SUB = {"mysql": ("counters", "gauges", "variables"), "redis": ("counters",)}
"""Sample -> its dicts that are parts of their own."""


class DroppedPartError(LookupError):
    """A check read a part of an older tick that it did not name in ``Check.reads``."""


class DroppedPart:
    """Stands in a thinned tick for a part no check said it reads. Any read of it
    (an attribute, an item, iteration, truth) raises DroppedPartError."""

    __slots__ = ("part",)
    part: str

    def __init__(self, part: str) -> None:
        object.__setattr__(self, "part", part)

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise DroppedPartError(
            f"{self.part} of a tick older than what the checks without reads= look at "
            f"was not kept: a check that reads it must name {self.part!r} in "
            "Check(reads=...)")

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("__"):  # introspection (copy, pickle, hasattr): not a read
            raise AttributeError(name)
        self._refuse()

    __getitem__ = __iter__ = __len__ = __contains__ = __bool__ = _refuse
    __setattr__ = _refuse

    def __repr__(self) -> str:
        return f"DroppedPart({self.part!r})"


_DROPPED = {p: DroppedPart(p) for p in PARTS}


def dropped(part: str) -> DroppedPart:
    """The one DroppedPart that stands for ``part`` (a name in PARTS) in every thinned
    tick."""
    return _DROPPED[part]


def kept_parts(reads: Iterable[str]) -> frozenset[str]:
    """``reads`` checked against PARTS, with each sub-part's sample added."""
    out = set()
    for p in reads:
        if p not in PARTS:
            raise ValueError(f"unknown tick part {p!r} (parts: {', '.join(PARTS)})")
        out.add(p)
        head, dot, _ = p.partition(".")
        if dot and head != "rates":
            out.add(head)
    return frozenset(out)


def _copy(obj: Any, changes: dict[str, Any]) -> Any:
    """``obj`` (a Struct) with ``changes``, without validating again: every other field
    is the same object as in ``obj``. (``@struct``'s ``_replace``, written out for the
    class: the engine thins every tick it keeps (a Tick, its two NodeTicks, their
    samples and rates), and a getattr and an ``object.__setattr__`` per field cost a
    Tick 2.8 µs, this 0.6.)"""
    return type(obj)._replace(obj, changes)


Drops = tuple[tuple[str, DroppedPart], ...]
"""(field, the DroppedPart that stands for it) pairs."""


@functools.lru_cache(maxsize=64)
def _thinning(keep: frozenset[str]) -> tuple[Drops, tuple[tuple[str, Drops], ...], Drops]:
    """What thinning to ``keep`` drops: the samples dropped whole, the samples kept
    with the fields of theirs dropped, the rates dropped. Worked out once for each
    ``keep`` (an engine has one or two): the engine thins a tick each tick, and
    building the parts' names each time (``f"{kind}.{f}"``) was half of it."""
    whole = tuple((k, _DROPPED[k]) for k in SAMPLES if k not in keep)
    fields = tuple((k, subs) for k in SAMPLES if k in keep
                   if (subs := tuple((f, _DROPPED[f"{k}.{f}"]) for f in _SUB.get(k, ())
                                     if f"{k}.{f}" not in keep)))
    rates = tuple((k, _DROPPED[f"rates.{k}"]) for k in SAMPLES if f"rates.{k}" not in keep)
    return whole, fields, rates


def _thin_node(node: NodeTick, keep: frozenset[str]) -> NodeTick:
    """``node`` thinned to ``keep``; itself when nothing changes (a tick decoded for some
    samples only and then thinned by the engine's windows to the same parts)."""
    whole, fields, dropped_rates = _thinning(keep)
    changes: dict[str, Any] = {}
    for kind, part in whole:
        if getattr(node, kind) is not part:
            changes[kind] = part
    for kind, subs in fields:
        cur = getattr(node, kind)
        if type(cur) is DroppedPart:
            continue  # not decoded (not kept by whoever thinned it first)
        sub = {f: part for f, part in subs if getattr(cur, f) is not part}
        if sub:
            changes[kind] = _copy(cur, sub)
    rates = {k: part for k, part in dropped_rates if getattr(node.rates, k) is not part}
    if rates:  # every kind dropped: the same NodeRates for every node and tick
        changes["rates"] = (_NO_RATES_KEPT if len(dropped_rates) == len(SAMPLES)
                            else _copy(node.rates, rates))
    out: NodeTick = _copy(node, changes) if changes else node
    return out


def thin(tick: Tick, keep: frozenset[str]) -> Tick:
    """``tick`` with only the parts in ``keep`` (``kept_parts``'s output) of each node; the
    others are DroppedParts. What is kept is shared with ``tick``, not copied; a tick
    thinned so already is returned as is."""
    primary, replica = _thin_node(tick.primary, keep), _thin_node(tick.replica, keep)
    if primary is tick.primary and replica is tick.replica:
        return tick
    out: Tick = _copy(tick, {"primary": primary, "replica": replica})
    return out


def rates_only(rates: dict[str, Any]) -> Any:
    """NodeRates with ``rates`` (kind -> its rates) and the other kinds' rates dropped,
    unvalidated (the rates a ``SomeRates`` tracker derives)."""
    return _copy(NO_RATES, {**{k: _DROPPED[f"rates.{k}"] for k in SAMPLES}, **rates})


SAMPLES = ("host", "drbd", "mysql", "redis")

_NO_RATES_KEPT = _copy(NO_RATES, {k: _DROPPED[f"rates.{k}"] for k in SAMPLES})
"""A node's rates thinned to none of them (the true lag's ticks: MySQL samples only)."""


def samples_read(keep: frozenset[str]) -> frozenset[str]:
    """The samples a tick thinned to ``keep`` needs decoded: the kept ones, and those
    whose rates are kept (rates are derived from them)."""
    return frozenset(k for k in SAMPLES if k in keep or f"rates.{k}" in keep)


@functools.cache
def _partial_types(skipped: frozenset[str]) -> msgspec.json.Decoder[Any]:
    """The decoder of a tick whose ``skipped`` samples are left as raw JSON (msgspec.Raw,
    which only a msgspec Struct holds: their bytes are stepped over, nothing is built)."""

    def fields_of(cls: type, swap: dict[str, Any]) -> list[tuple[Any, ...]]:
        hints = typing.get_type_hints(cls)
        out: list[tuple[Any, ...]] = []
        for f in dataclasses.fields(cls):
            if f.name in swap:
                out.append((f.name, swap[f.name], msgspec.field(default_factory=msgspec.Raw)))
            elif f.default is not dataclasses.MISSING:
                out.append((f.name, hints[f.name], f.default))
            elif f.default_factory is not dataclasses.MISSING:
                out.append((f.name, hints[f.name],
                            msgspec.field(default_factory=f.default_factory)))
            else:
                out.append((f.name, hints[f.name]))
        return out

    node = msgspec.defstruct("NodeTickPart", fields_of(NodeTick, dict.fromkeys(
        skipped, msgspec.Raw)), kw_only=True)
    tick = msgspec.defstruct("TickPart", fields_of(Tick, {"primary": node, "replica": node}),
                             kw_only=True)
    return msgspec.json.Decoder(tick)


def tick_from_json_thinned(data: bytes, samples: frozenset[str]) -> Tick:
    """``tick_from_json`` for a reader that needs only ``samples`` (``samples_read``):
    the others are DroppedParts, their JSON stepped over unbuilt (a re-run of checks
    that name what they read: building a tick's four samples is most of its decoding).
    What is decoded is checked as strictly as by ``tick_from_json``."""
    skipped = frozenset(SAMPLES) - samples
    if not skipped:
        return tick_from_json(data)
    decoder = _partial_types(skipped)
    part = decoder.decode(data)
    nodes = {}
    for role in ("primary", "replica"):
        p = getattr(part, role)
        node = object.__new__(NodeTick)
        for name in NodeTick._field_names:
            _setattr(node, name, _DROPPED[name] if name in skipped else getattr(p, name))
        nodes[role] = node
    tick = object.__new__(Tick)
    for name in Tick._field_names:
        _setattr(tick, name, nodes[name] if name in nodes else getattr(part, name))
    return tick
