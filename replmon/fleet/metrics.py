"""Every pair's latest tick as Prometheus metric families.

One table, ``FAMILIES``, says what is exported: name, type, help, labels, the metric
of the usual exporter it mirrors, and the function that reads it from a pair's state.
``FleetCollector`` (a prometheus_client collector: the library writes the exposition
format) and docs/metrics.md (``python -m replmon.fleet.metrics``) are both made from
it, and a test keeps the doc current.

Shapes follow the exporters a team already has dashboards for, under ``replmon_``:
mysqld_exporter (``mysql_global_status_commands_total{command}``,
``mysql_slave_status_*``), redis_exporter (``redis_memory_used_bytes``,
``redis_connected_slave_offset_bytes``), node_exporter (``node_cpu_seconds_total{mode}``,
``node_disk_read_bytes_total{device}``) and drbd-reactor's prometheus plugin
(``drbd_connection_state``, ``drbd_peerdevice_outofsync_bytes``). Counters are exported
as counters, so PromQL ``rate()`` works; a rate appears only where replmon derives it
itself. Every per-node series has ``pair``, ``node`` (primary/replica) and ``host``.
Labels hold names and states only, never numbers or free text: titles, causes and
numbers of the findings are on /findings.json.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    UnknownMetricFamily,
)
from prometheus_client.registry import Collector

from replmon import __version__
from replmon.fleet.state import PairState
from replmon.model.base import SourceState
from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample
from replmon.model.tick import SOURCE_KINDS, NodeTick

USER_HZ = 100
"""/proc/stat ticks per second on every mainstream Linux build."""

NODE = ("pair", "node", "host")
Sample = tuple[tuple[str, ...], float]
"""(label values after pair/node/host or the family's own labels, value)."""


@dataclass(frozen=True)
class Family:
    name: str
    """Without ``_total`` for counters (prometheus_client adds it)."""
    kind: str
    """counter, gauge, untyped or histogram."""
    help: str
    labels: tuple[str, ...]
    """Labels after pair/node/host (``per_node``) or all of them."""
    like: str
    """The exporter metric it mirrors ("" when replmon's own)."""
    read: Callable[[PairState], Iterable[Sample]]
    per_node: bool = True
    live: bool = False
    """Depends on the time of the scrape (ages): computed then, not once per tick."""
    split: bool = False
    """One family per value of the first label, named ``<name>_<value>`` (as
    mysqld_exporter has one ``mysql_global_status_<name>`` family per status name)."""

    @property
    def exposed(self) -> str:
        return self.name + "_total" if self.kind == "counter" else self.name

    @property
    def all_labels(self) -> tuple[str, ...]:
        return (*NODE, *self.labels) if self.per_node else self.labels


# --- readers -------------------------------------------------------------------------

def _nodes(s: PairState) -> Iterator[tuple[tuple[str, str, str], NodeTick]]:
    t = s.tick
    if t is None:
        return
    for n in (t.primary, t.replica):
        yield (s.pair, n.role, n.name), n


def per_node(fn: Callable[[NodeTick], Iterable[Sample]]
             ) -> Callable[[PairState], Iterable[Sample]]:
    """A node reader as a pair reader: its label values after pair/node/host."""
    def read(s: PairState) -> Iterator[Sample]:
        for base, n in _nodes(s):
            for labels, v in fn(n):
                yield (*base, *labels), v
    return read


def _ok(n: NodeTick, kind: str) -> bool:
    return bool(getattr(n, kind).status.state is SourceState.OK)


def _one(kind: str, get: Callable[[Any], float | int | bool | None]
         ) -> Callable[[PairState], Iterable[Sample]]:
    """One unlabelled value of a source's sample (only when the source is ok and the
    value known)."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, kind):
            v = get(getattr(n, kind))
            if v is not None:
                yield (), float(v)
    return per_node(fn)


def _source_state(n: NodeTick) -> Iterator[Sample]:
    for kind in SOURCE_KINDS:
        yield (kind, getattr(n, kind).status.state.value), 1.0


def _source_up(n: NodeTick) -> Iterator[Sample]:
    for kind in SOURCE_KINDS:
        st = getattr(n, kind).status.state
        if st is not SourceState.ABSENT:  # switched off: no up series to alert on
            yield (kind,), float(st is SourceState.OK)


def _source_age(n: NodeTick) -> Iterator[Sample]:
    now = time.time()
    for kind in SOURCE_KINDS:
        sample = getattr(n, kind)
        if sample.status.state is not SourceState.ABSENT and sample.wall:
            yield (kind,), max(0.0, now - sample.wall)


def _source_duration(n: NodeTick) -> Iterator[Sample]:
    for kind in SOURCE_KINDS:
        sample = getattr(n, kind)
        if sample.status.state is not SourceState.ABSENT and sample.elapsed_ms is not None:
            yield (kind,), sample.elapsed_ms / 1000


def _source_rtt(n: NodeTick) -> Iterator[Sample]:
    for kind in ("mysql", "redis"):
        sample = getattr(n, kind)
        if _ok(n, kind) and sample.rtt_ms is not None:
            yield (kind,), sample.rtt_ms / 1000


# MySQL: mysqld_exporter's three labelled counter families, the rest by lower-case name
_MY_LABELLED = (("Com_", "command"), ("Handler_", "handler"), ("Innodb_rows_", "operation"))


def _my_labelled(prefix: str) -> Callable[[NodeTick], Iterator[Sample]]:
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "mysql"):
            for k, v in n.mysql.counters.items():
                if k.startswith(prefix):
                    yield (k[len(prefix):].lower(),), float(v)
    return fn


def _my_other(n: NodeTick) -> Iterator[Sample]:
    if _ok(n, "mysql"):
        for k, v in n.mysql.counters.items():
            if not any(k.startswith(p) for p, _ in _MY_LABELLED):
                yield (k.lower(),), float(v)
        for k, g in n.mysql.gauges.items():
            yield (k.lower(),), float(g)


def _my_rows(n: NodeTick) -> Iterator[Sample]:
    if _ok(n, "mysql"):
        m = n.mysql
        for op, v in (("inserted", m.rows_inserted), ("updated", m.rows_updated),
                      ("deleted", m.rows_deleted), ("read", m.rows_read)):
            if v is not None:
                yield (op, m.row_counters or ""), float(v)


def _channels(get: Callable[[Any], float | int | bool | None]
              ) -> Callable[[NodeTick], Iterator[Sample]]:
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "mysql"):
            mariadb = n.mysql.flavour == "mariadb"
            for ch in n.mysql.replication:
                v = get(ch)
                if v is not None:  # MariaDB names connections, MySQL channels
                    name = ch.name or ""
                    yield ("" if mariadb else name, name if mariadb else "",
                           ch.source_host or ""), float(v)
    return fn


_YES = ("ON", "1", "YES", "TRUE")
_NUMERIC_VARIABLES = ("auto_increment_increment", "auto_increment_offset", "server_id",
                      "sync_binlog", "innodb_flush_log_at_trx_commit", "max_connections",
                      "innodb_buffer_pool_size")
_FLAG_VARIABLES = ("read_only", "super_read_only", "log_bin", "rpl_semi_sync_master_enabled",
                   "rpl_semi_sync_source_enabled", "rpl_semi_sync_slave_enabled",
                   "rpl_semi_sync_replica_enabled")


def _variable(name: str) -> Callable[[PairState], Iterable[Sample]]:
    def get(m: MysqlSample) -> float | None:
        v = m.variables.get(name)
        if v is None:
            return None
        if name in _FLAG_VARIABLES:
            return float(str(v).upper() in _YES)
        try:
            return float(v)
        except ValueError:
            return None
    return _one("mysql", get)


def _my_info(n: NodeTick) -> Iterator[Sample]:
    if _ok(n, "mysql") and n.mysql.version:
        yield (n.mysql.version, n.mysql.flavour or ""), 1.0


# Redis: redis_exporter's names
_REDIS_COUNTERS = (
    ("total_commands_processed", "commands_processed", "redis_commands_processed_total"),
    ("total_connections_received", "connections_received", "redis_connections_received_total"),
    ("rejected_connections", "rejected_connections", "redis_rejected_connections_total"),
    ("expired_keys", "expired_keys", "redis_expired_keys_total"),
    ("evicted_keys", "evicted_keys", "redis_evicted_keys_total"),
    ("keyspace_hits", "keyspace_hits", "redis_keyspace_hits_total"),
    ("keyspace_misses", "keyspace_misses", "redis_keyspace_misses_total"),
    ("total_net_input_bytes", "net_input_bytes", "redis_net_input_bytes_total"),
    ("total_net_output_bytes", "net_output_bytes", "redis_net_output_bytes_total"),
    ("sync_full", "replica_resyncs_full", "redis_replica_resyncs_full"),
    ("sync_partial_ok", "replica_partial_resync_accepted",
     "redis_replica_partial_resync_accepted"),
    ("sync_partial_err", "replica_partial_resync_denied", "redis_replica_partial_resync_denied"),
)


def _redis_counter(field: str) -> Callable[[PairState], Iterable[Sample]]:
    return _one("redis", lambda r: r.counters.get(field))


def _redis_replicas(get: Callable[[Any], float | int | None]
                    ) -> Callable[[NodeTick], Iterator[Sample]]:
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "redis"):
            for rep in n.redis.replicas:
                v = get(rep)
                if v is not None:
                    yield (rep.ip or "", str(rep.port or ""), rep.state or ""), float(v)
    return fn


_NOT_IN_REDIS_EXPORTER = {"instantaneous_ops_per_second", "total_system_memory_bytes",
                          "repl_backlog_size_bytes"}
"""Gauges the Debian redis_exporter (1.x) does not export under a name of its own."""


def _redis_master(get: Callable[[Any], float | int | bool | None]
                  ) -> Callable[[NodeTick], Iterator[Sample]]:
    """A replica's value, labelled with the master it follows (as redis_exporter)."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "redis") and n.redis.master_host is not None:
            v = get(n.redis)
            if v is not None:
                yield (n.redis.master_host, str(n.redis.master_port or "")), float(v)
    return fn


def _redis_lag_bytes(n: NodeTick) -> Iterator[Sample]:
    for addr, v in n.rates.redis.replica_lag_bytes.items():
        if v is not None:
            yield (addr,), float(v)


def _redis_info(n: NodeTick) -> Iterator[Sample]:
    if _ok(n, "redis"):
        r = n.redis
        yield (str(r.role or ""), r.version or "", r.maxmemory_policy or "", r.server), 1.0


# DRBD: drbd-reactor's shapes
def _drbd(fn: Callable[[Any], Iterator[Sample]]) -> Callable[[NodeTick], Iterator[Sample]]:
    def read(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "drbd"):
            for r in n.drbd.resources:
                yield from fn(r)
    return read


def _drbd_role(r: Any) -> Iterator[Sample]:
    if r.role:
        yield (r.name, r.role), 1.0


def _drbd_suspended(r: Any) -> Iterator[Sample]:
    if r.suspended is not None:
        yield (r.name,), float(bool(r.suspended))


def _label(v: object) -> str:
    return "" if v is None else str(v)


def _emit(base: tuple[str, ...], v: Any, state: bool) -> Iterator[Sample]:
    """A number as itself, or a state (a string) as its label with the value 1."""
    if state:
        if v:
            yield (*base, str(v)), 1.0
    elif v is not None:
        yield base, float(v)


def _drbd_conn(get: Callable[[Any], Any], state: bool = False
               ) -> Callable[[Any], Iterator[Sample]]:
    def fn(r: Any) -> Iterator[Sample]:
        for c in r.connections:
            yield from _emit((r.name, c.peer or "", _label(c.peer_node_id)), get(c), state)
    return fn


def _drbd_dev(get: Callable[[Any], Any], state: bool = False
              ) -> Callable[[Any], Iterator[Sample]]:
    def fn(r: Any) -> Iterator[Sample]:
        for d in r.devices:
            yield from _emit((r.name, _label(d.volume), _label(d.minor)), get(d), state)
    return fn


def _drbd_peer(get: Callable[[Any], Any], state: bool = False
               ) -> Callable[[Any], Iterator[Sample]]:
    def fn(r: Any) -> Iterator[Sample]:
        for c in r.connections:
            for p in c.peer_devices:
                base = (r.name, c.peer or "", _label(c.peer_node_id), _label(p.volume))
                yield from _emit(base, get(p), state)
    return fn


def _kib(v: int | None) -> float | None:
    return None if v is None else v * 1024.0


# Host: node_exporter's names
_CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def _cpu(n: NodeTick) -> Iterator[Sample]:
    if _ok(n, "host") and n.host.cpu is not None:
        for mode in _CPU_MODES:
            yield (mode,), getattr(n.host.cpu, mode) / USER_HZ


def _mem(field: str) -> Callable[[PairState], Iterable[Sample]]:
    return _one("host", lambda h: None if h.mem is None else getattr(h.mem, field))


def _vm(field: str) -> Callable[[PairState], Iterable[Sample]]:
    return _one("host", lambda h: None if h.vm is None else getattr(h.vm, field))


def _disk(get: Callable[[Any], float | int | None]) -> Callable[[NodeTick], Iterator[Sample]]:
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "host"):
            for name, d in n.host.disks.items():
                v = get(d)
                if v is not None:
                    yield (name,), float(v)
    return fn


def _nic(get: Callable[[Any], float | int | None]) -> Callable[[NodeTick], Iterator[Sample]]:
    def fn(n: NodeTick) -> Iterator[Sample]:
        if _ok(n, "host"):
            for name, c in n.host.nics.items():
                v = get(c)
                if v is not None:
                    yield (name,), float(v)
    return fn


# Findings and replmon itself
def _findings(s: PairState) -> Iterator[Sample]:
    for f in s.findings:
        yield (s.pair, f.node, f.check, f.key, f.severity.label), 1.0


def _findings_open(s: PairState) -> Iterator[Sample]:
    for sev in (Severity.CRITICAL, Severity.WARNING, Severity.INFO):
        yield (s.pair, sev.label), float(sum(f.severity is sev for f in s.findings))


def _flaps(s: PairState) -> Iterator[Sample]:
    for f in s.findings:
        if f.flaps:
            yield (s.pair, f.node, f.check, f.key), float(f.flaps)


def _pair(get: Callable[[PairState], float | int | None]
          ) -> Callable[[PairState], Iterator[Sample]]:
    def fn(s: PairState) -> Iterator[Sample]:
        v = get(s)
        if v is not None:
            yield (s.pair,), float(v)
    return fn


# --- the table -------------------------------------------------------------------------

CH = ("channel_name", "connection_name", "master_host")
MASTER = ("master_host", "master_port")
SLAVE = ("slave_ip", "slave_port", "slave_state")
CONN = ("name", "conn_name", "peer_node_id")
DEV = ("name", "volume", "minor")
PEER = ("name", "conn_name", "peer_node_id", "volume")


def _families() -> list[Family]:
    f: list[Family] = []

    def add(name: str, kind: str, help_: str, labels: Sequence[str], like: str,
            read: Callable[[PairState], Iterable[Sample]], per_node_: bool = True,
            live: bool = False) -> None:
        f.append(Family(name, kind, help_, tuple(labels), like, read, per_node_, live))

    def node(name: str, kind: str, help_: str, labels: Sequence[str], like: str,
             fn: Callable[[NodeTick], Iterable[Sample]]) -> None:
        add(name, kind, help_, labels, like, per_node(fn))

    # sources
    node("replmon_source_up", "gauge", "1 when the source's last sample is ok, else 0 "
         "(switched-off sources have no series).", ["source"], "mysql_up, redis_up", _source_up)
    node("replmon_source_state", "gauge", "1 with the source's current state (ok, unreachable, "
         "auth, timeout, absent, parse_error, error) as the state label: one series per source.",
         ["source", "state"], "", _source_state)
    add("replmon_source_last_sample_age_seconds", "gauge",
        "Seconds since the source's last sample was taken.", ["source"], "",
        per_node(_source_age), live=True)
    node("replmon_source_duration_seconds", "gauge",
         "Seconds the source's last sample took.", ["source"],
         "mysql_exporter_collector_duration_seconds", _source_duration)
    node("replmon_source_rtt_seconds", "gauge",
         "Round trip of a trivial command (SELECT 1, PING) in the last sample, seconds.",
         ["source"], "", _source_rtt)
    # MySQL
    for prefix, label in _MY_LABELLED:
        like = {"command": "mysql_global_status_commands_total",
                "handler": "mysql_global_status_handlers_total",
                "operation": "mysql_global_status_innodb_row_ops_total"}[label]
        node(like.replace("mysql_", "replmon_mysql_", 1).removesuffix("_total"), "counter",
             f"SHOW GLOBAL STATUS {prefix}* counters, by {label}.", [label], like,
             _my_labelled(prefix))
    f.append(Family("replmon_mysql_global_status", "untyped",
                    "SHOW GLOBAL STATUS <name>: the other status values replmon reads "
                    "(counters and gauges), one family per lower-case name.", ("name",),
                    "mysql_global_status_<name>", per_node(_my_other), split=True))
    node("replmon_mysql_rows", "counter", "Rows inserted, updated (changed), deleted and read, "
         "from InnoDB's counters or, where the server has none (MariaDB 10.11), the Handler "
         "counters; `family` says which.", ["operation", "family"], "", _my_rows)
    node("replmon_mysql_slave_status_slave_io_running", "gauge",
         "1 when the replication channel's IO (receiver) thread runs (0 while it is "
         "Connecting).", CH,
         "mysql_slave_status_slave_io_running", _channels(lambda c: c.io_running == "Yes"))
    node("replmon_mysql_slave_status_slave_sql_running", "gauge",
         "1 when the replication channel's SQL (applier) thread runs.", CH,
         "mysql_slave_status_slave_sql_running", _channels(lambda c: c.sql_running))
    node("replmon_mysql_slave_status_seconds_behind_master", "gauge",
         "Seconds_Behind_Master (no series while it is NULL: a thread is down).", CH,
         "mysql_slave_status_seconds_behind_master", _channels(lambda c: c.seconds_behind))
    node("replmon_mysql_slave_status_sql_delay", "gauge", "SQL_Delay, seconds (a delayed "
         "replica is behind by design).", CH, "mysql_slave_status_sql_delay",
         _channels(lambda c: c.sql_delay))
    node("replmon_mysql_slave_status_last_io_errno", "gauge", "Last_IO_Errno (0: none).", CH,
         "mysql_slave_status_last_io_errno", _channels(lambda c: c.last_io_errno))
    node("replmon_mysql_slave_status_last_sql_errno", "gauge", "Last_SQL_Errno (0: none).", CH,
         "mysql_slave_status_last_sql_errno", _channels(lambda c: c.last_sql_errno))
    node("replmon_mysql_slave_status_relay_log_space", "gauge",
         "Relay_Log_Space: bytes of relay logs on the replica (a stopped applier fills the "
         "disk with them).", CH, "mysql_slave_status_relay_log_space",
         _channels(lambda c: c.relay_log_space))
    node("replmon_mysql_slave_status_sql_remaining_delay", "gauge",
         "SQL_Remaining_Delay: seconds a delayed replica still waits on its current event "
         "(no series when it waits on none).", CH, "mysql_slave_status_sql_remaining_delay",
         _channels(lambda c: c.sql_remaining_delay))
    node("replmon_mysql_slave_status_exec_master_log_pos", "gauge",
         "Exec_Master_Log_Pos: bytes of the source's binlog file applied.", CH,
         "mysql_slave_status_exec_master_log_pos", _channels(lambda c: c.exec_source_log_pos))
    node("replmon_mysql_slave_status_read_master_log_pos", "gauge",
         "Read_Master_Log_Pos: bytes of the source's binlog file received.", CH,
         "mysql_slave_status_read_master_log_pos", _channels(lambda c: c.read_source_log_pos))
    for v in (*_FLAG_VARIABLES, *_NUMERIC_VARIABLES):
        add(f"replmon_mysql_global_variables_{v}", "gauge",
            f"SHOW GLOBAL VARIABLES {v}" + (" (1 = ON)." if v in _FLAG_VARIABLES else "."),
            [], f"mysql_global_variables_{v}", _variable(v))
    node("replmon_mysql_version_info", "gauge", "The server's version and flavour (always 1).",
         ["version", "flavour"], "mysql_version_info", _my_info)
    # Redis
    for field, short, like in _REDIS_COUNTERS:
        add(f"replmon_redis_{short}", "counter", f"INFO {field}.", [], like,
            _redis_counter(field))
    redis_gauges: list[tuple[str, str, str, Callable[[Any], Any]]] = [
        ("instantaneous_ops_per_second", "Redis's own ops/s over its last ~1.6 s (INFO "
         "instantaneous_ops_per_sec).", "redis_instantaneous_ops_per_sec",
         lambda r: r.instantaneous_ops_per_sec),
        ("connected_clients", "INFO connected_clients.", "redis_connected_clients",
         lambda r: r.connected_clients),
        ("blocked_clients", "INFO blocked_clients.", "redis_blocked_clients",
         lambda r: r.blocked_clients),
        ("memory_used_bytes", "INFO used_memory, bytes.", "redis_memory_used_bytes",
         lambda r: r.used_memory),
        ("memory_used_rss_bytes", "INFO used_memory_rss, bytes.", "redis_memory_used_rss_bytes",
         lambda r: r.used_memory_rss),
        ("memory_max_bytes", "INFO maxmemory, bytes (0: no limit).", "redis_memory_max_bytes",
         lambda r: r.maxmemory),
        ("total_system_memory_bytes", "INFO total_system_memory, bytes.",
         "redis_total_system_memory_bytes", lambda r: r.total_system_memory),
        ("master_repl_offset", "The master's replication offset, bytes.",
         "redis_master_repl_offset", lambda r: r.master_repl_offset),
        ("connected_slaves", "Replicas connected to this master.", "redis_connected_slaves",
         lambda r: r.connected_replicas),
        ("repl_backlog_size_bytes", "repl_backlog_size: how much outage a partial resync "
         "covers, bytes.", "redis_repl_backlog_size", lambda r: r.repl_backlog_size),
    ]
    for short, help_, like, get in redis_gauges:
        add(f"replmon_redis_{short}", "gauge", help_, [],
            like if short not in _NOT_IN_REDIS_EXPORTER else "", _one("redis", get))
    replica_side: list[tuple[str, str, Callable[[Any], Any]]] = [
        ("master_link_up", "1 while the replica's link to its master is up.",
         lambda r: None if r.link_status is None else r.link_status == "up"),
        ("master_last_io_seconds_ago", "Seconds since the replica last heard from its "
         "master (no series while Redis reports -1: not connected).",
         lambda r: r.last_io_seconds_ago if (r.last_io_seconds_ago or 0) >= 0 else None),
        ("master_sync_in_progress", "1 while the replica loads a full sync.",
         lambda r: r.sync_in_progress),
        ("slave_repl_offset", "The replica's replication offset, bytes.",
         lambda r: r.repl_offset),
    ]
    for short, help_, get in replica_side:
        node(f"replmon_redis_{short}", "gauge", help_, MASTER, f"redis_{short}",
             _redis_master(get))
    node("replmon_redis_connected_slave_offset_bytes", "gauge", "Offset each replica "
         "acknowledged, as its master lists it (slaveN), bytes.", SLAVE,
         "redis_connected_slave_offset_bytes", _redis_replicas(lambda r: r.offset))
    node("replmon_redis_connected_slave_lag_seconds", "gauge", "Seconds since each replica's "
         "last ack, as its master lists it.", SLAVE, "redis_connected_slave_lag_seconds",
         _redis_replicas(lambda r: r.lag_s))
    node("replmon_redis_replica_lag_bytes", "gauge", "The master's offset minus what the "
         "replica at addr acknowledged (replmon's own, on the master's node).", ["addr"], "",
         _redis_lag_bytes)
    node("replmon_redis_instance_info", "gauge", "Role, version, maxmemory policy and server "
         "(redis or valkey; redis_version is then Valkey's own version) (always 1).",
         ["role", "redis_version", "maxmemory_policy", "server"], "redis_instance_info",
         _redis_info)
    # DRBD
    node("replmon_drbd_resource_role", "gauge", "1 for the resource's role here.",
         ["name", "drbd_role"], "drbd_resource_role", _drbd(_drbd_role))
    node("replmon_drbd_resource_suspended", "gauge", "1 while application I/O is suspended.",
         ["name"], "drbd_resource_suspended", _drbd(_drbd_suspended))
    node("replmon_drbd_connection_state", "gauge", "1 for the connection's state.",
         [*CONN, "drbd_connection_state"], "drbd_connection_state",
         _drbd(_drbd_conn(lambda c: c.connection_state, state=True)))
    node("replmon_drbd_connection_congested", "gauge", "1 while the TCP send buffer is over "
         "80 % full.", CONN, "drbd_connection_congested",
         _drbd(_drbd_conn(lambda c: c.congested)))
    node("replmon_drbd_connection_apinflight_bytes", "gauge", "Application writes sent and "
         "not yet acknowledged, bytes.", CONN, "drbd_connection_apinflight_bytes",
         _drbd(_drbd_conn(lambda c: None if c.ap_in_flight_sectors is None
                          else c.ap_in_flight_sectors * 512)))
    node("replmon_drbd_device_state", "gauge", "1 for the local disk's state.",
         [*DEV, "drbd_disk_state"], "drbd_device_state",
         _drbd(_drbd_dev(lambda d: d.disk_state, state=True)))
    node("replmon_drbd_device_written_bytes", "counter", "Bytes written to the device.", DEV,
         "drbd_device_written_bytes_total", _drbd(_drbd_dev(lambda d: _kib(d.written_kib))))
    node("replmon_drbd_device_read_bytes", "counter", "Bytes read from the device.", DEV,
         "drbd_device_read_bytes_total", _drbd(_drbd_dev(lambda d: _kib(d.read_kib))))
    node("replmon_drbd_device_upperpending", "gauge", "Application requests not yet answered "
         "by DRBD (8.4 ap).", DEV, "drbd_device_upperpending",
         _drbd(_drbd_dev(lambda d: d.upper_pending)))
    node("replmon_drbd_device_lowerpending", "gauge", "Requests to the backing disk not yet "
         "completed (8.4 lo).", DEV, "drbd_device_lowerpending",
         _drbd(_drbd_dev(lambda d: d.lower_pending)))
    node("replmon_drbd_peerdevice_replication_state", "gauge", "1 for the peer device's "
         "replication state.", [*PEER, "drbd_replication_state"], "",
         _drbd(_drbd_peer(lambda p: p.replication_state, state=True)))
    node("replmon_drbd_peerdevice_peer_disk_state", "gauge", "1 for the peer's disk state "
         "as this node sees it.", [*PEER, "drbd_peer_disk_state"], "",
         _drbd(_drbd_peer(lambda p: p.peer_disk_state, state=True)))
    node("replmon_drbd_peerdevice_outofsync_bytes", "gauge", "Bytes out of sync with the "
         "peer.", PEER, "drbd_peerdevice_outofsync_bytes",
         _drbd(_drbd_peer(lambda p: _kib(p.out_of_sync_kib))))
    node("replmon_drbd_peerdevice_sent_bytes", "counter", "Bytes sent to the peer.", PEER,
         "drbd_peerdevice_sent_bytes", _drbd(_drbd_peer(lambda p: _kib(p.sent_kib))))
    node("replmon_drbd_peerdevice_received_bytes", "counter", "Bytes received from the peer.",
         PEER, "drbd_peerdevice_received_bytes",
         _drbd(_drbd_peer(lambda p: _kib(p.received_kib))))
    node("replmon_drbd_peerdevice_pending", "gauge", "Requests sent to the peer, not yet "
         "answered (8.4 pe).", PEER, "", _drbd(_drbd_peer(lambda p: p.pending)))
    node("replmon_drbd_peerdevice_unacked", "gauge", "Requests received from the peer, not "
         "yet acknowledged (8.4 ua).", PEER, "", _drbd(_drbd_peer(lambda p: p.unacked)))
    node("replmon_drbd_peerdevice_in_sync_ratio", "gauge", "Share of the device in sync "
         "(resync progress), 0-1.", PEER, "",
         _drbd(_drbd_peer(lambda p: None if p.percent_in_sync is None
                          else p.percent_in_sync / 100)))
    # host
    node("replmon_node_cpu_seconds", "counter", "CPU time summed over all CPUs, by mode "
         "(no cpu label: replmon reads the aggregate line).", ["mode"],
         "node_cpu_seconds_total", _cpu)
    for w in ("load1", "load5", "load15"):
        add(f"replmon_node_{w}", "gauge", f"{w[4:]}-minute load average.", [], f"node_{w}",
            _one("host", operator.attrgetter(w)))
    for field, mem in (("total", "MemTotal"), ("available", "MemAvailable"),
                       ("free", "MemFree"), ("cached", "Cached"), ("dirty", "Dirty"),
                       ("swap_total", "SwapTotal"), ("swap_free", "SwapFree")):
        # snake_case (promtool's lint) where node_exporter keeps /proc/meminfo's CamelCase
        snake = {"total": "mem_total", "available": "mem_available", "free": "mem_free",
                 "swap_total": "swap_total", "swap_free": "swap_free"}.get(field, field)
        add(f"replmon_node_memory_{snake}_bytes", "gauge", f"/proc/meminfo {mem}, bytes.", [],
            f"node_memory_{mem}_bytes", _mem(field))
    for field in ("pswpin", "pswpout", "pgfault", "pgmajfault", "oom_kill"):
        add(f"replmon_node_vmstat_{field}", "untyped", f"/proc/vmstat {field} (a counter).",
            [], f"node_vmstat_{field}", _vm(field))
    disks: list[tuple[str, str, Callable[[Any], Any]]] = [
        ("reads_completed", "Reads completed.", lambda d: d.reads),
        ("writes_completed", "Writes completed.", lambda d: d.writes),
        ("read_bytes", "Bytes read.", lambda d: d.read_bytes),
        ("written_bytes", "Bytes written.", lambda d: d.write_bytes),
        ("io_time_seconds", "Seconds with I/O in flight (util = its rate).",
         lambda d: d.io_ms / 1000),
        ("io_time_weighted_seconds", "Seconds spent in I/O, weighted by requests in flight.",
         lambda d: d.weighted_ms / 1000),
    ]
    for short, help_, get in disks:
        node(f"replmon_node_disk_{short}", "counter", help_, ["device"],
             f"node_disk_{short}_total", _disk(get))
    node("replmon_node_disk_io_now", "gauge", "Requests in flight.", ["device"],
         "node_disk_io_now", _disk(lambda d: d.in_flight))
    nics: list[tuple[str, str, str, Callable[[Any], Any]]] = [
        ("receive_bytes", "counter", "Bytes received.", lambda c: c.rx_bytes),
        ("transmit_bytes", "counter", "Bytes sent.", lambda c: c.tx_bytes),
        ("receive_errs", "counter", "Receive errors.", lambda c: c.rx_errors),
        ("transmit_errs", "counter", "Transmit errors.", lambda c: c.tx_errors),
        ("receive_drop", "counter", "Received packets dropped.", lambda c: c.rx_drops),
        ("transmit_drop", "counter", "Sent packets dropped.", lambda c: c.tx_drops),
        ("speed_bytes", "gauge", "Link speed, bytes/s (no series when the NIC has none).",
         lambda c: None if not c.speed_mbps or c.speed_mbps < 0 else c.speed_mbps * 125_000),
    ]
    for short, kind, help_, get in nics:
        node(f"replmon_node_network_{short}", kind, help_, ["device"],
             f"node_network_{short}" + ("_total" if kind == "counter" else ""), _nic(get))
    add("replmon_link_rtt_seconds", "gauge", "The primary's TCP connect time to the replica's "
        "replication port (replmon's own timing of the link).", [], "",
        _one("host", lambda h: None if h.peer_rtt_ms is None else h.peer_rtt_ms / 1000))
    # findings and replmon itself
    add("replmon_finding", "gauge", "1 for each open finding (gone when it closes); title, "
        "numbers, cause and next step are on /findings.json.",
        ["pair", "node", "check", "key", "severity"], "", _findings, per_node_=False)
    add("replmon_findings_open", "gauge", "Open findings of the pair, by severity.",
        ["pair", "severity"], "", _findings_open, per_node_=False)
    add("replmon_finding_flaps", "gauge", "Openings of a flapping finding in the engine's flap "
        "window (no series when it does not flap).", ["pair", "node", "check", "key"], "",
        _flaps, per_node_=False)
    add("replmon_ticks", "counter", "Ticks the pair's collector made.", ["pair"], "",
        _pair(lambda s: s.ticks_total), per_node_=False)
    add("replmon_ticks_late", "counter", "Ticks that started late or after missed slots.",
        ["pair"], "", _pair(lambda s: s.late_total), per_node_=False)
    add("replmon_ticks_missed", "counter", "Schedule slots skipped because a tick overran.",
        ["pair"], "", _pair(lambda s: s.missed_total), per_node_=False)
    add("replmon_pair_last_tick_age_seconds", "gauge", "Seconds since the pair's last tick "
        "(a pair that stopped reporting grows here).", ["pair"], "",
        _pair(lambda s: s.age_s()), per_node_=False, live=True)
    add("replmon_pair_interval_seconds", "gauge", "The pair's sampling interval, seconds.",
        ["pair"], "", _pair(lambda s: s.interval), per_node_=False)
    return f


FAMILIES = _families()
TICK_DURATION = Family("replmon_tick_duration_seconds", "histogram", "Seconds a tick took "
                       "to sample both nodes.", ("pair",), "", lambda s: (), per_node=False)
BUILD_INFO = Family("replmon_build_info", "gauge", "replmon's version (always 1).",
                    ("version",), "", lambda s: (), per_node=False)

def _split(fam: Family, states: Sequence[PairState]) -> Iterator[Metric]:
    """``fam`` as one family per value of its first own label."""
    at = len(fam.all_labels) - len(fam.labels)
    rest = fam.all_labels[:at] + fam.all_labels[at + 1:]
    out: dict[str, Any] = {}  # name -> its metric family
    for s in states:
        for labels, v in fam.read(s):
            key = labels[at]
            m = out.get(key)
            if m is None:
                m = out[key] = _KINDS[fam.kind](f"{fam.name}_{key}", fam.help.replace(
                    "<name>", key, 1), labels=rest)
            m.add_metric(labels[:at] + labels[at + 1:], v)
    for key in sorted(out):
        yield out[key]


_KINDS: dict[str, Any] = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily,
                          "untyped": UnknownMetricFamily}


def collect(states: Sequence[PairState], live: bool) -> Iterator[Metric]:
    """The table's families over every pair (those with no sample are left out): the
    scrape-time ones (``live``) or the per-tick ones."""
    for fam in FAMILIES:
        if fam.live is not live:
            continue
        if fam.split:
            yield from _split(fam, states)
            continue
        m = _KINDS[fam.kind](fam.name, fam.help, labels=fam.all_labels)
        for s in states:
            for labels, v in fam.read(s):
                if not math.isnan(v):
                    m.add_metric(labels, v)
        if m.samples:
            yield m


class FleetCollector(Collector):
    """prometheus_client collector over the pairs' states: the per-tick families, or
    (``live``) the scrape-time ones with replmon's histogram and build info."""

    def __init__(self, states: Sequence[PairState], live: bool) -> None:
        self.states = list(states)
        self.live = live

    def collect(self) -> Iterator[Metric]:
        yield from collect(self.states, self.live)
        if self.live:
            yield from _own(self.states)


Blocks = dict[str, tuple[str, str]]
"""Metric name -> (its HELP and TYPE lines, its sample lines), as prometheus_client
wrote them."""


def _blocks(text: str) -> Blocks:
    out: Blocks = {}
    name, head, body = "", [], []  # type: ignore[var-annotated]
    for line in text.splitlines(keepends=True):
        if line.startswith("# HELP "):
            if name:
                out[name] = ("".join(head), "".join(body))
            name, head, body = line.split(" ", 3)[2], [line], []
        elif line.startswith("#"):
            head.append(line)
        else:
            body.append(line)
    if name:
        out[name] = ("".join(head), "".join(body))
    return out


def render_pair(state: PairState) -> Blocks:
    """One pair's per-tick families, formatted by prometheus_client (once per tick, so a
    scrape of fifty pairs only joins text)."""
    return _blocks(generate_latest(FleetCollector([state], live=False)).decode())


def exposition(states: Sequence[PairState]) -> bytes:
    """The /metrics page: every pair's per-tick blocks (``state.blocks``, rendered by
    ``render_pair`` when the tick arrived) merged family by family under one HELP/TYPE,
    then the scrape-time families and replmon's own, formatted by prometheus_client."""
    parts: list[str] = []
    cached = [s.blocks for s in states if s.blocks]
    static = {f.exposed for f in FAMILIES}
    for fam in FAMILIES:
        if fam.live:
            continue
        if fam.split:  # its families, whatever names each pair had, in one order
            prefix = fam.name + "_"
            names = sorted({k for b in cached for k in b
                            if k.startswith(prefix) and k not in static})
            for name in names:
                bodies = [b[name] for b in cached if name in b]
                parts.append(bodies[0][0])
                parts.extend(body for _, body in bodies)
            continue
        bodies = [b[fam.exposed] for b in cached if fam.exposed in b]
        if bodies:
            parts.append(bodies[0][0])
            parts.extend(body for _, body in bodies)
    parts.append(generate_latest(FleetCollector(states, live=True)).decode())
    return "".join(parts).encode()


def _own(states: Sequence[PairState]) -> Iterator[Metric]:
    h = HistogramMetricFamily(TICK_DURATION.name, TICK_DURATION.help, labels=["pair"])
    for s in states:
        if s.ticks_total:
            h.add_metric([s.pair], s.durations.buckets(), s.durations.total)
    yield h
    b = GaugeMetricFamily(BUILD_INFO.name, BUILD_INFO.help, labels=["version"])
    b.add_metric([__version__], 1.0)
    yield b


def metrics_doc() -> str:
    """docs/metrics.md."""
    head = """# Metrics of `replmon serve`

Generated by `python -m replmon.fleet.metrics > docs/metrics.md` from the table in
`replmon/fleet/metrics.py`; edit the table, not this file.

Every per-node series carries `pair` (the fleet file's pair name), `node` (`primary` or
`replica`) and `host` (the node's name). Labels hold names and states only: a finding's
title, numbers, cause and next step are on `/findings.json`. Counters are counters (use
`rate()`); the `like` column names the exporter metric of the same quantity and shape
(mysqld_exporter, redis_exporter, node_exporter, drbd-reactor), so a dashboard or a query
written for it works with the `replmon_` prefix and the extra labels. A family with no
sample (no DRBD on the pair, a source that is down) is left out of the page.

| metric | type | labels | help | like |
|---|---|---|---|---|
"""
    rows = []
    for fam in [*FAMILIES, TICK_DURATION, BUILD_INFO]:
        labels = ", ".join(f"`{x}`" for x in fam.all_labels)
        rows.append(f"| `{fam.exposed}` | {fam.kind} | {labels} | {fam.help} | "
                    f"{f'`{fam.like}`' if fam.like else 'replmon'} |")
    return head + "\n".join(rows) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(metrics_doc())
