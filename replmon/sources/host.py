"""The host source: this node's CPU, load, memory/swap, paging, disks, NICs and PSI.

Everything comes from /proc and /sys text read through the runner, so the same
code serves this machine (LocalRunner) and, later, a remote node over SSH.

Per tick: ONE ``runner.read_files`` call for the /proc files in
``host_parse.PROC_FILES`` (one round trip on a remote runner), then the pure
parsers build a HostSample of raw counters; rates come later from two samples
(``replmon.model.host.derive_host_rates``).

Link speeds (/sys/class/net/<if>/speed) are not read every tick: they change
only on renegotiation, and reading them fails with EINVAL for lo, virtual
interfaces and links that are down, which a batch read would turn into an
error for the whole tick. They are read one by one, tolerating failures, on
the first sample, whenever the set of interfaces in /proc/net/dev changes, and
otherwise every ``SPEED_REFRESH_S`` seconds; in between the last texts are reused.

What caps a link below its speed, a shaper as the root qdisc (tbf, cake: a veth reads
10000 Mbit/s whatever shapes it), is read from ``tc -j qdisc show`` every
``QDISC_REFRESH_S`` seconds (a shaper is added at run time, as the two-host lab's
saturated link is), alongside the files; a node without tc is asked again after
``SPEED_REFRESH_S``.

Failures: no /proc/stat -> SourceError "unreachable" (not a Linux /proc, or a
wrong proc_root); garbled text -> ParseError -> status "parse_error". Other
files may be missing: their fields stay None/empty.
"""

from __future__ import annotations

import asyncio
import math
import socket
import struct
import time
from typing import Any, ClassVar

from replmon.errors import SourceError
from replmon.model.base import fill_fresh
from replmon.model.host import HostSample
from replmon.sources.base import Source
from replmon.sources.host_parse import PROC_FILES, QDISC_KEY, build_host_sample, speed_path
from replmon.sources.runner import LocalRunner, Runner

PEER_RTT_SCRIPT = ('s=$EPOCHREALTIME; exec 3<>"/dev/tcp/$1/$2" || exit 3; '
                   'e=$EPOCHREALTIME; exec 3>&-; echo "$s $e"')
"""bash (5.0+ for $EPOCHREALTIME, no fork between the two clock reads): connect, close."""


TCP_INFO_LEN = 104
"""Bytes of Linux's struct tcp_info read (up to tcpi_rcv_space: every kernel since 2.6)."""
TCPI_RTT_OFFSET = 68
"""Offset of ``tcpi_rtt`` (u32, microseconds: the smoothed round trip) in struct tcp_info:
8 bytes of u8 fields, then rto, ato, snd_mss, rcv_mss, unacked, sacked, lost, retrans,
fackets, last_data_sent, last_ack_sent, last_data_recv, last_ack_recv, pmtu,
rcv_ssthresh, rtt (include/uapi/linux/tcp.h). Right after a connect it holds the
handshake's round trip, the only sample so far."""


def parse_peer_rtt(text: str) -> float | None:
    """'<start> <end>' epoch seconds (a locale may print a decimal comma) -> ms."""
    parts = text.replace(",", ".").split()
    if len(parts) != 2:
        return None
    try:
        start, end = float(parts[0]), float(parts[1])
    except ValueError:
        return None
    return (end - start) * 1000.0 if end >= start else None


SPEED_REFRESH_S = 60.0
"""Seconds between re-reads of the link speeds when the interface set is unchanged."""
QDISC_REFRESH_S = 5.0
"""Seconds between reads of the root qdiscs (``tc -j qdisc show``): one process on the
node, ~2 ms of its CPU, every 5 s rather than every tick."""
QDISC_ARGV = ["tc", "-j", "qdisc", "show"]


class _LocalQdiscs:
    """This machine's root qdiscs, read once for every local host source of the process.

    Every node a process reads through a LocalRunner is this machine, in this process's
    network namespace: ``tc`` prints the same text for each. ``replmon serve`` with
    local nodes ran one ``tc`` per node every QDISC_REFRESH_S (at 5 s, a process per
    node-tick: at 200 pairs 80 a second, with asyncio's child watcher thread and pipes
    for each); they now share one read per QDISC_REFRESH_S, and sources asking while it
    runs wait for it. Kept per event loop (a test's loop ends with it)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.text: str | None = None
        self.due = -math.inf
        self.pending: asyncio.Future[str | None] | None = None

    async def read(self, runner: Runner) -> str | None:
        loop = asyncio.get_running_loop()
        if loop is not self.loop:
            self.loop, self.text, self.due, self.pending = loop, None, -math.inf, None
        if self.pending is not None:
            return await asyncio.shield(self.pending)
        now = time.monotonic()
        if now < self.due:
            return self.text
        fut: asyncio.Future[str | None] = loop.create_future()
        self.pending = fut
        try:
            try:
                self.text = await runner.run(QDISC_ARGV)
                self.due = now + QDISC_REFRESH_S
            except (FileNotFoundError, SourceError):
                self.text, self.due = None, now + SPEED_REFRESH_S
        finally:
            self.pending = None
            fut.set_result(self.text)  # a cancelled read hands on what was there
        return self.text


_LOCAL_QDISCS = _LocalQdiscs()


class HostSource(Source[HostSample]):
    """Samples one Linux host's /proc and /sys through a runner.

    ``proc_root``/``sys_root`` relocate the trees (a captured fixture, a container's
    host mount such as /host/proc)."""

    kind: ClassVar[str] = "host"
    sample_type = HostSample
    fresh_samples = True  # (build_host_sample: a new HostSample.trusted each call)

    def __init__(
        self,
        runner: Runner,
        *,
        timeout: float = 0.8,
        proc_root: str = "/proc",
        sys_root: str = "/sys",
        peer: tuple[str, int] | None = None,
        qdiscs: bool = True,
    ) -> None:
        super().__init__(timeout=timeout)
        self.runner = runner
        self.peer = peer
        """(host, port) of the other node's server to time a TCP connect to, each tick."""
        self.proc_root = proc_root.rstrip("/")
        self.sys_root = sys_root.rstrip("/")
        self._proc_paths: dict[str, str] = {self.real_path(c): c for c in PROC_FILES}
        """Real path -> canonical path, for the per-tick batch read."""
        self._speeds: dict[str, str | None] = {}
        """Canonical speed path -> its last text (None: unreadable)."""
        self._speed_nics: frozenset[str] | None = None
        self._speeds_mono = -math.inf
        self._peer_addr: tuple[int, Any] | None = None
        """(address family, socket address) of ``peer``, looked up once."""
        self._qdiscs: str | None = None
        """The last ``tc -j qdisc show`` text (None: not read, or no tc)."""
        self._qdiscs_due = -math.inf if qdiscs else math.inf

    def __repr__(self) -> str:
        return f"HostSource(proc_root={self.proc_root!r}, sys_root={self.sys_root!r})"

    def real_path(self, canonical: str) -> str:
        """Where a canonical path ("/proc/stat", "/sys/class/net/eth0/speed") really is."""
        if canonical.startswith("/proc/"):
            return self.proc_root + canonical[len("/proc"):]
        if canonical.startswith("/sys/"):
            return self.sys_root + canonical[len("/sys"):]
        return canonical

    async def _fetch(self) -> HostSample:
        if self.peer is None:
            texts = await self.runner.read_files(list(self._proc_paths))
            rtt = None
        else:  # files first: on an SSH channel the batch runs in this order
            texts, rtt = await asyncio.gather(self.runner.read_files(list(self._proc_paths)),
                                              self._peer_rtt(self.peer))
        files = {canon: texts.get(real) for real, canon in self._proc_paths.items()}
        if self.sys_root == "/sys":  # tc reads the live kernel, not a relocated tree
            files[QDISC_KEY] = await self._read_qdiscs()
        if files["/proc/stat"] is None:
            raise SourceError(
                f"{self.real_path('/proc/stat')} not found",
                state="unreachable",
                hint="host metrics need a Linux /proc (check proc_root)",
            )
        sample = build_host_sample({**files, **self._speeds})
        nics = frozenset(sample.nics)
        now = time.monotonic()
        if nics != self._speed_nics or now - self._speeds_mono >= SPEED_REFRESH_S:
            self._speeds = await self._read_speeds(nics)
            self._speed_nics, self._speeds_mono = nics, now
            sample = build_host_sample({**files, **self._speeds})
        if self.peer is not None:
            # set on build_host_sample's new record, not copied (fill_fresh: it is this
            # sample's alone)
            fill_fresh(sample, {"peer": f"{self.peer[0]}:{self.peer[1]}", "peer_rtt_ms": rtt})
        monitor = getattr(self.runner, "client_addr", None)  # an SshRunner's
        if isinstance(monitor, str):
            fill_fresh(sample, {"monitor_addr": monitor})
        return sample

    async def _peer_rtt(self, peer: tuple[str, int]) -> float | None:
        """One TCP connect from the node to ``peer``, timed on the node; None on failure.
        Bounded by coreutils timeout, so a dead peer never holds up the host sample.
        On this machine (LocalRunner), the connect is made here and the kernel times it
        (``_kernel_connect_rtt``): a bash per primary per tick cost 0.8 ms of replmon's
        CPU and 2.6 ms of the child's, the largest share of a fleet's pair-tick."""
        limit = max(0.1, 0.4 * self.timeout)
        if isinstance(self.runner, LocalRunner) and hasattr(socket, "TCP_INFO"):
            return await self._kernel_connect_rtt(peer, limit)
        try:
            # --norc: bash started under sshd reads ~/.bashrc even with -c (Debian's
            # SSH_SOURCE_BASHRC): a pyenv set up there cost the node ~90 ms of CPU a
            # tick, and a .bashrc that prints broke the reading
            out = await self.runner.run(["timeout", f"{limit:.2f}", "bash", "--norc", "-c",
                                         PEER_RTT_SCRIPT, "replmon-peer-rtt", peer[0],
                                         str(peer[1])])
        except (FileNotFoundError, SourceError):
            return None
        return parse_peer_rtt(out)

    async def _kernel_connect_rtt(self, peer: tuple[str, int], limit: float) -> float | None:
        """A non-blocking connect from this process; the round trip is the kernel's own
        measure of the handshake (TCP_INFO ``tcpi_rtt``, from the SYN to its SYN-ACK),
        so the event loop's delays do not count, as they do not in bash's connect. The
        peer's address is looked up once (again after a failure)."""
        loop = asyncio.get_running_loop()
        try:
            if self._peer_addr is None:
                infos = await loop.getaddrinfo(peer[0], peer[1], type=socket.SOCK_STREAM)
                self._peer_addr = (infos[0][0], infos[0][4])
            family, addr = self._peer_addr
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.setblocking(False)
                async with asyncio.timeout(limit):
                    await loop.sock_connect(sock, addr)
                info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
        except (OSError, TimeoutError):
            self._peer_addr = None
            return None
        return float(struct.unpack_from("I", info, TCPI_RTT_OFFSET)[0]) / 1000.0

    async def _read_qdiscs(self) -> str | None:
        """``tc -j qdisc show``'s text, re-read every QDISC_REFRESH_S (SPEED_REFRESH_S
        after a failure: no tc there)."""
        if self._qdiscs_due == math.inf:  # not read (qdiscs=False)
            return self._qdiscs
        if type(self.runner) is LocalRunner:
            return await _LOCAL_QDISCS.read(self.runner)
        now = time.monotonic()
        if now >= self._qdiscs_due:
            try:
                self._qdiscs = await self.runner.run(QDISC_ARGV)
                self._qdiscs_due = now + QDISC_REFRESH_S
            except (FileNotFoundError, SourceError):
                self._qdiscs, self._qdiscs_due = None, now + SPEED_REFRESH_S
        return self._qdiscs

    async def _read_speeds(self, nics: frozenset[str]) -> dict[str, str | None]:
        """Each NIC's speed file text; None where it is missing or unreadable (EINVAL).
        lo has no speed and is not read."""
        out: dict[str, str | None] = {}
        for nic in sorted(nics - {"lo"}):
            canon = speed_path(nic)
            try:
                out[canon] = await self.runner.read_file(self.real_path(canon))
            except (FileNotFoundError, SourceError):
                out[canon] = None
        return out
