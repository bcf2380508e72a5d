"""What replmon knows about one MySQL/MariaDB server after one sample.

``MysqlSample`` is built by ``replmon.sources.mysql_parse.build_mysql_sample``
from SHOW GLOBAL STATUS, SHOW GLOBAL VARIABLES (a subset, re-read about once a
minute) and the replication status, and stamped by ``MysqlSource.sample()``.
Every payload field has a default, so a failed sample is just
``MysqlSample(status=..., wall=..., mono=...)`` with everything else empty/None.

Statement counters (``Com_*``, ``Questions``) count statements; row counters
count rows a storage engine changed. The two diverge for real reasons (an
UPDATE that matches no row, one UPDATE changing many rows, a replica applying
row events): see the shared reference, mysql_redis.md §2. Which family holds
the row counts depends on the server: MySQL and older MariaDB have
``Innodb_rows_*``; MariaDB 10.11 has none, so replmon falls back to the SQL
layer's ``Handler_write/update/delete`` (``row_counters`` says which).

The rates between two samples (``MysqlRates``, ``derive_mysql_rates``) are
``replmon.model.mysql_rates``'.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from replmon.model.base import SampleBase, Struct, struct
from replmon.model.lag import LagFacts

Flavour = Literal["mariadb", "mysql"]
RowFamily = Literal["innodb", "handler"]
IoRunning = Literal["Yes", "No", "Connecting"]

COUNTER_FIELDS: tuple[str, ...] = (
    # statements (orzdba -QPS-/-TPS-, innotop "general")
    "Questions", "Queries",
    "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_replace",
    "Com_insert_select", "Com_replace_select", "Com_update_multi", "Com_delete_multi",
    "Com_commit", "Com_rollback",
    # SQL-layer row calls (mytop Handler R/W/U/D; the row family on MariaDB 10.11)
    "Handler_read_first", "Handler_read_key", "Handler_read_next", "Handler_read_prev",
    "Handler_read_rnd", "Handler_read_rnd_next",
    "Handler_write", "Handler_update", "Handler_delete",
    "Rows_read",
    # InnoDB rows (orzdba -innodb_rows; absent on MariaDB 10.11)
    "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted", "Innodb_rows_read",
    # InnoDB buffer pool, data and log I/O (orzdba -hit, -innodb_data, -innodb_log)
    "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_pages_flushed", "Innodb_buffer_pool_wait_free",
    "Innodb_data_read", "Innodb_data_written", "Innodb_data_reads", "Innodb_data_writes",
    "Innodb_os_log_written", "Innodb_os_log_fsyncs", "Innodb_log_waits",
    "Innodb_row_lock_waits", "Innodb_deadlocks",
    # connections, network, temp tables
    "Bytes_received", "Bytes_sent", "Connections", "Threads_created",
    "Aborted_clients", "Aborted_connects", "Slow_queries",
    # connections refused before a session began (max_connections reached: ERROR 1040)
    "Connection_errors_max_connections", "Connection_errors_internal",
    "Connection_errors_accept", "Connection_errors_select",
    "Created_tmp_disk_tables", "Created_tmp_tables", "Select_full_join",
    # semi-sync, both naming generations (mysql_redis.md §2.8)
    "Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_master_no_tx", "Rpl_semi_sync_master_no_times",
    "Rpl_semi_sync_source_yes_tx", "Rpl_semi_sync_source_no_tx", "Rpl_semi_sync_source_no_times",
)
"""Cumulative status counters copied into ``MysqlSample.counters`` when the
server has them (by their SHOW STATUS name). All count up from server start or
the last FLUSH STATUS; units: statements, rows, calls, bytes, pages or events
as the name says."""

GAUGE_FIELDS: tuple[str, ...] = (
    "Threads_running", "Threads_connected", "Threads_cached", "Max_used_connections",
    "Innodb_buffer_pool_pages_total", "Innodb_buffer_pool_pages_free",
    "Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_data",
    "Innodb_row_lock_current_waits", "Innodb_history_list_length",
    "Open_tables", "Open_files",
    "Rpl_semi_sync_master_clients", "Rpl_semi_sync_source_clients",
    "Rpl_semi_sync_master_wait_sessions", "Rpl_semi_sync_source_wait_sessions",
    "Rpl_semi_sync_master_tx_avg_wait_time", "Rpl_semi_sync_source_tx_avg_wait_time",
)
"""Point-in-time status values copied into ``MysqlSample.gauges`` when present:
threads/connections (count), buffer-pool pages (count of pages, usually 16 KiB),
open tables/files (count), semi-sync clients/sessions (count) and average
commit wait (microseconds)."""

VARIABLE_NAMES: tuple[str, ...] = (
    "auto_increment_increment", "auto_increment_offset", "read_only", "super_read_only",
    "innodb_read_only", "offline_mode",
    "server_id", "binlog_format", "log_bin", "sync_binlog", "innodb_flush_log_at_trx_commit",
    "rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled",
    "rpl_semi_sync_slave_enabled", "rpl_semi_sync_replica_enabled",
    "max_connections", "innodb_buffer_pool_size", "gtid_mode", "gtid_strict_mode",
    "version", "version_comment", "hostname",
    # compared between the nodes by config_drift (a setting under each name a flavour or
    # version gives it: MySQL 8.0.26+ replica_*, MariaDB and older MySQL slave_*)
    "enforce_gtid_consistency", "binlog_row_image", "lower_case_table_names", "sql_mode",
    "collation_server", "time_zone", "transaction_isolation", "tx_isolation",
    "log_replica_updates", "log_slave_updates", "max_allowed_packet",
    "replica_max_allowed_packet", "slave_max_allowed_packet",
    "replica_parallel_workers", "slave_parallel_workers", "slave_parallel_threads",
    "replica_preserve_commit_order", "slave_preserve_commit_order",
)
"""SHOW GLOBAL VARIABLES kept in ``MysqlSample.variables`` (lower-case names)."""

WRITE_PATH_VARIABLES: tuple[str, ...] = (
    "read_only", "super_read_only", "innodb_read_only", "offline_mode")
"""The variables that make a primary refuse writes (ERROR 1290, 1290 with
--super-read-only, 1015/1036 innodb_read_only, 3032 offline_mode on MySQL): read every
tick, not every ``variables_every`` like the rest of VARIABLE_NAMES."""


@struct
class SemiSync(Struct):
    """Semi-synchronous replication state, normalised over MariaDB/MySQL
    ``master``/``slave`` and MySQL 8.0.26+ ``source``/``replica`` names.
    None means the server does not have the plugin/variable (or it was not read)."""

    source_enabled: bool | None = None
    """rpl_semi_sync_master_enabled / _source_enabled: configured on as a source."""
    source_active: bool | None = None
    """Rpl_semi_sync_master_status / _source_status: ON = commits wait for a replica ack.
    False while enabled = fell back to asynchronous replication."""
    source_clients: int | None = None
    """Count of semi-sync replicas connected to this source."""
    replica_enabled: bool | None = None
    """rpl_semi_sync_slave_enabled / _replica_enabled: configured on as a replica."""
    replica_active: bool | None = None
    """Rpl_semi_sync_slave_status / _replica_status: this replica acks now."""


@dataclass(frozen=True)
class ReplicationWords:
    """Replication's statements and column names as this server says them: MySQL 8.0.22+
    says Source/Replica (8.4 accepts nothing else); MariaDB and older MySQL say
    Master/Slave (MariaDB's columns keep those names)."""

    lag: str
    """The lag column: Seconds_Behind_Source / Seconds_Behind_Master."""
    show: str
    """SHOW REPLICA STATUS / SHOW SLAVE STATUS."""
    replica: str
    """The word in START/STOP/RESET ... : REPLICA / SLAVE."""
    change: str
    """CHANGE REPLICATION SOURCE TO / CHANGE MASTER TO."""
    io_state: str
    """Replica_IO_State / Slave_IO_State."""
    delay: str
    """SOURCE_DELAY / MASTER_DELAY."""
    reset_binlogs: str
    """RESET BINARY LOGS AND GTIDS (MySQL 8.2+) / RESET MASTER."""
    read_pos: str
    """Read_Source_Log_Pos / Read_Master_Log_Pos."""


SOURCE_WORDS = ReplicationWords(
    "Seconds_Behind_Source", "SHOW REPLICA STATUS", "REPLICA", "CHANGE REPLICATION SOURCE TO",
    "Replica_IO_State", "SOURCE_DELAY", "RESET BINARY LOGS AND GTIDS", "Read_Source_Log_Pos")
MASTER_WORDS = ReplicationWords(
    "Seconds_Behind_Master", "SHOW SLAVE STATUS", "SLAVE", "CHANGE MASTER TO",
    "Slave_IO_State", "MASTER_DELAY", "RESET MASTER", "Read_Master_Log_Pos")


MYSQL_ONLY_CHANNEL = frozenset({
    "source_uuid", "last_io_error_time", "last_sql_error_time", "worker_errno",
    "worker_error", "worker_error_time", "worker_id", "failed_gtid", "applying_age_s",
    "applied_latency_s"})
"""``ReplicaChannel`` fields only Oracle MySQL reports (Source_UUID, the error
timestamps, performance_schema's workers): a MariaDB channel never has them."""
MARIADB_ONLY_CHANNEL = frozenset({
    "retried_transactions", "received_heartbeats", "heartbeat_period", "source_event_time",
    "replica_event_time", "event_time_diff_s"})
"""``ReplicaChannel`` fields only MariaDB reports (SHOW SLAVE STATUS's own columns)."""


def channel_fields_lacking(flavour: Flavour | None) -> frozenset[str]:
    """The channel fields a server of ``flavour`` never reports (none when unknown): a
    view leaves them out rather than saying "unknown" of what cannot be known there."""
    return {"mariadb": MYSQL_ONLY_CHANNEL, "mysql": MARIADB_ONLY_CHANNEL}.get(
        flavour or "", frozenset())


def replication_words(flavour: Flavour | None, version: str) -> ReplicationWords:
    """The words of a server: Source/Replica on MySQL 8.0.22+, else Master/Slave."""
    if flavour == "mysql" and version_tuple(version) >= (8, 0, 22):
        if version_tuple(version) < (8, 2, 0):
            return replace(SOURCE_WORDS, reset_binlogs="RESET MASTER")
        return SOURCE_WORDS
    return MASTER_WORDS


def clean_version(server_info: str) -> str:
    """The handshake's version string without MariaDB's "5.5.5-" compatibility prefix."""
    return server_info[len("5.5.5-"):] if server_info.startswith("5.5.5-") else server_info


@functools.lru_cache(maxsize=64)
def version_tuple(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) from "8.0.30", "10.11.19-MariaDB-..."; (0, 0, 0) if unreadable.
    (Cached: checks ask it of the same few versions every tick.)"""
    m = re.match(r"\s*(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?", clean_version(version))
    if m is None:
        return (0, 0, 0)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


@struct
class ReplicaChannel(Struct):
    """One row of SHOW ALL SLAVES STATUS (MariaDB) / SHOW REPLICA|SLAVE STATUS
    (MySQL), normalised to the MySQL 8.0.22+ names. Log positions are bytes
    within the named binlog file of the source."""

    name: str = ""
    """Connection name (MariaDB) / channel name (MySQL); "" = the default one."""
    io_running: IoRunning = "No"
    """Receiver (I/O) thread: "Yes", "No", or "Connecting" (started, not connected)."""
    sql_running: bool = False
    """Applier (SQL) thread running."""
    seconds_behind: int | None = None
    """Seconds the applier is behind (Seconds_Behind_Source/Master). None when the
    server says NULL (a thread stopped or not connected), and when the receiver is not
    connected (``io_running`` not "Yes"): MySQL then goes on printing the lag it had when
    it lost the source (``seconds_behind_stale``). Never read None as 0."""
    seconds_behind_stale: int | None = None
    """What the server printed as Seconds_Behind while its receiver was not connected:
    the lag when the link broke, not now."""
    source_host: str = ""
    """Host the replica connects to."""
    source_port: int | None = None
    """TCP port of the source."""
    source_server_id: int | None = None
    """server_id of the source (None until the receiver has connected once)."""
    connected_s: int | None = None
    """Seconds the receiver has been connected to the source (its processlist time while
    it waits for events, read about once a minute and counted on; None: not connected,
    not read, or several channels that the processlist cannot tell apart): how long
    this replica has followed this source at least."""
    source_log_file: str = ""
    """Source binlog file the receiver is reading."""
    read_source_log_pos: int | None = None
    """Bytes: receiver position in source_log_file."""
    relay_source_log_file: str = ""
    """Source binlog file holding the last event the applier executed."""
    exec_source_log_pos: int | None = None
    """Bytes: applier position in relay_source_log_file."""
    last_io_errno: int = 0
    """Receiver's last error number (0 = none; 2003 = cannot connect to the source)."""
    last_io_error: str = ""
    """Receiver's last error text."""
    last_sql_errno: int = 0
    """Applier's last error number (0 = none)."""
    last_sql_error: str = ""
    """Applier's last error text."""
    using_gtid: bool | None = None
    """Positions by GTID: MariaDB Using_Gtid != No, MySQL Auto_Position = 1."""
    gtid_retrieved: str = ""
    """GTIDs received: MariaDB Gtid_IO_Pos (domain-server-seq), MySQL Retrieved_Gtid_Set."""
    gtid_executed: str = ""
    """GTIDs applied: MariaDB Gtid_Slave_Pos, MySQL Executed_Gtid_Set (newlines removed).
    On MariaDB this is server-wide (every domain, every connection): see
    ``gtid_executed_server_wide``."""
    gtid_executed_server_wide: bool = False
    """True when ``gtid_executed`` is MariaDB's Gtid_Slave_Pos: the same on every
    connection of a multi-source replica, all domains together. A connection's own
    progress is its domain(s) of it; ``gtid_retrieved`` (Gtid_IO_Pos) is per connection."""
    sql_delay: int | None = None
    """Seconds of configured delayed replication (MASTER_DELAY / SOURCE_DELAY)."""
    sql_remaining_delay: int | None = None
    """Seconds the applier still waits on the current event of a delayed replica
    (None: not waiting). A delayed replica is behind by design."""
    relay_log_space: int | None = None
    """Bytes of all relay logs on the replica: received, not yet purged. A stopped applier
    fills the disk with them."""
    source_uuid: str = ""
    """server_uuid of the source (MySQL Source_UUID/Master_UUID): which server it follows."""
    last_io_error_time: str = ""
    """When the receiver's last error happened (MySQL Last_IO_Error_Timestamp,
    "YYMMDD HH:MM:SS" in the replica's time zone)."""
    last_sql_error_time: str = ""
    """When the applier's last error happened (MySQL Last_SQL_Error_Timestamp)."""
    retried_transactions: int | None = None
    """Transactions the applier retried (MariaDB Retried_transactions: deadlocks, lock
    wait timeouts on the replica)."""
    received_heartbeats: int | None = None
    """Heartbeats received from the source (MariaDB Slave_received_heartbeats)."""
    heartbeat_period: float | None = None
    """Seconds between source heartbeats (MariaDB Slave_heartbeat_period)."""
    io_state: str = ""
    """Receiver thread state text (wording differs across versions: never match it exactly)."""
    sql_state: str = ""
    """Applier thread state text."""
    # --- Oracle MySQL 8.0+: performance_schema.replication_applier_status_by_worker, read
    # when the applier reports an error and every few seconds otherwise (MysqlSource)
    worker_errno: int = 0
    """The failing worker's error number: the real cause behind the coordinator's
    "Coordinator stopped because there were error(s) in the worker(s)" (0 = none)."""
    worker_error: str = ""
    """The failing worker's own message (the table, the duplicate key...)."""
    worker_error_time: str = ""
    """When the worker failed, "YYYY-MM-DD hh:mm:ss" in the replica's time zone."""
    worker_id: int | None = None
    """Which applier worker failed."""
    failed_gtid: str = ""
    """The transaction the worker failed on (its APPLYING_TRANSACTION)."""
    applying_age_s: float | None = None
    """Seconds since the source committed the oldest transaction a worker is applying,
    by the replica's clock (0.0: no worker busy); as of the last read (a few seconds)."""
    applied_latency_s: float | None = None
    """The newest applied transaction: seconds from its commit on the source to the end of
    its apply here (LAST_APPLIED_TRANSACTION_*); as of the last read."""
    # --- MariaDB 11.6+: the event times of SHOW REPLICA STATUS (the source's clock, as
    # naive date-times in the session's time zone, read as if UTC: ``LagFacts.tz_offset_s``
    # makes them epoch seconds)
    source_event_time: float | None = None
    """Master_last_event_time: the newest event the receiver read (naive seconds)."""
    replica_event_time: float | None = None
    """Slave_last_event_time: the newest event the applier executed (naive seconds)."""
    event_time_diff_s: float | None = None
    """Master_Slave_time_diff: seconds between the two (what was received, not now)."""

    @property
    def group_replication(self) -> bool:
        """A Group Replication channel (``group_replication_applier`` /
        ``_recovery``): not an asynchronous replica's link, judged by its own rules
        (members, certification), which replmon does not read yet."""
        return self.name.startswith("group_replication_")

    @property
    def applier_backlog_bytes(self) -> int | None:
        """Bytes received but not yet applied, when both threads are in the same
        source binlog file (innotop's bytes_behind_master); None otherwise, and when the
        executed position is past the read one (a receiver position from before a
        reconnect or a relay-log rotation): unknown, not 0."""
        if (
            self.read_source_log_pos is None
            or self.exec_source_log_pos is None
            or not self.source_log_file
            or self.source_log_file != self.relay_source_log_file
            or self.exec_source_log_pos > self.read_source_log_pos
        ):
            return None  # executed past read: the positions are of different moments
        return self.read_source_log_pos - self.exec_source_log_pos


@struct
class BinlogStatus(Struct):
    """This server's own binary log, GTID state and clock, read every
    ``positions_every`` seconds (2 s by default), not every tick: what the other node of
    the pair is compared with (the pair_lag and errant_writes checks). Both nodes read
    in the same tick (the period is aligned to the wall clock), so the two readings are
    of the same moment."""

    file: str = ""
    """Current binlog file (SHOW MASTER STATUS / SHOW BINARY LOG STATUS File); "" when
    the binary log is off or the account may not read it (``error``)."""
    position: int | None = None
    """Bytes: the write position in ``file``."""
    gtid_executed: str = ""
    """MySQL ``@@gtid_executed`` (every transaction this server executed, a GTID set);
    MariaDB ``@@gtid_binlog_pos`` (the last GTID per domain in its binlog)."""
    gtid_binlog_state: str = ""
    """MariaDB ``@@gtid_binlog_state``: the last GTID per (domain, server_id) in the
    binlog; an entry of the replica's own server_id is a write made on the replica."""
    gtid_slave_pos: str = ""
    """MariaDB's ``@@gtid_slave_pos``: the last GTID per domain this server applied as a
    replica. With ``log_slave_updates`` off a replica applies but never logs what it
    received (``gtid_binlog_state`` lacks it): errant_writes reads this too. ""
    on MySQL (its gtid_executed holds both)."""
    server_id: int | None = None
    """``@@server_id``."""
    server_uuid: str = ""
    """MySQL ``@@server_uuid``: the uuid of this server's own transactions."""
    server_time: float | None = None
    """The server's clock as epoch seconds (``UNIX_TIMESTAMP(NOW(6))``) when it answered."""
    sent_wall: float | None = None
    """replmon's clock (epoch seconds) when it sent that query."""
    elapsed_ms: float | None = None
    """Milliseconds the query took: the server's clock was read within it."""
    heartbeat: dict[int, float] = field(default_factory=dict)
    """pt-heartbeat rows, in recordings made before its table was read only with the true-lag
    facts (``LagFacts.heartbeat``, every tick): kept so they still read; no longer read."""
    error: str | None = None
    """What could not be read (a missing privilege); the
    rest of the reading is valid."""


PROCESS_INFO_CHARS = 120
"""Characters of a running statement kept (the rest is cut on the server)."""


@struct
class ProcessRow(Struct):
    """One thread of SHOW PROCESSLIST that is doing something (not sleeping): who runs
    what, for how long. The statement is cut to PROCESS_INFO_CHARS and scrubbed of
    password literals before it leaves the source."""

    id: int
    time_s: float
    """Seconds in the current state (MariaDB's TIME_MS / 1000, MySQL's TIME)."""
    user: str = ""
    host: str = ""
    """Client host:port ("" for the server's own threads)."""
    db: str | None = None
    command: str = ""
    """Query, Connect (a replication applier on MySQL), Slave_SQL/Slave_IO (MariaDB)..."""
    state: str | None = None
    info: str | None = None
    """The statement, first PROCESS_INFO_CHARS characters; None when idle in a command."""


@struct
class MysqlSample(SampleBase):
    """One reading of one MySQL/MariaDB server: a timed COM_PING, SHOW GLOBAL
    STATUS, the replication status and (when due) SHOW GLOBAL VARIABLES."""

    # --- server -------------------------------------------------------------
    flavour: Flavour | None = None
    """"mariadb" when the version string says MariaDB, else "mysql"."""
    version: str = ""
    """Server version from the handshake, e.g. "10.11.19-MariaDB-0+deb12u1-log"
    (MariaDB's "5.5.5-" compatibility prefix removed)."""
    rtt_ms: float | None = None
    """Milliseconds: one COM_PING round trip, timed just before SHOW GLOBAL STATUS."""
    uptime_s: int | None = None
    """Seconds since the server started (Uptime); lower than before = restart."""
    uptime_since_flush_s: int | None = None
    """Seconds since the last FLUSH STATUS (Uptime_since_flush_status); lower = flush."""

    # --- status ---------------------------------------------------------------
    counters: dict[str, int] = field(default_factory=dict)
    """Cumulative counters of COUNTER_FIELDS the server has, by status name."""
    gauges: dict[str, int | float] = field(default_factory=dict)
    """Point-in-time values of GAUGE_FIELDS the server has, by status name."""
    semi_sync: SemiSync = field(default_factory=SemiSync)
    """Semi-sync state (enabled flags come from ``variables``)."""
    row_counters: RowFamily | None = None
    """Which counters the rows_* fields come from: "innodb" (Innodb_rows_*) when the
    server has Innodb_rows_updated, else "handler" (Handler_write/update/delete;
    rows_read from Rows_read or the sum of Handler_read_*). Handler counts cover
    every engine and system tables too: on a MariaDB replica each applied
    transaction also writes (and later deletes) a mysql.gtid_slave_pos row."""
    rows_inserted: int | None = None
    """Rows inserted (cumulative), from the ``row_counters`` family."""
    rows_updated: int | None = None
    """Rows actually changed by updates (cumulative); matched-but-unchanged rows do not count."""
    rows_deleted: int | None = None
    """Rows deleted (cumulative)."""
    rows_read: int | None = None
    """Rows read (cumulative)."""

    # --- variables -------------------------------------------------------------
    variables: dict[str, str] = field(default_factory=dict)
    """SHOW GLOBAL VARIABLES subset (VARIABLE_NAMES present on this server), raw strings
    as the server prints them ("ON", "1", "ROW"...)."""
    variables_age_s: float | None = None
    """Seconds since ``variables`` were read (they are re-read about once a minute
    and after every reconnect)."""

    # --- replication -----------------------------------------------------------
    replication: list[ReplicaChannel] = field(default_factory=list)
    """One entry per replication connection/channel; empty when the server is not a
    replica (or when replication_error is set)."""
    replication_error: str | None = None
    """Why the replication status could not be read (e.g. a missing privilege); the
    rest of the sample is still valid."""
    replication_hint: str | None = None
    """What to do about replication_error (the GRANT to run)."""
    binlog: BinlogStatus | None = None
    """This server's binlog position, GTIDs and clock when they were read in this sample
    (every ``positions_every`` seconds); None in the samples between."""
    processlist: list[ProcessRow] | None = None
    """The longest-running active threads, longest first (at most 10), when they were
    read in this sample: every few seconds while the screen's processlist is open, and
    once after a finding opens (so a recording holds what ran then); None otherwise."""
    processlist_error: str | None = None
    """Why the processlist could not be read in this sample (a missing privilege)."""
    lag_facts: LagFacts | None = None
    """On a replica, every tick: its clock, pt-heartbeat's rows and the applier's commit
    timestamps (``replmon.model.lag``); None on a server with no replication channel."""
    error_counts: dict[str, int] = field(default_factory=dict)
    """Errors the server raised to clients since it started, by error number ("1290":
    read-only, "1040": too many connections, "1205", "1213", "1062" ...), the ones not
    at 0: MySQL 8.0+'s performance_schema.events_errors_summary_global_by_error, every
    tick; empty on MariaDB (no such table: its Connection_errors_* counters say what
    it counts) and where performance_schema is off or not readable."""
    space_waits: int = 0
    """Sessions stalled on a full disk ("Waiting for someone to free space" in the
    processlist: their writes hang until there is space again), every tick."""
    space_wait_s: int = 0
    """The longest of those waits, s (0 when none waits)."""

    @property
    def words(self) -> ReplicationWords:
        """Replication's statements and column names as this server says them."""
        return replication_words(self.flavour, self.version)
