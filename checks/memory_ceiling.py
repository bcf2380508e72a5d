"""Memory ceiling: a host swapping, Redis at maxmemory or without one, evictions.

Reads, per node: the host's paging rates (swap-in/out pages/s from pswpin/pswpout,
major faults/s from pgmajfault), MemAvailable as a percent of RAM and swap in use;
Redis's used_memory, used_memory_rss, maxmemory, maxmemory_policy,
total_system_memory and evicted keys/s; and, for the collapse, the node's Redis
ops/s and MySQL QPS over the window.

Four observations per node:

- ``paging``: the host swaps (swap-in + swap-out pages/s at or above
  ``swap_pages_per_s``, or major faults/s at or above ``major_faults_per_s``) while
  MemAvailable is below ``low_available_pct`` of RAM. Critical from
  ``critical_swap_in_pages_per_s`` swapped in or ``critical_major_faults_per_s``.
  Paging with plenty of memory available is not judged (a lazy swap-in of old
  pages), nor is a host whose MemAvailable is unknown (kernel < 3.14).
- ``redis_memory`` with maxmemory set: used_memory at ``maxmemory_warning_pct`` (90)
  of maxmemory is a warning, at ``maxmemory_critical_pct`` (98) critical, with the
  policy: under ``noeviction`` writes then fail with OOM errors, under ``allkeys-*``
  Redis drops keys, under ``volatile-*`` it drops keys with a TTL and fails writes
  once none is left.
- ``redis_memory`` without maxmemory (0, or not reported): Redis's used_memory (or
  its RSS, whichever is larger) at ``system_memory_warning_pct`` (80) of the host's
  RAM (total_system_memory, else the host's MemTotal) is a warning: nothing stops
  it from growing until the host swaps, and a fork (BGSAVE, a replica's full sync)
  needs copy-on-write headroom on top.
- ``evictions``: Redis evicted keys in the last interval: info, a warning from
  ``evictions_warning_per_s``, with the rate and the policy.

When the node's Redis ops/s (else its MySQL QPS) in the last tick is below
``collapse_ratio`` (0.3) of the median of the earlier ticks of the window (ticks
with at least ``min_baseline_per_s`` of load, ``min_baseline_ticks`` of them at
least), the ``paging`` and ``redis_memory`` observations say so ("Redis ops/s
73,584 -> 6,778") and a warning becomes critical: the memory problem is now an
outage.

Field notes: a Redis master with no maxmemory on a 16 GB host, data set growing from
70 M to 95 M keys. Up to ~85 % of RAM the insert rate held at ~73.5k/s with no
page faults and no disk reads; past the ceiling, 81 major faults/s, 1,986 kB/s of
disk reads (swap-ins: the master had no persistence), CPU from 94 % to 10 % of a
core and inserts at 6.8k/s. Swapping does not show in the databases' own numbers
(Redis hit rate, InnoDB Hit%): only the host's paging counters and, for Redis,
used_memory_rss falling below used_memory reveal it.

What to do: find what grew (``ps -eo pid,rss,comm --sort=-rss``, ``grep VmSwap
/proc/<pid>/status``); give Redis a maxmemory well below RAM (leave room for a
fork) and a policy that fits its role; shrink innodb_buffer_pool_size; add RAM or
move load off the host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Role,
    Severity,
    Thresholds,
    Window,
    baseline_drop,
    fmt,
    fmt_bytes,
    numbers,
    round_down,
    round_up,
    source_ok,
)


class Limits(Thresholds):
    low_available_pct: float = 10.0
    """Percent of RAM available (MemAvailable) below which paging counts as swapping."""
    swap_pages_per_s: float = 10.0
    """Swap-in + swap-out pages/s from which the host is swapping (warning)."""
    major_faults_per_s: float = 50.0
    """Major page faults/s from which the host is swapping (warning)."""
    critical_swap_in_pages_per_s: float = 256.0
    """Pages/s swapped in (1 MiB/s with 4 KiB pages) that make it critical."""
    critical_major_faults_per_s: float = 500.0
    """Major faults/s that make it critical (node-mixin's NodeMemoryMajorPagesFaults)."""
    maxmemory_warning_pct: float = 90.0
    """Redis used_memory as a percent of maxmemory from which it warns."""
    maxmemory_critical_pct: float = 98.0
    """Percent of maxmemory from which it is critical (Redis is at its ceiling)."""
    system_memory_warning_pct: float = 80.0
    """Without maxmemory: Redis memory as a percent of the host's RAM from which it warns."""
    evictions_warning_per_s: float = 100.0
    """Evicted keys/s from which evictions are a warning rather than info."""
    collapse_ratio: float = 0.3
    """Throughput now below this fraction of the window's baseline counts as a collapse."""
    min_baseline_per_s: float = 100.0
    """Ops/s (or QPS) a tick needs to count toward the baseline (an idle server has none)."""
    min_baseline_ticks: int = 3
    """Loaded ticks the baseline needs before a collapse can be told."""


def size(b: float | None) -> str:
    """Bytes for titles: 17179869184 -> '16 GiB' (``fmt_bytes``, as every view)."""
    return fmt_bytes(b)


THROUGHPUT: tuple[tuple[str, Callable[[NodeTick], float | None]], ...] = (
    ("Redis ops/s", lambda n: n.rates.redis.ops_per_s),
    ("MySQL QPS", lambda n: n.rates.mysql.qps),
)


def collapse(w: Window, role: Role, t: Limits) -> tuple[str, float, float] | None:
    """(what, before, now) when the node's throughput fell below collapse_ratio of the
    median of the earlier loaded ticks of the window; None otherwise."""
    for label, get in THROUGHPUT:
        fell = baseline_drop(w.series(role, get), min_rate=t.min_baseline_per_s,
                             min_ticks=t.min_baseline_ticks, ratio=t.collapse_ratio)
        if fell is not None:
            return label, fell[0], fell[1]
    return None


def escalate(sev: Severity, fell: tuple[str, float, float] | None) -> Severity:
    return Severity.CRITICAL if fell is not None else sev


def fell_text(fell: tuple[str, float, float] | None) -> str:
    return "" if fell is None else f"; {fell[0]} {fmt(fell[1])} -> {fmt(fell[2])}"


def fell_numbers(fell: tuple[str, float, float] | None) -> dict[str, float | str | None]:
    if fell is None:
        return {}
    return {"throughput": fell[0], "throughput_before_per_s": round(fell[1], 1),
            "throughput_now_per_s": round(fell[2], 1)}


def _paging(node: NodeTick) -> tuple[float, float, float] | None:
    """(MemAvailable % of RAM, swap-in + swap-out pages/s, major faults/s) of a node
    whose paging can be judged; None when it cannot: host not read, MemAvailable
    unknown, no paging rates yet (first tick, reboot)."""
    h = node.rates.host
    avail = h.mem_available_pct
    if avail is None or not source_ok(node, "host"):
        return None
    si, so, mf = h.swap_in_pages_per_s, h.swap_out_pages_per_s, h.major_faults_per_s
    if si is None and so is None and mf is None:
        return None
    return avail, (si or 0.0) + (so or 0.0), mf or 0.0


def paging(node: NodeTick, t: Limits, fell: tuple[str, float, float] | None
           ) -> Observation | None:
    judged = _paging(node)
    if judged is None:
        return None
    avail, swap, faults = judged
    if avail >= t.low_available_pct or (swap < t.swap_pages_per_s
                                        and faults < t.major_faults_per_s):
        return None
    h = node.rates.host
    si, so, mf = h.swap_in_pages_per_s, h.swap_out_pages_per_s, h.major_faults_per_s
    hard = (si or 0.0) >= t.critical_swap_in_pages_per_s or (
        mf or 0.0) >= t.critical_major_faults_per_s
    used = h.swap_used_bytes
    title = (f"Swapping: {fmt(si)} pages/s in, {fmt(so)} out, {fmt(mf)} major faults/s, "
             f"{avail:.1f} % of RAM available")
    if used:
        title += f", {size(used)} swap used"
    if h.swap_total_bytes == 0:
        cause = ("RAM is exhausted and there is no swap: the kernel drops file-backed pages "
                 "(binaries, mapped files) and reads them back on the next touch "
                 "(thrashing), and the OOM killer is next")
    else:
        cause = ("RAM is exhausted: the kernel pushes process pages out to swap and every "
                 "touch of a swapped page waits for the disk; the databases' own hit "
                 "ratios do not show it")
    if fell is not None:
        cause += f"; {fell[0]} fell to {100 * fell[2] / fell[1]:.0f} % of its baseline with it"
    return Observation.trusted(
        key="paging", node=node.role,
        severity=escalate(Severity.CRITICAL if hard else Severity.WARNING, fell),
        title=title + fell_text(fell),
        numbers=numbers(swap_in_pages_per_s=si, swap_out_pages_per_s=so,
                        major_faults_per_s=mf, mem_available_pct=avail,
                        swap_used_bytes=used, swap_total_bytes=h.swap_total_bytes,
                        **fell_numbers(fell)),
        cause=cause + ".",
        next_step=("Find what grew: ps -eo pid,rss,comm --sort=-rss | head; grep VmSwap "
                   "/proc/<pid>/status. Give Redis a maxmemory below RAM, shrink "
                   "innodb_buffer_pool_size, or move load off the host."),
    )


def policy_effect(policy: str) -> str:
    if policy == "noeviction":
        return "under noeviction, writes fail with OOM errors at the ceiling"
    if policy.startswith("allkeys"):
        return (f"under {policy}, Redis evicts keys to stay under it: fine for a cache, "
                f"data loss for a store")
    if policy.startswith("volatile"):
        return (f"under {policy}, only keys with a TTL are evicted; with none left, "
                f"writes fail with OOM errors")
    return f"policy {policy}"


def _redis_pct(node: NodeTick) -> tuple[bool, float] | None:
    """(maxmemory set, Redis's memory in percent of it, else of the host's RAM); None
    without Redis's used_memory or, without maxmemory, the RAM."""
    s = node.redis
    used = s.used_memory
    if used is None or not source_ok(node, "redis"):
        return None
    if s.maxmemory:
        return True, 100.0 * used / s.maxmemory
    ram = s.total_system_memory or (node.host.mem.total if node.host.mem else None)
    if not ram:
        return None
    return False, 100.0 * max(used, s.used_memory_rss or 0) / ram


def redis_memory(node: NodeTick, t: Limits, fell: tuple[str, float, float] | None
                 ) -> Observation | None:
    judged = _redis_pct(node)
    if judged is None:
        return None
    of_max, pct = judged
    if pct < (t.maxmemory_warning_pct if of_max else t.system_memory_warning_pct):
        return None
    s = node.redis
    used = s.used_memory
    assert used is not None  # _redis_pct has it
    policy = s.maxmemory_policy or "?"
    rss_note = ""
    if s.used_memory_rss is not None and s.used_memory_rss < used:
        rss_note = (f"; RSS {size(s.used_memory_rss)} is below used_memory: part of Redis "
                    f"is already swapped out")
    if of_max:
        sev = Severity.CRITICAL if pct >= t.maxmemory_critical_pct else Severity.WARNING
        return Observation.trusted(
            key="redis_memory", node=node.role, severity=escalate(sev, fell),
            title=(f"Redis used_memory {size(used)} of maxmemory {size(s.maxmemory)} "
                   f"({pct:.0f} %), policy {policy}{fell_text(fell)}"),
            numbers=numbers(used_memory_bytes=used, maxmemory_bytes=s.maxmemory,
                            used_pct=pct, maxmemory_policy=policy,
                            used_memory_rss_bytes=s.used_memory_rss, **fell_numbers(fell)),
            cause=f"Redis is at its memory ceiling: {policy_effect(policy)}{rss_note}.",
            next_step=("Check what grows (redis-cli --bigkeys, INFO keyspace, key TTLs); "
                       "raise maxmemory if the host has room (CONFIG SET maxmemory, and in "
                       "redis.conf), or trim the data set; watch errorstat_OOM."),
        )
    ram = s.total_system_memory or (node.host.mem.total if node.host.mem else None)
    mem = max(used, s.used_memory_rss or 0)
    limit = "no maxmemory" if s.maxmemory == 0 else "maxmemory not reported"
    return Observation.trusted(
        key="redis_memory", node=node.role, severity=escalate(Severity.WARNING, fell),
        title=(f"Redis uses {size(mem)}, {pct:.0f} % of the host's {size(ram)} RAM, "
               f"{limit}: it will swap{fell_text(fell)}"),
        numbers=numbers(used_memory_bytes=used, used_memory_rss_bytes=s.used_memory_rss,
                        system_memory_bytes=ram, used_pct_of_ram=pct, maxmemory_bytes=s.maxmemory,
                        **fell_numbers(fell)),
        cause=("Without maxmemory Redis grows until the host swaps (measured on one host: "
               "past ~85 % of RAM, inserts fell from 73.5k/s to 6.8k/s), and a fork for "
               "BGSAVE or a "
               f"replica's full sync needs copy-on-write headroom on top{rss_note}."),
        next_step=("Set maxmemory well below RAM (about 75 %, less with persistence) and a "
                   "maxmemory-policy that fits (CONFIG SET, then redis.conf); check the host's "
                   "swap and major faults."),
    )


def _evicting(node: NodeTick) -> bool:
    """Redis evicted keys in the last interval."""
    rate = node.rates.redis.evicted_per_s
    return rate is not None and rate > 0 and source_ok(node, "redis")


def evictions(node: NodeTick, t: Limits) -> Observation | None:
    if not _evicting(node):
        return None
    rate = node.rates.redis.evicted_per_s
    assert rate is not None
    policy = node.redis.maxmemory_policy or "?"
    return Observation.trusted(
        key="evictions", node=node.role,
        severity=Severity.WARNING if rate >= t.evictions_warning_per_s else Severity.INFO,
        title=f"Redis evicts {fmt(rate, 1 if rate < 10 else 0)} keys/s (policy {policy})",
        numbers=numbers(evicted_per_s=rate, maxmemory_policy=policy,
                        maxmemory_bytes=node.redis.maxmemory,
                        used_memory_bytes=node.redis.used_memory),
        cause=(f"Redis is at maxmemory and drops keys under {policy}: what the application "
               f"wrote may be gone on the next read."),
        next_step=("If Redis is a cache, check the hit rate; if it is a store, raise maxmemory "
                   "or trim the data set. The replica follows the master's evictions."),
    )


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position): over both
    nodes, None where no node has it."""

    available_pct: float | None
    """The lowest MemAvailable % of a node whose paging can be judged, rounded down."""
    swap_pages_s: float | None
    """The largest swap pages/s of those, rounded up."""
    major_faults_s: float | None
    """The largest major faults/s of those, rounded up."""
    redis_of_maxmemory_pct: float | None
    """The largest Redis used_memory, % of maxmemory, rounded up."""
    redis_of_ram_pct: float | None
    """The largest Redis used_memory, % of RAM, of a Redis without maxmemory, rounded up."""
    evicting: float
    """1 when Redis evicts keys, else 0."""


def measure(w: Window) -> Gauges:
    avail = swap = faults = of_max = of_ram = None
    evicting = 0.0
    for role in ("primary", "replica"):
        node = w.node(role)
        p = _paging(node)
        if p is not None:
            avail = p[0] if avail is None else min(avail, p[0])
            swap = p[1] if swap is None else max(swap, p[1])
            faults = p[2] if faults is None else max(faults, p[2])
        r = _redis_pct(node)
        if r is not None and r[0]:
            of_max = r[1] if of_max is None else max(of_max, r[1])
        elif r is not None:
            of_ram = r[1] if of_ram is None else max(of_ram, r[1])
        if _evicting(node):
            evicting = 1.0
    return Gauges(round_down(avail), round_up(swap), round_up(faults), round_up(of_max),
                  round_up(of_ram), evicting)


def quiet(g: Gauges, t: Limits) -> bool:
    """No eviction (reported whatever the thresholds), no node paging (each node that
    pages has MemAvailable at least the lowest and pages at most the largest rates, so
    the lowest at or above ``low_available_pct``, or both largest rates below theirs,
    proves none), Redis below both warning percents. The critical thresholds, and a
    collapse (``collapse_ratio``, ``min_baseline_*``), change only how bad it is."""
    avail, swap, faults = g.available_pct, g.swap_pages_s, g.major_faults_s
    of_max, of_ram = g.redis_of_maxmemory_pct, g.redis_of_ram_pct
    return (g.evicting == 0
            and (avail is None or avail >= t.low_available_pct
                 or (swap is not None and swap < t.swap_pages_per_s
                     and faults is not None and faults < t.major_faults_per_s))
            and (of_max is None or of_max < t.maxmemory_warning_pct)
            and (of_ram is None or of_ram < t.system_memory_warning_pct))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        node = w.node(role)
        page, mem = paging(node, t, None), redis_memory(node, t, None)
        if page is not None or mem is not None:
            # a collapse changes what they say and how bad, never whether they are there:
            # look back at the throughput only for a node with a memory problem
            fell = collapse(w, role, t)
            if fell is not None:
                page, mem = paging(node, t, fell), redis_memory(node, t, fell)
        for o in (page, mem, evictions(node, t)):
            if o is not None:
                out.append(o)
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("memory_ceiling", "same",
             "Redis grown past the RAM pushes the host's pages out: it swaps",
             cause_key="redis_memory", effect_key="paging"),
    Explains("memory_ceiling", "same",
             "at maxmemory Redis evicts keys to make room for new writes",
             cause_key="redis_memory", effect_key="evictions"),
    Explains("memory_ceiling", "replica",
             "the replica holds its master's data set: it grows with it",
             cause_key="redis_memory", effect_key="redis_memory"),
    Explains("writes_refused", "same",
             "at maxmemory with noeviction Redis answers every write that needs memory "
             "with OOM", cause_key="redis_memory", effect_key="redis:oom"),
    Explains("throughput_collapse", "same",
             "a server whose memory is on swap waits on the disk for it",
             cause_key="paging"),
    Explains("throughput_collapse", "same",
             "Redis past the RAM swaps and forks slowly: its commands wait",
             cause_key="redis_memory"),
    Explains("latency_bound", "same",
             "a swapping host answers every round trip late",
             cause_key="paging"),
    Explains("disk_saturation", "same",
             "swap traffic fills the disk that holds the swap",
             cause_key="paging"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="memory_ceiling", title="Memory ceiling", needs=("host", "redis", "mysql"),
              thresholds=Limits, evaluate=evaluate, window=30.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
