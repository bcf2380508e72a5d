"""Latency bound: the round trip to a server is long, or rising, and caps throughput.

Reads, per node, the round-trip time replmon measures each tick: a timed MySQL
COM_PING (``MysqlSample.rtt_ms``) and a timed Redis PING (``RedisSample.rtt_ms``).
The node's round trip is the LOWER of the two: a network delay raises both, while
one reading alone is often inflated by a busy server or by replmon itself (on the
lab under write load, replmon's Redis PING read 5-15 ms on loopback while a direct
PING took 0.1-0.7 ms). With one server on the node, its reading is used.
Also reads whether replication is synchronous: DRBD protocol C on any resource
(either node), or MySQL semi-sync on the primary (``Rpl_semi_sync_*_status`` ON,
else ``rpl_semi_sync_*_enabled``).

The round trips above are measured from replmon to each server: the latency the
application sees if replmon runs where the application runs. The replication link
itself is timed from the primary: each tick the primary's host source times one TCP
connect to the replica's Redis port on the primary (over its SSH channel when
remote; ``HostSample.peer_rtt_ms``), judged with the same thresholds as a finding on
the pair (key "link"). A pair without Redis has no link timing (a bare connect to
MySQL would count toward max_connect_errors). A server that does not answer at all
is a timeout, reported by source health, not here.

Why it matters: a client waits one round trip per statement, so one connection can
run at most ~1000 / rtt_ms statements/s, however fast the server is. Seed 001:
sysbench at 0.3 ms ran 407 TPS / 8,147 QPS; with 10 ms added (tc netem) 187 TPS /
3,748 QPS on the same server. With synchronous replication the commit also waits
for the replica: semi-sync pays one round trip per commit (the replica's ACK); DRBD
protocol C pays it per synchronous disk write, about twice per commit (redo log and
binlog flushes), so one connection commits at most ~1000 / (2 x rtt_ms) times/s.

Fires when the round trip is at least ``warning_ms`` (5) in the current tick
(critical from ``critical_ms``, 20), held ``open_after`` (3 s); or when it is
rising: the median of the last ``recent`` (3 s) is ``rise_factor`` (3) times
the median of the earlier ticks of the window (60 s, at least ``min_baseline_ticks``,
5, readings) and ``rise_min_ms`` (2 ms) above it (a warning with synchronous
replication, else info). One finding per node.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import isfinite
from statistics import median
from typing import cast

from pydantic import AliasChoices, Field

from replmon.check import (
    Check,
    Explains,
    NodeTick,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    numbers,
    source_ok,
)

SOURCES = (("mysql", "MySQL"), ("redis", "Redis"))
ON = ("ON", "1", "YES", "TRUE")


class Limits(Thresholds):
    warning_ms: float = 5.0
    """Round trip (ms) from which the finding warns."""
    critical_ms: float = 20.0
    """Round trip (ms) from which it is critical."""
    recent: Seconds = Field(default=3.0, gt=0,
                            validation_alias=AliasChoices("recent", "recent_ticks"))
    """Seconds (s) whose median round trip is "now" for the rising test (at least one
    tick). ``recent_ticks``, its name before durations, is read as seconds."""
    min_baseline_ticks: int = Field(default=5, ge=1)
    """Earlier ticks with a round trip needed before a rise is judged (a count: a median
    needs some readings, whatever the interval)."""
    rise_factor: float = 3.0
    """Median now / median before at or above which the round trip is rising."""
    rise_min_ms: float = 2.0
    """...and at least this many ms above it (sub-ms jitter is not a rise)."""


def _on(v: str | None) -> bool:
    return v is not None and v.upper() in ON


def sync_modes(w: Window) -> list[str]:
    """The synchronous replication in force: "drbd" (protocol C), "semi-sync"."""
    modes = []
    if any(c.protocol == "C" for n in w.last.nodes if source_ok(n, "drbd")
           for r in n.drbd.resources for c in r.connections):
        modes.append("drbd")
    p = w.last.primary
    if source_ok(p, "mysql"):
        ss, var = p.mysql.semi_sync, p.mysql.variables
        active = ss.source_active if ss.source_active is not None else (
            ss.source_enabled if ss.source_enabled is not None else
            _on(var.get("rpl_semi_sync_master_enabled") or var.get("rpl_semi_sync_source_enabled")))
        if active:
            modes.append("semi-sync")
    return modes


def node_rtt(node: NodeTick) -> tuple[float, dict[str, float]] | None:
    """(the node's round trip = the lowest reading, {server label: reading}) or None."""
    got = {label: getattr(node, kind).rtt_ms for kind, label in SOURCES
           if source_ok(node, kind) and getattr(node, kind).rtt_ms is not None}
    return (min(got.values()), got) if got else None


def lowest_rtt(node: NodeTick) -> float | None:
    """The node's round trip alone (node_rtt's first half, without its dict): the column
    _judge looks at."""
    low = None
    for kind, _ in SOURCES:
        if source_ok(node, kind):
            rtt = getattr(node, kind).rtt_ms
            if rtt is not None and (low is None or rtt < low):  # min() keeps the first
                low = rtt
    return low


def _bound(rtt: float, modes: list[str]) -> str:
    text = (f"each statement or command waits one round trip: at most ~{fmt(1000 / rtt)}/s "
            f"per connection without pipelining")
    if "drbd" in modes:
        text += (f"; with DRBD protocol C each commit pays the round trip twice (redo log "
                 f"and binlog flush wait for the peer): ~{fmt(1000 / (2 * rtt))} commits/s "
                 f"per connection if the replication link is this slow")
    if "semi-sync" in modes:
        text += (f"; with semi-sync each commit pays it once more (the replica's ACK): "
                 f"~{fmt(1000 / rtt)} commits/s per connection if the replication link "
                 f"is this slow")
    return text + "."


def _judge(series: Sequence[float | None], t: Limits, n_recent: int
           ) -> tuple[Severity | None, float, float | None] | None:
    """(severity, recent median, earlier median) for a round-trip series whose last value
    is high (>= warning_ms) or rising (severity None: the caller knows whether replication
    is synchronous); None when neither or no last value. ``n_recent``: the ticks in
    ``t.recent`` at the window's interval."""
    now = series[-1]
    if now is None:
        return None
    earlier = cast("Sequence[float]", series[:-n_recent])
    try:
        total = sum(earlier)  # the usual window has a reading on every tick
    except TypeError:  # a None in it: keep the readings only
        earlier = [x for x in earlier if x is not None]
        total = sum(earlier)
    recent = [x for x in series[-n_recent:] if x is not None]
    cur = median(recent)
    if now < t.warning_ms and earlier and isfinite(total):
        # Not high. The median of `earlier` is at least its minimum, so when even the
        # minimum is too close below `cur` it cannot be rising: no sort of the window.
        low = min(earlier)
        if cur - low < t.rise_min_ms or (t.rise_factor >= 0
                                         and cur < t.rise_factor * max(low, 0.01)):
            return None
    base = median(earlier) if len(earlier) >= t.min_baseline_ticks else None
    if now >= t.warning_ms:
        return (Severity.CRITICAL if now >= t.critical_ms else Severity.WARNING), cur, base
    if (base is not None and cur >= t.rise_factor * max(base, 0.01)
            and cur - base >= t.rise_min_ms):
        return None, cur, base
    return None


def _severity(judged: Severity | None, modes: list[str]) -> Severity:
    """A high round trip's own severity; a rising one warns with synchronous replication."""
    if judged is not None:
        return judged
    return Severity.WARNING if modes else Severity.INFO


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    modes: list[str] | None = None  # sync_modes, looked at only when something is judged
    for role in ("primary", "replica"):
        judged = _judge(w.series(role, lowest_rtt), t, w.span(t.recent))
        if judged is None:
            continue
        last = node_rtt(w.node(role))
        assert last is not None  # _judge saw its lowest reading
        now, parts = last
        if modes is None:
            modes = sync_modes(w)
        sev, cur, base = _severity(judged[0], modes), judged[1], judged[2]
        rising = judged[0] is None
        was = f", was {base:.1f} ms" if base is not None else ""
        each = ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
        name = w.node(role).name
        if rising:
            title = f"Round trip to {name} rising: {cur:.1f} ms vs {base:.1f} ms before"
        else:
            title = f"Round trip to {name} {now:.1f} ms ({each} ms{was})"
        sync = f" with {' + '.join(modes)} replication" if modes else ""
        out.append(Observation(
            node=role, severity=sev, title=title + sync,
            numbers=numbers(rtt_ms=now, mysql_rtt_ms=parts.get("MySQL"),
                            redis_rtt_ms=parts.get("Redis"), rtt_recent_median_ms=cur,
                            rtt_before_ms=base, max_per_s_per_connection=1000 / now,
                            sync_replication="+".join(modes) or None),
            cause=("The network between replmon and this node is slow (congestion, a WAN or "
                   "VPN hop, a shaped or overloaded link); " + _bound(now, modes)),
            next_step=("Compare with ping / ss -tin from the application host and between "
                       "the nodes; look for tc/netem rules, a saturated link "
                       "(link_saturation) or a stalled host; keep clients and the replica on "
                       "the same low-latency network, and batch or pipeline statements."),
        ))
    link = _link(w, t, modes)
    if link is not None:
        out.append(link)
    return out


def link_rtt(node: NodeTick) -> float | None:
    """The primary's own timing of a TCP connect to the replica (HostSample.peer_rtt_ms)."""
    return node.host.peer_rtt_ms if source_ok(node, "host") else None


def _link(w: Window, t: Limits, modes: list[str] | None) -> Observation | None:
    """The replication link itself, timed from the primary (node "pair", key "link")."""
    series = w.series("primary", link_rtt)
    now = series[-1]
    judged = _judge(series, t, w.span(t.recent))
    if now is None or judged is None:
        return None
    if modes is None:
        modes = sync_modes(w)
    sev, cur, base = _severity(judged[0], modes), judged[1], judged[2]
    rising = judged[0] is None
    p, r = w.node("primary"), w.node("replica")
    what = f"Primary {p.name} -> replica {r.name} round trip"
    if rising:
        title = f"{what} rising: {cur:.1f} ms vs {base:.1f} ms before"
    else:
        title = f"{what} {now:.1f} ms (TCP connect to {p.host.peer})"
    sync = f" with {' + '.join(modes)} replication" if modes else ""
    return Observation(
        key="link", node="pair", severity=sev, title=title + sync,
        numbers=numbers(link_rtt_ms=now, link_rtt_recent_median_ms=cur, link_rtt_before_ms=base,
                        peer=p.host.peer, sync_replication="+".join(modes) or None),
        cause=("The network between the primary and the replica is slow (a WAN or VPN hop, "
               "congestion, a shaped link); replication traffic pays it: " + _bound(now, modes)),
        next_step=("Check the path between the nodes (ss -tin on the primary, mtr to the "
                   "replica); a saturated link shows in link_saturation; keep the pair on one "
                   "low-latency network, or use asynchronous replication across a WAN."),
    )


EXPLAINS: tuple[Explains, ...] = (
    Explains("semi_sync", "either", "each commit waits a round trip for the replica's ack"),
    Explains("drbd_congestion", "either", "protocol C waits a round trip for every write"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="latency_bound", title="Latency bound", needs=("mysql", "redis", "drbd"),
              thresholds=Limits, evaluate=evaluate, window=60.0, explains=EXPLAINS)
