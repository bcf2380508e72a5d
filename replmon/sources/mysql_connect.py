"""Connecting to a MySQL/MariaDB server and naming what goes wrong: the MySQL source's
connection side (``replmon.sources.mysql`` reads through it).

``connect`` opens one connection with pymysql: TLS as the endpoint's ssl-mode means it
in MySQL's client (``tls_arguments``), autocommit, no LOCAL INFILE. After a failed
attempt, ``Backoff`` holds further attempts for the reconnect interval.

Errors become SourceError with a state (``source_error``): access denied
(1045/1044/1698) -> "auth"; refused, unknown host, lost connection, connect timeout ->
"unreachable"; a read timeout on an established connection -> "timeout"; anything else
-> "error". Each carries a hint where there is something to do (the GRANT, the TLS
setting, FLUSH HOSTS). ``is_connection_error`` tells a failure of the connection (the
next sample reconnects) from one of a query, ``is_retryable`` a kept connection the
server dropped (reconnected at once) from a hung server.

The password is a SecretStr; ``get_secret_value()`` is called only inside the
``pymysql.connect`` call. Error texts are pymysql's messages (user@host, never the
password), scrubbed of the password all the same (``error_text``), and exceptions are
re-raised ``from None`` so no pymysql frame is chained into a log.
"""

from __future__ import annotations

import os
import ssl
import sys
from typing import Any

import pymysql

from replmon.endpoints import MysqlEndpoint
from replmon.errors import ConfigError, SourceError
from replmon.sources.base import reach_hint

_AUTH_CODES = {1044, 1045, 1698}
_UNREACHABLE_CODES = {2002, 2003, 2005, 2006, 2013, 2055}
_RETRYABLE_CODES = {2006, 2013}  # a kept connection the server has dropped
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
    certificate not checked; on the shared ``unverified_context`` through the source's
    connection class, ``SharedPreferredTls``); REQUIRED and up pass a context, which
    makes pymysql refuse a server without TLS before it sends the password (REQUIRED
    without a client certificate: the shared one). Without TLS, caching_sha2_password
    and sha256_password exchange the password under the server's RSA key (the
    ``cryptography`` package)."""
    mode = ep.tls_mode
    if mode == "DISABLED":
        return {"ssl_disabled": True}
    if mode == "PREFERRED":
        return {"ssl_disabled": False}
    verify = mode in ("VERIFY_CA", "VERIFY_IDENTITY")
    if not verify and not ep.ssl_cert:
        return {"ssl": unverified_context()}
    try:
        ctx = (ssl.create_default_context(cafile=ep.ssl_ca) if verify
               else _client_context())  # no CA to load for a certificate not checked
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


def _client_context() -> ssl.SSLContext:
    """A TLS client context as ``ssl.create_default_context()`` makes it (the same
    protocol, options and ciphers, SSLKEYLOGFILE honoured) but without the system's CA
    bundle loaded: ~150 certificates parsed into its store, 0.8-2.3 MB of the C heap a
    context (#56, memory), of no use to a context that checks no certificate."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment and hasattr(ctx, "keylog_filename"):
        ctx.keylog_filename = keylog
    return ctx


_UNVERIFIED: list[ssl.SSLContext] = []


def unverified_context() -> ssl.SSLContext:
    """The process's one context for TLS that checks no certificate (ssl-mode PREFERRED
    and REQUIRED without a client certificate), shared by every connection: pymysql made
    a ``create_default_context()`` for each connection it opened, the system's CA bundle
    loaded into each (``_client_context``) and never read."""
    if not _UNVERIFIED:  # (two threads may both make one: either does)
        ctx = _client_context()
        ctx.verify_flags &= ~ssl.VERIFY_X509_STRICT
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        _UNVERIFIED.append(ctx)
    return _UNVERIFIED[0]


class SharedPreferredTls:
    """A pymysql Connection mixin: ssl-mode PREFERRED (pymysql's own, its ``ssl`` left
    empty: TLS when the server offers it, the certificate not checked) on the shared
    ``unverified_context`` rather than a new default context each connection."""

    def _create_ssl_ctx(self, sslp: Any) -> ssl.SSLContext:
        if isinstance(sslp, dict) and not sslp:
            return unverified_context()
        return super()._create_ssl_ctx(sslp)  # type: ignore[misc, no-any-return]


def connect(ep: MysqlEndpoint, factory: Any = None) -> pymysql.connections.Connection[Any]:
    """A new connection to ``ep`` (the password read from its SecretStr here only); any
    failure is raised as the SourceError it means (``source_error``). ``factory``: the
    Connection class (pymysql's by default; the source's GreenConnection)."""
    where = {"unix_socket": ep.socket} if ep.socket else {"host": ep.host, "port": ep.port}
    try:
        return (factory or pymysql.connections.Connection)(
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
        raise source_error(ep, e, connecting=True) from None


class Backoff:
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


# --- error mapping ------------------------------------------------------------


def is_connection_error(e: BaseException) -> bool:
    """A failure of the connection itself (the next sample reconnects), not of one
    query."""
    code = error_code(e)
    return (
        isinstance(e, OSError | pymysql.err.InterfaceError)
        or code in _UNREACHABLE_CODES
        or (code is not None and 2000 <= code < 3000)
    )


def is_retryable(e: BaseException) -> bool:
    """A kept connection the server closed (not a hung server timing out)."""
    text = str(e).lower()
    if "timed out" in text or isinstance(e, TimeoutError):
        return False
    return error_code(e) in _RETRYABLE_CODES or isinstance(
        e, pymysql.err.InterfaceError | ConnectionError
    )


def source_error(ep: MysqlEndpoint, e: BaseException, *, connecting: bool) -> SourceError:
    """What ``e`` means for a sample of ``ep``: the SourceError with its state and hint."""
    where, text, code = ep.display(), error_text(ep, e), error_code(e)
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
        return SourceError(f"{where}: TLS: {text}", hint=_tls_hint(ep, text))
    timed_out = "timed out" in text.lower() or isinstance(e, TimeoutError)
    if not connecting and timed_out:
        return SourceError(
            f"{where}: no reply within {ep.read_timeout:g} s ({text})",
            state="timeout",
        )
    if is_connection_error(e):
        return SourceError(f"{where}: {text}", state="unreachable",
                           hint=reach_hint(text, ep.host or "", UNREACHABLE_HINT))
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


def _tls_hint(ep: MysqlEndpoint, text: str) -> str:
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


def error_text(ep: MysqlEndpoint, e: BaseException) -> str:
    """The exception's message (pymysql: "(code, msg)" -> "msg (code)"), password blanked."""
    args: tuple[object, ...] = tuple(getattr(e, "args", ()))
    if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        text = f"{args[1]} ({args[0]})"
    else:
        text = str(e) or type(e).__name__
    pw = ep.password.get_secret_value() if ep.password else ""
    return text.replace(pw, "**********") if pw else text


def error_code(e: BaseException) -> int | None:
    """pymysql's error number (first arg), if any."""
    args = getattr(e, "args", ())
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        return args[0]
    return None
