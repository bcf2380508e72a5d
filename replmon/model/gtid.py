"""GTID arithmetic for the two dialects replmon reads, pure functions on the text the
servers print.

MySQL (5.6+) prints GTID *sets*: ``uuid:1-5:7,uuid2:1-100``, one interval list per
source server uuid (8.4 adds tags: ``uuid:tag:1-5``, a tag starting a new list for the
same uuid); every transaction a server executed is in its ``gtid_executed`` exactly
once, so "what the replica lacks" is a set difference and "how many" its size.

MariaDB (10.0+) prints GTID *positions*: ``domain-server_id-seqno`` entries, comma
separated. ``gtid_binlog_pos`` / ``Gtid_Slave_Pos`` keep the last GTID per domain,
``gtid_binlog_state`` the last per (domain, server_id). Seqnos grow within a domain
whichever server wrote them, so "how many the replica lacks" in a domain is the
difference of the seqnos, and a replica that "has" a position has everything before it.

Both parsers raise ValueError on text that is neither; callers treat that as "not
comparable", never as 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

Intervals = tuple[tuple[int, int], ...]
"""Sorted, merged, inclusive (first, last) transaction numbers of one uuid[:tag]."""
GtidSet = dict[str, Intervals]
"""A MySQL GTID set: "uuid" or "uuid:tag" -> its intervals."""
MariaPos = dict[tuple[int, int], int]
"""MariaDB GTIDs: (domain, server_id) -> seqno."""

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                   r"[0-9a-fA-F]{12}$")
_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
_MARIA = re.compile(r"^(\d+)-(\d+)-(\d+)$")

CACHED = 32
"""Texts each parse cache keeps. A live session reads new GTID texts every tick or two
(under writes every one is new) and asks again only for the last ticks' ones (this tick's
and the one before, by several checks): 32 keep those. At 512 a cache filled one text a
tick until minute ~9 and kept each text ~8 minutes, past the engine's 5-minute windows:
~130 KB of a MariaDB screen's heap grew from minute 5 to 9 (#56)."""


def _merge(spans: list[tuple[int, int]]) -> Intervals:
    spans.sort()
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


@lru_cache(maxsize=CACHED)
def _parse_set(text: str) -> tuple[tuple[str, Intervals], ...]:
    found: dict[str, list[tuple[int, int]]] = {}
    for part in "".join(text.split()).split(","):
        if not part:
            continue
        fields = part.split(":")
        uuid = fields[0].lower()
        if not _UUID.match(uuid):
            raise ValueError(f"not a GTID set: {part[:60]!r}")
        key = uuid
        for f in fields[1:]:
            if _TAG.match(f):
                key = f"{uuid}:{f.lower()}"
                found.setdefault(key, [])
                continue
            first, _, last = f.partition("-")
            if not first.isdigit() or (last and not last.isdigit()):
                raise ValueError(f"not a GTID interval: {f[:40]!r} in {part[:60]!r}")
            a, b = int(first), int(last or first)
            if a < 1 or b < a:
                raise ValueError(f"not a GTID interval: {f[:40]!r} in {part[:60]!r}")
            found.setdefault(key, []).append((a, b))
    return tuple((k, _merge(v)) for k, v in found.items() if v)


def parse_gtid_set(text: str) -> GtidSet:
    """A MySQL GTID set ("" = empty) from gtid_executed / Executed_Gtid_Set text."""
    return dict(_parse_set(text))


def subtract(a: GtidSet, b: GtidSet) -> GtidSet:
    """The transactions of ``a`` that ``b`` lacks."""
    out: GtidSet = {}
    for key, spans in a.items():
        other = b.get(key, ())
        left: list[tuple[int, int]] = []
        for lo, hi in spans:
            for olo, ohi in other:
                if ohi < lo or olo > hi:
                    continue
                if olo > lo:
                    left.append((lo, olo - 1))
                lo = max(lo, ohi + 1)
                if lo > hi:
                    break
            if lo <= hi:
                left.append((lo, hi))
        if left:
            out[key] = tuple(left)
    return out


def count(s: GtidSet) -> int:
    """Transactions in a GTID set."""
    return sum(b - a + 1 for spans in s.values() for a, b in spans)


def first(s: GtidSet) -> str | None:
    """The first GTID of a set ("uuid:n"), in the order the server printed the uuids."""
    for key, spans in s.items():
        if spans:
            return f"{key}:{spans[0][0]}"
    return None


def format_set(s: GtidSet, limit: int = 3) -> str:
    """A set as MySQL prints it, the first ``limit`` uuids only ("+N more")."""
    parts = [key + "".join(f":{a}" if a == b else f":{a}-{b}" for a, b in spans)
             for key, spans in s.items()]
    more = f" (+{len(parts) - limit} more)" if len(parts) > limit else ""
    return ",".join(parts[:limit]) + more


def _one_maria(text: str) -> tuple[int, int, int] | None:
    """One MariaDB GTID "d-s-n", a single-domain position, read without the regex (under
    load it is new at every tick); None for anything else (isdecimal is the regex's
    \\d: no sign, space or comma passes)."""
    parts = text.split("-")
    if len(parts) == 3:
        d, s, n = parts
        if d.isdecimal() and s.isdecimal() and n.isdecimal():
            return int(d), int(s), int(n)
    return None


@lru_cache(maxsize=CACHED)
def _parse_maria(text: str) -> tuple[tuple[int, int, int], ...]:
    one = _one_maria(text)
    return (one,) if one is not None else _parse_maria_any(text)


def _parse_maria_any(text: str) -> tuple[tuple[int, int, int], ...]:
    """``_parse_maria`` of any text: whitespace dropped, comma-separated GTIDs."""
    out = []
    for part in "".join(text.split()).split(","):
        if not part:
            continue
        m = _MARIA.match(part)
        if m is None:
            raise ValueError(f"not a MariaDB GTID: {part[:40]!r}")
        out.append((int(m[1]), int(m[2]), int(m[3])))
    return tuple(out)


def parse_maria(text: str) -> MariaPos:
    """MariaDB GTIDs ("0-1-100,1-2-5") as (domain, server_id) -> seqno."""
    return {(d, s): n for d, s, n in _parse_maria(text)}


@lru_cache(maxsize=CACHED)
def maria_domains(text: str) -> Mapping[int, int]:
    """The highest seqno per domain of MariaDB GTID text (a position has one per domain),
    read-only (the same mapping is handed to every caller of the same text)."""
    out: dict[int, int] = {}
    for d, _s, n in _parse_maria(text):
        if n > out.get(d, -1):
            out[d] = n
    return MappingProxyType(out)


def is_maria(text: str) -> bool:
    """True when ``text`` looks like MariaDB GTIDs (domain-server-seq entries): MySQL's
    sets always hold a ":" after the uuid, MariaDB's never do. Garbage that passes here
    is a ValueError of the parser."""
    return ":" not in text and "-" in text


def behind(source: str, replica: str) -> int | None:
    """Transactions in the source's GTIDs the replica's executed GTIDs lack (0 = none),
    for either dialect; None when the texts are not comparable (empty, garbled, or one
    of each)."""
    s = _one_maria(source)
    if s is not None and (r := _one_maria(replica)) is not None:  # the usual MariaDB pair,
        return max(0, s[2] - r[2]) if s[0] == r[0] else s[2]  # new each tick: no cache
    return _behind(source, replica)


@lru_cache(maxsize=CACHED)
def _behind(source: str, replica: str) -> int | None:
    """``behind`` of any GTID texts (cached: MySQL's sets are long to parse)."""
    if source == replica:
        return 0 if source.strip() else None
    if not source.strip() or not replica.strip():
        return None
    try:
        if is_maria(source):
            if not is_maria(replica):
                return None
            have = maria_domains(replica)
            return sum(max(0, n - have.get(d, 0)) for d, n in maria_domains(source).items())
        return count(subtract(parse_gtid_set(source), parse_gtid_set(replica)))
    except ValueError:
        return None
