"""drbd_congestion on /proc/drbd texts: S1 (8.4.6, real, tests/fixtures/drbd) with its
state edited to Ahead/Behind or its I/O flags to network congestion (``r---n-``), and
out-of-sync counted up tick by tick; a healthy connection stays quiet."""

from __future__ import annotations

from pathlib import Path

from replmon.checks.drbd_congestion import CHECK

from replmon.check import Window
from replmon.model.findings import Severity
from replmon.model.tick import Tick
from replmon.testing.scenarios.drbd import drbd_session
from replmon.testing.synth import observe

S1 = (Path(__file__).resolve().parents[2] / "fixtures" / "drbd"
      / "s1_846_replica_connected.txt").read_text(encoding="utf-8")
PRIMARY_S1 = S1.replace("ro:Secondary/Primary", "ro:Primary/Secondary")


def proc(cs: str = "Connected", flags: str = "r-----", oos: int = 0) -> str:
    text = PRIMARY_S1.replace("cs:Connected", f"cs:{cs}").replace("C r-----", f"C {flags}")
    return text.replace("oos:0", f"oos:{oos}")


def session(n: int, cs: str = "Connected", flags: str = "r-----", grow: int = 0,
            peer_cs: str | None = None) -> list[Tick]:
    return drbd_session([(proc(cs, flags, grow * i), proc(peer_cs or "Connected", "r-----"))
                         for i in range(n)])


def test_healthy_connection_is_quiet() -> None:
    assert observe(CHECK, session(20)) == []


def test_ahead_is_replication_suspended_while_connected() -> None:
    (o,) = observe(CHECK, session(11, cs="Ahead", grow=512))
    assert (o.node, o.key, o.severity) == ("primary", "0/peer", Severity.WARNING)
    assert o.title == ("DRBD 0/peer Ahead: replication suspended for 10 s while connected, "
                       "out-of-sync 5 MiB (+512 KiB/s)")


def test_behind_on_the_peer_and_a_minute_of_it_is_critical() -> None:
    ticks = drbd_session([(proc("Ahead", oos=100 * i), proc("Behind")) for i in range(62)])
    out = {o.node: o for o in observe(CHECK, ticks)}
    assert out["primary"].severity is Severity.CRITICAL
    assert "Behind" in out["replica"].title


def test_congested_with_out_of_sync_growing_warns_after_5_s() -> None:
    assert observe(CHECK, session(5, flags="r---n-", grow=64)) == []  # 4 s
    (o,) = observe(CHECK, session(7, flags="r---n-", grow=64))
    assert o.title == "DRBD 0/peer congested for 6 s, out-of-sync growing 64 KiB/s to 384 KiB"


def test_congested_but_keeping_up_is_quiet() -> None:
    assert observe(CHECK, session(20, flags="r---n-", grow=0)) == []


def test_the_gate_is_quiet_only_where_congestion_is_not_reported() -> None:
    """The gate (``quiet`` on ``gauges``) against ``evaluate`` at every tick of a congested
    session, with ``congested_for`` from 0.5 to 20 s: tests/unit/test_gates.py has no
    congested input (seed 000 goes Ahead at once), so this is where the congested gauge is
    proved; Ahead is never quiet."""
    gate = CHECK.gate
    assert gate is not None
    congested = session(12, flags="r---n-", grow=64)
    ahead = session(4, cs="Ahead", grow=512)
    for limit in (0.5, 2.0, 5.0, 6.0, 8.0, 11.0, 20.0):
        th = CHECK.thresholds(congested_for=limit)
        quiet = seen = 0
        for ticks in (congested, ahead, session(10)):
            for i in range(1, len(ticks) + 1):
                w = Window(ticks[:i])
                found = CHECK.evaluate(w, th)
                if gate.quiet(gate.measure(w), th):
                    assert not found, f"congested_for={limit} tick {i}: {found[0].title}"
                    quiet += 1
                seen += bool(found)
        assert quiet and seen, (limit, quiet, seen)
