"""What replmon knows about one host after one sample, and the rates between two samples.

``HostSample`` holds RAW kernel counters and gauges, read from /proc and /sys by
``replmon.sources.host_parse.build_host_sample`` and stamped by
``HostSource.sample()``. Every field has a default, so a failed sample is just
``HostSample(status=..., wall=..., mono=...)``. In an ok sample a field is None
(or a dict is empty) only when its file was missing or the kernel does not
print it (e.g. no /proc/pressure without CONFIG_PSI; ``oom_kill`` before 4.13).

``derive_host_rates(prev, cur)`` turns two samples into ``HostRates``: per-second
rates over the real (monotonic) time between them, plus the current gauges.
Units are in every field's docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from operator import attrgetter
from typing import Any, Literal, TypeVar

from replmon.model.base import SampleBase, Struct, struct
from replmon.model.rates import counter_delta, counter_rate, ratio


@struct
class CpuTimes(Struct):
    """The aggregate ``cpu`` line of /proc/stat: time summed over all CPUs since boot,
    in USER_HZ ticks (1/100 s on every mainstream Linux build)."""

    user: int = 0
    """Ticks running user code at normal priority (includes guest time)."""
    nice: int = 0
    """Ticks running niced (low-priority) user code."""
    system: int = 0
    """Ticks running kernel code on behalf of processes."""
    idle: int = 0
    """Ticks idle with no I/O outstanding."""
    iowait: int = 0
    """Ticks idle while some I/O was outstanding (may go down slightly; the kernel documents it)."""
    irq: int = 0
    """Ticks servicing hardware interrupts."""
    softirq: int = 0
    """Ticks servicing softirqs (network receive, block completion, timers)."""
    steal: int = 0
    """Ticks the hypervisor ran someone else while this VM wanted the CPU."""

    @property
    def total(self) -> int:
        """Ticks: the sum of the eight fields (guest time is already inside user)."""
        return (self.user + self.nice + self.system + self.idle + self.iowait
                + self.irq + self.softirq + self.steal)


@struct
class MemInfo(Struct):
    """Gauges from /proc/meminfo, converted from kB to bytes."""

    total: int = 0
    """Bytes of usable RAM (MemTotal)."""
    free: int | None = None
    """Bytes completely unused (MemFree). Small is normal: Linux uses spare RAM as cache."""
    available: int | None = None
    """Bytes the kernel estimates can be given to programs without swapping (MemAvailable,
    kernel 3.14+; None before). The right headroom figure."""
    buffers: int | None = None
    """Bytes of block-device buffers (Buffers)."""
    cached: int | None = None
    """Bytes of page cache (Cached; excludes SwapCached)."""
    swap_total: int | None = None
    """Bytes of swap space configured (SwapTotal; 0 = no swap)."""
    swap_free: int | None = None
    """Bytes of swap space unused (SwapFree)."""
    swap_cached: int | None = None
    """Bytes of pages that are both in RAM and in swap (SwapCached)."""
    dirty: int | None = None
    """Bytes waiting to be written back to disk (Dirty)."""


@struct
class VmStat(Struct):
    """Cumulative paging counters from /proc/vmstat (since boot). None when the kernel
    does not print the line (e.g. oom_kill before 4.13)."""

    pswpin: int | None = None
    """Pages read in from swap."""
    pswpout: int | None = None
    """Pages written out to swap."""
    pgfault: int | None = None
    """Page faults of any kind (most are minor: no I/O)."""
    pgmajfault: int | None = None
    """Major page faults: the page had to be read from disk or swap."""
    oom_kill: int | None = None
    """Processes killed by the OOM killer (kernel 4.13+)."""


@struct
class DiskCounters(Struct):
    """One whole block device from /proc/diskstats (counters since boot or attach)."""

    reads: int = 0
    """Read requests completed."""
    writes: int = 0
    """Write requests completed."""
    read_bytes: int = 0
    """Bytes read (diskstats sectors are always 512 bytes, whatever the hardware)."""
    write_bytes: int = 0
    """Bytes written."""
    read_ms: int = 0
    """Milliseconds spent on reads, summed over requests (overlapping requests add up)."""
    write_ms: int = 0
    """Milliseconds spent on writes, summed over requests."""
    io_ms: int = 0
    """Milliseconds during which the device had at least one request in flight (io_ticks)."""
    weighted_ms: int = 0
    """Milliseconds x requests in flight (time_in_queue); its rate is the average queue size."""
    in_flight: int = 0
    """Requests in flight right now (a gauge)."""
    stacked: bool = False
    """True for devices stacked on other disks (dm-*, md*, drbd*): listed, but left out of
    disk totals so the same I/O is not counted twice."""


@struct
class NicCounters(Struct):
    """One network interface from /proc/net/dev (counters since the interface appeared)."""

    rx_bytes: int = 0
    """Bytes received."""
    rx_packets: int = 0
    """Packets received."""
    rx_errors: int = 0
    """Receive errors."""
    rx_drops: int = 0
    """Received packets dropped (no buffer, unknown protocol...)."""
    tx_bytes: int = 0
    """Bytes sent."""
    tx_packets: int = 0
    """Packets sent."""
    tx_errors: int = 0
    """Transmit errors."""
    tx_drops: int = 0
    """Packets dropped on send."""
    speed_mbps: int | None = None
    """Link speed in Mb/s from /sys/class/net/<if>/speed; None when the driver does not
    know it (virtual interfaces, lo, -1, EINVAL, link down). Re-read about once a minute."""


@struct
class PsiLine(Struct):
    """One line ("some" or "full") of a /proc/pressure file."""

    avg10: float = 0.0
    """Percent of wall time stalled, averaged over the last 10 s."""
    avg60: float = 0.0
    """Percent of wall time stalled, averaged over the last 60 s."""
    avg300: float = 0.0
    """Percent of wall time stalled, averaged over the last 300 s."""
    total_us: int = 0
    """Microseconds stalled since boot (cumulative; take its rate)."""


@struct
class Psi(Struct):
    """Pressure stall information for one resource (kernel 4.20+ with PSI on)."""

    some: PsiLine = field(default_factory=PsiLine)
    """At least one runnable task was stalled on the resource."""
    full: PsiLine | None = None
    """All non-idle tasks were stalled at once (None where the kernel has no full line,
    e.g. /proc/pressure/cpu before 5.13)."""


@struct
class HostSample(SampleBase):
    """One reading of one Linux host's /proc and /sys."""

    hostname: str | None = None
    """The node's hostname (/proc/sys/kernel/hostname)."""
    btime: int | None = None
    """Epoch seconds of boot (/proc/stat btime). A change means the host rebooted."""
    ncpu: int | None = None
    """Online CPUs (the cpuN lines of /proc/stat)."""
    cpu: CpuTimes | None = None
    """Aggregate CPU time counters, USER_HZ ticks."""
    intr: int | None = None
    """Interrupts serviced since boot (all sources)."""
    ctxt: int | None = None
    """Context switches since boot."""
    procs_running: int | None = None
    """Runnable tasks right now (a gauge)."""
    procs_blocked: int | None = None
    """Tasks blocked on I/O right now (D state; a gauge)."""
    load1: float | None = None
    """1-minute load average (runnable + D-state tasks, exponentially averaged)."""
    load5: float | None = None
    """5-minute load average."""
    load15: float | None = None
    """15-minute load average."""
    mem: MemInfo | None = None
    """Memory and swap gauges, bytes."""
    vm: VmStat | None = None
    """Paging counters (swap in/out, faults, OOM kills)."""
    page_size: int = 4096
    """Bytes per page, used to turn pswpin/pswpout into bytes. /proc does not say; 4096 on
    x86-64 (arm64 kernels may use 16 or 64 KiB pages)."""
    disks: dict[str, DiskCounters] = field(default_factory=dict)
    """Whole block devices by kernel name ("vda", "nvme0n1", "dm-0"); partitions, loop, ram
    and zram devices are left out."""
    nics: dict[str, NicCounters] = field(default_factory=dict)
    """Network interfaces by name, all of them including lo (lo is left out of totals)."""
    psi_cpu: Psi | None = None
    """CPU pressure; None without /proc/pressure."""
    psi_memory: Psi | None = None
    """Memory pressure; None without /proc/pressure."""
    psi_io: Psi | None = None
    """I/O pressure; None without /proc/pressure."""
    peer: str | None = None
    """"host:port" of the other node's server this node times a TCP connect to (the
    primary measures its replica: the replication link's round trip)."""
    peer_rtt_ms: float | None = None
    """Milliseconds of one TCP connect from this node to ``peer`` (SYN -> SYN/ACK: one
    network round trip), measured on the node itself with bash's /dev/tcp and
    $EPOCHREALTIME; None when not measured, refused, or over the time limit."""



# --- rates -------------------------------------------------------------------------


@struct
class DiskRates(Struct):
    """One disk (or the total over non-stacked disks) between two samples."""

    read_bytes_per_s: float | None = None
    """Bytes/s read."""
    write_bytes_per_s: float | None = None
    """Bytes/s written."""
    read_iops: float | None = None
    """Read requests completed per second."""
    write_iops: float | None = None
    """Write requests completed per second."""
    await_ms: float | None = None
    """Milliseconds: average time per request, queueing included (Δ(read_ms + write_ms) /
    Δ(reads + writes), iostat's await without discards). None when no request completed."""
    util_pct: float | None = None
    """Percent of the interval the device was busy (Δio_ms / Δt, capped at 100). For an
    SSD or RAID, 100 % means "always something in flight", not "saturated". None in totals."""
    queue: float | None = None
    """Average requests in flight over the interval (Δweighted_ms / Δt_ms; iostat aqu-sz)."""
    in_flight: int | None = None
    """Requests in flight at the current sample (a gauge)."""


@struct
class NicRates(Struct):
    """One interface (or the total over all but lo) between two samples."""

    recv_bytes_per_s: float | None = None
    """Bytes/s received."""
    send_bytes_per_s: float | None = None
    """Bytes/s sent."""
    recv_packets_per_s: float | None = None
    """Packets/s received."""
    send_packets_per_s: float | None = None
    """Packets/s sent."""
    errors_per_s: float | None = None
    """Receive + transmit errors per second."""
    drops_per_s: float | None = None
    """Receive + transmit drops per second."""
    speed_mbps: int | None = None
    """Link speed, Mb/s, from the current sample; None when unknown (and in totals)."""
    util_pct: float | None = None
    """Percent of link speed used by the busier direction (links are full duplex):
    max(recv, send) x 8 / (speed x 10^6) x 100. None without a known speed."""


@struct
class HostRates(Struct):
    """What changed on a host between two HostSamples, per second of real elapsed time,
    plus the current sample's gauges.

    A rate is None when it cannot be trusted: no previous sample, time did not advance,
    the host rebooted in between (``reset``), or that counter went down. Gauges are filled
    whenever the current sample is ok, also on the first sample."""

    dt_s: float | None = None
    """Seconds between the two readings (monotonic clock); None without a usable pair."""
    reset: Literal["reboot"] | None = None
    """"reboot" when btime moved by more than 1 s (the kernel's btime may wobble by 1 s when
    the clock is slewed): every rate is then None."""

    # --- CPU: percent of all CPU time in the interval ------------------------------
    cpu_usr_pct: float | None = None
    """Percent user + nice (orzdba's usr). The five cpu_*_pct fields add up to 100: unlike
    orzdba, the total includes steal, so a VM with steal is not overstated."""
    cpu_sys_pct: float | None = None
    """Percent system + irq + softirq (orzdba's sys)."""
    cpu_idle_pct: float | None = None
    """Percent idle."""
    cpu_iowait_pct: float | None = None
    """Percent idle with I/O outstanding. None for an interval in which the kernel's iowait
    counter went down (a documented kernel quirk); the others are then computed as if it
    had not moved."""
    cpu_steal_pct: float | None = None
    """Percent stolen by the hypervisor."""
    interrupts_per_s: float | None = None
    """Interrupts/s (dstat's int)."""
    ctxt_per_s: float | None = None
    """Context switches/s (dstat's csw)."""

    # --- paging ---------------------------------------------------------------
    swap_in_pages_per_s: float | None = None
    """Pages/s read in from swap (orzdba's si; vmstat's si is in KiB/s instead)."""
    swap_out_pages_per_s: float | None = None
    """Pages/s written out to swap (orzdba's so)."""
    swap_in_bytes_per_s: float | None = None
    """Bytes/s read in from swap (pages x page_size)."""
    swap_out_bytes_per_s: float | None = None
    """Bytes/s written out to swap."""
    major_faults_per_s: float | None = None
    """Major page faults/s (each one waited for disk or swap)."""
    faults_per_s: float | None = None
    """Page faults/s of any kind."""
    oom_kills: int | None = None
    """Processes the OOM killer killed during the interval (a count, not a rate)."""

    # --- pressure stall: microseconds stalled per second (10^4 us/s = 1 %) -----------
    psi_cpu_some_us_per_s: float | None = None
    """us/s during which some runnable task waited for a CPU."""
    psi_cpu_full_us_per_s: float | None = None
    """us/s during which all non-idle tasks waited for a CPU (kernel 5.13+; ~0 system-wide)."""
    psi_memory_some_us_per_s: float | None = None
    """us/s during which some task stalled on memory (reclaim, swap-in, refaults)."""
    psi_memory_full_us_per_s: float | None = None
    """us/s during which all non-idle tasks stalled on memory at once: thrashing."""
    psi_io_some_us_per_s: float | None = None
    """us/s during which some task waited for I/O."""
    psi_io_full_us_per_s: float | None = None
    """us/s during which all non-idle tasks waited for I/O at once."""

    # --- disks and network ----------------------------------------------------
    disks: dict[str, DiskRates] = field(default_factory=dict)
    """Per whole disk, every device of the current sample (gauges only when no rate)."""
    disk_total: DiskRates = field(default_factory=DiskRates)
    """Sum over non-stacked disks present in both samples (dstat's dsk/total); util_pct
    and in_flight stay None (see disk_max_util_pct)."""
    disk_max_util_pct: float | None = None
    """util_pct of the busiest disk (stacked ones included)."""
    nics: dict[str, NicRates] = field(default_factory=dict)
    """Per interface, every interface of the current sample, lo included."""
    net_total: NicRates = field(default_factory=NicRates)
    """Sum over interfaces present in both samples, lo excluded (dstat's net/total)."""

    # --- gauges from the current sample ---------------------------------------------
    ncpu: int | None = None
    """Online CPUs (compare with the load average)."""
    load1: float | None = None
    """1-minute load average."""
    load5: float | None = None
    """5-minute load average."""
    load15: float | None = None
    """15-minute load average."""
    procs_blocked: int | None = None
    """Tasks in D state (usually waiting for disk) right now."""
    mem_total_bytes: int | None = None
    """Bytes of RAM."""
    mem_available_bytes: int | None = None
    """Bytes available to programs without swapping (MemAvailable)."""
    mem_available_pct: float | None = None
    """MemAvailable as a percent of MemTotal."""
    swap_total_bytes: int | None = None
    """Bytes of swap configured (0 = none)."""
    swap_used_bytes: int | None = None
    """Bytes of swap in use: SwapTotal - SwapFree."""


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
    return DiskRates(in_flight=d.in_flight)


def _gauge_nic(c: NicCounters) -> NicRates:
    return NicRates(speed_mbps=c.speed_mbps)


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
    reads + writes) increases."""
    rb, wb, r, w, io, wt, rms, wms = (
        c - p for c, p in zip(_disk_counters(cur), _disk_counters(prev), strict=True))
    return tuple(v if v >= 0 else None for v in (rb, wb, r, w, io, wt, rms + wms, r + w))


def _nic_deltas(prev: NicCounters, cur: NicCounters) -> Deltas:
    """(rx_bytes, tx_bytes, rx_packets, tx_packets, rx + tx errors, rx + tx drops)
    increases."""
    rb, tb, rp, tp, re, te, rd, td = (
        c - p for c, p in zip(_nic_counters(cur), _nic_counters(prev), strict=True))
    return tuple(v if v >= 0 else None for v in (rb, tb, rp, tp, re + te, rd + td))


def _total(per_device: Sequence[Deltas]) -> Deltas:
    return tuple(None if None in vals else sum(vals)
                 for vals in zip(*per_device, strict=True))


def _per_s(v: int | None, dt: float) -> float | None:
    return None if v is None else v / dt


def _disk_rates(d: Deltas, dt: float, one: DiskCounters | None = None) -> DiskRates:
    """A disk's rates from its deltas; ``one``: the disk itself, for the gauges (% busy,
    in flight) that a sum over disks does not have."""
    rb, wb, r, w, io, wt, ms, ios = d
    util = _per_s(io, dt) if one is not None else None
    queue = _per_s(wt, dt)
    return DiskRates.model_validate({  # (a dict validates faster than keywords)
        "read_bytes_per_s": _per_s(rb, dt), "write_bytes_per_s": _per_s(wb, dt),
        "read_iops": _per_s(r, dt), "write_iops": _per_s(w, dt),
        "await_ms": ratio(None if ms is None else float(ms),
                          None if ios is None else float(ios)),
        "util_pct": None if util is None else min(100.0, util / 10.0),  # ms/s -> %
        "queue": None if queue is None else queue / 1000.0,
        "in_flight": one.in_flight if one is not None else None,
    })


def _nic_rates(d: Deltas, dt: float, speed: int | None = None) -> NicRates:
    """A NIC's rates from its deltas (``speed``: its link speed, for % used)."""
    rb, tb, rp, tp, errors, drops = d
    recv, send = _per_s(rb, dt), _per_s(tb, dt)
    util = None
    if speed and recv is not None and send is not None:
        util = max(recv, send) * 8 / (speed * 1e6) * 100.0
    return NicRates.model_validate({
        "recv_bytes_per_s": recv, "send_bytes_per_s": send,
        "recv_packets_per_s": _per_s(rp, dt), "send_packets_per_s": _per_s(tp, dt),
        "errors_per_s": _per_s(errors, dt), "drops_per_s": _per_s(drops, dt),
        "speed_mbps": speed, "util_pct": util,
    })


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


def derive_host_rates(prev: HostSample | None, cur: HostSample) -> HostRates:
    """Rates between two consecutive samples of the same host (pure function).

    Divides by the real monotonic time between the readings. Gives gauges only
    (every rate None) without a usable previous sample or after a reboot; a single
    counter that went down gives None for the rates built on it."""
    if not cur.status.ok:
        return HostRates()
    if prev is None or not prev.status.ok or cur.mono - prev.mono <= 0:
        return HostRates.model_validate(_gauges(cur))
    dt = cur.mono - prev.mono
    if rebooted(prev, cur):
        return HostRates.model_validate({**_gauges(cur), "dt_s": dt, "reset": "reboot"})
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
        cur.nics, prev.nics, _nic_deltas, lambda d, nic: _nic_rates(d, dt, nic.speed_mbps),
        _gauge_nic, lambda name, _: name != "lo")
    if counted:
        values["net_total"] = _nic_rates(_total(counted), dt)
    return HostRates.model_validate(values)
