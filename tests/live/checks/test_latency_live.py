"""latency_bound and the other host checks on the lab.

The lab runs on loopback and this kernel has no netem qdisc, so seed 001's 10 ms
cannot be added with ``tc``. Instead replmon reaches the primary's MariaDB and Redis
through TCP relays that hold every server -> client chunk for 10 ms once switched on
(as netem on the node's interface would): a real round trip on real connections,
measured by the real collector's COM_PING and PING. Pausing
a server (SIGSTOP) is not used: that gives timeouts, not latency.

Also: a healthy lab under write load must not open a finding of the host checks
(link_saturation, latency_bound, disk_saturation) above info.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time

import pytest

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.model.findings import Finding, Severity
from replmon.model.tick import Tick
from replmon.testing.scenarios import host, run_lab_scenario

pytestmark = pytest.mark.live

HOST_CHECKS = ("link_saturation", "latency_bound", "disk_saturation")


class DelayRelay:
    """127.0.0.1:<port> -> 127.0.0.1:<upstream>; replies wait ``delay_s`` when set."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.delay_s = 0.0
        self._srv = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._srv.getsockname()[1]
        self._socks: list[socket.socket] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        """Held while a connection's sockets are kept and while ``__exit__`` closes them: a
        connection accepted after the exit is closed at once, not left to the collector."""

    def __enter__(self) -> DelayRelay:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._stop.set()
            for s in [self._srv, *self._socks]:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._srv.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._stop.is_set():
                    client.close()
                    server.close()
                    return
                for s in (client, server):
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self._socks.append(s)
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, delayed: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if delayed and self.delay_s:
                    time.sleep(self.delay_s)  # the injected latency itself
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


async def test_ten_ms_round_trip_to_the_primary_flags_within_3_s(lab: Lab) -> None:
    ticks: list[Tick] = []
    opened: dict[int, list[Finding]] = {}
    # Eight healthy ticks (seq 0-7): the "was" baseline needs five readings before the
    # recent 3 s (6 ticks at 0.5 s), and a finding may open 4 ticks after the onset; with
    # six, a CI run on a loaded machine opened at seq 10 with fewer than five (a tick of no
    # round trip: both samples late) and the title rightly had no "was".
    onset = 8
    with (DelayRelay(lab.primary.mysql_port) as my, DelayRelay(lab.primary.redis_port) as rd,
          WriteLoad(lab, rate=200)):
        settings = lab.settings(0.5)
        settings["primary"]["mysql"]["port"] = my.port
        settings["primary"]["redis"]["port"] = rd.port
        eng = build_engine(entry_points=False)
        async with build_collector(build_config(settings)) as c:
            async for t in c.ticks(onset + 12):  # 6 s: seen, then held open_after (3 s)
                ticks.append(t)
                upd = eng.feed(t)
                if upd.opened:
                    opened[t.seq] = upd.opened
                if t.seq == onset - 1:
                    my.delay_s = rd.delay_s = 0.010  # seed 001: tc netem delay 10ms
    rtts = [min(t.primary.mysql.rtt_ms or 99, t.primary.redis.rtt_ms or 99) for t in ticks]
    assert all(r >= 10 for r in rtts[onset:]), rtts
    found = [(s, f) for s, fs in sorted(opened.items()) for f in fs
             if f.check == "latency_bound" and f.severity >= Severity.WARNING]
    assert found, (rtts, opened)
    seq, f = found[0]
    assert f.node == "primary"
    # seen within 3 s of the onset (since_seq may be the tick before: on this loaded
    # 2-vCPU VM a healthy reading through the relays sometimes hits 6-8 ms), open after
    # it held open_after (3 s: 6 ticks at 0.5 s)
    assert onset - 1 <= f.since_seq and f.since_wall - ticks[onset].wall <= 3.0, (rtts, f)
    assert onset + 4 <= seq <= onset + 11, (rtts, seq)
    # the title says the delayed round trip and the healthy one before it (the delayed
    # one 10 ms or more: 20.7 ms once, the suite loading the machine)
    said = re.fullmatch(r"Round trip to lab-primary ([\d.]+) ms \(.*, was ([\d.]+) ms\)", f.title)
    assert said and float(said[1]) >= 10 > float(said[2]), (f.title, rtts, seq)
    was = f.numbers["rtt_before_ms"]
    assert isinstance(was, float) and was < 5
    assert "/s per connection" in f.cause
    lab.wait_replica_caught_up()


async def test_healthy_lab_under_load_opens_no_host_finding(lab: Lab) -> None:
    out = await run_lab_scenario(lab, host.LAB[0])
    noisy = [f for f in out.above_info() if f.check in HOST_CHECKS]
    assert noisy == [], [f.title for f in noisy]
    # the check had something to judge: a round trip on most ticks (a sample that timed
    # out on the saturated suite machine has none, once in a full run: the source's
    # right answer then, and latency_bound's to skip)
    rtts = [t.primary.mysql.rtt_ms for t in out.ticks]
    assert sum(r is not None for r in rtts) >= 0.8 * len(rtts), rtts
    assert out.ticks[-1].primary.rates.host.dt_s is not None

