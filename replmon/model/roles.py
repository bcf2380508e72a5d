"""Roles: which node is each service's primary now, as the servers say it.

The command line (or the config) names a primary and a replica: that is what the user
expects. Each tick the collector reads each service's direction from what its servers
say (``replmon.roles``): MySQL/MariaDB, Redis/Valkey and DRBD each have their own
primary node, so Redis under Sentinel can fail over while MySQL stays. The tick's
``primary`` is the primary of the pair's first service (``Roles.primary``); each check
judges its own service in that service's direction (``Tick.oriented``). These records
say how that was decided and since when, so a change is one fact with a time, recorded
like any other, and replay shows it at the same tick.

Nodes are told apart by the role they were *given* (``NodeTick.given``), never by their
names: ``flipped`` says a service's primary is the node given as the replica.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from replmon.model.base import Struct, struct

Layer = Literal["mysql", "redis", "drbd"]
LAYERS: tuple[Layer, ...] = ("mysql", "redis", "drbd")
"""The services, in the order that picks the pair's primary (``Roles.primary``): the
database's own replication first, then Redis, then the block device."""

LAYER_NAMES: dict[str, str] = {"mysql": "MySQL", "redis": "Redis", "drbd": "DRBD"}

Group = tuple[Layer, ...]
"""Services that move together (a switchover or failover moves all of them): MySQL on
DRBD is one. Among them, one that moved without the others is a change half done."""

LayerState = Literal["direction", "none", "both", "unknown"]
"""direction: one node follows the other (``primary`` names the one followed);
none: neither follows the other (no channel either way, both Redis masters, both DRBD
Secondary); both: each claims the primary's part (circular replication with both
writable, both DRBD Primary); unknown: the layer cannot tell (a source down or absent)."""


def default_groups(sentinel: bool) -> tuple[Group, ...]:
    """The services that move together unless ``[roles] together`` says otherwise: all of
    them (one runbook or cluster manager moves the pair), but Redis on its own when a
    Sentinel watches it (Sentinel fails Redis over by itself; MySQL stays on DRBD)."""
    if sentinel:
        return (("mysql", "drbd"), ("redis",))
    return (LAYERS,)


def parse_groups(value: object) -> tuple[Group, ...]:
    """``[roles] together`` as groups: a list of services (one group; the others each
    move alone) or a list of such lists. ValueError naming what is wrong."""
    if not isinstance(value, list | tuple) or not value:
        raise ValueError("must be a list of services, or a list of lists of them")
    lists = value if all(isinstance(v, list | tuple) for v in value) else [value]
    seen: dict[str, int] = {}
    groups: list[Group] = []
    for i, group in enumerate(lists):
        if not group or not all(isinstance(s, str) for s in group):
            raise ValueError(f"group {i + 1} must name services: {list(LAYERS)}")
        members: list[Layer] = []
        for s in group:
            name = s.lower()
            if name not in LAYERS:
                raise ValueError(f"unknown service {s!r}: one of {', '.join(LAYERS)}")
            if name in seen:
                raise ValueError(f"{name} is named twice")
            seen[name] = i
            members.append(name)
        groups.append(tuple(sorted(members, key=LAYERS.index)))
    groups += [(s,) for s in LAYERS if s not in seen]
    return tuple(groups)


def group_label(group: Sequence[str]) -> str:
    """"MySQL+DRBD"."""
    return "+".join(LAYER_NAMES[s] for s in group)


@struct
class LayerRole(Struct):
    """One service's direction at a tick."""

    layer: Layer
    state: LayerState
    primary: str = ""
    """Name of the node this layer says is the primary ("" unless state is direction)."""
    since: float = 0.0
    """Wall time (epoch s) since when this state and primary hold: the first tick that
    showed them, or earlier when the servers say so (``held_s`` at the session's first
    tick: a replica's link up for an hour). Ticks at which the layer is unknown keep the
    since of the state seen before them, and that state seen again after them keeps it
    too: a timeout is no news that it moved."""
    detail: str = ""
    """The evidence in words: "db162's channel reads from db163 (server_id 163)"."""
    had_direction: bool = False
    """This layer showed a direction earlier in the session: losing it (state none) is
    a half-done change, not a pair that never replicated on this layer."""
    flipped: bool | None = None
    """This service's primary, as its checks judge it, is the node given as the replica:
    the last direction it showed, held through ticks without one (None: recorded before
    each service had its own; then the pair's)."""
    held: str = ""
    """Name of the node ``flipped`` points at: the service's primary for its checks."""
    changed: float | None = None
    """Wall time (epoch s) this service's primary last changed; None while it is the
    one the session began with."""
    previous: str = ""
    """The node that was this service's primary before ``changed``."""
    held_s: float | None = None
    """Seconds the servers say this direction has held at least (a replica's link or
    channel up-time, the time Sentinel has seen the master as master); None: they say
    nothing (DRBD, a replica not connected)."""
    held_how: str = ""
    """Where ``held_s`` comes from, in words: "db162's link up 2 min"."""


@struct
class Roles(Struct):
    """The pair's roles at a tick: each service's primary, since when, and the pair's."""

    primary: str
    """Name of the node acting as the pair's primary (the tick's ``primary``): the
    primary of the first group that has a direction."""
    given_primary: str
    """Name the command line or config gave as the primary."""
    since: float | None = None
    """Wall time (epoch s) at which ``primary`` took over; None: primary since the
    session began (as given, or as the servers said at the first tick)."""
    previous: str = ""
    """The node that was primary before ``since`` ("" when since is None)."""
    layers: tuple[LayerRole, ...] = ()
    flipped: bool | None = None
    """The pair's primary is the node given as the replica (None: recorded before it was
    kept: then the names tell)."""
    groups: tuple[tuple[str, ...], ...] = ()
    """The services that move together (``[roles] together``); (): all of them
    (recorded before groups were kept)."""

    def layer(self, name: str) -> LayerRole | None:
        # a loop rather than next() over a generator: asked several times a node-tick
        # (Tick.service_role, by checks and /metrics), ~2x faster
        for lr in self.layers:
            if lr.layer == name:
                return lr
        return None

    def group_of(self, layer: str) -> tuple[str, ...]:
        return next((g for g in self.groups if layer in g), LAYERS if not self.groups
                    else (layer,))

    def group_layers(self) -> list[list[LayerRole]]:
        """The layers by group, in the groups' order (each group's in LAYERS order)."""
        groups = self.groups or (LAYERS,)
        return [[lr for lr in self.layers if lr.layer in g] for g in groups]

    def at_odds(self) -> list[LayerRole]:
        """The layers at odds with their group: one whose direction names the other node
        than the group's lead (its first layer that has a primary), or one that lost the
        direction it had (state none). None of them: the roles are consistent; some: a
        change half done (the ``roles`` check's warning after its hold, /metrics'
        ``replmon_pair_role_layers_at_odds``). Services in different groups may have
        different primaries: that is a settled state."""
        out: list[LayerRole] = []
        for layers in self.group_layers():
            lead = _lead(layers)
            for lr in layers:
                lost = lr.state == "none" and lr.had_direction
                other = lr.state == "direction" and lead is not None and lr is not lead \
                    and _points(lr, self) != _points(lead, self)
                # unreadable for a tick, but last seen the other way: still at odds (a
                # timeout is no news that it moved)
                unseen = lr.state == "unknown" and lead is not None and lr is not lead \
                    and lr.flipped is not None and lead.flipped is not None \
                    and lr.flipped != lead.flipped
                if lost or other or unseen:
                    out.append(lr)
        return out

    @property
    def swapped(self) -> bool:
        """The servers say the node given as the replica is the pair's primary."""
        if self.flipped is not None:
            return self.flipped
        return self.primary != self.given_primary  # recorded before flipped was kept

    def resolved(self) -> Roles:
        """These roles with each layer's own primary: as they are, or, for a tick
        recorded before each service had its own, worked out from the names as that
        replmon judged them (every layer with the pair's primary, changed with it)."""
        if self.flipped is not None or not self.layers:
            return self
        layers = []
        for lr in self.layers:
            if not lr.had_direction:
                layers.append(lr)
                continue
            held = lr.primary if lr.state == "direction" else self.primary
            moved = self.since is not None and lr.state == "direction" \
                and lr.primary == self.primary
            layers.append(LayerRole(
                layer=lr.layer, state=lr.state, primary=lr.primary, since=lr.since,
                detail=lr.detail, had_direction=True, flipped=held != self.given_primary,
                held=held, changed=lr.since if moved else None,
                previous=self.previous if moved else ""))
        return Roles(primary=self.primary, given_primary=self.given_primary,
                     since=self.since, previous=self.previous, layers=tuple(layers),
                     flipped=self.primary != self.given_primary, groups=(LAYERS,))

    def moved(self) -> list[LayerRole]:
        """The layers whose primary changed this session, newest change last."""
        return sorted((lr for lr in self.layers if lr.changed is not None),
                      key=lambda lr: lr.changed or 0.0)


def _lead(layers: Iterable[LayerRole]) -> LayerRole | None:
    """A group's lead: its first layer with a direction now, else its first with a held
    primary."""
    layers = list(layers)
    return next((lr for lr in layers if lr.state == "direction"),
                next((lr for lr in layers if lr.flipped is not None), None))


def _points(lr: LayerRole, roles: Roles) -> bool | str:
    """Which node ``lr``'s direction names: by identity (``flipped``), or by name in a
    recording made before identities were kept."""
    if lr.flipped is not None and lr.state == "direction":
        return lr.flipped
    return lr.primary if lr.state == "direction" else roles.primary
