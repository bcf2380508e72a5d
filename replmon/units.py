"""Durations and sizes as people write them ("15s", "2m", "100M"): the command line, the
TOML config and the checks' thresholds read them the same way. And sizes, rates and a
tick's time as replmon writes them: every view (the screen, the text rows, the findings'
titles and details, ``report``, ``check``) formats them here, so one value reads the same
everywhere.

Bytes are IEC, powers of 1024 (B, KiB, MiB, GiB, TiB; rates KiB/s...): MySQL's and Redis's
sizes are powers of two (a 64 MiB buffer pool, a 1 MiB backlog). The rule, one for every
form: the value in the largest unit it reaches (switching at 1024), with one decimal under
10 and none from 10, a trailing ".0" dropped (1 MiB, not 1.0 MiB); a value that rounds up
to 1024 of a unit is 1 of the next (1,048,575 B is 1 MiB). Whole bytes under 1 KiB.
``fmt_bytes`` spaces the unit for titles and text ("1.6 MiB"), ``compact=True`` does not,
for the screen ("1.6MiB", "633KiB/s"). Link speeds are bits, the network's SI
(100 Mbit/s, 1 Gbit/s, as NICs are rated): another unit, not bytes. Counts and rates that
are not bytes (statements/s) keep SI's k and M (``replmon.output.plain.human``).

A tick's time is its wall time in the local zone truncated to the second (16:09:44.75 is
16:09:44): ``tick_clock`` (HH:MM:SS) and ``tick_stamp`` (with the date and zone) are the
only ways a view turns a wall time into a clock. Truncated, not rounded, because a replay's
"jump to 16:09:44" finds the first tick at or after 16:09:44.000: the tick shown as
16:09:44.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator

from replmon.errors import ConfigError


def parse_duration_text(text: str) -> float:
    """Seconds from "10s", "2m", "1h", "500ms", "1d" or a plain number of seconds."""
    t = text.strip().lower()
    scale = 1.0
    if t.endswith("ms"):
        t, scale = t[:-2], 0.001
    elif t and t[-1] in "smhd":
        t, scale = t[:-1], {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}[t[-1]]
    try:
        value = float(t) * scale
    except ValueError:
        raise ConfigError(f"not a duration: {text!r} (try 10s, 2m)") from None
    if not value > 0:
        raise ConfigError(f"duration must be positive: {text!r}")
    return value


def parse_size_text(text: str) -> int:
    """Bytes from "100M", "1G", "512K" or a plain number of bytes."""
    t = text.strip().upper().removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(t[-1:], 1)
    try:
        value = int(float(t[:-1] if scale > 1 else t) * scale)
    except ValueError:
        raise ConfigError(f"not a size: {text!r} (try 100M, 1G)") from None
    if value <= 0:
        raise ConfigError(f"size must be positive: {text!r}")
    return value


def to_seconds(v: Any, where: str = "") -> float:
    """Seconds from a TOML value: "15s", "2m" or a number (ConfigError naming ``where``)."""
    if not isinstance(v, str):
        return float(v)
    try:
        return parse_duration_text(v)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}" if where else str(e)) from None


def _seconds(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return to_seconds(v)
        except ConfigError as e:
            raise ValueError(str(e)) from None
    return v


Seconds = Annotated[float, BeforeValidator(_seconds)]
"""A pydantic field in seconds that also takes "15s", "2m", "500ms" (TOML thresholds)."""



# --- writing sizes, rates and times ---------------------------------------------------

IEC_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
"""Byte units, each 1024 of the one before."""


def _iec(v: float) -> tuple[str, int, float]:
    """(number text, unit index, the value that text stands for) of ``abs(v)`` by the
    rule in the module docstring."""
    a = abs(v)
    k = 0
    while k < len(IEC_UNITS) - 1 and a >= 1024 ** (k + 1):
        k += 1
    while True:
        scaled = a / 1024**k
        if k == 0:
            n = float(round(scaled))
        else:
            n = round(scaled, 1)
            if n >= 10:
                n = float(round(scaled))
        if n >= 1024 and k < len(IEC_UNITS) - 1:
            k += 1  # 1023.99 KiB rounds to 1024 KiB: 1 MiB
            continue
        text = f"{n:.1f}".removesuffix(".0") if n < 10 else f"{n:.0f}"
        return text, k, n * 1024**k


def fmt_bytes(v: float | None, *, compact: bool = False, per: str = "",
              missing: str | None = None) -> str:
    """Bytes by the module's rule: 0 -> "0 B", 1023 -> "1023 B", 1536 -> "1.5 KiB",
    67108864 -> "64 MiB", 1677722 -> "1.6 MiB"; ``compact``: "1.6MiB". ``per``: a rate's
    "/s". None: ``missing`` ("?" spaced, "-" compact: the screen's unknown)."""
    if v is None:
        return missing if missing is not None else ("-" if compact else "?")
    text, k, n = _iec(v)
    sign = "-" if v < 0 and n else ""
    return f"{sign}{text}{'' if compact else ' '}{IEC_UNITS[k]}{per}"


def fmt_byte_rate(v: float | None, *, compact: bool = False, missing: str | None = None) -> str:
    """Bytes per second: 648000 -> "633 KiB/s" ("633KiB/s" ``compact``)."""
    return fmt_bytes(v, compact=compact, per="/s", missing=missing)


def fmt_bytes_exact(v: float | None, *, missing: str = "?") -> str:
    """``fmt_bytes``, with the exact count after it when the short form rounds:
    67108864 -> "64 MiB", 2445828 -> "2.3 MiB (2,445,828 B)". For settings and a
    finding's numbers, where two values that round alike may differ."""
    if v is None:
        return missing
    short = fmt_bytes(v)
    _, _, n = _iec(v)
    whole = round(v)
    return short if n == abs(whole) else f"{short} ({whole:,} B)"


def fmt_bytes_cell(v: float | None, width: int = 5) -> str:
    """Bytes in a fixed-width column of text rows (``replmon.output.plain``), right
    aligned, the unit's first letter only (K M G T = KiB MiB GiB TiB, as ``ls -h`` and
    dstat write them; the column's header names the unit): 648000 -> " 633K". The same
    rule as ``fmt_bytes``; a value too wide for ``width`` goes up a unit."""
    if v is None:
        return "-".rjust(width)
    text, k, n = _iec(v)
    sign = "-" if v < 0 and n else ""
    out = f"{sign}{text}{IEC_UNITS[k][0] if k else ''}"
    if len(out) > width and "." in text:  # -1.5K in 4 columns: -2K
        out = f"{sign}{n / 1024**k:.0f}{IEC_UNITS[k][0] if k else ''}"
    while len(out) > width and k < len(IEC_UNITS) - 1:  # 1023K in 4 columns: 1M
        k += 1
        scaled = round(abs(v) / 1024**k, 1)
        out = f"{sign}{f'{scaled:.1f}'.removesuffix('.0')}{IEC_UNITS[k][0]}"
    return out.rjust(width)


def fmt_link_speed(mbps: float | None, *, compact: bool = False) -> str:
    """A link speed in bits/s, SI as NICs are rated: 100 -> "100 Mbit/s", 1000 ->
    "1 Gbit/s", 2500 -> "2.5 Gbit/s"; None or 0: "?"."""
    if not mbps:
        return "?"
    num, unit = (f"{mbps / 1000:g}", "Gbit/s") if mbps >= 1000 else (f"{mbps:g}", "Mbit/s")
    return f"{num}{'' if compact else ' '}{unit}"


def fmt_duration(seconds: float | None) -> str:
    """A span as an on-call reads it, two units at most: 42 -> "42 s", 125 -> "2 min
    5 s", 7260 -> "2 h 1 min", 269000 -> "3 d 2 h"; None: "?"."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    s = max(0, int(seconds))
    for unit, size, sub, subsize in (("d", 86400, "h", 3600), ("h", 3600, "min", 60),
                                     ("min", 60, "s", 1)):
        if s >= size:
            whole, rest = divmod(s, size)
            part = rest // subsize
            return f"{whole} {unit}" + (f" {part} {sub}" if part else "")
    return f"{s} s"


BYTE_SETTINGS = frozenset({
    "innodb_buffer_pool_size", "innodb_log_file_size", "innodb_redo_log_capacity",
    "max_allowed_packet", "replica_max_allowed_packet", "slave_max_allowed_packet",
    "max_binlog_size", "maxmemory", "repl-backlog-size",
})
"""MySQL and Redis settings whose value is a number of bytes."""


def fmt_setting(name: str, value: object) -> str:
    """A setting's value as the drift view and config_drift's titles show it: a size in
    bytes by ``fmt_bytes_exact`` (67108864 -> "64 MiB"; maxmemory 0 -> "0 (no limit)"),
    Redis's client-output-buffer-limit (hard, soft, seconds) as "256 MiB 64 MiB 60 s",
    min-replicas-to-write (count, max lag) in words (``min_replicas_text``),
    anything else as it is."""
    if isinstance(value, tuple | list):
        if name.startswith("client-output-buffer-limit") and len(value) == 3:
            hard, soft, secs = value
            return f"{fmt_bytes_exact(hard)} {fmt_bytes_exact(soft)} {secs} s"
        if name == "min-replicas-to-write" and len(value) == 2:
            return min_replicas_text(*value)
        return " ".join(str(x) for x in value)
    if name in BYTE_SETTINGS:
        try:
            n = int(str(value).strip())
        except ValueError:
            return str(value)
        if n == 0 and name == "maxmemory":
            return "0 (no limit)"
        return fmt_bytes_exact(n)
    return str(value)


def min_replicas_text(count: object, max_lag: object) -> str:
    """Redis's min-replicas-to-write and min-replicas-max-lag in words: a master refuses
    writes unless ``count`` replicas acknowledged within ``max_lag`` seconds."""
    if str(count) == "0":
        return f"off (0 replicas; max lag {max_lag} s)"
    return f"{count} replicas acked within {max_lag} s, else writes refused"


def byte_key(name: str) -> int:
    """How a finding's number named ``name`` counts bytes (units are in the names,
    ``Observation.numbers``): 1 for bytes (``*_bytes``, ``*_bytes_s``, ``bytes_*``),
    1024 for KiB (``*_kib``, ``*_kib_s``), 0 for anything else (a binlog position, a
    Redis offset: an address in a stream, printed as the server prints it)."""
    parts = name.split("_")
    if "bytes" in parts:
        return 1
    if "kib" in parts:
        return 1024
    return 0


def is_rate_key(name: str) -> bool:
    """A number per second: ``*_s`` after the unit, or ``*_per_s``."""
    parts = name.split("_")
    return parts[-1] == "s" and len(parts) > 1 and parts[-2] in ("bytes", "kib", "per")


def fmt_number(name: str, value: object) -> str:
    """A finding's number as its detail shows it: bytes and KiB by their unit
    (``byte_key``), sizes exact when short forms round ("2.3 MiB (2,445,828 B)"),
    rates as rates ("633 KiB/s"); yes/no for a flag (Yes/No for a replication thread's
    ``*_running``, as the server and the io_running beside it say it), NULL for
    Seconds_Behind_* that the server left NULL, "unknown" for another value nobody could
    know (never Python's True/False/None); anything else as it is."""
    if isinstance(value, bool):
        if name.endswith("_running"):  # a replication thread, as the server says it
            return "Yes" if value else "No"  # (Slave_SQL_Running: Yes; io_running beside)
        return "yes" if value else "no"
    if value is None:
        return "NULL" if "seconds_behind" in name else "unknown"
    scale = byte_key(name)
    if not scale or not isinstance(value, int | float):
        return str(value)
    if is_rate_key(name):
        return fmt_byte_rate(value * scale)
    return fmt_bytes_exact(value * scale)


def _tick_struct(wall: float, localtime: Callable[[float], time.struct_time]
                 ) -> time.struct_time:
    return localtime(math.floor(wall))


def tick_clock(wall: float, localtime: Callable[[float], time.struct_time] = time.localtime
               ) -> str:
    """A tick's (or a finding's) time on every view: HH:MM:SS of ``wall`` (epoch seconds)
    in the local zone, truncated to the second (16:09:44.75 -> "16:09:44")."""
    return time.strftime("%H:%M:%S", _tick_struct(wall, localtime))


def tick_stamp(wall: float | None,
               localtime: Callable[[float], time.struct_time] = time.localtime) -> str:
    """``tick_clock`` with the date and the zone, for a report: "2026-11-23 16:09:44 UTC";
    "-" for None."""
    if wall is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", _tick_struct(wall, localtime))
