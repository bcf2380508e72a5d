"""The MySQL/MariaDB source: one worker-thread call per sample.

How it talks to the server
--------------------------
pymysql is blocking, so each sample runs one function in a worker thread
(``asyncio.to_thread``) that does, on one kept connection:

1. ``COM_PING`` (``conn.ping(reconnect=False)``), timed with perf_counter: rtt_ms;
2. ``SHOW GLOBAL STATUS WHERE Variable_name IN (...)`` (only the names replmon reads);
3. the replication status: MariaDB ``SHOW ALL SLAVES STATUS``, MySQL >= 8.0.22
   ``SHOW REPLICA STATUS``, older MySQL ``SHOW SLAVE STATUS``;
4. when due (first sample, every ``variables_every`` seconds, after a reconnect)
   ``SHOW GLOBAL VARIABLES WHERE Variable_name IN (...)``;
5. every ``positions_every`` seconds (2 s; the period is aligned to the wall clock so
   both nodes read in the same tick), the server's own binlog and GTID state
   (``BinlogStatus``): one ``SELECT`` of the GTID variables, server id and
   ``UNIX_TIMESTAMP(NOW(6))`` (timed: the server's clock within a known round trip),
   ``SHOW MASTER STATUS`` (``SHOW BINARY LOG STATUS`` on MySQL >= 8.2) when the binary
   log is on, and the pt-heartbeat table's rows when one is configured. Read only, as
   everything replmon does; a missing privilege or table is noted, not a failure;
6. when asked (``want_processlist``: the screen's processlist view is open; every
   ``processlist_every`` seconds, 3 s) or once (``capture_processlist``: a finding
   opened), the 10 longest-running active threads from information_schema.PROCESSLIST
   (statements cut to 120 characters and scrubbed of password literals). No cost
   otherwise;

then parses the rows (``mysql_parse`` and its siblings) into a MysqlSample. The
Source base runs it under the per-source timeout and, while a timed-out call is
still blocked in its thread (a hung server), reports "timeout" without starting
another; pymysql's own read_timeout (from the endpoint) eventually frees it.

Connections are made lazily. Any connection-level error drops the connection;
the next sample reconnects. A kept connection that turns out dead (server
restarted, wait_timeout) is replaced once within the same sample. After a
failed connection attempt, further attempts wait ``reconnect_interval``
(1 s): a dead server is not hammered, and samples in between fail fast with
the last error.

Errors become SourceError with a state: access denied (1045/1044/1698) ->
"auth"; refused, unknown host, lost connection, connect timeout -> "unreachable";
a read timeout on an established connection -> "timeout"; anything else ->
"error". A missing privilege for the replication status (1227) does not fail
the sample: it sets ``replication_error`` and a hint naming the GRANT.

The password is a SecretStr; ``get_secret_value()`` is called only inside the
``pymysql.connect`` call. Error texts are pymysql's messages (user@host, never
the password), scrubbed of the password all the same, and exceptions are
re-raised ``from None`` so no pymysql frame is chained into a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
import time
from typing import Any, ClassVar

import pymysql
import pymysql.cursors

from replmon.endpoints import MysqlEndpoint
from replmon.errors import ConfigError, ParseError, SourceError
from replmon.model.mysql import (
    VARIABLE_NAMES,
    BinlogStatus,
    Flavour,
    MysqlSample,
    ProcessRow,
    ReplicaChannel,
    clean_version,
    version_tuple,
)
from replmon.sources.base import Source
from replmon.sources.mysql_binlog_parse import (
    MARIADB_POSITIONS_QUERY,
    MYSQL_POSITIONS_QUERY,
    binlog_grant_hint,
    binlog_status_query,
    build_binlog_status,
    parse_binlog_status,
    parse_heartbeat,
    quote_table,
)
from replmon.sources.mysql_parse import (
    STATUS_NAMES,
    build_mysql_sample,
    detect_flavour,
    parse_global_status,
    parse_variables,
)
from replmon.sources.mysql_processlist_parse import parse_processlist, processlist_query
from replmon.sources.mysql_replica_parse import (
    APPLIER_WORKERS_QUERY,
    ApplierDetail,
    parse_applier_workers,
    parse_replica_status,
    replica_status_query,
    replication_grant_hint,
    with_applier,
)
from replmon.sources.mysql_values import parse_bool

log = logging.getLogger(__name__)

STATUS_QUERY = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in STATUS_NAMES)
)
VARIABLES_QUERY = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in VARIABLE_NAMES)
)

_AUTH_CODES = {1044, 1045, 1698}
_UNREACHABLE_CODES = {2002, 2003, 2005, 2006, 2013, 2055}
_RETRYABLE_CODES = {2006, 2013}  # a kept connection the server has dropped
_DENIED_CODES = {1044, 1142, 1143, 1227, 1370}  # no privilege for this one query
AUTH_HINT = (
    "check the MySQL user and password replmon uses for this node (config, ~/.my.cnf, "
    "REPLMON_*_MYSQL_PASSWORD) and that the account may connect from this host"
)
SOCKET_AUTH_HINT = (
    "this account authenticates by unix socket only; give replmon a password account "
    "(CREATE USER ... IDENTIFIED BY ...)"
)
UNREACHABLE_HINT = "is the server running and listening there (bind-address, firewall)?"
NOT_MYSQL_HINT = "is a MySQL/MariaDB server listening on this address?"


def tls_arguments(ep: MysqlEndpoint) -> dict[str, Any]:
    """pymysql.connect's TLS arguments for the endpoint's ssl-mode, as MySQL's client
    means them. PREFERRED is pymysql's own default (TLS when the server offers it, the
    certificate not checked); REQUIRED and up pass a context, which makes pymysql refuse
    a server without TLS before it sends the password. Without TLS, caching_sha2_password
    and sha256_password exchange the password under the server's RSA key (the
    ``cryptography`` package)."""
    mode = ep.tls_mode
    if mode == "DISABLED":
        return {"ssl_disabled": True}
    if mode == "PREFERRED":
        return {"ssl_disabled": False}
    verify = mode in ("VERIFY_CA", "VERIFY_IDENTITY")
    try:
        ctx = ssl.create_default_context(cafile=ep.ssl_ca if verify else None)
        # MySQL's auto-generated certificates (a server's first start) miss extensions
        # that Python 3.13's strict X.509 checks want; the CA check itself stays.
        ctx.verify_flags &= ~ssl.VERIFY_X509_STRICT
        ctx.check_hostname = mode == "VERIFY_IDENTITY"
        ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
        if ep.ssl_cert:
            ctx.load_cert_chain(ep.ssl_cert, ep.ssl_key)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"{ep.display()}: ssl-mode {mode}: cannot load "
                          f"{ep.ssl_ca or ep.ssl_cert}: {e}") from None
    return {"ssl": ctx}


class _Backoff:
    """After a failed connection attempt, no new attempt for ``interval`` seconds."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.last: SourceError | None = None
        self._not_before = 0.0

    def waiting(self, now: float) -> float:
        """Seconds until the next attempt is allowed (0 = go ahead)."""
        return max(0.0, self._not_before - now) if self.last is not None else 0.0

    def failed(self, error: SourceError, now: float) -> None:
        self.last, self._not_before = error, now + self.interval

    def succeeded(self) -> None:
        self.last, self._not_before = None, 0.0


class _Lost(Exception):
    """Internal: a connection-level failure; ``error`` is what the sample reports."""

    def __init__(self, error: SourceError, retryable: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.retryable = retryable


class MysqlSource(Source[MysqlSample]):
    """Samples one MySQL/MariaDB server (status, replication, variables)."""

    kind: ClassVar[str] = "mysql"
    sample_type = MysqlSample

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
    ) -> None:
        super().__init__(timeout=timeout)
        self.endpoint = endpoint
        self.variables_every = variables_every
        self._backoff = _Backoff(reconnect_interval)
        self._lock = threading.Lock()  # held by the worker thread while it uses _conn
        self._conn: pymysql.connections.Connection[Any] | None = None
        self._closed = False
        self._version = ""
        self._flavour: Flavour = "mysql"
        self._replica_query = "SHOW SLAVE STATUS"
        self._variables: dict[str, str] = {}
        self._variables_mono: float | None = None
        self.positions_every = positions_every
        self.heartbeat_table = heartbeat_table and quote_table(heartbeat_table)
        self._positions_bucket: int | None = None
        self._binlog_query: str | None = None
        """SHOW MASTER STATUS or its MySQL 8.2+ name; None after it was refused (until the
        next connection)."""
        self._noted: set[str] = set()
        """Binlog read problems already logged (once per source)."""
        self.processlist_every = processlist_every
        self._processlist_until = 0.0
        """Monotonic time until which the processlist is read every processlist_every."""
        self._processlist_once = False
        self._processlist_mono: float | None = None
        self._semi_status: tuple[bool | None, bool | None] | None = None
        """Semi-sync source/replica status at the last sample: a change re-reads the
        variables at once (so "enabled" is never a minute older than "status OFF")."""
        self.applier_every = applier_every
        self._applier_query: str | None = APPLIER_WORKERS_QUERY
        """None after the server refused it (until the next connection)."""
        self._applier_mono: float | None = None
        self._applier_errors: tuple[tuple[str, int, str], ...] = ()
        self._applier_detail: dict[str, ApplierDetail] = {}
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
        # else: a worker is still blocked on a hung server; it drops the
        # connection itself when pymysql's read_timeout frees it.

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
        return await asyncio.to_thread(self._work)

    # --- worker thread ---------------------------------------------------------

    def _work(self) -> MysqlSample:
        with self._lock:
            try:
                if self._closed:
                    raise SourceError(f"{self.endpoint.display()}: source closed")
                conn, reused = self._conn, self._conn is not None
                if conn is None:
                    conn = self._connect()
                try:
                    return self._read(conn, fresh=not reused)
                except _Lost as lost:
                    self._drop()
                    if not (reused and lost.retryable):
                        raise lost.error from None
                    log.debug("%s: kept connection lost (%s); reconnecting", self, lost.error)
                    try:
                        return self._read(self._connect(), fresh=True)
                    except _Lost as again:
                        self._drop()
                        raise again.error from None
            finally:
                if self._closed:
                    self._drop()

    def _connect(self) -> pymysql.connections.Connection[Any]:
        ep = self.endpoint
        where = {"unix_socket": ep.socket} if ep.socket else {"host": ep.host, "port": ep.port}
        try:
            conn = pymysql.connect(
                **where,
                user=ep.user,
                password=ep.password.get_secret_value() if ep.password is not None else "",
                connect_timeout=ep.connect_timeout,
                read_timeout=ep.read_timeout,
                write_timeout=ep.read_timeout,
                autocommit=True,
                charset="utf8mb4",
                local_infile=False,
                **tls_arguments(ep),
            )
        except Exception as e:  # noqa: BLE001 - every failure becomes a status
            error = self._error(e, connecting=True)
            self._backoff.failed(error, time.monotonic())
            log.debug("%s: connect failed: %s", self, error)
            raise error from None
        self._backoff.succeeded()
        self._conn = conn
        self._version = clean_version(str(conn.get_server_info() or ""))  # type: ignore[no-untyped-call]
        self._flavour = detect_flavour(self._version)
        self._replica_query = replica_status_query(self._flavour, self._version)
        self._binlog_query = binlog_status_query(self._flavour, self._version)
        self._applier_query, self._applier_mono = APPLIER_WORKERS_QUERY, None
        log.debug("%s: connected to %s", self, self._version)
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _read(self, conn: pymysql.connections.Connection[Any], *, fresh: bool) -> MysqlSample:
        """Ping, status, replication, variables when due; connection errors raise _Lost."""
        try:
            start = time.perf_counter()
            conn.ping(reconnect=False)
            rtt_ms = (time.perf_counter() - start) * 1000.0
            with conn.cursor() as cur:
                cur.execute(STATUS_QUERY)
                status_rows = cur.fetchall()
                last = self._variables_mono
                due = last is None or time.monotonic() - last >= self.variables_every
                status = parse_global_status(status_rows)
                semi = (status.source_active, status.replica_active)
                if semi != self._semi_status:  # switched on/off, or fell back: the
                    self._semi_status = semi  # semi_sync check needs the variable now
                    due = True
                if fresh or due:
                    cur.execute(VARIABLES_QUERY)
                    self._variables = parse_variables(cur.fetchall())
                    self._variables_mono = time.monotonic()
            replication, repl_error, repl_hint = self._replication(conn)
            channels = parse_replica_status(replication, self._flavour)
            if self._applier_due(channels):
                self._applier(conn)
            if self._applier_detail:
                channels = with_applier(channels, self._applier_detail)
            bucket = int(time.time() // self.positions_every)
            binlog = None
            if fresh or bucket != self._positions_bucket:
                self._positions_bucket = bucket
                binlog = self._positions(conn)
            processes, processes_error = None, None
            if self._processlist_due():
                processes, processes_error = self._processlist(conn)
        except (pymysql.err.MySQLError, OSError) as e:
            error = self._error(e, connecting=False)
            if self._is_connection_error(e):
                raise _Lost(error, self._is_retryable(e)) from None
            raise error from None
        except ParseError:
            raise  # a status value replmon cannot read: the sample's parse error, as before
        except Exception as e:  # noqa: BLE001 - protocol garbage (not a MySQL server?)
            text = f"{self.endpoint.display()}: unexpected reply: {self._clean(e)}"
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
        )

    def _applier_due(self, channels: list[ReplicaChannel]) -> bool:
        """Oracle MySQL 8.0.2+ replicas: the workers' table when an applier error appears
        or changes (its cause is there, not in SHOW REPLICA STATUS), else every
        ``applier_every`` seconds."""
        if not channels or not self._applier_query:
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
                if self._is_connection_error(e):
                    raise
                # no SELECT on performance_schema (or it is off): not again on this
                # connection; SHOW REPLICA STATUS still says what it says
                log.info("%s: %s", self, self._note("applier workers", e))
                self._applier_query = None
                return
            try:
                self._applier_detail = parse_applier_workers(cur.fetchall())
            except ParseError as e:  # noted; the sample stands on SHOW REPLICA STATUS
                log.info("%s: %s", self, self._note("applier workers", e))
                self._applier_detail = {}

    def _processlist(self, conn: pymysql.connections.Connection[Any]
                     ) -> tuple[list[ProcessRow], str | None]:
        """The longest-running active threads; ([], note) when the server refuses."""
        self._processlist_once = False
        self._processlist_mono = time.monotonic()
        with conn.cursor() as cur:
            try:
                cur.execute(processlist_query(self._flavour))
            except pymysql.err.MySQLError as e:
                if self._is_connection_error(e):
                    raise
                return [], self._note("processlist", e)
            try:
                return parse_processlist(cur.fetchall()), None
            except ParseError as e:  # a reply replmon cannot read: noted, the sample stands
                return [], self._note("processlist", e)

    def _replication(
        self, conn: pymysql.connections.Connection[Any]
    ) -> tuple[list[dict[str, Any]], str | None, str | None]:
        """Rows of the replication status, or ([], error, hint) on a missing privilege."""
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            try:
                cur.execute(self._replica_query)
            except pymysql.err.MySQLError as e:
                code = _code(e)
                if code == 1227:
                    text = f"{self._replica_query}: {self._clean(e)}"
                    hint = replication_grant_hint(self._flavour, self._version, self.endpoint.user)
                    return [], text, hint
                if code == 1064 and self._replica_query != "SHOW SLAVE STATUS":
                    self._replica_query = "SHOW SLAVE STATUS"  # an older server: fall back once
                    cur.execute(self._replica_query)
                else:
                    raise
            return list(cur.fetchall()), None, None

    def _positions(self, conn: pymysql.connections.Connection[Any]) -> BinlogStatus:
        """This server's binlog position, GTIDs, server id and clock (see BinlogStatus)."""
        errors: list[str] = []
        with conn.cursor() as cur:
            sent, start = time.time(), time.perf_counter()
            cur.execute(MARIADB_POSITIONS_QUERY if self._flavour == "mariadb"
                        else MYSQL_POSITIONS_QUERY)
            row = cur.fetchone()
            elapsed_ms = (time.perf_counter() - start) * 1000.0
            file, position = "", None
            if self._binlog_query and parse_bool("log_bin", self._variables.get("log_bin", "OFF")):
                try:
                    cur.execute(self._binlog_query)
                    file, position = parse_binlog_status(cur.fetchone())
                except pymysql.err.MySQLError as e:
                    if _code(e) == 1064 and self._binlog_query != "SHOW MASTER STATUS":
                        self._binlog_query = "SHOW MASTER STATUS"  # older server: once
                    elif _code(e) in _DENIED_CODES:
                        self._binlog_query = None  # not again on this connection
                        hint = binlog_grant_hint(self._flavour)
                        errors.append(f"{self._note('binlog', e)}; {hint}")
                    else:
                        raise
            heartbeat: dict[int, float] = {}
            if self.heartbeat_table:
                try:
                    cur.execute(f"SELECT server_id, ts FROM {self.heartbeat_table}")
                    heartbeat = parse_heartbeat(cur.fetchall())
                except ParseError as e:  # not pt-heartbeat's format: this reading only
                    errors.append(self._note("heartbeat", e))
                except pymysql.err.MySQLError as e:
                    if _code(e) not in _DENIED_CODES | {1146, 1049, 1054}:
                        raise
                    errors.append(f"{self._note('heartbeat', e)}; pt-heartbeat's table with "
                                  f"GRANT SELECT ON {self.heartbeat_table} for replmon?")
        return build_binlog_status(row, file=file, position=position, heartbeat=heartbeat,
                                   sent_wall=sent, elapsed_ms=elapsed_ms,
                                   error="; ".join(errors) or None)

    def _note(self, what: str, e: BaseException) -> str:
        """An error text for a reading's note (BinlogStatus.error, processlist_error),
        logged the first time only."""
        text = self._clean(e)
        if what not in self._noted:
            self._noted.add(what)
            log.warning("%s: cannot read the %s: %s", self, what, text)
        return f"{what}: {text}"

    # --- error mapping ------------------------------------------------------------

    @staticmethod
    def _is_connection_error(e: BaseException) -> bool:
        code = _code(e)
        return (
            isinstance(e, OSError | pymysql.err.InterfaceError)
            or code in _UNREACHABLE_CODES
            or (code is not None and 2000 <= code < 3000)
        )

    @staticmethod
    def _is_retryable(e: BaseException) -> bool:
        """A kept connection the server closed (not a hung server timing out)."""
        text = str(e).lower()
        if "timed out" in text or isinstance(e, TimeoutError):
            return False
        return _code(e) in _RETRYABLE_CODES or isinstance(
            e, pymysql.err.InterfaceError | ConnectionError
        )

    def _error(self, e: BaseException, *, connecting: bool) -> SourceError:
        where, text, code = self.endpoint.display(), self._clean(e), _code(e)
        if code in _AUTH_CODES:
            hint = SOCKET_AUTH_HINT if code == 1698 else AUTH_HINT
            return SourceError(f"{where}: {text}", state="auth", hint=hint)
        if code == 1040:
            return SourceError(
                f"{where}: {text}", hint="the server is at max_connections; look for a leak"
            )
        if code == 1129:
            return SourceError(
                f"{where}: {text}",
                hint="too many failed connects from this host: FLUSH HOSTS on the server",
            )
        if connecting and (code == 2026 or isinstance(e, ssl.SSLError) or "[SSL" in text):
            return SourceError(f"{where}: TLS: {text}", hint=self._tls_hint(text))
        timed_out = "timed out" in text.lower() or isinstance(e, TimeoutError)
        if not connecting and timed_out:
            return SourceError(
                f"{where}: no reply within {self.endpoint.read_timeout:g} s ({text})",
                state="timeout",
            )
        if self._is_connection_error(e):
            return SourceError(f"{where}: {text}", state="unreachable", hint=UNREACHABLE_HINT)
        if isinstance(e, RuntimeError) and "cryptography" in text:
            return SourceError(
                f"{where}: {text}",
                state="auth",
                hint="install the 'cryptography' package (needed for caching_sha2_password "
                "over TCP without TLS)",
            )
        if not isinstance(e, pymysql.err.MySQLError):
            return SourceError(f"{where}: {text}", hint=NOT_MYSQL_HINT)
        return SourceError(f"{where}: {text}")

    def _tls_hint(self, text: str) -> str:
        ep = self.endpoint
        mode = ep.tls_mode
        if "doesn't support" in text:
            return (f"ssl-mode {mode} needs a server that offers TLS (SHOW VARIABLES LIKE "
                    "'have_ssl'); ssl-mode PREFERRED connects without it")
        if "CERTIFICATE_VERIFY_FAILED" in text and "match" in text:
            return (f"ssl-mode {mode}: the server's certificate is not issued to "
                    f"{ep.host!r}; connect by the name in it, or use VERIFY_CA")
        if "CERTIFICATE_VERIFY_FAILED" in text:
            return (f"ssl-mode {mode}: the server's certificate is not signed by "
                    f"{ep.ssl_ca or 'a CA this machine trusts'}; give ssl_ca the CA that "
                    "signed it (a server's own auto-generated ca.pem is in its datadir)")
        return f"ssl-mode {mode}: the TLS handshake failed"

    def _clean(self, e: BaseException) -> str:
        """The exception's message (pymysql: "(code, msg)" -> "msg (code)"), password blanked."""
        args: tuple[object, ...] = tuple(getattr(e, "args", ()))
        if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
            text = f"{args[1]} ({args[0]})"
        else:
            text = str(e) or type(e).__name__
        pw = self.endpoint.password.get_secret_value() if self.endpoint.password else ""
        return text.replace(pw, "**********") if pw else text


def _code(e: BaseException) -> int | None:
    """pymysql's error number (first arg), if any."""
    args = getattr(e, "args", ())
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        return args[0]
    return None
