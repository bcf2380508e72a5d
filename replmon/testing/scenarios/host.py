"""Seeds 000, 001 and 003 as tick series: a saturated link, a long round trip, a slow disk.

The lab runs on one machine over loopback (no link speed, no slow disk, and this
kernel has no ``netem``), so these come from the seeds' published figures. Host
ticks are built the way live ones are: per-interval loads (``Load``) are
integrated into raw /proc counters (``HostSample``), and the real
``RateTracker`` derives the rates, so a check sees exactly what it would see live
(no rates on the first tick, counters, dt, rounding).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from replmon.model.drbd import DrbdSample
from replmon.model.findings import Severity
from replmon.model.host import CpuTimes, DiskCounters, HostSample, NicCounters
from replmon.model.mysql import MysqlSample, ReplicaChannel, SemiSync
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeTick, RateTracker, Role, Tick
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.scenarios import LabScenario, SeedScenario, nothing
from replmon.testing.synth import T0, node, status, tick

MB = 1_000_000  # dstat and dd print decimal megabytes
DRBD_HEADER = ("version: 8.4.4 (api:1/proto:86-101)\n"
               "GIT-hash: 599f286440bd633d15d5ff985204aff4bccffadd build by phil@Build64R6, "
               "2013-10-14 15:33:06\n")


@dataclass(frozen=True)
class Disk:
    """One disk over one interval."""

    read_iops: float = 0.0
    write_iops: float = 0.0
    await_ms: float = 0.0
    util_pct: float = 0.0
    read_bytes_per_s: float = 0.0
    write_bytes_per_s: float = 0.0
    stacked: bool = False


@dataclass(frozen=True)
class Nic:
    """One interface over one interval."""

    send_bytes_per_s: float = 0.0
    recv_bytes_per_s: float = 0.0
    speed_mbps: int | None = None


@dataclass(frozen=True)
class Load:
    """What one node did over one interval (CPU percentages of all CPU time)."""

    usr: float = 5.0
    sys: float = 3.0
    iowait: float = 0.0
    disks: dict[str, Disk] = field(default_factory=lambda: {"sda": Disk()})
    nics: dict[str, Nic] = field(default_factory=lambda: {"eth0": Nic(speed_mbps=1000)})
    drbd_sent_kib_s: float | None = None
    """KiB/s DRBD sends to its peer (resource "0", protocol ``protocol``); None = no DRBD."""
    protocol: str = "C"


ABSENT_MYSQL = MysqlSample(status=status("absent", "not part of this scenario"))
ABSENT_REDIS = RedisSample(status=status("absent", "not part of this scenario"))


class _Counters:
    """Running /proc counters of one node, advanced one interval at a time."""

    def __init__(self, ncpu: int) -> None:
        self.ncpu = ncpu
        self.cpu = dict.fromkeys(CpuTimes.model_fields, 0.0)
        self.disks: dict[str, dict[str, float]] = {}
        self.nics: dict[str, dict[str, float]] = {}
        self.drbd_sent = 0.0

    def advance(self, ld: Load, dt: float) -> None:
        hz = 100.0 * self.ncpu * dt  # USER_HZ ticks in the interval, all CPUs
        idle = max(0.0, 100.0 - ld.usr - ld.sys - ld.iowait)
        for f, pct in (("user", ld.usr), ("system", ld.sys), ("iowait", ld.iowait),
                       ("idle", idle)):
            self.cpu[f] += pct * hz / 100.0
        for name, d in ld.disks.items():
            c = self.disks.setdefault(name, dict.fromkeys(DiskCounters.model_fields, 0.0))
            reads, writes = d.read_iops * dt, d.write_iops * dt
            c["reads"] += reads
            c["writes"] += writes
            c["read_ms"] += reads * d.await_ms
            c["write_ms"] += writes * d.await_ms
            c["weighted_ms"] += (reads + writes) * d.await_ms
            c["io_ms"] += d.util_pct / 100.0 * 1000.0 * dt
            c["read_bytes"] += d.read_bytes_per_s * dt
            c["write_bytes"] += d.write_bytes_per_s * dt
        for name, n in ld.nics.items():
            c = self.nics.setdefault(name, {"tx_bytes": 0.0, "rx_bytes": 0.0})
            c["tx_bytes"] += n.send_bytes_per_s * dt
            c["rx_bytes"] += n.recv_bytes_per_s * dt
        self.drbd_sent += (ld.drbd_sent_kib_s or 0.0) * dt

    def sample(self, ld: Load, mono: float) -> HostSample:
        disks = {n: DiskCounters(**{k: int(v) for k, v in self.disks.get(n, {}).items()
                                    if k != "stacked"}, stacked=d.stacked)
                 for n, d in ld.disks.items()}
        nics = {n: NicCounters(tx_bytes=int(self.nics.get(n, {}).get("tx_bytes", 0)),
                               rx_bytes=int(self.nics.get(n, {}).get("rx_bytes", 0)),
                               speed_mbps=c.speed_mbps)
                for n, c in ld.nics.items()}
        return HostSample(wall=T0 + mono, mono=mono, hostname="node", ncpu=self.ncpu,
                          cpu=CpuTimes(**{k: int(v) for k, v in self.cpu.items()}),
                          disks=disks, nics=nics)

    def drbd(self, ld: Load, role: Role, mono: float) -> DrbdSample | None:
        """DRBD 8.4.4 as /proc/drbd prints it (seed 000), through the real parser."""
        if ld.drbd_sent_kib_s is None:
            return None
        kib = int(self.drbd_sent)
        ro, counters = (("Primary/Secondary", f"ns:{kib} nr:0 dw:{kib}") if role == "primary"
                        else ("Secondary/Primary", f"ns:0 nr:{kib} dw:{kib}"))
        text = (f"{DRBD_HEADER} 0: cs:Connected ro:{ro} ds:UpToDate/UpToDate {ld.protocol} "
                f"r-----\n    {counters} dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:f oos:0\n")
        return parse_proc_drbd(text).model_copy(update={"mono": mono, "wall": T0 + mono})


def host_ticks(primary: Sequence[Load], replica: Sequence[Load] | None = None, *,
               interval: float = 1.0, ncpu: int = 2,
               mysql: Sequence[tuple[MysqlSample, MysqlSample]] | None = None) -> list[Tick]:
    """Ticks 0..n-1 from per-interval loads (load i = what happened between tick i-1 and
    tick i; load 0 only sets the starting gauges). ``mysql`` adds (primary, replica)
    MySQL samples per tick."""
    replica = replica if replica is not None else [Load()] * len(primary)
    counters = {"primary": _Counters(ncpu), "replica": _Counters(ncpu)}
    tracker = RateTracker()
    out: list[Tick] = []
    for i, (lp, lr) in enumerate(zip(primary, replica, strict=True)):
        mono = i * interval
        nodes: dict[str, NodeTick] = {}
        for role, ld in (("primary", lp), ("replica", lr)):
            c = counters[role]
            if i:
                c.advance(ld, interval)
            parts: dict[str, Any] = {"host": c.sample(ld, mono)}
            dr = c.drbd(ld, role, mono)  # type: ignore[arg-type]
            if dr is not None:
                parts["drbd"] = dr
            parts["mysql"] = ABSENT_MYSQL if mysql is None else mysql[i][
                0 if role == "primary" else 1].model_copy(update={"mono": mono, "wall": T0 + mono})
            parts["redis"] = ABSENT_REDIS
            nodes[role] = tracker.attach(node(role, **parts))  # type: ignore[arg-type]
        out.append(tick(i, primary=nodes["primary"], replica=nodes["replica"],
                        interval=interval))
    return out


# --- seed 000: dd at 12.6 MB/s over DRBD protocol C on a 100 Mbit link --------------

def _seed_000_dd(speed_mbps: int) -> tuple[list[Tick], int]:
    # Before: sysbench OLTP, ~1 MB/s of replication; then dd writes 12.6 MB/s to /data
    # (DRBD), all of it sent to db162: the 100 Mb/s link is full.
    def p(send: float) -> Load:
        return Load(usr=6, sys=4, iowait=10 if send > MB else 2,
                    disks={"sda": Disk(write_iops=300, await_ms=4, util_pct=35,
                                       write_bytes_per_s=send)},
                    nics={"eth0": Nic(send_bytes_per_s=send, recv_bytes_per_s=300e3,
                                      speed_mbps=speed_mbps)},
                    drbd_sent_kib_s=send * 0.97 / 1024)  # ~3 % headers

    def r(recv: float) -> Load:
        return Load(usr=1, sys=3, disks={"sda": Disk(write_iops=250, await_ms=3, util_pct=30,
                                                     write_bytes_per_s=recv)},
                    nics={"eth0": Nic(send_bytes_per_s=320e3, recv_bytes_per_s=recv * 1.02,
                                      speed_mbps=speed_mbps)},
                    drbd_sent_kib_s=0.0)
    before, during = [1.0 * MB] * 6, [12.6 * MB] * 10
    sends = before + during
    return host_ticks([p(s) for s in sends], [r(s) for s in sends]), len(before)


# --- seed 001: sysbench at 0.3 ms, then 10 ms round trip (tc netem) ---------------

def _seed_001_rtt(after_ms: float, semi_sync: bool) -> tuple[list[Tick], int]:
    def pair(rtt: float) -> tuple[MysqlSample, MysqlSample]:
        var = {"rpl_semi_sync_master_enabled": "ON" if semi_sync else "OFF"}
        prim = MysqlSample(flavour="mysql", rtt_ms=rtt, variables=var,
                           semi_sync=SemiSync(source_enabled=semi_sync, source_active=semi_sync))
        chan = ReplicaChannel(io_running="Yes", sql_running=True, seconds_behind=0,
                              source_host="db163", source_port=3306)
        return prim, MysqlSample(flavour="mysql", rtt_ms=0.3, replication=[chan],
                                 variables={"read_only": "ON"})
    # ping before and after netem (seed 001), one reading per tick
    before = [0.299, 0.180, 0.297, 0.329, 0.263, 0.367, 0.237, 0.160]
    rtts = before + [after_ms * f for f in (1.0, 0.99, 1.0, 0.99, 0.99, 0.97, 1.0, 0.99)]
    loads = [Load()] * len(rtts)
    return host_ticks(loads, mysql=[pair(x) for x in rtts]), 8


# --- seed 003: fio on Ceph RBD behind bcache ---------------------------------------

def _seed_003_vm(iops: float) -> tuple[list[Tick], int]:
    # fio randrw 16k, 30 jobs at iodepth 1 = 30 requests in flight on the VM's vda, so by
    # Little's law await = 30 / IOPS: nobcache 468 IOPS -> 64 ms, writeback 1243 -> 24 ms.
    idle = Load(disks={"vda": Disk(read_iops=5, write_iops=20, await_ms=2, util_pct=3)})
    busy = Load(usr=3, sys=6, iowait=8,  # the seed gives no CPU figures
                disks={"vda": Disk(read_iops=iops / 2, write_iops=iops / 2,
                                   await_ms=30_000 / iops, util_pct=100,
                                   read_bytes_per_s=iops / 2 * 16384,
                                   write_bytes_per_s=iops / 2 * 16384)})
    return host_ticks([idle] * 5 + [busy] * 10), 5


def _seed_003_osd() -> tuple[list[Tick], int]:
    # An OSD host: the HDD (sdb) behind bcache0 once the writeback cache is full: flushing
    # and new writes share the disk, IOPS jump around and requests wait > 500 ms (slow ops).
    steady = [Load(disks={"sdb": Disk(write_iops=140, await_ms=9, util_pct=45),
                          "bcache0": Disk(write_iops=1900, await_ms=0.4, util_pct=60)})] * 8
    jumpy = [Load(iowait=25, disks={"sdb": Disk(write_iops=w, await_ms=a, util_pct=100),
                                    "bcache0": Disk(write_iops=w, await_ms=a, util_pct=100)})
             for w, a in [(310, 540), (60, 910), (250, 620), (40, 1300), (290, 560),
                          (70, 880), (330, 515), (50, 1150), (270, 600), (80, 760),
                          (300, 530), (45, 1200)]]
    return host_ticks(steady + jumpy), len(steady)


def _seed_000_prepare(iowait: Sequence[float]) -> tuple[list[Tick], int]:
    # dstat on db163 during sysbench prepare: wai 51 47 53 47 59 ... with 13-21 MB/s written.
    before = [Load(usr=2, sys=1, iowait=1)] * 4
    during = [Load(usr=6, sys=4, iowait=w,
                   disks={"sda": Disk(write_iops=160, await_ms=18, util_pct=80,
                                      write_bytes_per_s=17 * MB)},
                   nics={"eth0": Nic(send_bytes_per_s=9.3 * MB, recv_bytes_per_s=0.9 * MB,
                                     speed_mbps=100)})
              for w in iowait]
    return host_ticks(before + during), len(before)


SEED_000_WAI = [51, 47, 53, 47, 59, 48, 48, 48, 48]
SEED_000_REPLICA_WAI = [0, 0, 0, 0, 0, 0, 0, 0, 0]

SEEDS = [
    SeedScenario("seed 000 dd 12.6 MB/s over DRBD on a 100 Mbit link", "link_saturation",
                 lambda: _seed_000_dd(100)),
    SeedScenario("seed 000 same dd on a 1 Gbit link", "", lambda: _seed_000_dd(1000)),
    SeedScenario("seed 001 round trip 0.3 -> 10 ms, semi-sync on", "latency_bound",
                 lambda: _seed_001_rtt(10.5, True)),
    SeedScenario("seed 001 round trip stays at 0.3 ms", "", lambda: _seed_001_rtt(0.299, True)),
    SeedScenario("seed 003 randrw 16k nobcache: 468 IOPS, 30 in flight", "disk_saturation",
                 lambda: _seed_003_vm(468)),
    SeedScenario("seed 003 randrw 16k writeback: 1243 IOPS, 30 in flight", "",
                 lambda: _seed_003_vm(1243)),
    SeedScenario("seed 003 OSD disk: slow ops > 500 ms, writeback cache full",
                 "disk_saturation", _seed_003_osd, min_severity=Severity.CRITICAL),
    SeedScenario("seed 000 sysbench prepare: primary iowait ~50 %", "disk_saturation",
                 lambda: _seed_000_prepare(SEED_000_WAI)),
    SeedScenario("seed 000 replica during prepare: iowait 0 %", "",
                 lambda: _seed_000_prepare(SEED_000_REPLICA_WAI)),
]

# The lab cannot saturate a link (loopback has no speed), slow a disk or add network
# delay (no netem in this kernel); it can show that a healthy pair under load stays quiet.
LAB = [
    LabScenario("healthy lab under write load: host checks quiet", "", induce=nothing,
                load={"rate": 300}, healthy_ticks=2, ticks=10),
]
