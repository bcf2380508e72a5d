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
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError

from replmon.config import Config, build_config, merge
from replmon.configfile import read_toml, shown
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


def _node(spec: Any, where: str) -> dict[str, Any]:
    if isinstance(spec, str):
        return {"host": spec}
    if isinstance(spec, dict):
        return dict(spec)
    raise ConfigError(f"{where}: a host name or a table, not {type(spec).__name__}")


def _table(spec: Any, where: str) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: must be a table (host, port, master_name...)")
    return spec


def _pair_layers(data: dict[str, Any], p: dict[str, Any], where: str,
                 origin: str = "fleet file") -> dict[str, Any]:
    """A pair's nodes on [defaults], its checks on the shared [checks.<id>] tables and its
    Sentinel on the file's [sentinel] (its own keys win), not yet validated; not its
    ticks (interval, timeout: serve's)."""
    primary, replica = _node(p["primary"], f"{where}: primary"), _node(p["replica"],
                                                                         f"{where}: replica")
    defaults = data.get("defaults", {})
    out = {"primary": merge(defaults, primary), "replica": merge(defaults, replica),
           "checks": merge(data.get("checks", {}), p.get("checks", {}))}
    sentinel = merge(_table(data.get("sentinel", {}), f"{origin}: sentinel"),
                     _table(p.get("sentinel", {}), f"{where}: sentinel"))
    if sentinel:  # the file's Sentinel under the pair's own keys (master_name...)
        out["sentinel"] = sentinel
    heartbeat = p.get("heartbeat_table", data.get("heartbeat_table"))
    if heartbeat is not None:  # pt-heartbeat's table: the pair's own, else the file's
        out["heartbeat_table"] = heartbeat
    return out


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


def build_fleet(data: dict[str, Any], origin: str = "fleet file", *,
                interval: float | None = None, listen: str | None = None) -> Fleet:
    """Validate a parsed fleet file (``interval``/``listen``: command-line overrides)."""
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"{origin}: unknown key(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(_TOP))}")
    pairs = data.get("pair")
    if not isinstance(pairs, list) or not pairs:
        raise ConfigError(f"{origin}: no pair: add [[pair]] tables with name, primary, replica")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ConfigError(f"{origin}: [defaults] must be a table")
    top_iv = interval if interval is not None else to_seconds(
        data.get("interval", SERVE_INTERVAL), f"{origin}: interval")
    seen: set[str] = set()
    out: list[FleetPair] = []
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
        cfg = _pair_layers(data, p, where, origin)
        cfg["interval"] = (top_iv if interval is not None or "interval" not in p
                           else to_seconds(p["interval"], f"{where}: interval"))
        timeout = p.get("timeout", data.get("timeout"))
        if timeout is not None:
            cfg["timeout"] = to_seconds(timeout, f"{where}: timeout")
        out.append(FleetPair(name=name, config=build_config(cfg, origin=where)))
    rotation: dict[str, Any] = {}
    if "record_max_bytes" in data:
        v = data["record_max_bytes"]
        rotation["max_bytes"] = parse_size_text(v) if isinstance(v, str) else int(v)
    if "record_max_age" in data:
        rotation["max_age_s"] = to_seconds(data["record_max_age"], f"{origin}: record_max_age")
    if "record_keep" in data:
        rotation["keep"] = int(data["record_keep"])
    listen_text = listen or str(data.get("listen", LISTEN))
    parse_listen(listen_text)
    opt_in = _opt_in(data.get("metrics", {}), origin)
    try:
        return Fleet(pairs=tuple(out), listen=listen_text, record_dir=data.get("record_dir"),
                     rotation=rotation, basic_auth=data.get("basic_auth"), tls=data.get("tls"),
                     opt_in=opt_in)
    except ValidationError as e:
        lines = [f"  {'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()]
        raise ConfigError(f"{origin} is invalid:\n" + "\n".join(lines)) from None


def load_fleet(path: str | Path, *, interval: float | None = None,
               listen: str | None = None) -> Fleet:
    """The fleet file, read as every config file is (replmon.configfile: one line naming
    the file for a missing, special, huge, binary, non-UTF-8, deep or empty one)."""
    data = read_toml(path, empty="no [[pair]] tables (name, primary, replica)")
    return build_fleet(data, origin=shown(path), interval=interval, listen=listen)


def is_fleet(data: dict[str, Any]) -> bool:
    """A parsed --config file is a fleet file: it has [[pair]] tables."""
    return "pair" in data


def pair_data(data: dict[str, Any], name: str | None,
              origin: str = "fleet file") -> dict[str, Any]:
    """``--config FLEET --pair NAME``: the one-pair config (as a one-pair --config file
    would give it) of pair ``name`` of a parsed fleet file: its nodes on [defaults], its
    checks on the shared [checks.<id>] tables, laid as ``replmon serve`` lays that pair
    (``_pair_layers``), as keys for replmon.settings to lay the command line over and
    validate once. Not its interval and timeout: those are serve's ticks, and the screen, check,
    record and sample keep their own (1 s unless --interval). The whole file is validated
    as serve validates it. ConfigError in one line: no ``name`` (which pairs there are),
    an unknown one (the close matches)."""
    import difflib

    fleet = build_fleet(data, origin)
    names = fleet.names
    if name is None:
        raise ConfigError(f"{origin} is a fleet file ({_some(names)}): give --pair NAME, "
                          f"e.g. --pair {names[0]}")
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = (f"did you mean {_either(close)}?" if close else f"it has {_some(names)}")
        raise ConfigError(f"{origin}: no pair {name!r}: {hint}")
    pick = next(p for p in data["pair"] if p["name"] == name)
    return _pair_layers(data, pick, f"{origin}: pair {name!r}")


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _some(names: list[str], show: int = 6) -> str:
    """"3 pairs: shop, billing, cache", or the first ``show`` and how many more."""
    head = ", ".join(names[:show])
    more = f" and {len(names) - show} more" if len(names) > show else ""
    return f"{len(names)} pair{'s' if len(names) != 1 else ''}: {head}{more}"
