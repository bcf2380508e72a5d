"""Redis replication: is the replica's link to the master up, and at what cost?

Reads INFO replication on both nodes: the replica's own view (role, master
link, sync progress, offset, replid) and the master's (its replicas list with
the offset each replica acknowledged, sync_full, latest_fork_usec, memory).

On the replica (keys ``link/<condition>``, at most one at a time; each condition its
own key, so a link that goes down and comes back with a full sync is two findings of one
incident, not one renamed):

- **Redis not readable** (``link/unreadable``; unreachable, timeout, auth...):
  critical, replmon cannot see the replica's replication at all.
- **Link down** (``link/down``; ``master_link_status:down``, no sync running): critical, with
  ``master_link_down_since_seconds`` and ``master_last_io_seconds_ago``; Redis prints
  -1 for both when it cannot know (never connected since start, no link), and the
  title says so in words ("never up", "no I/O from the master"), never "-1 s". The
  replica serves stale data, and when the link returns only a master
  backlog that still holds what it missed spares a full resync. The cause follows
  the facts: the master's Redis not answering replmon either (down or hung); a link
  never up since the replica started (it cannot reach or log in to the master:
  address, masterauth, the master's bind/protected-mode, a firewall); a link that
  was up and broke N s ago (the master dropped it: repl-timeout, the replica output
  buffer limit; or the network). During a full sync the link also reads down: that
  case is the next one, not this.
- **Full sync in progress** (``link/sync``; ``master_sync_in_progress:1``, or the link
  down while the master lists a replica in ``wait_bgsave``/``send_bulk``: Redis 7's diskless sync
  waits ``repl-diskless-sync-delay``, 5 s, before sending): warning, with the RDB
  bytes received so far, the total and ``master_sync_perc`` (unknown with a diskless
  sync: Redis prints total 0 or -1, a negative "left" and 0.00 %). **Stalled**: no
  byte for ``sync_stalled_after`` (10 s, ``master_sync_last_io_seconds_ago``) is
  critical: a stuck sync otherwise reads as one progressing until Redis drops it at
  repl-timeout and starts over. Once every byte is in (``loading:1``, or read =
  total) the replica is loading the RDB: no byte is awaited, so it is never
  "stalled" however long the load takes.
- **A replica that accepts writes** (``slave_read_only:0``, key "read_only"): warning;
  what clients write there exists nowhere else and is lost at the next full sync.
- **Not in the master's replicas list** (``link/elsewhere``) while the replica says its
  link is up: the master lists no replica at all, or the replica's replication id differs from the
  master's: warning, the replica follows another server (wrong address, an old
  master after a failover).
- **The replica's Redis is a master** (``link/master``; ``role:master``): warning, not replicating
  (while a Redis Sentinel's failover settles, within its ``failover-timeout``, the old
  master back and not yet made a replica is the ``roles`` check's event instead).
  The pair's roles follow the servers (the ``roles`` check), so a Redis failover that
  moved with the rest of the pair is no finding here; when the primary's Redis is a
  replica at the same time, Redis moved and another layer (MySQL, DRBD) did not: a
  half-done switchover, which the roles finding explains.

On the replica (key "lag"): **offset lag** = the master's ``master_repl_offset``
minus the offset the replica last acknowledged (the master's ``slaveN`` line; with
several replicas listed, the one whose offset is nearest the replica's own).
Warning when it is above ``lag_warning_bytes`` (1 MiB) in each tick of the last
``lag_window`` (5 s, at least ``lag_min_samples``, 2, ticks) and growing; critical
when it also exceeds the master's ``repl_backlog_size``: a link drop now can only be
healed by a full resync.

On the primary (key "full_resync"): **a full resync**, seen as ``sync_full``
rising (RedisRates.full_syncs, counted over ``resync_hold_s``, 60 s, so the
finding stays up long enough to read) or a replica in ``wait_bgsave``/``send_bulk``
/ syncing now. A full resync costs the master a fork and an RDB transfer: the
title gives the last fork's block time (``latest_fork_usec``) and the master's
memory. Warning; critical when the master's used_memory is above
``fork_memory_critical_pct`` (50 %) of its host's RAM, because copy-on-write during
the RDB child can need up to the data set again. A field note (Redis 2.6.5, which had
no partial resync) saw it: every reconnect of the replica was a full sync, and on
16 GB hosts holding 80-90 million keys at ~85 % memory the write-up concludes
that a replica (re)connecting "seriously affects the master's performance".

What to do: for a link down, read the replica's redis.log (auth, address,
``repl-timeout``) and the master's health; for full resyncs, raise
``repl-backlog-size`` to cover (write rate x the longest outage you expect), find
why the link drops, and keep the master's memory well under half the host's RAM.
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import NamedTuple

from pydantic import AliasChoices, Field

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Tick,
    Window,
    failover_busy,
    fmt,
    fmt_byte_rate,
    fmt_bytes,
    numbers,
    source_ok,
)

from ._redis_link import SYNCING, link, our_entry

MIB = 1024 * 1024


class Limits(Thresholds):
    open_after: Seconds = 2.0
    """Seconds (s) the condition must hold, tick after tick, before the finding opens
    (2 s: a link state is unambiguous)."""
    lag_warning_bytes: int = MIB
    """Bytes of offset lag above which (held over lag_window, growing) it is a warning."""
    lag_window: Seconds = Field(default=5.0, gt=0,
                                validation_alias=AliasChoices("lag_window", "lag_ticks"))
    """Seconds (s) the lag must stay above lag_warning_bytes, growing. ``lag_ticks``, its
    name before durations, is read as seconds."""
    lag_min_samples: int = Field(default=2, ge=2)
    """Ticks the lag must be read in at least, on top of ``lag_window`` ("growing" needs
    two)."""
    resync_hold_s: float = 60.0
    """Seconds a full resync stays reported after it happened."""
    fork_memory_critical_pct: float = 50.0
    """Master used_memory, percent of its host's RAM, above which a full resync is critical."""
    sync_stalled_after: Seconds = 10.0
    """Seconds (s) without a byte of a running full sync (master_sync_last_io_seconds_ago)
    after which it is stalled, not progressing: critical. Redis itself drops the sync
    after repl-timeout (60 s) and starts over."""


def _lag_at(tk: Tick) -> int | None:
    """The replica's offset lag in one tick, as the master lists it (None: unknown)."""
    p, r = tk.primary, tk.replica
    if not source_ok(p, "redis"):
        return None
    e = our_entry(p.redis, r.redis if source_ok(r, "redis") else None)
    return p.rates.redis.replica_lag_bytes.get(e.addr) if e is not None else None


def lag(w: Window, t: Limits) -> Observation | None:
    last = _lag_at(w.last)
    if last is None or last < t.lag_warning_bytes:
        return None  # the last tick alone settles it (the usual case): no walk back
    span = w.span(t.lag_window, t.lag_min_samples)
    series: list[int] = []
    backlog: int | None = None
    for tk in w.tail(span):
        v = _lag_at(tk)
        if v is None:
            return None
        series.append(v)
        backlog = tk.primary.redis.repl_backlog_size
    if len(series) < span or min(series) < t.lag_warning_bytes or series[-1] <= series[0]:
        return None
    now = series[-1]
    dt = w.last.wall - w.tail(span)[0].wall
    rate = (now - series[0]) / dt if dt > 0 else None
    crit = backlog is not None and now > backlog
    return Observation.trusted(
        key="lag", node="replica", severity=Severity.CRITICAL if crit else Severity.WARNING,
        title=(f"replica {fmt_bytes(now)} behind the master, growing "
               f"{fmt_byte_rate(rate)}"
               + (f" (backlog {fmt_bytes(backlog)})" if backlog else "")),
        numbers=numbers(lag_bytes=now, growth_bytes_per_s=rate, repl_backlog_bytes=backlog),
        cause="the replica acknowledges less than the master writes: a slow or saturated "
              "link, or a replica busy (swapping, a slow disk with AOF, big commands)."
              + (" The lag exceeds the backlog: a link drop now forces a full resync."
                 if crit else ""),
        next_step="Compare the master's net out bytes/s with the link speed; look at the "
                  "replica's CPU, swap and disk.")


NO_SYNCS = (0, 0)
"""_syncs of the usual tick, always this one object: slicing or counting a window of it
reads no tick's memory."""


def _syncs(node: NodeTick) -> tuple[int, int] | None:
    """(full syncs, partial syncs refused) the master served since its previous tick."""
    if not source_ok(node, "redis"):
        return None
    rates = node.rates.redis
    if rates.full_syncs is not None:
        syncs = rates.full_syncs, rates.partial_syncs_err or 0
        return NO_SYNCS if syncs == NO_SYNCS else syncs
    if rates.reset == "restart":  # a new master: its counters start from 0
        return node.redis.counters.get("sync_full", 0), 0
    return NO_SYNCS


_wall = attrgetter("wall")


def _syncing(p: NodeTick, r: NodeTick) -> tuple[list[str], bool]:
    """(the replicas the master lists in a full sync now, whether a full sync runs now:
    the master lists one, or the replica says so); the master's Redis read."""
    now = [e.addr for e in p.redis.replicas if e.state in SYNCING]
    return now, bool(now) or (source_ok(r, "redis") and bool(r.redis.sync_in_progress))


def _full_sync_age(w: Window) -> float | None:
    """Seconds from the newest tick of the window whose master served a full sync to
    the last tick (None: no such tick). Precisely: the least age of that tick and of every
    tick before it, which is its own age since walls only grow; with a wall that went
    back, still a bound: ``start_within(s)`` only returns a tick at most ``s`` old, so a
    slice from it reaches the full sync only if some tick up to it is that young."""
    col = w.series("primary", _syncs)
    n, idle = len(col), col.count(NO_SYNCS)
    if idle == n or idle + col.count(None) == n:
        return None  # the usual window: not one sync in it (C loops, no tick read)
    newest = next((k for k in range(n - 1, -1, -1)
                   if (s := col[k]) is not None and s[0]), None)
    if newest is None:
        return None  # only partial resyncs refused
    ticks = w.ticks
    youngest: float = max(map(_wall, ticks[:newest + 1]))  # (attrgetter: a C call a tick)
    return ticks[-1].wall - youngest


def full_resync(w: Window, t: Limits) -> Observation | None:
    last = w.last
    p, r = last.primary, last.replica
    if not source_ok(p, "redis"):
        return None
    count, refused = 0, 0
    held = w.series("primary", _syncs)[w.start_within(t.resync_hold_s):]
    if held.count(None) + held.count(NO_SYNCS) != len(held):  # else nothing to add up
        for syncs in held:
            if syncs is not None:
                count += syncs[0]
                refused += syncs[1]
    pr = p.redis
    now, syncing = _syncing(p, r)
    if count == 0 and not syncing:
        return None
    fork_ms = None if pr.latest_fork_usec is None else pr.latest_fork_usec / 1000
    mem_pct = (100.0 * pr.used_memory / pr.total_system_memory
               if pr.used_memory and pr.total_system_memory else None)
    crit = mem_pct is not None and mem_pct >= t.fork_memory_critical_pct
    what = (f"{count} full resync(s) in the last {fmt(t.resync_hold_s)} s" if count
            else "full resync in progress")
    cause = ("A full resync costs the master a fork and an RDB transfer: the replica "
             "reconnected and could not continue from the backlog (repl-backlog-size "
             f"{fmt_bytes(pr.repl_backlog_size)} too small for the writes missed while the "
             "link was down), or it lost its replication state (restart without "
             "persistence, REPLICAOF NO ONE, a master with a new replid).")
    if refused:
        cause += f" The master refused {refused} partial resync(s) (sync_partial_err)."
    if crit:
        cause += (f" The master holds {fmt(mem_pct)} % of its host's RAM: copy-on-write "
                  f"during the RDB child can push it into swap.")
    return Observation.trusted(
        key="full_resync", node="primary", severity=Severity.CRITICAL if crit else Severity.WARNING,
        title=(f"{what}: " + (f"last fork blocked the master {fmt(fork_ms, 1)} ms, "
                              if fork_ms is not None else "")
               + f"master holds {fmt_bytes(pr.used_memory)} ({fmt(mem_pct)} % of RAM)"),
        numbers=numbers(full_syncs=count, partial_syncs_refused=refused,
                        syncing_replicas=", ".join(now) or None,
                        latest_fork_ms=fork_ms, used_memory_bytes=pr.used_memory,
                        used_memory_pct_of_ram=mem_pct, sync_full_total=pr.counters.get(
                            "sync_full"), repl_backlog_bytes=pr.repl_backlog_size),
        cause=cause,
        next_step="Find why the link dropped (replica's redis.log); raise repl-backlog-size "
                  "to cover write rate x the longest outage; watch the master's memory and "
                  "latency while the RDB child runs.")


def writable(r: NodeTick) -> Observation | None:
    """A replica that takes writes (``replica-read-only no``): what clients write there
    exists nowhere else and is lost at the next full sync."""
    rs = r.redis
    if not source_ok(r, "redis") or rs.role != "replica" or rs.replica_read_only is not False:
        return None
    return Observation.trusted(
        key="read_only", node="replica", severity=Severity.WARNING,
        title="Redis replica accepts writes (replica-read-only no)",
        numbers=numbers(replica_read_only=False),
        cause="replica-read-only was turned off (by hand, or a config meant for a "
              "primary): a client writing here diverges from the master silently.",
        next_step="CONFIG SET replica-read-only yes (and in redis.conf) unless an "
                  "application really writes there; find who writes (MONITOR, INFO "
                  "commandstats).")


_DEFAULTS = Limits()
"""``measure``'s thresholds for ``link``: it asks whether the link finding is there, which
no threshold decides."""


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    there: int
    """1 when a finding is there whatever the thresholds (the link's state, a writable
    replica, a full sync running now), else 0."""
    lag_bytes: int | None
    """The last tick's offset lag, bytes, as is."""
    since_full_sync_s: int | None
    """The seconds since the newest full sync served in the window, rounded down to
    whole seconds (math.floor, ~0.1 us a call, not ``round_down``, ~0.5 us)."""


def measure(w: Window) -> Gauges:
    last = w.last
    p, r = last.primary, last.replica
    master_ok = source_ok(p, "redis")
    busy = failover_busy(last.sentinel, last.wall) if r.redis.role == "master" else ""
    there = (link(p, r, last.wall, _DEFAULTS.sync_stalled_after, sentinel_busy=busy)
             is not None or writable(r) is not None or (master_ok and _syncing(p, r)[1]))
    lag_now = _lag_at(last)
    age = _full_sync_age(w) if master_ok else None
    return Gauges(1 if there else 0, lag_now, None if age is None else math.floor(age))


def quiet(g: Gauges, t: Limits) -> bool:
    """Nothing there whatever the thresholds (the link finding is there in every state it names:
    ``sync_stalled_after`` only makes it critical; a writable replica, a sync running now),
    the last tick's lag under ``lag_warning_bytes`` (every tick of ``lag_window`` must be
    above it, the last one too) and no full sync within ``resync_hold_s`` (the sum of the
    full syncs over it is not 0 only if one is in it; ``fork_memory_critical_pct`` is the
    severity)."""
    lag_now, age = g.lag_bytes, g.since_full_sync_s
    return (g.there == 0 and (lag_now is None or lag_now < t.lag_warning_bytes)
            and (age is None or age > t.resync_hold_s))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    r = w.node("replica")
    busy = failover_busy(w.last.sentinel, w.last.wall) if r.redis.role == "master" else ""
    found = [full_resync(w, t),
             link(w.node("primary"), r, w.last.wall, t.sync_stalled_after, sentinel_busy=busy),
             lag(w, t), writable(w.node("replica"))]
    return [o for o in found if o is not None]


EXPLAINS: tuple[Explains, ...] = (
    Explains("redis_replication", "other",
             "a link that broke longer than the backlog covers comes back with a full resync "
             "(the replica's full sync is the master's full resync, seen from the replica)",
             cause_key="link/*", effect_key="full_resync"),
    Explains("redis_replication", "same",
             "a link that broke comes back with a full sync when the master's backlog no "
             "longer holds what the replica missed (its own finding, not a rename)",
             before_s=0.0, cause_key="link/down", effect_key="link/sync"),
    Explains("redis_backlog_headroom", "other",
             "a full sync's writes pile up in the master's output buffer",
             cause_key="full_resync", effect_key="output_buffer"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="redis_replication", title="Redis replication", needs=("redis",),
              thresholds=Limits, evaluate=evaluate, window=300.0, explains=EXPLAINS,
              reads=("redis", "redis.counters", "rates.redis"),
              gate=Gate(measure, quiet, gauges=Gauges),
              service="redis")
