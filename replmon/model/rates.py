"""Counter arithmetic. Rates come from two consecutive readings and their real
(monotonic) timestamps, never the nominal interval. A counter that went down
(restart, FLUSH STATUS, reboot, reconnect, 32-bit wrap) yields no rate: None,
never a negative or absurd number."""

from __future__ import annotations

from collections.abc import Mapping


def counter_rate(prev: float | None, cur: float | None, dt: float) -> float | None:
    """Per-second rate of a monotonically increasing counter, or None when it
    cannot be trusted: a value is missing, time did not advance, or the counter went down."""
    if prev is None or cur is None or dt <= 0:
        return None
    delta = cur - prev
    if delta < 0:
        return None
    return delta / dt if delta else 0.0  # no change: the one 0.0, not a new float


def counter_rates(prev: Mapping[str, int], cur: Mapping[str, int], dt: float
                  ) -> dict[str, float]:
    """Per-second rates of a family of counters by name (errors by kind), only the ones
    that grew; a name new in ``cur`` counts from 0."""
    out: dict[str, float] = {}
    for name, count in cur.items():
        r = counter_rate(prev.get(name, 0), count, dt)
        if r:
            out[name] = r
    return out


def counter_delta(prev: float | None, cur: float | None) -> float | None:
    """Increase of a counter between two readings; None if it went down or is missing."""
    if prev is None or cur is None:
        return None
    delta = cur - prev
    return None if delta < 0 else delta


def ratio(num: float | None, den: float | None) -> float | None:
    """num/den, or None when either is unknown or den is zero."""
    if num is None or den is None or den == 0:
        return None
    return num / den
