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

Failures: no /proc/stat -> SourceError "unreachable" (not a Linux /proc, or a
wrong proc_root); garbled text -> ParseError -> status "parse_error". Other
files may be missing: their fields stay None/empty.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import ClassVar

from replmon.errors import SourceError
from replmon.model.host import HostSample
from replmon.sources.base import Source
from replmon.sources.host_parse import PROC_FILES, build_host_sample, speed_path
from replmon.sources.runner import Runner

PEER_RTT_SCRIPT = ('s=$EPOCHREALTIME; exec 3<>"/dev/tcp/$1/$2" || exit 3; '
                   'e=$EPOCHREALTIME; exec 3>&-; echo "$s $e"')
"""bash (5.0+ for $EPOCHREALTIME, no fork between the two clock reads): connect, close."""


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


class HostSource(Source[HostSample]):
    """Samples one Linux host's /proc and /sys through a runner.

    ``proc_root``/``sys_root`` relocate the trees (a captured fixture, a container's
    host mount such as /host/proc)."""

    kind: ClassVar[str] = "host"
    sample_type = HostSample

    def __init__(
        self,
        runner: Runner,
        *,
        timeout: float = 0.8,
        proc_root: str = "/proc",
        sys_root: str = "/sys",
        peer: tuple[str, int] | None = None,
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
            sample = sample.model_copy(update={"peer": f"{self.peer[0]}:{self.peer[1]}",
                                               "peer_rtt_ms": rtt})
        return sample

    async def _peer_rtt(self, peer: tuple[str, int]) -> float | None:
        """One TCP connect from the node to ``peer``, timed on the node; None on failure.
        Bounded by coreutils timeout, so a dead peer never holds up the host sample."""
        limit = f"{max(0.1, 0.4 * self.timeout):.2f}"
        try:
            out = await self.runner.run(["timeout", limit, "bash", "-c", PEER_RTT_SCRIPT,
                                         "replmon-peer-rtt", peer[0], str(peer[1])])
        except (FileNotFoundError, SourceError):
            return None
        return parse_peer_rtt(out)

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
