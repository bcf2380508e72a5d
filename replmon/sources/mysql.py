"""The MySQL/MariaDB source: one sample's reads, in a worker thread or on the event loop.

How it talks to the server
--------------------------
pymysql is blocking; each sample runs one function (``_work``: connect when there is no
connection, ``_read``, the one retry on a kept connection found dead) in one of two
places. By default in a worker thread (``asyncio.to_thread``): the single-pair commands
(the screen, ``record``, ``check``, ``sample``) sample once a second, and there memory
counts (issue #56), not the thread's CPU. With ``on_loop=True`` (serve's fleet) in a
greenlet on the event loop's thread (``mysql_green.green``): its socket waits are the
loop's, saving the thread hand-offs (~190 futex calls per pair-tick), for greenlet's
~1 MB of RSS, imported on the first such sample; connecting, blocking in pymysql, still
goes to a worker thread from there (``mysql_green.offload``). Both read through the same
``GreenConnection`` (kernel-stamped round trips, column definitions parsed once). It
does, on one kept connection:

1. ``COM_PING`` (``conn.ping(reconnect=False)``), timed from the send to the reply's
   arrival (the kernel's stamp on TCP, ``mysql_green.begin``): rtt_ms;
2. ``SHOW GLOBAL STATUS WHERE Variable_name IN (...)`` (only the names replmon reads);
3. the replication status: MariaDB ``SHOW ALL SLAVES STATUS``, MySQL >= 8.0.22
   ``SHOW REPLICA STATUS``, older MySQL ``SHOW SLAVE STATUS``;
4. when due (first sample, every ``variables_every`` seconds, after a reconnect, and
   every sample for ``VARIABLES_RECHECK_S`` after a replication channel appeared, went
   or changed source: a switchover, whose read_only flips come within seconds of it)
   ``SHOW GLOBAL VARIABLES WHERE Variable_name IN (...)``;
5. every ``positions_every`` seconds (2 s; the period is aligned to the wall clock so
   both nodes read in the same tick), the server's own binlog and GTID state
   (``BinlogStatus``): one ``SELECT`` of the GTID variables, server id and
   ``UNIX_TIMESTAMP(NOW(6))`` (timed: the server's clock within a known round trip),
   ``SHOW MASTER STATUS`` (``SHOW BINARY LOG STATUS`` on MySQL >= 8.2) when the binary
   log is on. Read only, as everything replmon does; a missing privilege is noted, not
   a failure (pt-heartbeat's table is read every tick on a replica, with its true-lag
   facts: ``mysql_lag_reads``);
6. when asked (``want_processlist``: the screen's processlist view is open; every
   ``processlist_every`` seconds, 3 s) or once (``capture_processlist``: a finding
   opened), the 10 longest-running active threads from information_schema.PROCESSLIST
   (statements cut to 120 characters and scrubbed of password literals). No cost
   otherwise;
7. every tick, what decides whether the primary takes writes: read_only and its kin
   (between the full reads of 4), MySQL 8.0+'s errors raised to clients by number
   (performance_schema), and how many sessions wait for disk space (one COUNT over
   information_schema.PROCESSLIST); on MariaDB the variables and the COUNT are one
   statement (``WRITE_PATH_AND_SPACE_QUERY``);

then parses the rows (``mysql_parse`` and its siblings) into a MysqlSample; reads 3, 5
and 6, and what the server refuses of them, are ``mysql_reads``'. The Source base
runs it under the per-source timeout and, while a timed-out call is still
waiting (a hung server), reports "timeout" without starting another; pymysql's
read_timeout (from the endpoint; a poll's limit in a thread, a timer on the loop)
eventually frees it.

Connections are made lazily. Any connection-level error drops the connection;
the next sample reconnects. A kept connection that turns out dead (server
restarted, wait_timeout) is replaced once within the same sample. After a
failed connection attempt, further attempts wait ``reconnect_interval``
(1 s): a dead server is not hammered, and samples in between fail fast with
the last error.

Connecting, and what a failure means (the SourceError's state and hint; access denied
is "auth", a refused or lost connection "unreachable", a read timeout "timeout"), are
``mysql_connect``'s. A missing privilege for the replication status (1227) does not
fail the sample: it sets ``replication_error`` and a hint naming the GRANT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from typing import Any, ClassVar

import pymysql
import pymysql.cursors

from replmon.endpoints import MysqlEndpoint
from replmon.errors import ParseError, SourceError
from replmon.model.mysql import (
    VARIABLE_NAMES,
    WRITE_PATH_VARIABLES,
    Flavour,
    MysqlSample,
    ProcessRow,
    ReplicaChannel,
    clean_version,
    version_tuple,
)
from replmon.sources.base import Source
from replmon.sources.mysql_connect import (
    NOT_MYSQL_HINT,
    Backoff,
    connect,
    error_text,
    is_connection_error,
    is_retryable,
    source_error,
)
from replmon.sources.mysql_green import GreenConnection, begin, elapsed_ms, green, offload
from replmon.sources.mysql_lag_reads import quote_table, read_lag_facts
from replmon.sources.mysql_parse import (
    STATUS_NAMES,
    build_mysql_sample,
    detect_flavour,
    parse_global_status,
    parse_variables,
)
from replmon.sources.mysql_processlist_parse import (
    SPACE_WAIT_STATE,
    SPACE_WAITS_QUERY,
    parse_space_waits,
)
from replmon.sources.mysql_reads import (
    Statements,
    read_positions,
    read_processlist,
    read_receiver_times,
    read_replication,
)
from replmon.sources.mysql_replica_parse import (
    APPLIER_WORKERS_QUERY,
    ApplierDetail,
    parse_applier_workers,
    parse_replica_status,
    with_applier,
)

log = logging.getLogger(__name__)

STATUS_QUERY = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in STATUS_NAMES)
)
VARIABLES_QUERY = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in VARIABLE_NAMES)
)
WRITE_PATH_QUERY = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in WRITE_PATH_VARIABLES)
)
WRITE_PATH_AND_SPACE_QUERY = (
    "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
    "WHERE VARIABLE_NAME IN ({}) UNION ALL "
    "SELECT '#waits', COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE '{}%' "
    "UNION ALL "
    "SELECT '#longest', COALESCE(MAX(TIME), 0) FROM information_schema.PROCESSLIST "
    "WHERE STATE LIKE '{}%'").format(
    ", ".join(f"'{n.upper()}'" for n in WRITE_PATH_VARIABLES), SPACE_WAIT_STATE,
    SPACE_WAIT_STATE)
"""MariaDB, every tick but when all the variables are read: WRITE_PATH_QUERY and
SPACE_WAITS_QUERY in one round trip. MariaDB's SHOW GLOBAL VARIABLES is this
information_schema table (the same text), and the two counts come back as text:
(name, value) rows, the space waits' two under '#' names (``_write_path_and_space``)."""
ERRORS_QUERY = (
    "SELECT ERROR_NUMBER, SUM_ERROR_RAISED "
    "FROM performance_schema.events_errors_summary_global_by_error "
    "WHERE SUM_ERROR_RAISED > 0 AND ERROR_NUMBER IS NOT NULL"
)
"""MySQL 8.0+: the errors raised to clients, by number (the rows not at 0)."""


RECEIVER_RETRY_S = 2.0
"""Seconds before a receiver time that could not be read (no single receiver thread in the
processlist) is asked again, instead of ``variables_every``."""


class _Lost(Exception):
    """Internal: a connection-level failure; ``error`` is what the sample reports."""

    def __init__(self, error: SourceError, retryable: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.retryable = retryable


VARIABLES_RECHECK_S = 5.0
"""Seconds after the replication channels changed (came, went, re-pointed) during which
the variables (read_only first) are read every sample: a switchover's read_only flips
come within seconds of it, and are otherwise read up to ``variables_every`` late."""

class MysqlSource(Source[MysqlSample]):
    """Samples one MySQL/MariaDB server (status, replication, variables)."""

    kind: ClassVar[str] = "mysql"
    sample_type = MysqlSample
    fresh_samples = True  # (build_mysql_sample: a new MysqlSample.trusted each call)

    def __init__(
        self,
        endpoint: MysqlEndpoint,
        *,
        timeout: float = 0.8,
        variables_every: float = 60.0,
        reconnect_interval: float = 1.0,
        positions_every: float = 2.0,
        heartbeat_table: str | None = None,
        processlist_every: float = 3.0,
        applier_every: float = 5.0,
        on_loop: bool = False,
    ) -> None:
        super().__init__(timeout=timeout)
        self.endpoint = endpoint
        self.on_loop = on_loop
        """Each sample on the event loop's thread in a greenlet (serve: less CPU per
        sample, +1 MB RSS for greenlet), not in a worker thread (module docstring)."""
        self.variables_every = variables_every
        self._backoff = Backoff(reconnect_interval)
        self._lock = threading.Lock()  # held by the sample (_work) while it uses _conn
        self._conn: pymysql.connections.Connection[Any] | None = None
        self._closed = False
        self._version = ""
        self._flavour: Flavour = "mysql"
        self._statements = Statements()
        self._variables: dict[str, str] = {}
        self._variables_mono: float | None = None
        self._variables_recheck_until = 0.0
        """Monotonic time until which variables are read every sample (after the
        replication channels changed)."""
        self._channel_shape: tuple[tuple[str, str, int | None], ...] | None = None
        self.positions_every = positions_every
        self.heartbeat_table = heartbeat_table and quote_table(heartbeat_table)
        self._positions_bucket: int | None = None
        self._noted: set[str] = set()
        """Binlog read problems already logged (once per source)."""
        self._errors_refused = False
        """performance_schema's error summary refused once (a grant, P_S off): not asked
        again on this source."""
        self.processlist_every = processlist_every
        self._processlist_until = 0.0
        """Monotonic time until which the processlist is read every processlist_every."""
        self._processlist_once = False
        self._processlist_mono: float | None = None
        self._semi_status: tuple[bool | None, bool | None] | None = None
        """Semi-sync source/replica status at the last sample: a change re-reads the
        variables at once (so "enabled" is never a minute older than "status OFF")."""
        self.applier_every = applier_every
        self._applier_mono: float | None = None
        self._applier_errors: tuple[tuple[str, int, str], ...] = ()
        self._applier_detail: dict[str, ApplierDetail] = {}
        self._receiver: tuple[tuple[object, ...], int | None, float] | None = None
        """(the connected channel, its receiver's time when read (None: unknown),
        monotonic time of that read)."""
        """Per channel, as of the last read of the workers' table."""

    def __repr__(self) -> str:
        return f"MysqlSource({self.endpoint.display()})"

    def want_processlist(self, seconds: float) -> None:
        """Read the processlist every ``processlist_every`` s for the next ``seconds``
        (0 stops). The screen renews it while its view is open, so a screen that went
        away costs nothing after ``seconds``."""
        self._processlist_until = time.monotonic() + seconds if seconds > 0 else 0.0

    def capture_processlist(self) -> None:
        """Read the processlist once, in the next sample (a finding just opened)."""
        self._processlist_once = True

    def _processlist_due(self) -> bool:
        now = time.monotonic()
        if self._processlist_once:
            return True
        last = self._processlist_mono
        return now < self._processlist_until and (
            last is None or now - last >= self.processlist_every - 0.05)

    async def open(self) -> None:
        """Nothing to do: the first sample connects."""
        self._closed = False

    async def close(self) -> None:
        await super().close()
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                self._drop()
            finally:
                self._lock.release()
        # else: a sample is still waiting on a hung server; it drops the connection
        # itself when it is cancelled (above) or pymysql's read_timeout frees it.

    async def _fetch(self) -> MysqlSample:
        if self._conn is None:
            wait = self._backoff.waiting(time.monotonic())
            if wait > 0 and self._backoff.last is not None:
                last = self._backoff.last
                raise SourceError(
                    f"{last} (next connection attempt in {wait:.1f} s)",
                    state=last.state,
                    hint=last.hint,
                )
        if self.on_loop:
            return await green(self._work)
        return await asyncio.to_thread(self._work)

    def _work(self) -> MysqlSample:
        """One sample, in a worker thread or in a ``green`` greenlet (``on_loop``)."""
        # Held already: by a sample whose task was cancelled (close()) while its thread
        # goes on, or by close() for a moment. Not waited for: on the loop's thread a
        # blocking acquire would hang the loop, and the holder with it.
        if not self._lock.acquire(blocking=False):
            raise SourceError(f"{self.endpoint.display()}: previous request still pending",
                              state="timeout")
        try:
            if self._closed:
                raise SourceError(f"{self.endpoint.display()}: source closed")
            conn, reused = self._conn, self._conn is not None
            if conn is None:
                conn = self._connect()
            try:
                return self._read(conn, not reused)
            except _Lost as lost:
                self._drop()
                if not (reused and lost.retryable):
                    raise lost.error from None
                log.debug("%s: kept connection lost (%s); reconnecting", self, lost.error)
                try:
                    return self._read(self._connect(), True)
                except _Lost as again:
                    self._drop()
                    raise again.error from None
        finally:
            if self._closed:
                self._drop()
            self._lock.release()

    def _connect(self) -> pymysql.connections.Connection[Any]:
        try:
            # a worker thread's, in both modes: pymysql's connect blocks (up to
            # connect_timeout for the TCP connect, read_timeout for each handshake read)
            conn = offload(connect, self.endpoint, GreenConnection)
        except SourceError as error:
            self._backoff.failed(error, time.monotonic())
            log.debug("%s: connect failed: %s", self, error)
            raise
        self._backoff.succeeded()
        self._conn = conn
        if self._closed:  # closed while connecting (close() does not wait for a sample)
            self._drop()
            raise SourceError(f"{self.endpoint.display()}: source closed")
        self._version = clean_version(str(conn.get_server_info() or ""))  # type: ignore[no-untyped-call]
        self._flavour = detect_flavour(self._version)
        self._statements = Statements.for_server(self._flavour, self._version)
        self._applier_mono = None
        log.debug("%s: connected to %s", self, self._version)
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _read(self, conn: pymysql.connections.Connection[Any], fresh: bool) -> MysqlSample:
        """Ping, status, replication, variables when due; connection errors raise _Lost."""
        try:
            start = begin(conn)[1]
            conn.ping(reconnect=False)
            rtt_ms = elapsed_ms(conn, start)
            with conn.cursor() as cur:
                cur.execute(STATUS_QUERY)
                status_rows = cur.fetchall()
                last = self._variables_mono
                due = last is None or time.monotonic() - last >= self.variables_every \
                    or time.monotonic() < self._variables_recheck_until
                status = parse_global_status(status_rows)
                semi = (status.source_active, status.replica_active)
                if semi != self._semi_status:  # switched on/off, or fell back: the
                    self._semi_status = semi  # semi_sync check needs the variable now
                    due = True
                if fresh or due or self._flavour != "mariadb":
                    if fresh or due:
                        self._read_variables(cur)
                    else:  # what makes a primary refuse writes: every tick
                        self._read_write_path(cur)
                    errors = self._read_errors(cur)
                    cur.execute(SPACE_WAITS_QUERY)  # writes stalled on a full disk
                    space_waits = parse_space_waits(cur.fetchall())
                else:  # MariaDB: both in one round trip (no error summary there)
                    errors = {}
                    space_waits = self._write_path_and_space(cur)
            replication, repl_error, repl_hint = read_replication(
                conn, self._statements, self.endpoint, self._flavour, self._version)
            channels = parse_replica_status(replication, self._flavour)
            shape = tuple((c.name, c.source_host, c.source_port) for c in channels)
            if shape != self._channel_shape:
                # a channel came, went or was re-pointed: a switchover or failover, whose
                # read_only flips come with it: variables now, and every sample for a few
                # seconds (not a minute late)
                if self._channel_shape is not None:
                    self._variables_recheck_until = time.monotonic() + VARIABLES_RECHECK_S
                    if not (fresh or due):
                        with conn.cursor() as cur:
                            self._read_variables(cur)
                self._channel_shape = shape
            if self._applier_due(channels):
                self._applier(conn)
            if self._applier_detail:
                channels = with_applier(channels, self._applier_detail)
            channels = self._connected(conn, channels)
            bucket = int(time.time() // self.positions_every)
            binlog = None
            if fresh or bucket != self._positions_bucket:
                self._positions_bucket = bucket
                binlog = read_positions(conn, self._statements, self._flavour, self._variables,
                                        self._note)
            lag_facts = None
            if channels:  # a replica: its true-lag facts, every tick
                lag_facts, self._statements.applier_times = read_lag_facts(
                    conn, heartbeat_table=self.heartbeat_table,
                    applier=self._statements.applier_times and self._flavour == "mysql"
                    and version_tuple(self._version) >= (8, 0, 2), note=self._note)
            processes, processes_error = None, None
            if self._processlist_due():
                processes, processes_error = self._processlist(conn)
        except (pymysql.err.MySQLError, OSError) as e:
            error = source_error(self.endpoint, e, connecting=False)
            if is_connection_error(e):
                raise _Lost(error, is_retryable(e)) from None
            raise error from None
        except ParseError:
            raise  # a status value replmon cannot read: the sample's parse error, as before
        except Exception as e:  # noqa: BLE001 - protocol garbage (not a MySQL server?)
            text = f"{self.endpoint.display()}: unexpected reply: {error_text(self.endpoint, e)}"
            raise _Lost(SourceError(text, hint=NOT_MYSQL_HINT), False) from None
        age = None if self._variables_mono is None else time.monotonic() - self._variables_mono
        return build_mysql_sample(
            version=self._version,
            status=status,
            variables=self._variables,
            replication=channels,
            replication_error=repl_error,
            replication_hint=repl_hint,
            rtt_ms=rtt_ms,
            variables_age_s=age,
            binlog=binlog,
            processlist=processes,
            processlist_error=processes_error,
            lag_facts=lag_facts,
            error_counts=errors,
            space_waits=space_waits,
        )

    def _connected(self, conn: pymysql.connections.Connection[Any],
                   channels: list[ReplicaChannel]) -> list[ReplicaChannel]:
        """The one connected channel with how long its receiver has been connected (read
        when the channels change and every ``variables_every`` seconds, counted on in
        between: a processlist scan is not for every tick of a busy server)."""
        up = [c for c in channels if c.io_running == "Yes"]
        if len(up) != 1:
            self._receiver = None
            return channels
        shape = (up[0].name, up[0].source_host, up[0].source_port, up[0].source_server_id)
        now = time.monotonic()
        known = self._receiver
        # a None read again soon: a channel that just (re)started may not show its
        # receiver in the processlist yet (seen on MySQL 9.7 right after a rejoin)
        again = self.variables_every if known is None or known[1] is not None \
            else RECEIVER_RETRY_S
        if known is None or known[0] != shape or now - known[2] >= again:
            times = read_receiver_times(conn, self._note)
            known = self._receiver = (shape, times[0] if len(times) == 1 else None, now)
        if known[1] is None:
            return channels
        age = known[1] + int(now - known[2])
        # model_copy, not dataclasses.replace (which validates the whole channel again):
        # ``age`` is an int, as the field
        return [c.model_copy(update={"connected_s": age}) if c is up[0] else c
                for c in channels]

    def _read_variables(self, cur: Any) -> None:
        cur.execute(VARIABLES_QUERY)
        self._variables = parse_variables(cur.fetchall())
        self._variables_mono = time.monotonic()

    def _read_write_path(self, cur: Any) -> None:
        """read_only and its kin into the variables kept (a new dict when one changed)."""
        cur.execute(WRITE_PATH_QUERY)
        now = parse_variables(cur.fetchall())
        if any(self._variables.get(k) != v for k, v in now.items()):
            self._variables = {**self._variables, **now}

    def _write_path_and_space(self, cur: Any) -> tuple[int, int]:
        """MariaDB: ``_read_write_path`` and the space waits from one statement
        (WRITE_PATH_AND_SPACE_QUERY)."""
        cur.execute(WRITE_PATH_AND_SPACE_QUERY)
        rows = cur.fetchall()
        waits = [r[1:] for r in rows if r and r[0] in ("#waits", "#longest")]
        now = parse_variables(r for r in rows if not (r and r[0] in ("#waits", "#longest")))
        if any(self._variables.get(k) != v for k, v in now.items()):
            self._variables = {**self._variables, **now}
        if len(waits) != 2 or len(waits[0]) != 1 or len(waits[1]) != 1:
            return parse_space_waits(waits)  # the ParseError of the two separate reads
        return parse_space_waits([(waits[0][0], waits[1][0])])

    def _read_errors(self, cur: Any) -> dict[str, int]:
        """The errors raised to clients, by number (MySQL 8.0+; {} elsewhere, and where
        performance_schema cannot be read: noted once, not a failed sample)."""
        if self._flavour != "mysql" or version_tuple(self._version) < (8, 0, 0) \
                or self._errors_refused:
            return {}
        try:
            cur.execute(ERRORS_QUERY)
            return {str(int(n)): int(c) for n, c in cur.fetchall()}
        except pymysql.err.MySQLError as e:
            if is_connection_error(e):
                raise
            self._errors_refused = True
            self._note("error summary (performance_schema)", e)
            return {}

    def _applier_due(self, channels: list[ReplicaChannel]) -> bool:
        """Oracle MySQL 8.0.2+ replicas: the workers' table when an applier error appears
        or changes (its cause is there, not in SHOW REPLICA STATUS), else every
        ``applier_every`` seconds."""
        if not channels or not self._statements.applier:
            return False
        if self._flavour != "mysql" or version_tuple(self._version) < (8, 0, 2):
            return False
        errors = tuple((ch.name, ch.last_sql_errno, ch.last_sql_error_time)
                       for ch in channels if ch.last_sql_errno)
        if errors != self._applier_errors:
            self._applier_errors = errors
            return True
        last = self._applier_mono
        return last is None or time.monotonic() - last >= self.applier_every

    def _applier(self, conn: pymysql.connections.Connection[Any]) -> None:
        self._applier_mono = time.monotonic()
        with conn.cursor() as cur:
            try:
                cur.execute(APPLIER_WORKERS_QUERY)
            except pymysql.err.MySQLError as e:
                if is_connection_error(e):
                    raise
                # no SELECT on performance_schema (or it is off): not again on this
                # connection; SHOW REPLICA STATUS still says what it says
                log.info("%s: %s", self, self._note("applier workers", e))
                self._statements.applier = None
                return
            try:
                self._applier_detail = parse_applier_workers(cur.fetchall())
            except ParseError as e:  # noted; the sample stands on SHOW REPLICA STATUS
                log.info("%s: %s", self, self._note("applier workers", e))
                self._applier_detail = {}

    def _processlist(self, conn: pymysql.connections.Connection[Any]
                     ) -> tuple[list[ProcessRow], str | None]:
        """The processlist now (a capture is done with); the next when due again."""
        self._processlist_once = False
        self._processlist_mono = time.monotonic()
        return read_processlist(conn, self._flavour, self._note)

    def _note(self, what: str, e: BaseException) -> str:
        """An error text for a reading's note (BinlogStatus.error, processlist_error),
        logged the first time only."""
        text = error_text(self.endpoint, e)
        if what not in self._noted:
            self._noted.add(what)
            log.warning("%s: cannot read the %s: %s", self, what, text)
        return f"{what}: {text}"
