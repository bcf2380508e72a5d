"""What the HTML report's charts plot: the series taken from every tick, the charts
that show them, which checks' incidents each chart tells, and the fitting of a long
series to a fixed number of points.

The series themselves (``SERIES_KEYS``, what each takes from a tick) are
``replmon.session.series``: the recorder takes them too. A chunk whose summary frame holds
them gives its ticks' points without decoding a tick (``stored_points``); any other
chunk is decoded, and ``chart_point`` runs where ``report`` decodes a tick (a worker
process, for a long recording): it returns plain numbers only.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from replmon.session.decoding import Entry
from replmon.session.facts import ChunkFacts
from replmon.session.series import ROLES, SERIES_ID, SERIES_KEYS, series_values, shown

__all__ = ["CHARTS", "OVERVIEW", "SERIES_KEYS", "Chart", "Columns", "chart_point",
           "charts_for", "fit", "stored_points", "with_gaps"]


def chart_point(e: Entry) -> tuple[float, tuple[float | None, ...]]:
    """(wall, one value per SERIES_KEYS) of one tick: ``report``'s extra Extract."""
    return e.tick.wall, series_values(e.tick)


def stored_points(facts: ChunkFacts, walls: list[float]
                  ) -> list[tuple[float, tuple[float | None, ...]]] | None:
    """What ``chart_point`` gives for each tick of a chunk, from its summary frame (``walls``:
    its ticks' wall times, read from their frames), without decoding a tick; None when
    the frame holds no chart values of today's SERIES_ID (an older recording, or series
    changed since): the chunk's ticks are decoded then. The values are rounded as the
    page shows them (``shown``), which charts them as the raw ones (see ``fit``)."""
    cols = facts.chart_columns(SERIES_ID, SERIES_KEYS)
    if cols is None:
        return None
    return list(zip(walls, zip(*cols, strict=True), strict=True))


@dataclass(frozen=True)
class Chart:
    """One chart: both nodes' lines of one quantity on one time axis."""

    id: str
    title: str
    unit: str
    """The left axis' unit: "s", "/s", "%", "B", "KiB", "B/s", "pages/s"."""
    series: tuple[tuple[str, str], ...]
    """(label, key of SERIES_KEYS) on the left axis."""
    checks: frozenset[str]
    """Checks whose incidents this chart tells."""
    right: tuple[tuple[str, str], ...] = ()
    """(label, key) on a right axis of its own (``right_unit``)."""
    right_unit: str = ""


def _both(label: str, key: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"{r} {label}".strip(), f"{r}/{key}") for r in ROLES)


CHARTS: tuple[Chart, ...] = (
    Chart("lag", "Replication lag: measured on both nodes, and the replica's "
          "Seconds_Behind (a gap where it is NULL)", "s",
          (("measured lag", "pair/measured_lag"), ("replica Seconds_Behind", "replica/sbm")),
          frozenset({"pair_lag", "mysql_replication", "applier_progress", "latency_bound",
                     "semi_sync", "errant_writes", "source_health"})),
    Chart("stmt_rows", "UPDATE statements against rows updated (they should move together)",
          "/s", (*_both("UPDATE statements", "upd_stmt"), *_both("rows updated", "upd_rows")),
          frozenset({"stmt_vs_rows"})),
    Chart("throughput", "Throughput: MySQL queries and Redis commands", "/s",
          (*_both("MySQL queries", "qps"), *_both("Redis commands", "ops")),
          frozenset({"throughput_collapse", "memory_ceiling", "latency_bound", "two_primaries",
                     "roles", "clock_skew", "source_health", "writes_refused"})),
    Chart("client_errors", "Errors clients got: MySQL's errors raised and Redis's error "
          "replies", "/s", (*_both("MySQL errors", "mysql_errors"),
                            *_both("Redis errors", "redis_errors")),
          frozenset({"writes_refused", "source_health"})),
    Chart("memory", "Memory available", "%", _both("", "mem_avail"),
          frozenset({"memory_ceiling"})),
    Chart("redis_memory", "Redis memory: used against maxmemory (no line: no limit)", "B",
          (*_both("used", "redis_used"), *_both("maxmemory", "redis_max")),
          frozenset({"memory_ceiling"})),
    Chart("swap", "Swap: pages in and out", "pages/s",
          (*_both("swap in", "swap_in"), *_both("swap out", "swap_out")),
          frozenset({"memory_ceiling"})),
    Chart("redis_offsets", "Redis replication offsets, and the replica's link (1 up, 0 down)",
          "B", _both("offset", "redis_offset"),
          frozenset({"redis_replication", "redis_backlog_headroom"}),
          right=_both("link", "redis_link"), right_unit="link"),
    Chart("redis_behind", "Redis: bytes the replica is behind the master's offset", "B",
          (("replica behind (the primary's view)", "primary/redis_behind"),),
          frozenset({"redis_replication", "redis_backlog_headroom"})),
    Chart("drbd", "DRBD: out of sync (left) and replication rates (right)", "KiB",
          _both("out of sync", "oos"), frozenset({"drbd_peer", "drbd_congestion"}),
          right=(*_both("sent", "drbd_sent"), *_both("received", "drbd_recv")),
          right_unit="KiB/s"),
    Chart("disk", "Disk: busiest disk's utilisation and CPU iowait", "%",
          (*_both("disk busy", "disk_util"), *_both("iowait", "iowait")),
          frozenset({"disk_saturation"})),
    Chart("net", "Network: received + sent against the link's speed", "B/s",
          (*_both("traffic", "net"), *_both("link speed", "link")),
          frozenset({"link_saturation"})),
)
OVERVIEW = ("throughput", "lag", "memory", "redis_offsets", "drbd")
"""Charts of the whole recording, above the incidents (those that have data)."""


def charts_for(checks: set[str]) -> list[Chart]:
    """The charts that tell an incident of these checks, in CHARTS' order."""
    return [c for c in CHARTS if c.checks & checks]


def with_gaps(points: Sequence[tuple[float, Sequence[float | None]]], interval: float
              ) -> list[tuple[float, Sequence[float | None]]]:
    """``points`` with a row of no values one interval after each tick that the next
    one follows by more than two intervals (missed ticks, lost chunks): a line stops
    there rather than being drawn across what was not recorded."""
    out: list[tuple[float, Sequence[float | None]]] = []
    empty = (None,) * len(SERIES_KEYS)
    for k, (wall, vals) in enumerate(points):
        if k and wall - points[k - 1][0] > 2 * interval:
            out.append((points[k - 1][0] + interval, empty))
        out.append((wall, vals))
    return out


class Columns:
    """The recording's chart points as one column per series (walls sorted)."""

    def __init__(self, points: Sequence[tuple[float, Sequence[float | None]]]) -> None:
        self.walls = [w for w, _ in points]
        cols = list(zip(*(v for _, v in points), strict=True)) if points else []
        self.cols: dict[str, Sequence[float | None]] = {
            k: (cols[i] if cols else ()) for i, k in enumerate(SERIES_KEYS)}

    def span(self, t0: float, t1: float) -> tuple[int, int]:
        """[first, end) indices of the ticks from t0 to t1."""
        return bisect.bisect_left(self.walls, t0), bisect.bisect_right(self.walls, t1)

    def has_data(self, keys: Sequence[str], a: int, b: int) -> bool:
        return any(v is not None for k in keys for v in self.cols[k][a:b])


def fit(cols: Columns, keys: Sequence[str], a: int, b: int, points: int
        ) -> tuple[list[float], list[list[float | None]], float]:
    """The ticks [a, b) of each series, at most ``points`` x values: every tick when
    they fit, else per bucket of ticks the lowest and the highest value of each series
    (at the bucket's first and middle x), so a one-tick spike survives. Returns (xs,
    one list per key, seconds per bucket; 0 when every tick is kept)."""
    walls = cols.walls
    n = b - a
    if n <= points:
        return (walls[a:b], [[shown(cols.cols[k][i]) for i in range(a, b)] for k in keys],
                0.0)
    buckets = max(1, points // 2)
    xs: list[float] = []
    ys: list[list[float | None]] = [[] for _ in keys]
    for j in range(buckets):
        lo, hi = a + n * j // buckets, a + n * (j + 1) // buckets
        xs += [walls[lo], walls[(lo + hi - 1) // 2]]
        for out, k in zip(ys, keys, strict=True):
            got = [v for v in cols.cols[k][lo:hi] if v is not None]
            out += [shown(min(got)), shown(max(got))] if got else [None, None]
    return xs, ys, (walls[b - 1] - walls[a]) / buckets
