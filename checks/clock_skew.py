"""Clock skew: do the two nodes agree on the time?

Every tick replmon asks both nodes' Redis for INFO, whose ``server_time_usec`` is the
node's clock when it answered, and every ``positions_every`` seconds (2 s) their MySQL for
``UNIX_TIMESTAMP(NOW(6))``. replmon knows its own clock before each request and how long
the request took, so each node's offset from replmon's clock is known to within half
that time (the tighter of the two when a node has both); the two offsets' difference is the
skew between the nodes, replmon's own clock error cancelling out. Over the last
``window`` (30 s) the newest of the readings with the tightest bounds is judged (NTP
keeps the tightest; the newest of them shows a clock that jumped at once).

Why it matters: MySQL's Seconds_Behind_Master is computed with the clock difference
the replica measured when its IO thread connected, and DRBD/Redis/MySQL logs on the
two nodes cannot be read side by side when their times disagree; lag thresholds of
30 s mean little when the clocks are seconds apart.

- ``|skew|`` minus its bound above ``max_skew_s`` (1 s): warning; above
  ``critical_skew_s`` (30 s): critical. The title gives the skew, its bound and which
  node is ahead.
- Needs, on each node, Redis 6.2+ (``server_time_usec``) or MySQL/MariaDB; the ssh
  round's ``date`` is not read (a process start per tick for a figure the two servers
  already give).

What to do: check time sync on both nodes (``chronyc tracking`` / ``timedatectl``):
an NTP source unreachable, a VM paused and resumed, a host that never synced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from replmon.check import (
    Check,
    Explains,
    Gate,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    node_clock,
    numbers,
    redis_clock,
    round_up,
    source_ok,
)


class Limits(Thresholds):
    max_skew_s: float = 1.0
    """Seconds the clocks may differ (beyond the measurement's bound) before a warning."""
    critical_skew_s: float = 30.0
    """Seconds of difference that make it critical (the lag warning threshold)."""
    window: Seconds = 30.0
    """Seconds (s) of readings the tightest one is picked from."""


Clock = tuple[float, float] | None
"""A node's clock reading (``node_clock``): its offset from replmon's clock and bound."""


def _clocks(w: Window) -> tuple[Sequence[Clock], Sequence[Clock]]:
    """Each node's reading at each tick of the window (kept by the engine tick to tick)."""
    return w.series("primary", node_clock), w.series("replica", node_clock)


def _within(p: Clock, r: Clock) -> float | None:
    """Seconds within which the two nodes' readings prove their clocks agree: |skew| plus
    its bound; None without both."""
    return None if p is None or r is None else abs(p[0] - r[0]) + (p[1] + r[1])


def _proof(w: Window, p_now: Clock, r_now: Clock) -> float | None:
    """``_within`` of this tick's readings: each node's own Redis reading
    (``redis_clock``, every tick) or each node's tighter one (``p_now``, ``r_now``:
    ``node_clock``, as ``w.pair``'s ``clock_offset_s``), the smaller; None without."""
    last = w.last
    out = _within(redis_clock(last.primary), redis_clock(last.replica))
    both = _within(p_now, r_now)
    return both if out is None or (both is not None and both < out) else out


def _silent(w: Window) -> bool:
    """A node answers neither Redis nor MySQL now: source_health says so, not this."""
    p, r = w.last.primary, w.last.replica
    return not (source_ok(p, "redis") or source_ok(p, "mysql")) \
        or not (source_ok(r, "redis") or source_ok(r, "mysql"))


def skew(w: Window, t: Limits) -> tuple[float, float] | None:
    """(primary's clock minus the replica's, bound) from the newest of the tightest
    readings within ``window`` (bound at most twice the tightest, plus 1 ms: a clock
    that jumped is seen at once); None without any."""
    first = w.start_within(t.window)
    ps, rs = _clocks(w)
    readings = [(p[0] - r[0], p[1] + r[1]) for p, r in zip(ps[first:], rs[first:], strict=True)
                if p is not None and r is not None]
    if not readings:
        return None
    tight = 2 * min(b for _, b in readings) + 0.001
    return next(x for x in reversed(readings) if x[1] <= tight)


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    quiet_from_s: float | None
    """A ``max_skew_s`` from which the check is quiet here, s, rounded up: ``_within``
    of this tick's Redis readings (read every tick), else of each node's tighter one,
    else, at a tick without a reading (MySQL's come every ``positions_every``), the
    largest |skew| minus its bound of any reading of the window (as ``skew`` works them
    out); None without any reading in the window: nothing is reported whatever the
    thresholds. The first found, not the smallest (an upper bound, cheap on the usual
    tick): a tighter proof can only make it quiet more often."""


def measure(w: Window) -> Gauges:
    last = w.last
    found = _within(redis_clock(last.primary), redis_clock(last.replica))
    if found is None:
        ps, rs = _clocks(w)
        found = _within(ps[-1], rs[-1])
        if found is None:
            apart = [abs(p[0] - r[0]) - (p[1] + r[1]) for p, r in zip(ps, rs, strict=True)
                     if p is not None and r is not None]
            found = max(apart) if apart else None
    return Gauges(round_up(found))


def quiet(g: Gauges, t: Limits) -> bool:
    """``max_skew_s`` at or above the gauge: this tick proves the clocks agree within it
    (``evaluate``'s first test, by the same or a tighter proof), or no reading of the
    window is further apart than it beyond its bound, and the reading ``skew`` judges is
    one of the window's whatever ``window`` (a longer one is the check's whole window).
    ``critical_skew_s`` only makes it critical."""
    return g.quiet_from_s is None or g.quiet_from_s <= t.max_skew_s


def evaluate(w: Window, t: Limits) -> list[Observation]:
    ps, rs = _clocks(w)
    proof = _proof(w, ps[-1], rs[-1])
    if proof is not None and proof <= t.max_skew_s:
        return []  # this tick's readings prove the clocks agree now (a proof is one,
        # tightest or not)
    if _silent(w):
        return []
    found = skew(w, t)
    if found is None:
        return []
    diff, bound = found
    if abs(diff) - bound <= t.max_skew_s:
        return []
    ahead = "primary" if diff > 0 else "replica"
    return [Observation.trusted(
        key="clock", node="pair",
        severity=(Severity.CRITICAL if abs(diff) - bound > t.critical_skew_s
                  else Severity.WARNING),
        title=(f"clocks differ by {fmt(abs(diff), 2)} s (+/- {fmt(bound, 3)} s): the "
               f"{ahead}'s is ahead"),
        numbers=numbers(skew_s=diff, bound_s=bound, ahead=ahead),
        cause=("time sync is broken on one node (NTP source unreachable, a VM paused and "
               "resumed, never synced): lag figures and the two nodes' logs disagree"),
        next_step="chronyc tracking / timedatectl on both nodes; fix the one that is off",
    )]


EXPLAINS: tuple[Explains, ...] = (
    Explains("mysql_replication", "either",
             "Seconds_Behind_Master subtracts the primary's clock from the replica's: a skew "
             "reads as lag"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="clock_skew", title="Clock skew", needs=("redis", "mysql"),
              thresholds=Limits, evaluate=evaluate, window=30.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
