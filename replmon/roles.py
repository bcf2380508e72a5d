"""Which node is each service's primary: read off the servers every tick.

The command line's ``--primary A --replica B`` is what the user expects; what the
servers say wins, the way Orchestrator discovers a topology and Sentinel names its
master. Each service has its own direction:

- **MySQL/MariaDB**: a node follows the other when one of its replication channels
  reads from it: the channel's ``Master_Server_Id``/``Source_Server_Id`` is the other
  node's ``server_id``, or its ``Source_UUID`` the other's ``server_uuid``. A channel
  that never connected (source id 0) counts as following the other node when nothing
  else is known. Two nodes following each other (a ring): the writable one
  (``read_only`` OFF) is the primary. One node unreachable: a reachable replica follows
  it; a reachable node without a channel that takes writes is the primary.
- **Redis/Valkey**: ``role`` (a master and a replica), confirmed by the replica's
  ``master_replid`` when both have one.
- **DRBD**: each resource's role (Primary/Secondary).

``Orienter`` keeps each service's primary from tick to tick: a tick without a direction
(mid-switchover: the new primary promoted, the old one not yet following) leaves it as
it was. Services that move together (``[roles] together``) form a group; the pair's
primary (the tick's ``primary``) is the primary of the group of the first service that
has one. It never waits: a finding's holds are the ``roles`` check's, in seconds, so the
pair means the same at any interval and in replay.

Nodes are told apart by object (the two given ``NodeTick``), never by their names.

Pure but for the Orienter's memory of the previous tick; no I/O, no clock.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from replmon.model.base import SourceState
from replmon.model.roles import LAYERS, Group, Layer, LayerRole, LayerState, Roles, _lead
from replmon.model.sentinel import SentinelSample
from replmon.model.tick import NodeTick
from replmon.units import fmt_duration

_OK = SourceState.OK
_NOT_THERE = (SourceState.ABSENT,)
"""A source the node does not have (not configured): it says nothing about the pair's
direction, unlike one that failed (unreachable, timeout, ...): a node down."""


def _down(state: SourceState) -> bool:
    return state is not _OK and state not in _NOT_THERE


Said = tuple[LayerState, NodeTick | None, str]
"""(state, the primary node (one of the two given) or None, the evidence in words)."""


def _sid(n: NodeTick) -> int | None:
    m = n.mysql
    if m.binlog is not None and m.binlog.server_id:
        return m.binlog.server_id
    v = m.variables.get("server_id", "")
    return int(v) if v.isdigit() and v != "0" else None


def _writable(n: NodeTick) -> bool | None:
    v = n.mysql.variables
    if "read_only" not in v:
        return None
    ro = v.get("read_only", "").upper() in ("ON", "1") or \
        v.get("super_read_only", "").upper() in ("ON", "1")
    return not ro


def _follows(x: NodeTick, y: NodeTick) -> tuple[bool, bool, str]:
    """(x has a channel that reads from y, that was known by id, the evidence)."""
    sid, uuid = _sid(y), (y.mysql.binlog.server_uuid.lower() if y.mysql.binlog else "")
    unknown = ""
    for ch in x.mysql.replication:
        label = f"channel '{ch.name}'" if ch.name else "channel"
        if sid is not None and ch.source_server_id == sid:
            return True, True, f"{x.name}'s {label} reads from {y.name} (server_id {sid})"
        if uuid and ch.source_uuid and ch.source_uuid.lower() == uuid:
            return True, True, f"{x.name}'s {label} reads from {y.name} ({uuid})"
        if not ch.source_server_id and not ch.source_uuid:
            unknown = (f"{x.name}'s {label} is set to {ch.source_host}:{ch.source_port} "
                       "(not connected yet)")
    return (True, False, unknown) if unknown else (False, False, "")


def mysql_says(a: NodeTick, b: NodeTick) -> Said:
    """The MySQL layer's direction between nodes ``a`` and ``b``."""
    ok_a, ok_b = a.mysql.status.state is _OK, b.mysql.status.state is _OK
    if not ok_a and not ok_b:
        return "unknown", None, "MySQL unreadable on both nodes"
    if ok_a != ok_b and not _down((b if ok_a else a).mysql.status.state):
        return "unknown", None, "MySQL on one node only"
    if ok_a != ok_b:
        up, down = (a, b) if ok_a else (b, a)
        if up.mysql.replication:
            return "direction", down, (f"{up.name} has a replication channel; "
                                       f"{down.name}'s MySQL is {down.mysql.status.state}")
        if _writable(up):
            return "direction", up, (f"{up.name} is writable without a channel; "
                                     f"{down.name}'s MySQL is {down.mysql.status.state}")
        return "unknown", None, f"{down.name}'s MySQL is {down.mysql.status.state}"
    ab, ab_id, ab_txt = _follows(a, b)
    ba, ba_id, ba_txt = _follows(b, a)
    if ab and ba and ab_id != ba_id:  # one known by id beats one not connected yet
        ab, ba = ab_id, ba_id
    if ab and not ba:
        return "direction", b, ab_txt
    if ba and not ab:
        return "direction", a, ba_txt
    if ab and ba:
        wa, wb = _writable(a), _writable(b)
        if wa and wb is False:
            return "direction", a, f"{ba_txt} and {ab_txt}; only {a.name} is writable"
        if wb and wa is False:
            return "direction", b, f"{ab_txt} and {ba_txt}; only {b.name} is writable"
        return "both", None, f"{ab_txt} and {ba_txt}"
    return "none", None, f"neither {a.name} nor {b.name} has a replication channel to the other"


def redis_says(a: NodeTick, b: NodeTick) -> Said:
    """The Redis layer's direction between nodes ``a`` and ``b``."""
    ra, rb = a.redis, b.redis
    ok_a, ok_b = ra.status.state is _OK, rb.status.state is _OK
    if not ok_a and not ok_b:
        return "unknown", None, "Redis unreadable on both nodes"
    if ok_a != ok_b and not _down((rb if ok_a else ra).status.state):
        return "unknown", None, "Redis on one node only"
    if ok_a != ok_b:
        up, down = (a, b) if ok_a else (b, a)
        if up.redis.role == "replica":
            return "direction", down, (f"{up.name} is a replica; {down.name}'s Redis "
                                       f"is {down.redis.status.state}")
        if up.redis.role == "master":
            return "direction", up, (f"{up.name} is a master; {down.name}'s Redis "
                                     f"is {down.redis.status.state}")
        return "unknown", None, f"{down.name}'s Redis is {down.redis.status.state}"
    if ra.role == "master" and rb.role == "replica":
        return "direction", a, _redis_link(b, a)
    if rb.role == "master" and ra.role == "replica":
        return "direction", b, _redis_link(a, b)
    if ra.role == rb.role == "master":
        return "none", None, f"both {a.name} and {b.name} are Redis masters"
    if ra.role == rb.role == "replica":
        return "none", None, (f"both are Redis replicas (of {ra.master_host}:{ra.master_port} "
                              f"and {rb.master_host}:{rb.master_port})")
    return "unknown", None, "Redis role not read"


def _redis_link(replica: NodeTick, master: NodeTick) -> str:
    r, m = replica.redis, master.redis
    same = r.master_replid and m.master_replid and r.master_replid == m.master_replid
    how = " (same replication id)" if same else ""
    return (f"{replica.name} is a replica of {r.master_host}:{r.master_port}, "
            f"{master.name} the master{how}")


def drbd_says(a: NodeTick, b: NodeTick) -> Said:
    """The DRBD layer's direction: the node whose resources are Primary."""
    da, db = a.drbd, b.drbd
    ok_a = da.status.state is _OK and bool(da.resources)
    ok_b = db.status.state is _OK and bool(db.resources)
    if not ok_a and not ok_b:
        return "unknown", None, "DRBD not read on either node"

    def primary(n: NodeTick) -> bool:
        return any((r.role or "").lower() == "primary" for r in n.drbd.resources)

    if ok_a != ok_b and not _down((db if ok_a else da).status.state):
        return "unknown", None, "DRBD on one node only"
    if ok_a != ok_b:
        up = a if ok_a else b
        down = b if ok_a else a
        return ("direction", up if primary(up) else down,
                f"{up.name} is DRBD {'Primary' if primary(up) else 'Secondary'}; "
                f"{down.name}'s DRBD is not read")
    pa, pb = primary(a), primary(b)
    if pa and not pb:
        return "direction", a, f"{a.name} is DRBD Primary, {b.name} Secondary"
    if pb and not pa:
        return "direction", b, f"{b.name} is DRBD Primary, {a.name} Secondary"
    if pa and pb:
        return "both", None, "both nodes are DRBD Primary"
    return "none", None, "both nodes are DRBD Secondary"


SAYS: dict[str, Callable[[NodeTick, NodeTick], Said]] = {
    "mysql": mysql_says, "redis": redis_says, "drbd": drbd_says}


# --- since when, from the servers ---------------------------------------------------

Held = tuple[float | None, str]
"""(seconds the servers say a direction has held at least, where that comes from)."""


def _mysql_held(primary: NodeTick, replica: NodeTick, s: SentinelSample | None) -> Held:
    """The replica's receiver connected to the primary for so long (its processlist
    time: MariaDB and MySQL count it from the connection while it waits for events)."""
    times = [ch.connected_s for ch in replica.mysql.replication
             if ch.connected_s is not None and ch.io_running == "Yes"]
    if replica.mysql.status.state is not _OK or not times:
        return None, ""
    held = float(max(times))
    return held, f"{replica.name}'s channel connected for {fmt_duration(held)}"


def _redis_held(primary: NodeTick, replica: NodeTick, s: SentinelSample | None) -> Held:
    """The replica's link to the master up for so long (CLIENT LIST's age of its master
    connection), or Sentinel has seen the master report its role for so long, the
    longer of the two."""
    best: Held = (None, "")
    r = replica.redis
    if r.status.state is _OK and r.role == "replica" and r.link_status == "up" \
            and r.master_link_age_s is not None:
        best = (float(r.master_link_age_s),
                f"{replica.name}'s link up {fmt_duration(r.master_link_age_s)}")
    if s is not None and s.status.state is _OK and s.role_reported_s is not None \
            and s.master_given == primary.given and "master" in s.flags \
            and (best[0] is None or s.role_reported_s > best[0]):
        best = (s.role_reported_s, f"Sentinel has seen {primary.name} as the master "
                                       f"for {fmt_duration(s.role_reported_s)}")
    return best


def _no_held(primary: NodeTick, replica: NodeTick, s: SentinelSample | None) -> Held:
    return None, ""


HELD: dict[str, Callable[[NodeTick, NodeTick, SentinelSample | None], Held]] = {
    "mysql": _mysql_held, "redis": _redis_held, "drbd": _no_held}


# --- the orienter -------------------------------------------------------------------

class Orienter:
    """Keeps each service's primary from tick to tick: ``orient`` takes the two nodes as
    given (``--primary``, ``--replica``) and returns them as they are for the pair's
    primary, with the Roles record that says each service's primary and why."""

    def __init__(self, groups: Sequence[Group] = (LAYERS,)) -> None:
        self.groups: tuple[Group, ...] = tuple(tuple(g) for g in groups)
        self._layers: dict[str, LayerRole] = {}
        self._known: dict[str, LayerRole] = {}
        """Each layer's last LayerRole that was not unknown."""
        self._flipped: bool | None = None
        """The pair's primary is the node given as the replica (None: no tick yet)."""
        self._since: float | None = None
        self._previous = ""
        self._first_wall: float | None = None

    def orient(self, given_primary: NodeTick, given_replica: NodeTick, wall: float,
               sentinel: SentinelSample | None = None
               ) -> tuple[NodeTick, NodeTick, Roles]:
        a, b = given_primary, given_replica
        wall = float(wall)  # as the records' float fields hold it (a test may give an int)
        if self._first_wall is None:
            self._first_wall = wall
        layers = [self._layer(name, a, b, wall, sentinel) for name in LAYERS]
        by_name = {lr.layer: lr for lr in layers}
        flipped = self._pair_flip(by_name)
        if self._flipped is None:
            self._flipped = flipped
        elif flipped != self._flipped:
            self._previous = (a if flipped else b).name
            self._flipped, self._since = flipped, wall
        primary = b if self._flipped else a
        # no validation (Struct.trusted): names, the LayerRoles just built, the groups as
        # __init__ made them (tuples of str), ``wall`` a float
        roles = Roles.trusted(primary=primary.name, given_primary=a.name, since=self._since,
                              previous=self._previous if self._since is not None else "",
                              layers=tuple(layers), flipped=self._flipped, groups=self.groups)
        if self._flipped:
            return _as(b, "primary", "replica"), _as(a, "replica", "primary"), roles
        return _as(a, "primary", "primary"), _as(b, "replica", "replica"), roles

    def _pair_flip(self, layers: dict[Layer, LayerRole]) -> bool:
        """The pair's orientation: the lead of the group of the first service that has a
        primary (as given while none has)."""
        for name in LAYERS:
            if layers[name].flipped is None:
                continue
            group = next((g for g in self.groups if name in g), (name,))
            lead = _lead(layers[n] for n in LAYERS if n in group)
            if lead is not None and lead.flipped is not None:
                return lead.flipped
        return False

    def _layer(self, name: Layer, a: NodeTick, b: NodeTick, wall: float,
               sentinel: SentinelSample | None) -> LayerRole:
        state, said, detail = SAYS[name](a, b)
        old = self._layers.get(name)
        flipped = old.flipped if old is not None else None
        changed = old.changed if old is not None else None
        previous = old.previous if old is not None else ""
        if said is not None:
            now = said is b
            if flipped is not None and now != flipped:
                changed, previous = wall, (b if flipped else a).name
            flipped = now
        # A tick the layer cannot be read (its sources timed out or down: unknown) is no
        # news that it moved: it keeps the since of the last state seen, and that state
        # seen again keeps it too (a timeout restarted a half-done change's clock and
        # closed its warning for the next ``settle`` seconds)
        known = self._known.get(name)
        if state == "unknown":
            since = old.since if old is not None else wall
        elif known is not None and known.state == state and known.flipped == flipped \
                and known.primary == (said.name if said is not None else ""):
            since = known.since
        else:
            since = wall
        held_s, held_how = None, ""
        if flipped is not None:
            p, r = (b, a) if flipped else (a, b)
            held_s, held_how = HELD[name](p, r, sentinel)
            first = self._first_wall if self._first_wall is not None else wall
            if held_s is not None and state == "direction" and changed is None \
                    and since <= first:
                # the state the session began with: the servers say how long it holds
                since = min(since, wall - held_s)
        # no validation (Struct.trusted), 2.4 -> 0.7 µs, three a pair-tick: SAYS' state
        # and words, names, bools, ``wall`` (a float: ``orient``) and HELD's float seconds
        lr = LayerRole.trusted(
            layer=name, state=state, primary=said.name if said is not None else "",
            detail=sys.intern(detail), since=since,  # the same words tick after tick
            had_direction=(state == "direction" or (old is not None and old.had_direction)),
            flipped=flipped, held=(b if flipped else a).name if flipped is not None else "",
            changed=changed, previous=previous, held_s=held_s, held_how=held_how)
        self._layers[name] = lr
        if state != "unknown":
            self._known[name] = lr
        return lr


def _as(n: NodeTick, role: str, given: str) -> NodeTick:
    if n.role == role and n.given == given:
        return n
    return n.model_copy(update={"role": role, "given": given})
