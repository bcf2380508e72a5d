"""What replmon knows about DRBD on one node after one sample, and the rates between two.

One normalised model for both DRBD generations (reference/drbd.md §0):

* **DRBD 9** (``drbdsetup status --json``): resource -> devices (one per volume) +
  connections (one per peer) -> peer devices (one per volume and peer).
* **DRBD 8.x** (``/proc/drbd``) is the one-peer case: each minor becomes a resource
  named after its minor number ("0", "1", ...) with one device (volume 0) and one
  connection to a peer named "peer" holding one peer device (volume 0).

States use the DRBD 9 vocabulary (drbd.md §2.5). The 8.x ``cs:`` value is split in two,
as DRBD 9 does: ``connection_state`` (StandAlone ... Connecting, Connected) and
``replication_state`` (Off, Established, SyncSource, ...); the raw value stays in
``DrbdConnection.cs``. All sizes and counters are KiB unless a field says otherwise.

Every field has a default, so a failed sample is just ``DrbdSample(status=..., wall=...,
mono=...)``. In an ok sample a field is None when the source does not report it (8.0 has
no ``oos``; old drbd-utils omit JSON keys; an Unconfigured minor has no counters).

``derive_drbd_rates(prev, cur)`` turns two samples into ``DrbdRates``: KiB/s per device
and per peer device over the real (monotonic) time between the samples.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal

from replmon.model.base import SampleBase, Struct, struct
from replmon.model.rates import counter_rate

Flavour = Literal["8", "9"]
Protocol = Literal["A", "B", "C"]


@struct
class DrbdResync(Struct):
    """Progress of a running resync or online verify on one peer device."""

    verify: bool = False
    """True for an online verify (8.x ``verified:``, VerifyS/VerifyT), False for a resync."""
    percent_done: float | None = None
    """Percent of the resync (or verify) done, 0-100 (8.x ``sync'ed:``; 9
    ``percent-resync-done``)."""
    left_kib: int | None = None
    """KiB still to go (8.x ``(left/total)`` converted from K or M; 9: out-of-sync)."""
    total_kib: int | None = None
    """KiB the resync covers in total (8.x ``(left/total)``; 9 ``rs-total`` sectors / 2)."""
    eta_s: int | None = None
    """Seconds to finish as DRBD estimates it (8.x ``finish:``; 9
    ``estimated-seconds-to-finish``). None when unknown or when there is no progress."""
    speed_kib_s: float | None = None
    """KiB/s over the last few seconds (8.x first ``speed:`` number; 9 ``db1/dt1`` x 1024)."""
    avg_speed_kib_s: float | None = None
    """KiB/s averaged since the resync started, pauses excluded (8.x the number in
    parentheses; 9 ``db/dt`` x 1024)."""
    want_kib_s: float | None = None
    """KiB/s the dynamic resync controller aims for (8.x ``want:``, shown on SyncTarget and
    VerifyS only; 9 ``want`` x 1024)."""
    stalled: bool = False
    """DRBD reports no progress (8.x ``(stalled)`` or a ``stalled`` line; 9 ETA 987654321)."""
    suspended: list[str] = field(default_factory=list)
    """Why the resync is paused: any of "user", "peer", "dependency", "max-parallel";
    empty when it runs (same as ``DrbdPeerDevice.resync_suspended``)."""


@struct
class DrbdDevice(Struct):
    """One volume of a resource on this node: the local disk and its counters."""

    volume: int = 0
    """Volume number inside the resource (always 0 on 8.x)."""
    minor: int | None = None
    """Device minor number: /dev/drbd<minor>."""
    disk_state: str | None = None
    """Local disk state: Diskless, Attaching, Detaching, Failed, Negotiating, Inconsistent,
    Outdated, DUnknown, Consistent, UpToDate."""
    client: bool | None = None
    """9 only: intentionally diskless (a DRBD client), so Diskless is not a fault."""
    quorum: bool | None = None
    """9 only: False when this device lost quorum (I/O may be frozen)."""
    size_kib: int | None = None
    """KiB: usable size of the device (9 only)."""
    read_kib: int | None = None
    """KiB read from the local disk (counter; 8.x ``dr``, u32 that wraps and resets on attach)."""
    written_kib: int | None = None
    """KiB written to the local disk (counter; 8.x ``dw``)."""
    al_writes: int | None = None
    """Activity-log metadata updates (counter; 8.x ``al``)."""
    bm_writes: int | None = None
    """Bitmap metadata updates (counter; 8.x ``bm``)."""
    lower_pending: int | None = None
    """Requests open on the local backing device (gauge; 8.x ``lo``)."""
    upper_pending: int | None = None
    """Application requests handed to DRBD and not yet completed (gauge; 8.x ``ap``)."""
    al_suspended: bool | None = None
    """Activity-log updates suspended (8.x 6th I/O flag ``s``); None when not reported."""
    blocked: str | None = None
    """What holds application I/O back: "no", "upper" (DRBD froze I/O), "lower" (backing
    device congested) or "upper,lower". 8.x: derived from the 5th I/O flag (d/c -> upper,
    b/a -> lower); None when not reported (9 JSON, 4-flag kernels)."""


@struct
class DrbdPeerDevice(Struct):
    """One volume as seen over one connection: replication state and traffic to that peer."""

    volume: int = 0
    """Volume number (always 0 on 8.x)."""
    replication_state: str | None = None
    """Off (not connected), Established (normal), StartingSyncS/T, WFBitMapS/T, WFSyncUUID,
    SyncSource, SyncTarget, VerifyS, VerifyT, PausedSyncS/T, Ahead, Behind. None for an
    8.x cs value replmon does not know."""
    peer_disk_state: str | None = None
    """The peer's disk state as this node knows it (DUnknown while disconnected)."""
    peer_client: bool | None = None
    """9 only: the peer is intentionally diskless."""
    sent_kib: int | None = None
    """KiB sent to the peer (counter; 8.x ``ns``, zeroed again on connect)."""
    received_kib: int | None = None
    """KiB received from the peer (counter; 8.x ``nr``)."""
    out_of_sync_kib: int | None = None
    """KiB known to differ from the peer (gauge; 8.x ``oos``, absent before 8.2.6)."""
    pending: int | None = None
    """Requests sent to the peer and not yet answered, resync included (gauge; 8.x ``pe``)."""
    unacked: int | None = None
    """Requests received from the peer and not yet answered by this node (gauge; 8.x ``ua``)."""
    epochs: int | None = None
    """8.x only: epochs (write barriers) in flight, usually 1 (gauge; ``ep``)."""
    percent_in_sync: float | None = None
    """9 only: percent of the device in sync with this peer (100 x (1 - oos / size))."""
    resync_suspended: list[str] = field(default_factory=list)
    """Why a resync with this peer is held: "user", "peer", "dependency", "max-parallel"
    (8.x I/O flags u, p, a). Empty when nothing holds it."""
    resync: DrbdResync | None = None
    """Progress while a resync or verify runs (or is paused); None otherwise."""


@struct
class DrbdConnection(Struct):
    """This node's connection to one peer of a resource."""

    peer: str = "peer"
    """Peer host name (9: the connection name); "peer" on 8.x, which has no names."""
    peer_node_id: int | None = None
    """9 only: the peer's node id."""
    connection_state: str | None = None
    """DRBD 9 vocabulary: StandAlone, Disconnecting, Unconnected, Timeout, BrokenPipe,
    NetworkFailure, ProtocolError, TearDown, Connecting, Connected. 8.x WFConnection and
    WFReportParams become Connecting; sync/verify/Ahead/Behind states become Connected (their
    detail is in ``replication_state``); Unconfigured becomes StandAlone. None for an
    unknown 8.x value (see ``cs``)."""
    cs: str | None = None
    """8.x only: the raw ``cs:`` value (e.g. WFConnection, SyncSource, Unconfigured)."""
    peer_role: str | None = None
    """Primary, Secondary or Unknown (Unknown while disconnected)."""
    protocol: Protocol | None = None
    """Replication protocol A (async), B (memory sync), C (sync); None when not shown (8.x
    StandAlone has no net config; 9 status does not print it)."""
    congested: bool | None = None
    """TCP send buffer congested (9 ``congested``; 8.x 5th I/O flag n or a). None when not
    reported. Recent 8.x mainline kernels always print ``-`` there."""
    io_flags: str | None = None
    """8.x only: the raw I/O state flags, e.g. "r-----" (drbd.md §1.5)."""
    ap_in_flight_sectors: int | None = None
    """9 only: application writes in flight to the peer, 512-byte sectors (gauge)."""
    rs_in_flight_sectors: int | None = None
    """9 only: resync requests in flight to the peer, 512-byte sectors (gauge)."""
    peer_devices: list[DrbdPeerDevice] = field(default_factory=list)
    """One per volume."""


@struct
class DrbdResource(Struct):
    """One DRBD resource on this node (8.x: one minor)."""

    name: str = ""
    """Resource name; on 8.x the minor number as a string ("0")."""
    node_id: int | None = None
    """9 only: this node's id in the resource."""
    role: str | None = None
    """This node's role: Primary, Secondary or Unknown."""
    suspended: bool | None = None
    """Application I/O is frozen (9 ``suspended``; 8.x 1st I/O flag ``s``)."""
    suspend_reasons: list[str] = field(default_factory=list)
    """9 only: why I/O is frozen: any of "user", "no-data", "fencing", "quorum"."""
    write_ordering: str | None = None
    """How DRBD orders writes on the backing disk: "none", "drain", "flush" or "barrier"
    (8.x ``wo:`` n/d/f/b)."""
    devices: list[DrbdDevice] = field(default_factory=list)
    """One per volume."""
    connections: list[DrbdConnection] = field(default_factory=list)
    """One per peer."""


@struct
class DrbdSample(SampleBase):
    """One reading of DRBD on one node."""

    version: str | None = None
    """DRBD kernel module version from /proc/drbd line 1, e.g. "8.4.6" or "9.0.22-2"."""
    flavour: Flavour | None = None
    """"8": read from /proc/drbd; "9": read from ``drbdsetup status --json``."""
    resources: list[DrbdResource] = field(default_factory=list)
    """Resources in the order DRBD lists them (8.x: by minor). Empty when none is configured."""
    notes: list[str] = field(default_factory=list)
    """What the parser met and could not place without losing anything below it (a
    /proc/drbd header line of a form it does not know), one line each."""

    def devices_by_key(self) -> dict[str, DrbdDevice]:
        """Every device keyed "resource/volume" (e.g. "0/0", "r0/1")."""
        return {f"{r.name}/{d.volume}": d for r in self.resources for d in r.devices}

    def peer_devices_by_key(self) -> dict[str, DrbdPeerDevice]:
        """Every peer device keyed "resource/peer/volume" (e.g. "0/peer/0", "r0/alice/0")."""
        return {
            f"{r.name}/{c.peer}/{p.volume}": p
            for r in self.resources
            for c in r.connections
            for p in c.peer_devices
        }


# --- rates -------------------------------------------------------------------------


@struct
class DrbdDeviceRates(Struct):
    """One device between two samples."""

    written_kib_s: float | None = None
    """KiB/s written to the local disk."""
    read_kib_s: float | None = None
    """KiB/s read from the local disk."""


@struct
class DrbdPeerDeviceRates(Struct):
    """One peer device between two samples."""

    sent_kib_s: float | None = None
    """KiB/s sent to the peer (replication plus resync)."""
    received_kib_s: float | None = None
    """KiB/s received from the peer."""
    out_of_sync_change_kib_s: float | None = None
    """Change of out-of-sync per second, KiB/s: positive while divergence grows (writes
    while disconnected), negative while a resync catches up. A gauge difference, so it may
    be negative; None without both readings."""


@struct
class DrbdRates(Struct):
    """What changed in DRBD on one node between two DrbdSamples.

    Shape: two flat dicts, easy to read from checks and displays::

        devices["<resource>/<volume>"]             -> DrbdDeviceRates
        peer_devices["<resource>/<peer>/<volume>"] -> DrbdPeerDeviceRates

    with the same keys as ``DrbdSample.devices_by_key()`` / ``peer_devices_by_key()`` of
    the current sample (8.x: "0/0" and "0/peer/0"). Every device of the current sample has
    an entry; a rate is None when it cannot be trusted: no previous sample, the item is
    new, time did not advance, or a counter went down (reconnect, re-attach, 32-bit wrap).
    """

    dt_s: float | None = None
    """Seconds between the two readings (monotonic clock); None without a usable pair."""
    devices: dict[str, DrbdDeviceRates] = field(default_factory=dict)
    """Per device, keyed "resource/volume"."""
    peer_devices: dict[str, DrbdPeerDeviceRates] = field(default_factory=dict)
    """Per peer device, keyed "resource/peer/volume"."""


def _gauge_change(prev: int | None, cur: int | None, dt: float) -> float | None:
    if prev is None or cur is None or dt <= 0:
        return None
    return (cur - prev) / dt


def derive_drbd_rates(prev: DrbdSample | None, cur: DrbdSample) -> DrbdRates:
    """Rates for ``cur`` from an earlier sample of the same node (None for the first).

    Devices match by (resource, volume), peer devices by (resource, peer, volume); the
    time base is ``cur.mono - prev.mono``. Pure: the same pair always gives the same result.

    The records are built with ``Struct.trusted`` (no validation), as the other kinds'
    rates are: every rate is counter_rate's or _gauge_change's float (or None), ``dt`` a
    difference of two float clocks, the dicts new here.
    """
    dt = cur.mono - prev.mono if prev is not None else None
    usable = dt is not None and dt > 0
    span = dt if dt is not None and usable else 0.0
    old_dev = prev.devices_by_key() if prev is not None and usable else {}
    old_peer = prev.peer_devices_by_key() if prev is not None and usable else {}

    devices: dict[str, DrbdDeviceRates] = {}
    for key, d in cur.devices_by_key().items():
        o = old_dev.get(key)
        devices[key] = DrbdDeviceRates.trusted(
            written_kib_s=counter_rate(o.written_kib if o else None, d.written_kib, span),
            read_kib_s=counter_rate(o.read_kib if o else None, d.read_kib, span),
        )
    peers: dict[str, DrbdPeerDeviceRates] = {}
    for key, p in cur.peer_devices_by_key().items():
        q = old_peer.get(key)
        peers[key] = DrbdPeerDeviceRates.trusted(
            sent_kib_s=counter_rate(q.sent_kib if q else None, p.sent_kib, span),
            received_kib_s=counter_rate(q.received_kib if q else None, p.received_kib, span),
            out_of_sync_change_kib_s=_gauge_change(
                q.out_of_sync_kib if q else None, p.out_of_sync_kib, span
            ),
        )
    return DrbdRates.trusted(dt_s=dt if usable else None, devices=devices,
                            peer_devices=peers)
