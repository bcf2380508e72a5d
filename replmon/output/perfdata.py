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
finding counts (``critical``, ``warning``, ``info``) as before. With ``--sentinel``:
``sentinel_ok``, ``sentinel_config_epoch`` and ``sentinel_other_sentinels``.

The set of labels is the same from run to run for the same pair: graphing tools
(PNP4Nagios, Grafana through Icinga) keep one series per label, and PNP4Nagios's
single-file storage stops updating a service whose label set changed. A value that is
not known is written ``U`` (the guidelines' "could not be determined"), never left out:
Seconds_Behind_Master NULL (the SQL thread stopped) is ``replica_mysql_lag=U``; a source
that cannot be read keeps the labels it had in the run's earlier ticks (or, never read,
the labels a node of its role has), all ``U``. Only a source that is not configured
(absent) gives no label.

The replica's lag as replmon measures it from both nodes (the pair_lag check), beside the
replica's own Seconds_Behind_Master:

- ``replica_mysql_lag_measured`` (s): the replica's true lag at the last tick
  (``Tick.lag``, as the collector measured it over the 300 s before; ``PairView.lag``
  over the run for a recording made without it): by pt-heartbeat's table when one is
  set, else the servers' commit timestamps (MySQL 8.0+, MariaDB 11.6+), else pair_lag's
  history (the age of the oldest primary position the replica has not executed). ``U``
  when no source knows: a lower bound would graph as a false plateau (the title gives
  it, and why);
- ``replica_redis_lag_estimate`` (s): the Redis replica's offset lag in bytes divided by
  the primary's write rate over the last 10 s: an estimate, ``U`` while nothing is written
  and bytes are missing;
- ``replica_mysql_trx_behind`` (a plain number): GTIDs of the primary the replica lacks;
- ``replica_mysql_bytes_behind`` (B): bytes of the primary's binlog not executed (same
  binlog file only, else ``U``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from replmon.model.base import SourceState
from replmon.model.lag import RedisLagEstimate
from replmon.model.mysql_rates import client_errors_total
from replmon.model.tick import NodeTick, Tick
from replmon.pair import PairView

_PLAIN_LABEL = re.compile(r"[A-Za-z0-9_.\-]+")
UNKNOWN = "U"
"""The guidelines' value for "could not be determined"."""


def _num(v: float) -> str:
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e15 else str(int(v))


@dataclass(frozen=True)
class Perf:
    label: str
    value: float | None
    """None: not known now, written ``U`` (without the unit)."""
    uom: str = ""
    warn: float | None = None
    crit: float | None = None
    min: float | None = None
    max: float | None = None

    def __str__(self) -> str:
        label = self.label if _PLAIN_LABEL.fullmatch(self.label) else (
            "'" + self.label.replace("'", "''") + "'")
        value = UNKNOWN if self.value is None else f"{_num(self.value)}{self.uom}"
        fields = [value] + [
            "" if v is None else _num(v) for v in (self.warn, self.crit, self.min, self.max)]
        while fields[-1] == "":
            fields.pop()
        return f"{label}={';'.join(fields)}"


def _limit(limits: Mapping[str, Any], check: str, name: str) -> float | None:
    th = limits.get(check)
    v = getattr(th, name, None)
    return float(v) if isinstance(v, (int, float)) else None


@dataclass(frozen=True)
class Measured:
    """The measure of the replica's lag at the last tick, for the perfdata."""

    channel: str
    """The replica's channel from the primary ("" = the default one)."""
    lag_s: float | None
    transactions: int | None
    bytes: int | None


def measured(ticks: Sequence[Tick]) -> Measured | None:
    """The lag at the last of ``ticks`` (oldest first): the one the collector measured
    (``Tick.lag``, what pair_lag judges and the screen shows), else ``PairView.lag`` over
    ``ticks`` (a recording made before ticks carried it); None when the replica's MySQL
    is not configured."""
    if not ticks:
        return None
    pair = PairView(ticks)
    lag, ch = pair.tick_lag, pair.channel
    if lag is None:
        return None
    trx, nbytes = pair.behind
    return Measured(channel=lag.channel if ch is None else ch.name,
                    lag_s=None if lag.seconds is None else round(lag.seconds, 1),
                    transactions=trx, bytes=nbytes)


def _measured_perf(name: str, meas: Measured | None, limits: Mapping[str, Any]
                   ) -> list[Perf]:
    """The replica's measured lag labels (channel ``name``): always there, U when not
    measured."""
    sfx = f"_{name}" if name else ""
    return [
        Perf(f"replica_mysql_lag_measured{sfx}", None if meas is None else meas.lag_s, "s",
             _limit(limits, "pair_lag", "lag_after"), _limit(limits, "pair_lag", "lag_critical"),
             0),
        Perf(f"replica_mysql_trx_behind{sfx}", None if meas is None else meas.transactions,
             min=0),
        Perf(f"replica_mysql_bytes_behind{sfx}", None if meas is None else meas.bytes, "B",
             min=0),
    ]


def _mysql(role: str, node: NodeTick, limits: Mapping[str, Any],
           meas: Measured | None) -> list[Perf]:
    """A readable MySQL's labels (the lag of every channel, U when NULL)."""
    m = node.mysql
    qps = node.rates.mysql.qps
    out = [Perf(f"{role}_mysql_qps", None if qps is None else round(qps, 1), min=0),
           Perf(f"{role}_mysql_client_errors", client_errors_total(m), "c", min=0)]
    warn = _limit(limits, "mysql_replication", "lag_warning_s")
    crit = _limit(limits, "mysql_replication", "lag_critical_s")
    for ch in m.replication:
        sfx = f"_{ch.name}" if ch.name else ""
        out.append(Perf(f"{role}_mysql_lag{sfx}", ch.seconds_behind, "s", warn, crit, 0))
        out.append(Perf(f"{role}_mysql_io_running{sfx}", int(ch.io_running == "Yes"),
                        min=0, max=1))
        out.append(Perf(f"{role}_mysql_sql_running{sfx}", int(ch.sql_running), min=0, max=1))
    if role == "replica":
        if meas is not None:
            name = meas.channel
        else:  # the channel a measure would be of: the only async one, else the default
            chans = [c.name for c in m.replication if not c.group_replication]
            name = chans[0] if len(chans) == 1 else ""
        out += _measured_perf(name, meas, limits)
    return out


def _redis(role: str, node: NodeTick, other: NodeTick, limits: Mapping[str, Any],
           tick_redis_lag: RedisLagEstimate | None = None) -> list[Perf]:
    """A readable Redis's labels."""
    r = node.redis
    out = [Perf(f"{role}_redis_ops", r.instantaneous_ops_per_sec, min=0),
           Perf(f"{role}_redis_client_errors", sum(r.error_counts.values()), "c", min=0)]
    if r.used_memory is not None and r.maxmemory:
        out.append(Perf(f"{role}_redis_mem_used", round(100 * r.used_memory / r.maxmemory, 1),
                        "%", _limit(limits, "memory_ceiling", "maxmemory_warning_pct"),
                        _limit(limits, "memory_ceiling", "maxmemory_critical_pct"), 0, 100))
    else:
        out.append(Perf(f"{role}_redis_mem_used", r.used_memory, "B", min=0))
    if r.role == "replica":
        out.append(Perf(f"{role}_redis_link_up", int(r.link_status == "up"), min=0, max=1))
        master = other.redis
        lag = (max(0, master.master_repl_offset - r.repl_offset)
               if master.status.state is SourceState.OK
               and master.master_repl_offset is not None and r.repl_offset is not None
               else None)
        out.append(Perf(f"{role}_redis_offset_lag", lag, "B", min=0))
        est = tick_redis_lag.seconds if tick_redis_lag is not None else None
        out.append(Perf(f"{role}_redis_lag_estimate", est, "s", min=0))
    return out


def _drbd(role: str, node: NodeTick) -> list[Perf]:
    """A readable DRBD's labels (none without a resource)."""
    d = node.drbd
    if not d.resources:
        return []
    oos = [pd.out_of_sync_kib for res in d.resources for c in res.connections
           for pd in c.peer_devices if pd.out_of_sync_kib is not None]
    return [Perf(f"{role}_drbd_out_of_sync", 1024 * sum(oos) if oos else None, "B", min=0)]


def _template(role: str, kind: str, limits: Mapping[str, Any]) -> list[Perf]:
    """The labels of a source never read in the ticks at hand: what a node of this role
    has (the default channel on a MySQL replica, the replica's link on Redis), all U."""
    if kind == "mysql":
        out = [Perf(f"{role}_mysql_qps", None, min=0),
               Perf(f"{role}_mysql_client_errors", None, "c", min=0)]
        if role == "replica":
            out += [Perf("replica_mysql_lag", None, "s",
                         _limit(limits, "mysql_replication", "lag_warning_s"),
                         _limit(limits, "mysql_replication", "lag_critical_s"), 0),
                    Perf("replica_mysql_io_running", None, min=0, max=1),
                    Perf("replica_mysql_sql_running", None, min=0, max=1)]
            out += _measured_perf("", None, limits)
        return out
    if kind == "redis":
        out = [Perf(f"{role}_redis_ops", None, min=0),
               Perf(f"{role}_redis_client_errors", None, "c", min=0),
               Perf(f"{role}_redis_mem_used", None)]
        if role == "replica":
            out += [Perf("replica_redis_link_up", None, min=0, max=1),
                    Perf("replica_redis_offset_lag", None, "B", min=0),
                    Perf("replica_redis_lag_estimate", None, "s", min=0)]
        return out
    return [Perf(f"{role}_drbd_out_of_sync", None, "B", min=0)]


def _source(ticks: Sequence[Tick], role: str, kind: str, limits: Mapping[str, Any],
            meas: Measured | None) -> list[Perf]:
    """One node's labels of one source at the last tick. Not read there: the labels of
    its newest readable tick, every value U (or the role's template); absent: none."""
    def build(t: Tick) -> list[Perf]:
        node: NodeTick = getattr(t, role)
        other: NodeTick = t.replica if role == "primary" else t.primary
        if kind == "mysql":
            return _mysql(role, node, limits, meas)
        if kind == "redis":
            return _redis(role, node, other, limits, t.redis_lag)
        return _drbd(role, node)

    state = getattr(getattr(ticks[-1], role), kind).status.state
    if state is SourceState.OK:
        return build(ticks[-1])
    if state is SourceState.ABSENT:
        return []
    for t in reversed(ticks[:-1]):
        if getattr(getattr(t, role), kind).status.state is SourceState.OK:
            return [replace(p, value=None) for p in build(t)]
    return _template(role, kind, limits)


def pair_perf(ticks: Tick | Sequence[Tick] | None,
              limits: Mapping[str, Any] | None = None) -> list[Perf]:
    """Per-node figures of the last tick. ``ticks``: the last tick, or the ticks of the
    run ending with it, oldest first (``LAG_WINDOW_S`` of them are enough): with
    them the measured lag is exact and an unreadable source keeps its labels. ``limits``:
    check id -> its thresholds (for the warn/crit fields)."""
    if ticks is None:
        return []
    recent: Sequence[Tick] = [ticks] if isinstance(ticks, Tick) else ticks
    if not recent:
        return []
    limits = limits or {}
    meas = measured(recent) if recent[-1].replica.mysql.status.state is SourceState.OK else None
    out: list[Perf] = []
    for role in ("primary", "replica"):
        for kind in ("mysql", "redis", "drbd"):
            out += _source(recent, role, kind, limits, meas)
    return out + sentinel_perf(recent[-1])


def sentinel_perf(tick: Tick) -> list[Perf]:
    """With ``--sentinel``: whether it was read, the master's config epoch (a step is a
    failover) and the other Sentinels it knows; ``U`` while it cannot be read."""
    s = tick.sentinel
    if s is None:
        return []
    ok = s.status.state is SourceState.OK
    return [Perf("sentinel_ok", 1 if ok else 0, min=0, max=1),
            Perf("sentinel_config_epoch", s.config_epoch if ok else None, min=0),
            Perf("sentinel_other_sentinels", s.other_sentinels if ok else None, min=0)]
