"""What the HTML report's charts plot: the series taken from every tick, the charts
that show them, which checks' incidents each chart tells, and the fitting of a long
series to a fixed number of points.

``chart_point`` runs where ``report`` decodes a tick (a worker process, for a long
recording): it returns plain numbers only, one per series of ``SERIES_KEYS``. Nodes go
by the role they were given (the recording's header), as the report's peaks do: a
node keeps its line through a switchover.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from replmon.model.tick import NodeTick, Tick
from replmon.session.recording import Entry

NodeGetter = Callable[[NodeTick], float | None]


def _total(vals: Sequence[float | None]) -> float | None:
    got = [v for v in vals if v is not None]
    return float(sum(got)) if got else None


def _sbm(n: NodeTick) -> float | None:
    """The replica's Seconds_Behind_Master/Source (the worst channel); None when NULL."""
    vals = [c.seconds_behind for c in n.mysql.replication if c.seconds_behind is not None]
    return float(max(vals)) if n.mysql.status.ok and vals else None


def _redis_offset(n: NodeTick) -> float | None:
    """A node's replication offset: a replica's own (slave_repl_offset), else the
    master's."""
    r = n.redis
    if not r.status.ok:
        return None
    off = r.repl_offset if r.repl_offset is not None else r.master_repl_offset
    return None if off is None else float(off)


def _redis_link(n: NodeTick) -> float | None:
    """1 while a Redis replica's link to its master is up, 0 while down."""
    if not n.redis.status.ok or n.redis.link_status is None:
        return None
    return 1.0 if n.redis.link_status == "up" else 0.0


def _redis_behind(n: NodeTick) -> float | None:
    lags = [v for v in n.rates.redis.replica_lag_bytes.values() if v is not None]
    return float(max(lags)) if lags else None


def _oos_kib(n: NodeTick) -> float | None:
    if not n.drbd.status.ok or not n.drbd.resources:
        return None
    return _total([pd.out_of_sync_kib for r in n.drbd.resources for c in r.connections
                   for pd in c.peer_devices])


def _drbd_rate(field: str) -> NodeGetter:
    return lambda n: _total([getattr(p, field) for p in n.rates.drbd.peer_devices.values()])


def _net(n: NodeTick) -> float | None:
    t = n.rates.host.net_total
    return _total([t.recv_bytes_per_s, t.send_bytes_per_s])


def _link_speed(n: NodeTick) -> float | None:
    speeds = [nic.speed_mbps for name, nic in n.rates.host.nics.items()
              if name != "lo" and nic.speed_mbps]
    return max(speeds) * 125_000.0 if speeds else None


NODE_SERIES: dict[str, NodeGetter] = {
    "sbm": _sbm,
    "upd_stmt": lambda n: n.rates.mysql.com_update_per_s,
    "upd_rows": lambda n: n.rates.mysql.rows_updated_per_s,
    "qps": lambda n: n.rates.mysql.qps,
    "ops": lambda n: n.rates.redis.ops_per_s,
    "mem_avail": lambda n: n.rates.host.mem_available_pct,
    "swap_in": lambda n: n.rates.host.swap_in_pages_per_s,
    "swap_out": lambda n: n.rates.host.swap_out_pages_per_s,
    "redis_used": lambda n: n.redis.used_memory if n.redis.status.ok else None,
    "redis_max": lambda n: n.redis.maxmemory if n.redis.status.ok and n.redis.maxmemory
    else None,
    "redis_offset": _redis_offset,
    "redis_link": _redis_link,
    "redis_behind": _redis_behind,
    "oos": _oos_kib,
    "drbd_sent": _drbd_rate("sent_kib_s"),
    "drbd_recv": _drbd_rate("received_kib_s"),
    "iowait": lambda n: n.rates.host.cpu_iowait_pct,
    "disk_util": lambda n: n.rates.host.disk_max_util_pct,
    "net": _net,
    "link": _link_speed,
}
"""Per node: the series a chart may plot, "primary/<key>" and "replica/<key>"."""


def _measured_lag(t: Tick) -> float | None:
    """The replica's true lag as replmon measured it (``Tick.lag``, truelag.py)."""
    return None if t.lag is None else t.lag.seconds


PAIR_SERIES: dict[str, Callable[[Tick], float | None]] = {"measured_lag": _measured_lag}
"""Of the pair: "pair/<key>"."""

ROLES = ("primary", "replica")
SERIES_KEYS: tuple[str, ...] = (*(f"{r}/{k}" for r in ROLES for k in NODE_SERIES),
                                *(f"pair/{k}" for k in PAIR_SERIES))


def _safe(get: Callable[[Any], float | None], obj: Any) -> float | None:
    try:
        v = get(obj)
    except (AttributeError, TypeError, ValueError):  # a partial sample
        return None
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def chart_point(e: Entry) -> tuple[float, tuple[float | None, ...]]:
    """(wall, one value per SERIES_KEYS) of one tick: ``report``'s extra Extract."""
    t = e.tick
    by_role = {(n.given or n.role): n for n in t.nodes}
    vals: list[float | None] = []
    for role in ROLES:
        node = by_role.get(role)  # type: ignore[call-overload]
        vals += [None if node is None else _safe(get, node) for get in NODE_SERIES.values()]
    vals += [_safe(get, t) for get in PAIR_SERIES.values()]
    return t.wall, tuple(vals)


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
                     "roles", "clock_skew", "source_health"})),
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


def _round(v: float | None) -> float | None:
    """Four significant digits: what a chart shows, in a quarter of the bytes."""
    return None if v is None else float(f"{v:.4g}")


def fit(cols: Columns, keys: Sequence[str], a: int, b: int, points: int
        ) -> tuple[list[float], list[list[float | None]], float]:
    """The ticks [a, b) of each series, at most ``points`` x values: every tick when
    they fit, else per bucket of ticks the lowest and the highest value of each series
    (at the bucket's first and middle x), so a one-tick spike survives. Returns (xs,
    one list per key, seconds per bucket; 0 when every tick is kept)."""
    walls = cols.walls
    n = b - a
    if n <= points:
        return (walls[a:b], [[_round(cols.cols[k][i]) for i in range(a, b)] for k in keys],
                0.0)
    buckets = max(1, points // 2)
    xs: list[float] = []
    ys: list[list[float | None]] = [[] for _ in keys]
    for j in range(buckets):
        lo, hi = a + n * j // buckets, a + n * (j + 1) // buckets
        xs += [walls[lo], walls[(lo + hi - 1) // 2]]
        for out, k in zip(ys, keys, strict=True):
            got = [v for v in cols.cols[k][lo:hi] if v is not None]
            out += [_round(min(got)), _round(max(got))] if got else [None, None]
    return xs, ys, (walls[b - 1] - walls[a]) / buckets
