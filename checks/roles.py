"""Roles: which node is the primary now, and a switchover or failover as one event.

The command line's ``--primary``/``--replica`` (or the config) say what the user
expects; every tick replmon reads the pair's direction from the servers themselves,
layer by layer (``replmon/roles.py``: a MySQL channel's source server_id or uuid
against the other node's, Redis ``role`` and replication id, DRBD resource roles), and
every check judges the pair as it is. This check tells the change itself:

- **A switchover or failover, complete** (info): "db162 is now the primary (MySQL
  since 06:46:45, Redis since 06:46:46); db163 replicates from it". It stays in view
  ``show_for`` (10 min) after the change, so whoever arrives later sees it; the other
  checks stay quiet about the change itself (the errant-GTID, not-replicating and
  swapped-roles alarms it used to cause are gone). The finding's key is the new
  primary's name: a change while the last one is still in view (a switch back) is an
  event of its own, at its own time, and the last one's event closes.
- **Half done** (key "half_done": info "changing" from ``settle``, 2 s, warning after
  ``hold``, 15 s; critical after ``critical_after``, 120 s): the layers disagree (MySQL
  moved, Redis or DRBD did not), or a layer that had a direction lost it: nobody
  replicates from anybody, the old primary is not yet following the new one. The title
  names each layer's say. It (not the completed event: a fault after a switchover is
  not caused by it) explains what the other
  checks see meanwhile (a replica not replicating, a Redis replica that is a master),
  so they form one incident under it.
- **Sentinel** (``--sentinel``, optional): when a Redis Sentinel promoted a node while
  the event is in view, both titles say so: "...; Sentinel promoted db162 at
  06:46:46, epoch 3" (the time its ``+switch-master`` arrived, else the first tick
  that showed the new master).
- **Roles the other way round from the start** (info): the servers say the node given
  as the replica is the primary. Everything is shown as it is; the names stay.

Both nodes writable stays two_primaries' finding; DRBD Primary on both, drbd_peer's.

On ``replmon serve``'s /metrics: ``replmon_node_role_info{role, given_role}`` per node,
``replmon_pair_role_change_timestamp_seconds`` and ``replmon_pair_role_layers_at_odds``
(docs/metrics.md). ``replmon rules`` raises ``ReplmonSwitchover`` (info) for a completed
change and ``ReplmonSwitchoverHalfDone`` (at this finding's severity) for a half-done
one, both naming the new primary, instead of the ``ReplmonFinding*`` alerts.

What to do: finish the change the layers disagree on (promote or re-point the layer
that did not move: ``REPLICAOF``, ``CHANGE MASTER TO``/``CHANGE REPLICATION SOURCE
TO``, ``drbdadm primary``), or roll it back; then check that writes go to the new
primary only.
"""

from __future__ import annotations

import math

from replmon.check import (
    LAYER_NAMES,
    Check,
    Explains,
    Gate,
    Gauges,
    LayerRole,
    Observation,
    Roles,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
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
    if lr.state == "none":
        return f"{name}: {lr.detail}"
    return f"{name}: {lr.detail}"


def _clock(wall: float | None) -> str | None:
    """The change's time as the title says it (an epoch in the detail reads as nothing)."""
    return None if wall is None else tick_clock(wall)


def _half_done(r: Roles) -> tuple[list[LayerRole], float] | None:
    """(the layers at odds with the pair's primary, since when) or None when every layer
    with a say agrees and none lost its direction."""
    odd = r.at_odds()
    if not odd:
        return None
    agreeing = [lr for lr in r.layers if lr.state == "direction" and lr.primary == r.primary]
    start = max(lr.since for lr in odd + agreeing)
    return odd, start


def _sentinel(w: Window, t: Limits) -> tuple[str, dict[str, str | int | None]]:
    """What a configured Sentinel did lately, as the title says it ("Sentinel promoted
    db162 at 06:46:46, epoch 3") and as numbers; ("", {}) when it did nothing in view."""
    s = w.last.sentinel
    sw = s.last_switch if s is not None else None
    if sw is None or w.last.wall - sw.wall >= t.show_for:
        return "", {}
    who = sw.new_node or sw.new
    epoch = f", epoch {sw.epoch}" if sw.epoch is not None else ""
    return (f"Sentinel promoted {who} at {tick_clock(sw.wall)}{epoch}",
            {"sentinel_promoted": who, "sentinel_at": tick_clock(sw.wall),
             "sentinel_epoch": sw.epoch})


def gauges(w: Window) -> Gauges:
    """(seconds the layers have been at odds, rounded up; seconds since a completed
    change, rounded down; 1 when the roles are the other way round from the start): the
    one of the three that ``evaluate`` judges at this tick, None for the others; all None
    without roles. Whole seconds (math.ceil/floor: ``check.up`` costs ~2 us a call, more
    than ``evaluate`` on a healthy tick)."""
    r = w.last.roles
    if r is None:
        return (None, None, None)
    half = _half_done(r)
    if half is not None:
        return (math.ceil(w.last.wall - half[1]), None, None)
    if r.since is not None:
        return (None, math.floor(w.last.wall - r.since), None)
    return (None, None, 1 if r.swapped else 0)


def quiet(g: Gauges, t: Limits) -> bool:
    """The three cases of ``evaluate`` exclude each other on facts alone (layers at odds,
    a change with a time, neither): at odds, it says nothing before ``settle`` (``hold``
    and ``critical_after`` only set the severity); after a change, nothing from
    ``show_for`` on; else only a swapped start is said, whatever the thresholds (the
    Sentinel's ``show_for`` only adds words)."""
    held, since, swapped = g
    if held is not None:
        return held < t.settle
    if since is not None:
        return since >= t.show_for
    return not swapped


def evaluate(w: Window, t: Limits) -> list[Observation]:
    r = w.last.roles
    if r is None:
        return []
    by_sentinel, sentinel_numbers = _sentinel(w, t)
    sentinel_said = f"; {by_sentinel}" if by_sentinel else ""
    now = w.last.wall
    other = w.last.replica.name
    agreeing = [lr for lr in r.layers if lr.state == "direction" and lr.primary == r.primary]
    moved = ", ".join(f"{LAYER_NAMES[lr.layer]} since {tick_clock(lr.since)}"
                      for lr in agreeing)
    half = _half_done(r)
    if half is not None:
        odd, start = half
        held = now - start
        if held < t.settle:
            return []  # a runbook switchover moves its layers within a second
        said = "; ".join(_say(lr) for lr in odd)
        if held < t.hold:
            sev, what = Severity.INFO, "changing"
        else:
            sev = Severity.CRITICAL if held >= t.critical_after else Severity.WARNING
            what = "half done"
        title = (f"roles {what} for {fmt(held)} s: {r.primary} is the primary"
                 + (f" ({moved})" if moved else "") + f"; {said}{sentinel_said}")
        return [Observation(
            key="half_done", node="pair", severity=sev, title=title,
            numbers=numbers(primary=r.primary, previous=r.previous or None,
                            changed_at=_clock(r.since), half_done_s=held,
                            **{f"{lr.layer}_says": _say(lr) for lr in r.layers},
                            **sentinel_numbers),
            cause=("a switchover or failover done on some layers only, or a node that "
                   "does not follow the new primary yet: "
                   + "; ".join(lr.detail for lr in odd)),
            next_step=("Finish the change on the layer that did not move (REPLICAOF, "
                       "CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO, drbdadm primary) "
                       "or roll it back; then make sure writes go to one node only"),
        )]
    if r.since is not None and now - r.since < t.show_for:
        title = (f"{r.primary} is now the primary" + (f" ({moved})" if moved else "")
                 + f"; {other} replicates from it{sentinel_said}")
        return [Observation(
            key=r.primary, node="pair", severity=Severity.INFO, title=title,
            numbers=numbers(primary=r.primary, previous=r.previous,
                            changed_at=_clock(r.since),
                            **{f"{lr.layer}_says": lr.detail for lr in r.layers
                               if lr.state != "unknown"}, **sentinel_numbers),
            cause=f"a switchover or failover: {r.previous} was the primary until "
                  f"{tick_clock(r.since)}",
            next_step=("Check that clients write to the new primary only; the checks now "
                       "judge the pair as it is"),
        )]
    if r.since is None and r.swapped:
        return [Observation(
            key=r.primary, node="pair", severity=Severity.INFO,
            title=(f"{r.primary} is the primary and {other} replicates from it, not the "
                   f"other way round as given" + (f" ({moved})" if moved else "")),
            numbers=numbers(primary=r.primary, given_primary=r.given_primary),
            cause="the command line or config named the roles before the last switchover",
            next_step="Nothing to do: replmon shows the pair as the servers say it is",
        )]
    return []


EXPLAINS: tuple[Explains, ...] = tuple(
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
              gate=Gate(gauges, quiet))
