"""drbd_peer's names for DRBD's resources, peers and sizes, and where to find them in a
node's sample: the words its titles use and the lookups its parts share
(checks/drbd_peer.py, checks/_drbd_io.py).

Not a check: the plug-in loader skips the ``_`` modules of this package.
"""

from __future__ import annotations

from replmon.check import DrbdConnection, DrbdResource, NodeTick, Role, fmt_bytes, source_ok

SYNC = {"StartingSyncS", "StartingSyncT", "WFBitMapS", "WFBitMapT", "WFSyncUUID", "SyncSource",
        "SyncTarget", "PausedSyncS", "PausedSyncT", "VerifyS", "VerifyT"}
"""Replication states of a peer device that is resyncing (or verifying)."""
ROLES: tuple[Role, Role] = ("primary", "replica")


def label(res: str, peer: str | None = None) -> str:
    """"drbd0" for an 8.x minor (its one peer has no name), "r0" / "r0 to bob" on 9."""
    if res.isdigit() and peer in (None, "peer"):
        return f"drbd{res}"
    return res if peer is None else f"{res} to {peer}"


def size(kib: float | None) -> str:
    """DRBD's KiB as every view writes sizes: 65724 -> "64 MiB"."""
    return fmt_bytes(None if kib is None else kib * 1024)


def duration(s: float | None) -> str:
    """A resync's ETA: "1 h 5 min", "4 min 12 s"; "?" unknown."""
    if s is None:
        return "?"
    s = int(s)
    return f"{s // 3600} h {s % 3600 // 60} min" if s >= 3600 else f"{s // 60} min {s % 60} s"


def resource(node: NodeTick, name: str) -> DrbdResource | None:
    """The node's first resource of that name; None without it or a DRBD reading."""
    if not source_ok(node, "drbd"):
        return None
    for r in node.drbd.resources:
        if r.name == name:
            return r
    return None


def connection(r: DrbdResource | None, peer: str) -> DrbdConnection | None:
    """The resource's connection to ``peer``; None without it."""
    if r is not None:
        for c in r.connections:
            if c.peer == peer:
                return c
    return None
