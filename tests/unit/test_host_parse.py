"""Host parsers on real /proc and /sys text captured on the development VM
(tests/fixtures/host/, see its README.md), on the other layouts the kernel has
used, and on garbage: a result or ParseError, never another exception."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typedleaves import typed_leaves

from replmon.errors import ParseError
from replmon.model.host import (
    CpuTimes,
    DiskCounters,
    HostSample,
    MemInfo,
    NicCounters,
    Psi,
    PsiLine,
    VmStat,
)
from replmon.sources.host_parse import (
    PROC_FILES,
    build_host_sample,
    is_whole_disk,
    parse_diskstats,
    parse_loadavg,
    parse_meminfo,
    parse_net_dev,
    parse_net_route,
    parse_pressure,
    parse_proc_stat,
    parse_speed,
    parse_vmstat,
    speed_path,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "host"
KB = 1024


@functools.cache
def _read_tree(name: str) -> tuple[tuple[str, str], ...]:
    root = FIXTURES / name
    return tuple(
        ("/" + p.relative_to(root).as_posix(), p.read_text())
        for p in sorted(root.rglob("*")) if p.is_file()
    )


def capture(name: str) -> dict[str, str | None]:
    """A fixture tree as build_host_sample wants it: canonical path -> text."""
    return dict(_read_tree(name))


def text(name: str, path: str) -> str:
    found = capture(name)[path]
    assert found is not None
    return found


# --- real captures -------------------------------------------------------------------


def test_proc_stat() -> None:
    ps = parse_proc_stat(text("a", "/proc/stat"))
    assert ps.cpu == CpuTimes(user=26955, nice=0, system=7879, idle=1022033, iowait=905,
                              irq=0, softirq=1216, steal=11327)
    assert ps.cpu.total == 26955 + 7879 + 1022033 + 905 + 1216 + 11327
    assert ps.ncpu == 2
    assert (ps.btime, ps.intr, ps.ctxt) == (1795385829, 1521134, 2502627)
    assert (ps.procs_running, ps.procs_blocked) == (1, 0)


def test_meminfo_in_bytes() -> None:
    assert parse_meminfo(text("a", "/proc/meminfo")) == MemInfo(
        total=24684084 * KB, free=23213396 * KB, available=23913004 * KB, buffers=20484 * KB,
        cached=898936 * KB, swap_total=0, swap_free=0, swap_cached=0, dirty=116 * KB,
    )


def test_vmstat() -> None:
    assert parse_vmstat(text("a", "/proc/vmstat")) == VmStat(
        pswpin=0, pswpout=0, pgfault=6278672, pgmajfault=792, oom_kill=0
    )
    swap = parse_vmstat((FIXTURES / "swap" / "vmstat_b").read_text())
    assert (swap.pswpin, swap.pswpout, swap.pgmajfault) == (84790, 405119, 56702)


def test_loadavg() -> None:
    assert parse_loadavg(text("a", "/proc/loadavg")) == (0.03, 0.01, 0.03)


def test_diskstats_keeps_whole_disks_only() -> None:
    disks = parse_diskstats(text("a", "/proc/diskstats"))
    assert list(disks) == ["vda"]  # loop0-7 and zram0 are dropped
    assert disks["vda"] == DiskCounters(
        reads=36084, read_bytes=2290562 * 512, read_ms=7519,
        writes=113710, write_bytes=2984784 * 512, write_ms=29973,
        in_flight=0, io_ms=14096, weighted_ms=40524, stacked=False,
    )


def test_net_dev_lists_every_interface() -> None:
    nics = parse_net_dev(text("a", "/proc/net/dev"))
    assert list(nics) == ["lo", "ifb0", "ifb1", "eth0"]
    assert nics["eth0"] == NicCounters(rx_bytes=86756186, rx_packets=2983, tx_bytes=189672,
                                       tx_packets=2103)
    assert nics["lo"].rx_bytes == nics["lo"].tx_bytes == 397436321


def test_pressure() -> None:
    cpu = parse_pressure(text("a", "/proc/pressure/cpu"), "/proc/pressure/cpu")
    assert cpu.some == PsiLine(avg10=0.12, avg60=0.30, avg300=0.17, total_us=21093286)
    assert cpu.full == PsiLine()
    io = parse_pressure(text("a", "/proc/pressure/io"))
    assert io.full == PsiLine(avg10=0.01, avg60=0.16, avg300=0.06, total_us=5569888)


def test_speed() -> None:
    assert parse_speed(text("a", "/sys/class/net/eth0/speed")) is None  # really "-1"
    assert parse_speed("10000\n") == 10000
    assert parse_speed("4294967295\n") is None  # SPEED_UNKNOWN printed unsigned
    assert parse_speed("0") is None
    with pytest.raises(ParseError, match="eth9"):
        parse_speed("fast\n", speed_path("eth9"))


def test_build_host_sample_from_capture() -> None:
    s = build_host_sample(capture("b"))
    assert s.status.ok
    assert s.hostname == "vm"
    assert s.cpu is not None
    assert s.cpu.user == 27102
    assert (s.ncpu, s.btime, s.intr, s.ctxt) == (2, 1795385829, 1523350, 2504008)
    assert (s.load1, s.load5, s.load15) == (0.03, 0.01, 0.03)
    assert s.mem is not None
    assert s.mem.available == 23889100 * KB
    assert s.vm is not None
    assert s.vm.pgfault == 6287205
    assert s.disks["vda"].read_bytes == 2389050 * 512
    assert s.nics["lo"].rx_bytes == 417547911
    assert all(n.speed_mbps is None for n in s.nics.values())  # -1 or EINVAL on this VM
    assert s.psi_io is not None
    assert s.psi_io.some.total_us == 6272055
    assert s.psi_memory == Psi(some=PsiLine(), full=PsiLine())
    assert s.page_size == 4096


def test_build_host_sample_with_a_link_speed_and_missing_files() -> None:
    files = capture("a")
    files[speed_path("eth0")] = "1000\n"
    for res in ("cpu", "memory", "io"):
        files[f"/proc/pressure/{res}"] = None  # kernel without PSI
    del files["/proc/vmstat"]
    s = build_host_sample(files)
    assert s.nics["eth0"].speed_mbps == 1000
    assert (s.psi_cpu, s.psi_memory, s.psi_io, s.vm) == (None, None, None, None)
    assert s.cpu is not None


def test_proc_files_are_all_captured() -> None:
    # /proc/uptime was read from 2026-12-04 on, after these captures: without it the
    # rates divide by the request times, as before (test_host_rates)
    assert set(PROC_FILES) - {"/proc/uptime"} <= set(capture("a"))


# --- other kernel layouts ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "whole"),
    [
        ("sda", True), ("sda1", False), ("sdab12", False), ("vda", True), ("vda1", False),
        ("xvda", True), ("xvda2", False), ("hdc3", False), ("nvme0n1", True),
        ("nvme0n1p1", False), ("mmcblk0", True), ("mmcblk0p2", False), ("md0", True),
        ("md127p1", False), ("dm-0", True), ("drbd0", True), ("sr0", True), ("loop0", False),
        ("ram15", False), ("zram0", False), ("nbd0", True),
    ],
)
def test_whole_disk_name_rule(name: str, whole: bool) -> None:
    assert is_whole_disk(name) is whole


# One line per layout: 14 fields (kernel < 4.18), 18 (4.18-5.4), 20 (5.5+),
# and the 7-field partition lines of kernels before 2.6.25.
OLD_AND_STACKED = """\
   8       0 sda 5021 1240 331126 9010 88120 70355 3180962 401230 0 95210 410220
   8       1 sda1 4980 331000 88100 3180900
   8      16 sdb 10 0 80 1 0 0 0 0 0 1 1 0 0 0 0
   9       0 md0 400 0 3200 0 900 0 7200 0 0 0 0 0 0 0 0 0 0
 253       0 dm-0 300 0 2400 120 800 0 6400 900 2 700 1020 0 0 0 0 0 0
 147       0 drbd0 100 0 800 0 500 0 4000 0 0 300 0 0 0 0 0
 252       0 bcache0 90 0 720 0 400 0 3200 0 0 250 0 0 0 0 0
 259       0 nvme0n1 7 0 56 1 0 0 0 0 0 4 1 0 0 0 0 3 0
 259       1 nvme0n1p1 7 0 56 1 0 0 0 0 0 4 1 0 0 0 0 0 0
"""


def test_diskstats_layouts_and_stacked_devices() -> None:
    disks = parse_diskstats(OLD_AND_STACKED)
    assert list(disks) == ["sda", "sdb", "md0", "dm-0", "drbd0", "bcache0", "nvme0n1"]
    assert disks["sda"] == DiskCounters(
        reads=5021, read_bytes=331126 * 512, read_ms=9010, writes=88120,
        write_bytes=3180962 * 512, write_ms=401230, in_flight=0, io_ms=95210,
        weighted_ms=410220,
    )
    assert disks["dm-0"].in_flight == 2
    # bcache (seed 003) sits on a backing disk and a cache device: counting it too
    # would count its I/O twice in disk_total.
    assert {n for n, d in disks.items() if d.stacked} == {"md0", "dm-0", "drbd0", "bcache0"}


def test_diskstats_whole_disk_set_overrides_the_name_rule() -> None:
    assert list(parse_diskstats(OLD_AND_STACKED, whole_disks={"sdb", "nvme0n1p1"})) == [
        "sdb", "nvme0n1p1",
    ]


def test_old_kernels() -> None:
    # 2.6.0-2.6.10 printed 7 cpu fields; meminfo before 3.14 had no MemAvailable;
    # /proc/pressure/cpu before 5.13 had no "full" line.
    ps = parse_proc_stat("cpu  10 2 30 400 5 6 7\ncpu0 10 2 30 400 5 6 7\nbtime 1\n")
    assert ps.cpu == CpuTimes(user=10, nice=2, system=30, idle=400, iowait=5, irq=6, softirq=7)
    assert (ps.ncpu, ps.intr) == (1, None)
    mem = parse_meminfo("MemTotal:  1000 kB\nMemFree:  500 kB\nHugePages_Total:   0\n")
    assert (mem.total, mem.available, mem.swap_total) == (1000 * KB, None, None)
    assert parse_pressure("some avg10=1.50 avg60=0.00 avg300=0.00 total=12\n").full is None


# --- malformed text ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parse", "bad", "where"),
    [
        (parse_proc_stat, "cpu  1 2 x 4\n", "/proc/stat line 1"),
        (parse_proc_stat, "cpu  1 2 3\n", "/proc/stat line 1"),
        (parse_proc_stat, "cpu0 1 2 3 4\n", "/proc/stat: no aggregate"),
        (parse_proc_stat, "cpu 1 2 3 4\nctxt -5\n", "/proc/stat line 2"),
        (parse_meminfo, "MemTotal: 12 MB\n", "/proc/meminfo line 1"),
        (parse_meminfo, "MemFree: 12 kB\n", "/proc/meminfo: no MemTotal"),
        (parse_meminfo, "MemTotal: 12 kB\nDirty: garbage\n", "/proc/meminfo line 2"),
        (parse_meminfo, "Cached: 1 kB\r\nMemTotal: 12 kB x\n", "/proc/meminfo line 2"),
        (parse_vmstat, "pswpin 1\npswpout\n", "/proc/vmstat line 2"),
        (parse_vmstat, "nr_free 1\n\n  pgfault 1 2\n", "/proc/vmstat line 3"),
        (parse_vmstat, "x 1\x0bpgfault é\n", "/proc/vmstat line 2"),
        (parse_loadavg, "0.1 0.2\n", "/proc/loadavg line 1"),
        (parse_loadavg, "0.1 nan 0.3 1/2 3\n", "/proc/loadavg line 1"),
        (parse_diskstats, "8 0 sda 1 2 3\n", "/proc/diskstats line 1"),
        (parse_diskstats, "8 0 sda 1 2 3 4 5 6 7 8 9 10 1e3\n", "/proc/diskstats line 1"),
        (parse_net_dev, "  eth0 1 2 3\n", "/proc/net/dev line 1"),
        (parse_net_dev, "eth0: " + "1 " * 15 + "\n", "/proc/net/dev line 1"),
        (parse_pressure, "some avg10=0.1 avg60=0.2 total=3\n", "line 1: missing avg300"),
        (parse_pressure, "full avg10=0 avg60=0 avg300=0 total=0\n", "no 'some' line"),
    ],
)
def test_malformed_text_names_file_and_line(
    parse: Callable[[str], Any], bad: str, where: str
) -> None:
    with pytest.raises(ParseError, match=where):
        parse(bad)


def test_garbage_in_a_line_not_read_is_not_an_error() -> None:
    """vmstat and meminfo are read for a few of their lines (#56): a damaged line among
    the others no longer fails the sample; what is read is the same."""
    vm = text("a", "/proc/vmstat")
    assert parse_vmstat(vm.replace("pgpgin ", "pgpgin x ", 1)) == parse_vmstat(vm)
    mem = text("a", "/proc/meminfo")
    assert parse_meminfo(mem.replace("Active:", "Active", 1)) == parse_meminfo(mem)
    # the key lines are found whatever the line breaks and leading blanks, as before
    assert parse_vmstat("nr_x 1\r\n pgfault\t7\x0boom_kill 2\n").pgfault == 7
    assert parse_vmstat(" nr_x 1\n pgfault\t7\n\x1foom_kill 2").oom_kill == 2
    assert parse_meminfo("X: 1\u2028MemTotal: 2 kB\n").total == 2048


@pytest.mark.parametrize("name", ["a", "b"])
def test_built_without_validation_as_validation_builds(name: str) -> None:
    """build_host_sample makes its records with Struct.trusted (no validation): each
    value is of its field's exact type, as the validating constructor leaves it."""
    s = build_host_sample(capture(name))
    again = HostSample.model_validate(s.model_dump())
    assert typed_leaves(s) == typed_leaves(again)
    assert s.nics and s.disks and s.psi_io is not None and s.vm is not None


def test_garbled_capture_file_through_build() -> None:
    files = capture("a")
    files["/proc/diskstats"] = text("a", "/proc/diskstats").replace("36084", "36O84")
    with pytest.raises(ParseError, match=r"/proc/diskstats line 9: .*'36O84'"):
        build_host_sample(files)


# --- property tests: a result or ParseError, never anything else ------------------------------

PARSERS: dict[str, Callable[[str], object]] = {
    "/proc/stat": parse_proc_stat,
    "/proc/meminfo": parse_meminfo,
    "/proc/vmstat": parse_vmstat,
    "/proc/loadavg": parse_loadavg,
    "/proc/diskstats": parse_diskstats,
    "/proc/net/dev": parse_net_dev,
    "/proc/pressure/io": parse_pressure,
    "/sys/class/net/eth0/speed": parse_speed,
}
ALPHABET = st.sampled_from(list("0123456789 \t\n:-=.|/abcdefklmnoprstuvxyzCFMT_p") + ["\x00", "é"])


def _result_or_parse_error(parse: Callable[[Any], object], data: object) -> None:
    with contextlib.suppress(ParseError):
        parse(data)


@pytest.mark.parametrize("path", list(PARSERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.text(ALPHABET, max_size=300) | st.text(max_size=200))
def test_arbitrary_text(path: str, data: str) -> None:
    _result_or_parse_error(PARSERS[path], data)


@st.composite
def mutated(draw: st.DrawFn, original: str) -> str:
    """The real text with a few characters replaced, deleted or inserted."""
    chars = list(original)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, max(0, len(chars) - 1)))
        op = draw(st.sampled_from(["replace", "delete", "insert"]))
        c = draw(ALPHABET)
        if op == "insert" or not chars:
            chars.insert(i, c)
        elif op == "delete":
            del chars[i]
        else:
            chars[i] = c
    return "".join(chars)


@pytest.mark.parametrize("path", list(PARSERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_real_files(path: str, data: st.DataObject) -> None:
    _result_or_parse_error(PARSERS[path], data.draw(mutated(text("a", path))))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_mutated_capture_through_build(data: st.DataObject) -> None:
    files = capture("b")
    path = data.draw(st.sampled_from([p for p, t in files.items() if t is not None]))
    files[path] = data.draw(mutated(files[path] or ""))
    _result_or_parse_error(build_host_sample, files)


def test_net_route_gives_each_nic_its_routes() -> None:
    """/proc/net/route's hex (network-order bytes printed host-order) read as CIDRs: the
    capture's default route and its /24 on eth0; a two-host lab node's /30s."""
    s = build_host_sample(capture("a"))
    assert s.nics["eth0"].routes == ["0.0.0.0/0", "192.0.2.0/24"]
    assert s.nics["lo"].routes == []
    lab = ("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
           "eth1\t0837430A\t00000000\t0001\t0\t0\t0\tFCFFFFFF\t0\t0\t0\n")
    assert parse_net_route(lab) == {"eth1": ["10.67.55.8/30"]}
    with pytest.raises(ParseError):
        parse_net_route("Iface\tDestination\neth0\tzz\n")
