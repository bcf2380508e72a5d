"""Pure parsers for the /proc and /sys text the host source reads.

One function per file format; none of them does I/O, so the same code reads
this machine's files (LocalRunner), a remote node's (SSH runner) or captured
fixtures (CannedRunner). ``build_host_sample`` assembles a HostSample from a
``{canonical path: text or None}`` mapping, keyed by the paths in
``PROC_FILES`` plus ``speed_path(nic)`` for link speeds.

Errors: malformed text raises ParseError naming the file and the line, never
another exception type. A file that is missing (None) leaves its fields
None/empty, so a container or an old kernel still gives what it has. /proc/vmstat
and /proc/meminfo are read for their few lines replmon uses (``_key_lines``):
garbage in their other lines is not an error.

The records are built with ``Struct.trusted`` (no pydantic validation): every value
is one these parsers typed (tests/unit/test_host_parse.py checks the types against
what validation gives).

Disk selection (``parse_diskstats``): whole block devices only.
 * partitions are dropped by name, without /sys: sdXN, hdXN, vdXN, xvdXN (letters
   then digits) and anything ending in <digit>pN (nvme0n1p1, mmcblk0p2, md0p1);
 * loop*, ram* and zram* are dropped (no real I/O, or I/O that shows elsewhere);
 * dm-*, md* and drbd* are kept, because users look at them (an LVM volume, a RAID
   array, the DRBD device), and flagged ``stacked`` so that totals, like dstat's,
   count only the disks underneath.
Pass ``whole_disks`` (e.g. the names in /sys/block) to override the name rule.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

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

PROC_FILES: tuple[str, ...] = (
    "/proc/stat",
    "/proc/meminfo",
    "/proc/vmstat",
    "/proc/loadavg",
    "/proc/diskstats",
    "/proc/net/dev",
    "/proc/uptime",
    "/proc/net/route",
    "/proc/pressure/cpu",
    "/proc/pressure/memory",
    "/proc/pressure/io",
    "/proc/sys/kernel/hostname",
)
"""Canonical paths read on every tick, all in one ``runner.read_files`` call."""

SECTOR_BYTES = 512
"""/proc/diskstats counts 512-byte sectors whatever the device's real sector size."""

_DROPPED_DISK = re.compile(r"(?:loop|ram|zram)\d*")
_PARTITION = re.compile(r"(?:[shv]d|xvd)[a-z]+\d+|.*\dp\d+")
_STACKED_DISK = re.compile(r"dm-\d+|md\d+|drbd\d+|bcache\d+")
_DECIMAL = re.compile(r"\d+(?:\.\d+)?")
_NO_SPEED = frozenset({65535, 4294967295})  # SPEED_UNKNOWN as printed by old drivers
_ODD_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"
"""The ASCII characters str.splitlines() breaks a line at besides \\n."""


def speed_path(nic: str) -> str:
    """Canonical path of a NIC's link-speed file."""
    return f"/sys/class/net/{nic}/speed"


def _fail(path: str, lineno: int, line: str, problem: str) -> ParseError:
    return ParseError(f"{path} line {lineno}: {problem}: {line[:80]!r}")


def _uint(tok: str, path: str, lineno: int, line: str) -> int:
    """A non-negative decimal integer token (ASCII digits only)."""
    if not (tok.isascii() and tok.isdigit()):
        raise _fail(path, lineno, line, f"expected a number, got {tok[:20]!r}")
    try:
        return int(tok)
    except ValueError:  # more digits than int() accepts
        raise _fail(path, lineno, line, "number too long") from None


def _uints(toks: list[str], path: str, lineno: int, line: str) -> list[int]:
    """_uint of each token (tokens of str.split(): never empty). One digit test on the
    joined tokens when all are plain numbers, the usual case: 2.0 µs instead of 2.9 for
    a /proc/net/dev line; otherwise _uint token by token names the bad one."""
    joined = "".join(toks)
    if joined.isdigit() and joined.isascii():
        try:
            return list(map(int, toks))
        except ValueError:  # more digits than int() accepts: _uint says so
            pass
    return [_uint(t, path, lineno, line) for t in toks]


def _key_lines(text: str, pattern: re.Pattern[str],
               is_key: Callable[[str], bool]) -> list[tuple[str, int]]:
    """The lines of ``text`` replmon reads, each with its number as str.splitlines()
    counts it, for the files read for a few keys (vmstat's 5 of ~190 lines, meminfo's 9
    of ~55): the lines found are checked as before, and garbage in a line replmon does
    not read is no longer an error.

    ASCII text broken at \\n only (what /proc prints) is scanned by ``pattern``, which
    starts with the \\n before a line (a literal first lets the regex engine jump from
    one \\n to the next: ~5 µs for vmstat, where a split and a test per line took ~35)
    and matches to the line's end. Any other text (a damaged capture) goes line by line,
    keeping the lines ``is_key`` accepts: the same lines."""
    if text.isascii() and not any(c in text for c in _ODD_BREAKS):
        text = "\n" + text
        out = []
        n = pos = 0
        for m in pattern.finditer(text):
            n += text.count("\n", pos, m.start() + 1)
            pos = m.start() + 1
            out.append((m.group()[1:], n))
        return out
    return [(line, n) for n, line in enumerate(text.splitlines(), 1) if is_key(line)]


def _decimal(tok: str, path: str, lineno: int, line: str) -> float:
    if not _DECIMAL.fullmatch(tok):
        raise _fail(path, lineno, line, f"expected a decimal, got {tok[:20]!r}")
    return float(tok)


# --- /proc/stat -----------------------------------------------------------------


@dataclass(frozen=True)
class ProcStat:
    """What /proc/stat gives: CPU time counters and a few system-wide counters/gauges."""

    cpu: CpuTimes
    ncpu: int | None
    btime: int | None
    intr: int | None
    ctxt: int | None
    procs_running: int | None
    procs_blocked: int | None


_STAT_SCALARS = ("btime", "intr", "ctxt", "procs_running", "procs_blocked")


def parse_proc_stat(text: str, path: str = "/proc/stat") -> ProcStat:
    """The aggregate ``cpu`` line (at least user nice system idle; fields a very old
    kernel lacks stay 0), the number of ``cpuN`` lines, and btime/intr/ctxt/procs_*.
    Only the first number of ``intr`` (the total) is read."""
    cpu: CpuTimes | None = None
    ncpu = 0
    scalars: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split(maxsplit=1)
        if not parts:
            continue
        key, rest = parts[0], parts[1] if len(parts) > 1 else ""
        if key == "cpu":
            toks = rest.split()
            if len(toks) < 4:
                raise _fail(path, n, line, "cpu line has fewer than 4 fields")
            nums = _uints(toks[:8], path, n, line)
            cpu = CpuTimes.trusted(**dict(zip(CpuTimes.model_fields, nums, strict=False)))
        elif key.startswith("cpu") and key[3:].isascii() and key[3:].isdigit():
            ncpu += 1
        elif key in _STAT_SCALARS:
            first = rest.split(maxsplit=1)
            if not first:
                raise _fail(path, n, line, f"{key} without a value")
            scalars[key] = _uint(first[0], path, n, line)
    if cpu is None:
        raise ParseError(f"{path}: no aggregate 'cpu' line")
    return ProcStat(
        cpu=cpu, ncpu=ncpu or None, btime=scalars.get("btime"), intr=scalars.get("intr"),
        ctxt=scalars.get("ctxt"), procs_running=scalars.get("procs_running"),
        procs_blocked=scalars.get("procs_blocked"),
    )


# --- /proc/meminfo, /proc/vmstat, /proc/loadavg ---------------------------------------

_MEMINFO_KEYS = {
    "MemTotal": "total", "MemFree": "free", "MemAvailable": "available", "Buffers": "buffers",
    "Cached": "cached", "SwapTotal": "swap_total", "SwapFree": "swap_free",
    "SwapCached": "swap_cached", "Dirty": "dirty",
}


_MEMINFO_LINE = re.compile(f"\n(?:{'|'.join(_MEMINFO_KEYS)}):.*")


def _is_meminfo_key(line: str) -> bool:
    return line.partition(":")[0] in _MEMINFO_KEYS


def parse_meminfo(text: str, path: str = "/proc/meminfo") -> MemInfo:
    """The fields of MemInfo, converted from kB to bytes. MemTotal is required. Only
    the lines of those fields are read (and must be ``Name: <number> kB``)."""
    values: dict[str, int] = {}
    for line, n in _key_lines(text, _MEMINFO_LINE, _is_meminfo_key):
        key, _, rest = line.partition(":")
        field = _MEMINFO_KEYS[key]
        toks = rest.split()
        if not toks or len(toks) > 2 or (len(toks) == 2 and toks[1] != "kB"):
            raise _fail(path, n, line, "expected '<number> kB'")
        values[field] = _uint(toks[0], path, n, line) * 1024
    if "total" not in values:
        raise ParseError(f"{path}: no MemTotal line")
    return MemInfo.trusted(**values)


_VMSTAT_LINE = re.compile(rf"\n[ \t\x1f]*(?:{'|'.join(VmStat.model_fields)})(?![^\s]).*")
"""A line whose first word (str.split's, of ASCII text without odd breaks) is a key."""


def _is_vmstat_key(line: str) -> bool:
    return line.split(maxsplit=1)[:1] in _VMSTAT_FIRST


_VMSTAT_FIRST = [[k] for k in VmStat.model_fields]


def parse_vmstat(text: str, path: str = "/proc/vmstat") -> VmStat:
    """pswpin, pswpout, pgfault, pgmajfault, oom_kill: whichever are present. Only
    their lines are read (and must be ``<name> <number>``)."""
    values: dict[str, int] = {}
    for line, n in _key_lines(text, _VMSTAT_LINE, _is_vmstat_key):
        toks = line.split()
        if len(toks) != 2:
            raise _fail(path, n, line, "expected '<name> <number>'")
        values[toks[0]] = _uint(toks[1], path, n, line)
    return VmStat.trusted(**values)


def parse_uptime(text: str, path: str = "/proc/uptime") -> float:
    """Seconds since boot (the first field, 10 ms steps): the node's own clock, read in
    the same batch as the counters (``HostSample.uptime_s``)."""
    line = text.split("\n", 1)[0]
    toks = line.split()
    if not toks:
        raise _fail(path, 1, line, "expected the seconds since boot")
    return _decimal(toks[0], path, 1, line)


def parse_loadavg(text: str, path: str = "/proc/loadavg") -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages (first three fields)."""
    line = text.split("\n", 1)[0]
    toks = line.split()
    if len(toks) < 3:
        raise _fail(path, 1, line, "expected three load averages")
    a, b, c = (_decimal(t, path, 1, line) for t in toks[:3])
    return a, b, c


# --- /proc/pressure/* ----------------------------------------------------------------


_PSI_LINE = re.compile(r"(some|full) avg10=([0-9]+(?:\.[0-9]+)?) avg60=([0-9]+(?:\.[0-9]+)?) "
                       r"avg300=([0-9]+(?:\.[0-9]+)?) total=([0-9]{1,30})")
"""A PSI line as every kernel prints it; any other line takes the general path."""


def parse_pressure(text: str, path: str = "/proc/pressure/memory") -> Psi:
    """``some`` (required) and ``full`` (optional) lines of a PSI file:
    ``some avg10=0.12 avg60=0.30 avg300=0.17 total=21093286``."""
    lines: dict[str, PsiLine] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if m := _PSI_LINE.fullmatch(line):
            kind, a10, a60, a300, total = m.groups()
            lines[kind] = PsiLine.trusted(avg10=float(a10), avg60=float(a60),
                                          avg300=float(a300), total_us=int(total))
            continue
        toks = line.split()
        if not toks:
            continue
        if toks[0] not in ("some", "full"):
            raise _fail(path, n, line, "expected 'some' or 'full'")
        kv: dict[str, str] = {}
        for tok in toks[1:]:
            k, sep, v = tok.partition("=")
            if not sep:
                raise _fail(path, n, line, f"expected key=value, got {tok[:20]!r}")
            kv[k] = v
        missing = {"avg10", "avg60", "avg300", "total"} - kv.keys()
        if missing:
            raise _fail(path, n, line, f"missing {', '.join(sorted(missing))}")
        lines[toks[0]] = PsiLine.trusted(
            avg10=_decimal(kv["avg10"], path, n, line),
            avg60=_decimal(kv["avg60"], path, n, line),
            avg300=_decimal(kv["avg300"], path, n, line),
            total_us=_uint(kv["total"], path, n, line),
        )
    if "some" not in lines:
        raise ParseError(f"{path}: no 'some' line")
    return Psi.trusted(some=lines["some"], full=lines.get("full"))


# --- /proc/diskstats -----------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def is_whole_disk(name: str) -> bool:
    """The name rule: not a partition and not loop/ram/zram (see the module docstring).
    Kept by name (a pure function of it): a host's every /proc/diskstats line asks it
    every tick, two regular expressions each."""
    return not (_DROPPED_DISK.fullmatch(name) or _PARTITION.fullmatch(name))


def parse_diskstats(
    text: str, whole_disks: Collection[str] | None = None, path: str = "/proc/diskstats"
) -> dict[str, DiskCounters]:
    """Whole disks by name. Lines have 14 fields (kernel < 4.18), 18 (discards, 4.18+)
    or 20 (flushes, 5.5+); only the first 14 are read. 7-field lines are partitions on
    kernels before 2.6.25 and are skipped."""
    out: dict[str, DiskCounters] = {}
    for n, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if not toks:
            continue
        if len(toks) == 7:
            continue
        if len(toks) < 14:
            raise _fail(path, n, line, f"{len(toks)} fields, expected at least 14")
        name = toks[2]
        keep = name in whole_disks if whole_disks is not None else is_whole_disk(name)
        if not keep:
            continue
        v = _uints(toks[3:14], path, n, line)
        out[name] = DiskCounters.trusted(
            reads=v[0], read_bytes=v[2] * SECTOR_BYTES, read_ms=v[3],
            writes=v[4], write_bytes=v[6] * SECTOR_BYTES, write_ms=v[7],
            in_flight=v[8], io_ms=v[9], weighted_ms=v[10],
            stacked=bool(_STACKED_DISK.fullmatch(name)),
        )
    return out


# --- /proc/net/dev and link speed -----------------------------------------------------


def parse_net_dev(text: str, path: str = "/proc/net/dev") -> dict[str, NicCounters]:
    """Every interface, lo included; speed_mbps left None (see parse_speed).
    Each data line is ``name: 8 receive fields 8 transmit fields``."""
    return {name: NicCounters.trusted(**v) for name, v in _net_dev_counters(text, path).items()}


def _net_dev_counters(text: str, path: str) -> dict[str, dict[str, Any]]:
    """parse_net_dev's counters, as NicCounters' fields: build_host_sample adds the
    speed, shaper and routes before it makes each record."""
    out: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or "|" in line:  # the two header lines
            continue
        name, sep, rest = line.partition(":")
        name = name.strip()
        toks = rest.split()
        if not sep or not name or len(toks) < 16:
            raise _fail(path, n, line, "expected 'name: 16 numbers'")
        v = _uints(toks[:16], path, n, line)
        out[name] = {
            "rx_bytes": v[0], "rx_packets": v[1], "rx_errors": v[2], "rx_drops": v[3],
            "tx_bytes": v[8], "tx_packets": v[9], "tx_errors": v[10], "tx_drops": v[11],
        }
    return out


def parse_net_route(text: str, path: str = "/proc/net/route") -> dict[str, list[str]]:
    """{nic: its IPv4 routes as CIDR} from /proc/net/route's lines ``Iface Destination
    Gateway Flags RefCnt Use Metric Mask ...``: Destination and Mask are the address's
    bytes in network order printed as a host-order hex number (little-endian x86 and
    arm64: "0037430A" is 10.67.55.0)."""
    out: dict[str, list[str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if not toks or toks[0] == "Iface":
            continue
        if len(toks) < 8:
            raise _fail(path, n, line, "expected 'Iface Destination Gateway ... Mask'")
        try:
            dest, mask = (int(t, 16).to_bytes(4, sys.byteorder) for t in (toks[1], toks[7]))
        except (ValueError, OverflowError):
            raise _fail(path, n, line, "expected hex Destination and Mask") from None
        bits = bin(int.from_bytes(mask, "big")).count("1")
        out.setdefault(toks[0], []).append(f"{'.'.join(map(str, dest))}/{bits}")
    return out


QDISC_KEY = "tc -j qdisc show"
"""The key of ``tc -j qdisc show``'s output among ``build_host_sample``'s texts."""
SHAPERS = {"tbf": "rate", "cake": "bandwidth"}
"""Root qdiscs that cap a link's rate, and the option (bytes/s in tc's JSON) that says
at what."""


def parse_qdiscs(text: str) -> dict[str, tuple[str, float]]:
    """``tc -j qdisc show`` -> {nic: (shaper kind, kbit/s)} for each interface whose root
    qdisc is a shaper of SHAPERS; others, and garbled output, left out (a shaper is a
    refinement of the speed, never a reason to fail the sample)."""
    try:
        rows = json.loads(text)
    except ValueError:
        return {}
    out: dict[str, tuple[str, float]] = {}
    for q in rows if isinstance(rows, list) else []:
        if not isinstance(q, dict) or not q.get("root") or q.get("kind") not in SHAPERS:
            continue
        rate = (q.get("options") or {}).get(SHAPERS[q["kind"]])
        if isinstance(q.get("dev"), str) and isinstance(rate, int | float) and rate > 0:
            out[q["dev"]] = (q["kind"], rate * 8 / 1000)
    return out


def parse_speed(text: str, path: str = "/sys/class/net/?/speed") -> int | None:
    """Link speed in Mb/s; None for "unknown" (-1, 0, 65535, 4294967295)."""
    line = text.strip()
    digits = line[1:] if line.startswith("-") else line
    if "\n" in line or not (digits.isascii() and digits.isdigit()):
        raise _fail(path, 1, line, "expected a number of Mb/s")
    value = int(line) if len(line) < 20 else -1
    return None if value <= 0 or value in _NO_SPEED else value


# --- everything ---------------------------------------------------------------------


def build_host_sample(
    files: Mapping[str, str | None], whole_disks: Collection[str] | None = None
) -> HostSample:
    """A HostSample (status ok, no timestamps) from ``{canonical path: text or None}``.

    Keys are the paths in PROC_FILES and ``speed_path(nic)``; a missing key or a None
    value means the file does not exist there and leaves its fields None/empty."""
    fields: dict[str, object] = {}
    stat = files.get("/proc/stat")
    if stat is not None:
        ps = parse_proc_stat(stat)
        fields.update(
            cpu=ps.cpu, ncpu=ps.ncpu, btime=ps.btime, intr=ps.intr, ctxt=ps.ctxt,
            procs_running=ps.procs_running, procs_blocked=ps.procs_blocked,
        )
    if (text := files.get("/proc/meminfo")) is not None:
        fields["mem"] = parse_meminfo(text)
    if (text := files.get("/proc/vmstat")) is not None:
        fields["vm"] = parse_vmstat(text)
    if (text := files.get("/proc/loadavg")) is not None:
        fields["load1"], fields["load5"], fields["load15"] = parse_loadavg(text)
    if (text := files.get("/proc/uptime")) is not None:
        fields["uptime_s"] = parse_uptime(text)
    if (text := files.get("/proc/diskstats")) is not None:
        fields["disks"] = parse_diskstats(text, whole_disks)
    if (text := files.get("/proc/net/dev")) is not None:
        counters = _net_dev_counters(text, "/proc/net/dev")
        qdiscs = files.get(QDISC_KEY)
        shapers = parse_qdiscs(qdiscs) if qdiscs else {}
        for name, nic in counters.items():
            speed_text = files.get(speed_path(name))
            if speed_text is not None:
                nic["speed_mbps"] = parse_speed(speed_text, speed_path(name))
            if name in shapers:
                nic["shaper"], nic["shaped_kbit"] = shapers[name]
        if (routes := files.get("/proc/net/route")) is not None:
            for name, cidrs in parse_net_route(routes).items():
                if name in counters:
                    counters[name]["routes"] = cidrs
        fields["nics"] = {name: NicCounters.trusted(**nic) for name, nic in counters.items()}
    for res in ("cpu", "memory", "io"):
        p = f"/proc/pressure/{res}"
        if (text := files.get(p)) is not None:
            fields[f"psi_{res}"] = parse_pressure(text, p)
    if (text := files.get("/proc/sys/kernel/hostname")) is not None:
        fields["hostname"] = text.strip() or None
    # every value above is a parser's, of its field's type: no validation (Struct.trusted)
    return HostSample.trusted(**fields)
