"""What a Redis Sentinel says about the pair's Redis master, once a tick.

Optional (``--sentinel HOST:PORT`` or a ``[sentinel]`` table): the pair's tick then
carries one ``SentinelSample`` (``Tick.sentinel``) read by
``replmon.sources.sentinel.SentinelSource``: Sentinel's view of the master it
monitors (``SENTINEL MASTER``: its address, flags such as s_down and o_down, quorum,
the other Sentinels it knows, the config epoch, the failover state) and the failover
events it published since the previous tick (``+switch-master``, ``+sdown``,
``+odown``, ``+failover-state-*``...). Sentinel's master address is also said as the
pair's node name, so a recording and its replay say "Sentinel promoted db162" the
same way.

Sentinel is not a layer of the pair's direction (``replmon.roles``): what the Redis
servers themselves say decides; Sentinel's view is shown beside it, tells how long the
master has held (``role_reported_s``), and makes a failover in progress one event.
"""

from __future__ import annotations

from replmon.model.base import SampleBase, Struct, struct


@struct
class SentinelEvent(Struct):
    """One event Sentinel published on its Pub/Sub channels about this master."""

    wall: float
    """Wall time (epoch s) replmon received it."""
    kind: str
    """The channel: "+switch-master", "+sdown", "-odown", "+failover-state-select-slave"..."""
    text: str
    """The message as Sentinel sent it ("lab 127.0.0.1 6380 127.0.0.1 6381")."""


@struct
class SentinelSwitch(Struct):
    """The last change of master Sentinel made (or replmon saw it make)."""

    wall: float
    """Wall time (epoch s): when its +switch-master arrived, or the first tick that
    showed the new address (the events were missed)."""
    old: str
    """The old master, host:port ("" when unknown)."""
    new: str
    """The new master, host:port."""
    new_node: str = ""
    """The pair's node at ``new`` ("" when it is neither of the pair's Redis servers)."""
    old_node: str = ""
    epoch: int | None = None
    """Sentinel's config epoch after the switch (each failover increments it)."""


@struct
class SentinelSample(SampleBase):
    """Sentinel's view of the pair's Redis master at one tick."""

    sentinel: str = ""
    """Where the Sentinel listens (host:port)."""
    name: str = ""
    """The name Sentinel monitors the master by."""
    master: str = ""
    """The master's address as Sentinel has it (host:port)."""
    master_node: str = ""
    """The pair's node at that address ("" when neither of the pair's Redis servers)."""
    master_given: str = ""
    """The pair's node at that address by the role it was given ("primary", "replica";
    "" when neither): how replmon tells the nodes apart (their names could be equal)."""
    flags: tuple[str, ...] = ()
    """The master's flags: "master", and "s_down" (down to this Sentinel), "o_down"
    (down to a quorum), "failover_in_progress"..."""
    quorum: int | None = None
    """Sentinels that must agree the master is down."""
    other_sentinels: int | None = None
    """Other Sentinels this one knows monitor the master (num-other-sentinels)."""
    replicas: int | None = None
    """Replicas Sentinel knows for the master (num-slaves)."""
    config_epoch: int | None = None
    """Sentinel's configuration epoch for this master: each failover increments it."""
    failover_state: str = ""
    """The failover under way ("wait_start", "select_slave", "send_slaveof_noone",
    "wait_promotion", "reconf_slaves", ...; "" when none)."""
    role_reported_s: float | None = None
    """Seconds since Sentinel saw the master report its role as it is now
    (``role-reported-time``): after a failover, about the time since the promotion."""
    failover_timeout_s: float | None = None
    """Sentinel's ``failover-timeout`` for this master, seconds (180 by default): a
    failover still settling within it is one event, not a second primary."""
    events: tuple[SentinelEvent, ...] = ()
    """Events about this master received since the previous tick."""
    last_switch: SentinelSwitch | None = None
    """The last change of master seen this session (kept tick after tick)."""
    events_error: str | None = None
    """Why the event subscription is down (the polled fields still hold), or None."""

    @property
    def down(self) -> str:
        """"o_down", "s_down" or "" from the master's flags."""
        return next((f for f in ("o_down", "s_down") if f in self.flags), "")


def failover_busy(s: SentinelSample | None, wall: float) -> str:
    """What Sentinel is doing about the master at ``wall`` (epoch s), in words, while a
    failover runs or settles: its ``failover-state``, or a change of master less than
    ``failover-timeout`` ago (it reconfigures the old master when it comes back, within
    that time); "" when none (or no Sentinel, or it cannot be read)."""
    if s is None or not s.status.ok:
        return ""
    if s.failover_state or "failover_in_progress" in s.flags:
        return f"Sentinel failover in progress ({s.failover_state or 'started'})"
    sw = s.last_switch
    limit = s.failover_timeout_s if s.failover_timeout_s is not None else 180.0
    if sw is not None and 0 <= wall - sw.wall < limit:
        return (f"Sentinel promoted {sw.new_node or sw.new} {wall - sw.wall:.0f} s ago "
                f"(failover-timeout {limit:g} s)")
    return ""
