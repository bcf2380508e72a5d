"""Seed 000 (DRBD 8.4.4, db163 primary / db162 replica) rebuilt from its published figures.

The lab has no DRBD, so these are SEEDS only. Every DRBD sample is a /proc/drbd text
run through the real parser (replmon.sources.drbd_parse) and every rate comes from the
real RateTracker, so the check sees exactly what a live session would give it.

Figures from the seed: the connected replica's line (``cs:Connected ro:Secondary/Primary
ds:UpToDate/UpToDate C r----- ns:0 nr:38064 dw:38064 ... bm:18``), replication at about
9 MB/s (dstat: primary send 8.7-10 M/s, replica recv 8-10 M/s), and the primary once
db162 was put in standby: ``cs:WFConnection ro:Primary/Unknown ds:UpToDate/DUnknown
ns:6074648 dw:6075004 ... oos:308`` and later ``oos:65724``. The seed does not say how
long lay between those two oos readings; here out-of-sync climbs from 308 to 65,724 KiB
over the ten disconnected ticks (1 s apart, dstat's interval). A node in Pacemaker
standby has DRBD down, so db162's /proc/drbd then lists no minor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replmon.model.drbd import DrbdSample
from replmon.model.host import HostSample
from replmon.model.mysql import MysqlSample
from replmon.model.redis import RedisSample
from replmon.model.tick import NodeTick, RateTracker, Role, Tick
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.scenarios import LabScenario, SeedScenario
from replmon.testing.synth import node, status, tick

HEADER = ("version: 8.4.4 (api:1/proto:86-101)\n"
          "GIT-hash: 599f286440bd633d15d5ff985204aff4bccffadd build by phil@Build64R6, "
          "2013-10-14 15:33:06\n")
OFF = status("absent", "switched off in the config")
OTHERS_OFF: dict[str, Any] = {"host": HostSample(status=OFF), "mysql": MysqlSample(status=OFF),
              "redis": RedisSample(status=OFF)}
"""DRBD-only sessions: the seed's MySQL figures are not per-tick, and under Pacemaker
mysqld runs on the active node only."""
REPL_KIB_S = 9000
"""Replication rate while connected, KiB/s (seed 000 dstat: ~9 MB/s sent and received)."""


def proc84(cs: str = "Connected", ro: str = "Primary/Secondary", ds: str = "UpToDate/UpToDate",
           *, proto: str = "C", flags: str = "r-----", minor: int = 0, **counters: int) -> str:
    """A DRBD 8.4 /proc/drbd with one minor; counters (ns, nr, dw, dr, al, bm, lo, pe, ua,
    ap, ep, oos) default to the seed's idle values."""
    c = {"ns": 0, "nr": 0, "dw": 0, "dr": 0, "al": 0, "bm": 0, "lo": 0, "pe": 0, "ua": 0,
         "ap": 0, "ep": 1} | counters
    c.setdefault("oos", 0)
    nums = " ".join(f"{k}:{v}" for k, v in c.items() if k != "oos")
    return (f"{HEADER} {minor}: cs:{cs} ro:{ro} ds:{ds} {proto} {flags}\n"
            f"    {nums} wo:f oos:{c['oos']}\n")


def drbd_sample(text: str | None, seq: int, interval: float = 1.0) -> DrbdSample:
    """Parsed /proc/drbd stamped at tick ``seq``; None = a node without DRBD (absent)."""
    if text is None:
        return node("primary").drbd  # synth's default: the "absent" sample
    s = parse_proc_drbd(text)
    return s.model_copy(update={"mono": seq * interval, "wall": 1_700_000_000 + seq * interval})


def drbd_session(pairs: Sequence[tuple[str | None, str | None]], interval: float = 1.0,
                 start: int = 0) -> list[Tick]:
    """Ticks from (primary, replica) /proc/drbd texts, rates attached as the collector does."""
    tracker = RateTracker()
    out: list[Tick] = []
    for i, texts in enumerate(pairs):
        seq = start + i
        nodes: list[NodeTick] = []
        roles: tuple[Role, Role] = ("primary", "replica")
        for role, text in zip(roles, texts, strict=True):
            nodes.append(tracker.attach(node(role, drbd=drbd_sample(text, seq, interval),
                                             **OTHERS_OFF)))
        out.append(tick(seq, primary=nodes[0], replica=nodes[1], interval=interval))
    return out


def _connected(i: int, n: int) -> tuple[str, str]:
    """Tick i of n connected ticks; the primary reaches the seed's ns/dw at the last one."""
    back = (n - 1 - i) * REPL_KIB_S
    primary = proc84(ns=6074648 - back, dw=6075004 - back, dr=294960, al=466)
    moved = i * REPL_KIB_S
    replica = proc84(ro="Secondary/Primary", nr=38064 + moved, dw=38064 + moved, bm=18)
    return primary, replica


def seed_000_disconnect(connected: int = 6, disconnected: int = 10
                        ) -> tuple[list[Tick], int]:
    """Connected pair, then db162 in standby: db163 WFConnection with oos 308 -> 65,724."""
    pairs: list[tuple[str | None, str | None]] = [
        _connected(i, connected) for i in range(connected)]
    for j in range(disconnected):
        oos = 308 + round((65724 - 308) * j / max(disconnected - 1, 1))
        primary = proc84("WFConnection", "Primary/Unknown", "UpToDate/DUnknown",
                         ns=6074648, dw=6075004 + oos - 308, dr=294960, al=466, oos=oos)
        pairs.append((primary, HEADER))
    return drbd_session(pairs), connected


def seed_000_connected(n: int = 12) -> tuple[list[Tick], int]:
    """The same pair, connected and replicating all along (nothing above info)."""
    return drbd_session([_connected(i, n) for i in range(n)]), 0


def pull_ahead(connected: int = 6, ahead: int = 10) -> tuple[list[Tick], int]:
    """Seed 000's connected pair, then the primary pulls ahead on congestion (``cs:Ahead``,
    network congestion flag) and the replica is Behind, out-of-sync growing 2 MiB/s."""
    pairs: list[tuple[str | None, str | None]] = [
        _connected(i, connected) for i in range(connected)]
    for j in range(ahead):
        oos = 2048 * (j + 1)
        primary = proc84("Ahead", flags="r---n-", ns=6074648, dw=6075004 + oos, dr=294960,
                         al=466, oos=oos)
        replica = proc84("Behind", "Secondary/Primary", "Outdated/UpToDate", nr=38064,
                         dw=38064, bm=18, oos=oos)
        pairs.append((primary, replica))
    return drbd_session(pairs), connected


SEEDS = [
    SeedScenario("DRBD peer db162 to standby, db163 WFConnection, oos 308 -> 65,724 KiB",
                 "drbd_peer", seed_000_disconnect),
    SeedScenario("seed 000: db163 Primary / db162 Secondary, Connected, ~9 MB/s", "",
                 seed_000_connected),
    SeedScenario("seed 000's pair pulls ahead on congestion: Ahead/Behind, oos +2 MiB/s",
                 "drbd_congestion", pull_ahead),
]
LAB: list[LabScenario] = []
"""The lab has no DRBD."""
