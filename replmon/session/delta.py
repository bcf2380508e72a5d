"""Tick records stored as what changed since the chunk's previous tick (format version 3).

A chunk's first tick record is whole (its JSON, as in version 2); each later one is the
change from the record before it, in the same JSON shape, read knowing the previous value:

- an object: the previous value is an object with the same keys in the same order (or
  a list of the same length, keyed by position), and the object holds only the keys
  whose value changed, each as a change of its own;
- an integer where the previous value is an integer: the difference (counters grow by
  a little: ``"Com_update":280`` instead of ``"Com_update":12876``);
- ``[value]``: the new value, whatever it is (an object whose keys changed, a list whose
  length changed, a value of another type);
- any other value (a string, a float, true/false, null): the new value.

A value that did not change is not written: ``{}`` is a tick where nothing changed.
Applying the changes gives back the record's values exactly (JSON numbers are decoded to
the same floats and integers; key order is kept, since an object whose keys or order
changed is written whole). zlib keeps only 32 KB behind it, about one and a half whole
ticks of a pair: it found the unchanged text of the previous tick, but paid a few bytes
for each stretch of it (~1,000 stretches a tick, cut short by every number that changed
and at 258 bytes).
"""

from __future__ import annotations

from typing import Any

import msgspec

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class _Same:
    """The value did not change (nothing written)."""


SAME: Any = _Same()


_NESTED = (dict, list)


def _is_int(v: Any) -> bool:
    return type(v) is int  # not bool


def change(prev: Any, cur: Any) -> Any:
    """The change from ``prev`` to ``cur`` (``SAME`` when equal)."""
    tp = type(prev)
    if tp is dict and type(cur) is dict:
        if list(prev) != list(cur):
            return [cur]
        out = {}
        for k, v in cur.items():
            p = prev[k]
            tv = type(v)
            if type(p) is tv:
                if p is v or (tv not in _NESTED and p == v):
                    continue  # (the common case, without a call)
                if tv is int:
                    out[k] = v - p  # a counter's difference, without a call
                    continue
            d = change(p, v)
            if d is not SAME:
                out[k] = d
        return out if out else SAME
    if tp is list and type(cur) is list:
        if len(prev) != len(cur):
            return [cur]
        items = {}
        for i, (p, c) in enumerate(zip(prev, cur, strict=True)):
            d = change(p, c)
            if d is not SAME:
                items[str(i)] = d
        return items if items else SAME
    if tp is type(cur) and prev == cur:
        return SAME
    if _is_int(cur):
        return cur - prev if _is_int(prev) else [cur]
    if isinstance(cur, (dict, list)) or isinstance(prev, (dict, list)) or _is_int(prev):
        return [cur]
    return cur  # a string, float, bool or null in place of one


def apply(prev: Any, d: Any) -> Any:
    """``prev`` changed by ``d`` (``change``'s); dicts and lists are changed in place."""
    if type(d) is list:
        if len(d) != 1:
            raise ValueError(f"a change [value] holds {len(d)} values")
        return d[0]
    if type(d) is dict:
        if type(prev) is dict:
            for k, v in d.items():
                try:
                    p = prev[k]
                except KeyError:
                    raise ValueError(
                        f"a change names {k!r}, which the previous tick lacks") from None
                tv = type(v)
                # the leaves inline (most of a tick's changes): a counter's difference,
                # a new string, float, bool or null; objects and [value] recurse
                if tv is int:
                    prev[k] = p + v if type(p) is int else v
                elif tv is dict or tv is list:
                    prev[k] = apply(p, v)
                else:
                    prev[k] = v
            return prev
        if type(prev) is list:
            for k, v in d.items():
                i = int(k)
                if not 0 <= i < len(prev):
                    raise ValueError(f"a change names item {i} of a list of {len(prev)}")
                prev[i] = apply(prev[i], v)
            return prev
        raise ValueError("a change of keys where the previous tick holds no object")
    if _is_int(d) and _is_int(prev):
        return prev + d
    return d


class DeltaWriter:
    """Makes a chunk's records: the first whole, each later one its change (``change``)."""

    def __init__(self) -> None:
        self._prev: tuple[Any, Any] | None = None

    def restart(self) -> None:
        """A new chunk: the next record is whole."""
        self._prev = None

    def record(self, tick_json: bytes, extra: dict[str, Any]) -> bytes:
        """The record of one tick: its JSON (``Tick.model_dump_json``) and what the
        writer stores beside it (rates, the engine's update)."""
        tick = _decode(tick_json)
        prev, self._prev = self._prev, (tick, extra)
        if prev is None:
            return tick_json + b"\n" + (_encode(extra) if extra else b"")
        dt, dx = change(prev[0], tick), change(prev[1], extra)
        return (b"{}" if dt is SAME else _encode(dt)) + b"\n" + (
            b"" if dx is SAME else _encode(dx))


class DeltaReader:
    """Whole records back from a chunk's records (``DeltaWriter``'s), in order."""

    def __init__(self) -> None:
        self._prev: tuple[Any, Any] | None = None

    def restart(self) -> None:
        self._prev = None

    def record(self, data: bytes) -> bytes:
        """The whole record (tick JSON, newline, the extra JSON or nothing) of ``data``;
        ValueError when it does not read or does not fit the previous record."""
        head, _, tail = data.partition(b"\n")
        try:
            dt = _decode(head)
            dx = _decode(tail) if tail else {}
        except msgspec.DecodeError as e:
            raise ValueError(f"tick record does not read: {e}") from None
        if self._prev is None:
            if type(dt) is not dict or type(dx) is not dict:
                raise ValueError("a chunk's first tick record is not an object")
            self._prev = (dt, dx)
            return data
        tick = apply(self._prev[0], dt)
        extra = apply(self._prev[1], dx) if tail else self._prev[1]
        if type(tick) is not dict or type(extra) is not dict:
            raise ValueError("a tick record's change is not an object")
        self._prev = (tick, extra)
        return _encode(tick) + b"\n" + (_encode(extra) if extra else b"")
