"""Roles: which node is each service's primary now, and a switchover or failover as one
event.

The command line's ``--primary``/``--replica`` (or the config) say what the user
expects; every tick replmon reads each service's direction from the servers themselves
(``replmon/roles.py``: a MySQL channel's source server_id or uuid against the other
node's, Redis ``role`` and replication id, DRBD resource roles). MySQL/MariaDB,
Redis/Valkey and DRBD each have their own primary node, and each service's checks judge
it in its own direction: a node can be the MySQL primary and the Redis replica (Redis
under Sentinel fails over on its own). Which services move together is
``[roles] together`` (``--together``): by default all of them, but Redis on its own
when a Sentinel is configured. This check tells the changes:

- **A switchover or failover, complete** (info): "db162 is now the primary (MySQL
  since 06:46:45, Redis since 06:46:46); db163 replicates from it" for the pair's first
  group; for a service that moves on its own, "Sentinel promoted db162's Redis at
  06:46:46, epoch 3; MySQL stays on db163" (or "db162 is now the Redis primary ...").
  It stays in view ``show_for`` (10 min) after the change, so whoever arrives later sees
  it; the other checks stay quiet about the change itself. The finding's key is the new
  primary's name (``redis:db162`` for a service on its own), the node it names is told
  by identity: a change while the last one is still in view (a switch back) is an event
  of its own, at its own time, and the last one's event closes.
- **Half done** (key "half_done": info "changing" from ``settle``, 2 s, warning after
  ``hold``, 15 s; critical after ``critical_after``, 120 s): services that move together
  disagree (MySQL moved, Redis or DRBD did not), or a service that had a direction lost
  it: nobody replicates from anybody, the old primary is not yet following the new one.
  Services in different groups may have different primaries: that is settled, not half
  done. The title names each service's say. It (not the completed event: a fault after a
  switchover is not caused by it) explains what the other checks see meanwhile (a
  replica not replicating, a Redis replica that is a master), so they form one incident
  under it. A Redis Sentinel's failover still settling (its ``failover-state``, or a
  promotion less than its ``failover-timeout`` ago: the old master, back, is a master
  until Sentinel makes it a replica) is part of the event, info for as long as it
  lasts: not a second primary (two_primaries) nor a replica that stopped replicating.
- **Sentinel** (``--sentinel``, optional): when a Redis Sentinel promoted a node while
  the event is in view, the titles say so: "...; Sentinel promoted db162 at 06:46:46,
  epoch 3" (the time its ``+switch-master`` arrived, else the first tick that showed
  the new master).
- **Roles the other way round from the start** (info): the servers say the node given
  as the replica is the primary, and since when from their own evidence. Everything is
  shown as it is; the names stay.

Since when: a session started after a change says how long each direction has held
from what the servers say, not from when replmon started: the replica's MySQL receiver
connected for so long (its processlist time), its Redis link up for so long (``CLIENT
LIST TYPE master``), Sentinel has seen the master as master for so long
(``role-reported-time``). ``check`` prints it ("roles: MySQL db163 → db162 for 3 d 2 h
(...); Redis db162 → db163 for 2 min 5 s (...)").

Both nodes writable stays two_primaries' finding; DRBD Primary on both, drbd_peer's.

On ``replmon serve``'s /metrics: ``replmon_node_role_info{role, given_role,
mysql_role, redis_role, drbd_role}`` per node, ``replmon_pair_role_change_timestamp_seconds``
and ``replmon_pair_role_layers_at_odds`` (docs/metrics.md). ``replmon rules`` raises
``ReplmonSwitchover`` (info) for a completed change of the pair,
``ReplmonServiceSwitchover`` (info) for a service that moved on its own (its
``service`` and ``primary`` labels from the key) and ``ReplmonSwitchoverHalfDone`` (at
this finding's severity) for a half-done one, each naming the new primary, instead of
the ``ReplmonFinding*`` alerts.

What to do: finish the change the services disagree on (promote or re-point the one
that did not move: ``REPLICAOF``, ``CHANGE MASTER TO``/``CHANGE REPLICATION SOURCE
TO``, ``drbdadm primary``), or roll it back; then check that writes go to the new
primary only. If they do not fail over together here, say so: ``[roles] together``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from replmon.check import (
    LAYER_NAMES,
    Check,
    Explains,
    Gate,
    LayerRole,
    Observation,
    Roles,
    Seconds,
    Severity,
    Thresholds,
    Window,
    failover_busy,
    fmt,
    fmt_duration,
    group_label,
    numbers,
    tick_clock,
)


class Limits(Thresholds):
    open_after: Seconds = 0.0
    """Seconds (s) before the finding opens: the change is shown at its tick; the
    holds of a half-done change are ``hold`` and ``critical_after``."""
    open_min_samples: int = 1
    """Ticks the change must be seen: one (it is a fact, not a level)."""
    close_after: Seconds = 0.0
    """Seconds (s) clear before it closes (it ends after ``show_for`` by itself)."""
    show_for: Seconds = 600.0
    """Seconds (s) a completed change stays in view after it happened."""
    settle: Seconds = 2.0
    """Seconds (s) the layers may disagree before it is said at all: a runbook
    switchover moves MySQL and Redis within a second (measured on the lab: 20-175 ms)."""
    hold: Seconds = 15.0
    """Seconds (s) a change may stay half done (layers disagreeing, nobody following)
    before it is a warning: a runbook switchover takes a few seconds."""
    critical_after: Seconds = 120.0
    """Seconds (s) half done after which it is critical."""


def _say(lr: LayerRole) -> str:
    name = LAYER_NAMES[lr.layer]
    if lr.state == "direction":
        return f"{name}: {lr.primary} is the primary"
    return f"{name}: {lr.detail}"


def _clock(wall: float | None) -> str | None:
    """The change's time as the title says it (an epoch in the detail reads as nothing)."""
    return None if wall is None else tick_clock(wall)


def _groups(r: Roles) -> list[list[LayerRole]]:
    """The groups that have a primary (a layer with a direction, now or before), each its
    layers that have one; the pair's group (its first service's) first."""
    out = [g for g in ([lr for lr in g if lr.flipped is not None] for g in r.group_layers())
           if g]
    have = {lr.layer for g in out for lr in g}
    first = next((name for name in LAYER_NAMES if name in have), "")
    return sorted(out, key=lambda g: all(lr.layer != first for lr in g))


def _lead(group: list[LayerRole]) -> LayerRole:
    return next((lr for lr in group if lr.state == "direction"), group[0])


def _half_done(r: Roles) -> tuple[list[LayerRole], float] | None:
    """(the layers at odds with their group, since when) or None when every group's
    layers agree and none lost its direction."""
    odd = r.at_odds()
    if not odd:
        return None
    groups = [g for g in r.group_layers() if any(lr in odd for lr in g)]
    involved = [lr for g in groups for lr in g if lr in odd or lr.state == "direction"]
    return odd, max(lr.since for lr in involved)


def _moves(r: Roles, now: float, t: Limits) -> list[tuple[list[LayerRole], float]]:
    """The groups whose primary changed less than ``show_for`` ago, with the time of the
    change (their last layer's); not a group at odds, unless the change was complete
    before the disagreement began and it has lasted less than ``settle``: a failed node
    rejoining shows as a master for a tick or two before it is re-pointed, and the
    change's finding must not close and open again over it (seen live in the
    one-machine test)."""
    odd = r.at_odds()
    half = _half_done(r)
    out = []
    for g in _groups(r):
        times = [lr.changed for lr in g if lr.changed is not None]
        if not times or now - max(times) >= t.show_for:
            continue
        complete = len(times) == len(g)  # every layer of the group moved
        if any(lr in odd for lr in g) and not (
                complete and half is not None and now - half[1] < t.settle
                and max(times) < half[1]):
            continue
        out.append((g, max(times)))
    return out


def _busy(r: Roles, odd: list[LayerRole], w: Window) -> str:
    """What Sentinel is doing, when the only layer at odds is a Redis that moves on its
    own: its failover, settling (the old master back and still a master until Sentinel
    reconfigures it) is part of the event, not a change half done."""
    if any(lr.layer != "redis" for lr in odd) or r.group_of("redis") != ("redis",):
        return ""
    return failover_busy(w.last.sentinel, w.last.wall)


def _sentinel(w: Window, t: Limits, lr: LayerRole | None
              ) -> tuple[str, dict[str, str | int | None]]:
    """What a configured Sentinel did lately to the Redis ``lr`` names as the primary, as
    the title says it ("Sentinel promoted db162 at 06:46:46, epoch 3") and as numbers;
    ("", {}) when it did nothing in view."""
    s = w.last.sentinel
    sw = s.last_switch if s is not None else None
    if s is None or sw is None or w.last.wall - sw.wall >= t.show_for:
        return "", {}
    if lr is not None and lr.flipped is not None and s.master_given \
            and s.master_given != ("replica" if lr.flipped else "primary"):
        return "", {}  # a switch away from the Redis primary the servers say
    who = sw.new_node or sw.new
    epoch = f", epoch {sw.epoch}" if sw.epoch is not None else ""
    return (f"Sentinel promoted {who} at {tick_clock(sw.wall)}{epoch}",
            {"sentinel_promoted": who, "sentinel_at": tick_clock(sw.wall),
             "sentinel_epoch": sw.epoch})


def _stays(r: Roles, group: list[LayerRole]) -> str:
    """"; MySQL+DRBD stays on db163" for each other group (its primary as it is)."""
    out = ""
    for g in _groups(r):
        if g is group or g == group:
            continue
        out += f"; {group_label([lr.layer for lr in g])} stays on {_lead(g).held}"
    return out


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position): what
    ``evaluate`` judges at this tick, None where it judges nothing; all None without
    roles. Whole seconds (math.ceil/floor)."""

    at_odds_s: int | None
    """Seconds the layers have been at odds, rounded up."""
    since_change_s: int | None
    """Seconds since the newest completed change in view, rounded down."""
    swapped: int | None
    """1 when the roles are the other way round from the start, else 0."""


def measure(w: Window) -> Gauges:
    r = w.last.roles
    if r is None:
        return Gauges(None, None, None)
    r = r.resolved()
    now = w.last.wall
    half = _half_done(r)
    changes = [lr.changed for lr in r.layers if lr.changed is not None]
    newest = max(changes) if changes else r.since
    return Gauges(None if half is None else math.ceil(now - half[1]),
                  None if newest is None else math.floor(now - newest),
                  1 if r.since is None and not changes and r.swapped else 0)


def quiet(g: Gauges, t: Limits) -> bool:
    """Nothing to say: the layers are not at odds (or for less than ``settle``), no
    change happened less than ``show_for`` ago, and the roles are not the other way round
    from the start (``hold``, ``critical_after`` and Sentinel only set the severity and
    the words)."""
    held, since = g.at_odds_s, g.since_change_s
    if held is not None and held >= t.settle:
        return False
    if since is not None and since < t.show_for:
        return False
    return not g.swapped


def evaluate(w: Window, t: Limits) -> list[Observation]:
    r = w.last.roles
    if r is None:
        return []
    r = r.resolved()
    now = w.last.wall
    out: list[Observation] = []
    half = _half_done(r)
    if half is not None and now - half[1] >= t.settle:
        out.append(_half_done_obs(w, t, r, *half))
    for group, at in _moves(r, now, t):
        out.append(_moved(w, t, r, group, at))
    changes = [lr for lr in r.layers if lr.changed is not None]
    if half is None and r.since is None and not changes and r.swapped:
        out.append(_swapped(w, r))
    return out


def _half_done_obs(w: Window, t: Limits, r: Roles, odd: list[LayerRole], start: float
                   ) -> Observation:
    now = w.last.wall
    held = now - start
    busy = _busy(r, odd, w)
    agreeing = [lr for lr in r.layers if lr.state == "direction" and lr not in odd]
    moved = ", ".join(f"{LAYER_NAMES[lr.layer]} since {tick_clock(lr.since)}"
                      for lr in agreeing)
    said = "; ".join(_say(lr) for lr in odd)
    by_sentinel, sentinel_numbers = _sentinel(w, t, r.layer("redis"))
    if busy or held < t.hold:
        sev, what = Severity.INFO, "changing"
    else:
        sev = Severity.CRITICAL if held >= t.critical_after else Severity.WARNING
        what = "half done"
    groups = _groups(r)
    in_pair = not groups or any(lr in odd for lr in groups[0]) or \
        all(lr.flipped is None for lr in odd)
    tail = f"; {busy}" if busy else f"; {by_sentinel}" if by_sentinel else ""
    if in_pair:
        title = (f"roles {what} for {fmt(held)} s: {r.primary} is the primary"
                 + (f" ({moved})" if moved else "") + f"; {said}{tail}")
    else:  # a service that moves on its own, mid-change: the pair's primary is not news
        label = group_label(sorted({s for lr in odd for s in r.group_of(lr.layer)},
                                   key=list(LAYER_NAMES).index))
        title = f"{label} {what} for {fmt(held)} s: {said}{tail}"
    together = "; ".join(group_label(g) for g in r.groups if len(g) > 1) or "none"
    return Observation.trusted(
        key="half_done", node="pair", severity=sev, title=title,
        numbers=numbers(primary=r.primary, previous=r.previous or None,
                        changed_at=_clock(r.since), half_done_s=held,
                        move_together=together, sentinel_failover=busy or None,
                        **{f"{lr.layer}_says": _say(lr) for lr in r.layers},
                        **sentinel_numbers),
        cause=("a switchover or failover done on some layers only, or a node that "
               "does not follow the new primary yet: "
               + "; ".join(lr.detail for lr in odd)
               + (f" ({busy}: it reconfigures the old master when it answers again)"
                  if busy else "")),
        next_step=("Finish the change on the layer that did not move (REPLICAOF, "
                   "CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO, drbdadm primary) "
                   "or roll it back; then make sure writes go to one node only. If "
                   "these services do not fail over together here, say so: [roles] "
                   "together (docs/checks.md)"),
    )


def _moved(w: Window, t: Limits, r: Roles, group: list[LayerRole], at: float
           ) -> Observation:
    """A completed change of one group: the pair's ("db162 is now the primary") or a
    service that moves on its own ("Sentinel promoted db162's Redis")."""
    lead = _lead(group)
    new, old = lead.held, lead.previous or next(
        (lr.previous for lr in group if lr.previous), "")
    pair_group = _groups(r)[0] == group
    label = group_label([lr.layer for lr in group])
    when = ", ".join(f"{LAYER_NAMES[lr.layer]} since {tick_clock(lr.changed)}"
                     for lr in group if lr.changed is not None)
    redis = next((lr for lr in group if lr.layer == "redis"), None)
    by_sentinel, sentinel_numbers = _sentinel(w, t, redis) if redis else ("", {})
    other = _stays(r, group)
    if pair_group:
        title = (f"{new} is now the primary ({when}); {old or 'the other node'} "
                 f"replicates from it{other}" + (f"; {by_sentinel}" if by_sentinel else ""))
        key = new
    elif by_sentinel and redis is not None and len(group) == 1:
        s = w.last.sentinel
        sw = s.last_switch if s is not None else None
        epoch = f", epoch {sw.epoch}" if sw is not None and sw.epoch is not None else ""
        clock = tick_clock(sw.wall) if sw is not None else tick_clock(at)
        title = f"Sentinel promoted {new}'s Redis at {clock}{epoch}{other}"
        key = f"redis:{new}"
    else:
        title = (f"{new} is now the {label} primary ({when}); {old or 'the other node'} "
                 f"replicates from it{other}")
        key = f"{group[0].layer}:{new}"
    return Observation.trusted(
        key=key, node="pair", severity=Severity.INFO, title=title,
        given="replica" if lead.flipped else "primary",  # the new primary, by identity
        numbers=numbers(primary=new, previous=old or None, services=label,
                        changed_at=_clock(at), pair_primary=r.primary,
                        **{f"{lr.layer}_says": lr.detail for lr in r.layers
                           if lr.state != "unknown"}, **sentinel_numbers),
        cause=(f"a switchover or failover of {label}: {old or 'the other node'} was its "
               f"primary until {tick_clock(at)}"
               + ("" if pair_group else f"; {label} fails over on its own here "
                  "([roles] together)")),
        next_step=("Check that clients write to the new primary only; the checks now "
                   "judge each service as it is"),
    )


def _swapped(w: Window, r: Roles) -> Observation:
    other = w.last.replica.name
    held = [lr for lr in r.layers if lr.state == "direction" and lr.held_s is not None]
    how = "; ".join(f"{LAYER_NAMES[lr.layer]} for {fmt_duration(lr.held_s)} "
                    f"({lr.held_how})" for lr in held)
    return Observation.trusted(
        key=r.primary, node="pair", severity=Severity.INFO,
        given="replica" if r.swapped else "primary",
        title=(f"{r.primary} is the primary and {other} replicates from it, not the "
               f"other way round as given" + (f" ({how})" if how else "")),
        numbers=numbers(primary=r.primary, given_primary=r.given_primary,
                        **{f"{lr.layer}_held_s": lr.held_s for lr in held}),
        cause="the command line or config named the roles before the last switchover",
        next_step="Nothing to do: replmon shows the pair as the servers say it is",
    )


EXPLAINS: tuple[Explains, ...] = (
    Explains("writes_refused", "either",
             "a switchover fences the old primary (read_only) before the promotion and the "
             "runbook clears the new one's last: writes are refused until it completes",
             before_s=60.0),
    Explains("redis_replication", "either",
             "after a failover the old master resyncs from the new one, in full when it "
             "took writes after the promotion (Sentinel does not pause them): those "
             "writes are lost", before_s=60.0, effect_key="full_resync"),
) + tuple(
    Explains(effect, "either", why, before_s=60.0, cause_key="half_done")
    for effect, why in (
        ("mysql_replication", "mid-change the old primary is not yet a replica of the new "
                              "one, or the promoted replica has no channel"),
        ("redis_replication", "a Redis layer left behind is a master where a replica is "
                              "expected, or a replica of the wrong node"),
        ("pair_lag", "mid-change the positions compared are the old direction's"),
        ("errant_writes", "writes taken by the new primary while a layer still points "
                          "the other way"),
        ("semi_sync", "the semi-sync roles move with the primary"),
        ("applier_progress", "the applier of a node that is not yet a replica"),
        ("redis_backlog_headroom", "the backlog of a master that is not the pair's"),
    ))
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="roles", title="Roles", needs=("mysql", "redis", "drbd"),
              thresholds=Limits, evaluate=evaluate, window=5.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
