"""Reading Redis INFO text: pure functions, no I/O, testable on captured output.

INFO is one bulk string of sections::

    # Replication\\r\\n
    role:master\\r\\n
    connected_slaves:1\\r\\n
    slave0:ip=10.0.0.2,port=6379,state=online,offset=1751844676,lag=0\\r\\n
    ...

``parse_info`` turns it into a flat ``{field: raw string}`` dict (section
headers dropped, unknown fields kept). ``build_redis_sample`` converts the
fields replmon uses into a typed ``RedisSample``. Both raise only
``replmon.errors.ParseError``, naming the field, for text they cannot read.
``read_redis_info`` (the Redis source's) gives what the two give, reading only the lines
the builder uses (``FIELDS_READ`` and the slaveN, dbN, errorstat_* lines).

Why our own parser instead of redis-py's ``info()``: redis-py guesses types
(``master_replid2:000…0`` becomes the int 0, ``*_perc`` stays a string) and
drops lines it does not understand into ``__raw__``. Parsing the raw text
ourselves keeps the conversion explicit and lets the tests run on real captures
(tests/fixtures/redis/).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from typing import Any

from replmon.errors import ParseError
from replmon.model.base import SourceStatus
from replmon.model.redis import COUNTER_FIELDS, RedisReplica, RedisRole, RedisSample

_intern = sys.intern
"""INFO's texts that come back every tick are kept as one string each (the engine holds
each tick's Redis sample 300 s; replmon/sources/mysql_values.py)."""

_INT_RE = re.compile(r"-?[0-9]+")
_FLOAT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_NON_FINITE = frozenset({"nan", "-nan", "inf", "-inf"})

REQUIRED_FIELDS: tuple[str, ...] = ("redis_version", "role")
"""Fields without which a text is not a server's default INFO output."""


def parse_info(text: str) -> dict[str, str]:
    """Split INFO text into ``{field: value}``.

    Lines are ``field:value`` split on the first ':' (so IPv6 values survive),
    CRLF or LF; ``# Section`` headers, blank lines and lines without ':' are
    skipped. Raises ParseError when the text holds no field at all."""
    if not isinstance(text, str):
        raise ParseError(f"INFO reply is {type(text).__name__}, not text")
    # One comprehension rather than a loop of statements: 47 µs instead of 61 for a
    # 200-line INFO. A line's trailing CRs are always in its value (after the first
    # ':'), so stripping them from the value is stripping them from the line; a key is
    # the start of its line, so k[0] != "#" skips the section headers.
    fields = {k: v.rstrip("\r")
              for k, sep, v in [line.partition(":") for line in text.split("\n")]
              if sep and k and k[0] != "#"}
    if not fields:
        raise ParseError("INFO reply has no field:value lines")
    return fields


FIELDS_READ: frozenset[str] = frozenset({
    "aof_delayed_fsync", "aof_enabled", "aof_last_write_status", "aof_rewrite_in_progress",
    "blocked_clients", "connected_clients", "connected_slaves", "instantaneous_ops_per_sec",
    "latest_fork_usec", "loading", "master_failover_state", "master_host",
    "master_last_io_seconds_ago", "master_link_down_since_seconds", "master_link_status",
    "master_port", "master_repl_offset", "master_replid", "master_replid2",
    "master_sync_in_progress", "master_sync_last_io_seconds_ago", "master_sync_left_bytes",
    "master_sync_perc", "master_sync_read_bytes", "master_sync_total_bytes", "maxclients",
    "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio", "min_slaves_good_slaves",
    "rdb_bgsave_in_progress", "rdb_changes_since_last_save", "rdb_last_bgsave_status",
    "rdb_last_bgsave_time_sec", "rdb_last_save_time", "redis_version", "repl_backlog_active",
    "repl_backlog_first_byte_offset", "repl_backlog_histlen", "repl_backlog_size",
    "replica_read_only", "role", "run_id", "second_repl_offset", "server_name",
    "server_time_usec", "slave_read_only", "slave_read_repl_offset", "slave_repl_offset",
    "total_system_memory", "uptime_in_seconds", "used_memory", "used_memory_peak",
    "used_memory_rss", "valkey_version", *COUNTER_FIELDS,
})
"""The INFO fields ``build_redis_sample`` reads by name; it also reads the slaveN, dbN
and errorstat_* families (tests/unit/test_redis_parse.py checks that it reads nothing
else, so ``read_redis_info`` may skip the other lines)."""


def _alternation(entries: list[tuple[str, str]]) -> str:
    """A regex alternation matching each (literal, regex tail) of ``entries``, the
    literals factored by their first characters (a trie): ``ro(?:le|...)``. sre tries an
    alternation's branches one by one at each line; 70 flat branches cost more than
    the dict comprehension of parse_info, the trie ~3 a line."""
    by_first: dict[str, list[tuple[str, str]]] = {}
    for literal, tail in entries:
        by_first.setdefault(literal[:1], []).append((literal[1:], tail))
    branches: list[str] = []
    for first, rest in by_first.items():
        if not first:  # a literal that ends here: its tail
            branches += [tail for _, tail in rest]
        elif len(rest) == 1:
            branches.append(re.escape(first + rest[0][0]) + rest[0][1])
        else:
            branches.append(f"{re.escape(first)}(?:{_alternation(rest)})")
    return "|".join(branches)


_LINE_READ = re.compile(
    r"\n("
    + _alternation([(name, "") for name in sorted(FIELDS_READ)]
                   + [("slave", "[0-9]+"), ("db", "[0-9]+"), ("errorstat_", r"[^:\n]*")])
    # the value: the rest of the line less its trailing CRs (as parse_info's rstrip), a
    # CR inside it kept
    + r"):([^\r\n]*(?:\r+[^\r\n]+)*)\r*")
"""A line of a field that build_redis_sample reads: (name, value)."""


def read_redis_info(text: str) -> RedisSample:
    """``build_redis_sample(parse_info(text))``, the same sample or ParseError, from the
    lines build_redis_sample reads only (FIELDS_READ and the slaveN, dbN, errorstat_*
    lines; ~70 of ~230 in a default INFO): one regex ``findall`` over the text instead
    of a dict of every line, 48 -> 27 µs a Redis 7.0 INFO.

    The dict is parse_info's, less the fields not read, in the same order: a line
    starts at the text's start or after a newline, its name ends at its first ':' (the
    alternation is of whole names followed by ':'), its value is the rest of the line
    with its trailing CRs stripped, and a name seen twice keeps its first place and
    its last value. A text without a required field goes through parse_info, whose
    error (no field at all, or the field missing) it gives."""
    if not isinstance(text, str):
        raise ParseError(f"INFO reply is {type(text).__name__}, not text")
    info = dict(_LINE_READ.findall("\n" + text))
    if not all(info.get(name) for name in REQUIRED_FIELDS):
        return build_redis_sample(parse_info(text))
    return build_redis_sample(info)


def parse_nested(field: str, value: str) -> dict[str, str]:
    """Split a nested ``k=v,k=v`` value (slaveN, dbN, errorstat_*) into a dict.

    Items are split on the first '='; an item without '=' is a ParseError."""
    out: dict[str, str] = {}
    for item in value.split(","):
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise ParseError(f"INFO field {field}: expected k=v items, got {_show(value)}")
        out[k] = v
    return out


def build_redis_sample(info: Mapping[str, str]) -> RedisSample:
    """Typed RedisSample (status ok, payload filled, no timestamps) from parsed INFO.

    Raises ParseError naming the field when a required field is missing or a
    field replmon reads as a number/flag holds something else. Fields absent
    on this server version stay None."""
    f = _Fields(info)
    for name in REQUIRED_FIELDS:
        f.require(name)
    replica_keys, db_keys, error_keys = _numbered_keys(info)
    replicas = _replicas(info, replica_keys)
    keys, expires = _keyspace(info, db_keys)
    data: dict[str, Any] = {
        "server": "valkey" if (f.text("server_name") or "").lower() == "valkey" else "redis",
        "version": f.text("valkey_version") or f.text("redis_version"),
        "run_id": f.text("run_id") or "",
        "server_time": None if (usec := f.known("server_time_usec")) is None else usec / 1e6,
        "uptime_s": f.integer("uptime_in_seconds"),
        "role": _role(f.text("role")),
        "counters": _counters(info),
        "instantaneous_ops_per_sec": f.integer("instantaneous_ops_per_sec"),
        "connected_clients": f.integer("connected_clients"),
        "blocked_clients": f.integer("blocked_clients"),
        "maxclients": f.integer("maxclients"),
        "used_memory": f.integer("used_memory"),
        "used_memory_rss": f.integer("used_memory_rss"),
        "used_memory_peak": f.integer("used_memory_peak"),
        "maxmemory": f.integer("maxmemory"),
        "maxmemory_policy": f.text("maxmemory_policy"),
        "total_system_memory": f.integer("total_system_memory"),
        "mem_fragmentation_ratio": f.number("mem_fragmentation_ratio"),
        "loading": f.flag("loading"),
        "rdb_bgsave_in_progress": f.flag("rdb_bgsave_in_progress"),
        "rdb_last_bgsave_status": f.text("rdb_last_bgsave_status"),
        "rdb_changes_since_last_save": f.integer("rdb_changes_since_last_save"),
        "rdb_last_save_time": f.integer("rdb_last_save_time"),
        "rdb_last_bgsave_time_s": f.known("rdb_last_bgsave_time_sec"),
        "aof_enabled": f.flag("aof_enabled"),
        "aof_rewrite_in_progress": f.flag("aof_rewrite_in_progress"),
        "aof_last_write_status": f.text("aof_last_write_status"),
        "aof_delayed_fsync": f.integer("aof_delayed_fsync"),
        "latest_fork_usec": f.integer("latest_fork_usec"),
        "master_host": f.text("master_host"),
        "master_port": f.integer("master_port"),
        "link_status": _link_status(f.text("master_link_status")),
        "last_io_seconds_ago": f.known("master_last_io_seconds_ago"),
        "sync_in_progress": f.flag("master_sync_in_progress"),
        "link_down_since_seconds": _down_since(f),
        "repl_offset": f.integer("slave_repl_offset"),
        "read_repl_offset": f.integer("slave_read_repl_offset"),
        **_sync_progress(f),
        "replica_read_only": f.flag("slave_read_only") if "slave_read_only" in info
        else f.flag("replica_read_only"),
        "failover_state": f.text("master_failover_state"),
        "master_replid2": f.text("master_replid2"),
        "second_repl_offset": f.known("second_repl_offset"),
        "connected_replicas": f.integer("connected_slaves"),
        "replicas": replicas,
        "master_repl_offset": f.integer("master_repl_offset"),
        "master_replid": f.text("master_replid"),
        "repl_backlog_active": f.flag("repl_backlog_active"),
        "repl_backlog_size": f.integer("repl_backlog_size"),
        "repl_backlog_first_byte_offset": f.integer("repl_backlog_first_byte_offset"),
        "repl_backlog_histlen": f.integer("repl_backlog_histlen"),
        "keys": keys,
        "expires": expires,
        "good_replicas": f.integer("min_slaves_good_slaves"),
        "error_counts": _error_counts(info, error_keys),
    }
    # every value above is of its field's exact type (the getters' ints, floats, strs
    # and flags, checked against the text): no validation (Struct.trusted), 6.0 -> 4.3 µs;
    # the status too (the default factory's SourceStatus() was validated, ~0.7 µs)
    return RedisSample.trusted(status=_OK, **data)


_OK = SourceStatus.trusted()
"""The status of a sample just read (immutable: one for all)."""


def _counters(info: Mapping[str, str]) -> dict[str, int]:
    """The COUNTER_FIELDS present, as integers (one loop, no getter per field)."""
    out: dict[str, int] = {}
    for name in COUNTER_FIELDS:
        value = info.get(name)
        if value is not None:
            out[name] = int(value) if value.isdigit() and value.isascii() \
                else _to_int(name, value)
    return out


def _error_counts(info: Mapping[str, str], keys: list[str]) -> dict[str, int]:
    """INFO errorstats (6.2+): {"NOREPLICAS": 12} from ``errorstat_NOREPLICAS:count=12``
    (``keys``: the errorstat_ fields, from _numbered_keys)."""
    out: dict[str, int] = {}
    for key in keys:
        count = parse_nested(key, info[key]).get("count")
        if count is None:
            raise ParseError(f"INFO field {key}: no count in {_show(info[key])}")
        out[key[len("errorstat_"):]] = _to_int(key, count)
    return out


def parse_bgsave_guard(reply: object) -> tuple[bool | None, str | None]:
    """(stop-writes-on-bgsave-error, save) from a CONFIG GET reply that asked for them;
    (None, None) when it holds neither."""
    conf = _config_reply(reply)
    stop, save = conf.get("stop-writes-on-bgsave-error"), conf.get("save")
    if stop is not None and stop not in ("yes", "no"):
        raise ParseError(f"stop-writes-on-bgsave-error: expected yes or no, got {_show(stop)}")
    return (None if stop is None else stop == "yes"), save


_EPOCH_LIKE = 1_000_000_000
"""Seconds (31.7 years, 2001 as a Unix time): no link has been down that long."""


def _down_since(f: _Fields) -> int | None:
    """master_link_down_since_seconds; None when unknown: -1 (Redis 4+ while the link was
    never up), or what Redis 3.x prints then, now - 0: the seconds since 1970, which is
    longer than the server has run and than any link has been down."""
    down, uptime = f.known("master_link_down_since_seconds"), f.integer("uptime_in_seconds")
    if down is not None and (down >= _EPOCH_LIKE or (uptime is not None and down > uptime)):
        return None
    return down


class _Fields:
    """Typed getters over the raw INFO dict; each names the field in its ParseError."""

    def __init__(self, info: Mapping[str, str]) -> None:
        self.info = info

    def require(self, name: str) -> None:
        if not self.info.get(name):
            raise ParseError(f"INFO field {name} is missing")

    def text(self, name: str) -> str | None:
        """The field's text, interned: the same version, run id, replication ids and
        statuses come back every tick (replmon/sources/mysql_values.py says why)."""
        value = self.info.get(name)
        return None if value is None else _intern(value)

    def integer(self, name: str) -> int | None:
        value = self.info.get(name)
        if value is None:
            return None
        # _to_int's test inline: most values are ASCII digits (a call less a field)
        return int(value) if value.isdigit() and value.isascii() else _to_int(name, value)

    def known(self, name: str) -> int | None:
        """An integer where Redis prints -1 (any negative) for "unknown": None then."""
        value = self.info.get(name)
        if value is None:
            return None
        if value.isdigit() and value.isascii():
            return int(value)
        number = _to_int(name, value)
        return None if number < 0 else number

    def number(self, name: str) -> float | None:
        value = self.info.get(name)
        if value is None or value in _NON_FINITE:
            return None  # C printf of a 0/0 ratio; not the server's fault
        if not _FLOAT_RE.fullmatch(value):
            raise ParseError(f"INFO field {name}: expected a number, got {_show(value)}")
        number = float(value)
        return number if math.isfinite(number) else None

    def flag(self, name: str) -> bool | None:
        value = self.info.get(name)
        if value is None:
            return None
        if value not in ("0", "1"):
            raise ParseError(f"INFO field {name}: expected 0 or 1, got {_show(value)}")
        return value == "1"


def _sync_progress(f: _Fields) -> dict[str, Any]:
    """A running full sync's progress, with what Redis cannot know as None: the total
    is -1 until the master announces it and 0 for a diskless sync, and then the bytes
    left come out negative and the percentage 0.00."""
    total = f.known("master_sync_total_bytes") or None
    return {
        "sync_total_bytes": total,
        "sync_read_bytes": f.known("master_sync_read_bytes"),
        "sync_left_bytes": f.known("master_sync_left_bytes") if total else None,
        "sync_perc": f.number("master_sync_perc") if total else None,
        "sync_last_io_seconds_ago": f.known("master_sync_last_io_seconds_ago"),
    }


def _to_int(name: str, value: str) -> int:
    # ASCII digits only (most values) need no regex: 0.1 µs for the test, 0.23 for it
    if value.isdigit() and value.isascii():
        return int(value)
    if not _INT_RE.fullmatch(value):
        raise ParseError(f"INFO field {name}: expected an integer, got {_show(value)}")
    return int(value)


def _show(value: str) -> str:
    """A value for an error message, cut short."""
    return repr(value if len(value) <= 40 else value[:40] + "…")


def _role(value: str | None) -> RedisRole:
    if value == "master":
        return "master"
    if value in ("slave", "replica"):
        return "replica"
    raise ParseError(f"INFO field role: expected master or slave, got {_show(value or '')}")


def _link_status(value: str | None) -> str | None:
    if value is None or value in ("up", "down"):
        return value
    raise ParseError(f"INFO field master_link_status: expected up or down, got {_show(value)}")


_FAMILY_KEY = re.compile(r"\n((?:slave|db)[0-9]+|errorstat_[^\n]*)(?=\n)")


def _numbered_keys(info: Mapping[str, str]) -> tuple[list[str], list[str], list[str]]:
    """The slaveN, the dbN (N: ASCII digits) and the errorstat_* field names, in INFO
    order.

    The names are joined on \\n and one regex finds the three families: a prefix test
    per field and family in Python cost ~18 µs per 200-field INFO, this ~5. (A name
    holding a \\n, which parse_info never gives, sends them all through the tests.)"""
    names = "\n".join(info)
    if names.count("\n") == len(info) - 1:
        found = _FAMILY_KEY.findall(f"\n{names}\n")
    else:
        found = [k for k in info if k.startswith("errorstat_") or _is_numbered(k)]
    replicas: list[str] = []
    dbs: list[str] = []
    errors: list[str] = []
    for key in found:
        (replicas if key[0] == "s" else dbs if key[0] == "d" else errors).append(key)
    return replicas, dbs, errors


def _is_numbered(key: str) -> bool:
    """slaveN or dbN, N in ASCII digits."""
    n = key[5:] if key.startswith("slave") else key[2:] if key.startswith("db") else ""
    return n.isdigit() and n.isascii()


def _replicas(info: Mapping[str, str], keys: list[str]) -> list[RedisReplica]:
    """The slaveN lines (``keys``, from _numbered_keys), in N order. Redis ≥ 2.8 prints
    ``ip=…,port=…,state=…,offset=…,lag=…``; 2.6 printed ``ip,port,state`` (kept, offset
    unknown)."""
    found: list[tuple[int, RedisReplica]] = []
    for key in keys:
        value = info[key]
        if "=" not in value:
            parts = value.split(",")
            if len(parts) != 3:
                raise ParseError(f"INFO field {key}: expected ip,port,state, got {_show(value)}")
            kv = {"ip": parts[0], "port": parts[1], "state": parts[2]}
        else:
            kv = parse_nested(key, value)
        if "ip" not in kv or "port" not in kv:
            raise ParseError(f"INFO field {key}: no ip/port in {_show(value)}")
        offset, lag = kv.get("offset"), kv.get("lag")
        replica = RedisReplica.trusted(
            ip=_intern(kv["ip"]),
            port=_to_int(f"{key}.port", kv["port"]),
            state=_intern(kv.get("state", "")),
            offset=None if offset is None else _to_int(f"{key}.offset", offset),
            lag_s=None if lag is None else _to_int(f"{key}.lag", lag),
        )
        found.append((int(key[5:]), replica))
    return [r for _, r in sorted(found, key=lambda item: item[0])]


def _keyspace(info: Mapping[str, str], db_keys: list[str]) -> tuple[int, int]:
    """Sum of keys= and expires= over the dbN lines (``db_keys``, from _numbered_keys;
    0, 0 on an empty server)."""
    keys = expires = 0
    for key in db_keys:
        value = info[key]
        kv = parse_nested(key, value)
        if "keys" not in kv:
            raise ParseError(f"INFO field {key}: no keys= in {_show(value)}")
        keys += _to_int(f"{key}.keys", kv["keys"])
        expires += _to_int(f"{key}.expires", kv.get("expires", "0"))
    return keys, expires


def _config_reply(reply: object) -> dict[str, str]:
    """A CONFIG GET reply as {parameter: value}: RESP2 gives a flat [name, value, ...]
    list (in no set order when several parameters were asked), RESP3 a map."""
    if isinstance(reply, dict):
        return {str(k): str(v) for k, v in reply.items()}
    if isinstance(reply, list | tuple):
        return {str(k): str(v) for k, v in zip(reply[::2], reply[1::2], strict=False)}
    raise ParseError(f"CONFIG GET: unexpected {_show(str(reply))}")


def parse_buffer_limit(reply: object) -> tuple[int, int, int] | None:
    """The replica class of ``client-output-buffer-limit`` in a CONFIG GET reply
    (["client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub ..."];
    Redis 5+ prints "slave" or "replica"): (hard bytes, soft bytes, soft seconds); None
    when the reply has no such parameter."""
    value = _config_reply(reply).get("client-output-buffer-limit")
    if value is None:
        return None
    words = value.split()
    for i in range(0, len(words) - 3, 4):
        if words[i] in ("slave", "replica"):
            try:
                return int(words[i + 1]), int(words[i + 2]), int(words[i + 3])
            except ValueError:
                break
    raise ParseError(f"client-output-buffer-limit: no replica class in {_show(value)}")


def parse_min_replicas(reply: object) -> tuple[int, int] | None:
    """(min-replicas-to-write, min-replicas-max-lag) from a CONFIG GET reply that asked
    for both; None when it holds neither (a server asked for the buffer limit only)."""
    conf = _config_reply(reply)
    count, lag = conf.get("min-replicas-to-write"), conf.get("min-replicas-max-lag")
    if count is None and lag is None:
        return None
    try:
        return int(count or "0"), int(lag or "0")
    except ValueError:
        raise ParseError(f"min-replicas-to-write/-max-lag: {_show(f'{count} {lag}')}"
                         ) from None


def parse_master_link_age(reply: object) -> int | None:
    """The ``age`` (s) of the master's connection in ``CLIENT LIST TYPE master``'s reply
    (one line per client: ``id=5 addr=... age=3 ... flags=M ...``); None without one.
    ParseError for a reply that is not such text."""
    if isinstance(reply, bytes):
        reply = reply.decode("utf-8", "replace")
    if not isinstance(reply, str):
        raise ParseError(f"CLIENT LIST returned {type(reply).__name__}, not text")
    for line in reply.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if "M" in fields.get("flags", ""):
            age = fields.get("age", "")
            if not age.isdigit():
                raise ParseError(f"CLIENT LIST: age={age!r} is not a number of seconds")
            return int(age)
    return None
