"""Clock skew: do the two nodes agree on the time?

Every tick replmon asks both nodes' Redis for INFO, whose ``server_time_usec`` is the
node's clock when it answered. replmon knows its own clock before the request
(the sample's wall) and how long the request took, so each node's offset from
replmon's clock is known to within half that time; the two offsets' difference is the
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
- Needs Redis 6.2+ on both nodes (``server_time_usec``); MySQL's ``NOW(6)`` and the ssh
  round's ``date`` are not read yet.

What to do: check time sync on both nodes (``chronyc tracking`` / ``timedatectl``):
an NTP source unreachable, a VM paused and resumed, a host that never synced.
"""

from __future__ import annotations

from replmon.check import (
    Check,
    NodeTick,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    numbers,
    source_ok,
)


class Limits(Thresholds):
    max_skew_s: float = 1.0
    """Seconds the clocks may differ (beyond the measurement's bound) before a warning."""
    critical_skew_s: float = 30.0
    """Seconds of difference that make it critical (the lag warning threshold)."""
    window: Seconds = 30.0
    """Seconds (s) of readings the tightest one is picked from."""


def _offset(node: NodeTick) -> tuple[float, float] | None:
    """(node clock minus replmon's clock, half the request time) from one Redis sample."""
    if not source_ok(node, "redis") or node.redis.server_time is None:
        return None
    s = node.redis
    half = s.elapsed_ms / 2000.0
    return s.server_time - (s.wall + half), half


def skew(w: Window, t: Limits) -> tuple[float, float] | None:
    """(primary's clock minus the replica's, bound) from the newest of the tightest
    readings within ``window`` (bound at most twice the tightest, plus 1 ms: a clock
    that jumped is seen at once); None without any."""
    first = w.start_within(t.window)
    readings = [(p[0] - r[0], p[1] + r[1]) for p, r in
                zip(w.series("primary", _offset)[first:], w.series("replica", _offset)[first:],
                    strict=True) if p is not None and r is not None]
    if not readings:
        return None
    tight = 2 * min(b for _, b in readings) + 0.001
    return next(x for x in reversed(readings) if x[1] <= tight)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    last = w.last
    if _offset(last.primary) is None or _offset(last.replica) is None:
        return []
    found = skew(w, t)
    if found is None:
        return []
    diff, bound = found
    if abs(diff) - bound <= t.max_skew_s:
        return []
    ahead = "primary" if diff > 0 else "replica"
    return [Observation(
        key="clock", node="pair",
        severity=(Severity.CRITICAL if abs(diff) - bound > t.critical_skew_s
                  else Severity.WARNING),
        title=(f"clocks differ by {fmt(abs(diff), 2)} s (+/- {fmt(bound, 3)} s): the "
               f"{ahead}'s is ahead (Redis server_time_usec on both)"),
        numbers=numbers(skew_s=diff, bound_s=bound, ahead=ahead),
        cause=("time sync is broken on one node (NTP source unreachable, a VM paused and "
               "resumed, never synced): lag figures and the two nodes' logs disagree"),
        next_step="chronyc tracking / timedatectl on both nodes; fix the one that is off",
    )]


CHECK = Check(id="clock_skew", title="Clock skew", needs=("redis",),
              thresholds=Limits, evaluate=evaluate, window=30.0)
