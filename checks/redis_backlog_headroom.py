"""Redis backlog headroom: how long a link outage can a partial resync still cover?

Reads the primary's INFO replication: ``repl_backlog_size`` and how fast
``master_repl_offset`` grows (bytes of replication stream per second, over the last
``rate_window``, 60 s). When a replica's link drops, the master keeps the stream in its
backlog; a replica that comes back while the bytes it missed are still there continues
with a partial resync (PSYNC). Once the stream has written past the backlog, only a
full resync is left: a fork, an RDB of the whole data set over the network, and the
replica serving stale data (or none) until it loads. Full-resync loops start exactly
there: the backlog covers less outage than the network has (redis issues #11534, #4697).

**Headroom** = repl_backlog_size / offset growth rate, in seconds of outage.

- Below ``warning_headroom_s`` (60 s, Redis's default ``repl-timeout``: a link that a
  replica gives up on after the timeout must still find its bytes): warning.
- Below ``critical_headroom_s`` (5 s): critical, any blip means a full resync.
- Judged only while the master has replicas and writes at least ``min_rate_bytes_s``
  (1 KiB/s): an idle master has all the headroom it needs. A restart (offset going
  back) restarts the rate.

The lab under its write load streams ~10.7 KiB/s: 98 s of headroom with the default
1 MiB backlog (quiet); with ``repl-backlog-size 16384``, 1.5 s (critical).

**A full sync that cannot finish** (key "output_buffer"): during a full sync the master
keeps the writes for the replica in its output buffer from the fork until the replica
has loaded the RDB; ``client-output-buffer-limit replica <hard> <soft> <seconds>`` (CONFIG
GET, re-read every minute) cuts the replica off when the buffer passes ``hard``, or stays
above ``soft`` for ``seconds``, and the replica starts the sync again: a full-resync loop.
A sync takes at least as long as the master's last RDB save (``rdb_last_bgsave_time_sec``,
at least 1 s); the transfer and the load come on top. So at the write rate above:

- ``rate x sync time >= hard``: warning, the buffer overflows before the sync ends;
- ``sync time >= seconds + soft / rate``: warning, the soft limit cuts it.

Both are lower bounds of what a full sync needs, so the warning is never early; the
numbers give the buffer needed. Quiet when the limits are 0 (no limit) or not readable
(``config_error``: an ACL without +config|get).

What to do: raise ``repl-backlog-size`` to cover the write rate times the longest
outage you want to survive (CONFIG SET, and redis.conf); raise
``client-output-buffer-limit replica`` above rate x the sync's duration (RDB save,
transfer and load) so the full syncs it cannot avoid can finish.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    RedisSample,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    fmt_byte_rate,
    fmt_bytes,
    fmt_setting,
    numbers,
    source_ok,
)

KIB = 1024


class Limits(Thresholds):
    warning_headroom_s: float = 60.0
    """Seconds of outage the backlog must cover; below it, warning."""
    critical_headroom_s: float = 5.0
    """Below this many seconds of outage covered, critical."""
    rate_window: Seconds = 60.0
    """Seconds (s) over which the offset's growth rate is measured."""
    min_rate_span: Seconds = 10.0
    """Seconds (s) of readings the rate needs at least."""
    min_rate_bytes_s: float = 1024.0
    """Bytes/s of replication stream below which the master counts as idle."""


def _offset(node: NodeTick) -> tuple[str | None, int] | None:
    """(replication id, offset) of a master; a restart without persistence changes the
    id and starts the offset again."""
    if not source_ok(node, "redis") or node.redis.role != "master":
        return None
    off = node.redis.master_repl_offset
    return None if off is None else (node.redis.master_replid, off)


def offset_rate(w: Window, t: Limits, end: tuple[str | None, int] | None = None
                ) -> tuple[float, float] | None:
    """(bytes/s, seconds measured over) of the primary's replication offset over the
    trailing run of readings within ``rate_window`` (since a restart, if one); ``end``:
    the last tick's ``_offset`` when the caller has it."""
    if end is None:
        end = _offset(w.last.primary)
        if end is None:
            return None
    measured = _rate_since(w, w.start_within(t.rate_window), end)
    return None if measured is None or measured[1] < t.min_rate_span else measured


def _rate_since(w: Window, first: int, end: tuple[str | None, int]
                ) -> tuple[float, float] | None:
    """(bytes/s, seconds measured over) of the primary's offset from the window's tick
    ``first`` (or the restart after it) to the last tick, whose ``_offset`` is ``end``;
    None over no time."""
    ticks = w.ticks
    start = _offset(ticks[first].primary)  # the usual case: one reading a minute old
    i = first
    if start is None or start[0] != end[0] or start[1] > end[1]:  # walk to the restart
        offsets = w.series("primary", _offset)
        i = len(offsets) - 1
        while i > first:
            before, at = offsets[i - 1], offsets[i]
            if before is None or at is None or before[0] != at[0] or before[1] > at[1]:
                break
            i -= 1
        start = offsets[i]
    span = ticks[-1].wall - ticks[i].wall
    if span <= 0 or start is None:
        return None
    return (end[1] - start[1]) / span, span


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position): all None when
    nothing is judged whatever the thresholds (no master's offset, no replica, no
    backlog). Whole numbers (math.ceil/floor, ~0.1 us a call; ``round_up`` costs
    ~0.4 us)."""

    span_s: int | None
    """The window's span, s, rounded up."""
    rate_bytes_s: int | None
    """The offset's growth rate over it, bytes/s, rounded up: the one ``evaluate``
    measures when ``rate_window`` covers the whole window, from its first tick (or the
    restart after it)."""
    covered_s: int | None
    """The seconds of outage the backlog covers at that rate, rounded down; None when a
    full sync at that rate overflows the output buffer limit."""


def measure(w: Window) -> Gauges:
    p = w.node("primary")
    end = _offset(p)
    rs = p.redis
    if end is None or not rs.connected_replicas or not rs.repl_backlog_size:
        return Gauges(None, None, None)
    ticks = w.ticks
    span = math.ceil(ticks[-1].wall - ticks[0].wall)
    measured = _rate_since(w, 0, end)
    if measured is None:
        return Gauges(span, None, None)
    rate = measured[0]
    if rate <= 0:
        return Gauges(span, 0, None)
    covered = (None if _cut(rs, rate) is not None
               else math.floor(rs.repl_backlog_size / rate))
    return Gauges(span, math.ceil(rate), covered)


def quiet(g: Gauges, t: Limits) -> bool:
    """Nothing to judge; or a ``rate_window`` that reaches the window's first tick
    (``start_within`` gives the first tick exactly when last wall - first wall <= it,
    walls in order or not: the gauges' rate is then the one judged,
    whatever ``min_rate_span``, which can only make it None) and that rate idle (under
    ``min_rate_bytes_s``, or 0) or with a backlog covering ``warning_headroom_s`` and no
    output buffer overflow (``critical_headroom_s`` is the severity). A shorter
    ``rate_window`` measures from another tick: never quiet then, unless nothing is
    judged."""
    span, rate, covered = g.span_s, g.rate_bytes_s, g.covered_s
    if span is None:
        return True
    if not span <= t.rate_window:
        return False
    return (rate is None or rate <= 0 or rate < t.min_rate_bytes_s
            or (covered is not None and covered >= t.warning_headroom_s))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    p = w.node("primary")
    end = _offset(p)
    if end is None:
        return []
    rs = p.redis
    if not rs.connected_replicas or not rs.repl_backlog_size:
        return []
    measured = offset_rate(w, t, end)
    if measured is None:
        return []
    rate, span = measured
    if rate <= 0 or rate < t.min_rate_bytes_s:
        return []  # idle (with min_rate_bytes_s <= 0, a rate of 0 has no headroom to divide)
    return [o for o in (_backlog(rs, rate, span, t), _output_buffer(rs, rate)) if o is not None]


def _cut(rs: RedisSample, rate: float) -> str | None:
    """Why a full sync at ``rate`` (> 0) passes the replica output-buffer limit, which
    cuts it off (see the docstring); None when it does not."""
    if rs.replica_buffer_limit is None:
        return None
    hard, soft, soft_s = rs.replica_buffer_limit
    sync_s = float(max(1, rs.rdb_last_bgsave_time_s or 0))
    need = rate * sync_s
    if hard and need >= hard:
        return (f"{fmt_bytes(need)} of writes during a sync of at least {fmt(sync_s)} s "
                f"passes the hard limit of {fmt_bytes(hard)}")
    if soft and soft_s and sync_s >= soft_s + soft / rate:
        return (f"the buffer passes the soft limit of {fmt_bytes(soft)} after "
                f"{fmt(soft / rate, 1)} s and stays above it for {fmt(soft_s)} s before a "
                f"sync of at least {fmt(sync_s)} s ends")
    return None


def _output_buffer(rs: RedisSample, rate: float) -> Observation | None:
    """A full sync the replica output-buffer limit would cut off (see the docstring)."""
    why = _cut(rs, rate)
    if why is None or rs.replica_buffer_limit is None:
        return None
    hard, soft, soft_s = rs.replica_buffer_limit
    sync_s = float(max(1, rs.rdb_last_bgsave_time_s or 0))
    need = rate * sync_s
    return Observation.trusted(
        key="output_buffer", node="primary", severity=Severity.WARNING,
        title=(f"a full sync to the replica cannot finish: {why} "
               f"(client-output-buffer-limit replica "
               f"{fmt_setting('client-output-buffer-limit replica', (hard, soft, soft_s))})"),
        numbers=numbers(offset_rate_bytes_s=rate, min_sync_s=sync_s, buffer_needed_bytes=need,
                        hard_limit_bytes=hard, soft_limit_bytes=soft, soft_limit_s=soft_s),
        cause=("the master drops a replica whose output buffer passes the limit during the "
               "full sync, and the replica starts it again: a full-resync loop, the replica "
               "never current"),
        next_step=(f"CONFIG SET client-output-buffer-limit \"replica "
                   f"{fmt(max(need * 4, 256 * KIB * KIB) / KIB / KIB)}mb "
                   f"{fmt(max(need * 2, 64 * KIB * KIB) / KIB / KIB)}mb 60\" on the master "
                   f"(and redis.conf); sized for rate x the sync's whole duration"),
    )


def _backlog(rs: RedisSample, rate: float, span: float, t: Limits) -> Observation | None:
    size = rs.repl_backlog_size or 0  # evaluate() returned early without one
    headroom = size / rate
    if headroom >= t.warning_headroom_s:
        return None
    critical = headroom < t.critical_headroom_s
    need = rate * t.warning_headroom_s
    return Observation.trusted(
        key="backlog", node="primary",
        severity=Severity.CRITICAL if critical else Severity.WARNING,
        title=(f"Redis backlog covers {fmt(headroom, 1)} s of link outage: "
               f"repl-backlog-size {fmt_bytes(size)} at "
               f"{fmt_byte_rate(rate)} of writes (under "
               f"{fmt(t.critical_headroom_s if critical else t.warning_headroom_s)} s)"),
        numbers=numbers(headroom_s=headroom, repl_backlog_size_bytes=size,
                        offset_rate_bytes_s=rate, rate_measured_over_s=span,
                        connected_replicas=rs.connected_replicas,
                        backlog_for_warning_headroom_bytes=need),
        cause=("a replica link down for longer than that comes back to a backlog that no "
               "longer holds what it missed: a full resync (fork, RDB transfer, the replica "
               "stale until it loads), and under steady writes a loop of them"),
        next_step=(f"CONFIG SET repl-backlog-size {fmt(need / KIB)}kb or more (rate x "
                   f"{fmt(t.warning_headroom_s)} s; also in redis.conf) on the master"),
    )


EXPLAINS: tuple[Explains, ...] = (
    Explains("redis_replication", "either",
             "a backlog shorter than the outage forces a full resync",
             cause_key="backlog", effect_key="full_resync"),
    Explains("redis_replication", "either",
             "an output buffer limit below a sync's writes drops the replica's link",
             cause_key="output_buffer"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="redis_backlog_headroom", title="Redis backlog headroom", needs=("redis",),
              thresholds=Limits, evaluate=evaluate, window=60.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges), service="redis")
