"""Roles: which node is the primary now, as the servers say it, layer by layer.

The command line (or the config) names a primary and a replica: that is what the user
expects. Each tick the collector reads the direction of the pair from what each layer's
servers say (``replmon.roles``) and hands every reader the pair as it is: the tick's
``primary`` is the node the other replicates from. These records say how that was
decided and since when, so a switchover is one fact with a time, recorded like any
other, and replay shows it at the same tick.
"""

from __future__ import annotations

from typing import Literal

from replmon.model.base import Struct, struct

Layer = Literal["mysql", "redis", "drbd"]
LAYERS: tuple[Layer, ...] = ("mysql", "redis", "drbd")
"""In the order they decide the pair's direction when they disagree: the database's
own replication first, then Redis, then the block device."""

LAYER_NAMES: dict[str, str] = {"mysql": "MySQL", "redis": "Redis", "drbd": "DRBD"}

LayerState = Literal["direction", "none", "both", "unknown"]
"""direction: one node follows the other (``primary`` names the one followed);
none: neither follows the other (no channel either way, both Redis masters, both DRBD
Secondary); both: each claims the primary's part (circular replication with both
writable, both DRBD Primary); unknown: the layer cannot tell (a source down or absent)."""


@struct
class LayerRole(Struct):
    """One layer's direction at a tick."""

    layer: Layer
    state: LayerState
    primary: str = ""
    """Name of the node this layer says is the primary ("" unless state is direction)."""
    since: float = 0.0
    """Wall time (epoch s) of the first tick with this state and primary."""
    detail: str = ""
    """The evidence in words: "db162's channel reads from db163 (server_id 163)"."""
    had_direction: bool = False
    """This layer showed a direction earlier in the session: losing it (state none) is
    a half-done change, not a pair that never replicated on this layer."""


@struct
class Roles(Struct):
    """The pair's roles at a tick: who is the primary, since when, and each layer's say."""

    primary: str
    """Name of the node acting as the primary (the tick's ``primary``)."""
    given_primary: str
    """Name the command line or config gave as the primary."""
    since: float | None = None
    """Wall time (epoch s) at which ``primary`` took over; None: primary since the
    session began (as given, or as the servers said at the first tick)."""
    previous: str = ""
    """The node that was primary before ``since`` ("" when since is None)."""
    layers: tuple[LayerRole, ...] = ()

    def layer(self, name: str) -> LayerRole | None:
        return next((lr for lr in self.layers if lr.layer == name), None)

    def at_odds(self) -> list[LayerRole]:
        """The layers at odds with ``primary``: one whose direction names the other
        node, or one that lost the direction it had (state none). None of them: the
        roles are consistent; some: a change half done (the ``roles`` check's warning
        after its hold, /metrics' ``replmon_pair_role_layers_at_odds``)."""
        return [lr for lr in self.layers
                if (lr.state == "direction" and lr.primary != self.primary)
                or (lr.state == "none" and lr.had_direction)]

    @property
    def swapped(self) -> bool:
        """The servers say the node given as the replica is the primary."""
        return self.primary != self.given_primary
