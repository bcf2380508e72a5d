"""Disk saturation: a node waits on its disks (iowait, slow requests, erratic IOPS).

Reads, per node, from ``/proc/stat`` and ``/proc/diskstats`` rates: the CPU time
spent in iowait, and for every whole disk its average wait per request (``await``,
queueing included, like iostat), its utilisation (time with a request in flight)
and its read + write IOPS over the window. Stacked devices (dm-*, md*, drbd*, as
the host source marks them, and bcache* by name) are skipped when the node has a
real disk: their I/O is the real disks' I/O, counted once. (A drbd device's await
also holds the network round trip: see link_saturation and latency_bound.)

Three signs, each a finding:

* **iowait** (key "iowait"): ``cpu_iowait_pct`` >= ``iowait_pct`` (20 %) for
  ``open_after`` seconds (3 s). Field notes: a primary showed ``wai`` 47-59 % in dstat while
  writing 13-21 MB/s during sysbench prepare; the replica showed 0 %. iowait is idle
  time with I/O outstanding: a strong sign when high, but a busy CPU hides it.
* **slow requests** (key = disk name): ``await_ms`` >= ``await_ms`` (50 ms) while
  ``util_pct`` >= ``util_pct`` (90 %): the disk is busy all the time and requests
  queue. Critical from ``critical_await_ms`` (500 ms, Ceph's "slow ops" mark in the
  field notes) with at least ``min_iops`` (5) requests/s, busy or not. Field notes: fio randrw
  16k with 30 jobs at depth 1 got 468 IOPS without bcache, so requests waited
  30 / 468 s = 64 ms; with bcache writeback 1,243 IOPS, 24 ms.
* **erratic IOPS** (same key as the disk): over the last ``cv_window`` (10 s, and at
  least ``cv_min_samples``, 5, ticks: at 5 s that is 25 s) the disk's IOPS have a
  coefficient of variation (stdev / mean) above ``max_iops_cv`` (0.5) and swing: at
  least ``min_swings`` (4) tick-to-tick changes larger than half the mean (a load that
  starts or stops makes one or two, so it is not "erratic"), with a mean of at least
  ``cv_min_iops`` (50)/s, on a disk busy at least ``cv_min_util_pct`` (50 %) of the
  time on average (bursty flushes on an idle disk are not a problem). Field notes: once
  the bcache writeback cache is full, flushing and new writes share the HDD and IOPS
  "jump up and down". It needs ``cv_window`` of history, so it flags later than the
  rest. At intervals above 6 s the 30 s window holds fewer than ``cv_min_samples``
  ticks and this test is not made.

For an SSD or a RAID, 100 % util means "always something in flight", not "full";
await is the better judge there, which is why util alone never fires.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from statistics import fmean, pstdev
from typing import NamedTuple, cast

from pydantic import AliasChoices, Field

from replmon.check import (
    Check,
    DiskRates,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Role,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    numbers,
    round_up,
    source_ok,
)

_BCACHE = re.compile(r"bcache\d+")
"""Stacked too (on a backing HDD and a cache SSD), though the host source does not mark it."""


class Limits(Thresholds):
    iowait_pct: float = 20.0
    """Percent of CPU time in iowait from which the node warns."""
    await_ms: float = 50.0
    """Average ms per request from which a busy disk warns."""
    util_pct: float = 90.0
    """Percent busy a disk must be for the await warning."""
    critical_await_ms: float = 500.0
    """Average ms per request that is critical (slow ops), busy or not."""
    min_iops: float = 5.0
    """Requests/s below which await is not judged (a handful of slow requests is noise)."""
    cv_window: Seconds = Field(default=10.0, gt=0,
                               validation_alias=AliasChoices("cv_window", "cv_ticks"))
    """Seconds (s) of IOPS the erratic test looks at (every tick in it must have a rate).
    ``cv_ticks``, its name before durations, is read as seconds."""
    cv_min_samples: int = Field(default=5, ge=3)
    """Ticks the erratic test needs at least, on top of ``cv_window`` (a spread of two
    samples says nothing): at 5 s the test looks at 25 s."""
    max_iops_cv: float = 0.5
    """Coefficient of variation (stdev / mean of IOPS) above which IOPS may be erratic."""
    min_swings: int = 4
    """Tick-to-tick IOPS changes larger than half the mean needed within ``cv_window``."""
    cv_min_iops: float = 50.0
    """Mean IOPS below which erratic IOPS are not judged (too little load)."""
    cv_min_util_pct: float = 50.0
    """Mean utilisation (%) over ``cv_window`` below which erratic IOPS are not judged: an
    idle-ish disk with bursty flushes (InnoDB, binlog fsync) swings without anyone waiting.
    On the healthy lab, 76 IOPS at low util swung with CV 0.91 (a false alarm before this)."""


def _iops(d: DiskRates | None) -> float | None:
    if d is None or d.read_iops is None or d.write_iops is None:
        return None
    return d.read_iops + d.write_iops


def _util(d: DiskRates | None) -> float | None:
    return None if d is None else d.util_pct


def _disks(node: NodeTick) -> list[str]:
    """Disks to judge: real ones; stacked ones only on a node that has no real disk."""
    raw = node.host.disks
    real = [n for n, c in raw.items()
            if not (c.stacked or (n.startswith("bcache") and _BCACHE.fullmatch(n)))]
    return sorted(real or raw)


def _erratic(w: Window, role: Role, disk: str, t: Limits) -> tuple[float, int, float] | None:
    """(cv, swings, mean IOPS) when the disk's IOPS are erratic."""
    span = w.span(t.cv_window, t.cv_min_samples)
    xs = w.series(role, lambda n: _iops(n.rates.host.disks.get(disk)), span)
    if len(xs) < span or None in xs:
        return None
    vals = cast("list[float]", xs)  # no None in it
    mean = fmean(vals)
    if mean < t.cv_min_iops:
        return None
    utils = w.series(role, lambda n: _util(n.rates.host.disks.get(disk)), span)
    known = [u for u in utils if u is not None]
    if not known or fmean(known) < t.cv_min_util_pct:
        return None
    cv = pstdev(vals) / mean
    swings = sum(abs(b - a) > mean / 2 for a, b in zip(vals, vals[1:], strict=False))
    return (cv, swings, mean) if cv > t.max_iops_cv and swings >= t.min_swings else None


def _disk(w: Window, role: Role, name: str, t: Limits, wai: float | None) -> Observation | None:
    d = w.node(role).rates.host.disks.get(name)
    if d is None:
        return None
    iops, aw, util = _iops(d), d.await_ms, d.util_pct
    slow = aw is not None and iops is not None and iops >= t.min_iops
    crit = slow and aw is not None and aw >= t.critical_await_ms
    busy = (slow and aw is not None and aw >= t.await_ms
            and util is not None and util >= t.util_pct)
    jumpy = _erratic(w, role, name, t)
    if not (crit or busy or jumpy):
        return None
    parts, causes = [], []
    if crit or busy:
        parts.append(f"{name} await {fmt(aw)} ms at {fmt(util)} % busy, {fmt(iops)} IOPS")
        causes.append("more I/O than the disk serves: requests queue"
                      + (" past 500 ms (slow ops)" if crit else ""))
    if jumpy:
        cv, _, mean = jumpy
        parts.append(("IOPS" if parts else f"{name} IOPS")
                     + f" unstable: mean {fmt(mean)}, CV {cv:.2f}: writeback cache full?")
        causes.append("IOPS swing tick to tick under steady load: a write-back cache "
                      "(bcache, RAID controller, SSD SLC) full and flushing, or a noisy neighbour")
    return Observation.trusted(
        key=name, node=role,
        severity=Severity.CRITICAL if crit else Severity.WARNING,
        title="; ".join(parts),
        numbers=numbers(await_ms=aw, util_pct=util, iops=iops,
                        queue=d.queue, iowait_pct=wai,
                        iops_cv=jumpy[0] if jumpy else None,
                        iops_swings=jumpy[1] if jumpy else None,
                        iops_mean=jumpy[2] if jumpy else None),
        cause="; ".join(causes) + ". Every synchronous write (commit, fsync, DRBD) waits for it.",
        next_step=(f"Run iostat -x 1 {name} to watch r_await/w_await and aqu-sz; find the "
                   f"writer (iotop, pidstat -d); check the cache mode and dirty state "
                   f"(/sys/block/*/bcache/state, dirty_data) and the disk's health (smartctl)."),
    )


def _top(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return max(got) if got else None


_NONE = -math.inf
"""What ``_top_iops``/``_top_util`` give for a node without a value: the engine keeps
their columns from tick to tick, and a column of floats takes C's ``max``."""


def _top_iops(n: NodeTick) -> float:
    """The largest IOPS of any disk of the node at its tick (not only the judged ones:
    the erratic test reads a disk's older ticks whatever they were); -inf without one."""
    return max([v for d in n.rates.host.disks.values() if (v := _iops(d)) is not None],
               default=_NONE)


def _top_util(n: NodeTick) -> float:
    return max([d.util_pct for d in n.rates.host.disks.values() if d.util_pct is not None],
               default=_NONE)


def _window_top(w: Window, get: Callable[[NodeTick], float]) -> float | None:
    """The largest value of ``get`` over the window, both nodes; None without one."""
    top = max(max(w.series("primary", get), default=_NONE),
              max(w.series("replica", get), default=_NONE))
    return None if top == _NONE else top


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position): both nodes,
    rounded up, None where no node says."""

    iowait_pct: float | None
    """The worst iowait, % of CPU time, this tick."""
    await_ms: float | None
    """The worst await of a disk with IOPS this tick, ms."""
    window_iops: float | None
    """The largest IOPS of any disk over the window."""
    window_util_pct: float | None
    """The largest util % of any disk over the window."""


def measure(w: Window) -> Gauges:
    wai: list[float | None] = []
    aw: list[float | None] = []
    for role in ("primary", "replica"):
        node = w.node(role)
        if not source_ok(node, "host"):
            continue
        h = node.rates.host
        wai.append(h.cpu_iowait_pct)
        aw.extend(d.await_ms for n in _disks(node) if (d := h.disks.get(n)) is not None
                  and _iops(d) is not None)
    return Gauges(round_up(_top(wai)), round_up(_top(aw)),
                  round_up(_window_top(w, _top_iops)), round_up(_window_top(w, _top_util)))


def quiet(g: Gauges, t: Limits) -> bool:
    """No iowait at the limit, no disk slow enough to be busy or critical (whatever its
    IOPS and util), and no disk's IOPS or util high enough over the window for the
    erratic test (a mean is at most the largest value)."""
    wai, aw, iops, util = g.iowait_pct, g.await_ms, g.window_iops, g.window_util_pct
    return ((wai is None or wai < t.iowait_pct)
            and (aw is None or aw < min(t.await_ms, t.critical_await_ms))
            and (iops is None or iops < t.cv_min_iops or util is None
                 or util < t.cv_min_util_pct))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        node = w.node(role)
        if not source_ok(node, "host"):
            continue
        h = node.rates.host
        wai = h.cpu_iowait_pct
        if wai is not None and wai >= t.iowait_pct:
            busiest = max(_disks(node), default=None,
                          key=lambda n: h.disks[n].util_pct or 0.0 if n in h.disks else 0.0)
            bd = h.disks.get(busiest) if busiest else None
            extra = (f" ({busiest} await {fmt(bd.await_ms)} ms, {fmt(bd.util_pct)} % busy)"
                     if busiest and bd is not None and bd.util_pct is not None else "")
            drbd_c = source_ok(node, "drbd") and any(
                c.protocol == "C" for r in node.drbd.resources for c in r.connections)
            out.append(Observation.trusted(
                key="iowait", node=role, severity=Severity.WARNING,
                title=f"iowait {wai:.0f} % of CPU time{extra}",
                numbers=numbers(iowait_pct=wai, disk=busiest,
                                await_ms=bd.await_ms if bd else None,
                                util_pct=bd.util_pct if bd else None),
                cause=("CPUs sit idle waiting for I/O: the disks (or what is behind them) "
                       "cannot keep up with the writes"
                       + ("; with DRBD protocol C a write also waits for the peer, so a slow "
                          "link shows here too." if drbd_c else ".")),
                next_step=("Look at each disk's await and util (iostat -x 1) and at who "
                           "writes (iotop); on DRBD, compare with the link (link_saturation)."),
            ))
        for name in _disks(node):
            o = _disk(w, role, name, t, wai)
            if o is not None:
                out.append(o)
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("applier_progress", "same", "an applier waiting on a saturated disk falls behind"),
    Explains("mysql_replication", "same", "an applier waiting on a saturated disk falls behind"),
    Explains("drbd_congestion", "either", "DRBD's writes wait on the saturated disk"),
    Explains("throughput_collapse", "same", "statements wait on the saturated disk"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="disk_saturation", title="Disk saturation", needs=("host",),
              thresholds=Limits, evaluate=evaluate, window=30.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
