"""disk_saturation on host ticks built from /proc counters (replmon.testing.scenarios.host), on the
real capture pair (tests/fixtures/host/a -> b), and on the seeds' own numbers: seed 003
(fio on Ceph RBD behind bcache: IOPS, slow ops > 500 ms, unstable IOPS once the writeback
cache is full) and seed 000 (primary iowait 47-59 % while writing 13-21 MB/s)."""

from __future__ import annotations

from pathlib import Path

import pytest
from replmon.checks.disk_saturation import CHECK

from replmon.model.base import SourceState, SourceStatus
from replmon.model.findings import Observation, Severity
from replmon.model.host import DiskCounters, HostSample
from replmon.model.host_rates import derive_host_rates
from replmon.model.tick import NodeRates
from replmon.sources.host_parse import build_host_sample
from replmon.testing.scenarios.host import SEED_000_WAI, SEEDS, Disk, Load, host_ticks
from replmon.testing.synth import node, observe, run_check, tick

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "host"
T_A, T_B = 5327.130409911, 5328.805380011  # the captures' time.monotonic() (fixtures README)


def capture(name: str, mono: float) -> HostSample:
    root = FIXTURES / name
    files: dict[str, str | None] = {"/" + p.relative_to(root).as_posix(): p.read_text()
                                    for p in root.rglob("*") if p.is_file()}
    return build_host_sample(files).model_copy(update={"mono": mono, "wall": mono})


def fio(iops: float, in_flight: int = 30, util: float = 100.0, iowait: float = 8.0) -> Load:
    """fio randrw at depth 1 x ``in_flight`` jobs: await = in_flight / IOPS (Little's law)."""
    return Load(iowait=iowait, disks={"vda": Disk(read_iops=iops / 2, write_iops=iops / 2,
                                                  await_ms=1000 * in_flight / iops,
                                                  util_pct=util)})


def seen(*loads: Load) -> list[Observation]:
    return observe(CHECK, host_ticks([loads[0], *loads]))


def test_seed_003_randrw_without_bcache_468_iops_queue_64_ms() -> None:
    (o,) = seen(fio(468))
    assert o.node == "primary" and o.key == "vda" and o.severity is Severity.WARNING
    assert o.title == "vda await 64 ms at 100 % busy, 468 IOPS"
    assert o.numbers["await_ms"] == pytest.approx(64.1, abs=0.1)
    assert o.numbers["queue"] == pytest.approx(30, abs=0.1)  # the 30 fio jobs
    assert "requests queue" in o.cause


def test_seed_003_randrw_writeback_1243_iops_24_ms_is_quiet() -> None:
    assert seen(fio(1243)) == []


def test_seed_003_osd_slow_ops_then_unstable_iops() -> None:
    sc = next(s for s in SEEDS if "OSD" in s.name)
    ticks, onset = sc.build()
    obs = {o.key: o for o in observe(CHECK, ticks[: onset + 1])}
    assert sorted(obs) == ["iowait", "sdb"]  # bcache0 (stacked on sdb) is skipped
    o = obs["sdb"]
    assert o.severity is Severity.CRITICAL
    assert o.title == "sdb await 540 ms at 100 % busy, 310 IOPS"
    assert "slow ops" in o.cause
    # once the window holds ten jumpy ticks the title names the writeback cache too
    obs = {o.key: o for o in observe(CHECK, ticks[: onset + 10])}
    o = obs["sdb"]
    assert "IOPS unstable" in o.title and "writeback cache full?" in o.title
    cv = o.numbers["iops_cv"]
    assert isinstance(cv, float) and cv > 0.5


def test_erratic_iops_alone_warn_after_the_window_fills() -> None:
    steady = Load(disks={"sdb": Disk(write_iops=900, await_ms=4, util_pct=70)})
    jumpy = [Load(disks={"sdb": Disk(write_iops=w, await_ms=6, util_pct=80)})
             for w in [1600, 200, 1500, 150, 1700, 300, 1400, 250, 1650, 180, 1550, 220]]
    ticks = host_ticks([steady] * 12 + jumpy)
    _, opened = run_check(CHECK, ticks)
    (seq,) = opened
    (f,) = opened[seq]
    assert f.severity is Severity.WARNING and f.key == "sdb"
    assert f.title.startswith("sdb IOPS unstable: mean ") and "writeback cache full?" in f.title
    assert seq - 12 < 12  # within a window plus open_after of the onset (tick 12)


def test_a_load_that_starts_or_pauses_is_not_erratic() -> None:
    idle = Load(disks={"sdb": Disk(write_iops=0, util_pct=0)})
    busy = Load(disks={"sdb": Disk(write_iops=1000, await_ms=5, util_pct=60)})
    for k in range(1, 10):
        assert observe(CHECK, host_ticks([idle] * (11 - k) + [busy] * k)) == [], k
        pause = [busy] * 5 + [idle] * k + [busy] * 6
        assert observe(CHECK, host_ticks(pause)[:11 + k]) == [], k


def test_erratic_but_light_load_is_quiet() -> None:
    jumpy = [Load(disks={"sdb": Disk(write_iops=w, await_ms=2, util_pct=5)})
             for w in [60, 2, 70, 1, 55, 3, 65, 2, 60, 4, 70]]
    assert observe(CHECK, host_ticks(jumpy)) == []


def test_seed_000_primary_iowait_warns_and_the_replica_stays_quiet() -> None:
    sc = next(s for s in SEEDS if s.name.startswith("seed 000 sysbench prepare"))
    ticks, onset = sc.build()
    (o,) = observe(CHECK, ticks[: onset + 1])
    assert o.key == "iowait" and o.severity is Severity.WARNING
    assert o.title == f"iowait {SEED_000_WAI[0]} % of CPU time (sda await 18 ms, 80 % busy)"
    assert "DRBD" not in o.cause
    assert observe(CHECK, [t.model_copy(update={"primary": t.replica}) for t in ticks]) == []


def test_iowait_with_drbd_protocol_c_mentions_the_peer() -> None:
    ld = Load(iowait=48, drbd_sent_kib_s=9000.0)
    (o,) = seen(ld)
    assert "protocol C" in o.cause and "peer" in o.cause


@pytest.mark.parametrize(("disk", "expect"), [
    (Disk(write_iops=10, await_ms=80, util_pct=40), None),     # slow but not busy
    (Disk(write_iops=3, await_ms=900, util_pct=100), None),    # three requests: noise
    (Disk(write_iops=10, await_ms=600, util_pct=30), Severity.CRITICAL),  # slow ops
    (Disk(write_iops=200, await_ms=49, util_pct=100), None),   # just under 50 ms
    (Disk(write_iops=200, await_ms=51, util_pct=90), Severity.WARNING),
])
def test_await_rules(disk: Disk, expect: Severity | None) -> None:
    obs = seen(Load(disks={"sda": disk}))
    assert [o.severity for o in obs] == ([] if expect is None else [expect])


def test_stacked_devices_are_skipped_when_a_real_disk_is_there() -> None:
    slow = Disk(write_iops=200, await_ms=120, util_pct=100)
    obs = seen(Load(disks={"sda": Disk(write_iops=200, await_ms=3, util_pct=40),
                           "dm-0": Disk(write_iops=200, await_ms=120, util_pct=100,
                                        stacked=True),
                           "bcache0": slow}))
    assert obs == []
    (o,) = seen(Load(disks={"dm-0": Disk(write_iops=200, await_ms=120, util_pct=100,
                                         stacked=True)}))
    assert o.key == "dm-0"  # nothing else to judge on this node


def test_real_capture_under_dd_is_quiet() -> None:
    a, b = capture("a", T_A), capture("b", T_B)
    rates = derive_host_rates(a, b)
    assert rates.disks["vda"].read_iops == pytest.approx(460, abs=1)
    t = tick(1, primary=node("primary", host=b, rates=NodeRates(host=rates)))
    assert observe(CHECK, [t]) == []


def test_first_tick_and_counter_reset_are_quiet() -> None:
    assert observe(CHECK, host_ticks([fio(468)])) == []
    prev = HostSample(mono=0.0, disks={"vda": DiskCounters(reads=10**6, read_ms=10**9)})
    cur = HostSample(mono=1.0, disks={"vda": DiskCounters(reads=500, read_ms=40_000,
                                                          io_ms=1000)})
    rates = derive_host_rates(prev, cur)
    assert rates.disks["vda"].await_ms is None
    t = tick(1, primary=node("primary", host=cur, rates=NodeRates(host=rates)))
    assert observe(CHECK, [t]) == []


def test_host_source_down_is_not_judged() -> None:
    t = host_ticks([fio(468, iowait=60)] * 2)[1]
    down = t.primary.host.model_copy(update={"status": SourceStatus(
        state=SourceState.TIMEOUT, error="no answer in 2 s")})
    t2 = t.model_copy(update={"primary": t.primary.model_copy(update={"host": down})})
    assert observe(CHECK, [t2]) == []


def test_opens_on_the_third_slow_tick() -> None:
    _, opened = run_check(CHECK, host_ticks([fio(1243)] * 5 + [fio(468)] * 4))
    assert list(opened) == [7]


def test_bursty_iops_on_a_mostly_idle_disk_is_not_erratic() -> None:
    """The healthy lab under load: ~76 IOPS of bursty flushes at low utilisation swung
    with CV 0.91; nobody waits on that disk, so it is not a finding."""
    from replmon.checks.disk_saturation import CHECK, Limits

    from replmon.check import Window
    from replmon.model.host import DiskCounters, DiskRates, HostRates, HostSample
    from replmon.model.tick import NodeRates
    from replmon.testing.synth import node, tick

    ticks = []
    for i, iops in enumerate([10, 150, 5, 160, 8, 140, 12, 155, 6, 150, 9, 145]):
        d = DiskRates(read_iops=0.0, write_iops=float(iops), await_ms=0.5, util_pct=3.0)
        rates = NodeRates(host=HostRates(disks={"vda": d}, cpu_iowait_pct=0.0))
        host = HostSample(disks={"vda": DiskCounters()})
        ticks.append(tick(i, primary=node("primary", host=host, rates=rates)))
    assert CHECK.evaluate(Window(ticks), Limits()) == []
    busy = Limits(cv_min_util_pct=1.0)  # the same swings on a busy disk do flag
    assert [o.key for o in CHECK.evaluate(Window(ticks), busy)] == ["vda"]
