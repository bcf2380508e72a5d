"""Passwords given on the command line: hidden from ``ps`` once parsed, or asked for.

A password in an endpoint URL (``--primary-mysql mysql://monitor:PW@db163``) is in
``/proc/PID/cmdline``, readable by every local user, for as long as the process runs.
``scrub_own_command_line`` rewrites this process's visible command line (via
``setproctitle``, which overwrites the argv memory the kernel shows) with ``***`` in
place of each password, as the mysql client does with ``-pSECRET``, and warns once.
The window between exec and the scrub (interpreter start and argument parsing, a few
hundred ms) remains: the warning names the ways that have none.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from replmon.errors import ConfigError


def ask_password(data: dict[str, Any], kind: str) -> None:
    """--ask-pass / --ask-redis-pass: one no-echo prompt, for every node's ``kind``
    endpoint that has no password of its own (URL, TOML, password_env)."""
    import getpass

    if not sys.stdin.isatty():
        raise ConfigError(f"--ask-{'' if kind == 'mysql' else 'redis-'}pass needs a terminal; "
                          f"without one use password_env in the config or "
                          f"REPLMON_{kind.upper()}_PASSWORD")
    label = "MySQL" if kind == "mysql" else "Redis"
    password = getpass.getpass(f"{label} password (both nodes): ")
    for role in ("primary", "replica"):
        ep = data.setdefault(role, {}).setdefault(kind, {})
        if ep.get("enabled", True) and not ep.get("password") and not ep.get("password_env"):
            ep["password"] = password


SECRET_OPTIONS = (*(f"--{role}-{kind}" for role in ("primary", "replica")
                      for kind in ("mysql", "redis")), "--sentinel")
"""The options whose value may hold a password (an endpoint URL)."""


def scrub_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(argv with every endpoint password replaced by ***, the options that held one)."""
    out, found = list(argv), []
    for i, arg in enumerate(out):
        opt, eq, value = arg.partition("=")
        if eq and opt in SECRET_OPTIONS:
            at, prefix = i, f"{opt}="
        elif i > 0 and out[i - 1] in SECRET_OPTIONS:
            opt, at, prefix, value = out[i - 1], i, "", arg
        else:
            continue
        from replmon.config import parse_endpoint_spec, parse_sentinel_spec  # (pydantic)

        try:
            password = (parse_sentinel_spec(value) if opt == "--sentinel" else
                        parse_endpoint_spec(value, "mysql" if "mysql" in opt else "redis")
                        ).get("password")
        except ConfigError:
            continue
        if password:
            head, sep, tail = value.rpartition("@")
            user, colon, _ = head.rpartition(":")
            if sep and colon:
                out[at] = f"{prefix}{user}:***@{tail}"
                found.append(opt)
    return out, found


def scrub_own_command_line() -> None:
    """Rewrite this process's visible command line (/proc/PID/cmdline, ``ps``) without
    the passwords, as the mysql client does with ``-pSECRET``, and say so once."""
    scrubbed, found = scrub_argv(sys.argv[1:])
    if not found:
        return
    import setproctitle

    setproctitle.setproctitle(" ".join(["replmon", *scrubbed]))
    print(f"replmon: warning: a password on the command line ({', '.join(found)}) is "
          "readable by other local users until replmon starts; it is now hidden. Safer: "
          "password_env in the config, ~/.my.cnf, REPLMON_MYSQL_PASSWORD / "
          "REPLMON_REDIS_PASSWORD, or --ask-pass / --ask-redis-pass.", file=sys.stderr)
