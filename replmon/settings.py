"""A pair's settings, one home: every run reads its config here, once. Whatever a pair is
watched from (a pair file, one pair of a fleet file with ``--pair``, every pair of
serve's fleet file, the lab's nodes) and the command line meet in ``lay``, the one place
the order of precedence is written, and each pair is validated once into a Config
(replmon.config), weakest first:

    the lab's nodes (--lab)
    a fleet file's [defaults], [checks.<id>], [sentinel] and heartbeat_table
    the --config file's pair (a pair file as it is, or a fleet file's [[pair]] table)
    the command line (PAIR_FLAGS and NODE_FLAGS below)
    the passwords asked for (--ask-pass, --ask-redis-pass)

The environment and ~/.my.cnf come later, when the Config is resolved into endpoints
(``replmon.resolve``), for a pair of the command line and a pair of serve alike.

It is also the one reader of ``[checks.<id>]``: a pair's checks are its Config's
(``Config.checks``), and a recording re-checked with ``--config`` (``check --replay``)
takes the checks that file gives the pair (``replay_checks``), a fleet pair's too.

The leaves it calls: replmon.configfile reads a file (one clear line for each way it can
be wrong), replmon.fleet.config reads a fleet file's shape and own keys (serve's ticks,
listen, recordings, ...), replmon.passwords prompts, replmon.config validates.

A new option of the connection is two lines: its grammar in ``cli_args``
(``_connection_options`` and its default in ``DEFAULTS``) and its row here, in
``PAIR_FLAGS`` (a setting of the pair, e.g. a config key under [checks.<id>]) or
``NODE_FLAGS`` (one of each node, per ``--primary-X`` / ``--replica-X``).
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replmon.config import (
    Config,
    Role,
    build_config,
    parse_endpoint_spec,
    parse_sentinel_spec,
    parse_ssh_spec,
)
from replmon.configfile import read_toml, shown
from replmon.errors import ConfigError
from replmon.fleet.config import (
    Fleet,
    FleetPair,
    PairTable,
    is_fleet,
    read_fleet,
)
from replmon.passwords import ask_password

ROLES: tuple[Role, Role] = ("primary", "replica")


# --- the order of precedence --------------------------------------------------

def lay(*layers: dict[str, Any] | None) -> dict[str, Any]:
    """The layers, weakest first, as one: a key of a later layer wins, a table is laid
    key by key (a node's ``mysql.port`` from the command line keeps the file's
    ``mysql.user``)."""
    out: dict[str, Any] = {}
    for layer in layers:
        out = _over(out, layer or {})
    return out


def _over(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _over(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


# --- files -------------------------------------------------------------------

def read_pair_file(path: str | Path) -> dict[str, Any]:
    """A ``--config`` file, parsed; ConfigError in one line naming the file when it is
    missing, not a regular file, too large, not UTF-8, not TOML, nested too deep or
    empty (replmon.configfile)."""
    return read_toml(path, empty="no [primary] and [replica] tables (see README)")


def load_fleet(path: str | Path, *, interval: float | None = None,
               listen: str | None = None) -> Fleet:
    """serve's fleet file, read as every config file is, each pair validated once."""
    data = read_toml(path, empty="no [[pair]] tables (name, primary, replica)")
    return build_fleet(data, origin=shown(path), interval=interval, listen=listen)


def build_fleet(data: dict[str, Any], origin: str = "fleet file", *,
                interval: float | None = None, listen: str | None = None) -> Fleet:
    """A parsed fleet file as serve runs it (``interval``/``listen``: the command
    line's), every pair laid on the file's shared keys with serve's ticks and validated
    once."""
    fleet, tables = read_fleet(data, origin, interval=interval, listen=listen)
    return fleet.model_copy(update={"pairs": _fleet_pairs(data, tables, origin)})


def _fleet_pairs(data: dict[str, Any], tables: list[PairTable], origin: str,
                 skip: str | None = None) -> tuple[FleetPair, ...]:
    """Each pair of a fleet file (but ``skip``) as serve runs it, validated once."""
    return tuple(FleetPair(name=t.name, config=build_config(
        lay(fleet_pair(data, t, origin), t.ticks), origin=t.where))
        for t in tables if t.name != skip)


def fleet_pair(data: dict[str, Any], pair: PairTable, origin: str) -> dict[str, Any]:
    """A pair's keys: the file's shared ones ([defaults] under each node, [checks.<id>],
    [sentinel], heartbeat_table) with the pair's own laid over them; not its ticks
    (interval, timeout: serve's)."""
    p, where = pair.table, pair.where
    defaults = data.get("defaults", {})
    shared = {"primary": defaults, "replica": defaults, "checks": data.get("checks", {}),
              "sentinel": _table(data.get("sentinel", {}), f"{origin}: sentinel")}
    own = {"primary": _node(p["primary"], f"{where}: primary"),
           "replica": _node(p["replica"], f"{where}: replica"),
           "checks": p.get("checks", {}),
           "sentinel": _table(p.get("sentinel", {}), f"{where}: sentinel")}
    for layer, table in ((shared, data), (own, p)):
        if "heartbeat_table" in table:
            layer["heartbeat_table"] = table["heartbeat_table"]
    out = lay(shared, own)
    if not out["sentinel"]:  # none in the file nor the pair
        del out["sentinel"]
    return out


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


def config_file(data: dict[str, Any], pair: str | None, origin: str
                ) -> tuple[dict[str, Any], str]:
    """(the keys of the pair a parsed --config file gives, what an error names it): a
    pair file's keys as they are, or the ``--pair`` of a fleet file, laid on the file's
    shared keys; the file's own keys and its other pairs are validated here, as serve
    validates them, and the pair itself by the caller, with the command line over it:
    each pair once."""
    if is_fleet(data):
        _, tables = read_fleet(data, origin)
        if (wrong := no_such_pair([t.name for t in tables], pair, origin)) is not None:
            raise wrong
        _fleet_pairs(data, tables, origin, skip=pair)
        chosen = next(t for t in tables if t.name == pair)
        return fleet_pair(data, chosen, origin), chosen.where
    if pair is not None:
        raise ConfigError(f"--pair {pair}: {origin} is a one-pair config, not a fleet file "
                          "([[pair]] tables): drop --pair")
    return data, origin


def no_such_pair(names: list[str], name: str | None, origin: str) -> ConfigError | None:
    """``--config FLEET --pair NAME``: what is wrong with ``name`` in one line (no name:
    which pairs there are; an unknown one: the close matches), or None."""
    import difflib

    if name is None:
        return ConfigError(f"{origin} is a fleet file ({_some(names)}): give --pair NAME, "
                           f"e.g. --pair {names[0]}")
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = (f"did you mean {_either(close)}?" if close else f"it has {_some(names)}")
        return ConfigError(f"{origin}: no pair {name!r}: {hint}")
    return None


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _some(names: list[str], show: int = 6) -> str:
    """"3 pairs: shop, billing, cache", or the first ``show`` and how many more."""
    head = ", ".join(names[:show])
    more = f" and {len(names) - show} more" if len(names) > show else ""
    return f"{len(names)} pair{'s' if len(names) != 1 else ''}: {head}{more}"


# --- the command line --------------------------------------------------------

def _opt(args: argparse.Namespace, dest: str) -> Any:
    """An option's value; None where it was not given (or this parser lacks it)."""
    return getattr(args, dest, None)


def _endpoint(kind: str) -> Callable[[argparse.Namespace, Role], Any]:
    def value(args: argparse.Namespace, role: Role) -> Any:
        spec = _opt(args, f"{role}_{kind}")
        return parse_endpoint_spec(spec, kind) if spec else None  # type: ignore[arg-type]
    return value


PAIR_FLAGS: tuple[tuple[str, Callable[[argparse.Namespace], Any]], ...] = (
    ("interval", lambda a: _opt(a, "interval")),
    ("timeout", lambda a: _opt(a, "timeout")),
    ("sentinel", lambda a: parse_sentinel_spec(s) if (s := _opt(a, "sentinel")) else None),
    ("heartbeat_table", lambda a: _opt(a, "heartbeat_table")),
    ("roles.together", lambda a: [g.split(",") for g in t] if (t := _opt(a, "together"))
     else None),
)
"""(dotted config key, its value from the parsed options, None: not given) of the pair's
own settings (a dotted key reaches into a table: ``"checks.pair_lag.open_after"``)."""

NODE_FLAGS: tuple[tuple[str, Callable[[argparse.Namespace, Role], Any]], ...] = (
    ("host", lambda a, role: _opt(a, role) or None),
    ("name", lambda a, role: _opt(a, f"{role}_name") or None),
    ("mysql", _endpoint("mysql")),
    ("redis", _endpoint("redis")),
    ("ssh", lambda a, role: parse_ssh_spec(s) if (s := _opt(a, f"{role}_ssh")) else None),
    ("drbd", lambda a, _: {"enabled": False} if _opt(a, "no_drbd")
     else {"proc_path": p} if (p := _opt(a, "drbd_proc")) else None),
    ("host_metrics", lambda a, _: {"enabled": False} if _opt(a, "no_host") else None),
)
"""(config key of a node, its value for ``role`` from the parsed options, None: not
given): ``--primary-mysql`` is the primary's ``mysql``, ``--no-drbd`` both nodes'
``drbd``."""


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    *path, last = key.split(".")
    for part in path:
        data = data.setdefault(part, {})
    data[last] = value


def command_line(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys the options give (only those given)."""
    over: dict[str, Any] = {}
    for key, pair_value in PAIR_FLAGS:
        if (v := pair_value(args)) is not None:
            _put(over, key, v)
    for role in ROLES:
        node: dict[str, Any] = {}
        for key, node_value in NODE_FLAGS:
            if (v := node_value(args, role)) is not None:
                _put(node, key, v)
        if node:
            over[role] = node
    return over


# --- one pair ----------------------------------------------------------------

@dataclass(frozen=True)
class PairSettings:
    """The options of a run read once (``pair_settings``), each layer apart;
    ``config(base)`` lays them over the lab's nodes (with --lab) and validates the
    result."""

    file: dict[str, Any]
    """The --config file's pair ({} without --config)."""
    options: dict[str, Any]
    """The command line's keys."""
    ask: tuple[str, ...]
    """The kinds of password to prompt for ("mysql", "redis")."""
    origin: str
    """What an error names: the --config file (or its pair), or "command line"."""

    def config(self, base: dict[str, Any] | None = None) -> Config:
        # a copy: the prompt puts its password into it, not into the layers
        data = copy.deepcopy(lay(base, self.file, self.options))
        for kind in self.ask:
            ask_password(data, kind)
        for role in ROLES:
            if "host" not in data.get(role, {}):
                raise ConfigError(f"no {role} given: use --{role} HOST or a [{role}] table "
                                  "in --config")
        return build_config(data, origin=self.origin)


def _file_of(args: argparse.Namespace, file_data: dict[str, Any] | None = None
             ) -> tuple[dict[str, Any], str]:
    """(the --config file's pair, what an error names) for the parsed options."""
    path, pair = args.config, _opt(args, "pair")
    if path is None:
        if pair is not None:
            raise ConfigError(f"--pair {pair} picks a pair of a fleet file: give --config "
                              "FLEET.toml too")
        return {}, "command line"
    # "" too: a --config "$UNSET" is no such file, not ignored
    return config_file(read_pair_file(path) if file_data is None else file_data, pair,
                       shown(path))


def pair_settings(args: argparse.Namespace, *,
                  file_data: dict[str, Any] | None = None) -> PairSettings:
    """The run's options read once (``file_data``: the --config file when the caller has
    parsed it already): a bad file, --pair or option is one line here, before anything
    starts."""
    file, origin = _file_of(args, file_data)
    ask = tuple(kind for kind, flag in (("mysql", "ask_pass"), ("redis", "ask_redis_pass"))
                if _opt(args, flag))
    return PairSettings(file=file, options=command_line(args), ask=ask, origin=origin)


def config_from_args(args: argparse.Namespace, base: dict[str, Any] | None = None, *,
                     file_data: dict[str, Any] | None = None) -> Config:
    """The Config of a run: ``base`` (the lab's nodes), the --config file (``file_data``
    when the caller has read it already), the command line, the passwords asked for."""
    return pair_settings(args, file_data=file_data).config(base)


# --- a recording re-checked --------------------------------------------------

def replay_checks(recorded: dict[str, Any], config: str | None,
                  pair: str | None = None) -> dict[str, Any]:
    """The ``[checks.*]`` to re-check a recording with: the recorded ones, each key that
    ``config`` sets for the pair in its ``[checks.<id>]`` tables (a pair file's own; a
    fleet file's ``pair``'s, on the file's shared tables) replacing the recorded one;
    only the checks of the file are taken."""
    if config is None:
        if pair is not None:
            raise ConfigError(f"--pair {pair} picks a pair of a fleet file: give --config "
                              "FLEET.toml too")
        return recorded
    keys, _ = config_file(read_pair_file(config), pair, shown(config))
    tables = keys.get("checks") or {}
    if not isinstance(tables, dict):
        raise ConfigError(f"{config}: [checks] is not a table of [checks.<id>] tables")
    return lay(recorded, tables)
