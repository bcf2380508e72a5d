"""Performance data for ``replmon check``: the numbers monitoring people graph.

Format of the Monitoring Plugins development guidelines
(https://www.monitoring-plugins.org/doc/guidelines.html#AEN201)::

    'label'=value[UOM];[warn];[crit];[min];[max]

space-separated after the ``|`` of the status line. UOM is one of: none (a plain
number), ``s``/``ms``/``us``, ``%``, ``B``/``KB``/``MB``/``TB``, ``c`` (a continuous
counter). Trailing empty fields are dropped; a label with anything but letters, digits,
``_ . -`` is single-quoted (a quote inside doubled).

Labels are ``<role>_<source>_<what>[_<channel>]`` so a graph of one pair's nodes is one
regular expression away (``replica_mysql_lag``, ``primary_redis_mem_used``), then the
finding counts (``critical``, ``warning``, ``info``) as before. A source that was not
read in the last tick gives no value (a gap, not a zero).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replmon.model.base import SourceState
from replmon.model.tick import NodeTick, Tick

_PLAIN_LABEL = re.compile(r"[A-Za-z0-9_.\-]+")


def _num(v: float) -> str:
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e15 else str(int(v))


@dataclass(frozen=True)
class Perf:
    label: str
    value: float
    uom: str = ""
    warn: float | None = None
    crit: float | None = None
    min: float | None = None
    max: float | None = None

    def __str__(self) -> str:
        label = self.label if _PLAIN_LABEL.fullmatch(self.label) else (
            "'" + self.label.replace("'", "''") + "'")
        fields = [f"{_num(self.value)}{self.uom}"] + [
            "" if v is None else _num(v) for v in (self.warn, self.crit, self.min, self.max)]
        while fields[-1] == "":
            fields.pop()
        return f"{label}={';'.join(fields)}"


def _limit(limits: Mapping[str, Any], check: str, name: str) -> float | None:
    th = limits.get(check)
    v = getattr(th, name, None)
    return float(v) if isinstance(v, (int, float)) else None


def _mysql(role: str, node: NodeTick, limits: Mapping[str, Any]) -> list[Perf]:
    m = node.mysql
    if m.status.state is not SourceState.OK:
        return []
    out = []
    if node.rates.mysql.qps is not None:
        out.append(Perf(f"{role}_mysql_qps", round(node.rates.mysql.qps, 1), min=0))
    warn = _limit(limits, "mysql_replication", "lag_warning_s")
    crit = _limit(limits, "mysql_replication", "lag_critical_s")
    for ch in m.replication:
        sfx = f"_{ch.name}" if ch.name else ""
        if ch.seconds_behind is not None:
            out.append(Perf(f"{role}_mysql_lag{sfx}", ch.seconds_behind, "s", warn, crit, 0))
        out.append(Perf(f"{role}_mysql_io_running{sfx}", int(ch.io_running == "Yes"),
                        min=0, max=1))
        out.append(Perf(f"{role}_mysql_sql_running{sfx}", int(ch.sql_running), min=0, max=1))
    return out


def _redis(role: str, node: NodeTick, other: NodeTick, limits: Mapping[str, Any]
           ) -> list[Perf]:
    r = node.redis
    if r.status.state is not SourceState.OK:
        return []
    out = []
    if r.instantaneous_ops_per_sec is not None:
        out.append(Perf(f"{role}_redis_ops", r.instantaneous_ops_per_sec, min=0))
    if r.used_memory is not None and r.maxmemory:
        out.append(Perf(f"{role}_redis_mem_used", round(100 * r.used_memory / r.maxmemory, 1),
                        "%", _limit(limits, "memory_ceiling", "maxmemory_warning_pct"),
                        _limit(limits, "memory_ceiling", "maxmemory_critical_pct"), 0, 100))
    elif r.used_memory is not None:
        out.append(Perf(f"{role}_redis_mem_used", r.used_memory, "B", min=0))
    if r.role == "replica":
        out.append(Perf(f"{role}_redis_link_up", int(r.link_status == "up"), min=0, max=1))
        master = other.redis
        if (master.status.state is SourceState.OK and master.master_repl_offset is not None
                and r.repl_offset is not None):
            out.append(Perf(f"{role}_redis_offset_lag",
                            max(0, master.master_repl_offset - r.repl_offset), "B", min=0))
    return out


def _drbd(role: str, node: NodeTick) -> list[Perf]:
    d = node.drbd
    if d.status.state is not SourceState.OK or not d.resources:
        return []
    oos = [pd.out_of_sync_kib for res in d.resources for c in res.connections
           for pd in c.peer_devices if pd.out_of_sync_kib is not None]
    return [Perf(f"{role}_drbd_out_of_sync", 1024 * sum(oos), "B", min=0)] if oos else []


def pair_perf(tick: Tick | None, limits: Mapping[str, Any] | None = None) -> list[Perf]:
    """Per-node figures of the last tick; ``limits``: check id -> its thresholds (for
    the warn/crit fields)."""
    if tick is None:
        return []
    limits = limits or {}
    out: list[Perf] = []
    for role, node, other in (("primary", tick.primary, tick.replica),
                              ("replica", tick.replica, tick.primary)):
        out += _mysql(role, node, limits)
        out += _redis(role, node, other, limits)
        out += _drbd(role, node)
    return out
