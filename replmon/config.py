"""Configuration: which two nodes, and how to reach each node's servers.

Sources of settings, strongest first:

1. the command line (``--primary-mysql user@host:3307`` and friends),
2. the TOML file (``--config replmon.toml``),
3. the environment (passwords only: REPLMON_PRIMARY_MYSQL_PASSWORD,
   REPLMON_MYSQL_PASSWORD, MYSQL_PWD; REPLMON_PRIMARY_REDIS_PASSWORD,
   REPLMON_REDIS_PASSWORD, REDISCLI_AUTH),
4. ``~/.my.cnf`` ``[client]`` (user, password, port, socket) for MySQL,
5. defaults: MySQL on 3306 and Redis on 6379 of the node's host.

Passwords are SecretStr from the moment they are read: they print as
'**********' in reprs, logs, JSON dumps and recordings.
"""

from __future__ import annotations

import configparser
import getpass
import logging
import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator

from replmon.configfile import read_text, read_toml
from replmon.endpoints import (
    SSL_MODES,
    MysqlEndpoint,
    RedisEndpoint,
    SentinelEndpoint,
    SslMode,
)
from replmon.errors import ConfigError
from replmon.model.base import Record
from replmon.model.roles import LAYERS, Group, default_groups, parse_groups

log = logging.getLogger(__name__)

Role = Literal["primary", "replica"]


HEARTBEAT_TABLE = r"^([A-Za-z0-9_$]{1,64}\.[A-Za-z0-9_$]{1,64})?$"
"""db.table of pt-heartbeat's table (letters, digits, _ and $: it goes into SQL quoted)."""

class MysqlConfig(Record):
    enabled: bool = True
    host: str | None = None
    """Defaults to the node's host."""
    port: int | None = None
    socket: str | None = None
    user: str | None = None
    password: SecretStr | None = None
    password_env: str | None = None
    """Name of an environment variable holding the password (keeps it out of the file)."""
    ssl_mode: SslMode | None = None
    """MySQL's ssl-mode: DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY.
    Unset: ~/.my.cnf's ssl-mode, else VERIFY_CA with ssl_ca, else PREFERRED (DISABLED over
    a socket or loopback)."""
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    tls: bool | None = None
    """Older spelling: true is ssl_mode REQUIRED, false DISABLED."""
    variables_every: float = Field(default=60.0, gt=0)
    """Seconds between SHOW GLOBAL VARIABLES reads (read_only, auto_increment_*, ...)."""
    positions_every: float = Field(default=2.0, gt=0)
    """Seconds between reads of the server's own binlog position, GTIDs and clock (what
    pair_lag and errant_writes compare across the pair); aligned to the wall clock so
    both nodes read in the same tick."""


class RedisConfig(Record):
    enabled: bool = True
    host: str | None = None
    port: int | None = None
    socket: str | None = None
    username: str | None = None
    password: SecretStr | None = None
    password_env: str | None = None


class SentinelConfig(Record):
    """A Redis Sentinel watching the pair's Redis master (``--sentinel HOST:PORT[/NAME]``,
    or ``[sentinel]``): replmon reads its view of the master and its failover events."""

    enabled: bool = True
    host: str
    port: int = Field(default=26379, gt=0, lt=65536)
    master_name: str | None = None
    """The name Sentinel monitors the master by; unset: the master it monitors at one of
    the pair's Redis addresses."""
    username: str | None = None
    password: SecretStr | None = None
    """Sentinel's own password (its requirepass), if it has one."""
    password_env: str | None = None


class DrbdConfig(Record):
    enabled: bool = True
    proc_path: str = "/proc/drbd"
    command: list[str] = Field(default_factory=lambda: ["drbdsetup", "status", "--json"])
    """Run on DRBD 9 hosts, where /proc/drbd holds only the version."""


class HostConfig(Record):
    enabled: bool = True


class SshConfig(Record):
    """How host and DRBD metrics of the node are read (MySQL and Redis use their own
    protocols). ``auto``: this machine locally, any other node over ssh."""

    enabled: bool = True
    """false is the same as mode = "off"."""
    mode: Literal["auto", "local", "ssh", "off"] = "auto"
    host: str | None = None
    """ssh destination; defaults to the node's host (an alias from ~/.ssh/config works)."""
    user: str | None = None
    port: int | None = Field(default=None, gt=0, lt=65536)
    options: list[str] = Field(default_factory=list)
    """Extra ``-o`` options, e.g. ["ProxyJump=bastion"]."""
    config_file: str | None = None
    """An ssh_config to use instead of ~/.ssh/config (``ssh -F``)."""

    def resolved_mode(self, node_host: str) -> Literal["local", "ssh", "off"]:
        if not self.enabled or self.mode == "off":
            return "off"
        if self.mode == "auto":
            return "local" if is_local(node_host) else "ssh"
        return self.mode


def parse_ssh_spec(spec: str) -> dict[str, Any]:
    """``off``, ``local`` or ``[user@]host[:port]`` (host may be empty: the node's)."""
    spec = spec.strip()
    if spec in ("off", "local"):
        return {"mode": spec}
    out: dict[str, Any] = {"mode": "ssh"}
    user, _, hostport = spec.rpartition("@")
    host, port = hostport, ""
    if hostport.count(":") == 1 or hostport.startswith("["):
        host, _, port = hostport.rpartition(":")
        host = host.strip("[]")
    if port:
        if not port.isdigit():
            raise ConfigError(f"bad ssh destination {spec!r}: port must be a number")
        out["port"] = int(port)
    if user:
        out["user"] = user
    if host:
        out["host"] = host
    return out


class NodeConfig(Record):
    host: str
    """Name or address of the node (db163, 10.0.0.3, 127.0.0.1)."""
    name: str | None = None
    """Label shown for the node; defaults to ``host``."""
    mysql: MysqlConfig = Field(default_factory=MysqlConfig)
    redis: RedisConfig = Field(default_factory=RedisConfig)
    drbd: DrbdConfig = Field(default_factory=DrbdConfig)
    host_metrics: HostConfig = Field(default_factory=HostConfig)
    ssh: SshConfig = Field(default_factory=SshConfig)


class RolesConfig(Record):
    """``[roles]``: how the pair's services move (replmon.roles)."""

    together: tuple[tuple[str, ...], ...] | None = None
    """The services that fail over together: ``["mysql", "drbd"]`` (one group; the others
    each move alone) or ``[["mysql", "drbd"], ["redis"]]``. Among them, one that moved
    without the others is a change half done; a service alone moving is one event.
    Unset: all together, but Redis on its own when a Sentinel is configured."""

    @field_validator("together", mode="before")
    @classmethod
    def _groups(cls, v: object) -> object:
        return None if v is None else parse_groups(v)


class Config(Record):
    interval: float = Field(default=1.0, gt=0)
    """Seconds between ticks."""
    timeout: float | None = Field(default=None, gt=0)
    """Per-source timeout, seconds; default 80 % of the interval. Must be below the interval."""
    primary: NodeConfig
    replica: NodeConfig
    sentinel: SentinelConfig | None = None
    """A Redis Sentinel to read (optional)."""
    heartbeat_table: str = Field(default="", pattern=HEARTBEAT_TABLE)
    """pt-heartbeat's table as db.table ("percona.heartbeat"; ``--heartbeat-table``): read
    on the replica every tick for its true lag, never written. The older
    ``[checks.pair_lag] heartbeat_table`` says the same; this one wins. "" = none."""
    checks: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """[checks.<id>] tables: enabled, open_after, close_after and each check's thresholds
    (validated by replmon.engine.configure against the check's Thresholds model)."""
    roles: RolesConfig = Field(default_factory=RolesConfig)
    """[roles]: which services fail over together."""

    @model_validator(mode="after")
    def _distinct_names(self) -> Config:
        a, b = self.primary.name, self.replica.name
        if a is not None and b is not None and a.strip().lower() == b.strip().lower():
            raise ValueError(f"the primary and the replica are both named {a!r}: give them "
                             "names that differ (name in [primary] and [replica], or "
                             "--primary-name / --replica-name)")
        return self

    def together(self) -> tuple[Group, ...]:
        """The services that move together, as configured or by default."""
        if self.roles.together is not None:
            return self.roles.together  # type: ignore[return-value]
        return default_groups(self.sentinel is not None and self.sentinel.enabled)

    @property
    def source_timeout(self) -> float:
        return self.timeout if self.timeout is not None else 0.8 * self.interval


# --- loading -----------------------------------------------------------------

def load_toml(path: str | Path) -> dict[str, Any]:
    """A pair's ``--config`` file, parsed; ConfigError in one line naming the file when it
    is missing, not a regular file, too large, not UTF-8, not TOML, nested too deep or
    empty (replmon.configfile)."""
    return read_toml(path, empty="no [primary] and [replica] tables (see README)")


def build_config(data: dict[str, Any], origin: str = "config") -> Config:
    """Validate a dict (from TOML and/or the command line) into a Config."""
    try:
        cfg = Config.model_validate(data)
    except ValidationError as e:
        lines = [f"  {'.'.join(str(p) for p in err['loc']) or 'pair'}: "
                 f"{err['msg'].removeprefix('Value error, ')}" for err in e.errors()]
        raise ConfigError(f"{origin} is invalid:\n" + "\n".join(lines)) from None
    if cfg.source_timeout >= cfg.interval:
        raise ConfigError(
            f"{origin}: timeout ({cfg.source_timeout} s) must be shorter than the interval "
            f"({cfg.interval} s), or a hung server would delay every tick"
        )
    return cfg


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Deep merge of nested dicts; ``over`` wins."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


# --- endpoint strings from the command line ----------------------------------

def parse_endpoint_spec(spec: str, kind: Literal["mysql", "redis"]) -> dict[str, Any]:
    """Turn a command-line endpoint into config keys.

    Accepted: ``off``; ``/path/to.sock``; ``:3307`` (port on the node's host);
    ``host:port``; ``user@host:port``; ``mysql://user:pw@host:port``,
    ``redis://[user]:pw@host:port``. A password in a URL is visible in ``ps``:
    prefer the environment or ~/.my.cnf.
    """
    spec = spec.strip()
    if spec == "off":
        return {"enabled": False}
    if spec.startswith("/"):
        return {"socket": spec}
    if "://" not in spec:
        spec = f"{kind}://{spec}"
    try:
        url = urlsplit(spec)
        port = url.port
    except ValueError as e:
        raise ConfigError(f"bad {kind} endpoint {spec!r}: {e}") from None
    if url.scheme not in (kind, "mariadb" if kind == "mysql" else "rediss"):
        raise ConfigError(f"bad {kind} endpoint {spec!r}: scheme must be {kind}://")
    out: dict[str, Any] = {}
    if url.hostname:
        out["host"] = url.hostname
    if port is not None:
        out["port"] = port
    if url.username:
        out["user" if kind == "mysql" else "username"] = unquote(url.username)
    if url.password is not None:
        out["password"] = unquote(url.password)
    for key, value in parse_qsl(url.query, keep_blank_values=True):
        name = key.replace("-", "_").lower()
        if kind != "mysql" or name not in ("ssl_mode", "ssl_ca", "ssl_cert", "ssl_key"):
            raise ConfigError(f"bad {kind} endpoint {spec!r}: unknown option {key!r} "
                              "(mysql:// takes ssl-mode, ssl-ca, ssl-cert, ssl-key)")
        out[name] = value.upper() if name == "ssl_mode" else value
    return out


def parse_sentinel_spec(spec: str) -> dict[str, Any]:
    """``--sentinel``: ``off``, ``HOST[:PORT][/NAME]`` or ``redis://[user:pw@]HOST:PORT/NAME``
    (port 26379 by default; NAME: the master's name in Sentinel, optional)."""
    spec = spec.strip()
    if spec == "off":
        return {"enabled": False}
    url_spec = spec if "://" in spec else f"redis://{spec}"
    try:
        url = urlsplit(url_spec)
        port = url.port
    except ValueError as e:
        raise ConfigError(f"bad --sentinel {spec!r}: {e} (expected HOST:PORT[/NAME])") from None
    if url.scheme != "redis" or not url.hostname or url.query or url.path.count("/") > 1:
        raise ConfigError(f"bad --sentinel {spec!r}: expected HOST:PORT[/NAME], "
                          "e.g. 10.0.0.5:26379/mymaster")
    out: dict[str, Any] = {"host": url.hostname}
    if port is not None:
        out["port"] = port
    name = unquote(url.path.lstrip("/"))
    if name:
        out["master_name"] = name
    if url.username:
        out["username"] = unquote(url.username)
    if url.password is not None:
        out["password"] = unquote(url.password)
    return out


# --- resolution into endpoints -----------------------------------------------

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
    """pt-heartbeat's table (``heartbeat_table``, ``--heartbeat-table`` or ``[checks.pair_lag]
    heartbeat_table``), read, never written."""
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
    heartbeat = config.heartbeat_table or str(
        config.checks.get("pair_lag", {}).get("heartbeat_table") or "")

    def node(role: Role, n: NodeConfig) -> NodeEndpoints:
        access = n.ssh.resolved_mode(n.host)
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
            mysql_heartbeat_table=heartbeat or None,
            redis=redis_endpoint(role, n, timeout) if n.redis.enabled else None)

    primary, replica = node("primary", config.primary), node("replica", config.replica)
    primary, replica = distinct_names(primary, replica, given=(
        config.primary.name is not None, config.replica.name is not None))
    r = replica.redis
    sc = config.sentinel
    sentinel = sentinel_endpoint(sc, timeout) if sc is not None and sc.enabled else None
    return PairEndpoints(interval=config.interval, timeout=timeout, primary=primary,
                         replica=replica, sentinel=sentinel, together=config.together(),
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


def is_local(host: str) -> bool:
    """True when ``host`` names this machine (host and DRBD metrics read locally)."""
    import socket

    if host in ("localhost", "::1") or host.startswith("127."):
        return True
    names = {socket.gethostname(), socket.getfqdn()}
    return host in names
