"""Each service's roles at a tick, as ``check``, ``report`` and /findings.json say them:
which node is MySQL's, Redis's and DRBD's primary, and how long that has held, from what
the servers say (a replica's link or channel up-time, Sentinel) where they say it, else
from when replmon first saw it."""

from __future__ import annotations

from dataclasses import dataclass

from replmon.model.roles import LAYER_NAMES
from replmon.model.tick import NodeTick, Tick
from replmon.units import fmt_duration, tick_clock


@dataclass(frozen=True)
class ServiceRoles:
    service: str
    """"mysql", "redis" or "drbd"."""
    primary: str
    replica: str
    held_s: float
    """Seconds this direction has held at least."""
    how: str
    """Where ``held_s`` comes from, in words."""
    state: str
    """The layer's state now: direction, none (mid-change), both, unknown (a node down)."""

    def line(self) -> str:
        """"MySQL db163 → db162 for 3 d 2 h (db162's channel connected ...)"."""
        name = LAYER_NAMES[self.service]
        now = "" if self.state == "direction" else f", {self.state} now"
        return (f"{name} {self.primary} → {self.replica} for {fmt_duration(self.held_s)} "
                f"({self.how}{now})")

    def as_dict(self) -> dict[str, object]:
        return {"service": self.service, "primary": self.primary, "replica": self.replica,
                "held_s": round(self.held_s, 1), "held_how": self.how, "state": self.state}


def _node(tick: Tick, given: str) -> NodeTick:
    return next((n for n in tick.nodes if n.given_role == given), tick.primary)


def service_roles(tick: Tick | None) -> list[ServiceRoles]:
    """Each service that has a primary at ``tick``, in the order MySQL, Redis, DRBD."""
    r = None if tick is None else tick.roles
    if tick is None or r is None:
        return []
    r = r.resolved()
    out = []
    for lr in r.layers:
        if lr.flipped is None:
            continue
        p = _node(tick, "replica" if lr.flipped else "primary")
        q = _node(tick, "primary" if lr.flipped else "replica")
        if lr.changed is not None:
            held, how = tick.wall - lr.changed, f"changed at {tick_clock(lr.changed)}"
        elif lr.held_s is not None:  # (``since`` went back by what they said at first)
            held, how = max(lr.held_s, tick.wall - lr.since), lr.held_how
        else:
            held, how = tick.wall - lr.since, "at least: as replmon has seen it"
        out.append(ServiceRoles(lr.layer, p.name, q.name, max(0.0, held), how, lr.state))
    return out
