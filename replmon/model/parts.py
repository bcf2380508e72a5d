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
from collections.abc import Iterable
from typing import Any, NoReturn

from replmon.model.tick import NodeTick, Tick

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


_FIELDS: dict[type, tuple[str, ...]] = {}


def _copy(obj: Any, changes: dict[str, Any]) -> Any:
    """``obj`` (a frozen record) with ``changes``, without validating again: every
    other field is the same object as in ``obj``."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    new = object.__new__(cls)
    for name in names:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(obj, name))
    return new


def _thin_node(node: NodeTick, keep: frozenset[str]) -> NodeTick:
    changes: dict[str, Any] = {}
    for kind in ("host", "drbd", "mysql", "redis"):
        if kind not in keep:
            changes[kind] = _DROPPED[kind]
            continue
        sub = {f: _DROPPED[f"{kind}.{f}"] for f in _SUB.get(kind, ())
               if f"{kind}.{f}" not in keep}
        if sub:
            changes[kind] = _copy(getattr(node, kind), sub)
    rates = {k: _DROPPED[f"rates.{k}"] for k in ("host", "drbd", "mysql", "redis")
             if f"rates.{k}" not in keep}
    if rates:
        changes["rates"] = _copy(node.rates, rates)
    out: NodeTick = _copy(node, changes) if changes else node
    return out


def thin(tick: Tick, keep: frozenset[str]) -> Tick:
    """``tick`` with only the parts in ``keep`` (``kept_parts``'s output) of each node; the
    others are DroppedParts. What is kept is shared with ``tick``, not copied."""
    out: Tick = _copy(tick, {"primary": _thin_node(tick.primary, keep),
                             "replica": _thin_node(tick.replica, keep)})
    return out


