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
run at most ~1000 / rtt_ms statements/s, however fast the server is. Field notes:
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

from collections.abc import Callable, Sequence
from math import isfinite
from statistics import median
from typing import NamedTuple, cast

from pydantic import AliasChoices, Field

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Role,
    Seconds,
    Severity,
    Thresholds,
    Window,
    fmt,
    numbers,
    round_up,
    source_ok,
    span_ticks,
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


def link_rtt(node: NodeTick) -> float | None:
    """The primary's own timing of a TCP connect to the replica (HostSample.peer_rtt_ms)."""
    return node.host.peer_rtt_ms if source_ok(node, "host") else None


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


BANDS = (2, 4)
"""The gate's bands of recent spans, in readings: 1-2 (their median follows a single
spike), 3-4 (the default ``recent``: 3 s at 1 s) and longer. Each has its own rise
bound: a spike now, which a ``recent`` of one tick sees, leaves the default quiet, and
the looser bound of the long spans stays with them."""

NEAR = 16
"""Spans of 5 to NEAR readings are bounded by the order statistics of the last NEAR
readings (a spike a minute ago does not count), longer ones by the whole window's."""


def _max(*values: float | None) -> float | None:
    """The largest of the values that are not None (None: all are)."""
    got = [v for v in values if v is not None]
    return max(got) if got else None


def _rise_bounds(series: Sequence[float | None]
                 ) -> tuple[float, float | None, float | None, float | None]:
    """(the last reading; for each of the three spans of BANDS, the largest rise of the
    recent median over the earlier median, None where no split has that many recent
    readings and at least one earlier one).

    Upper bounds over every split of the n readings into m earlier and k recent ones:
    the earlier median is at least the ceil(m/2)-th smallest reading; the recent median
    is itself for k <= 4, else at most the ceil(k/2)-th largest of the last k readings,
    taken for a doubling range of k at once (5-8, 9-16, 17-32...: the largest for the
    shortest k among the last readings of the longest, NEAR or all of them; the earlier
    bound of the longest). ``recent`` counts ticks, not readings: with a tick without a
    reading among the last 4, a span of 3-4 ticks may hold 1-2 readings, and with one
    anywhere a longer span fewer than 5, so the bands take the shorter spans' bounds
    then. The series' last value must be a reading."""
    now = cast("float", series[-1])
    vals = cast("Sequence[float]", series)
    try:
        asc = sorted(vals)
    except TypeError:  # a tick without a reading: left out, as _judge leaves it out
        vals = [x for x in series if x is not None]
        asc = sorted(vals)
    n = len(asc)
    mid = far = None
    # asc[(n - k + 1) // 2 - 1], the ceil((n - k)/2)-th smallest, bounds the earlier
    # median of the n - k readings before the last k; medians as statistics.median's
    short = now - asc[n // 2 - 1] if n > 1 else None
    if n > 2:
        two = (vals[-2] + vals[-1]) / 2 - asc[(n - 1) // 2 - 1]
        short = two if two > short else short  # type: ignore[operator]
    if n > 3:
        mid = sorted(vals[-3:])[1] - asc[n // 2 - 2]
    if n > 4:
        last = sorted(vals[-4:])
        four = (last[1] + last[2]) / 2 - asc[(n - 3) // 2 - 1]
        mid = four if four > mid else mid  # type: ignore[operator]
        lo = 5
        while lo < n:  # k in lo..hi: 5-8, 9-16, 17-32, ...
            hi = 2 * lo - 2 if 2 * lo - 2 < n else n - 1
            top = sorted(vals[-hi:]) if hi <= NEAR and hi < n - 1 else asc
            rise = top[-((lo + 1) // 2)] - asc[(n - hi + 1) // 2 - 1]
            far = rise if far is None or rise > far else far
            lo = hi + 1
    if vals is not series:  # readings missing
        if None in series[-4:]:
            mid = _max(mid, short)
        far = _max(far, mid, short)
    return now, short, mid, far


_SERIES: tuple[tuple[Role, Callable[[NodeTick], float | None]], ...] = (
    ("primary", lowest_rtt), ("replica", lowest_rtt), ("primary", link_rtt))
"""The round trips ``evaluate`` judges: each node's, and the link timed from the primary."""


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position): over the
    primary's and the replica's round trips and the link, rounded up."""

    high_ms: float | None
    """The highest last round trip, ms; None without a reading now."""
    interval_s: float | None
    """The tick's interval, s, which turns ``recent`` into ticks as ``_judge`` does."""
    rise_short_ms: float | None
    """The largest rise bound (``_rise_bounds``) of the first span of BANDS, ms; None
    without one."""
    rise_mid_ms: float | None
    """... of the second span of BANDS."""
    rise_far_ms: float | None
    """... of the third span of BANDS."""


def measure(w: Window) -> Gauges:
    high = short = mid = far = None
    for role, get in _SERIES:
        series = w.series(role, get)
        if series[-1] is None:
            continue  # _judge: nothing
        now, s, m, f = _rise_bounds(series)
        if high is None or now > high:
            high = now
        if s is not None and (short is None or s > short):
            short = s
        if m is not None and (mid is None or m > mid):
            mid = m
        if f is not None and (far is None or f > far):
            far = f
    return Gauges(round_up(high), w.last.interval, round_up(short), round_up(mid),
                  round_up(far))


def quiet(g: Gauges, t: Limits) -> bool:
    """A series is reported when its last round trip is at least ``warning_ms``
    (``critical_ms`` sets the severity alone), or when it rises: its median over
    ``recent`` at least ``rise_min_ms`` above the median before (and ``rise_factor``
    times it, not gauged: quiet only keeps more quiet with it, as does
    ``min_baseline_ticks``). ``recent`` is a number of ticks at the tick's interval, as
    ``_judge`` counts it, which picks the band: its rise bound below ``rise_min_ms`` (or
    None: no such split) is quiet. Quiet too without any reading now (no high); never
    with a NaN limit or an interval not above 0."""
    high, interval = g.high_ms, g.interval_s
    if high is None:
        return True  # no series has a reading now: _judge returns None for each
    if not high < t.warning_ms or interval is None or not interval > 0:
        return False
    try:
        k = span_ticks(t.recent, interval)
    except (OverflowError, ValueError):  # an infinite recent: evaluate raises too
        return False
    rise = (g.rise_short_ms if k <= BANDS[0] else g.rise_mid_ms if k <= BANDS[1]
            else g.rise_far_ms)
    return rise is None or rise < t.rise_min_ms


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
        out.append(Observation.trusted(
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
    return Observation.trusted(
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
              thresholds=Limits, evaluate=evaluate, window=60.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
