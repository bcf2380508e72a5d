"""derive_host_rates on the real capture pair (tests/fixtures/host/a -> b, 1.6749701 s
apart under CPU, disk and loopback load) and on the constructed swapping pair;
the capture times in the fixtures README stand in for the monotonic clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.model.base import SourceState, SourceStatus
from replmon.model.host import CpuTimes, DiskCounters, DiskRates, HostRates, HostSample, NicRates
from replmon.model.host_rates import derive_host_rates
from replmon.sources.host_parse import build_host_sample

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "host"
T_A, T_B = 5327.130409911, 5328.805380011  # time.monotonic() of each capture
DT = 1.674970100
KB = 1024


def load(name: str, mono: float, **replace: str) -> HostSample:
    """A capture tree as a sample taken at ``mono``; ``replace`` swaps in another file
    (keyword = canonical path with / and . as _, e.g. proc_vmstat)."""
    root = FIXTURES / name
    files: dict[str, str | None] = {
        "/" + p.relative_to(root).as_posix(): p.read_text()
        for p in root.rglob("*") if p.is_file()
    }
    for key, file in replace.items():
        files["/" + key.replace("_", "/")] = (FIXTURES / file).read_text()
    return build_host_sample(files).model_copy(update={"mono": mono, "wall": mono})


@pytest.fixture(scope="module")
def a() -> HostSample:
    return load("a", T_A)


@pytest.fixture(scope="module")
def b() -> HostSample:
    return load("b", T_B)


def test_cpu_percentages_orzdba_convention_with_steal_in_the_total(
    a: HostSample, b: HostSample
) -> None:
    r = derive_host_rates(a, b)
    assert r.dt_s == pytest.approx(DT)
    assert r.reset is None
    # Δ user 147, nice 0, system 11, idle 138, iowait 13, irq 0, softirq 4, steal 35
    total = 147 + 0 + 11 + 138 + 13 + 0 + 4 + 35
    assert total == 348
    assert r.cpu_usr_pct == pytest.approx(100 * 147 / 348)  # 42.24
    assert r.cpu_sys_pct == pytest.approx(100 * (11 + 0 + 4) / 348)  # 4.31
    assert r.cpu_idle_pct == pytest.approx(100 * 138 / 348)  # 39.66
    assert r.cpu_iowait_pct == pytest.approx(100 * 13 / 348)  # 3.74
    assert r.cpu_steal_pct == pytest.approx(100 * 35 / 348)  # 10.06
    parts = (r.cpu_usr_pct, r.cpu_sys_pct, r.cpu_idle_pct, r.cpu_iowait_pct, r.cpu_steal_pct)
    assert sum(p or 0.0 for p in parts) == pytest.approx(100)
    assert r.interrupts_per_s == pytest.approx((1523350 - 1521134) / DT)  # 1323/s
    assert r.ctxt_per_s == pytest.approx((2504008 - 2502627) / DT)


def test_paging_and_pressure_from_the_capture(a: HostSample, b: HostSample) -> None:
    r = derive_host_rates(a, b)
    assert r.swap_in_pages_per_s == r.swap_out_pages_per_s == 0.0
    assert r.swap_in_bytes_per_s == 0.0
    assert r.faults_per_s == pytest.approx((6287205 - 6278672) / DT)
    assert r.major_faults_per_s == pytest.approx(1 / DT)
    assert r.oom_kills == 0
    assert r.psi_cpu_some_us_per_s == pytest.approx((21171573 - 21093286) / DT)  # ≈ 4.7 %
    assert r.psi_cpu_full_us_per_s == 0.0
    assert r.psi_io_some_us_per_s == pytest.approx((6272055 - 6216535) / DT)
    assert r.psi_io_full_us_per_s == pytest.approx((5608941 - 5569888) / DT)
    assert r.psi_memory_some_us_per_s == r.psi_memory_full_us_per_s == 0.0


def test_disk_rates_iostat_style(a: HostSample, b: HostSample) -> None:
    r = derive_host_rates(a, b)
    vda = r.disks["vda"]
    # dd wrote 48 MiB with O_DIRECT and read it back in 64 KiB requests
    assert vda.read_bytes_per_s == pytest.approx((2389050 - 2290562) * 512 / DT)
    assert vda.write_bytes_per_s == pytest.approx(48 * 2**20 / DT)
    assert vda.read_iops == pytest.approx((36855 - 36084) / DT)
    assert vda.write_iops == pytest.approx((113806 - 113710) / DT)
    assert vda.await_ms == pytest.approx(((7635 - 7519) + (30108 - 29973)) / (771 + 96))  # 0.29
    assert vda.util_pct == pytest.approx(100 * (14236 - 14096) / (DT * 1000))  # 8.36 %
    assert vda.queue == pytest.approx((40792 - 40524) / (DT * 1000))
    assert vda.in_flight == 0
    assert r.disk_total == vda.model_copy(update={"util_pct": None, "in_flight": None})
    assert r.disk_max_util_pct == vda.util_pct


def test_nic_rates_and_totals_leave_lo_out(a: HostSample, b: HostSample) -> None:
    r = derive_host_rates(a, b)
    assert list(r.nics) == ["lo", "ifb0", "ifb1", "eth0"]
    lo = r.nics["lo"]
    assert lo.recv_bytes_per_s == pytest.approx((417547911 - 397436321) / DT)  # 20 MB sent
    assert lo.send_bytes_per_s == lo.recv_bytes_per_s
    assert lo.recv_packets_per_s == pytest.approx((994405 - 993906) / DT)
    assert (lo.speed_mbps, lo.util_pct) == (None, None)
    assert r.net_total == NicRates(
        recv_bytes_per_s=0.0, send_bytes_per_s=0.0, recv_packets_per_s=0.0,
        send_packets_per_s=0.0, errors_per_s=0.0, drops_per_s=0.0,
    )


def test_gauges_come_from_the_current_sample(a: HostSample, b: HostSample) -> None:
    r = derive_host_rates(a, b)
    assert (r.ncpu, r.load1, r.load5, r.load15, r.procs_blocked) == (2, 0.03, 0.01, 0.03, 0)
    assert r.mem_total_bytes == 24684084 * KB
    assert r.mem_available_bytes == 23889100 * KB
    assert r.mem_available_pct == pytest.approx(100 * 23889100 / 24684084)
    assert (r.swap_total_bytes, r.swap_used_bytes) == (0, 0)


def test_link_utilisation_uses_the_busier_direction(a: HostSample, b: HostSample) -> None:
    half_gigabit = 0.5 * 125_000_000 * DT  # bytes in DT at 500 Mb/s
    eth0 = b.nics["eth0"]
    busy = b.model_copy(update={"nics": {**b.nics, "eth0": eth0.model_copy(update={
        "rx_bytes": eth0.rx_bytes + int(half_gigabit), "speed_mbps": 1000})}})
    r = derive_host_rates(a, busy)
    assert r.nics["eth0"].speed_mbps == 1000
    assert r.nics["eth0"].util_pct == pytest.approx(50.0, abs=1e-6)
    assert r.net_total.recv_bytes_per_s == pytest.approx(62_500_000, abs=1)
    assert (r.net_total.speed_mbps, r.net_total.util_pct) == (None, None)


def test_swapping_pair() -> None:
    swap = {"proc_meminfo": "swap/meminfo"}
    prev = load("a", 100.0, proc_vmstat="swap/vmstat_a", **swap)
    cur = load("a", 101.0, proc_vmstat="swap/vmstat_b", **swap)
    r = derive_host_rates(prev, cur)
    assert r.swap_in_pages_per_s == 84790 - 81234 == 3556
    assert r.swap_out_pages_per_s == 405119 - 402311
    assert r.swap_in_bytes_per_s == 3556 * 4096  # ≈ 14.6 MB/s
    assert r.swap_out_bytes_per_s == 2808 * 4096
    assert r.major_faults_per_s == 56702 - 52890
    assert r.faults_per_s == 6293514 - 6278672
    assert r.swap_total_bytes == 8388604 * KB
    assert r.swap_used_bytes == (8388604 - 6291452) * KB  # 2 GiB in swap
    assert r.mem_available_pct == pytest.approx(100 * 301204 / 24684084)  # 1.2 %


# --- no previous sample, reboots, counters that went down ----------------------------------


def test_first_sample_gives_gauges_only(b: HostSample) -> None:
    r = derive_host_rates(None, b)
    assert r.dt_s is None
    assert r.cpu_idle_pct is None
    assert r.ctxt_per_s is None
    assert r.load1 == 0.03
    assert r.mem_total_bytes == 24684084 * KB
    assert r.disks == {"vda": DiskRates(in_flight=0)}
    assert set(r.nics) == {"lo", "ifb0", "ifb1", "eth0"}
    assert r.disk_total == DiskRates()
    assert r.net_total == NicRates()


def test_time_not_advancing_gives_no_rates(a: HostSample, b: HostSample) -> None:
    r = derive_host_rates(a, b.model_copy(update={"mono": a.mono}))
    assert r.dt_s is None
    assert r.cpu_usr_pct is None
    assert r.load1 == 0.03


def test_failed_current_sample_gives_nothing(a: HostSample) -> None:
    failed = HostSample(status=SourceStatus(state=SourceState.TIMEOUT), mono=T_B)
    assert derive_host_rates(a, failed) == HostRates()


def test_reboot_changes_btime_and_gives_no_rates(a: HostSample) -> None:
    # the host rebooted 10 minutes ago: btime moved, counters restarted small
    rebooted = a.model_copy(update={
        "mono": T_A + 900, "btime": (a.btime or 0) + 3000, "ctxt": 5000, "intr": 4000,
        "cpu": CpuTimes(user=100, system=50, idle=100000),
    })
    r = derive_host_rates(a, rebooted)
    assert r.reset == "reboot"
    assert r.dt_s == pytest.approx(900)
    assert r.cpu_usr_pct is None
    assert r.ctxt_per_s is None
    assert r.interrupts_per_s is None
    assert r.disks["vda"] == DiskRates(in_flight=0)
    assert r.disk_total == DiskRates()
    assert r.psi_io_some_us_per_s is None
    assert r.mem_total_bytes == 24684084 * KB  # gauges still there


def test_btime_wobbling_by_one_second_is_not_a_reboot(a: HostSample, b: HostSample) -> None:
    r = derive_host_rates(a, b.model_copy(update={"btime": (b.btime or 0) + 1}))
    assert r.reset is None
    assert r.cpu_usr_pct is not None


def test_a_counter_that_went_down_gives_none_for_that_rate_only(
    a: HostSample, b: HostSample
) -> None:
    vda = b.disks["vda"].model_copy(update={"reads": 10})  # device re-attached
    cur = b.model_copy(update={"ctxt": 1, "disks": {"vda": vda}})
    r = derive_host_rates(a, cur)
    assert r.reset is None
    assert r.ctxt_per_s is None
    assert r.interrupts_per_s == pytest.approx(2216 / DT)
    assert r.disks["vda"].read_iops is None
    assert r.disks["vda"].await_ms is None
    assert r.disks["vda"].read_bytes_per_s == pytest.approx(98488 * 512 / DT)
    assert r.disk_total.read_iops is None
    assert not any(v is not None and v < 0 for v in r.model_dump().values()
                   if isinstance(v, float))


def test_iowait_going_down_leaves_the_other_cpu_percentages(
    a: HostSample, b: HostSample
) -> None:
    assert b.cpu is not None
    assert a.cpu is not None
    cpu = b.cpu.model_copy(update={"iowait": a.cpu.iowait - 2})
    r = derive_host_rates(a, b.model_copy(update={"cpu": cpu}))
    assert r.cpu_iowait_pct is None
    assert r.cpu_usr_pct == pytest.approx(100 * 147 / 335)  # total without iowait's -2
    assert r.cpu_idle_pct == pytest.approx(100 * 138 / 335)


def test_no_io_gives_no_await_and_new_disks_get_gauges(a: HostSample) -> None:
    later = a.model_copy(update={"mono": T_A + 1.0, "disks": {
        **a.disks, "dm-0": DiskCounters(reads=5, in_flight=1, stacked=True)}})
    r = derive_host_rates(a, later)
    vda = r.disks["vda"]
    assert vda.read_iops == 0.0
    assert vda.await_ms is None
    assert vda.util_pct == 0.0
    assert r.disks["dm-0"] == DiskRates(in_flight=1)  # appeared: no rate yet


def test_stacked_devices_stay_out_of_the_disk_total(a: HostSample, b: HostSample) -> None:
    dm = DiskCounters(reads=100, read_bytes=10**6, io_ms=100, stacked=True)
    dm2 = dm.model_copy(update={"reads": 100 + 771, "read_bytes": 10**6 + 98488 * 512,
                                "io_ms": 100 + 1000})
    r = derive_host_rates(a.model_copy(update={"disks": {**a.disks, "dm-0": dm}}),
                          b.model_copy(update={"disks": {**b.disks, "dm-0": dm2}}))
    assert r.disks["dm-0"].read_iops == pytest.approx(771 / DT)
    assert r.disk_total.read_iops == pytest.approx(771 / DT)  # vda only, not twice
    assert r.disk_max_util_pct == pytest.approx(100 * 1000 / (DT * 1000))  # the busier dm-0


def _nic_sample(mono: float, uptime: float | None, sent: int) -> HostSample:
    """A sample of one NIC's send counter, taken at ``mono`` here, read at ``uptime`` on
    the node."""
    text = ("Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    "
            "packets errs drop fifo colls carrier compressed\n"
            f"  eth1: 0 0 0 0 0 0 0 0 {sent} 0 0 0 0 0 0 0\n")
    files = {"/proc/stat": "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\n",
             "/proc/net/dev": text}
    if uptime is not None:
        files["/proc/uptime"] = f"{uptime:.2f} 100.00\n"
    return build_host_sample(files).model_copy(update={"mono": mono, "wall": mono})


def test_a_reading_late_over_ssh_is_divided_by_the_nodes_seconds() -> None:
    """The two-host lab under load (#55): 16,000 B/s through a shaper, the requests 1 s
    apart, the readings on the node 0.65 then 1.35 s apart: the node's clock gives the
    rate; the request times gave 10,400 and 21,600 B/s (the link_saturation flake)."""
    s0 = _nic_sample(10.0, 500.00, 0)
    s1 = _nic_sample(11.0, 500.65, 10_400)
    s2 = _nic_sample(12.0, 502.00, 10_400 + 21_600)
    for prev, cur in ((s0, s1), (s1, s2)):
        r = derive_host_rates(prev, cur).nics["eth1"]
        assert r.send_bytes_per_s == pytest.approx(16_000, rel=0.001)


def test_the_request_times_stand_where_the_node_agrees_or_is_silent() -> None:
    """Within NODE_CLOCK_SLACK_S the monotonic time between requests stands (finer than
    /proc/uptime's 10 ms steps at a 0.2 s interval); without /proc/uptime, as before."""
    near = derive_host_rates(_nic_sample(10.0, 500.00, 0), _nic_sample(10.2, 500.23, 3_200))
    assert near.nics["eth1"].send_bytes_per_s == pytest.approx(16_000)
    none = derive_host_rates(_nic_sample(10.0, None, 0), _nic_sample(11.0, None, 10_400))
    assert none.nics["eth1"].send_bytes_per_s == pytest.approx(10_400)
