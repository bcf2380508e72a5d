"""DRBD peer: is the block-level replica connected, current, and fit to take over?

Reads each node's DRBD sample (``/proc/drbd`` on 8.x, ``drbdsetup status --json`` on 9)
and its DRBD rates, per resource, peer and volume. A node without DRBD (source
"absent") is ignored; a DRBD source that cannot be read is the source_health check's
job. Keys are "<resource>/<peer>" for the connection, with "/<volume>/disk",
"/<volume>/resync", "/protocol" or "/io" for the rest; pair findings use the resource.

What it reports:

- **Peer disconnected** (connection Connecting/WFConnection, Unconnected, Timeout,
  BrokenPipe, NetworkFailure, ProtocolError, TearDown, Disconnecting; peer role
  Unknown, peer disk DUnknown): out-of-sync KiB and how fast it grows are in the
  title. Warning first, critical once it has lasted ``disconnected_critical_s``
  (transient states flap). A Primary writing while disconnected runs unprotected:
  every write adds to out-of-sync and a failover would lose it. Field notes: db163
  ``cs:WFConnection ro:Primary/Unknown ds:UpToDate/DUnknown`` with oos 308 -> 65,724 KiB.
- **StandAlone**: critical, possible split brain (DRBD gave up and will not retry).
  An 8.x ``Unconfigured`` minor is a warning (the resource is down on that node).
- **Two Primaries** on one resource, seen from either node (critical, key the resource):
  both sides take writes the other never sees. Set ``allow_two_primaries`` for a
  dual-primary cluster file system; it then stays quiet while Connected only.
- **No Primary** on either node (warning): the database on top is down.
- **The Primary's disk not UpToDate** (critical): it serves stale or partial data, or
  (Diskless) does all its I/O over the network.
- **Replica not fit for failover** (warning): the Secondary's disk (or, when the replica
  cannot be read, the peer disk the Primary sees while Connected) is Inconsistent,
  Outdated, Consistent, Diskless... An intentional DRBD 9 client is not a fault.
- **Resync** (info: percent, speed, ETA); **paused or stalled** (warning: DRBD says
  stalled, a pause reason is set, or out-of-sync has not fallen for ``resync_stall_s``).
  Reported once per resource (by the primary side when both show it).
- **I/O suspended** (critical): application I/O frozen (fencing, no data, quorum lost);
  MySQL hangs in D state.
- **I/O stalled** (critical): requests pending (ap/lo/pe) non-zero for ``io_stall`` (5 s,
  and at least ``io_stall_min_samples``, 2, ticks) tick after tick while the written and
  sent counters stay flat.
- **Async protocol** A or B (info): a failover may lose the last writes.

What to do: the title says which; the next step names the command (``drbdadm status``,
``dmesg | grep -i split-brain``, ``crm status``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from pydantic import AliasChoices, Field

from replmon.check import (
    Check,
    DrbdConnection,
    DrbdResource,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Restate,
    Role,
    Seconds,
    Severity,
    Thresholds,
    Window,
    changed_limits,
    fmt,
    fmt_byte_rate,
    numbers,
    round_up,
    source_ok,
)

from ._drbd_io import io_finding, stall_run
from ._drbd_names import ROLES, SYNC, connection, duration, label, resource, size


class Limits(Thresholds):
    disconnected_critical_s: float = 20.0
    """Seconds a peer may stay disconnected as a warning before it turns critical."""
    allow_two_primaries: bool = False
    """True for a dual-primary setup (allow-two-primaries + a cluster file system)."""
    resync_stall_s: float = 60.0
    """Seconds without out-of-sync falling after which a running resync is stalled."""
    io_stall: Seconds = Field(default=5.0, gt=0,
                              validation_alias=AliasChoices("io_stall", "io_stall_ticks"))
    """Seconds (s) with requests pending and no KiB written or sent, tick after tick: I/O
    stalled. ``io_stall_ticks``, its name before durations, is read as seconds."""
    io_stall_min_samples: int = Field(default=2, ge=1)
    """Ticks the stall must span at least, on top of ``io_stall``: one 5 s sample with
    requests in flight and nothing moved is not yet a stall."""


def _is_down(node: NodeTick, link: tuple[str, str]) -> bool | None:
    """The node lists the (resource, peer) connection as not Connected; None without a
    DRBD reading."""
    if not source_ok(node, "drbd"):
        return None
    res, peer = link
    return any(c.connection_state != "Connected" for r in node.drbd.resources
               if r.name == res for c in r.connections if c.peer == peer)


def _down_s(w: Window, role: Role, res: str, peer: str) -> float:
    """Seconds the connection has been down, from the first down tick in the window (so
    at most the window's span: the finding's since-time tells the whole outage)."""
    link = (res, peer)
    down = w.series(role, lambda n: _is_down(n, link))
    before = down[-2::-1]  # the ticks before the last, newest first
    if before.count(True) == len(before):  # down all window long (a long outage)
        return w.last.wall - w.ticks[0].wall
    run = min([before.index(v) for v in (False, None) if v in before])
    return w.last.wall - w.ticks[len(down) - 1 - run].wall


def _connection(w: Window, role: Role, r: DrbdResource, c: DrbdConnection, t: Limits
                ) -> Observation | None:
    state = c.connection_state
    if state == "Connected":
        return None
    node = w.node(role)
    oos = [p.out_of_sync_kib for p in c.peer_devices if p.out_of_sync_kib is not None]
    rates = node.rates.drbd.peer_devices
    grow = [g for p in c.peer_devices
            if (pr := rates.get(f"{r.name}/{c.peer}/{p.volume}")) is not None
            and (g := pr.out_of_sync_change_kib_s) is not None]
    oos_kib, grow_kib_s = (sum(oos) if oos else None), (sum(grow) if grow else None)
    disk = "/".join(d.disk_state or "?" for d in r.devices)
    pdisk = "/".join(p.peer_disk_state or "?" for p in c.peer_devices)
    shown = c.cs or state or "unknown state"
    down_s = _down_s(w, role, r.name, c.peer)
    nums = numbers(connection=shown, role=r.role, peer_role=c.peer_role, disk=disk,
                   peer_disk=pdisk, out_of_sync_kib=oos_kib, out_of_sync_growth_kib_s=grow_kib_s,
                   down_s=down_s)
    where = label(r.name, c.peer)
    if c.cs == "Unconfigured":
        return Observation.trusted(
            key=f"{r.name}/{c.peer}", node=role, severity=Severity.WARNING, numbers=nums,
            title=f"{where}: Unconfigured (the DRBD resource is down on this node)",
            cause="the resource was never brought up here, or was taken down (drbdadm down, "
                  "a cluster node in standby)",
            next_step="drbdadm status / cat /proc/drbd on the node; crm status or pcs status")
    oos_txt = (f", out-of-sync {size(oos_kib)}"
               + (f" ({'+' if grow_kib_s >= 0 else ''}{fmt_byte_rate(grow_kib_s * 1024)})"
                  if grow_kib_s is not None else ""))
    roles = f"{r.role or '?'}/{c.peer_role or '?'} {disk}/{pdisk}"
    if state == "StandAlone":
        return Observation.trusted(
            key=f"{r.name}/{c.peer}", node=role, severity=Severity.CRITICAL, numbers=nums,
            title=f"{where}: StandAlone, possible split brain ({roles}{oos_txt})",
            cause="DRBD dropped the connection and will not retry: a split brain ('Split-Brain "
                  "detected but unresolved'), an admin disconnect, or a config/auth mismatch",
            next_step="dmesg | grep -i split-brain on both nodes; if so pick the victim: "
                      "drbdadm secondary <res>; drbdadm connect --discard-my-data <res> there, "
                      "drbdadm connect <res> on the survivor")
    unprotected = r.role == "Primary"
    return Observation.trusted(
        key=f"{r.name}/{c.peer}", node=role,
        severity=(Severity.CRITICAL if down_s >= t.disconnected_critical_s else Severity.WARNING),
        numbers=nums,
        title=(f"{where}: peer disconnected ({shown}) for "
               f"{'at least ' if down_s >= w.last.wall - w.ticks[0].wall else ''}"
               f"{down_s:.0f} s: {roles}{oos_txt}"),
        cause=("writes are not replicated: the primary runs without a current replica and a "
               "failover now loses everything written since (out-of-sync)" if unprotected else
               "this node's copy is no longer updated and falls behind the primary"),
        next_step=_RECONNECT)


_RECONNECT = ("is DRBD up on the peer (drbdadm status, crm status: node in standby?), is its "
              "replication address reachable (port 7788+)? Reconnecting resyncs the "
              "out-of-sync KiB")
"""The next step of a peer disconnected (and of no other observation: ``restate`` tells
them apart by it)."""


def _primary_shows(w: Window, role: Role, res: str, what: str) -> bool:
    """True when ``role`` is the replica and the primary's sample shows the same thing
    for ``res`` (so the replica's copy of it is not reported twice)."""
    if role != "replica":
        return False
    r = resource(w.node("primary"), res)
    if r is None:
        return False
    if what == "resync":
        return any(p.replication_state in SYNC for c in r.connections for p in c.peer_devices)
    return any(c.protocol in ("A", "B") for c in r.connections)


def _resync_progress(w: Window, role: Role, res: str, peer: str, vol: int,
                     t: Limits) -> bool | None:
    """False when out-of-sync did not fall over resync_stall_s; None when not judged."""
    now = w.last.wall
    cur: int | None = None
    for tk in reversed(w.ticks):
        c = connection(resource(getattr(tk, role), res), peer)
        p = next((p for p in c.peer_devices if p.volume == vol), None) if c else None
        if p is None or p.replication_state not in SYNC or p.out_of_sync_kib is None:
            return None
        cur = p.out_of_sync_kib if cur is None else cur
        if now - tk.wall >= t.resync_stall_s:
            return cur < p.out_of_sync_kib
    return None


def _peer_devices(w: Window, role: Role, r: DrbdResource, c: DrbdConnection, t: Limits,
                  replica_seen: bool) -> Iterator[Observation]:
    for p in c.peer_devices:
        key = f"{r.name}/{c.peer}/{p.volume}"
        if (p.replication_state in SYNC and not _primary_shows(w, role, r.name, "resync")):
            s = p.resync
            verb = "verify" if s and s.verify else "resync"
            pct = s.percent_done if s else None
            left = s.left_kib if s and s.left_kib is not None else p.out_of_sync_kib
            speed = s.speed_kib_s if s else None
            eta = s.eta_s if s and s.eta_s is not None else (
                left / speed if left is not None and speed else None)
            paused = list(s.suspended if s else p.resync_suspended)
            stalled = bool(s and s.stalled) or (verb == "resync" and _resync_progress(
                w, role, r.name, c.peer, p.volume, t) is False)  # verify: oos does not fall
            nums = numbers(percent_done=pct, left_kib=left, speed_kib_s=speed, eta_s=eta,
                           state=p.replication_state, paused=",".join(paused) or None)
            if paused or stalled or (p.replication_state or "").startswith("Paused"):
                why = f"paused ({', '.join(paused)})" if paused else "stalled"
                yield Observation.trusted(
                    key=f"{key}/resync", node=role, severity=Severity.WARNING, numbers=nums,
                    title=f"{label(r.name, c.peer)}: {verb} {why} at {fmt(pct, 1)} % "
                          f"({size(left)} left)",
                    cause="the replica stays unfit for failover until the resync finishes; "
                          "paused by a user, the peer, or a resync-after dependency, or no "
                          "progress (network down, peer I/O stuck)",
                    next_step="drbdadm status; drbdadm resume-sync <res> if paused by hand; "
                              "check the link and both disks")
            else:
                yield Observation.trusted(
                    key=f"{key}/resync", node=role, severity=Severity.INFO, numbers=nums,
                    title=f"{label(r.name, c.peer)}: {verb} {fmt(pct, 1)} % done, "
                          f"{size(left)} left at "
                          f"{fmt_byte_rate(None if speed is None else speed * 1024)}, "
                          f"ETA {duration(eta)}",
                    cause=f"{p.replication_state}: blocks that differ are being copied",
                    next_step="nothing unless it stalls; resync competes with application "
                              "writes for the link (c-max-rate / resync-rate)")
        if (r.role == "Primary" and not replica_seen and c.connection_state == "Connected"
                and p.peer_disk_state not in (None, "UpToDate", "DUnknown")
                and not (p.peer_disk_state == "Diskless" and p.peer_client)):
            yield _unfit(role, f"{key}/disk", label(r.name, c.peer), p.peer_disk_state)


def _unfit(role: Role, key: str, where: str, disk: str | None) -> Observation:
    return Observation.trusted(
        key=key, node=role, severity=Severity.WARNING, numbers=numbers(disk=disk),
        title=f"{where}: replica disk {disk}, not fit for failover",
        cause={"Inconsistent": "a resync has not finished (or never started)",
               "Outdated": "fenced or disconnected while the primary wrote: it misses writes",
               "Diskless": "no backing disk (detached after an I/O error, or never attached)"}
        .get(disk or "", "the replica's data is not known to be current"),
        next_step="drbdadm status on the replica; let the resync finish, or drbdadm attach / "
                  "connect it; do not fail over to it meanwhile")


def _resource(w: Window, role: Role, r: DrbdResource, t: Limits, stalls: bool = True
              ) -> Iterator[Observation]:
    other: Role = "replica" if role == "primary" else "primary"
    # _peer_devices asks only about a Primary's replica
    replica_seen = r.role == "Primary" and resource(w.node(other), r.name) is not None
    io = io_finding(w, role, r, t.io_stall, t.io_stall_min_samples, stalls)
    if io is not None:
        yield io
    down = any(c.cs == "Unconfigured" for c in r.connections)
    for d in r.devices:
        if down:
            break
        bad = d.disk_state not in (None, "UpToDate") and not (d.disk_state == "Diskless"
                                                              and d.client)
        if bad and r.role == "Primary":
            yield Observation.trusted(
                key=f"{r.name}/{d.volume}/disk", node=role, severity=Severity.CRITICAL,
                numbers=numbers(disk=d.disk_state),
                title=(f"{label(r.name)}/{d.volume}: the Primary's disk is {d.disk_state}, "
                       f"not UpToDate"),
                cause=("no local disk: every read and write goes over the network to the peer"
                       if d.disk_state == "Diskless" else
                       "the primary serves data that is not known to be complete and current"),
                next_step="drbdadm status; dmesg for I/O errors; attach or replace the disk, "
                          "or move the Primary to the node with UpToDate data")
        elif bad and r.role == "Secondary":
            yield _unfit(role, f"{r.name}/{d.volume}/disk", label(r.name), d.disk_state)
    for c in r.connections:
        o = _connection(w, role, r, c, t)
        if o is not None:
            yield o
        if c.protocol in ("A", "B") and not _primary_shows(w, role, r.name, "protocol"):
            yield Observation.trusted(
                key=f"{r.name}/{c.peer}/protocol", node=role, severity=Severity.INFO,
                numbers=numbers(protocol=c.protocol),
                title=f"{label(r.name, c.peer)}: async protocol {c.protocol}",
                cause="a write completes before the peer has it on disk: a failover may lose "
                      "the last writes",
                next_step="protocol C in the resource's net section if that loss matters")
        yield from _peer_devices(w, role, r, c, t, replica_seen)


def _pair(w: Window, name: str, t: Limits) -> Observation | None:
    seen = {role: r for role in ROLES if (r := resource(w.node(role), name)) is not None}
    prim = [role for role, r in seen.items() if r.role == "Primary"]
    if len(prim) == 1 and all(c.peer_role != "Primary" for c in seen[prim[0]].connections):
        return None  # the usual case, one Primary that sees no other: neither finding below
    views = [(role, c) for role, r in seen.items() for c in r.connections]
    peer_prim = [role for role, c in views if seen[role].role == "Primary"
                 and c.peer_role == "Primary"]
    connected = all(c.connection_state == "Connected" for _, c in views)
    if len(prim) >= 2 or peer_prim:
        if t.allow_two_primaries and connected:
            return None
        how = "Connected" if connected else "not connected"
        return Observation.trusted(
            key=name, node="pair", severity=Severity.CRITICAL,
            numbers=numbers(primaries=2, connected=connected),
            title=f"{label(name)}: Primary on both nodes ({how})",
            cause=("both sides take writes the other never sees: the data diverges (split "
                   "brain)" if not connected else "dual-primary is safe only with "
                   "allow-two-primaries and a cluster file system; ext4/xfs on both corrupts"),
            next_step="stop writes on one side now (drbdadm secondary <res> there), then "
                      "resolve: drbdadm connect --discard-my-data on the side to lose")
    secondary = [role for role, r in seen.items() if r.role == "Secondary"]
    peer_sec = any(c.peer_role == "Secondary" and c.connection_state == "Connected"
                   for _, c in views)
    if not prim and secondary and (len(secondary) == 2 or peer_sec):
        return Observation.trusted(
            key=name, node="pair", severity=Severity.WARNING, numbers=numbers(primaries=0),
            title=f"{label(name)}: no Primary, Secondary/Secondary on both nodes",
            cause="nothing is promoted: the cluster manager demoted both or has not promoted "
                  "one yet, so the file system and database on top are down",
            next_step="crm status / pcs status; drbdadm primary <res> on the node that should "
                      "serve")
    return None


def _nodes(w: Window, t: Limits, stalls: bool = True) -> Iterator[Observation]:
    """What each node's resources show (``_resource``), primary first; the I/O stall
    only with ``stalls``."""
    for role in ROLES:
        node = w.node(role)
        if not source_ok(node, "drbd"):
            continue
        for r in node.drbd.resources:
            yield from _resource(w, role, r, t, stalls)


def _names(w: Window) -> list[str]:
    """The resources' names on the nodes read, first seen first."""
    names: list[str] = []
    for role in ROLES:
        node = w.node(role)
        if source_ok(node, "drbd"):
            names += [r.name for r in node.drbd.resources if r.name not in names]
    return names


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out = list(_nodes(w, t))
    out.extend(o for name in _names(w) if (o := _pair(w, name, t)) is not None)
    return out


_ALLOW = Limits(allow_two_primaries=True)
_DENY = Limits(allow_two_primaries=False)
"""The only threshold of ``_pair`` both ways; with stalls left out, every other
threshold of ``_nodes`` changes only the severity or the words of what it reports."""


def _usual(r: DrbdResource) -> bool:
    """The usual resource, from which ``_resource`` reports nothing but an I/O stall:
    not suspended, no quorum lost, no upper I/O blocked, every disk UpToDate (or
    unknown), every connection Connected and not of protocol A or B, no peer device
    resyncing and every peer disk UpToDate or unknown. A strict quick test for
    ``gauges``: anything else goes through ``_resource`` itself."""
    if r.suspended or r.suspend_reasons:
        return False
    for d in r.devices:
        if d.quorum is False or "upper" in (d.blocked or "") \
                or d.disk_state not in (None, "UpToDate"):
            return False
    for c in r.connections:
        if c.connection_state != "Connected" or c.protocol in ("A", "B"):
            return False
        for p in c.peer_devices:
            if p.replication_state in SYNC \
                    or p.peer_disk_state not in (None, "UpToDate", "DUnknown"):
                return False
    return True


def _state(w: Window) -> int:
    """2 when ``evaluate`` reports something whatever the thresholds (anything but an I/O
    stall and a Connected dual Primary), else 1 when a Primary on both nodes is
    reported unless ``allow_two_primaries``, else 0."""
    usual = True
    for role in ROLES:
        node = w.node(role)
        if not source_ok(node, "drbd"):
            continue
        for r in node.drbd.resources:
            for c in r.connections:
                if c.connection_state != "Connected":
                    return 2  # _connection reports every connection not Connected
            usual = usual and _usual(r)
    if not usual and next(_nodes(w, _ALLOW, stalls=False), None) is not None:
        return 2
    state = 0
    for name in _names(w):
        if _pair(w, name, _ALLOW) is not None:
            return 2
        if _pair(w, name, _DENY) is not None:
            state = 1
    return state


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    state: float
    """``_state``: 2, 1 or 0."""
    stall_ticks: float | None
    """The I/O stall's ticks (``stall_run``); None without a stall, or at state 2 (never
    quiet)."""
    stall_span_s: float | None
    """The stall's span plus one tick, s, rounded up; None as ``stall_ticks``."""


def measure(w: Window) -> Gauges:
    state = _state(w)
    if state == 2:
        return Gauges(2.0, None, None)
    run = stall_run(w)
    if not run:
        return Gauges(float(state), None, None)
    return Gauges(float(state), float(run), round_up((run + 1) * w.last.interval))


def quiet(g: Gauges, t: Limits) -> bool:
    """Nothing but a stall and a Connected dual Primary (state 0, or 1 with
    ``allow_two_primaries``), and no stall long enough: a stall is reported once the
    last max(``io_stall_min_samples``, round(``io_stall`` / interval)) ticks stalled;
    fewer than ``io_stall_min_samples`` did, or ``io_stall`` is above (ticks + 1) x
    interval, so round(``io_stall`` / interval) is more ticks than have stalled. The
    other thresholds change only how bad or how worded a finding is."""
    state, ticks, span_s = g.state, g.stall_ticks, g.stall_span_s
    if not (state == 0 or (state == 1 and t.allow_two_primaries)):
        return False
    return (ticks is None or ticks < t.io_stall_min_samples
            or (span_s is not None and span_s < t.io_stall))


_DOWN_S_ROUNDING = 0.001
"""At least what ``numbers`` may have moved ``down_s`` by (3 decimals: 0.0005)."""


def restate(was: Limits, now: Limits) -> Restate[Gauges] | None:
    """Where only ``disconnected_critical_s`` changed: the same observations, each peer
    disconnected (told by its next step) critical when its ``down_s`` is at least the new
    limit, else a warning, as ``_connection`` decides. Its numbers hold ``down_s``
    rounded to 3 decimals: within ``_DOWN_S_ROUNDING`` of the limit it cannot tell
    (None: the tick is observed again). Nothing else of ``evaluate`` reads that limit."""
    if changed_limits(was, now) - {"disconnected_critical_s"}:
        return None
    limit = now.disconnected_critical_s

    def at(seen: list[Observation], _g: Gauges) -> list[Observation] | None:
        out = []
        for o in seen:
            if o.next_step == _RECONNECT:
                down = o.numbers.get("down_s")
                if not isinstance(down, float | int) or abs(down - limit) <= _DOWN_S_ROUNDING:
                    return None
                sev = Severity.CRITICAL if down >= limit else Severity.WARNING
                if o.severity != sev:
                    o = o.model_copy(update={"severity": sev})
            out.append(o)
        return out
    return at


EXPLAINS: tuple[Explains, ...] = (
    Explains("drbd_congestion", "either",
             "a peer resyncing after a disconnect takes the link and the disk"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="drbd_peer", title="DRBD peer", needs=("drbd",), thresholds=Limits,
              evaluate=evaluate, window=120.0, explains=EXPLAINS,
              reads=("drbd", "rates.drbd"),
              gate=Gate(measure, quiet, gauges=Gauges, restate=restate),
              service="drbd")
