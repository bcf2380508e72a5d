"""Which node is the primary: read off the servers every tick, layer by layer.

The command line's ``--primary A --replica B`` is what the user expects; what the
servers say wins, the way Orchestrator discovers a topology and Sentinel names its
master:

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

``Orienter`` keeps the pair's orientation: the first layer (MySQL, Redis, DRBD) that
shows a direction decides; a layer without one (mid-switchover: the new primary
promoted, the old one not yet following) leaves the orientation as it was. It never
waits: a finding's holds are the ``roles`` check's, in seconds, so the pair means the
same at any interval and in replay.

Pure but for the Orienter's memory of the previous tick; no I/O, no clock.
"""

from __future__ import annotations

from replmon.model.base import SourceState
from replmon.model.roles import LAYERS, LayerRole, LayerState, Roles
from replmon.model.tick import NodeTick

_OK = SourceState.OK
_NOT_THERE = (SourceState.ABSENT,)
"""A source the node does not have (not configured): it says nothing about the pair's
direction, unlike one that failed (unreachable, timeout, ...): a node down."""


def _down(state: SourceState) -> bool:
    return state is not _OK and state not in _NOT_THERE

Said = tuple[LayerState, str, str]
"""(state, primary's name or "", the evidence in words)."""


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
        return "unknown", "", "MySQL unreadable on both nodes"
    if ok_a != ok_b and not _down((b if ok_a else a).mysql.status.state):
        return "unknown", "", "MySQL on one node only"
    if ok_a != ok_b:
        up, down = (a, b) if ok_a else (b, a)
        if up.mysql.replication:
            return "direction", down.name, (f"{up.name} has a replication channel; "
                                            f"{down.name}'s MySQL is {down.mysql.status.state}")
        if _writable(up):
            return "direction", up.name, (f"{up.name} is writable without a channel; "
                                          f"{down.name}'s MySQL is {down.mysql.status.state}")
        return "unknown", "", f"{down.name}'s MySQL is {down.mysql.status.state}"
    ab, ab_id, ab_txt = _follows(a, b)
    ba, ba_id, ba_txt = _follows(b, a)
    if ab and ba and ab_id != ba_id:  # one known by id beats one not connected yet
        ab, ba = ab_id, ba_id
    if ab and not ba:
        return "direction", b.name, ab_txt
    if ba and not ab:
        return "direction", a.name, ba_txt
    if ab and ba:
        wa, wb = _writable(a), _writable(b)
        if wa and wb is False:
            return "direction", a.name, f"{ba_txt} and {ab_txt}; only {a.name} is writable"
        if wb and wa is False:
            return "direction", b.name, f"{ab_txt} and {ba_txt}; only {b.name} is writable"
        return "both", "", f"{ab_txt} and {ba_txt}"
    return "none", "", f"neither {a.name} nor {b.name} has a replication channel to the other"


def redis_says(a: NodeTick, b: NodeTick) -> Said:
    """The Redis layer's direction between nodes ``a`` and ``b``."""
    ra, rb = a.redis, b.redis
    ok_a, ok_b = ra.status.state is _OK, rb.status.state is _OK
    if not ok_a and not ok_b:
        return "unknown", "", "Redis unreadable on both nodes"
    if ok_a != ok_b and not _down((rb if ok_a else ra).status.state):
        return "unknown", "", "Redis on one node only"
    if ok_a != ok_b:
        up, down = (a, b) if ok_a else (b, a)
        if up.redis.role == "replica":
            return "direction", down.name, (f"{up.name} is a replica; {down.name}'s Redis "
                                            f"is {down.redis.status.state}")
        if up.redis.role == "master":
            return "direction", up.name, (f"{up.name} is a master; {down.name}'s Redis "
                                          f"is {down.redis.status.state}")
        return "unknown", "", f"{down.name}'s Redis is {down.redis.status.state}"
    if ra.role == "master" and rb.role == "replica":
        return "direction", a.name, _redis_link(b, a)
    if rb.role == "master" and ra.role == "replica":
        return "direction", b.name, _redis_link(a, b)
    if ra.role == rb.role == "master":
        return "none", "", f"both {a.name} and {b.name} are Redis masters"
    if ra.role == rb.role == "replica":
        return "none", "", (f"both are Redis replicas (of {ra.master_host}:{ra.master_port} "
                            f"and {rb.master_host}:{rb.master_port})")
    return "unknown", "", "Redis role not read"


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
        return "unknown", "", "DRBD not read on either node"

    def primary(n: NodeTick) -> bool:
        return any((r.role or "").lower() == "primary" for r in n.drbd.resources)

    if ok_a != ok_b and not _down((db if ok_a else da).status.state):
        return "unknown", "", "DRBD on one node only"
    if ok_a != ok_b:
        up = a if ok_a else b
        down = b if ok_a else a
        return ("direction", up.name if primary(up) else down.name,
                f"{up.name} is DRBD {'Primary' if primary(up) else 'Secondary'}; "
                f"{down.name}'s DRBD is not read")
    pa, pb = primary(a), primary(b)
    if pa and not pb:
        return "direction", a.name, f"{a.name} is DRBD Primary, {b.name} Secondary"
    if pb and not pa:
        return "direction", b.name, f"{b.name} is DRBD Primary, {a.name} Secondary"
    if pa and pb:
        return "both", "", "both nodes are DRBD Primary"
    return "none", "", "both nodes are DRBD Secondary"


SAYS = {"mysql": mysql_says, "redis": redis_says, "drbd": drbd_says}


class Orienter:
    """Keeps the pair's orientation from tick to tick: ``orient`` takes the two nodes as
    given (``--primary``, ``--replica``) and returns them as they are, with the Roles
    record that says why."""

    def __init__(self) -> None:
        self._layers: dict[str, LayerRole] = {}
        self._primary: str | None = None
        self._since: float | None = None
        self._previous = ""

    def orient(self, given_primary: NodeTick, given_replica: NodeTick,
               wall: float) -> tuple[NodeTick, NodeTick, Roles]:
        a, b = given_primary, given_replica
        layers: list[LayerRole] = []
        decided = ""
        for name in LAYERS:
            state, primary, detail = SAYS[name](a, b)
            old = self._layers.get(name)
            same = old is not None and old.state == state and old.primary == primary
            lr = LayerRole(layer=name, state=state, primary=primary, detail=detail,
                           since=old.since if same and old is not None else wall,
                           had_direction=(state == "direction"
                                          or (old is not None and old.had_direction)))
            self._layers[name] = lr
            layers.append(lr)
            if state == "direction" and not decided:
                decided = primary
        if self._primary is None:
            self._primary = decided or a.name
        elif decided and decided != self._primary:
            self._previous, self._primary, self._since = self._primary, decided, wall
        roles = Roles(primary=self._primary, given_primary=a.name, since=self._since,
                      previous=self._previous, layers=tuple(layers))
        if self._primary == a.name or a.name == b.name:
            return (_as(a, "primary", "primary"), _as(b, "replica", "replica"), roles)
        return _as(b, "primary", "replica"), _as(a, "replica", "primary"), roles


def _as(n: NodeTick, role: str, given: str) -> NodeTick:
    if n.role == role and n.given == given:
        return n
    return n.model_copy(update={"role": role, "given": given})
