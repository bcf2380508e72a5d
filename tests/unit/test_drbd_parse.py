"""DRBD parsers on real outputs (tests/fixtures/drbd, see its README) plus the format
variants of reference/drbd.md §1.6-§1.8, malformed input, and Hypothesis fuzzing:
whatever the text, the parsers return a sample or raise ParseError, nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replmon.errors import ParseError
from replmon.model.base import SourceState
from replmon.model.drbd import DrbdResource, DrbdResync, DrbdSample
from replmon.sources.drbd_parse import (
    NO_PROGRESS_ETA,
    drbd_flavour,
    parse_drbdsetup_json,
    parse_proc_drbd,
    proc_version,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "drbd"
PROC_8 = sorted(p.name for p in FIXTURES.glob("s*.txt"))
JSON_9 = sorted(p.name for p in FIXTURES.glob("*.json"))
HEADER = "version: 8.4.6 (api:1/proto:86-101)\n"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def flat(r: DrbdResource) -> dict[str, Any]:
    """One 8.x minor as a flat dict of everything the parser fills (resync aside)."""
    (d,) = r.devices
    (c,) = r.connections
    (p,) = c.peer_devices
    return {
        "name": r.name, "minor": d.minor, "role": r.role, "peer_role": c.peer_role,
        "cs": c.cs, "conn": c.connection_state, "repl": p.replication_state,
        "disk": d.disk_state, "pdisk": p.peer_disk_state, "proto": c.protocol,
        "flags": c.io_flags, "susp": r.suspended, "wo": r.write_ordering,
        "ns": p.sent_kib, "nr": p.received_kib, "dw": d.written_kib, "dr": d.read_kib,
        "al": d.al_writes, "bm": d.bm_writes, "lo": d.lower_pending, "pe": p.pending,
        "ua": p.unacked, "ap": d.upper_pending, "ep": p.epochs, "oos": p.out_of_sync_kib,
    }


def m8(name: str, cs: str, conn: str, repl: str, ro: str, ds: str, proto: str | None,
       flags: str | None, wo: str | None, counters: str) -> dict[str, Any]:
    """Expected flat() of one minor, counters written as in /proc/drbd."""
    role, peer_role = ro.split("/")
    disk, pdisk = ds.split("/")
    nums: dict[str, int | None] = dict.fromkeys(
        ("ns", "nr", "dw", "dr", "al", "bm", "lo", "pe", "ua", "ap", "ep", "oos"))
    nums.update({k: int(v) for k, v in (kv.split(":") for kv in counters.split())})
    return {"name": name, "minor": int(name), "role": role, "peer_role": peer_role, "cs": cs,
            "conn": conn, "repl": repl, "disk": disk, "pdisk": pdisk, "proto": proto,
            "flags": flags, "susp": None if flags is None else False, "wo": wo, **nums}


EXPECTED_8: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("s1_846_replica_connected.txt", "8.4.6", [
        m8("0", "Connected", "Connected", "Established", "Secondary/Primary", "UpToDate/UpToDate",
           "C", "r-----", "flush", "ns:0 nr:397028104 dw:397028104 dr:0 al:0 bm:0 lo:0 pe:0 "
           "ua:0 ap:0 ep:1 oos:0")]),
    ("s2_840_two_minors.txt", "8.4.0", [
        m8("0", "Connected", "Connected", "Established", "Secondary/Secondary",
           "UpToDate/UpToDate", "C", "r-----", "barrier",
           "ns:0 nr:0 dw:0 dr:656 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 oos:0"),
        m8("1", "Connected", "Connected", "Established", "Primary/Secondary", "UpToDate/UpToDate",
           "C", "r---", "barrier",
           "ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 oos:0")]),
    ("s3_8313_dual_primary_collapsed.txt", "8.3.13", [
        m8("0", "Connected", "Connected", "Established", "Primary/Primary", "UpToDate/UpToDate",
           "C", "r-----", "barrier", "ns:1120832 nr:0 dw:0 dr:1133040 al:0 bm:131 lo:0 pe:0 ua:0 "
           "ap:0 ep:1 oos:0"),
        m8("1", "Connected", "Connected", "Established", "Primary/Primary", "UpToDate/UpToDate",
           "C", "r-----", "barrier", "ns:1053276 nr:0 dw:0 dr:1060356 al:0 bm:142 lo:0 pe:0 ua:0 "
           "ap:0 ep:1 oos:0")]),
    ("s4_8311_peer_gone_collapsed.txt", "8.3.11", [
        m8("0", "WFConnection", "Connecting", "Off", "Primary/Unknown", "UpToDate/Outdated", "C",
           "r-----", "flush", "ns:4 nr:12 dw:16 dr:937 al:0 bm:2 lo:0 pe:0 ua:0 ap:0 ep:1 oos:0"),
        m8("1", "WFConnection", "Connecting", "Off", "Primary/Unknown", "UpToDate/Inconsistent",
           "C", "r-----", "flush", "ns:10167368 nr:1357185492 dw:2024894776 dr:67769600 "
           "al:326677858 bm:1111517 lo:2 pe:0 ua:0 ap:1 ep:1 oos:305611780")]),
    ("s5_846_controller2_wfconnection.txt", "8.4.6", [
        m8("1", "WFConnection", "Connecting", "Off", "Secondary/Unknown", "Inconsistent/DUnknown",
           "C", "r-----", "flush", "ns:484 nr:72025332 dw:72025816 dr:9301 al:6 bm:0 lo:0 pe:0 "
           "ua:0 ap:0 ep:1 oos:40448704")]),
    ("s5_846_controller1_standalone.txt", "8.4.6", [
        m8("1", "StandAlone", "StandAlone", "Off", "Primary/Unknown", "UpToDate/Inconsistent",
           None, "r-----", "flush", "ns:72181000 nr:484 dw:71846132 dr:42275122 al:803 bm:0 "
           "lo:0 pe:0 ua:0 ap:0 ep:1 oos:40448716")]),
    ("s7_8410_syncsource.txt", "8.4.10", [
        m8("0", "SyncSource", "Connected", "SyncSource", "Primary/Secondary",
           "UpToDate/Inconsistent", "C", "r-----", "flush", "ns:2956160 nr:0 dw:0 dr:2956160 "
           "al:8 bm:0 lo:0 pe:13 ua:0 ap:0 ep:1 oos:7530908")]),
    ("s7_8410_synctarget.txt", "8.4.10", [
        m8("0", "SyncTarget", "Connected", "SyncTarget", "Secondary/Primary",
           "Inconsistent/UpToDate", "C", "r-----", "flush", "ns:0 nr:3917184 dw:3917184 dr:0 "
           "al:8 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 oos:6568220")]),
    ("s9_838_synctarget_queue_delay.txt", "8.3.8", [
        m8("0", "SyncTarget", "Connected", "SyncTarget", "Secondary/Primary",
           "Inconsistent/UpToDate", "C", "r----", "barrier", "ns:0 nr:210272 dw:210272 dr:0 "
           "al:0 bm:12 lo:1 pe:2682 ua:0 ap:0 ep:1 oos:813660")]),
    ("s9_838_connected_after_sync.txt", "8.3.8", [
        m8("0", "Connected", "Connected", "Established", "Secondary/Primary", "UpToDate/UpToDate",
           "C", "r----", "barrier", "ns:0 nr:1023932 dw:1023932 dr:0 al:0 bm:63 lo:0 pe:0 ua:0 "
           "ap:0 ep:1 oos:0")]),
    ("s10_837_unconfigured.txt", "8.3.7", [
        m8("0", "Unconfigured", "StandAlone", "Off", "Secondary/Unknown", "Diskless/DUnknown",
           None, None, None, "")]),
    ("s10_837_wfconnection_diskless.txt", "8.3.7", [
        m8("0", "WFConnection", "Connecting", "Off", "Secondary/Unknown", "Diskless/DUnknown", "C",
           "r----", "barrier", "ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 oos:0")]),
    ("s10_8411_connected_peer_diskless.txt", "8.4.11-1", [
        m8("0", "Connected", "Connected", "Established", "Primary/Secondary", "UpToDate/Diskless",
           "C", "r-----", "flush", "ns:0 nr:0 dw:0 dr:2120 al:8 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 "
           "oos:10481308")]),
    ("s10_8411_wfconnection_al_suspended.txt", "8.4.11-1", [
        m8("0", "WFConnection", "Connecting", "Off", "Secondary/Unknown", "Inconsistent/DUnknown",
           "C", "r----s", "flush", "ns:0 nr:0 dw:0 dr:0 al:8 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 "
           "oos:10481308")]),
    ("s10_8411_syncsource_synced.txt", "8.4.11-1", [
        m8("0", "SyncSource", "Connected", "SyncSource", "Primary/Secondary",
           "UpToDate/Inconsistent", "C", "r-----", "flush", "ns:7785472 nr:0 dw:0 dr:7787592 "
           "al:8 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 oos:2695836")]),
    ("s11_8013_syncsource_reconstructed.txt", "8.0.13", [
        m8("0", "SyncSource", "Connected", "SyncSource", "Primary/Secondary",
           "UpToDate/Inconsistent", "C", "r---", None, "ns:1470888 nr:0 dw:0 dr:0 al:0 bm:0 "
           "lo:248 pe:8 ua:253 ap:0")]),
    ("seed_844_primary_wfconnection_damaged.txt", "8.4.4", [
        m8("0", "WFConnection", "Connecting", "Off", "Primary/Unknown", "UpToDate/DUnknown", "C",
           "r-----", "flush", "ns:6074648 nr:0 dw:6075004 dr:294960 al:466 bm:0 lo:0 pe:0 ua:0 "
           "ap:0 ep:1 oos:308")]),
    ("seed_844_replica_connected.txt", "8.4.4", [
        m8("0", "Connected", "Connected", "Established", "Secondary/Primary", "UpToDate/UpToDate",
           "C", "r-----", "flush", "ns:0 nr:38064 dw:38064 dr:0 al:0 bm:18 lo:0 pe:0 ua:0 ap:0 "
           "ep:1 oos:0")]),
    ("seed_844_primary_wfconnection.txt", "8.4.4", [
        m8("0", "WFConnection", "Connecting", "Off", "Primary/Unknown", "UpToDate/DUnknown", "C",
           "r-----", "drain", "ns:10309484 nr:0 dw:10407952 dr:533640 al:1514 bm:18 lo:0 pe:0 "
           "ua:0 ap:0 ep:1 oos:65724")]),
]


def test_every_8x_fixture_has_expectations() -> None:
    assert sorted(name for name, _, _ in EXPECTED_8) == PROC_8


@pytest.mark.parametrize(("name", "version", "minors"), EXPECTED_8,
                         ids=[e[0] for e in EXPECTED_8])
def test_proc_drbd_fixture_exact_values(name: str, version: str,
                                        minors: list[dict[str, Any]]) -> None:
    s = parse_proc_drbd(text(name))
    assert (s.version, s.flavour, s.status.state) == (version, "8", SourceState.OK)
    assert [flat(r) for r in s.resources] == minors
    for r in s.resources:
        assert r.connections[0].peer == "peer"
        assert r.devices[0].volume == 0
        assert r.connections[0].peer_devices[0].volume == 0
    assert drbd_flavour(text(name)) == "8"


RESYNC_8: list[tuple[str, DrbdResync]] = [
    ("s7_8410_syncsource.txt", DrbdResync(
        percent_done=28.3, left_kib=7352 * 1024, total_kib=10236 * 1024, eta_s=3 * 60 + 42,
        speed_kib_s=33904, avg_speed_kib_s=33956)),
    ("s7_8410_synctarget.txt", DrbdResync(
        percent_done=37.4, left_kib=6412 * 1024, total_kib=10236 * 1024, eta_s=3 * 60 + 5,
        speed_kib_s=35360, avg_speed_kib_s=34060, want_kib_s=50040)),
    ("s9_838_synctarget_queue_delay.txt", DrbdResync(
        percent_done=20.8, left_kib=813660, total_kib=1023932, eta_s=90,
        speed_kib_s=8976, avg_speed_kib_s=6368, want_kib_s=1024000)),
    ("s10_8411_syncsource_synced.txt", DrbdResync(
        percent_done=74.3, left_kib=2632 * 1024, total_kib=10232 * 1024, eta_s=62,
        speed_kib_s=42948, avg_speed_kib_s=36208)),
    ("s11_8013_syncsource_reconstructed.txt", DrbdResync(
        percent_done=0.2, left_kib=1300156 * 1024, total_kib=1301592 * 1024,
        eta_s=3 * 3600 + 11 * 60 + 56, speed_kib_s=115524, avg_speed_kib_s=105032)),
]


@pytest.mark.parametrize(("name", "want"), RESYNC_8, ids=[r[0] for r in RESYNC_8])
def test_resync_progress_exact_values(name: str, want: DrbdResync) -> None:
    (r,) = parse_proc_drbd(text(name)).resources
    assert r.connections[0].peer_devices[0].resync == want


@pytest.mark.parametrize("name", [n for n in PROC_8 if n not in {r[0] for r in RESYNC_8}])
def test_no_resync_outside_sync_states(name: str) -> None:
    for r in parse_proc_drbd(text(name)).resources:
        assert r.connections[0].peer_devices[0].resync is None


def test_in_kernel_drbd_built_in_header_reads_every_minor() -> None:
    """#19: DRBD compiled into the kernel prints ``built-in`` where a module prints its
    srcversion. S4 (8.3.11, real) with that one line edited: both minors read, no note."""
    real = text("s4_8311_peer_gone_collapsed.txt")
    assert "srcversion: F937DCB2E5D83C6CCE4A6C9" in real
    sample = parse_proc_drbd(real.replace("srcversion: F937DCB2E5D83C6CCE4A6C9", "built-in"))
    assert [r.name for r in sample.resources] == ["0", "1"] and sample.notes == []
    assert sample.resources[1].connections[0].peer_devices[0].out_of_sync_kib == 305611780


def test_an_unknown_header_line_costs_a_note_not_the_resources() -> None:
    real = text("s1_846_replica_connected.txt")
    lines = real.splitlines(keepends=True)
    sample = parse_proc_drbd(lines[0] + "Something new: a header form of DRBD 8.4.99\n"
                             + "".join(lines[1:]))
    assert [r.name for r in sample.resources] == ["0"]
    assert sample.resources[0].connections[0].cs == "Connected"
    assert len(sample.notes) == 1 and "line 2: unknown header line" in sample.notes[0]


def test_progress_line_without_a_unit_keeps_left_and_total() -> None:
    """S9 (8.3.8, real) with the K after (left/total) removed: read as KiB, not lost."""
    real = text("s9_838_synctarget_queue_delay.txt")
    assert "(813660/1023932)K" in real
    (r,) = parse_proc_drbd(real.replace("(813660/1023932)K", "(813660/1023932)")).resources
    resync = r.connections[0].peer_devices[0].resync
    assert resync is not None and (resync.left_kib, resync.total_kib) == (813660, 1023932)


def test_gap_blank_line_before_minor_1() -> None:
    raw = text("s5_846_controller2_wfconnection.txt")
    assert "\n\n 1:" in raw
    assert [r.name for r in parse_proc_drbd(raw).resources] == ["1"]


def test_seed_copies_with_nbsp_and_stray_spaces() -> None:
    damaged = text("seed_844_primary_wfconnection_damaged.txt")
    assert "\u00a0" in damaged
    assert "ro:Primary/ Unknown" in damaged
    (r,) = parse_proc_drbd(damaged).resources
    assert (r.role, r.connections[0].peer_role) == ("Primary", "Unknown")
    assert r.connections[0].peer_devices[0].peer_disk_state == "DUnknown"


def test_flags_decoded() -> None:
    (r,) = parse_proc_drbd(text("s10_8411_wfconnection_al_suspended.txt")).resources
    assert (r.suspended, r.devices[0].al_suspended, r.devices[0].blocked) == (False, True, "no")
    (s2_0, s2_1) = parse_proc_drbd(text("s2_840_two_minors.txt")).resources
    assert s2_0.devices[0].al_suspended is False
    assert (s2_1.devices[0].al_suspended, s2_1.devices[0].blocked) == (None, None)
    assert s2_1.connections[0].congested is None


@pytest.mark.parametrize(("flags", "susp", "held", "congested", "blocked"), [
    ("s-----", True, [], False, "no"),
    ("r-p---", False, ["peer"], False, "no"),
    ("r-pu--", False, ["user", "peer"], False, "no"),
    ("ra----", False, ["dependency"], False, "no"),
    ("r---n-", False, [], True, "no"),
    ("r---a-", False, [], True, "lower"),
    ("r---b-", False, [], False, "lower"),
    ("s---d-", True, [], False, "upper"),
])
def test_io_flag_meanings(flags: str, susp: bool, held: list[str], congested: bool,
                          blocked: str) -> None:
    raw = HEADER + (f" 0: cs:PausedSyncT ro:Secondary/Primary ds:Inconsistent/UpToDate C {flags}\n"
                    "    ns:0 nr:10 dw:10 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:f oos:64\n")
    (r,) = parse_proc_drbd(raw).resources
    pd = r.connections[0].peer_devices[0]
    assert (r.suspended, pd.resync_suspended, r.connections[0].congested,
            r.devices[0].blocked) == (susp, held, congested, blocked)
    assert pd.resync is not None
    assert pd.resync.suspended == held
    assert pd.replication_state == "PausedSyncT"


def test_kernel_tabs_verify_stalled_and_proc_details() -> None:
    raw = HEADER + (
        " 3: cs:VerifyS ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n"
        "    ns:12 nr:0 dw:0 dr:1024 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:f oos:0\n"
        "\t[=====>..............] verified: 31.6% (1,234,567/1,800,000)K\n"
        "\tfinish: 0:10:00 speed: 2,048 (1,900 -- 1,950) want: 4,096 K/sec (stalled)\n"
        "\t 31% sector pos: 1122/3600000 stop sector: 3600000\n"
        "\tresync: used:0/61 hits:0 misses:0 starving:0 locked:0 changed:0\n"
        "\tact_log: used:0/1237 hits:0 misses:0 starving:0 locked:0 changed:0\n"
        "\tblocked on activity log: 0\n"
    )
    (r,) = parse_proc_drbd(raw).resources
    assert r.name == "3"
    assert r.connections[0].peer_devices[0].resync == DrbdResync(
        verify=True, percent_done=31.6, left_kib=1234567, total_kib=1800000, eta_s=600,
        speed_kib_s=2048, avg_speed_kib_s=1950, want_kib_s=4096, stalled=True)


def test_838_stalled_line_delay_probe_and_missing_newline_before_finish() -> None:
    raw = HEADER + (
        " 0: cs:SyncSource ro:Primary/Secondary ds:UpToDate/Inconsistent C r----\n"
        "    ns:5 nr:0 dw:0 dr:5 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:b oos:40\n"
        "\t[>...................] sync'ed:  5.0% (38/40)K delay_probe: 7\n"
        "\tstalled\n"
        " 1: cs:SyncTarget ro:Secondary/Primary ds:Inconsistent/UpToDate C r----\n"
        "    ns:0 nr:5 dw:5 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:b oos:9437184\n"
        "\t[>...................] sync'ed: 10.0% (9/10)Mfinish: 1:00:00 speed: 10 (10) K/sec\n"
    )
    r0, r1 = parse_proc_drbd(raw).resources
    assert r0.connections[0].peer_devices[0].resync == DrbdResync(
        percent_done=5.0, left_kib=38, total_kib=40, stalled=True)
    assert r1.connections[0].peer_devices[0].resync == DrbdResync(
        percent_done=10.0, left_kib=9 * 1024, total_kib=10 * 1024, eta_s=3600,
        speed_kib_s=10, avg_speed_kib_s=10)


def test_st_instead_of_ro_and_drbd_overview_dash() -> None:
    raw = HEADER + (" 0: cs:StandAlone st:Secondary/Unknown ds:UpToDate/DUnknown - r---\n"
                    "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0\n")
    (r,) = parse_proc_drbd(raw).resources
    assert (r.role, r.connections[0].protocol, r.write_ordering) == ("Secondary", None, None)
    assert r.connections[0].peer_devices[0].out_of_sync_kib is None


def test_drbd9_proc_has_no_minors() -> None:
    raw = text("d9_proc_9022.txt")
    assert drbd_flavour(raw) == "9"
    assert proc_version(raw) == ("9.0.22-2", 9)
    s = parse_proc_drbd(raw)
    assert (s.flavour, s.version, s.resources) == ("9", "9.0.22-2", [])


@pytest.mark.parametrize(("raw", "where"), [
    ("", "empty"),
    ("hello world\n", "line 1"),
    ("version: 0.7.25 (api:77/proto:74)\n", "0.7.25"),
    (HEADER + "    this is not drbd\n", "line 2"),
    (HEADER + "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0\n", "line 2"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n", "minor 0"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n"
     "    ns:0 nr:x dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:f oos:0\n", "nr:x"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n"
     "    ns:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:f oos:0\n", "missing nr"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n"
     "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0 ep:1 wo:z oos:0\n", "wo:z"),
    (HEADER + " 0: cs:Connected ro:Primary ds:UpToDate/UpToDate C r-----\n", "ro:Primary"),
    (HEADER + " 0: cs:Connected ds:UpToDate/UpToDate C r-----\n", "ro:"),
    (HEADER + " 0: ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n", "cs:"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate Q r-----\n", "'Q'"),
    (HEADER + " 0: cs:Unconfigured\n 0: cs:Unconfigured\n", "appears twice"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n"
     "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0\n"
     "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0\n", "second counters"),
    (HEADER + " 0: cs:Unconfigured\n    garbage here\n", "ro:"),
    (HEADER + " 0: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n"
     "    ns:0 nr:0 dw:0 dr:0 al:0 bm:0 lo:0 pe:0 ua:0 ap:0\n    what is this\n", "line 4"),
])
def test_malformed_proc_drbd_raises_parse_error(raw: str, where: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_proc_drbd(raw)
    assert where in str(info.value)


# --- DRBD 9 JSON ---------------------------------------------------------------------


def test_json_clusterlabs_exact_values() -> None:
    s = parse_drbdsetup_json(text("d9_status_clusterlabs.json"), version="9.0.16-1")
    assert (s.flavour, s.version) == ("9", "9.0.16-1")
    (r,) = s.resources
    assert (r.name, r.node_id, r.role, r.suspended, r.suspend_reasons, r.write_ordering) == (
        "1-single-0", 1, "Primary", False, [], "flush")
    (d,) = r.devices
    assert (d.volume, d.minor, d.disk_state, d.client, d.quorum, d.size_kib, d.read_kib,
            d.written_kib, d.al_writes, d.bm_writes, d.upper_pending, d.lower_pending) == (
        0, 2, "UpToDate", False, True, 409600, 8457, 536513, 4, 0, 0, 0)
    (c,) = r.connections
    assert (c.peer, c.peer_node_id, c.connection_state, c.cs, c.congested, c.peer_role,
            c.protocol, c.ap_in_flight_sectors, c.rs_in_flight_sectors) == (
        "SLE15-sp1-gm-drbd1145296-node2", 2, "Connected", None, False, "Secondary", None, 0, 0)
    (p,) = c.peer_devices
    assert (p.volume, p.replication_state, p.peer_disk_state, p.peer_client, p.resync_suspended,
            p.received_kib, p.sent_kib, p.out_of_sync_kib, p.pending, p.unacked,
            p.percent_in_sync, p.resync) == (
        0, "Established", "UpToDate", False, [], 8202, 534390, 0, 0, 0, 100.0, None)


def test_json_peer_unreachable() -> None:
    (r,) = parse_drbdsetup_json(text("d9_status_peer_unreachable.json")).resources
    assert (r.name, r.role, r.suspended, r.write_ordering) == ("r0", "Secondary", None, None)
    assert (r.devices[0].disk_state, r.devices[0].size_kib, r.devices[0].read_kib) == (
        "Inconsistent", 131032, None)
    (c,) = r.connections
    assert (c.peer, c.connection_state, c.peer_role, c.congested) == (
        "faketwo", "Connecting", "Unknown", None)
    (p,) = c.peer_devices
    assert (p.replication_state, p.peer_disk_state, p.out_of_sync_kib, p.percent_in_sync,
            p.sent_kib) == ("Off", "DUnknown", 131032, 0.0, None)


def test_json_empty_array_and_several_resources() -> None:
    assert parse_drbdsetup_json("[]").resources == []
    both = [*json.loads(text("d9_status_clusterlabs.json")),
            *json.loads(text("d9_status_peer_unreachable.json"))]
    s = parse_drbdsetup_json(json.dumps(both))
    assert [r.name for r in s.resources] == ["1-single-0", "r0"]
    assert sorted(s.peer_devices_by_key()) == ["1-single-0/SLE15-sp1-gm-drbd1145296-node2/0",
                                               "r0/faketwo/0"]


def resync_json(**extra: object) -> str:
    """A SyncTarget peer device built from the drbdsetup.c key list (drbd.md §2.3); no
    public capture of a DRBD 9 resync in JSON exists."""
    pd: dict[str, object] = {
        "volume": 0, "replication-state": "SyncTarget", "peer-disk-state": "UpToDate",
        "resync-suspended": "no", "received": 1972628, "sent": 0, "out-of-sync": 6411740,
        "pending": 3, "unacked": 12, "has-sync-details": True,
        "has-online-verify-details": False, "percent-in-sync": 23.53, "rs-total": 16769024,
        "want": 100.0, "db1/dt1 [MiB/s]": 92.39, "db/dt [MiB/s]": 90.5,
        "percent-resync-done": 23.53, "estimated-seconds-to-finish": 68, **extra,
    }
    res = {"name": "drbd2", "role": "Secondary", "suspended": True, "suspended-user": False,
           "suspended-no-data": False, "suspended-fencing": True, "suspended-quorum": True,
           "devices": [{"volume": 0, "minor": 1, "disk-state": "Inconsistent"}],
           "connections": [{"name": "alpha", "connection-state": "Connected",
                            "peer-role": "Primary", "peer_devices": [pd]}]}
    return json.dumps([res])


def test_json_resync_fields() -> None:
    (r,) = parse_drbdsetup_json(resync_json()).resources
    assert (r.suspended, r.suspend_reasons) == (True, ["fencing", "quorum"])
    p = r.connections[0].peer_devices[0]
    assert p.resync == DrbdResync(
        percent_done=23.53, left_kib=6411740, total_kib=8384512, eta_s=68,
        speed_kib_s=92.39 * 1024, avg_speed_kib_s=90.5 * 1024, want_kib_s=100.0 * 1024)


def test_json_resync_no_progress_and_suspended() -> None:
    raw = resync_json(**{"estimated-seconds-to-finish": NO_PROGRESS_ETA,
                         "resync-suspended": "user,peer"})
    p = parse_drbdsetup_json(raw).resources[0].connections[0].peer_devices[0]
    assert p.resync is not None
    assert (p.resync.eta_s, p.resync.stalled, p.resync.suspended) == (None, True,
                                                                      ["user", "peer"])
    assert p.resync_suspended == ["user", "peer"]


def test_json_old_utils_with_few_keys() -> None:
    (r,) = parse_drbdsetup_json('[{"name": "r9", "connections": [{"peer-node-id": 4,'
                                ' "peer_devices": [{}]}]}]').resources
    assert (r.name, r.role, r.devices) == ("r9", None, [])
    assert r.connections[0].peer == "node-4"
    assert r.connections[0].peer_devices[0].replication_state is None


def test_json_numbers_out_of_float_range_are_unknown() -> None:
    huge = "1" + "0" * 400
    pd = f'{{"percent-in-sync": {huge}, "out-of-sync": {huge}}}'
    raw = f'[{{"name": "r0", "connections": [{{"peer_devices": [{pd}]}}]}}]'
    p = parse_drbdsetup_json(raw).resources[0].connections[0].peer_devices[0]
    assert (p.percent_in_sync, p.out_of_sync_kib) == (None, int(huge))


@pytest.mark.parametrize(("raw", "where"), [
    ("", "not valid JSON"),
    ('[{"name": "r0", "devices": [', "not valid JSON"),
    ('{"name": "r0"}', "expected an array"),
    ("[1]", "[0]: expected an object"),
    ('[{"role": "Primary"}]', "without a name"),
    ('[{"name": "r0", "devices": [{"minor": "2"}]}]', "[0].devices[0].minor"),
    ('[{"name": "r0", "devices": [{"volume": true}]}]', "[0].devices[0].volume"),
    ('[{"name": "r0", "devices": {}}]', "[0].devices"),
    ('[{"name": "r0", "connections": [{"peer_devices": 5}]}]', "[0].connections[0].peer_devices"),
    ('[{"name": "r0", "suspended": "no"}]', "[0].suspended"),
    ('[{"name": "r0", "connections": [{"peer_devices": [{"percent-in-sync": "x"}]}]}]',
     "percent-in-sync"),
    ("[" * 100000 + "]" * 100000, "not valid JSON"),
])
def test_malformed_json_raises_parse_error(raw: str, where: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_drbdsetup_json(raw)
    assert where in str(info.value)


# --- fuzzing ---------------------------------------------------------------------------


def parses_or_parse_error(parse: Any, raw: str) -> DrbdSample | None:
    try:
        sample: DrbdSample = parse(raw)
    except ParseError:
        return None
    assert isinstance(sample, DrbdSample)
    return sample


FUZZ = settings(max_examples=300, deadline=None)


@FUZZ
@given(st.text())
def test_fuzz_arbitrary_text(raw: str) -> None:
    parses_or_parse_error(parse_proc_drbd, raw)
    parses_or_parse_error(parse_drbdsetup_json, raw)
    try:
        flavour = drbd_flavour(raw)
    except ParseError:
        flavour = None
    assert flavour in ("8", "9", None)


@FUZZ
@given(st.sampled_from(PROC_8 + JSON_9), st.data())
def test_fuzz_mutated_fixtures(name: str, data: st.DataObject) -> None:
    raw = text(name)
    kind = data.draw(st.sampled_from(["truncate", "replace", "duplicate", "splice"]))
    if kind == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    elif kind == "replace":
        chars = list(raw)
        for _ in range(data.draw(st.integers(1, 5))):
            chars[data.draw(st.integers(0, len(chars) - 1))] = data.draw(st.characters())
        raw = "".join(chars)
    elif kind == "duplicate":
        lines = raw.splitlines(keepends=True)
        i = data.draw(st.integers(0, len(lines) - 1))
        lines.insert(data.draw(st.integers(0, len(lines))), lines[i])
        raw = "".join(lines)
    else:
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + data.draw(st.text(max_size=20)) + raw[at:]
    parses_or_parse_error(parse_proc_drbd, raw)
    parses_or_parse_error(parse_drbdsetup_json, raw)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**500), 10**500) | st.floats()
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=8,
)


def json_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += json_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += json_paths(v, (*path, i))
    return out


@FUZZ
@given(st.sampled_from(JSON_9), st.data())
def test_fuzz_json_values_of_the_wrong_shape(name: str, data: st.DataObject) -> None:
    doc = json.loads(text(name))
    path = data.draw(st.sampled_from(json_paths(doc)))
    value = data.draw(JSON_VALUES)
    if path:
        node = doc
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    else:
        doc = value
    parses_or_parse_error(parse_drbdsetup_json, json.dumps(doc))


@pytest.mark.parametrize("name", PROC_8 + JSON_9)
def test_samples_survive_a_json_round_trip(name: str) -> None:
    # Recordings store ticks as JSON; a replayed sample must equal the live one.
    raw = text(name)
    s = parse_drbdsetup_json(raw) if name.endswith(".json") else parse_proc_drbd(raw)
    assert s.resources
    assert DrbdSample.model_validate_json(s.model_dump_json()) == s


def test_a_bare_c_nan_reads_as_unknown_but_nan_in_a_string_stays() -> None:
    """drbdsetup printf's a 0/0 estimate as a bare nan (a real output in
    tests/fixtures/real/drbd/); only a value position is read as null."""
    doc = text("d9_status_clusterlabs.json")
    assert '"name" : "' in doc or '"name": "' in doc
    bad = doc.replace('"role"', '"nan-word": "nan", "eta": nan, "role"', 1)
    (r,) = parse_drbdsetup_json(bad).resources
    assert r.role  # the resource is read, the nan value and the "nan" string did not break it
    with pytest.raises(ParseError, match="not valid JSON"):
        parse_drbdsetup_json(doc.replace('"role"', '"eta": nan nan, "role"', 1))


def test_the_states_of_two_readings_are_one_object() -> None:
    """A resource's states, roles and flags come back every tick: one string each, not
    one per reading, since the engine keeps each tick's DRBD sample 300 s (#56). Two
    readings of each real capture, each parsed from its own copy of the text."""
    a, b = (parse_proc_drbd(text("s10_8411_syncsource_synced.txt")).resources[0]
            for _ in range(2))
    ca, cb = a.connections[0], b.connections[0]
    for x, y in ((a.role, b.role), (a.devices[0].disk_state, b.devices[0].disk_state),
                 (ca.cs, cb.cs), (ca.peer_role, cb.peer_role), (ca.io_flags, cb.io_flags),
                 (ca.peer_devices[0].peer_disk_state, cb.peer_devices[0].peer_disk_state)):
        assert x and x is y, (x, y)
    a, b = (parse_drbdsetup_json(text("d9_status_clusterlabs.json")).resources[0]
            for _ in range(2))
    ca, cb = a.connections[0], b.connections[0]
    for x, y in ((a.name, b.name), (a.role, b.role), (ca.connection_state, cb.connection_state),
                 (a.devices[0].disk_state, b.devices[0].disk_state),
                 (ca.peer_devices[0].replication_state, cb.peer_devices[0].replication_state)):
        assert x and x is y, (x, y)
