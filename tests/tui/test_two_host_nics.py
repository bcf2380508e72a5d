"""The two-host lab's demo at 80x24 (issue #55): each node's two links, the replication
NIC and the other one (the monitoring link), on a line of their own with their rates and
units, told apart by name, and still on screen while the saturated link's findings are
open (link_saturation on the primary, pair_lag on the replica) and the demo's notice
takes three rows. Before, the host group showed the NICs' total ("net"), the first line
a short screen gave up: with findings open neither link was shown.

Ticks: the lab's real ticks (tests/fixtures/ticks) given the two-host lab's NICs
(``eth0`` monitoring with the default route, ``eth1`` replication on its own /30, tbf at
128 kbit/s on the primary's) with different rates on each node, the replica's channel
reading from the primary's replication address, as the two-host lab's are."""

from __future__ import annotations

import pytest
from feed import ManualFeed
from settle import settle_still
from textual.pilot import Pilot
from tickdata import lab_ticks

from replmon.model.findings import Finding, Severity
from replmon.model.host import NicCounters, NicRates
from replmon.model.nic_roles import nic_roles, replication_nics
from replmon.model.tick import NodeTick, Tick
from replmon.tui.app import ReplmonApp
from replmon.tui.render import with_unit

TICKS = lab_ticks()
PRIMARY_REPL = "10.9.1.1"
RATES = {  # (node, nic) -> (rx, tx) bytes/s: the primary sends its binlog over eth1
    ("primary", "eth0"): (110_000.0, 210_000.0), ("primary", "eth1"): (1_300.0, 16_100.0),
    ("replica", "eth0"): (120_000.0, 38_000.0), ("replica", "eth1"): (15_900.0, 1_250.0),
}
DEMO = ("15:20:27 demo replication-link-saturated: injected, undone in 60 s (the "
        "replication link shaped with tbf to 128 kbit/s, below what the writes make the "
        "primary send: the link saturates, the replica falls behind)")


def _two_host_node(n: NodeTick, i: int, monitor: bool) -> NodeTick:
    role = n.role
    shaped = {"shaper": "tbf", "shaped_kbit": 128.0} if role == "primary" else {}
    counters = {
        "lo": NicCounters(),
        "eth0": NicCounters(speed_mbps=10000, routes=["0.0.0.0/0", f"10.9.0.{4 * i}/30"]),
        "eth1": NicCounters(speed_mbps=10000, routes=["10.9.1.0/30"], **shaped),
    }
    rates = {"lo": NicRates()}
    for nic in ("eth0", "eth1"):
        rx, tx = RATES[(role, nic)]
        rates[nic] = NicRates(recv_bytes_per_s=rx, send_bytes_per_s=tx, speed_mbps=10000,
                              **(shaped if nic == "eth1" else {}))
    host = n.host.model_copy(update={  # the monitor: the root namespace's end of eth0
        "nics": counters, "monitor_addr": f"10.9.0.{4 * i + 1}" if monitor else None})
    hr = n.rates.host.model_copy(update={"nics": rates})
    mysql = n.mysql
    if n.mysql.replication:
        mysql = mysql.model_copy(update={"replication": [
            ch.model_copy(update={"source_host": PRIMARY_REPL})
            for ch in n.mysql.replication]})
    return n.model_copy(update={"host": host, "mysql": mysql, "name": f"lab-db16{3 - i}",
                                "rates": n.rates.model_copy(update={"host": hr})})


def two_host(t: Tick, monitor: bool = True) -> Tick:
    """``t`` on the two-host lab; ``monitor``: the nodes read over ssh (the monitor's
    address known: the NIC routing to it is "mon"), else the other NIC is "other"."""
    return t.model_copy(update={"primary": _two_host_node(t.primary, 0, monitor),
                                "replica": _two_host_node(t.replica, 1, monitor)})


def _finding(t: Tick, check: str, node: NodeTick, severity: Severity, title: str) -> Finding:
    return Finding(check=check, key="", node=node.role, name=node.name,
                   severity=severity, title=title, since_seq=t.seq, since_wall=t.wall,
                   last_seq=t.seq, worst=severity)


def test_the_replication_nic_is_the_one_routing_to_the_source() -> None:
    """On both nodes the NIC whose route holds the replica's source address (the
    primary's own /30 on its eth1; the replica's route to it); none when replication
    runs over loopback (the one-host lab's ticks)."""
    t = two_host(TICKS[-1])
    assert replication_nics(t) == {"lab-db163": "eth1", "lab-db162": "eth1"}
    assert [nic_roles(t, n) for n in t.nodes] == [{"repl": "eth1", "mon": "eth0"}] * 2
    assert replication_nics(TICKS[-1]) == {}
    assert [nic_roles(TICKS[-1], n) for n in TICKS[-1].nodes] == [{}, {}]


@pytest.mark.parametrize("monitor", [True, False], ids=["mon", "other"])
async def test_both_hosts_links_stay_on_an_80x24_screen_with_findings_open(
        monitor: bool) -> None:
    """Each node's replication NIC ("repl") and its monitoring NIC ("mon" where the
    monitor's address is known, else "other": the busiest other NIC) with their rates."""
    ticks = [two_host(t, monitor) for t in TICKS[:4]]
    last = ticks[-1]
    findings = [
        _finding(last, "link_saturation", last.primary, Severity.CRITICAL,
                 "eth1 sends 16 KiB/s = 98 % of 128 kbit/s (tbf)"),
        _finding(last, "pair_lag", last.replica, Severity.WARNING,
                 "replica 18 s behind the primary (measured on both nodes: 4,635 "
                 "transactions and 1 MiB of binlog) while Seconds_Behind_Master says 0 s"),
    ]
    app = ReplmonApp(ManualFeed(), None, clock=lambda: last.wall)
    async with app.run_test(size=(80, 24)) as pilot:
        app.say(DEMO)
        for t in ticks:
            app.show_tick(t, findings if t is last else [])
            await settle_pilot(pilot, app)
        lines = [s.text for s in app.screen._compositor.render_strips()]
        screen = "\n".join(lines)
        assert "link_saturation" in screen and "pair_lag" in screen, screen
        for name, side in (("lab-db163", 0), ("lab-db162", 1)):
            role = ("primary", "replica")[side]
            col = [seg for line in lines if len(segs := line.split("│")) >= 5
                   for seg in [segs[1 + 2 * side]]]
            for label, nic in (("repl", "eth1"), ("mon" if monitor else "other", "eth0")):
                row = next((c for c in col if c.split()[:1] == [label]), None)
                assert row is not None, (name, label, screen)
                rx, tx = RATES[(role, nic)]
                words = row.split()
                got = dict(zip(words[1::2], words[2::2], strict=False))
                assert got.get("rx") == with_unit(rx, "B/s"), (name, row, screen)
                assert got.get("tx") == with_unit(tx, "B/s"), (name, row, screen)
        # the two nodes' links differ: the primary sends on eth1, the replica receives
        assert with_unit(16_100.0, "B/s") in screen and with_unit(15_900.0, "B/s") in screen


async def settle_pilot(pilot: Pilot[None], app: ReplmonApp) -> None:
    await settle_still(pilot, lambda: [s.text for s in app.screen._compositor.render_strips()])
