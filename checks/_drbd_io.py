"""drbd_peer's application I/O findings: DRBD froze I/O (suspended), or requests stay
pending while nothing is written or sent (stalled), and how long a stall has lasted for
the check's gate.

Not a check: the plug-in loader skips the ``_`` modules of this package. Only
checks/drbd_peer.py imports it.
"""

from __future__ import annotations

from replmon.check import (
    DrbdDeviceRates,
    DrbdPeerDeviceRates,
    DrbdResource,
    NodeTick,
    Observation,
    Role,
    Severity,
    Window,
    fmt_byte_rate,
    numbers,
    source_ok,
)

from ._drbd_names import ROLES, label


def _idle(devices: dict[str, DrbdDeviceRates], peer_devices: dict[str, DrbdPeerDeviceRates],
          prefix: str) -> bool:
    """True when the rates under ``prefix`` ("<resource>/") are all known and none is above 0
    KiB/s written (devices) or sent (peer devices), and there is at least one."""
    seen = False
    for k, d in devices.items():
        if k.startswith(prefix):
            if d.written_kib_s is None or d.written_kib_s > 0:
                return False  # most ticks: the first device wrote something
            seen = True
    for k, p in peer_devices.items():
        if k.startswith(prefix):
            if p.sent_kib_s is None or p.sent_kib_s > 0:
                return False
            seen = True
    return seen


def stuck_requests(node: NodeTick) -> dict[str, int]:
    """Resource name -> requests pending (ap+lo+pe) for each resource of the node that moved
    nothing in this tick: its written and sent KiB/s all known and none above 0 (first
    resource of a name, as ``resource``). A module-level getter: Window.series computes it once per
    tick, so io_finding looks at the ``io_stall`` span without walking the ticks again."""
    out: dict[str, int] = {}
    if not source_ok(node, "drbd"):
        return out
    dr, pr = node.rates.drbd.devices, node.rates.drbd.peer_devices
    done: set[str] = set()
    for rr in node.drbd.resources:
        if rr.name in done:
            continue
        done.add(rr.name)
        if not _idle(dr, pr, f"{rr.name}/"):
            continue
        out[rr.name] = (sum(d.upper_pending or 0 for d in rr.devices)
                        + sum(d.lower_pending or 0 for d in rr.devices)
                        + sum(p.pending or 0 for c in rr.connections for p in c.peer_devices))
    return out


def io_finding(w: Window, role: Role, r: DrbdResource, stall_s: float, min_samples: int,
               stalls: bool = True) -> Observation | None:
    """I/O suspended (whatever the thresholds), else I/O stalled: requests pending and
    nothing moved for ``stall_s`` (the check's ``io_stall``) and at least ``min_samples``
    ticks (``io_stall_min_samples``); only with ``stalls``."""
    reasons = list(r.suspend_reasons)
    if any(d.quorum is False for d in r.devices):
        reasons.append("quorum lost")
    if r.suspended or reasons or any("upper" in (d.blocked or "") for d in r.devices):
        return Observation.trusted(
            key=f"{r.name}/io", node=role, severity=Severity.CRITICAL,
            numbers=numbers(reasons=",".join(reasons) or None),
            title=f"{label(r.name)}: application I/O suspended ({', '.join(reasons) or 'frozen'})",
            cause="DRBD froze I/O (fencing in progress, on-no-data-accessible suspend-io, "
                  "quorum lost, or drbdadm suspend-io): the database hangs in D state",
            next_step="drbdadm status, dmesg; fix the peer/fencing, then drbdadm resume-io <res>")
    if not stalls:
        return None
    span = w.span(stall_s, min_samples)
    stalled = w.series(role, stuck_requests, span)
    if len(stalled) < span:
        return None
    pend: list[int] = []
    for by_name in stalled:
        p = by_name.get(r.name)
        if p is None:  # moved something, or the resource was missing, in one of the ticks
            return None
        pend.append(p)
    if min(pend) <= 0:  # counts: a stall is requests pending at every tick (stall_run)
        return None
    secs = round(w.last.wall - w.tail(span)[0].wall + w.last.interval, 1)
    return Observation.trusted(
        key=f"{r.name}/io", node=role, severity=Severity.CRITICAL,
        numbers=numbers(pending=pend[-1], stalled_s=secs),
        title=f"{label(r.name)}: I/O stalled, {pend[-1]} requests pending (ap+lo+pe) for "
              f"{secs:g} s, {fmt_byte_rate(0)} written or sent",
        cause="requests are stuck in DRBD: the peer does not acknowledge (network or peer disk "
              "hung) or the local backing disk does not complete them",
        next_step="dmesg on both nodes (ko-count / timeout messages), iostat on the backing "
                  "disk, ping the peer's replication address")


def stall_run(w: Window) -> int:
    """The most ticks in a row, up to the last, in which a resource of a node moved
    nothing with requests pending (``stuck_requests``): an I/O stall is reported once it has
    held ``io_stall`` (and ``io_stall_min_samples`` ticks)."""
    most = 0
    for role in ROLES:
        if not any(w.series(role, stuck_requests, 1)[-1].values()):
            continue  # the usual tick: nothing pending, or something moved
        by_tick = w.series(role, stuck_requests)
        for name, pending in by_tick[-1].items():
            if pending <= 0:
                continue
            n = 1
            while n < len(by_tick) and by_tick[-1 - n].get(name, 0) > 0:
                n += 1
            most = max(most, n)
    return most
