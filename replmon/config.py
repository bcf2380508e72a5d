"""A pair's configuration as records: which two nodes, and how to reach each node's
servers (``Config``, validated once by ``build_config`` with errors that name the key),
and the command line's endpoint strings as the config keys they give
(``parse_endpoint_spec``, ``parse_sentinel_spec``, ``parse_ssh_spec``).

Nothing here reads a file or lays one setting over another: replmon.settings reads the
--config file and the command line and lays them, in one place; replmon.resolve turns a
Config into endpoints (the environment, ~/.my.cnf and the defaults applied).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator

from replmon.endpoints import SslMode
from replmon.errors import ConfigError
from replmon.model.base import Record
from replmon.model.roles import parse_groups

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
    on the replica every tick for its true lag, never written. "" = none. (The older
    spelling ``[checks.pair_lag] heartbeat_table`` is read into this key where it is
    unset.)"""
    checks: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """[checks.<id>] tables: enabled, open_after, close_after and each check's thresholds
    (validated by replmon.engine.configure against the check's Thresholds model)."""
    roles: RolesConfig = Field(default_factory=RolesConfig)
    """[roles]: which services fail over together."""

    @model_validator(mode="before")
    @classmethod
    def _one_heartbeat_key(cls, data: Any) -> Any:
        """The older ``[checks.pair_lag] heartbeat_table`` read into ``heartbeat_table``
        (where that is unset) and dropped from the check's table: one key."""
        checks = data.get("checks") if isinstance(data, dict) else None
        if not isinstance(checks, dict):
            return data
        lag = checks.get("pair_lag")
        if not isinstance(lag, dict) or "heartbeat_table" not in lag:
            return data
        rest = {k: v for k, v in lag.items() if k != "heartbeat_table"}
        return {**data, "heartbeat_table": data.get("heartbeat_table") or lag["heartbeat_table"],
                "checks": {**checks, "pair_lag": rest}}

    @model_validator(mode="after")
    def _distinct_names(self) -> Config:
        a, b = self.primary.name, self.replica.name
        if a is not None and b is not None and a.strip().lower() == b.strip().lower():
            raise ValueError(f"the primary and the replica are both named {a!r}: give them "
                             "names that differ (name in [primary] and [replica], or "
                             "--primary-name / --replica-name)")
        return self

    @property
    def source_timeout(self) -> float:
        return self.timeout if self.timeout is not None else 0.8 * self.interval


# --- validation --------------------------------------------------------------

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
