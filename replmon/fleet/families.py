"""What ``replmon serve`` exports: the table of metric families, one row each.

A row is a family's name, type, help, labels, the metric of the usual exporter it mirrors
(``like``) and how its samples are read from a pair's state (fleet/samples.py).
/metrics (fleet/metrics.py) and docs/metrics.md (``python -m replmon.fleet.metrics``)
are both made from this table, and a test keeps the doc current.

Shapes follow the exporters a team already has dashboards for, under ``replmon_``:
mysqld_exporter (``mysql_global_status_commands_total{command}``,
``mysql_slave_status_*``), redis_exporter (``redis_memory_used_bytes``,
``redis_connected_slave_offset_bytes``), node_exporter (``node_cpu_seconds_total{mode}``,
``node_disk_read_bytes_total{device}``) and drbd-reactor's prometheus plugin
(``drbd_connection_state``, ``drbd_peerdevice_outofsync_bytes``). Counters are exported
as counters, so PromQL ``rate()`` works; a rate appears only where replmon derives it
itself. Every per-node series has ``pair``, ``node`` (primary/replica: the node's role
now, as the servers say it, so it changes at a switchover) and ``host`` (its name, which
does not); ``replmon_node_role_info`` says both, and the role the fleet file gave.
Labels hold names and states only, never numbers or free text: titles, causes and
numbers of the findings are on /findings.json.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from replmon.fleet import samples as read
from replmon.fleet.samples import NodeReader, PairReader, per_node

NODE = ("pair", "node", "host")


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
    read: PairReader
    per_node: bool = True
    live: bool = False
    """Depends on the time of the scrape (ages): computed then, not once per tick."""
    split: bool = False
    """One family per value of the first label, named ``<name>_<value>`` (as
    mysqld_exporter has one ``mysql_global_status_<name>`` family per status name)."""
    group: str = ""
    """The opt-in group the family belongs to ("": every pair exports it)."""
    split_groups: tuple[tuple[str, str], ...] = ()
    """For a split family: (value prefix, opt-in group) of the values exported only with
    that group (``innodb_`` status values: ``innodb``)."""

    def key_group(self, key: str) -> str:
        """The opt-in group of a split family's value ``key`` ("": exported always)."""
        for prefix, group in self.split_groups:
            if key.startswith(prefix):
                return group
        return self.group

    @property
    def exposed(self) -> str:
        return self.name + "_total" if self.kind == "counter" else self.name

    @property
    def all_labels(self) -> tuple[str, ...]:
        return (*NODE, *self.labels) if self.per_node else self.labels


def node(name: str, kind: str, help_: str, labels: Sequence[str], like: str,
         reader: NodeReader, *, live: bool = False, split: bool = False, group: str = "",
         split_groups: tuple[tuple[str, str], ...] = ()) -> Family:
    """A row of one series per node: pair/node/host, then ``labels``."""
    return Family(name, kind, help_, tuple(labels), like, per_node(reader), live=live,
                  split=split, group=group, split_groups=split_groups)


def pair(name: str, kind: str, help_: str, labels: Sequence[str], like: str,
         reader: PairReader, *, live: bool = False) -> Family:
    """A row of the pair's own series: ``labels`` are all of them."""
    return Family(name, kind, help_, tuple(labels), like, reader, per_node=False, live=live)


# --- the rows that repeat one shape ---------------------------------------------------------

MYSQL_LABELLED = (("Com_", "command", "mysql_global_status_commands_total", "mysql_commands"),
                  ("Handler_", "handler", "mysql_global_status_handlers_total",
                   "mysql_handlers"),
                  ("Innodb_rows_", "operation", "mysql_global_status_innodb_row_ops_total",
                   "innodb"))
"""mysqld_exporter's three labelled counter families: status name prefix, label, name, and
the opt-in group each is in."""
FLAG_VARIABLES = ("read_only", "super_read_only", "log_bin", "rpl_semi_sync_master_enabled",
                  "rpl_semi_sync_source_enabled", "rpl_semi_sync_slave_enabled",
                  "rpl_semi_sync_replica_enabled")
NUMERIC_VARIABLES = ("auto_increment_increment", "auto_increment_offset", "server_id",
                     "sync_binlog", "innodb_flush_log_at_trx_commit", "max_connections",
                     "innodb_buffer_pool_size")
REDIS_COUNTERS = (  # INFO field, name after replmon_redis_, like
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
REDIS_GAUGES: tuple[tuple[str, str, str, Callable[[Any], Any]], ...] = (
    # like "": the Debian redis_exporter (1.x) has no name of its own for it
    ("instantaneous_ops_per_second", "Redis's own ops/s over its last ~1.6 s (INFO "
     "instantaneous_ops_per_sec).", "", lambda x: x.instantaneous_ops_per_sec),
    ("connected_clients", "INFO connected_clients.", "redis_connected_clients",
     lambda x: x.connected_clients),
    ("blocked_clients", "INFO blocked_clients.", "redis_blocked_clients",
     lambda x: x.blocked_clients),
    ("memory_used_bytes", "INFO used_memory, bytes.", "redis_memory_used_bytes",
     lambda x: x.used_memory),
    ("memory_used_rss_bytes", "INFO used_memory_rss, bytes.", "redis_memory_used_rss_bytes",
     lambda x: x.used_memory_rss),
    ("memory_max_bytes", "INFO maxmemory, bytes (0: no limit).", "redis_memory_max_bytes",
     lambda x: x.maxmemory),
    ("total_system_memory_bytes", "INFO total_system_memory, bytes.", "",
     lambda x: x.total_system_memory),
    ("master_repl_offset", "The master's replication offset, bytes.",
     "redis_master_repl_offset", lambda x: x.master_repl_offset),
    ("connected_slaves", "Replicas connected to this master.", "redis_connected_slaves",
     lambda x: x.connected_replicas),
    ("repl_backlog_size_bytes", "repl_backlog_size: how much outage a partial resync "
     "covers, bytes.", "", lambda x: x.repl_backlog_size),
)
REDIS_REPLICA_SIDE: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("master_link_up", "1 while the replica's link to its master is up.",
     lambda x: None if x.link_status is None else x.link_status == "up"),
    ("master_last_io_seconds_ago", "Seconds since the replica last heard from its "
     "master (no series while Redis reports -1: not connected).",
     lambda x: x.last_io_seconds_ago if (x.last_io_seconds_ago or 0) >= 0 else None),
    ("master_sync_in_progress", "1 while the replica loads a full sync.",
     lambda x: x.sync_in_progress),
    ("slave_repl_offset", "The replica's replication offset, bytes.", lambda x: x.repl_offset),
)
MEMINFO = (  # field of the host sample, /proc/meminfo name, name after replmon_node_memory_:
    # snake_case (promtool's lint) where node_exporter keeps /proc/meminfo's CamelCase
    ("total", "MemTotal", "mem_total"), ("available", "MemAvailable", "mem_available"),
    ("free", "MemFree", "mem_free"), ("cached", "Cached", "cached"),
    ("dirty", "Dirty", "dirty"), ("swap_total", "SwapTotal", "swap_total"),
    ("swap_free", "SwapFree", "swap_free"),
)
DISK_COUNTERS: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("reads_completed", "Reads completed.", lambda d: d.reads),
    ("writes_completed", "Writes completed.", lambda d: d.writes),
    ("read_bytes", "Bytes read.", lambda d: d.read_bytes),
    ("written_bytes", "Bytes written.", lambda d: d.write_bytes),
    ("io_time_seconds", "Seconds with I/O in flight (util = its rate).",
     lambda d: d.io_ms / 1000),
    ("io_time_weighted_seconds", "Seconds spent in I/O, weighted by requests in flight.",
     lambda d: d.weighted_ms / 1000),
)
NIC: tuple[tuple[str, str, str, Callable[[Any], Any], str], ...] = (
    ("receive_bytes", "counter", "Bytes received.", lambda c: c.rx_bytes, ""),
    ("transmit_bytes", "counter", "Bytes sent.", lambda c: c.tx_bytes, ""),
    ("receive_errs", "counter", "Receive errors.", lambda c: c.rx_errors, "netdev_errors"),
    ("transmit_errs", "counter", "Transmit errors.", lambda c: c.tx_errors, "netdev_errors"),
    ("receive_drop", "counter", "Received packets dropped.", lambda c: c.rx_drops,
     "netdev_errors"),
    ("transmit_drop", "counter", "Sent packets dropped.", lambda c: c.tx_drops,
     "netdev_errors"),
    ("speed_bytes", "gauge", "Link speed, bytes/s (no series when the NIC has none).",
     lambda c: None if not c.speed_mbps or c.speed_mbps < 0 else c.speed_mbps * 125_000, ""),
)
CH = ("channel_name", "connection_name", "master_host")
MASTER = ("master_host", "master_port")
SLAVE = ("slave_ip", "slave_port", "slave_state")
CONN = ("name", "conn_name", "peer_node_id")
DEV = ("name", "volume", "minor")
PEER = ("name", "conn_name", "peer_node_id", "volume")


# --- the table, in the order of /metrics and docs/metrics.md --------------------------------

FAMILIES: tuple[Family, ...] = (
    # sources
    node("replmon_source_up", "gauge", "1 when the source's last sample is ok, else 0 "
         "(switched-off sources have no series).", ["source"], "mysql_up, redis_up",
         read.source_up),
    node("replmon_source_state", "gauge", "1 with the source's current state (ok, unreachable, "
         "auth, timeout, absent, parse_error, error) as the state label: one series per source.",
         ["source", "state"], "", read.source_state),
    node("replmon_source_last_sample_age_seconds", "gauge",
         "Seconds since the source's last sample was taken.", ["source"], "", read.source_age,
         live=True),
    node("replmon_source_duration_seconds", "gauge",
         "Seconds the source's last sample took.", ["source"],
         "mysql_exporter_collector_duration_seconds", read.source_duration),
    node("replmon_source_rtt_seconds", "gauge",
         "Round trip of a trivial command (SELECT 1, PING) in the last sample, seconds.",
         ["source"], "", read.source_rtt),
    # roles: which node is the primary now (replmon.roles, Tick.roles)
    pair("replmon_node_role_info", "gauge", "1 with the node's role now as the servers say "
         "it (role: primary or replica, the pair's, which is its first service's; the node "
         "label of every per-node series is the same and changes with it at a switchover, "
         "host stays the node's name), the role the fleet file gave it (given_role), and its "
         "role in each service (mysql_role, redis_role, drbd_role: each service has its own "
         "primary, Redis under Sentinel may fail over alone; empty without that service).",
         ["pair", "node", "host", "role", "given_role", "mysql_role", "redis_role",
          "drbd_role"], "", read.node_roles),
    pair("replmon_pair_role_change_timestamp_seconds", "gauge", "When the pair's primary "
         "last changed (switchover or failover), epoch seconds (no series while it has not "
         "changed since replmon started).", ["pair"], "", read.role_change_time),
    pair("replmon_pair_role_layers_at_odds", "gauge", "Layers (MySQL, Redis, DRBD) at odds "
         "with the pair's primary: naming the other node, or without the direction they "
         "had (0: the roles are consistent; more: a change half done).", ["pair"], "",
         read.role_layers_at_odds),
    # MySQL
    *(node(like.replace("mysql_", "replmon_mysql_", 1).removesuffix("_total"), "counter",
           f"SHOW GLOBAL STATUS {prefix}* counters, by {label}.", [label], like,
           read.mysql_labelled(prefix), group=group)
      for prefix, label, like, group in MYSQL_LABELLED),
    node("replmon_mysql_global_status", "untyped", "SHOW GLOBAL STATUS <name>: the other "
         "status values replmon reads (counters and gauges), one family per lower-case name.",
         ["name"], "mysql_global_status_<name>",
         read.mysql_other(tuple(prefix for prefix, _, _, _ in MYSQL_LABELLED)), split=True,
         split_groups=(("innodb_", "innodb"),)),
    node("replmon_mysql_rows", "counter", "Rows inserted, updated (changed), deleted and read, "
         "from InnoDB's counters or, where the server has none (MariaDB 10.11), the Handler "
         "counters; `family` says which.", ["operation", "family"], "", read.mysql_rows),
    node("replmon_mysql_slave_status_slave_io_running", "gauge",
         "1 when the replication channel's IO (receiver) thread runs (0 while it is "
         "Connecting).", CH,
         "mysql_slave_status_slave_io_running", read.channels(lambda c: c.io_running == "Yes")),
    node("replmon_mysql_slave_status_slave_sql_running", "gauge",
         "1 when the replication channel's SQL (applier) thread runs.", CH,
         "mysql_slave_status_slave_sql_running", read.channels(lambda c: c.sql_running)),
    node("replmon_mysql_slave_status_seconds_behind_master", "gauge",
         "Seconds_Behind_Master (no series while it is NULL: a thread is down).", CH,
         "mysql_slave_status_seconds_behind_master", read.channels(lambda c: c.seconds_behind)),
    node("replmon_mysql_slave_status_sql_delay", "gauge", "SQL_Delay, seconds (a delayed "
         "replica is behind by design).", CH, "mysql_slave_status_sql_delay",
         read.channels(lambda c: c.sql_delay)),
    node("replmon_mysql_slave_status_last_io_errno", "gauge", "Last_IO_Errno (0: none).", CH,
         "mysql_slave_status_last_io_errno", read.channels(lambda c: c.last_io_errno)),
    node("replmon_mysql_slave_status_last_sql_errno", "gauge", "Last_SQL_Errno (0: none).", CH,
         "mysql_slave_status_last_sql_errno", read.channels(lambda c: c.last_sql_errno)),
    node("replmon_mysql_slave_status_relay_log_space", "gauge",
         "Relay_Log_Space: bytes of relay logs on the replica (a stopped applier fills the "
         "disk with them).", CH, "mysql_slave_status_relay_log_space",
         read.channels(lambda c: c.relay_log_space)),
    node("replmon_mysql_slave_status_sql_remaining_delay", "gauge",
         "SQL_Remaining_Delay: seconds a delayed replica still waits on its current event "
         "(no series when it waits on none).", CH, "mysql_slave_status_sql_remaining_delay",
         read.channels(lambda c: c.sql_remaining_delay)),
    node("replmon_mysql_slave_status_exec_master_log_pos", "gauge",
         "Exec_Master_Log_Pos: bytes of the source's binlog file applied.", CH,
         "mysql_slave_status_exec_master_log_pos", read.channels(lambda c: c.exec_source_log_pos)),
    node("replmon_mysql_slave_status_read_master_log_pos", "gauge",
         "Read_Master_Log_Pos: bytes of the source's binlog file received.", CH,
         "mysql_slave_status_read_master_log_pos", read.channels(lambda c: c.read_source_log_pos)),
    pair("replmon_mysql_replica_lag_seconds", "gauge", "The replica's true lag: how old "
         "its data is, from the best source that knows it now (`source`: heartbeat = "
         "pt-heartbeat's table, server = the servers' commit timestamps, history = pair_lag's "
         "readings of both nodes); no series while none knows it.",
         [*NODE, "channel", "source"], "", read.true_lag(lambda x: x.seconds)),
    pair("replmon_mysql_replica_lag_bound_seconds", "gauge", "Seconds the true lag may be off "
         "by (the nodes' clock offset bound, the readings' resolution).",
         [*NODE, "channel", "source"], "", read.true_lag(lambda x: x.bound_s)),
    node("replmon_mysql_heartbeat_stored_timestamp_seconds", "gauge", "pt-heartbeat's ts of "
         "each writer (server_id) as the replica has it, epoch seconds (with a heartbeat "
         "table).", ["server_id"], "mysql_heartbeat_stored_timestamp_seconds",
         read.heartbeat_stored),
    node("replmon_mysql_heartbeat_now_timestamp_seconds", "gauge", "The replica's clock when "
         "it read the heartbeat table, epoch seconds.", [],
         "mysql_heartbeat_now_timestamp_seconds", read.heartbeat_now),
    *(node(f"replmon_mysql_global_variables_{v}", "gauge",
           f"SHOW GLOBAL VARIABLES {v} (1 = ON).", [], f"mysql_global_variables_{v}",
           read.variable(v, flag=True)) for v in FLAG_VARIABLES),
    *(node(f"replmon_mysql_global_variables_{v}", "gauge", f"SHOW GLOBAL VARIABLES {v}.", [],
           f"mysql_global_variables_{v}", read.variable(v, flag=False)) for v in NUMERIC_VARIABLES),
    node("replmon_mysql_client_errors", "counter", "Errors the server raised to clients, "
         "by error number (MySQL 8.0+: performance_schema.events_errors_summary_global_by_"
         "error, the numbers not at 0; 1290 read-only, 1040 too many connections); MariaDB "
         "counts refused connections in replmon_mysql_global_status_connection_errors_*.",
         ["error"], "", read.client_errors("mysql")),
    node("replmon_mysql_version_info", "gauge", "The server's version and flavour (always 1).",
         ["version", "flavour"], "mysql_version_info", read.mysql_info),
    # Redis
    *(node(f"replmon_redis_{short}", "counter", f"INFO {field}.", [], like,
           read.redis_counter(field)) for field, short, like in REDIS_COUNTERS),
    *(node(f"replmon_redis_{short}", "gauge", help_, [], like, read.scalar("redis", get))
      for short, help_, like, get in REDIS_GAUGES),
    node("replmon_redis_errors", "counter", "Error replies sent to clients, by their first "
         "word (INFO errorstats, Redis 6.2+: NOREPLICAS, OOM, MISCONF, READONLY, ...).",
         ["err"], "redis_errors_total", read.client_errors("redis")),
    *(node(f"replmon_redis_{short}", "gauge", help_, MASTER, f"redis_{short}",
           read.redis_master(get)) for short, help_, get in REDIS_REPLICA_SIDE),
    node("replmon_redis_connected_slave_offset_bytes", "gauge", "Offset each replica "
         "acknowledged, as its master lists it (slaveN), bytes.", SLAVE,
         "redis_connected_slave_offset_bytes", read.redis_replicas(lambda x: x.offset)),
    node("replmon_redis_connected_slave_lag_seconds", "gauge", "Seconds since each replica's "
         "last ack, as its master lists it.", SLAVE, "redis_connected_slave_lag_seconds",
         read.redis_replicas(lambda x: x.lag_s)),
    node("replmon_redis_replica_lag_bytes", "gauge", "The master's offset minus what the "
         "replica at addr acknowledged (replmon's own, on the master's node).", ["addr"], "",
         read.redis_lag_bytes),
    pair("replmon_redis_replica_lag_estimate_seconds", "gauge", "The Redis replica's offset "
         "lag in bytes divided by its primary's write rate over the last 10 s: an estimate "
         "(no series while nothing is written and bytes are missing).", NODE, "",
         read.redis_lag_estimate),
    node("replmon_redis_instance_info", "gauge", "Role, version, maxmemory policy and server "
         "(redis or valkey; redis_version is then Valkey's own version) (always 1).",
         ["role", "redis_version", "maxmemory_policy", "server"], "redis_instance_info",
         read.redis_info),
    # DRBD
    node("replmon_drbd_resource_role", "gauge", "1 for the resource's role here.",
         ["name", "drbd_role"], "drbd_resource_role", read.drbd_role),
    node("replmon_drbd_resource_suspended", "gauge", "1 while application I/O is suspended.",
         ["name"], "drbd_resource_suspended", read.drbd_suspended),
    node("replmon_drbd_connection_state", "gauge", "1 for the connection's state.",
         [*CONN, "drbd_connection_state"], "drbd_connection_state",
         read.drbd_conn(lambda c: c.connection_state, state=True)),
    node("replmon_drbd_connection_congested", "gauge", "1 while the TCP send buffer is over "
         "80 % full.", CONN, "drbd_connection_congested",
         read.drbd_conn(lambda c: c.congested)),
    node("replmon_drbd_connection_apinflight_bytes", "gauge", "Application writes sent and "
         "not yet acknowledged, bytes.", CONN, "drbd_connection_apinflight_bytes",
         read.drbd_conn(lambda c: None if c.ap_in_flight_sectors is None
                        else c.ap_in_flight_sectors * 512)),
    node("replmon_drbd_device_state", "gauge", "1 for the local disk's state.",
         [*DEV, "drbd_disk_state"], "drbd_device_state",
         read.drbd_dev(lambda d: d.disk_state, state=True)),
    node("replmon_drbd_device_written_bytes", "counter", "Bytes written to the device.", DEV,
         "drbd_device_written_bytes_total", read.drbd_dev(lambda d: read.kib(d.written_kib))),
    node("replmon_drbd_device_read_bytes", "counter", "Bytes read from the device.", DEV,
         "drbd_device_read_bytes_total", read.drbd_dev(lambda d: read.kib(d.read_kib))),
    node("replmon_drbd_device_upperpending", "gauge", "Application requests not yet answered "
         "by DRBD (8.4 ap).", DEV, "drbd_device_upperpending",
         read.drbd_dev(lambda d: d.upper_pending)),
    node("replmon_drbd_device_lowerpending", "gauge", "Requests to the backing disk not yet "
         "completed (8.4 lo).", DEV, "drbd_device_lowerpending",
         read.drbd_dev(lambda d: d.lower_pending)),
    node("replmon_drbd_peerdevice_replication_state", "gauge", "1 for the peer device's "
         "replication state.", [*PEER, "drbd_replication_state"], "",
         read.drbd_peer(lambda p: p.replication_state, state=True)),
    node("replmon_drbd_peerdevice_peer_disk_state", "gauge", "1 for the peer's disk state "
         "as this node sees it.", [*PEER, "drbd_peer_disk_state"], "",
         read.drbd_peer(lambda p: p.peer_disk_state, state=True)),
    node("replmon_drbd_peerdevice_outofsync_bytes", "gauge", "Bytes out of sync with the "
         "peer.", PEER, "drbd_peerdevice_outofsync_bytes",
         read.drbd_peer(lambda p: read.kib(p.out_of_sync_kib))),
    node("replmon_drbd_peerdevice_sent_bytes", "counter", "Bytes sent to the peer.", PEER,
         "drbd_peerdevice_sent_bytes", read.drbd_peer(lambda p: read.kib(p.sent_kib))),
    node("replmon_drbd_peerdevice_received_bytes", "counter", "Bytes received from the peer.",
         PEER, "drbd_peerdevice_received_bytes",
         read.drbd_peer(lambda p: read.kib(p.received_kib))),
    node("replmon_drbd_peerdevice_pending", "gauge", "Requests sent to the peer, not yet "
         "answered (8.4 pe).", PEER, "", read.drbd_peer(lambda p: p.pending)),
    node("replmon_drbd_peerdevice_unacked", "gauge", "Requests received from the peer, not "
         "yet acknowledged (8.4 ua).", PEER, "", read.drbd_peer(lambda p: p.unacked)),
    node("replmon_drbd_peerdevice_in_sync_ratio", "gauge", "Share of the device in sync "
         "(resync progress), 0-1.", PEER, "",
         read.drbd_peer(lambda p: None if p.percent_in_sync is None
                        else p.percent_in_sync / 100)),
    # host
    node("replmon_node_cpu_seconds", "counter", "CPU time summed over all CPUs, by mode "
         "(no cpu label: replmon reads the aggregate line).", ["mode"],
         "node_cpu_seconds_total", read.cpu),
    *(node(f"replmon_node_{w}", "gauge", f"{w[4:]}-minute load average.", [], f"node_{w}",
           read.scalar("host", operator.attrgetter(w))) for w in ("load1", "load5", "load15")),
    *(node(f"replmon_node_memory_{snake}_bytes", "gauge", f"/proc/meminfo {mem}, bytes.", [],
           f"node_memory_{mem}_bytes", read.mem(field)) for field, mem, snake in MEMINFO),
    *(node(f"replmon_node_vmstat_{field}", "untyped", f"/proc/vmstat {field} (a counter).",
           [], f"node_vmstat_{field}", read.vm(field))
      for field in ("pswpin", "pswpout", "pgfault", "pgmajfault", "oom_kill")),
    *(node(f"replmon_node_disk_{short}", "counter", help_, ["device"],
           f"node_disk_{short}_total", read.disk(get)) for short, help_, get in DISK_COUNTERS),
    node("replmon_node_disk_io_now", "gauge", "Requests in flight.", ["device"],
         "node_disk_io_now", read.disk(lambda d: d.in_flight)),
    *(node(f"replmon_node_network_{short}", kind, help_, ["device"],
           f"node_network_{short}" + ("_total" if kind == "counter" else ""), read.nic(get),
           group=group) for short, kind, help_, get, group in NIC),
    node("replmon_link_rtt_seconds", "gauge", "The primary's TCP connect time to the "
         "replica's replication port (replmon's own timing of the link).", [], "",
         read.scalar("host", lambda h: None if h.peer_rtt_ms is None else h.peer_rtt_ms / 1000)),
    # findings and replmon itself
    pair("replmon_finding", "gauge", "1 for each open finding (gone when it closes); title, "
         "numbers, cause and next step are on /findings.json.",
         ["pair", "node", "check", "key", "severity", "incident", "incident_role"], "",
         read.findings),
    pair("replmon_incident_open", "gauge", "1 for each open incident: the pair's findings "
         "grouped under their likely root (gone when its last finding closes), named by "
         "its root's check/node/key, as replmon_finding's incident label.",
         ["pair", "incident", "root_check", "root_node", "severity"], "",
         read.incidents_open),
    pair("replmon_findings_open", "gauge", "Open findings of the pair, by severity.",
         ["pair", "severity"], "", read.findings_open),
    pair("replmon_finding_flaps", "gauge", "Openings of a flapping finding in the engine's "
         "flap window (no series when it does not flap).", ["pair", "node", "check", "key"],
         "", read.flaps),
    pair("replmon_ticks", "counter", "Ticks the pair's collector made.", ["pair"], "",
         read.pair_value(lambda s: s.ticks_total)),
    pair("replmon_ticks_late", "counter", "Ticks that started late or after missed slots.",
         ["pair"], "", read.pair_value(lambda s: s.late_total)),
    pair("replmon_ticks_missed", "counter", "Schedule slots skipped because a tick overran.",
         ["pair"], "", read.pair_value(lambda s: s.missed_total)),
    pair("replmon_pair_last_tick_age_seconds", "gauge", "Seconds since the pair's last tick "
         "(a pair that stopped reporting grows here).", ["pair"], "",
         read.pair_value(lambda s: s.age_s()), live=True),
    pair("replmon_pair_interval_seconds", "gauge", "The pair's sampling interval, seconds.",
         ["pair"], "", read.pair_value(lambda s: s.interval)),
)
TICK_DURATION = pair("replmon_tick_duration_seconds", "histogram", "Seconds a tick took to "
                     "sample both nodes.", ["pair"], "", lambda s: ())
"""replmon's own histogram (fleet/metrics.py writes it from each pair's durations)."""
BUILD_INFO = pair("replmon_build_info", "gauge", "replmon's version (always 1).",
                  ["version"], "", lambda s: ())

OPT_IN: dict[str, str] = {
    "mysql_commands": "`replmon_mysql_global_status_commands_total{command}`: one series per "
                      "Com_ counter replmon reads (statement mix by type)",
    "mysql_handlers": "`replmon_mysql_global_status_handlers_total{handler}`: the Handler_ "
                      "counters (storage engine calls)",
    "innodb": "the `replmon_mysql_global_status_innodb_*` values (buffer pool, data and log "
              "I/O, row locks, history list) and `replmon_mysql_global_status_innodb_row_ops_"
              "total{operation}` (`replmon_mysql_rows_total` has the row rates by default)",
    "netdev_errors": "`replmon_node_network_{receive,transmit}_{errs,drop}_total{device}`",
}
"""The opt-in groups (fleet file ``metrics = { opt_in = [...] }``; "all": every one), what
each adds. Every other family is exported for every pair: what the alert rules
(fleet/rules.py) and a pair's dashboard (replication, findings, sources, Redis, DRBD,
host CPU, memory, disks, network bytes) need."""

