"""Host rates: two ``HostSample`` readings -> ``HostRates`` (model/host.py holds both
records). Per-second rates over the real (monotonic) time between the samples; a counter
that went down (reboot, a NIC re-created) gives no rate, never a negative one.

The rates records are built with ``Struct.trusted`` (no validation), here as in
mysql_rates.py and redis.py: every value is a float this code has just divided, an int
it has subtracted, or a gauge copied from a sample's field of the same type
(tests/unit/model/test_trusted_records.py holds them to what validation gives on every
shipped session). A pair-tick's rates: 131 -> 115 µs (in-process, ABA)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, TypeVar

from replmon.model.host import (
    CpuTimes,
    DiskCounters,
    DiskRates,
    HostRates,
    HostSample,
    NicCounters,
    NicRates,
    VmStat,
)
from replmon.model.rates import counter_delta, counter_rate, ratio

_CPU_GROUPS: dict[str, tuple[str, ...]] = {
    "cpu_usr_pct": ("user", "nice"),
    "cpu_sys_pct": ("system", "irq", "softirq"),
    "cpu_idle_pct": ("idle",),
    "cpu_iowait_pct": ("iowait",),
    "cpu_steal_pct": ("steal",),
}


_VM_RATES: dict[str, str] = {
    "swap_in_pages_per_s": "pswpin",
    "swap_out_pages_per_s": "pswpout",
    "major_faults_per_s": "pgmajfault",
    "faults_per_s": "pgfault",
}


def rebooted(prev: HostSample, cur: HostSample) -> bool:
    """True when ``cur`` comes from a later boot than ``prev`` (btime moved by > 1 s)."""
    return prev.btime is not None and cur.btime is not None and abs(cur.btime - prev.btime) > 1


def _gauge_disk(d: DiskCounters) -> DiskRates:
    return DiskRates.trusted(in_flight=d.in_flight)


def _gauge_nic(c: NicCounters) -> NicRates:
    return NicRates.trusted(speed_mbps=c.speed_mbps, shaped_kbit=c.shaped_kbit, shaper=c.shaper)


def _gauges(cur: HostSample, devices: bool = True) -> dict[str, Any]:
    """The readings that need no previous sample (and, with ``devices``, each disk's and
    NIC's gauges alone)."""
    out: dict[str, Any] = {
        "ncpu": cur.ncpu, "load1": cur.load1, "load5": cur.load5, "load15": cur.load15,
        "procs_blocked": cur.procs_blocked,
    }
    m = cur.mem
    if m is not None:
        pct = ratio(m.available, m.total)
        out.update(
            mem_total_bytes=m.total, mem_available_bytes=m.available,
            mem_available_pct=None if pct is None else pct * 100.0,
            swap_total_bytes=m.swap_total,
            swap_used_bytes=None if m.swap_total is None or m.swap_free is None
            else max(0, m.swap_total - m.swap_free),
        )
    if devices:
        out["disks"] = {n: _gauge_disk(d) for n, d in cur.disks.items()}
        out["nics"] = {n: _gauge_nic(c) for n, c in cur.nics.items()}
    return out


# (The helpers below run for every CPU line, disk and NIC of every tick of a re-run:
# they read a record's counters with one attrgetter call and keep deltas in tuples.)
_CPU_FIELDS = tuple(CpuTimes.model_fields)
_cpu_times = attrgetter(*_CPU_FIELDS)
_CPU_INDEX = tuple((name, tuple(_CPU_FIELDS.index(f) for f in fields))
                   for name, fields in _CPU_GROUPS.items())


def _cpu_pcts(prev: CpuTimes, cur: CpuTimes) -> dict[str, float | None]:
    deltas = [c - p for c, p in zip(_cpu_times(cur), _cpu_times(prev), strict=True)]
    total = sum(max(0, d) for d in deltas)  # a counter that went down counts 0
    out: dict[str, float | None] = {}
    for name, idx in _CPU_INDEX:
        if total <= 0 or any(deltas[i] < 0 for i in idx):
            out[name] = None
        else:
            out[name] = 100.0 * sum(deltas[i] for i in idx) / total
    return out


Deltas = tuple[int | None, ...]
"""One device's counter increases (None: that one went down), in the order of
_disk_deltas or _nic_deltas; or the sum of those over several devices (None if any is)."""

_disk_counters = attrgetter("read_bytes", "write_bytes", "reads", "writes", "io_ms",
                            "weighted_ms", "read_ms", "write_ms")
_nic_counters = attrgetter("rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors",
                           "tx_errors", "rx_drops", "tx_drops")


def _disk_deltas(prev: DiskCounters, cur: DiskCounters) -> Deltas:
    """(read_bytes, write_bytes, reads, writes, io_ms, weighted_ms, read_ms + write_ms,
    reads + writes) increases. (Written out: a generator over zip() cost twice as much,
    for every disk of every tick of a re-run.)"""
    crb, cwb, cr, cw, cio, cwt, crms, cwms = _disk_counters(cur)
    prb, pwb, pr, pw, pio, pwt, prms, pwms = _disk_counters(prev)
    rb, wb, r, w, io, wt = crb - prb, cwb - pwb, cr - pr, cw - pw, cio - pio, cwt - pwt
    ms, ios = (crms - prms) + (cwms - pwms), r + w
    return (rb if rb >= 0 else None, wb if wb >= 0 else None, r if r >= 0 else None,
            w if w >= 0 else None, io if io >= 0 else None, wt if wt >= 0 else None,
            ms if ms >= 0 else None, ios if ios >= 0 else None)


def _nic_deltas(prev: NicCounters, cur: NicCounters) -> Deltas:
    """(rx_bytes, tx_bytes, rx_packets, tx_packets, rx + tx errors, rx + tx drops)
    increases (written out, as _disk_deltas)."""
    crb, ctb, crp, ctp, cre, cte, crd, ctd = _nic_counters(cur)
    prb, ptb, prp, ptp, pre, pte, prd, ptd = _nic_counters(prev)
    rb, tb, rp, tp = crb - prb, ctb - ptb, crp - prp, ctp - ptp
    errors, drops = (cre - pre) + (cte - pte), (crd - prd) + (ctd - ptd)
    return (rb if rb >= 0 else None, tb if tb >= 0 else None, rp if rp >= 0 else None,
            tp if tp >= 0 else None, errors if errors >= 0 else None,
            drops if drops >= 0 else None)


def _total(per_device: Sequence[Deltas]) -> Deltas:
    return tuple(None if None in vals else sum(vals)
                 for vals in zip(*per_device, strict=True))


def _per_s(v: int | None, dt: float) -> float | None:
    # no change is the one 0.0, not a new float each tick (a NIC's errors and drops)
    return None if v is None else v / dt if v else 0.0


def _disk_rates(d: Deltas, dt: float, one: DiskCounters | None = None) -> DiskRates:
    """A disk's rates from its deltas; ``one``: the disk itself, for the gauges (% busy,
    in flight) that a sum over disks does not have."""
    rb, wb, r, w, io, wt, ms, ios = d
    util = _per_s(io, dt) if one is not None else None
    queue = _per_s(wt, dt)
    return DiskRates.trusted(
        read_bytes_per_s=_per_s(rb, dt), write_bytes_per_s=_per_s(wb, dt),
        read_iops=_per_s(r, dt), write_iops=_per_s(w, dt),
        await_ms=ratio(None if ms is None else float(ms), None if ios is None else float(ios)),
        util_pct=None if util is None else min(100.0, util / 10.0),  # ms/s -> %
        queue=None if queue is None else queue / 1000.0,
        in_flight=one.in_flight if one is not None else None,
    )


def _nic_rates(d: Deltas, dt: float, speed: int | None = None,
               nic: NicCounters | None = None) -> NicRates:
    """A NIC's rates from its deltas (``speed``: its link speed, for % used; ``nic``: its
    counters, for its shaper)."""
    rb, tb, rp, tp, errors, drops = d
    recv, send = _per_s(rb, dt), _per_s(tb, dt)
    util = None
    if speed and recv is not None and send is not None:
        util = max(recv, send) * 8 / (speed * 1e6) * 100.0
    return NicRates.trusted(
        recv_bytes_per_s=recv, send_bytes_per_s=send,
        recv_packets_per_s=_per_s(rp, dt), send_packets_per_s=_per_s(tp, dt),
        errors_per_s=_per_s(errors, dt), drops_per_s=_per_s(drops, dt),
        speed_mbps=speed, util_pct=util,
        shaped_kbit=nic.shaped_kbit if nic is not None else None,
        shaper=nic.shaper if nic is not None else None,
    )


_NO_VM = VmStat()
D = TypeVar("D", DiskCounters, NicCounters)
R = TypeVar("R", DiskRates, NicRates)


def _per_device(cur: Mapping[str, D], prev: Mapping[str, D],
                deltas: Callable[[D, D], Deltas], rates: Callable[[Deltas, D], R],
                gauge: Callable[[D], R], in_total: Callable[[str, D], bool]
                ) -> tuple[dict[str, R], list[Deltas]]:
    """Rates of every device of ``cur`` (gauges only for one new since ``prev``), and the
    deltas of those ``in_total`` (for the disk or network total)."""
    out: dict[str, R] = {}
    counted: list[Deltas] = []
    for name, dev in cur.items():
        old = prev.get(name)
        if old is None:
            out[name] = gauge(dev)
            continue
        d = deltas(old, dev)
        out[name] = rates(d, dev)
        if in_total(name, dev):
            counted.append(d)
    return out, counted


NODE_CLOCK_SLACK_S = 0.05
"""How far the node's own time between two readings (/proc/uptime) may differ from the
time between the requests before the node's is taken (``derive_host_rates``)."""


def reading_dt(prev: HostSample, cur: HostSample) -> float:
    """Seconds between two readings: the time between the requests (monotonic, here),
    unless the node's own clock says otherwise by more than NODE_CLOCK_SLACK_S. Over ssh
    the files are read a round trip and a scheduling delay after the request, and that
    delay varies: on the two-host lab under load, a NIC held at 16,000 B/s by a shaper
    read 11,578-24,574 B/s tick after tick (issue #55's link_saturation flake), the bytes
    right, the seconds wrong. /proc/uptime's 10 ms steps are too coarse where the two
    agree (a 0.2 s interval), so it is taken only where they do not."""
    dt = cur.mono - prev.mono
    if cur.uptime_s is not None and prev.uptime_s is not None:
        node = cur.uptime_s - prev.uptime_s
        if node > 0 and abs(node - dt) > NODE_CLOCK_SLACK_S:
            return node
    return dt


def derive_host_rates(prev: HostSample | None, cur: HostSample) -> HostRates:
    """Rates between two consecutive samples of the same host (pure function).

    Divides by the time between the readings (``reading_dt``). Gives gauges only
    (every rate None) without a usable previous sample or after a reboot; a single
    counter that went down gives None for the rates built on it."""
    if not cur.status.ok:
        return HostRates.trusted()
    if prev is None or not prev.status.ok or cur.mono - prev.mono <= 0:
        return HostRates.trusted(**_gauges(cur))
    dt = reading_dt(prev, cur)
    if rebooted(prev, cur):
        return HostRates.trusted(**_gauges(cur), dt_s=dt, reset="reboot")
    values = _gauges(cur, devices=False)
    values["dt_s"] = dt

    if prev.cpu is not None and cur.cpu is not None:
        values.update(_cpu_pcts(prev.cpu, cur.cpu))
    values["interrupts_per_s"] = counter_rate(prev.intr, cur.intr, dt)
    values["ctxt_per_s"] = counter_rate(prev.ctxt, cur.ctxt, dt)

    pv, cv = prev.vm or _NO_VM, cur.vm or _NO_VM
    for out, name in _VM_RATES.items():
        values[out] = counter_rate(getattr(pv, name), getattr(cv, name), dt)
    for unit in ("in", "out"):
        pages = values[f"swap_{unit}_pages_per_s"]
        values[f"swap_{unit}_bytes_per_s"] = None if pages is None else pages * cur.page_size
    oom = counter_delta(pv.oom_kill, cv.oom_kill)
    values["oom_kills"] = None if oom is None else int(oom)

    for res, p, c in (("cpu", prev.psi_cpu, cur.psi_cpu),
                      ("memory", prev.psi_memory, cur.psi_memory),
                      ("io", prev.psi_io, cur.psi_io)):
        if p is None or c is None:
            continue
        values[f"psi_{res}_some_us_per_s"] = counter_rate(p.some.total_us, c.some.total_us, dt)
        if p.full is not None and c.full is not None:
            values[f"psi_{res}_full_us_per_s"] = counter_rate(p.full.total_us, c.full.total_us, dt)

    disks, counted = _per_device(
        cur.disks, prev.disks, _disk_deltas, lambda d, disk: _disk_rates(d, dt, disk),
        _gauge_disk, lambda _, disk: not disk.stacked)
    values["disks"] = disks
    utils = [r.util_pct for r in disks.values() if r.util_pct is not None]
    values["disk_max_util_pct"] = max(utils) if utils else None
    if counted:
        values["disk_total"] = _disk_rates(_total(counted), dt)

    values["nics"], counted = _per_device(
        cur.nics, prev.nics, _nic_deltas, lambda d, nic: _nic_rates(d, dt, nic.speed_mbps, nic),
        _gauge_nic, lambda name, _: name != "lo")
    if counted:
        values["net_total"] = _nic_rates(_total(counted), dt)
    return HostRates.trusted(**values)
