"""drbd_peer on the real DRBD fixtures (tests/fixtures/drbd, parsed by the real parser),
on seed 000's own figures, and on synthetic /proc/drbd sessions built the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from replmon.checks.drbd_peer import CHECK

from replmon.check import Window
from replmon.model.drbd import DrbdConnection, DrbdDevice, DrbdPeerDevice, DrbdResource, DrbdSample
from replmon.model.findings import Observation, Severity
from replmon.model.tick import Tick
from replmon.sources.drbd_parse import parse_drbdsetup_json, parse_proc_drbd
from replmon.testing.scenarios import drbd as sc
from replmon.testing.scenarios import run_seed_scenario
from replmon.testing.synth import node, observe, run_check, status, tick
from replmon.units import fmt_byte_rate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "drbd"
C, W, INFO = Severity.CRITICAL, Severity.WARNING, Severity.INFO


def fixture(name: str) -> DrbdSample:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return parse_drbdsetup_json(text) if name.endswith(".json") else parse_proc_drbd(text)


def on_primary(s: DrbdSample, replica: DrbdSample | None = None) -> list[Observation]:
    r = node("replica") if replica is None else node("replica", drbd=replica)
    return observe(CHECK, [tick(1, primary=node("primary", drbd=s), replica=r)])


def seen(obs: list[Observation]) -> set[tuple[Severity, str]]:
    return {(o.severity, o.key) for o in obs}


FIXTURE_EXPECT = [
    ("d9_status_clusterlabs.json", set()),
    ("s1_846_replica_connected.txt", set()),
    ("s9_838_connected_after_sync.txt", set()),
    ("seed_844_replica_connected.txt", set()),
    ("d9_status_peer_unreachable.json", {(W, "r0/faketwo"), (W, "r0/0/disk")}),
    ("s10_837_unconfigured.txt", {(W, "0/peer")}),
    ("s10_837_wfconnection_diskless.txt", {(W, "0/peer"), (W, "0/0/disk")}),
    ("s10_8411_connected_peer_diskless.txt", {(W, "0/peer/0/disk")}),
    ("s10_8411_syncsource_synced.txt", {(INFO, "0/peer/0/resync"), (W, "0/peer/0/disk")}),
    ("s10_8411_wfconnection_al_suspended.txt", {(W, "0/peer"), (W, "0/0/disk")}),
    ("s2_840_two_minors.txt", {(W, "0")}),  # minor 0 Secondary/Secondary: no Primary
    ("s3_8313_dual_primary_collapsed.txt", {(C, "0"), (C, "1")}),
    ("s4_8311_peer_gone_collapsed.txt", {(W, "0/peer"), (W, "1/peer")}),
    ("s5_846_controller1_standalone.txt", {(C, "1/peer")}),
    ("s5_846_controller2_wfconnection.txt", {(W, "1/peer"), (W, "1/0/disk")}),
    ("s7_8410_syncsource.txt", {(INFO, "0/peer/0/resync"), (W, "0/peer/0/disk")}),
    ("s7_8410_synctarget.txt", {(INFO, "0/peer/0/resync"), (W, "0/0/disk")}),
    ("s9_838_synctarget_queue_delay.txt", {(INFO, "0/peer/0/resync"), (W, "0/0/disk")}),
    ("s11_8013_syncsource_reconstructed.txt", {(INFO, "0/peer/0/resync"), (W, "0/peer/0/disk")}),
    ("seed_844_primary_wfconnection.txt", {(W, "0/peer")}),
    ("seed_844_primary_wfconnection_damaged.txt", {(W, "0/peer")}),
]


def test_every_fixture_has_an_expectation() -> None:
    names = {p.name for p in FIXTURES.iterdir() if p.suffix in (".txt", ".json")}
    assert {n for n, _ in FIXTURE_EXPECT} == names - {"d9_proc_9022.txt"}


@pytest.mark.parametrize(("name", "want"), FIXTURE_EXPECT, ids=[n for n, _ in FIXTURE_EXPECT])
def test_real_fixtures(name: str, want: set[tuple[Severity, str]]) -> None:
    assert seen(on_primary(fixture(name))) == want


def test_fixture_titles_carry_the_numbers() -> None:
    (o,) = on_primary(fixture("s5_846_controller1_standalone.txt"))
    # DRBD's KiB as every view writes sizes: 40,448,716 KiB is 38.6 GiB
    assert "possible split brain" in o.title and "out-of-sync 39 GiB" in o.title
    obs = {o.key: o for o in on_primary(fixture("s7_8410_syncsource.txt"))}
    r = obs["0/peer/0/resync"]
    assert "28.3 %" in r.title and "33 MiB/s" in r.title and "ETA 3 min 42 s" in r.title
    assert r.numbers["eta_s"] == 222
    (dual, _) = on_primary(fixture("s3_8313_dual_primary_collapsed.txt"))
    assert dual.node == "pair" and "Primary on both nodes (Connected)" in dual.title
    assert "cluster file system" in dual.cause


def test_seed_000_primary_wfconnection_own_figures() -> None:
    # db163 after `crm node standby db162`: cs:WFConnection ro:Primary/Unknown
    # ds:UpToDate/DUnknown, oos:308 then oos:65724.
    (o,) = on_primary(fixture("seed_844_primary_wfconnection.txt"))
    assert o.node == "primary" and o.severity is W
    assert "WFConnection" in o.title and "Primary/Unknown UpToDate/DUnknown" in o.title
    assert "out-of-sync 64 MiB" in o.title and o.numbers["out_of_sync_kib"] == 65724
    assert "failover now loses" in o.cause


def test_seed_000_session_flags_within_3_ticks_with_growth_rate() -> None:
    ticks, onset = sc.seed_000_disconnect()
    assert observe(CHECK, ticks[:onset]) == []  # connected: quiet
    open_now, opened = run_check(CHECK, ticks)
    assert list(opened) == [onset + 2]
    (f,) = open_now
    assert f.key == "0/peer" and f.severity is W and f.since_seq == onset
    growth = f.numbers["out_of_sync_growth_kib_s"]
    assert isinstance(growth, float) and growth == pytest.approx((65724 - 308) / 9, rel=0.01)
    assert f"(+{fmt_byte_rate(growth * 1024)})" in f.title and "64 MiB" in f.title
    assert "(+7.1 MiB/s)" in f.title


def test_disconnect_turns_critical_after_the_grace() -> None:
    ticks, onset = sc.seed_000_disconnect(disconnected=25)
    obs = observe(CHECK, ticks)
    (o,) = obs
    assert o.severity is C and o.numbers["down_s"] == 24.0
    assert observe(CHECK, ticks, disconnected_critical_s=30)[0].severity is W


def test_seed_scenarios_meet_the_target() -> None:
    bad, quiet = (run_seed_scenario(s) for s in sc.SEEDS if s.check in ("drbd_peer", ""))
    assert bad.ticks_to_flag == 3
    assert quiet.above_info() == [] and quiet.opened == {}


@pytest.mark.parametrize("cs", ["WFConnection", "NetworkFailure", "BrokenPipe", "Timeout",
                                "Unconnected", "Disconnecting", "ProtocolError", "TearDown",
                                "WFReportParams"])
def test_transient_states_are_disconnected(cs: str) -> None:
    (o,) = on_primary(parse_proc_drbd(sc.proc84(cs, "Primary/Unknown", "UpToDate/DUnknown")))
    assert o.key == "0/peer" and cs in o.title


def two(p: str, r: str, **limits: object) -> list[Observation]:
    ticks = sc.drbd_session([(p, r)])
    return observe(CHECK, ticks, **limits)


def test_two_primaries_seen_from_both_nodes_disconnected_is_critical() -> None:
    p = sc.proc84("WFConnection", "Primary/Unknown", "UpToDate/DUnknown", oos=500)
    r = sc.proc84("StandAlone", "Primary/Unknown", "UpToDate/DUnknown", oos=700)
    obs = {(o.node, o.key): o for o in two(p, r, allow_two_primaries=True)}
    pair = obs[("pair", "0")]
    assert pair.severity is C and "not connected" in pair.title and "diverges" in pair.cause
    assert obs[("replica", "0/peer")].severity is C  # StandAlone: possible split brain


def test_two_primaries_connected_allowed_by_setting() -> None:
    p = sc.proc84(ro="Primary/Primary")
    r = sc.proc84(ro="Primary/Primary")
    assert seen(two(p, r)) == {(C, "0")}
    assert two(p, r, allow_two_primaries=True) == []


def test_no_primary_on_either_node() -> None:
    sec = sc.proc84(ro="Secondary/Secondary")
    (o,) = two(sec, sec)
    assert (o.node, o.severity, o.key) == ("pair", W, "0")
    # one node Secondary, the other unreadable, peer role Unknown: not judged
    only = sc.proc84("WFConnection", "Secondary/Unknown", "UpToDate/DUnknown")
    assert "0" not in {o.key for o in two(only, sc.HEADER)}


def test_primary_disk_not_uptodate_is_critical() -> None:
    p = sc.proc84(ro="Primary/Secondary", ds="Diskless/UpToDate")
    obs = {o.key: o for o in two(p, sc.proc84(ro="Secondary/Primary"))}
    assert obs["0/0/disk"].severity is C and "Diskless" in obs["0/0/disk"].title
    assert "over the network" in obs["0/0/disk"].cause


def test_replica_unfit_is_judged_once_from_the_replica_itself() -> None:
    p = sc.proc84(ro="Primary/Secondary", ds="UpToDate/Outdated")
    r = sc.proc84(ro="Secondary/Primary", ds="Outdated/UpToDate")
    (o,) = two(p, r)
    assert (o.node, o.key, o.severity) == ("replica", "0/0/disk", W)
    assert "Outdated" in o.title and "misses writes" in o.cause


def resync_texts(oos: int, *, stalled: bool = False, flags: str = "r-----") -> tuple[str, str]:
    tail = " (stalled)" if stalled else ""
    prog = ("\t[=====>..............] sync'ed: 28.3% (7352/10236)M\n"
            f"\tfinish: 0:03:42 speed: 33,904 (33,956) K/sec{tail}\n")
    p = sc.proc84("SyncSource", "Primary/Secondary", "UpToDate/Inconsistent", oos=oos,
                  flags=flags) + prog
    r = sc.proc84("SyncTarget", "Secondary/Primary", "Inconsistent/UpToDate", oos=oos,
                  flags=flags) + prog
    return p, r


def test_resync_reported_once_from_the_primary() -> None:
    obs = two(*resync_texts(7530908))
    assert seen(obs) == {(INFO, "0/peer/0/resync"), (W, "0/0/disk")}
    assert [o.node for o in obs if o.key.endswith("resync")] == ["primary"]


@pytest.mark.parametrize(("kw", "word"), [({"stalled": True}, "stalled"),
                                          ({"flags": "r--u--"}, "paused (user)")])
def test_resync_stalled_or_paused_is_a_warning(kw: dict[str, object], word: str) -> None:
    obs = {o.key: o for o in two(*resync_texts(7530908, **kw))}  # type: ignore[arg-type]
    assert obs["0/peer/0/resync"].severity is W and word in obs["0/peer/0/resync"].title


def test_resync_without_progress_over_the_stall_time_is_stalled() -> None:
    flat = sc.drbd_session([resync_texts(7530908)] * 8)
    falling = sc.drbd_session([resync_texts(7530908 - i * 30000) for i in range(8)])
    key = "0/peer/0/resync"
    assert {o.key: o.severity for o in observe(CHECK, flat, resync_stall_s=5)}[key] is W
    assert {o.key: o.severity for o in observe(CHECK, falling, resync_stall_s=5)}[key] is INFO
    # a window shorter than the stall time is not judged
    assert {o.key: o.severity for o in observe(CHECK, flat, resync_stall_s=60)}[key] is INFO


def test_io_suspended_flag_is_critical() -> None:
    p = sc.proc84(ro="Primary/Secondary", flags="s-----")
    (o,) = two(p, sc.proc84(ro="Secondary/Primary"))
    assert (o.key, o.severity) == ("0/io", C) and "suspended" in o.title


def test_io_suspended_reasons_and_quorum_on_drbd9() -> None:
    res = DrbdResource(name="r0", role="Primary", suspended=True, suspend_reasons=["fencing"],
                       devices=[DrbdDevice(disk_state="UpToDate", quorum=False)])
    (o,) = on_primary(DrbdSample(flavour="9", resources=[res]))
    assert o.key == "r0/io" and "fencing, quorum lost" in o.title


def stall_session(n: int, *, dw_step: int = 0, ns_step: int = 0) -> list[Tick]:
    pairs = [(sc.proc84(ro="Primary/Secondary", ap=12, pe=8, ns=1000 + i * ns_step,
                        dw=1000 + i * dw_step), sc.proc84(ro="Secondary/Primary"))
             for i in range(n)]
    return sc.drbd_session(pairs)


def test_io_stalled_pending_stuck_counters_flat() -> None:
    (o,) = observe(CHECK, stall_session(6))
    assert (o.key, o.severity) == ("0/io", C) and "20 requests pending" in o.title
    assert observe(CHECK, stall_session(5)) == []  # first tick has no rates: 4 judged ticks
    assert observe(CHECK, stall_session(6, dw_step=100, ns_step=100)) == []  # moving: busy


def test_async_protocol_is_info_once() -> None:
    p = sc.proc84(ro="Primary/Secondary", proto="A")
    obs = two(p, sc.proc84(ro="Secondary/Primary", proto="A"))
    assert [(o.node, o.key, o.severity) for o in obs] == [("primary", "0/peer/protocol", INFO)]
    assert "may lose the last writes" in obs[0].cause


def test_intentional_diskless_client_is_not_a_fault() -> None:
    res = DrbdResource(name="r0", role="Secondary", devices=[
        DrbdDevice(disk_state="Diskless", client=True)], connections=[DrbdConnection(
            peer="bob", connection_state="Connected", peer_role="Primary",
            peer_devices=[DrbdPeerDevice(replication_state="Established",
                                         peer_disk_state="UpToDate")])])
    assert on_primary(DrbdSample(flavour="9", resources=[res])) == []


@pytest.mark.parametrize("state", ["absent", "unreachable", "timeout", "parse_error"])
def test_source_not_ok_is_not_judged_here(state: str) -> None:
    bad = DrbdSample(status=status(state, "no /proc/drbd"))
    assert on_primary(bad, replica=bad) == []


def test_counter_reset_on_reconnect_gives_no_rate_not_a_negative_one() -> None:
    # DRBD 8 zeroes ns on connect: the sent rate is None, so no I/O-stall verdict.
    pairs = [(sc.proc84(ro="Primary/Secondary", ap=3, ns=5000 if i < 4 else 0),
              sc.proc84(ro="Secondary/Primary")) for i in range(8)]
    assert observe(CHECK, sc.drbd_session(pairs)) == []


def test_online_verify_is_info_and_never_stalled_by_flat_out_of_sync() -> None:
    prog = ("\t[==>.................] verified: 12.0% (900/1024)M\n"
            "\tfinish: 0:01:10 speed: 13,000 (12,500) K/sec\n")
    p = sc.proc84("VerifyS", "Primary/Secondary", "UpToDate/UpToDate") + prog
    r = sc.proc84("VerifyT", "Secondary/Primary", "UpToDate/UpToDate") + prog
    (o,) = observe(CHECK, sc.drbd_session([(p, r)] * 8), resync_stall_s=5)
    assert (o.key, o.severity) == ("0/peer/0/resync", INFO) and "verify 12.0 % done" in o.title


def _gate_inputs() -> list[tuple[str, list[Tick]]]:
    """Sessions for every kind of finding: test_gates' recordings have a disconnected peer
    and an Outdated replica only, no stall, resync, dual Primary or suspended I/O."""
    healthy = (sc.proc84(ro="Primary/Secondary"), sc.proc84(ro="Secondary/Primary"))
    out = [(name, [tick(1, primary=node("primary", drbd=fixture(name)),
                        replica=node("replica"))]) for name, _ in FIXTURE_EXPECT]
    out += [
        ("healthy", sc.drbd_session([healthy] * 12)),
        ("dual primary", sc.drbd_session([(sc.proc84(ro="Primary/Primary"),) * 2] * 3)),
        ("no primary", sc.drbd_session([(sc.proc84(ro="Secondary/Secondary"),) * 2] * 3)),
        ("resync flat", sc.drbd_session([resync_texts(7530908)] * 8)),
        ("suspended", sc.drbd_session([(sc.proc84(ro="Primary/Secondary", flags="s-----"),
                                        healthy[1])] * 3)),
        ("async", sc.drbd_session([(sc.proc84(ro="Primary/Secondary", proto="A"),
                                    healthy[1])] * 3)),
        ("stall", stall_session(14)),
        ("stall at 0.2 s", sc.drbd_session([(sc.proc84(ro="Primary/Secondary", ap=12, pe=8),
                                             healthy[1])] * 40, interval=0.2)),
        ("stall then moving", stall_session(8) + stall_session(6, dw_step=100, ns_step=100)),
    ]
    return out


def test_the_gate_is_quiet_only_where_nothing_is_reported() -> None:
    """``quiet`` on the gauges against ``evaluate`` at every tick of sessions of every
    finding, with the stall's thresholds over a range (at 1 s and 0.2 s) and the dual
    Primary allowed or not: quiet only where evaluate finds nothing, and quiet on the
    healthy pair and a short enough stall."""
    gate = CHECK.gate
    assert gate is not None
    limits = [CHECK.thresholds(**kw) for kw in (
        {}, {"allow_two_primaries": True}, {"resync_stall_s": 5.0},
        {"disconnected_critical_s": 1.0},
        *({"io_stall": s} for s in (0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 8.0, 12.0, 200.0)),
        *({"io_stall": 1.0, "io_stall_min_samples": m} for m in (1, 3, 6, 10, 30)))]
    quiet = {}
    for name, ticks in _gate_inputs():
        n = max(1, round(CHECK.window / ticks[-1].interval))
        for i in range(1, len(ticks) + 1):
            w = Window(ticks[max(0, i - n):i])
            g = gate.measure(w)
            for th in limits:
                found = CHECK.evaluate(w, th)
                if gate.quiet(g, th):
                    assert not found, f"{name} tick {i} {th} gauges {g}: {found[0].title}"
                    quiet[name, th.io_stall] = True
    assert quiet.get(("healthy", 5.0)) and quiet.get(("stall", 200.0))
    assert quiet.get(("stall at 0.2 s", 5.0)) and quiet.get(("dual primary", 5.0))
