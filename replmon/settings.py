"""A pair's settings, one home: whatever a pair is watched from (a pair file, one pair of
a fleet file with ``--pair``, the lab's nodes) and the command line meet here, in one
function, and are validated once into a Config:

    the lab's nodes (--lab)                                   weakest
    the --config file: a pair file as it is, or a fleet file's --pair (its nodes on
        [defaults], its checks on the shared [checks.<id>]: replmon.fleet.config)
    the command line (PAIR_FLAGS and NODE_FLAGS below)
    the passwords asked for (--ask-pass, --ask-redis-pass)     strongest

The environment and ~/.my.cnf come later, when the Config is resolved into endpoints
(``replmon.config.resolve``), for a pair of the command line and a pair of serve alike.

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
from typing import Any

from replmon.config import (
    Config,
    Role,
    build_config,
    load_toml,
    merge,
    parse_endpoint_spec,
    parse_sentinel_spec,
    parse_ssh_spec,
)
from replmon.configfile import shown
from replmon.errors import ConfigError
from replmon.fleet.config import is_fleet, pair_data
from replmon.passwords import ask_password

ROLES: tuple[Role, Role] = ("primary", "replica")


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


def config_file(data: dict[str, Any], pair: str | None, origin: str) -> dict[str, Any]:
    """The pair a parsed --config file gives: a pair file's keys as they are, or the
    ``--pair`` of a fleet file (validated whole, as serve reads it)."""
    if is_fleet(data):
        return pair_data(data, pair, origin=origin)
    if pair is not None:
        raise ConfigError(f"--pair {pair}: {origin} is a one-pair config, not a fleet file "
                          "([[pair]] tables): drop --pair")
    return data


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
    """What an error names: the --config file, or "command line"."""

    def config(self, base: dict[str, Any] | None = None) -> Config:
        # a copy: the prompt puts its password into it, not into the layers
        data = copy.deepcopy(merge(merge(base or {}, self.file), self.options))
        for kind in self.ask:
            ask_password(data, kind)
        for role in ROLES:
            if "host" not in data.get(role, {}):
                raise ConfigError(f"no {role} given: use --{role} HOST or a [{role}] table "
                                  "in --config")
        return build_config(data, origin=self.origin)


def pair_settings(args: argparse.Namespace, *,
                  file_data: dict[str, Any] | None = None) -> PairSettings:
    """The run's options read once (``file_data``: the --config file when the caller has
    parsed it already): a bad file, --pair or option is one line here, before anything
    starts."""
    file: dict[str, Any] = {}
    path, pair = args.config, _opt(args, "pair")
    origin = "command line" if path is None else shown(path)
    if path is not None:  # "" too: a --config "$UNSET" is no such file, not ignored
        file = config_file(load_toml(path) if file_data is None else file_data, pair, origin)
    elif pair is not None:
        raise ConfigError(f"--pair {pair} picks a pair of a fleet file: give --config "
                          "FLEET.toml too")
    ask = tuple(kind for kind, flag in (("mysql", "ask_pass"), ("redis", "ask_redis_pass"))
                if _opt(args, flag))
    return PairSettings(file=file, options=command_line(args), ask=ask, origin=origin)


def config_from_args(args: argparse.Namespace, base: dict[str, Any] | None = None, *,
                     file_data: dict[str, Any] | None = None) -> Config:
    """The Config of a run: ``base`` (the lab's nodes), the --config file (``file_data``
    when the caller has read it already), the command line, the passwords asked for."""
    return pair_settings(args, file_data=file_data).config(base)
