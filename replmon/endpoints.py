"""How replmon reaches one node's servers. Built by resolve.py from a pair's Config
(the command line and the TOML file), ~/.my.cnf and the environment; read by the sources.
Passwords are SecretStr: they print as '**********' in any repr, log or dump."""

from __future__ import annotations

from typing import Literal

from pydantic import SecretStr

from replmon.model.base import Record

SslMode = Literal["DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"]
SSL_MODES: tuple[SslMode, ...] = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA",
                                  "VERIFY_IDENTITY")


class MysqlEndpoint(Record):
    host: str = "127.0.0.1"
    port: int = 3306
    socket: str | None = None
    """Unix socket path; when set it is used instead of host:port."""
    user: str = "root"
    password: SecretStr | None = None
    connect_timeout: float = 2.0
    """Seconds to wait for the TCP connect and handshake."""
    read_timeout: float = 5.0
    """Seconds a single query may take before pymysql gives up (frees a hung worker thread)."""
    ssl_mode: SslMode | None = None
    """MySQL's ``--ssl-mode``: DISABLED, PREFERRED (TLS when the server offers it),
    REQUIRED (TLS or no connection), VERIFY_CA (and the server's certificate signed by
    ``ssl_ca``), VERIFY_IDENTITY (and issued to ``host``). Unset: VERIFY_CA when
    ``ssl_ca`` is given, else PREFERRED, except over a unix socket or loopback, where TLS
    buys nothing and costs ~22 ms of CPU per connect (measured): DISABLED there."""
    ssl_ca: str | None = None
    """PEM file of the CA that signed the server's certificate (VERIFY_CA/IDENTITY)."""
    ssl_cert: str | None = None
    """Client certificate (PEM), for accounts created ``REQUIRE X509``."""
    ssl_key: str | None = None
    """The client certificate's private key (PEM)."""

    @property
    def tls_mode(self) -> SslMode:
        """The ssl-mode in force (the default resolved)."""
        if self.ssl_mode is not None:
            return self.ssl_mode
        if self.ssl_ca:
            return "VERIFY_CA"
        if self.socket or self.host in ("localhost", "::1") or self.host.startswith("127."):
            return "DISABLED"
        return "PREFERRED"

    def display(self) -> str:
        """user@host:port (or socket), never the password."""
        where = self.socket if self.socket else f"{self.host}:{self.port}"
        return f"{self.user}@{where}"


class RedisEndpoint(Record):
    host: str = "127.0.0.1"
    port: int = 6379
    socket: str | None = None
    username: str | None = None
    password: SecretStr | None = None
    connect_timeout: float = 2.0
    read_timeout: float = 5.0

    def display(self) -> str:
        return self.socket if self.socket else f"{self.host}:{self.port}"


class SentinelEndpoint(RedisEndpoint):
    """A Redis Sentinel (``--sentinel HOST:PORT[/NAME]``): where it listens, its own
    password if it has one (Sentinel's ``requirepass``, not the monitored Redis's), and
    the name it monitors the pair's master by."""

    port: int = 26379
    master_name: str | None = None
    """None: the master Sentinel monitors at one of the pair's Redis addresses."""
