"""What replmon knows about one Redis server after one sample, and the rates
between two samples.

``RedisSample`` is built from the server's INFO text by
``replmon.sources.redis_parse.build_redis_sample`` and stamped by
``RedisSource.sample()``. Every payload field has a default, so a failed sample
is just ``RedisSample(status=..., wall=..., mono=...)`` with everything else
empty/None. A field that this server version does not print stays None.

INFO still says "slave" on the wire (``role:slave``, ``slaveN:``,
``connected_slaves``, ``slave_repl_offset``); replmon normalises to "replica".

``derive_redis_rates(prev, cur)`` turns two samples into per-second rates over
the real (monotonic) time between them; counters that went down (restart,
CONFIG RESETSTAT) give None, never a negative rate.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from replmon.model.base import SampleBase, Struct, struct
from replmon.model.rates import counter_delta, counter_rate, counter_rates, ratio

RedisRole = Literal["master", "replica"]

COUNTER_FIELDS: tuple[str, ...] = (
    "total_commands_processed",
    "total_connections_received",
    "rejected_connections",
    "expired_keys",
    "evicted_keys",
    "keyspace_hits",
    "keyspace_misses",
    "total_net_input_bytes",
    "total_net_output_bytes",
    "sync_full",
    "sync_partial_ok",
    "sync_partial_err",
    "total_error_replies",
)
"""INFO Stats counters copied into ``RedisSample.counters`` when present.
All count up from server start (or the last CONFIG RESETSTAT)."""


@struct
class RedisReplica(Struct):
    """One ``slaveN:`` line of a master's INFO Replication section."""

    ip: str = ""
    """Address the replica announced (IPv6 addresses appear as-is, e.g. "::1")."""
    port: int = 0
    """Listening port the replica announced."""
    state: str = ""
    """"online", "send_bulk" (full sync transfer) or "wait_bgsave" (waiting for the RDB)."""
    offset: int | None = None
    """Bytes: last replication offset the replica acknowledged (REPLCONF ACK).
    None only on Redis 2.6, which did not print it."""
    lag_s: int | None = None
    """Seconds since the replica's last ACK (0-1 is normal; only meaningful when online).
    None on old servers that do not print it."""

    @property
    def addr(self) -> str:
        """"ip:port", bracketing IPv6 addresses ("[::1]:6380")."""
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"{host}:{self.port}"


@struct
class RedisSample(SampleBase):
    """One reading of one Redis server (INFO + a timed PING)."""

    # --- server -----------------------------------------------------------
    server: str = "redis"
    """The server's name: "redis", or "valkey" (INFO server_name, Valkey 7.2.5+)."""
    version: str = ""
    """The server's own version: redis_version ("7.0.15"), or Valkey's valkey_version
    ("8.1.1"; Valkey also prints redis_version:7.2.4, the Redis it is compatible with)."""
    server_time: float | None = None
    """INFO server_time_usec as epoch seconds: the server's clock when it answered INFO
    (Redis 6.2+; None before). With the sample's wall and elapsed time it bounds the
    offset between this node's clock and replmon's (the clock_skew check)."""
    run_id: str = ""
    """Random id of the server process; a new one means the server restarted."""
    uptime_s: int | None = None
    """Seconds since the server process started."""
    rtt_ms: float | None = None
    """Milliseconds: round trip of one PING, timed with perf_counter just before INFO."""
    role: RedisRole | None = None
    """"master" or "replica" (INFO's "slave" normalised)."""

    # --- counters and clients ----------------------------------------------
    counters: dict[str, int] = field(default_factory=dict)
    """Cumulative INFO Stats counters (see COUNTER_FIELDS), by INFO name; only those present."""
    instantaneous_ops_per_sec: int | None = None
    """Commands/s as the server itself estimates it (sampled over its last ~1.6 s)."""
    connected_clients: int | None = None
    """Client connections open now (replicas excluded)."""
    blocked_clients: int | None = None
    """Clients waiting in a blocking call (BLPOP, WAIT, ...)."""
    maxclients: int | None = None
    """Client limit (INFO Clients prints it from Redis 6.2 on; None before)."""

    # --- memory (bytes) ----------------------------------------------------
    used_memory: int | None = None
    """Bytes allocated by Redis's allocator."""
    used_memory_rss: int | None = None
    """Bytes resident in RAM as the OS sees it. Below used_memory = part of Redis is swapped out."""
    used_memory_peak: int | None = None
    """Bytes: highest used_memory since start."""
    maxmemory: int | None = None
    """Bytes: the configured memory ceiling; 0 means no limit."""
    maxmemory_policy: str | None = None
    """What happens at the ceiling: "noeviction" (writes fail with OOM), "allkeys-lru", ..."""
    total_system_memory: int | None = None
    """Bytes of RAM on the host."""
    mem_fragmentation_ratio: float | None = None
    """used_memory_rss / used_memory (ratio). >> 1 fragmentation, < 1 swapping."""

    # --- persistence ---------------------------------------------------------
    loading: bool | None = None
    """True while the server loads its dataset (start-up or a replica's full sync)."""
    rdb_bgsave_in_progress: bool | None = None
    """True while an RDB snapshot child is running (also for a full sync to a replica)."""
    rdb_last_bgsave_status: str | None = None
    """"ok" or "err": outcome of the last RDB snapshot."""
    rdb_changes_since_last_save: int | None = None
    """Writes (count) not yet in an RDB snapshot."""
    rdb_last_save_time: int | None = None
    """Epoch seconds of the last successful RDB save."""
    rdb_last_bgsave_time_s: int | None = None
    """Seconds the last RDB save took (rdb_last_bgsave_time_sec; None: never saved). A full
    sync writes the same RDB first: the shortest a full sync can take."""
    aof_enabled: bool | None = None
    """True when the append-only file is on."""
    aof_rewrite_in_progress: bool | None = None
    """True while an AOF rewrite child is running."""
    aof_last_write_status: str | None = None
    """"ok" or "err": outcome of the last AOF write."""
    aof_delayed_fsync: int | None = None
    """Count of AOF fsyncs that had to wait for a slow disk (cumulative; only with AOF on)."""
    latest_fork_usec: int | None = None
    """Microseconds the main thread was blocked by the last fork (BGSAVE, rewrite, full sync)."""
    replica_buffer_limit: tuple[int, int, int] | None = None
    """``client-output-buffer-limit`` for replicas: (hard bytes, soft bytes, soft seconds),
    0 = no limit; from CONFIG GET, re-read every ``config_every`` seconds (60 s) and
    carried between reads. None when not read (the ACL lacks +config|get, CONFIG
    renamed): ``config_error`` says why."""
    min_replicas: tuple[int, int] | None = None
    """(``min-replicas-to-write``, ``min-replicas-max-lag`` seconds): a master refuses
    writes (NOREPLICAS) while fewer replicas than the first are connected with a lag of at
    most the second; 0 replicas = off. Read with the buffer limit, in the same CONFIG GET,
    on Redis 7.0+ and Valkey; None on older servers (one parameter per CONFIG GET there)
    and when CONFIG GET is refused."""
    stop_writes_on_bgsave_error: bool | None = None
    """``stop-writes-on-bgsave-error``: with save points set and the last BGSAVE failed
    (``rdb_last_bgsave_status:err``), the master refuses writes (MISCONF). From the same
    CONFIG GET (Redis 7.0+, Valkey); None when not read."""
    save_points: str | None = None
    """``save`` as CONFIG GET gives it ("3600 1 300 100 60 10000"; "" = no RDB
    snapshots, so no MISCONF); None when not read."""
    config_error: str | None = None
    """Why CONFIG GET could not be read; the rest of the sample is valid."""
    good_replicas: int | None = None
    """``min_slaves_good_slaves``: replicas connected with a lag within
    min-replicas-max-lag; INFO prints it only while min-replicas-to-write is set (None
    otherwise). Below min-replicas-to-write, the master refuses writes (NOREPLICAS)."""
    error_counts: dict[str, int] = field(default_factory=dict)
    """Error replies sent to clients since start or CONFIG RESETSTAT, by their first word
    ("NOREPLICAS", "OOM", "MISCONF", "READONLY", "NOAUTH", "ERR", ...): INFO errorstats
    (Redis 6.2+, Valkey), ``errorstat_OOM:count=12``; empty when none or before 6.2."""

    # --- replication: this server as a replica --------------------------------
    master_host: str | None = None
    """Host of the master this replica follows (replica only)."""
    master_port: int | None = None
    """Port of that master (replica only)."""
    link_status: Literal["up", "down"] | None = None
    """master_link_status: "up" only while connected and synced (replica only)."""
    last_io_seconds_ago: int | None = None
    """Seconds since the last byte from the master (replica only); None when unknown:
    Redis prints -1 while it has no link to the master."""
    sync_in_progress: bool | None = None
    """master_sync_in_progress: a full sync from the master is running (replica only)."""
    link_down_since_seconds: int | None = None
    """Seconds the link has been down (printed only while down); None when unknown:
    Redis prints -1 when the link was never up since the replica started, or while a
    full sync runs."""
    master_link_age_s: int | None = None
    """Seconds this replica's connection from its master has been open (``CLIENT LIST
    TYPE master``: its ``age``; replica with its link up only; None when not read or
    refused): how long it has followed this master at least."""
    repl_offset: int | None = None
    """Bytes: slave_repl_offset, the replication offset this replica has processed."""
    read_repl_offset: int | None = None
    """Bytes: slave_read_repl_offset, offset read from the master (Redis 7.0+)."""
    sync_total_bytes: int | None = None
    """Bytes of the RDB being received in a full sync; None when unknown (Redis prints
    -1, or 0 during a diskless sync)."""
    sync_read_bytes: int | None = None
    """Bytes of that RDB received so far (only during a full sync)."""
    sync_left_bytes: int | None = None
    """Bytes still to receive; None when the total is unknown (Redis prints total - read,
    negative then)."""
    sync_perc: float | None = None
    """master_sync_perc: percent of the RDB received; None when the total is unknown."""
    sync_last_io_seconds_ago: int | None = None
    """master_sync_last_io_seconds_ago: seconds since the last byte of a running full
    sync (a sync stuck for minutes still reads "in progress"; Redis gives up after
    repl-timeout, 60 s by default)."""
    replica_read_only: bool | None = None
    """slave_read_only / replica_read_only: False means clients can write to this
    replica, and those writes exist nowhere else."""
    failover_state: str | None = None
    """master_failover_state (Redis 6.2+): no-failover, waiting-for-sync or
    failover-in-progress (a FAILOVER command running)."""
    master_replid2: str | None = None
    """The replication id this server followed before its last promotion (40 zeros:
    none); with second_repl_offset it says the node was just promoted."""
    second_repl_offset: int | None = None
    """Offset up to which master_replid2 is valid; None when there is none (-1)."""

    # --- replication: this server as a master (a replica may have sub-replicas) --
    connected_replicas: int | None = None
    """connected_slaves: replicas attached, including ones still in handshake."""
    replicas: list[RedisReplica] = field(default_factory=list)
    """The slaveN lines (handshaking replicas are not printed, so len() may be smaller)."""
    master_repl_offset: int | None = None
    """Bytes: this server's replication stream offset (on a replica: what it has processed)."""
    master_replid: str | None = None
    """Current replication id (a new one after a failover or a restart without persistence)."""
    repl_backlog_active: bool | None = None
    """True when a backlog exists (partial resyncs are possible)."""
    repl_backlog_size: int | None = None
    """Bytes: configured backlog size (repl-backlog-size)."""
    repl_backlog_first_byte_offset: int | None = None
    """Bytes: oldest offset still in the backlog; a replica behind this needs a full sync."""
    repl_backlog_histlen: int | None = None
    """Bytes of history held in the backlog."""

    # --- keyspace ----------------------------------------------------------
    keys: int | None = None
    """Keys over all databases (sum of dbN keys=); 0 on an empty server."""
    expires: int | None = None
    """Keys with a TTL over all databases (sum of dbN expires=)."""

    @property
    def product(self) -> str:
        """"Redis 7.0.15", "Valkey 8.1.1": what the server is, as its users name it."""
        return f"{'Valkey' if self.server == 'valkey' else 'Redis'} {self.version}".strip()


@struct
class RedisRates(Struct):
    """What changed between two RedisSamples, per second of real elapsed time.

    Every rate is None when it cannot be trusted: no previous sample, a failed
    sample, time did not advance, the server restarted in between (``reset``),
    or a counter went down (CONFIG RESETSTAT)."""

    dt_s: float | None = None
    """Seconds between the two readings (monotonic clock); None without a usable pair."""
    reset: Literal["restart", "resetstat"] | None = None
    """"restart": new run_id or lower uptime. "resetstat": a counter went down without a
    restart (CONFIG RESETSTAT zeroes them all together). Either way every rate is None."""
    ops_per_s: float | None = None
    """Commands/s from Δtotal_commands_processed."""
    connections_per_s: float | None = None
    """New client connections/s from Δtotal_connections_received."""
    rejected_connections_per_s: float | None = None
    """Connections refused for maxclients, per second."""
    evicted_per_s: float | None = None
    """Keys evicted by maxmemory, per second."""
    expired_per_s: float | None = None
    """Keys expired by TTL, per second."""
    hits_per_s: float | None = None
    """Key lookups that found the key, per second."""
    misses_per_s: float | None = None
    """Key lookups that missed, per second."""
    hit_pct: float | None = None
    """Percent of lookups in the interval that hit; None when there were none."""
    net_in_bytes_per_s: float | None = None
    """Bytes/s received by the server (clients and replication)."""
    net_out_bytes_per_s: float | None = None
    """Bytes/s sent by the server (clients and replication)."""
    errors_per_s: float | None = None
    """Error replies/s (total_error_replies, Redis 6.2+)."""
    errors_by_kind_per_s: dict[str, float] = field(default_factory=dict)
    """Error replies/s by their first word (Δerror_counts): {"NOREPLICAS": 12.0}; only
    the kinds that grew in the interval; empty without a usable pair."""
    repl_bytes_per_s: float | None = None
    """Bytes/s the replication stream grows (Δmaster_repl_offset): the write rate a
    replica's byte lag is divided by for its estimated seconds behind."""
    full_syncs: int | None = None
    """Full resyncs this master served during the interval (Δsync_full)."""
    partial_syncs_ok: int | None = None
    """Partial resyncs accepted during the interval (Δsync_partial_ok)."""
    partial_syncs_err: int | None = None
    """Partial resyncs refused during the interval (Δsync_partial_err)."""
    replica_lag_bytes: dict[str, int | None] = field(default_factory=dict)
    """Per replica ("ip:port"): master_repl_offset - acknowledged offset, bytes, from the
    current sample (a gauge). None for a replica that is not online yet."""


_RATE_FIELDS: dict[str, str] = {
    "ops_per_s": "total_commands_processed",
    "connections_per_s": "total_connections_received",
    "rejected_connections_per_s": "rejected_connections",
    "evicted_per_s": "evicted_keys",
    "expired_per_s": "expired_keys",
    "hits_per_s": "keyspace_hits",
    "misses_per_s": "keyspace_misses",
    "net_in_bytes_per_s": "total_net_input_bytes",
    "net_out_bytes_per_s": "total_net_output_bytes",
    "errors_per_s": "total_error_replies",
}
_DELTA_FIELDS: dict[str, str] = {
    "full_syncs": "sync_full",
    "partial_syncs_ok": "sync_partial_ok",
    "partial_syncs_err": "sync_partial_err",
}


def replica_lag_bytes(sample: RedisSample) -> dict[str, int | None]:
    """Byte lag of each replica listed by a master: master_repl_offset - offset,
    never negative; None for a replica that is not "online" (its offset means nothing yet)."""
    if sample.master_repl_offset is None:
        return {}
    out: dict[str, int | None] = {}
    for r in sample.replicas:
        online = r.state == "online" and r.offset is not None
        out[r.addr] = max(0, sample.master_repl_offset - (r.offset or 0)) if online else None
    return out


def is_restart(prev: RedisSample, cur: RedisSample) -> bool:
    """True when ``cur`` comes from a different server process than ``prev``."""
    if prev.run_id and cur.run_id and prev.run_id != cur.run_id:
        return True
    return prev.uptime_s is not None and cur.uptime_s is not None and cur.uptime_s < prev.uptime_s


def derive_redis_rates(prev: RedisSample | None, cur: RedisSample) -> RedisRates:
    """Rates between two consecutive samples of the same server (pure function).

    Divides by the real monotonic time between the readings. Gives no rates
    (all None) without a usable previous sample, after a restart, or after a
    CONFIG RESETSTAT (any counter went down). Replica byte lag is a gauge and is
    filled from ``cur`` whenever ``cur`` is ok."""
    if not cur.status.ok:
        return RedisRates.trusted()
    lag = replica_lag_bytes(cur)
    if prev is None or not prev.status.ok:
        return RedisRates.trusted(replica_lag_bytes=lag)
    dt = cur.mono - prev.mono
    if dt <= 0:
        return RedisRates.trusted(replica_lag_bytes=lag)
    if is_restart(prev, cur):
        return RedisRates.trusted(dt_s=dt, reset="restart", replica_lag_bytes=lag)

    pc, cc = prev.counters, cur.counters
    if any(n in pc and n in cc and cc[n] < pc[n] for n in COUNTER_FIELDS):
        # CONFIG RESETSTAT zeroes all of these at once: a counter that is already
        # back above its old value would give a wrong rate, so trust none of them.
        return RedisRates.trusted(dt_s=dt, reset="resetstat", replica_lag_bytes=lag)

    values: dict[str, Any] = {"dt_s": dt, "replica_lag_bytes": lag,
                                 "repl_bytes_per_s": counter_rate(
                                     prev.master_repl_offset, cur.master_repl_offset, dt)}
    for out, name in _RATE_FIELDS.items():
        values[out] = counter_rate(pc.get(name), cc.get(name), dt)
    for out, name in _DELTA_FIELDS.items():
        d = counter_delta(pc.get(name), cc.get(name))
        values[out] = None if d is None else int(d)
    values["errors_by_kind_per_s"] = counter_rates(prev.error_counts, cur.error_counts, dt)
    hits = counter_delta(pc.get("keyspace_hits"), cc.get("keyspace_hits"))
    misses = counter_delta(pc.get("keyspace_misses"), cc.get("keyspace_misses"))
    pct = ratio(hits, None if hits is None or misses is None else hits + misses)
    values["hit_pct"] = None if pct is None else pct * 100.0
    return RedisRates.trusted(**values)
