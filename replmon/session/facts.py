"""What ``replmon report`` keeps of each tick, and the per-chunk summary of it that the
recorder writes (summary frames), so that a report of a long recording decodes no tick.

Per tick the report wants the servers' versions, the key rates (PEAKS) for their peaks,
the tick's seq, interval and missed slots (for the gaps) and the findings the live
engine opened and closed (the recorded timeline). The recorder has all of it in hand as
it writes a tick; a summary frame after each chunk holds it, summed up: the versions seen,
each key's peak in the chunk with its tick, the three small numbers of every tick and the
live engine's events. The observations frame beside it (the live engine's observations) spares the
checks. A day at 1 s is 86,400 ticks: ``report`` read them (decoded, rates derived) in
52 s on 2 cores; from the frames it reads no tick.

``report --html`` also charts every tick: the summary frame holds each chart series' value at
each tick (``replmon.session.series``), rounded as the page shows them, so the page is
the one decoding gives, without decoding a tick (a day: 3.1 s against 26-36 s; ~14
bytes and ~22 us of the writer's CPU a tick).
"""

from __future__ import annotations

from array import array
from typing import Any

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from replmon.engine import Update
from replmon.model.findings import Finding
from replmon.model.tick import NodeTick, Tick
from replmon.session.format import pack_zjson, unpack_zjson, zip_json
from replmon.session.series import SERIES_ID, SERIES_KEYS, series_values, shown

PEAKS: dict[str, str] = {
    "mysql qps": "rates.mysql.qps",
    "mysql UPDATE/s": "rates.mysql.com_update_per_s",
    "mysql rows updated/s": "rates.mysql.rows_updated_per_s",
    "redis ops/s": "rates.redis.ops_per_s",
    "cpu idle % (lowest)": "rates.host.cpu_idle_pct",
    "swap in pages/s": "rates.host.swap_in_pages_per_s",
    "swap out pages/s": "rates.host.swap_out_pages_per_s",
    "net recv bytes/s": "rates.host.net_total.recv_bytes_per_s",
    "net send bytes/s": "rates.host.net_total.send_bytes_per_s",
}
"""Key rates whose peak (lowest for idle CPU) the report shows, per node."""

def metric(tick: Tick | NodeTick, path: str) -> Any:
    """Value at a dotted path (``primary.rates.mysql.qps``, ``replica.mysql.counters.Questions``,
    ``primary.rates.host.disks.vda.util_pct``); None where it does not exist."""
    obj: Any = tick
    for part in path.split("."):
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif part in getattr(type(obj), "model_fields", {}):
            obj = getattr(obj, part)
        else:
            return None  # only data fields: never a method or a dunder
        if obj is None:
            return None
    return obj


Version = tuple[str, str]
"""(node by its given role + server kind, "primary mysql"; the version it said)."""
Value = tuple[str, float, str, str]
"""(node by its given role + PEAKS label, the value, the node's name, its role then)."""


def versions_of(t: Tick) -> list[Version]:
    out: list[Version] = []
    for n in t.nodes:
        given = n.given_role
        for kind in ("mysql", "redis", "drbd"):
            sample = getattr(n, kind)
            if sample.status.ok and sample.version:
                out.append((f"{given} {kind}", sample.version))
    return out


def values_of(t: Tick) -> list[Value]:
    """Each key rate the tick has, by the role the node was given, which it keeps through
    a switchover (the header's nodes), as the screen keeps its column."""
    out: list[Value] = []
    for n in t.nodes:
        given = n.given_role
        for label, path in PEAKS.items():
            val = metric(n, path)
            if isinstance(val, int | float):
                out.append((f"{given} {label}", val, n.name, n.role))
    return out


def better(key: str, val: float, best: float | None) -> bool:
    """``val`` beats the peak so far (the first of equal ones stays the peak)."""
    if best is None:
        return True
    return val < best if "lowest" in key else val > best


Events = list[tuple[str, dict[str, Any]]]
"""("opened" | "closed", the finding as JSON) of one tick's live update."""


def events_of(update: Update) -> Events:
    """The update's openings (in the order of its open findings, as the tick's recorded
    update lists them) and closings."""
    opened = {f.ident for f in update.opened}
    return ([("opened", f.model_dump(mode="json")) for f in update.open if f.ident in opened]
            + [("closed", f.model_dump(mode="json")) for f in update.closed])


def findings_of(events: Events) -> list[tuple[str, Finding]]:
    return [(kind, Finding.model_validate(f)) for kind, f in events]


class ChunkFacts(BaseModel):
    """A summary frame: what the report keeps of each tick of one chunk."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    first: int
    """Index of the chunk's first tick."""
    count: int
    seq: list[int]
    interval: list[float]
    missed: list[int]
    """One entry a tick, in order."""
    versions: list[Version] = Field(default_factory=list)
    """Each (node kind, version) seen in the chunk, once."""
    peaks: dict[str, tuple[float, int, str, str]] = Field(default_factory=dict)
    """Key -> (peak value, offset of its first tick in the chunk, node name, role)."""
    events: dict[int, Events] = Field(default_factory=dict)
    """Offset in the chunk -> the live engine's events at that tick (none: not listed)."""
    chart_id: str = ""
    """The ``SERIES_ID`` of the values in ``charts``; "" when the writer stored none (a
    replmon before them)."""
    charts: dict[str, list[float | None]] = Field(default_factory=dict)
    """Chart series (a key of SERIES_KEYS) -> its value at each tick, in order, rounded
    as the page shows them (``series.shown``); a series no tick of the chunk has a value
    for is left out."""

    def chart_columns(self, series_id: str, keys: tuple[str, ...]
                      ) -> list[tuple[float | None, ...]] | None:
        """One column of ``count`` values per key (all None for a key left out), or None
        unless the frame holds values of ``series_id`` for these ticks."""
        if not self.chart_id or self.chart_id != series_id:
            return None
        empty = (None,) * self.count
        cols = [tuple(self.charts[k]) if k in self.charts else empty for k in keys]
        if any(len(c) != self.count for c in cols) or not set(self.charts) <= set(keys):
            return None
        return cols


class Slots:
    """Numbers written one after the other into an array that is never shrunk: each
    chunk writes from its start again (``restart``), so after the first chunk a
    recording's columns take no new memory and give none back (an array grown tick by
    tick and freed at each chunk's end left glibc's heap a little more cut up each time:
    +40-60 KiB over 700 ticks in ``bench_memory.py turnover``)."""

    __slots__ = ("buf", "n")

    def __init__(self, typecode: str) -> None:
        self.buf: array[Any] = array(typecode)
        self.n = 0

    def restart(self) -> None:
        self.n = 0

    def put(self, v: float) -> None:
        if self.n < len(self.buf):
            self.buf[self.n] = v
        else:
            self.buf.append(v)
        self.n += 1

    def put_row(self, row: array[Any]) -> None:
        end = self.n + len(row)
        self.buf[self.n:min(end, len(self.buf))] = row  # (grows the array past its end)
        self.n = end

    def values(self, start: int = 0, step: int = 1) -> list[Any]:
        """Every ``step``-th number written since the restart, from ``start``."""
        return self.buf[start:self.n:step].tolist()


class FactsCollector:
    """Collects one chunk's facts as the recorder writes its ticks, and writes them as a
    summary frame's JSON (``payload``); ``restart`` for the next chunk.

    A chunk's columns (seq, interval, missed slots, the chart values) are kept as
    numbers in arrays (``Slots``), not as Python objects: a minute of ticks is ~3,000
    numbers that live until the chunk ends, and as objects they and their validated
    copy were a peak of small blocks at every chunk's end, which pymalloc's arenas kept
    paged in (docs/benchmarks.md, "2026-12-07, late evening"). The JSON is the one
    ``ChunkFacts`` would write, read back the same (tests/unit/session/
    test_frames_bytes.py); a chart value that is not a number (None, NaN, inf) is null,
    as pydantic writes it."""

    def __init__(self, first: int) -> None:
        self.seq = Slots("q")
        self.interval = Slots("d")
        self.missed = Slots("q")
        self.charted = Slots("d")
        """Each tick's chart values (SERIES_KEYS' order), rounded; NaN for None."""
        self.restart(first)

    def restart(self, first: int) -> None:
        """Empty, for the chunk whose first tick has index ``first``."""
        self.first = first
        for slots in (self.seq, self.interval, self.missed, self.charted):
            slots.restart()
        self.versions: dict[Version, None] = {}
        self.peaks: dict[str, tuple[float, int, str, str]] = {}
        self.events: dict[int, Events] = {}

    def add(self, tick: Tick, update: Update | None) -> None:
        k = self.seq.n
        self.seq.put(tick.seq)
        self.interval.put(tick.interval)
        self.missed.put(tick.missed)
        self.versions.update(dict.fromkeys(versions_of(tick)))
        for key, val, name, role in values_of(tick):
            best = self.peaks.get(key)
            if better(key, val, None if best is None else best[0]):
                self.peaks[key] = (val, k, name, role)
        if update is not None and (update.opened or update.closed):
            self.events[k] = events_of(update)
        self.charted.put_row(array("d", [number(shown(v)) for v in series_values(tick)]))

    def payload(self) -> bytes | None:
        """The summary frame's payload (``pack_facts`` of the chunk's ``ChunkFacts``), or
        None for a chunk without ticks."""
        count = self.seq.n
        if not count:
            return None
        width = len(SERIES_KEYS)
        charts: dict[str, msgspec.Raw] = {}
        for j, key in enumerate(SERIES_KEYS):  # one column's floats at a time
            col = self.charted.values(j, width)
            if any(v == v for v in col):  # a value that is not NaN
                charts[key] = msgspec.Raw(encode_json(col))
        return zip_json(encode_json({
            "first": self.first, "count": count, "seq": self.seq.values(),
            "interval": self.interval.values(), "missed": self.missed.values(),
            "versions": list(self.versions), "peaks": self.peaks, "events": self.events,
            "chart_id": SERIES_ID, "charts": charts}))


_NAN = float("nan")


def number(v: float | None) -> float:
    """A value as the recorder's arrays keep it: NaN for None (both written as null)."""
    return _NAN if v is None else v


encode_json = msgspec.json.Encoder().encode
"""JSON as pydantic's ``model_dump_json`` writes the frames' values (tuples as arrays,
NaN and inf as null); a whole number kept as a float is written without ".0"."""


def pack_facts(facts: ChunkFacts) -> bytes:
    return pack_zjson(facts)


NO_CHARTS = frozenset({"chart_id", "charts"})


def unpack_facts(payload: bytes, charts: bool = True) -> ChunkFacts:
    """ValueError (zlib, JSON, validation) when the payload is not one. Without
    ``charts``, as a frame that stored no chart values (``chart_id`` ""): what ``report``
    reads, all but the page's (the chart values are most of a summary frame's JSON)."""
    return unpack_zjson(payload, ChunkFacts, "facts", frozenset() if charts else NO_CHARTS)
