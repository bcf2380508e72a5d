"""Resolving a pair's Config into endpoints, once (``resolve``): what each node's sources
connect to, with the credentials applied, and how its host metrics are read. The factory
builds the sources from these records and never reads the config again.

Where each endpoint's settings come from, strongest first:

1. the pair's Config (the command line over the --config file: replmon.settings),
2. the environment (passwords only: REPLMON_PRIMARY_MYSQL_PASSWORD,
   REPLMON_MYSQL_PASSWORD, MYSQL_PWD; REPLMON_PRIMARY_REDIS_PASSWORD,
   REPLMON_REDIS_PASSWORD, REDISCLI_AUTH),
3. ``~/.my.cnf`` ``[client]`` (user, password, port, socket, ssl-*) for MySQL, read once,
4. defaults: MySQL on 3306 and Redis on 6379 of the node's host.

Passwords are SecretStr from the moment they are read: they print as
'**********' in reprs, logs, JSON dumps and recordings.
"""

from __future__ import annotations

import configparser
import getpass
import logging
import os
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from replmon.config import (
    Config,
    DrbdConfig,
    MysqlConfig,
    NodeConfig,
    Role,
    SentinelConfig,
    SshConfig,
)
from replmon.configfile import read_text
from replmon.endpoints import (
    SSL_MODES,
    MysqlEndpoint,
    RedisEndpoint,
    SentinelEndpoint,
    SslMode,
)
from replmon.errors import ConfigError
from replmon.model.base import Record
from replmon.model.roles import LAYERS, Group, default_groups

log = logging.getLogger(__name__)


def read_mycnf(path: Path | None = None) -> dict[str, str]:
    """The [client] section of ~/.my.cnf (user, password, port, socket, host)."""
    path = path or Path.home() / ".my.cnf"
    if not path.exists():  # none (or a dangling symlink): nothing to add, as for mysql
        return {}
    if not os.access(path, os.R_OK):  # as the mysql client does: skipped, not fatal
        log.warning("%s: not readable by this user: skipped", path)
        return {}
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None)
    try:  # a FIFO, a huge or a binary file: one line (ConfigError), never a hang
        parser.read_string(read_text(path), source=str(path))
    except configparser.Error as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    if not parser.has_section("client"):
        return {}
    return {k: (v or "").strip().strip("'\"") for k, v in parser.items("client")}


def _env_secret(*names: str | None) -> SecretStr | None:
    for n in names:
        if n and os.environ.get(n):
            return SecretStr(os.environ[n])
    return None


def mysql_endpoint(role: Role, node: NodeConfig, timeout: float,
                   cnf: dict[str, str] | None = None) -> MysqlEndpoint:
    """``cnf``: ~/.my.cnf's [client] section, read once by ``resolve`` (read here if None)."""
    c = node.mysql
    cnf = read_mycnf() if cnf is None else cnf
    password = c.password or _env_secret(
        c.password_env, f"REPLMON_{role.upper()}_MYSQL_PASSWORD", "REPLMON_MYSQL_PASSWORD",
        "MYSQL_PWD",
    )
    if password is None and cnf.get("password"):
        password = SecretStr(cnf["password"])
    return MysqlEndpoint(
        host=c.host or node.host,
        port=c.port or int(cnf.get("port") or 3306),
        socket=c.socket,
        user=c.user or cnf.get("user") or getpass.getuser(),
        password=password,
        connect_timeout=max(timeout, 0.5),
        read_timeout=max(5 * timeout, 2.0),
        ssl_mode=_ssl_mode(c, cnf),
        ssl_ca=c.ssl_ca or cnf.get("ssl-ca") or cnf.get("ssl_ca") or None,
        ssl_cert=c.ssl_cert or cnf.get("ssl-cert") or cnf.get("ssl_cert") or None,
        ssl_key=c.ssl_key or cnf.get("ssl-key") or cnf.get("ssl_key") or None,
    )


def _ssl_mode(c: MysqlConfig, cnf: dict[str, str]) -> SslMode | None:
    """The configured ssl-mode: replmon's own setting, its older ``tls``, ~/.my.cnf's."""
    if c.ssl_mode is not None:
        return c.ssl_mode
    if c.tls is not None:
        return "REQUIRED" if c.tls else "DISABLED"
    mode = (cnf.get("ssl-mode") or cnf.get("ssl_mode") or "").upper()
    if not mode:
        return None
    if mode not in SSL_MODES:
        raise ConfigError(f"~/.my.cnf: ssl-mode {mode!r}: expected one of "
                          f"{', '.join(SSL_MODES)}")
    return mode


def redis_endpoint(role: Role, node: NodeConfig, timeout: float) -> RedisEndpoint:
    c = node.redis
    password = c.password or _env_secret(
        c.password_env, f"REPLMON_{role.upper()}_REDIS_PASSWORD", "REPLMON_REDIS_PASSWORD",
        "REDISCLI_AUTH",
    )
    return RedisEndpoint(
        host=c.host or node.host,
        port=c.port or 6379,
        socket=c.socket,
        username=c.username,
        password=password,
        connect_timeout=max(timeout, 0.5),
        read_timeout=max(timeout, 0.5),
    )


def sentinel_endpoint(c: SentinelConfig, timeout: float) -> SentinelEndpoint:
    return SentinelEndpoint(
        host=c.host, port=c.port, username=c.username, master_name=c.master_name,
        password=c.password or _env_secret(c.password_env, "REPLMON_SENTINEL_PASSWORD"),
        connect_timeout=max(timeout, 0.5), read_timeout=max(timeout, 0.5))


class SshTarget(Record):
    """Where and how to ssh to a node for its host and DRBD metrics."""

    host: str
    user: str | None = None
    port: int | None = None
    options: tuple[str, ...] = ()
    config_file: str | None = None


class NodeEndpoints(Record):
    """One node with everything resolved: what the factory builds its sources from.
    A source that is off is None. Passwords stay SecretStr."""

    role: Role
    name: str
    host: str
    access: Literal["local", "ssh", "off"]
    """How host and DRBD metrics are read."""
    ssh: SshTarget | None = None
    host_metrics: bool = True
    drbd: DrbdConfig | None = None
    mysql: MysqlEndpoint | None = None
    mysql_variables_every: float = 60.0
    mysql_positions_every: float = 2.0
    mysql_heartbeat_table: str | None = None
    """pt-heartbeat's table (``heartbeat_table``, ``--heartbeat-table``), read, never
    written."""
    redis: RedisEndpoint | None = None


class PairEndpoints(Record):
    """A pair resolved from a Config, once: ``resolve(config)``."""

    interval: float
    timeout: float
    """Per-source timeout, seconds."""
    primary: NodeEndpoints
    replica: NodeEndpoints
    link_peer: tuple[str, int] | None = None
    """What the primary connects to each tick to time the replication link: the replica's
    Redis port. A TCP connect that sends nothing is harmless there; on MySQL it would
    count as a handshake error toward max_connect_errors and could get the primary's
    address blocked, so a pair without Redis (or with Redis on a socket) gets none."""
    sentinel: SentinelEndpoint | None = None
    """A Redis Sentinel watching the pair's master (None: none configured)."""
    together: tuple[Group, ...] = (LAYERS,)
    """The services that fail over together (``Config.together``)."""

    @property
    def nodes(self) -> tuple[NodeEndpoints, NodeEndpoints]:
        return (self.primary, self.replica)


def resolve(config: Config) -> PairEndpoints:
    """Every node's endpoints with the credentials from the URL/TOML, the environment
    and ~/.my.cnf (read once) applied, and how its host metrics are read."""
    timeout = config.source_timeout
    cnf = read_mycnf()

    def node(role: Role, n: NodeConfig) -> NodeEndpoints:
        access = access_mode(n.ssh, n.host)
        ssh = None
        if access == "ssh":
            ssh = SshTarget(host=n.ssh.host or n.host, user=n.ssh.user, port=n.ssh.port,
                            options=tuple(n.ssh.options), config_file=n.ssh.config_file)
        return NodeEndpoints(
            role=role, name=n.name or n.host, host=n.host, access=access, ssh=ssh,
            host_metrics=n.host_metrics.enabled,
            drbd=n.drbd if n.drbd.enabled else None,
            mysql=mysql_endpoint(role, n, timeout, cnf) if n.mysql.enabled else None,
            mysql_variables_every=n.mysql.variables_every,
            mysql_positions_every=n.mysql.positions_every,
            mysql_heartbeat_table=config.heartbeat_table or None,
            redis=redis_endpoint(role, n, timeout) if n.redis.enabled else None)

    primary, replica = node("primary", config.primary), node("replica", config.replica)
    primary, replica = distinct_names(primary, replica, given=(
        config.primary.name is not None, config.replica.name is not None))
    r = replica.redis
    sc = config.sentinel
    sentinel = sentinel_endpoint(sc, timeout) if sc is not None and sc.enabled else None
    return PairEndpoints(interval=config.interval, timeout=timeout, primary=primary,
                         replica=replica, sentinel=sentinel, together=together(config),
                         link_peer=(r.host, r.port) if r is not None and not r.socket else None)


def _where(n: NodeEndpoints) -> str:
    """What tells a node apart from another on its host: its MySQL endpoint's port (or
    socket), else its Redis's."""
    for ep in (n.mysql, n.redis):
        if ep is not None:
            return f"{ep.host}:{ep.port}" if not ep.socket else \
                f"{n.host}:{Path(ep.socket).name}"
    return f"{n.host} ({n.role})"


def distinct_names(primary: NodeEndpoints, replica: NodeEndpoints, *,
                   given: tuple[bool, bool] = (False, False)
                   ) -> tuple[NodeEndpoints, NodeEndpoints]:
    """The two nodes with names that differ: two nodes on one host (``--primary
    127.0.0.1 --replica 127.0.0.1``) are named by their endpoints, "127.0.0.1:13306" and
    "127.0.0.1:13307" (a name the user ``given`` stays as it is), and the log says so
    once. Equal names given by the user are refused earlier (``Config``)."""
    if primary.name.strip().lower() != replica.name.strip().lower():
        return primary, replica
    a = primary.name if given[0] else _where(primary)
    b = replica.name if given[1] else _where(replica)
    if a.strip().lower() == b.strip().lower():  # one endpoint for both, or a given name
        a, b = (a, f"{b} (replica)") if given[0] else (f"{a} (primary)", b)
    log.warning("both nodes would be named %r: naming them %r (primary) and %r (replica); "
                "--primary-name and --replica-name (or name in the config) choose others",
                primary.name, a, b)
    return (primary.model_copy(update={"name": a}), replica.model_copy(update={"name": b}))


def access_mode(ssh: SshConfig, node_host: str) -> Literal["local", "ssh", "off"]:
    """How a node's host and DRBD metrics are read: ``auto`` is locally for this
    machine, over ssh for any other."""
    if not ssh.enabled or ssh.mode == "off":
        return "off"
    if ssh.mode == "auto":
        return "local" if is_local(node_host) else "ssh"
    return ssh.mode


def is_local(host: str) -> bool:
    """True when ``host`` names this machine (host and DRBD metrics read locally)."""
    import socket

    if host in ("localhost", "::1") or host.startswith("127."):
        return True
    names = {socket.gethostname(), socket.getfqdn()}
    return host in names


def together(config: Config) -> tuple[Group, ...]:
    """The services that move together, as configured or by default."""
    if config.roles.together is not None:
        return config.roles.together  # type: ignore[return-value]
    return default_groups(config.sentinel is not None and config.sentinel.enabled)
