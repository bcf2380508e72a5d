"""link_saturation on host ticks built from /proc counters (replmon.testing.scenarios.host) and on
seed 000's own numbers: dd at 12.6 MB/s over DRBD protocol C on a 100 Mbit link."""

from __future__ import annotations

from pathlib import Path

import pytest
from replmon.checks.link_saturation import CHECK

from replmon.check import Window
from replmon.model.base import SourceState, SourceStatus
from replmon.model.findings import Observation, Severity
from replmon.model.host import HostSample, NicCounters
from replmon.model.host_rates import derive_host_rates
from replmon.model.tick import NodeRates
from replmon.sources.host_parse import build_host_sample
from replmon.testing.scenarios.host import MB, SEEDS, Disk, Load, Nic, host_ticks
from replmon.testing.synth import node, observe, run_check, tick

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "host"
T_A, T_B = 5327.130409911, 5328.805380011  # the captures' time.monotonic() (fixtures README)


def load(name: str, mono: float) -> HostSample:
    """A real /proc + /sys capture (tests/fixtures/host/<name>) as a sample taken at ``mono``."""
    root = FIXTURES / name
    files: dict[str, str | None] = {"/" + p.relative_to(root).as_posix(): p.read_text()
                                    for p in root.rglob("*") if p.is_file()}
    return build_host_sample(files).model_copy(update={"mono": mono, "wall": mono})


def sending(bps: float, speed: int | None = 100, drbd: float | None = None,
            protocol: str = "C", recv: float = 300e3) -> Load:
    return Load(nics={"eth0": Nic(send_bytes_per_s=bps, recv_bytes_per_s=recv,
                                  speed_mbps=speed)},
                drbd_sent_kib_s=drbd, protocol=protocol)


def seen(p: Load, r: Load | None = None, **limits: object) -> list[Observation]:
    return observe(CHECK, host_ticks([p, p], [r, r] if r else None), **limits)


def test_seed_000_dd_at_12_6_mb_s_fills_the_100_mbit_link() -> None:
    (o,) = seen(sending(12.6 * MB, drbd=12.6 * MB * 0.97 / 1024))
    assert o.node == "primary" and o.key == "eth0"
    # bytes IEC as every view writes them (12.6 MB/s is 12 MiB/s), link speeds in bits
    assert o.title == "eth0 sends 12 MiB/s = 101 % of 100 Mbit/s"
    assert o.severity is Severity.CRITICAL  # >= 95 %
    assert o.numbers["link_pct"] == pytest.approx(100.8, abs=0.1)
    assert o.numbers["speed_mbps"] == 100
    assert "DRBD replication sends 12 MiB/s" in o.cause and "0/peer/0" in o.cause
    assert "protocol C" in o.cause and "capped at the link speed" in o.cause
    assert "resync" in o.next_step


def test_seed_000_same_rate_on_gigabit_is_quiet() -> None:
    assert seen(sending(12.6 * MB, speed=1000, drbd=12.0 * 1000)) == []


@pytest.mark.parametrize(("mb", "sev"), [
    (10.5, None),               # 84.0 %: just under
    (10.7, Severity.WARNING),   # 85.6 %
    (11.8, Severity.WARNING),   # 94.4 %
    (11.9, Severity.CRITICAL),  # 95.2 %
])
def test_thresholds(mb: float, sev: Severity | None) -> None:
    obs = seen(sending(mb * MB))
    if sev is None:
        assert obs == []
    else:
        (o,) = obs
        assert o.severity is sev
        assert f"= {mb * 8:.0f} % of 100 Mbit/s" in o.title


def test_warning_between_85_and_95_percent_with_a_generic_cause_without_drbd() -> None:
    (o,) = seen(sending(11.0 * MB))  # 88 %
    assert o.severity is Severity.WARNING
    assert "88 % of 100 Mbit/s" in o.title
    assert "DRBD" not in o.cause.split(":")[0] and o.numbers["drbd_sent_kib_s"] is None


def test_asynchronous_drbd_says_the_peer_falls_behind() -> None:
    (o,) = seen(sending(12.4 * MB, drbd=12.0 * MB / 1024, protocol="A"))
    assert "asynchronous peer falls further behind" in o.cause
    assert o.numbers["drbd_protocol_c"] is False


def test_resync_from_the_replica_saturates_its_link_too() -> None:
    quiet_primary = sending(0.5 * MB, drbd=0.0)
    (o,) = seen(quiet_primary, sending(12.2 * MB, drbd=11.8 * MB / 1024))
    assert o.node == "replica" and "eth0 sends 12 MiB/s = 98 %" in o.title


def test_a_full_receive_side_is_left_to_the_sender() -> None:
    # the replica of seed 000 receives the primary's 12.6 MB/s: one finding, on the primary
    obs = seen(sending(12.6 * MB, drbd=12.2 * MB / 1024),
               sending(320e3, recv=12.6 * MB, drbd=0.0))
    assert [o.node for o in obs] == ["primary"]


def test_unknown_link_speed_gives_no_finding() -> None:
    assert seen(sending(12.6 * MB, speed=None, drbd=12.0 * MB / 1024)) == []


def test_real_capture_lo_at_12_mb_s_and_eth0_without_speed_is_quiet() -> None:
    a, b = load("a", T_A), load("b", T_B)
    rates = derive_host_rates(a, b)
    assert rates.nics["lo"].send_bytes_per_s == pytest.approx(12.0e6, rel=0.01)
    assert rates.nics["eth0"].speed_mbps is None  # virtio-net: speed -1
    t = tick(1, primary=node("primary", host=b, rates=NodeRates(host=rates)))
    assert observe(CHECK, [t]) == []
    # the same capture with a 100 Mb/s speed on lo is still quiet: lo is never judged
    b2 = b.model_copy(update={"nics": {**b.nics, "lo": b.nics["lo"].model_copy(
        update={"speed_mbps": 100})}})
    t2 = tick(1, primary=node("primary", host=b2, rates=NodeRates(host=derive_host_rates(a, b2))))
    assert observe(CHECK, [t2]) == []


def test_first_tick_has_no_rate_and_is_quiet() -> None:
    ticks = host_ticks([sending(12.6 * MB)])
    assert ticks[0].primary.rates.host.nics["eth0"].send_bytes_per_s is None
    assert observe(CHECK, ticks) == []


def test_counter_reset_is_quiet() -> None:
    prev = HostSample(mono=0.0, nics={"eth0": NicCounters(tx_bytes=900 * MB, speed_mbps=100)})
    cur = HostSample(mono=1.0, nics={"eth0": NicCounters(tx_bytes=12 * MB, speed_mbps=100)})
    rates = derive_host_rates(prev, cur)
    assert rates.nics["eth0"].send_bytes_per_s is None
    t = tick(1, primary=node("primary", host=cur, rates=NodeRates(host=rates)))
    assert observe(CHECK, [t]) == []


def test_host_source_down_is_not_judged() -> None:
    (t,) = host_ticks([sending(12.6 * MB)] * 2)[1:]
    down = t.primary.host.model_copy(update={"status": SourceStatus(
        state=SourceState.UNREACHABLE, error="ssh: connection refused")})
    t2 = t.model_copy(update={"primary": t.primary.model_copy(update={"host": down})})
    assert observe(CHECK, [t2]) == []


def test_opens_once_the_5_s_rate_has_held_3_s_and_a_two_tick_burst_never_opens() -> None:
    calm, full = sending(1 * MB), sending(12.5 * MB)
    _, opened = run_check(CHECK, host_ticks([calm] * 4 + [full] * 8))
    # ticks 4.. full: the rate over ticks 4-8 is the first 5 s one at 100 %, (4 full + 1
    # calm) / 5 = 10.2 MB/s = 82 % before it; held at ticks 8, 9, 10
    assert list(opened) == [10]
    _, opened = run_check(CHECK, host_ticks([calm] * 4 + [full] * 2 + [calm] * 4))
    assert opened == {}


def test_a_link_full_on_average_whose_ticks_swing_opens() -> None:
    """The two-host lab's shaped link under a loaded suite: 9.5-22.3 KB/s tick by tick on
    16,000 B/s, 100 % on average. One tick in three below 85 % kept a per-tick judge from
    ever holding 3 s; the 5 s rate holds."""
    swing = [sending(f * 12.5 * MB) for f in (1.39, 0.59, 1.02)] * 5
    assert any(s.nics["eth0"].send_bytes_per_s < 0.85 * 12.5 * MB for s in swing[:3])
    obs, opened = run_check(CHECK, host_ticks([sending(1 * MB)] + swing))
    assert opened, obs
    (o,) = observe(CHECK, host_ticks([sending(1 * MB)] + swing))
    assert o.numbers["link_pct"] == pytest.approx(100, abs=14)
    assert o.title.startswith("eth0 sends ")


def test_disk_load_does_not_matter_here() -> None:
    busy = Load(disks={"sda": Disk(write_iops=3000, await_ms=80, util_pct=100)},
                nics={"eth0": Nic(send_bytes_per_s=1 * MB, speed_mbps=100)})
    assert seen(busy) == []


def test_seed_scenarios_of_this_check_are_registered() -> None:
    names = [s.name for s in SEEDS if s.check == "link_saturation"]
    assert names and all("000" in n for n in names)


def test_the_gate_is_quiet_only_where_no_link_is_full() -> None:
    """``quiet`` on the gauges against ``evaluate`` over sends from 1 to 110 % of a link,
    with warning_pct from 10 to 200 and min_speed_mbps from -5 to 1000. An interface
    of speed -1 (unknown) is left out of the gauge: judged only by a min_speed_mbps
    below 1, where the gate is never quiet (its 6 MiB/s are -5,243 % of -1 Mbit/s,
    reported from a warning_pct of -10,000)."""
    gate = CHECK.gate
    assert gate is not None
    loads = [sending(pct / 100 * 100e6 / 8) for pct in (1, 50, 84, 86, 94, 96, 110)]
    loads.append(sending(6.25 * MB, speed=-1))
    limits = [CHECK.thresholds(**kw) for kw in (
        {}, *({"warning_pct": p} for p in (10.0, 50.0, 85.5, 95.0, 200.0)),
        *({"min_speed_mbps": m} for m in (-5, 0, 1, 100, 101, 1000)),
        {"min_speed_mbps": -5, "warning_pct": -10000.0})]
    quiet = seen_ = 0
    none = Load(nics={})  # the replica: no interface, only the primary's judged
    for p in loads:
        ticks = host_ticks([p, p], [none, none])
        g = gate.measure(Window(ticks))
        for th in limits:
            found = CHECK.evaluate(Window(ticks), th)
            if gate.quiet(g, th):
                assert not found, f"{p} {th} gauges {g}: {found}"
                quiet += 1
            seen_ += bool(found)
    assert quiet and seen_
