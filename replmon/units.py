"""Durations and sizes as people write them ("15s", "2m", "100M"): the command line, the
TOML config and the checks' thresholds read them the same way."""

from __future__ import annotations

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

