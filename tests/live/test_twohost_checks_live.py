"""The pair view on the two-host lab: each fault between the hosts (replmon.lab.links)
named as what it is by the partition check within 15 s (issue #55), and closed once it
heals (a replica cut off from the monitor and its peer is "down", a frozen one "hung");
the shaped replication link found by link_saturation from the primary's NIC counters
at the qdisc's rate; a healthy pair under writes quiet.

Shares the two-host lab of test_twohost_lab_live.py (tests/live/conftest.py's
``twohost``, one worker: the xdist group). replmon runs as it does for a user: config ->
factory -> collector (host metrics over ssh) -> every check in an engine, at 0.5 s, in
a thread of its own, while the test makes and undoes the fault. Each test stops at the
tick the finding opens, and again at the tick it closes.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from labpool import NAMED_WITHIN_S

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab.hosts import TwoHostLab
from replmon.lab.links import (
    SHAPED_KBIT,
    monitor_cut,
    node_cut_off,
    node_frozen,
    replication_link_cut,
    replication_link_shaped,
)
from replmon.lab.netns import MONITOR_DEV, REPLICATION_DEV
from replmon.model.findings import Finding, Severity
from replmon.model.nic_roles import nic_roles
from replmon.model.tick import Tick

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("twohost")]

HEALED_WITHIN_S = 15.0
"""After the fault's undo (which waits for replication to be healthy again)."""


class Monitor:
    """replmon on the lab in a thread: every tick through every check; what is open."""

    def __init__(self, lab: TwoHostLab, interval: float = 0.5) -> None:
        self.lab, self.interval = lab, interval
        self.open: list[Finding] = []
        self.opened: list[tuple[float, Finding]] = []
        """Every finding opened, with the monotonic time it opened."""
        self.ticks = 0
        self.eth1: deque[tuple[float, str, float | None, float | None]] = deque(maxlen=12)
        """The primary's last ticks: (wall, its host source's state, eth1's bytes sent per
        second, its shaper's kbit/s): what a wait that failed says."""
        self.last: Tick | None = None
        self.stop = threading.Event()
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.error: BaseException | None = None

    async def _run(self) -> None:
        engine = build_engine(entry_points=False)
        try:
            async with build_collector(build_config(self.lab.settings(self.interval))) as c:
                async for tick in c.ticks():
                    upd = engine.feed(tick)
                    h = tick.primary
                    nic = h.rates.host.nics.get("eth1")
                    with self.cond:
                        self.eth1.append((round(tick.wall % 100, 1), h.host.status.state.value,
                                          nic and nic.send_bytes_per_s,
                                          nic and nic.shaped_kbit))
                        self.open = upd.open
                        self.opened += [(time.monotonic(), f) for f in upd.opened]
                        self.ticks += 1
                        self.last = tick
                        self.cond.notify_all()
                    if self.stop.is_set():
                        return
        except BaseException as e:  # the test's wait says it
            self.error = e
            with self.cond:
                self.cond.notify_all()

    def wait(self, cond: Callable[[list[Finding]], Any], what: str, within: float) -> Any:
        deadline = time.monotonic() + within
        with self.cond:
            while True:
                if self.error is not None:
                    raise AssertionError(f"replmon failed: {self.error!r}")
                found = cond(self.open)
                if found:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{what}: not within {within:g} s; open: "
                                         f"{[(f.check, f.key, f.title) for f in self.open]}"
                                         f"; the primary's last ticks (wall, host, eth1 "
                                         f"sent B/s, shaped kbit/s): {list(self.eth1)}")
                self.cond.wait(left)


@pytest.fixture
def monitor(twohost: TwoHostLab) -> Iterator[Monitor]:
    m = Monitor(twohost)
    m.thread.start()
    m.wait(lambda _: m.ticks >= 2, "replmon sampling", 20)
    yield m
    m.stop.set()
    m.thread.join(10)


def ours(check: str, key: str) -> Callable[[list[Finding]], Finding | None]:
    return lambda fs: next((f for f in fs if f.check == check and f.key == key), None)


def named(m: Monitor, fault: Any, check: str, key: str) -> tuple[Finding, float]:
    """Under ``fault``: wait for ``check``'s finding ``key``; when it opened after the
    fault began; then undo the fault and wait for the finding to close."""
    with fault:
        t0 = time.monotonic()
        f = m.wait(ours(check, key), f"{check}/{key}", NAMED_WITHIN_S)
        took = time.monotonic() - t0
        others = [g for g in m.open if g.check == "partition" and g.key != key]
        assert not others, [g.title for g in others]
        assert not [g for g in m.open if g.check in ("roles", "two_primaries")], \
            [g.title for g in m.open]
    t1 = time.monotonic()
    m.wait(lambda fs: not ours(check, key)(fs), f"{check}/{key} closing", HEALED_WITHIN_S)
    print(f"{check}/{key}: named in {took:.1f} s ({f.title}); closed "
          f"{time.monotonic() - t1:.1f} s after the fault's undo")
    return f, took


def test_a_healthy_pair_under_writes_is_quiet(monitor: Monitor) -> None:
    time.sleep(6)  # past every hold (no_ack_s 3 s, open_after)
    loud = [(f.check, f.title) for _, f in monitor.opened
            if f.check in ("partition", "link_saturation") and f.severity > Severity.INFO]
    assert not loud, loud
    # each node's links told apart (the overview's repl and mon lines): the NIC that
    # routes to the replica's source address, and the one that routes to the monitor
    last = monitor.last
    assert last is not None
    assert [nic_roles(last, n) for n in last.nodes] == \
        [{"repl": REPLICATION_DEV, "mon": MONITOR_DEV}] * 2, [n.host.nics for n in last.nodes]


def test_replication_link_cut_is_a_partition(twohost: TwoHostLab, monitor: Monitor) -> None:
    f, took = named(monitor, replication_link_cut(twohost), "partition", "partition")
    assert f.node == "pair" and f.severity is Severity.CRITICAL
    assert f.title.startswith("lab-db163 and lab-db162 cannot reach each other; both "
                              "reachable from here")
    assert "not a failover" in f.cause and "lab-db163 still takes the writes" in f.cause


def test_monitor_cut_is_the_monitors_path(twohost: TwoHostLab, monitor: Monitor) -> None:
    f, took = named(monitor, monitor_cut(twohost, twohost.replica), "partition",
                    "monitor_path")
    assert f.node == "replica" and f.severity is Severity.WARNING
    assert "lab-db162 unreachable from here" in f.title
    assert "lab-db163 still streams with it" in f.title


def test_a_frozen_replica_is_hung(twohost: TwoHostLab, monitor: Monitor) -> None:
    f, took = named(monitor, node_frozen(twohost, twohost.replica), "partition", "hung")
    assert f.node == "replica" and f.severity is Severity.CRITICAL
    assert f.title.startswith("lab-db162 hung") and "lab-db163 lost it too" in f.title


def test_a_replica_cut_from_both_is_down(twohost: TwoHostLab, monitor: Monitor) -> None:
    f, took = named(monitor, node_cut_off(twohost, twohost.replica), "partition", "down")
    assert f.node == "replica" and f.severity is Severity.CRITICAL
    assert f.title.startswith("lab-db162 down") and "lab-db163 lost it too" in f.title
    assert "lab-db163 stays the primary" in f.cause


@pytest.fixture
def monitor_1s(twohost: TwoHostLab) -> Iterator[Monitor]:
    """replmon at its default interval, 1 s: the NIC rates come from the host source over
    ssh, whose reads a loaded suite held past the 0.4 s timeout of a 0.5 s tick now and
    then (a tick without the rate: link_saturation's hold began again; at 1 s, 0.8 s)."""
    m = Monitor(twohost, interval=1.0)
    m.thread.start()
    m.wait(lambda _: m.ticks >= 2, "replmon sampling", 20)
    yield m
    m.stop.set()
    m.thread.join(10)


def test_shaped_link_is_saturated_at_the_qdisc_rate(twohost: TwoHostLab, monitor_1s: Monitor
                                                    ) -> None:
    f, took = named(monitor_1s, replication_link_shaped(twohost, SHAPED_KBIT),
                    "link_saturation", "eth1")
    assert f.node == "primary"
    assert f"of {SHAPED_KBIT} kbit/s" in f.title and "tbf" in f.title
    assert f.numbers["shaped_kbit_s"] == SHAPED_KBIT
