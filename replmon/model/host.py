"""What replmon knows about one host after one sample (``HostSample``), and the rates
between two samples (``HostRates``): the schema. The arithmetic is in host_rates.py.

``HostSample`` holds RAW kernel counters and gauges, read from /proc and /sys by
``replmon.sources.host_parse.build_host_sample`` and stamped by
``HostSource.sample()``. Every field has a default, so a failed sample is just
``HostSample(status=..., wall=..., mono=...)``. In an ok sample a field is None
(or a dict is empty) only when its file was missing or the kernel does not
print it (e.g. no /proc/pressure without CONFIG_PSI; ``oom_kill`` before 4.13).

``host_rates.derive_host_rates(prev, cur)`` turns two samples into ``HostRates``: per-second
rates over the real (monotonic) time between them, plus the current gauges.
Units are in every field's docstring.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal

from replmon.model.base import SampleBase, Struct, struct


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
    shaped_kbit: float | None = None
    """kbit/s (SI): the rate of a shaper that is the interface's root qdisc (``tc -j qdisc
    show``: tbf's rate, cake's bandwidth): what the link really carries when it is below
    the speed (a veth reads 10000 Mbit/s whatever shapes it). None: no such shaper, or
    tc not read. Re-read every few seconds (replmon.sources.host)."""
    shaper: str | None = None
    """That qdisc's kind ("tbf", "cake"); None without one."""
    routes: list[str] = field(default_factory=list)
    """The IPv4 destinations routed through it, as CIDR ("10.1.2.0/30", the default route
    "0.0.0.0/0"), from /proc/net/route (the main table: no local or loopback routes);
    empty when none or not read. Which NIC carries replication is the one that routes to
    the replication source's address (``replmon.model.nic_roles``)."""


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
    uptime_s: float | None = None
    """Seconds since boot (/proc/uptime, 10 ms steps), read in the same batch as the
    counters: the time between two readings as the node saw it (``derive_host_rates``)."""
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
    monitor_addr: str | None = None
    """The monitor's address as this node sees replmon's connection to it (over ssh: the
    node's $SSH_CONNECTION); None when read on this machine or not known. The NIC that
    routes to it is the monitoring link (``replmon.model.nic_roles``)."""
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
    shaped_kbit: float | None = None
    """kbit/s: the root shaper's rate from the current sample (``NicCounters.shaped_kbit``);
    None without one."""
    shaper: str | None = None
    """That shaper's qdisc kind ("tbf", "cake")."""
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
