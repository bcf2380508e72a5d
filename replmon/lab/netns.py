"""The two-host lab's network (replmon.lab.hosts): network namespaces, veth links and
their qdiscs, and the reaper that removes them whatever way the lab's process ends.

Each node is a network namespace of its own (``lab-db163-<tag>``, ``<tag>`` random per
lab, so parallel test workers never meet) with two links, as real pairs often have:

* ``eth0``, the monitoring link: a veth pair from the root namespace (where replmon runs;
  its end there is ``rl<tag>-db163``), 10.X.Y.0/30 for the first node, 10.X.Y.4/30 for
  the second (the root's end ``.1``/``.5``, the node's ``.2``/``.6``);
* ``eth1``, the replication link: a veth pair straight between the two namespaces,
  10.X.Y.8/30 (``.9`` and ``.10``), that MySQL and Redis replicate over.

10.X.Y.0/24 is drawn at random from 10.64.0.0/10 among the subnets no route of the root
namespace reaches yet (under a lock, so two labs starting at once take two). Nothing but
the lab's own veth ends is added to the root namespace.

The reaper (``Reaper``) is a process of its own session that waits for EOF on a pipe from
the lab's process: when the lab stops, after a SIGTERM, or when its process is killed
(SIGKILL: nothing of it runs), the pipe closes and the reaper kills every process left in
the lab's namespaces (frozen ones too), deletes the namespaces (their veths and qdiscs go
with them), the root ends of the links and the lab's directories, as the lab's state file
lists them at that moment.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from replmon.errors import LabError
from replmon.lab.servers import cache_dir, locked

POOL = ipaddress.IPv4Network("10.64.0.0/10")
"""Where a lab's /24 is drawn from."""
MONITOR_DEV = "eth0"
REPLICATION_DEV = "eth1"


def ip(*args: str, ns: str | None = None, check: bool = True) -> str:
    """``ip [-n ns] args``: its stdout; LabError with ip's stderr when it fails and
    ``check``."""
    argv = ["ip", *(("-n", ns) if ns else ()), *args]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    if check and res.returncode != 0:
        raise LabError(f"{' '.join(argv)}: {res.stderr.strip() or res.returncode}")
    return res.stdout


def in_ns(ns: str, argv: list[str], check: bool = True) -> str:
    """Run ``argv`` in namespace ``ns`` (``ip netns exec``); its stdout."""
    full = ["ip", "netns", "exec", ns, *argv]
    res = subprocess.run(full, capture_output=True, text=True, timeout=20, check=False)
    if check and res.returncode != 0:
        raise LabError(f"{' '.join(full)}: {res.stderr.strip() or res.returncode}")
    return res.stdout


@dataclass(frozen=True)
class HostNet:
    """One node's place in the lab's network."""

    hostname: str
    """The node's name, as its processes see it (``lab-db163``)."""
    ns: str
    """Its network namespace (``lab-db163-<tag>``)."""
    root_dev: str
    """The root namespace's end of its monitoring link."""
    monitor_addr: str
    """Its address on the monitoring link (replmon, the tests and the write load use it)."""
    monitor_peer: str
    """The root namespace's address on that link."""
    repl_addr: str
    """Its address on the replication link."""

    def argv(self, argv: list[str]) -> list[str]:
        """The command line that runs ``argv`` on this node: in its namespace, under its
        own hostname (a UTS namespace of the process's own: ``unshare --uts``; ``exec``
        all along, so the process started is ``argv``'s)."""
        return ["ip", "netns", "exec", self.ns, "unshare", "--uts", "--", "sh", "-c",
                'printf %s "$0" > /proc/sys/kernel/hostname && exec "$@"', self.hostname,
                *argv]


@dataclass
class State:
    """What the reaper removes: written by the lab before it makes each thing."""

    namespaces: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    """Root-namespace ends of the monitoring links."""
    dirs: list[str] = field(default_factory=list)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> State:
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError):
            return cls()


class Network:
    """The two nodes' namespaces and links (``hostnames``: the first node's, the
    second's), made by ``make`` and recorded in ``state`` (saved to ``state_path``)
    before each is made."""

    def __init__(self, hostnames: tuple[str, str], state: State, state_path: Path) -> None:
        self.tag = os.urandom(2).hex()
        self.state = state
        self.state_path = state_path
        self.subnet = ipaddress.IPv4Network("10.0.0.0/24")  # drawn in make()
        self.hosts = tuple(self._host(i, name) for i, name in enumerate(hostnames))

    def _host(self, i: int, hostname: str) -> HostNet:
        short = hostname.removeprefix("lab-")
        base = self.subnet.network_address + 4 * i
        return HostNet(hostname=hostname, ns=f"{hostname}-{self.tag}",
                       root_dev=f"rl{self.tag}-{short}"[:15], monitor_addr=str(base + 2),
                       monitor_peer=str(base + 1),
                       repl_addr=str(self.subnet.network_address + 9 + i))

    def make(self) -> None:
        with locked(cache_dir() / "netns.lock"):
            self.subnet = _free_subnet()
            self.hosts = tuple(self._host(i, h.hostname) for i, h in enumerate(self.hosts))
            while any(Path(f"/run/netns/{h.ns}").exists()
                      or Path(f"/sys/class/net/{h.root_dev}").exists() for h in self.hosts):
                # another lab's tag: never in our state, whose reaper would remove it
                self.tag = os.urandom(2).hex()
                self.hosts = tuple(self._host(i, h.hostname) for i, h in enumerate(self.hosts))
            for h in self.hosts:
                self.state.namespaces.append(h.ns)
                self.state.links.append(h.root_dev)
                self.state.save(self.state_path)
                ip("netns", "add", h.ns)
                ip("link", "set", "lo", "up", ns=h.ns)
                ip("link", "add", h.root_dev, "type", "veth", "peer", "name", MONITOR_DEV,
                   "netns", h.ns)
                ip("addr", "add", f"{h.monitor_peer}/30", "dev", h.root_dev)
                ip("link", "set", h.root_dev, "up")
                ip("addr", "add", f"{h.monitor_addr}/30", "dev", MONITOR_DEV, ns=h.ns)
                ip("link", "set", MONITOR_DEV, "up", ns=h.ns)
        a, b = self.hosts
        ip("link", "add", REPLICATION_DEV, "netns", a.ns, "type", "veth", "peer", "name",
           REPLICATION_DEV, "netns", b.ns)
        for h in self.hosts:
            ip("addr", "add", f"{h.repl_addr}/30", "dev", REPLICATION_DEV, ns=h.ns)
            ip("link", "set", REPLICATION_DEV, "up", ns=h.ns)

    # --- what the faults do -------------------------------------------------------
    def set_link(self, host: HostNet, dev: str, up: bool) -> None:
        """``ip link set dev up|down`` in ``host``'s namespace: the other end has no
        carrier, and what is sent to it is lost (the sender times out, as over a cable
        cut far away). The replication link is set down at both ends; the monitoring link
        only at the node's: with the root's end down, its route would go, and the
        monitor's packets for the node would leave this machine by its default route."""
        state = "up" if up else "down"
        ip("link", "set", dev, state, ns=host.ns)
        if dev == REPLICATION_DEV:
            ip("link", "set", dev, state, ns=self.other(host).ns)

    def other(self, host: HostNet) -> HostNet:
        return self.hosts[1] if host is self.hosts[0] else self.hosts[0]

    @staticmethod
    def shape(host: HostNet, dev: str, rate_kbit: int | None) -> None:
        """A ``tbf`` qdisc of ``rate_kbit`` on ``dev``'s egress in ``host``'s namespace
        (None: removed, the default qdisc back)."""
        if rate_kbit is None:
            in_ns(host.ns, ["tc", "qdisc", "del", "dev", dev, "root"], check=False)
            return
        # burst: one 10 ms slice of the rate, at least a few full frames; 400 ms of queue
        burst = max(rate_kbit * 1000 // 8 // 100, 8 * 1514)
        in_ns(host.ns, ["tc", "qdisc", "replace", "dev", dev, "root", "tbf",
                        "rate", f"{rate_kbit}kbit", "burst", str(burst), "latency", "400ms"])

    @staticmethod
    def counters(host: HostNet, dev: str) -> tuple[int, int]:
        """(rx, tx) bytes of ``dev`` in ``host``'s namespace, from the kernel."""
        path = f"/sys/class/net/{dev}/statistics"
        out = in_ns(host.ns, ["cat", f"{path}/rx_bytes", f"{path}/tx_bytes"])
        rx, tx = out.split()
        return int(rx), int(tx)

    @staticmethod
    def signal_all(host: HostNet, sig: int) -> list[int]:
        """Send ``sig`` to every process in ``host``'s namespace; their pids."""
        pids = ns_pids(host.ns)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        return pids


def ns_pids(ns: str) -> list[int]:
    """The processes in network namespace ``ns`` (none when it is gone)."""
    out = ip("netns", "pids", ns, check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 of POOL that no route of the root namespace overlaps."""
    taken = []
    for line in ip("-4", "route", "show", "table", "all").splitlines():
        # "10.1.2.0/24 dev eth0 ...", "local 10.1.2.3 dev eth0 table local ...", "default via"
        dest = next((w for w in line.split()[:2] if w[:1].isdigit()), None)
        if dest is not None:
            taken.append(ipaddress.ip_network(dest, strict=False))
    rng = random.Random()
    for _ in range(200):
        n = rng.randrange(POOL.num_addresses // 256)
        subnet = ipaddress.IPv4Network(f"{POOL.network_address + 256 * n}/24")
        if not any(subnet.overlaps(t) for t in taken if t.prefixlen > 0):
            return subnet
    raise LabError(f"no free /24 left in {POOL} for the two-host lab")


# --- the reaper -----------------------------------------------------------------------

def reap(state: State, timeout: float = 15.0) -> None:
    """Remove everything ``state`` lists: every process in its namespaces (SIGKILL, which
    ends a stopped one too), the namespaces, the root ends of their links, the dirs."""
    pids = [pid for ns in state.namespaces for pid in ns_pids(ns)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    for ns in state.namespaces:
        ip("netns", "del", ns, check=False)
    for dev in state.links:  # gone with its peer's namespace, unless that failed
        if Path(f"/sys/class/net/{dev}").exists():
            ip("link", "del", dev, check=False)
    for d in state.dirs:
        shutil.rmtree(d, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Running (a zombie is not: it waits only for its parent to read its status)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


class Reaper:
    """``python -m replmon.lab.netns STATE``, started in a session of its own (a signal
    to the lab's process group does not reach it): it reaps ``STATE`` once its stdin,
    a pipe from this process, reaches EOF."""

    def __init__(self, state_path: Path) -> None:
        self.state_path = state_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "replmon.lab.netns", str(self.state_path)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)

    def stop(self, timeout: float = 30.0) -> None:
        """Close the pipe, wait for the reaper's work; reap here if it is not running."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            reap(State.load(self.state_path))
            self.state_path.unlink(missing_ok=True)
            return
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
            reap(State.load(self.state_path))


def _main(state_path: Path) -> None:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    while sys.stdin.buffer.read(4096):
        pass
    reap(State.load(state_path))
    state_path.unlink(missing_ok=True)


if __name__ == "__main__":  # python -m replmon.lab.netns STATE: the reaper
    _main(Path(sys.argv[1]))
