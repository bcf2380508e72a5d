"""The fleet file: many pairs on shared defaults, one Config per pair.

    interval = "5s"                  # serve's default; every pair may set its own
    listen = "127.0.0.1:9465"        # --listen wins
    record_dir = "/var/lib/replmon"  # optional: one rotating recording per pair
    record_max_bytes = "100M"        # rotation of those recordings (optional)
    metrics = { opt_in = ["innodb"] } # families beyond the default (docs/metrics.md)

    [defaults]                       # every node of every pair starts from these
    mysql = { user = "monitor", password_env = "REPLMON_MYSQL_PASSWORD" }
    redis = { password_env = "REPLMON_REDIS_PASSWORD" }
    ssh = { mode = "off" }

    [checks.latency_bound]           # shared [checks.<id>] tables
    enabled = false

    [[pair]]
    name = "shop"
    primary = "db163"                # a host, or a table like today's [primary]
    replica = "db162"

    [[pair]]
    name = "billing"
    primary = { host = "db201", mysql = { port = 3307 } }
    replica = { host = "db202", mysql = { port = 3307 } }
    checks = { stmt_vs_rows = { open_after = "10s" } }
    sentinel = { master_name = "billing" }   # on the file's [sentinel] (optional)

    [sentinel]                       # a Redis Sentinel for every pair (each pair's
    host = "10.0.0.5"                # master found by address unless master_name)
    port = 26379

A pair's node is ``defaults`` merged with its own table (its own keys win); its checks
are the shared tables merged with its own. Each pair is validated as a one-pair config
would be, so an error names the pair and the key.

This module knows the file's shape and its own keys (``read_fleet``);
replmon.settings reads the file and lays and validates each pair, as it does a pair of
the command line (``settings.load_fleet``, ``settings.build_fleet``).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from pydantic import Field, SecretStr, ValidationError

from replmon.config import Config
from replmon.errors import ConfigError
from replmon.model.base import Record
from replmon.units import parse_size_text, to_seconds

SERVE_INTERVAL = 5.0
"""Seconds between ticks for ``replmon serve`` unless the file or --interval says."""
LISTEN = "127.0.0.1:9465"
"""Loopback by default: metrics say a lot about a fleet."""

_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_TOP = {"interval", "timeout", "listen", "record_dir", "record_max_bytes", "record_max_age",
        "record_keep", "defaults", "checks", "pair", "basic_auth", "tls", "metrics",
        "sentinel", "heartbeat_table"}
_PAIR = {"name", "primary", "replica", "interval", "timeout", "checks", "sentinel",
         "heartbeat_table"}


class BasicAuth(Record):
    """HTTP basic auth in front of every page (with TLS, or on a trusted network only)."""

    username: str
    password: SecretStr | None = None
    password_env: str | None = None


class Tls(Record):
    certfile: str
    keyfile: str


class FleetPair(Record):
    name: str
    config: Config


class Fleet(Record):
    pairs: tuple[FleetPair, ...]
    listen: str = LISTEN
    record_dir: str | None = None
    rotation: dict[str, Any] = Field(default_factory=dict)
    """Recorder rotation (max_bytes, max_age_s, keep) of each pair's recording."""
    basic_auth: BasicAuth | None = None
    tls: Tls | None = None
    opt_in: tuple[str, ...] = ()
    """The opt-in metric groups every pair exports beyond the default (fleet/families.py
    OPT_IN; "all": every one)."""

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.pairs]


def parse_listen(text: str) -> tuple[str, int]:
    """("127.0.0.1", 9465) from "127.0.0.1:9465", "[::1]:9465" or ":9465" (loopback)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(f"listen address {text!r}: use HOST:PORT, e.g. 127.0.0.1:9465")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def _opt_in(spec: Any, origin: str) -> tuple[str, ...]:
    """``metrics = { opt_in = [...] }``: the opt-in metric groups, checked by name."""
    from replmon.fleet.families import OPT_IN

    known = ", ".join(["all", *OPT_IN])
    if not isinstance(spec, dict) or set(spec) - {"opt_in"}:
        raise ConfigError(f"{origin}: metrics must be a table with opt_in = [groups] "
                          f"(groups: {known})")
    groups = spec.get("opt_in", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConfigError(f"{origin}: metrics.opt_in must be a list of group names ({known})")
    bad = [g for g in groups if g != "all" and g not in OPT_IN]
    if bad:
        raise ConfigError(f"{origin}: metrics.opt_in: unknown group(s) {', '.join(bad)}; "
                          f"known: {known}")
    return tuple(groups)


class PairTable(NamedTuple):
    """One [[pair]] table of a fleet file, its shape checked, not yet laid on the file's
    shared keys nor validated (replmon.settings does that, once)."""

    name: str
    where: str
    """What an error names it: ``fleet.toml: pair 'shop'``."""
    table: dict[str, Any]
    ticks: dict[str, float]
    """serve's interval (and timeout) for it: ``--interval``, else its own, else the
    file's, else SERVE_INTERVAL."""


def read_fleet(data: dict[str, Any], origin: str = "fleet file", *,
               interval: float | None = None, listen: str | None = None
               ) -> tuple[Fleet, list[PairTable]]:
    """A parsed fleet file's shape and its own keys, checked: (the Fleet with its
    listen address, recordings, auth, TLS and metrics, its pairs still to come; the
    [[pair]] tables). ``interval``/``listen``: the command line's."""
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"{origin}: unknown key(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(_TOP))}")
    pairs = data.get("pair")
    if not isinstance(pairs, list) or not pairs:
        raise ConfigError(f"{origin}: no pair: add [[pair]] tables with name, primary, replica")
    if not isinstance(data.get("defaults", {}), dict):
        raise ConfigError(f"{origin}: [defaults] must be a table")
    listen_text = listen or str(data.get("listen", LISTEN))
    parse_listen(listen_text)
    try:
        fleet = Fleet(pairs=(), listen=listen_text, record_dir=data.get("record_dir"),
                      basic_auth=data.get("basic_auth"), tls=data.get("tls"),
                      opt_in=_opt_in(data.get("metrics", {}), origin))
    except ValidationError as e:
        lines = [f"  {'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()]
        raise ConfigError(f"{origin} is invalid:\n" + "\n".join(lines)) from None
    top_iv = interval if interval is not None else to_seconds(
        data.get("interval", SERVE_INTERVAL), f"{origin}: interval")
    seen: set[str] = set()
    tables: list[PairTable] = []
    for i, p in enumerate(pairs):
        where = f"{origin}: pair #{i + 1}"
        if not isinstance(p, dict):
            raise ConfigError(f"{where}: must be a table")
        name = p.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigError(f"{where}: name must be 1-64 letters, digits or _.:- "
                              f"(it becomes the `pair` label), got {name!r}")
        where = f"{origin}: pair {name!r}"
        if name in seen:
            raise ConfigError(f"{where}: duplicate pair name (each pair needs its own)")
        seen.add(name)
        bad = sorted(set(p) - _PAIR)
        if bad:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(bad)}; "
                              f"known: {', '.join(sorted(_PAIR))}")
        for role in ("primary", "replica"):
            if role not in p:
                raise ConfigError(f"{where}: no {role} (a host name, or a table with host)")
        ticks = {"interval": top_iv if interval is not None or "interval" not in p
                 else to_seconds(p["interval"], f"{where}: interval")}
        if (timeout := p.get("timeout", data.get("timeout"))) is not None:
            ticks["timeout"] = to_seconds(timeout, f"{where}: timeout")
        tables.append(PairTable(name, where, p, ticks))
    rotation: dict[str, Any] = {}
    if "record_max_bytes" in data:
        v = data["record_max_bytes"]
        rotation["max_bytes"] = parse_size_text(v) if isinstance(v, str) else int(v)
    if "record_max_age" in data:
        rotation["max_age_s"] = to_seconds(data["record_max_age"], f"{origin}: record_max_age")
    if "record_keep" in data:
        rotation["keep"] = int(data["record_keep"])
    return fleet.model_copy(update={"rotation": rotation}), tables


def is_fleet(data: dict[str, Any]) -> bool:
    """A parsed --config file is a fleet file: it has [[pair]] tables."""
    return "pair" in data
