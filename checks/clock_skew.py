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

from replmon.check import (
    Check,
    Explains,
    Gate,
    Gauges,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    node_clock,
    numbers,
    redis_clock,
    source_ok,
    up,
)


class Limits(Thresholds):
    max_skew_s: float = 1.0
    """Seconds the clocks may differ (beyond the measurement's bound) before a warning."""
    critical_skew_s: float = 30.0
    """Seconds of difference that make it critical (the lag warning threshold)."""
    window: Seconds = 30.0
    """Seconds (s) of readings the tightest one is picked from."""


def _proof(w: Window) -> float | None:
    """Seconds within which this tick's readings prove the clocks agree (|skew| plus
    its bound): each node's own Redis reading (``redis_clock``, every tick) or each
    node's tighter one (``w.pair``), the smaller; None without either."""
    last = w.last
    p, r = redis_clock(last.primary), redis_clock(last.replica)
    out = None if p is None or r is None else abs(p[0] - r[0]) + p[1] + r[1]
    pair = w.pair
    offset, bound = pair.clock_offset_s, pair.clock_bound_s
    if offset is not None and bound is not None:
        both = abs(offset) + bound
        out = both if out is None or both < out else out
    return out


def _silent(w: Window) -> bool:
    """A node answers neither Redis nor MySQL now: source_health says so, not this."""
    return any(not (source_ok(n, "redis") or source_ok(n, "mysql"))
               for n in (w.last.primary, w.last.replica))


def _readings(w: Window, first: int = 0) -> list[tuple[float, float]]:
    """(primary's clock minus the replica's, bound) of each tick from ``first`` on where
    both nodes have a reading (``node_clock``)."""
    return [(p[0] - r[0], p[1] + r[1]) for p, r in
            zip(w.series("primary", node_clock)[first:],
                w.series("replica", node_clock)[first:], strict=True)
            if p is not None and r is not None]


def skew(w: Window, t: Limits) -> tuple[float, float] | None:
    """(primary's clock minus the replica's, bound) from the newest of the tightest
    readings within ``window`` (bound at most twice the tightest, plus 1 ms: a clock
    that jumped is seen at once); None without any."""
    readings = _readings(w, w.start_within(t.window))
    if not readings:
        return None
    tight = 2 * min(b for _, b in readings) + 0.001
    return next(x for x in reversed(readings) if x[1] <= tight)


def gauges(w: Window) -> Gauges:
    """(``_proof``, rounded up; the largest |skew| minus its bound of any reading of the
    window, rounded up, None when there is none or a node is ``_silent``)."""
    readings = [] if _silent(w) else _readings(w)
    apart = max([abs(diff) - bound for diff, bound in readings]) if readings else None
    return up(_proof(w)), up(apart)


def quiet(g: Gauges, t: Limits) -> bool:
    """This tick proves the clocks agree within ``max_skew_s``, or no reading of the
    window is further apart than it beyond its bound: the reading ``skew`` judges is one
    of the window's whatever ``window`` (a longer one is the check's whole window), so
    it is not either. ``critical_skew_s`` only makes it critical."""
    proof, apart = g
    return ((proof is not None and proof <= t.max_skew_s)
            or apart is None or apart <= t.max_skew_s)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    proof = _proof(w)
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
    return [Observation(
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
              gate=Gate(gauges, quiet))
