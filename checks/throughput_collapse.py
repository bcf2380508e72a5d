"""Throughput collapse: Redis ops/s or MySQL QPS falls sharply while clients stay.

Reads, per node, Redis ops/s (Δtotal_commands_processed) and MySQL QPS
(ΔQuestions) over the window, with the clients connected (Redis
connected_clients, MySQL Threads_connected). The baseline is the median rate of
the earlier ticks of the window, counting only ticks with at least
``min_baseline_per_s`` of load (ticks without rates, first tick or counter reset,
are skipped); it needs ``min_baseline_ticks`` of them, so an idle server, or one
just started, is never judged.

When the last tick's rate is below ``warning_ratio`` (0.3) of the baseline it is
a warning, below ``critical_ratio`` (0.1) critical; but only while the clients are
still there (at least ``clients_kept_ratio`` of their baseline median): when the
clients left, the load went away and nothing is wrong with the server. A Redis
replica whose master collapsed at the same time is not judged: its commands come
from the master, whose finding says it all. Nor is a node that was the service's
primary in the baseline and is not now (a switchover, or Sentinel failing Redis over
alone): its clients went to the new primary.

Clients that stay connected but get far fewer requests done are blocked: a global
or metadata lock (FLUSH TABLES WITH READ LOCK from a backup, an ALTER waiting for
a long transaction), row locks, commits waiting for a semi-sync replica that does
not acknowledge, or a server starved by swapping or a saturated disk. The finding
names the hints the same tick carries: Threads_running, InnoDB row-lock waits,
semi-sync wait sessions, swap and major faults, disk utilisation and iowait,
Redis RSS below used_memory, a fork in progress, and, for Redis, MySQL QPS on the
same node falling in the same tick (the shared clients are stuck on MySQL).

Field notes: a Redis master past its host's memory ceiling went from 73.5k inserts/s
to 6.8k/s with the same 50 clients (9 % of the baseline: critical).

Next step: MySQL: SHOW PROCESSLIST (states "Waiting for global read lock",
"Waiting for table metadata lock", "Waiting for semi-sync ACK"), SHOW ENGINE
INNODB STATUS; Redis: SLOWLOG GET, LATENCY LATEST; both: the host's swap and disks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import median
from typing import cast

from replmon.check import (
    GATE_LEVELS,
    Check,
    Explains,
    Gate,
    LevelGauges,
    NodeTick,
    Number,
    Observation,
    Role,
    Severity,
    Thresholds,
    Window,
    baseline_drop,
    fmt,
    numbers,
    quiet_by_level,
    round_down,
    round_up,
    source_ok,
)

Getter = Callable[[NodeTick], float | None]

SOURCES: dict[str, tuple[str, Getter, Getter]] = {
    # key: (label, rate, clients gauge)
    "redis": ("Redis ops/s", lambda n: n.rates.redis.ops_per_s,
              lambda n: n.redis.connected_clients),
    "mysql": ("MySQL QPS", lambda n: n.rates.mysql.qps,
              lambda n: n.mysql.gauges.get("Threads_connected")),
}


class Limits(Thresholds):
    min_baseline_per_s: float = 100.0
    """Ops/s (or QPS) a tick needs to count toward the baseline."""
    min_baseline_ticks: int = 3
    """Loaded ticks the baseline needs; fewer and the node is not judged."""
    warning_ratio: float = 0.3
    """Rate now below this fraction of the baseline: warning."""
    critical_ratio: float = 0.1
    """Below this fraction: critical."""
    clients_kept_ratio: float = 0.7
    """Clients now must be at least this fraction of their baseline median for the drop
    to count (fewer: the load went away)."""


def drop(w: Window, role: Role, rate: Getter, t: Limits
         ) -> tuple[float, float, list[int]] | None:
    """(baseline, now, indexes of the baseline ticks) when the last tick's rate is
    below warning_ratio of the median of the earlier loaded ticks."""
    return baseline_drop(w.series(role, rate), min_rate=t.min_baseline_per_s,
                         min_ticks=t.min_baseline_ticks, ratio=t.warning_ratio)


LEVELS = GATE_LEVELS
"""Rates (/s) above which the gate gives the lowest "now / earlier peak" of a series (one
gauge each): an idle source's rate jitters around a few per second (0 now after 3 a
second ago is a 100 % fall) below min_baseline_per_s, so the lowest fall of all series
alone would keep the gate loud wherever one source is idle."""


def _peak_and_now(values: Sequence[float | None]) -> tuple[float, float] | None:
    """(the largest earlier rate, the rate now) of a series; None without either."""
    now = values[-1] if values else None
    if now is None or len(values) < 2:
        return None
    earlier = values[:-1]
    try:
        peak = max(cast("Sequence[float]", earlier))
    except TypeError:  # a tick without a rate (max of one None gives None)
        peak = None
    if peak is None:
        got = [v for v in earlier if v is not None]
        return (max(got), now) if got else None
    return peak, now


def measure(w: Window) -> LevelGauges:
    """The largest earlier rate of a series judged (``top``), then for each of LEVELS the
    lowest rate now / largest earlier rate of a series whose largest earlier rate is at
    least that, rounded down a hair more (``lowest_from_*``).
    A series is one source of one node, read at the last tick, as ``evaluate`` takes
    them; one whose earlier rates are all 0 is left out (``quiet`` is never True where
    it counts)."""
    top = 0.0
    lows: list[float | None] = [None] * len(LEVELS)
    for role in ("primary", "replica"):
        node = w.node(role)
        for kind, (_, rate, _) in SOURCES.items():
            if not source_ok(node, kind):
                continue
            got = _peak_and_now(w.series(role, rate))
            if got is None or not got[0] > 0:
                continue
            peak, now = got
            fall = now / peak
            if peak > top:
                top = peak
            for i, level in enumerate(LEVELS):
                low = lows[i]
                if peak >= level and (low is None or fall < low):
                    lows[i] = fall
    # 1e-9 below: ``quiet`` compares the fall with the ratio, the check the rate now with
    # the ratio times the baseline: a float product could land a hair above a quotient
    out: list[float | None] = [round_up(top)]
    last = rounded = None
    for low in lows:  # round_down once for a run of equal ones (one series' often): ~0.5 us
        if low is not None and low != last:
            last, rounded = low, round_down(low * (1 - 1e-9))
        out.append(None if low is None else rounded)
    return LevelGauges._make(out)


def quiet(g: LevelGauges, t: Limits) -> bool:
    """A series is reported only when the rate now is below ``warning_ratio`` times the
    median of its earlier rates of at least ``min_baseline_per_s`` (``critical_ratio``
    sets the severity alone; ``min_baseline_ticks`` and the clients only keep more
    quiet, and are not gauged). That median is at most the largest earlier rate, which
    must then be at least ``min_baseline_per_s``. Quiet when no series has such a rate
    (the largest below the limit), or when the lowest fall among the series whose
    largest earlier rate reaches the highest of LEVELS not above ``min_baseline_per_s``
    is at least ``warning_ratio``: every series judged is among them, and rates are at
    least 0 (a ratio of 0 or less is never reached from a positive baseline). Never
    quiet for a ``min_baseline_per_s`` below 1 that the largest rate reaches (series
    at 0 are left out of the gauges: they count only when it is 0 or less), nor for a
    NaN limit."""
    return quiet_by_level(g, t.min_baseline_per_s, t.warning_ratio)


def hints(node: NodeTick, kind: str) -> tuple[list[str], dict[str, Number]]:
    """Likely causes the same tick shows, as phrases and numbers."""
    out: list[str] = []
    nums: dict[str, Number] = {}
    h = node.rates.host
    if source_ok(node, "host"):
        swap = (h.swap_in_pages_per_s or 0.0) + (h.swap_out_pages_per_s or 0.0)
        if swap >= 10 or (h.major_faults_per_s or 0.0) >= 50:
            out.append(f"the host swaps ({fmt(swap)} pages/s, "
                       f"{fmt(h.major_faults_per_s)} major faults/s)")
            nums.update(swap_pages_per_s=round(swap, 1), major_faults_per_s=h.major_faults_per_s)
        if (h.disk_max_util_pct or 0.0) >= 90 or (h.cpu_iowait_pct or 0.0) >= 20:
            out.append(f"a disk is saturated (busiest {fmt(h.disk_max_util_pct)} % busy, "
                       f"iowait {fmt(h.cpu_iowait_pct)} %)")
            nums.update(disk_max_util_pct=h.disk_max_util_pct, cpu_iowait_pct=h.cpu_iowait_pct)
    if kind == "mysql":
        g = node.mysql.gauges
        running = g.get("Threads_running")
        waits = g.get("Innodb_row_lock_current_waits")
        semi = g.get("Rpl_semi_sync_master_wait_sessions",
                     g.get("Rpl_semi_sync_source_wait_sessions"))
        if semi:
            out.append(f"{fmt(semi)} sessions wait for a semi-sync ACK (a hung replica)")
            nums["semi_sync_wait_sessions"] = semi
        if waits:
            out.append(f"{fmt(waits)} row-lock waits")
            nums["row_lock_waits"] = waits
        if running is not None and running >= 2:
            # the monitor's own SHOW STATUS is one of them
            out.append(f"{fmt(running)} threads running but few statements finish: a lock "
                       f"(FLUSH TABLES WITH READ LOCK, a metadata lock) or I/O")
            nums["threads_running"] = running
    else:
        s = node.redis
        if s.used_memory and s.used_memory_rss and s.used_memory_rss < s.used_memory:
            out.append("Redis RSS is below used_memory (part of it is swapped out)")
        if s.rdb_bgsave_in_progress or s.aof_rewrite_in_progress:
            out.append("a fork (BGSAVE, AOF rewrite or a full sync) is running")
    return out, nums


def _role_moved(w: Window, role: Role, kind: str, idx: list[int]) -> bool:
    """The node was ``kind``'s primary in the baseline and is not now: the clients went
    to the new primary (a Sentinel failover of Redis alone, a switchover), so its own
    rate fell with the role, not with the service."""
    roles = w.last.roles
    lr = None if roles is None else roles.layer(kind)
    now = w.last.service_role(w.last.primary if role == "primary" else w.last.replica, kind)
    if now == "primary" and (lr is None or lr.state == "direction"):
        return False  # (mid-change, both masters: the roles check's event says it)
    return any(t.service_role(getattr(t, role), kind) == "primary"
               for t in (w.ticks[i] for i in idx))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        node = w.node(role)
        for kind, (label, rate, clients) in SOURCES.items():
            if not source_ok(node, kind):
                continue
            d = drop(w, role, rate, t)
            if d is None:
                continue
            before, now, idx = d
            if kind == "redis" and node.redis.role == "replica":
                other: Role = "replica" if role == "primary" else "primary"
                if source_ok(w.node(other), "redis") and drop(w, other, rate, t) is not None:
                    continue  # the replica only follows its master's drop
            if _role_moved(w, role, kind, idx):
                continue  # its load moved with the service's primary: a failover
            c_now = clients(node)
            c_hist = [c for i in idx if (c := clients(w.node(role, len(w) - 1 - i))) is not None]
            if c_now is None or not c_hist:
                continue
            c_before = median(c_hist)
            if c_now < t.clients_kept_ratio * c_before:
                continue  # the clients left: the load went away
            ratio = now / before
            found, nums = hints(node, kind)
            if kind == "redis" and source_ok(node, "mysql") and drop(
                    w, role, SOURCES["mysql"][1], t) is not None:
                found.append("MySQL QPS on this node fell in the same tick: the clients may "
                             "be stuck on MySQL")
            cause = ("Clients stay connected but get far fewer requests done: they are "
                     "blocked or the server is starved")
            cause += (": " + "; ".join(found) + "." if found else
                      " (a global or metadata lock, row locks, a semi-sync commit waiting "
                      "for a replica, swapping, a saturated disk).")
            out.append(Observation.trusted(
                key=kind, node=role,
                severity=Severity.CRITICAL if ratio < t.critical_ratio else Severity.WARNING,
                title=(f"{label} {fmt(before)} -> {fmt(now)} ({100 * ratio:.0f} % of "
                       f"baseline) with {fmt(c_now)} clients connected"),
                numbers=numbers(before_per_s=before, now_per_s=now, ratio_pct=100 * ratio,
                                baseline_ticks=len(idx), clients_before=c_before,
                                clients_now=c_now, **nums),
                cause=cause,
                next_step=("SHOW PROCESSLIST (look for 'Waiting for global read lock', "
                           "'Waiting for table metadata lock', 'Waiting for semi-sync ACK') "
                           "and SHOW ENGINE INNODB STATUS; check the host's swap and disks."
                           if kind == "mysql" else
                           "SLOWLOG GET 10 and LATENCY LATEST on the server; check the host's "
                           "swap and disks, and what the clients wait on."),
            ))
    return out


EXPLAINS: tuple[Explains, ...] = ()
"""It explains no other finding: it is a consequence or stands alone."""


CHECK = Check(id="throughput_collapse", title="Throughput collapse", needs=("mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=60.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=LevelGauges))
