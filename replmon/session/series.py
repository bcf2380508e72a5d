"""What the HTML report's charts plot of each tick: one number per series of
``SERIES_KEYS`` (``primary/qps``, ``replica/sbm``, ``pair/measured_lag``...).

It lives with the recording because the recorder takes it too: each chunk's summary frame
(facts.py) holds these values of its ticks, rounded as the page shows them, so that
``report --html`` of a day decodes no tick. Nodes go by the role they were given (the
recording's header), as the report's peaks do: a node keeps its line through a
switchover.

``SERIES_ID`` names what these getters take. Change a getter, or add or drop a
series, and bump it: a recording whose summary frames hold values of another id is then
charted by decoding its ticks, as before summary frames held them
(``tests/unit/session/test_chart_facts.py`` pins this file's code to the id).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from replmon.model.mysql_rates import client_errors_per_s
from replmon.model.tick import NodeTick, Tick

SERIES_ID = "2"
"""Bumped whenever what a series takes from a tick changes (see the module's doc)."""

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


def _mysql_errors(n: NodeTick) -> float | None:
    """Errors MySQL raised to clients per second (model.mysql.client_errors_per_s)."""
    if not n.mysql.status.ok or n.rates.mysql.dt_s is None or n.rates.mysql.reset:
        return None
    return sum(client_errors_per_s(n.mysql, n.rates.mysql).values())


def _redis_errors(n: NodeTick) -> float | None:
    """Error replies Redis gave per second (INFO errorstats)."""
    if not n.redis.status.ok or n.rates.redis.dt_s is None or n.rates.redis.reset:
        return None
    return sum(n.rates.redis.errors_by_kind_per_s.values())


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
    "mysql_errors": _mysql_errors,
    "redis_errors": _redis_errors,
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


def series_values(t: Tick) -> tuple[float | None, ...]:
    """One value per SERIES_KEYS of one tick (None: the tick has none)."""
    by_role = {n.given_role: n for n in t.nodes}
    vals: list[float | None] = []
    for role in ROLES:
        node = by_role.get(role)  # type: ignore[call-overload]
        vals += [None if node is None else _safe(get, node) for get in NODE_SERIES.values()]
    vals += [_safe(get, t) for get in PAIR_SERIES.values()]
    return tuple(vals)


def shown(v: float | None) -> float | None:
    """Four significant digits: what a chart shows, in a quarter of the bytes. Rounding
    keeps the order of values (a bucket's lowest rounded is the rounded lowest) and
    rounding twice is rounding once, so values stored rounded chart as the raw ones."""
    return None if v is None else float(f"{v:.4g}")
