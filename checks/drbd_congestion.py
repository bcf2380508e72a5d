"""DRBD congestion: replication suspended while the link says connected.

Reads each node's DRBD connections and peer devices. With ``on-congestion
pull-ahead`` DRBD stops replicating when the send buffer or the activity log fills:
the primary goes **Ahead** (it only marks blocks out of sync) and the peer **Behind**;
the connection still reads Connected, so a check of the connection state alone sees a
healthy pair while nothing is replicated. It resyncs when the congestion clears.
Congestion itself shows as the 8.x I/O flag ``n`` (network) or ``a`` (network and
backing device) in the fifth position (``r---n-``), and as ``congested: true`` in DRBD
9's ``drbdsetup status --json``.

- **Ahead/Behind** (key "<resource>/<peer>"): warning with the out-of-sync KiB and
  how fast they grow; critical once it has lasted ``suspended_critical_s`` (60 s): a
  failover now loses every write since it began.
- **Congested** for ``congested_for`` (5 s) tick after tick with out-of-sync growing:
  warning, the link or the peer's disk cannot keep up and DRBD is about to pull ahead
  (or, without pull-ahead, writers block).

What to do: the link's throughput against the write rate (link_saturation), the
peer's disk latency; ``drbdadm status`` shows the states; raising ``sndbuf-size`` /
``max-buffers`` or the congestion fill/extents helps short bursts, not a link that is
too slow for the writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from replmon.check import (
    Check,
    DrbdConnection,
    DrbdPeerDevice,
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
    fmt_bytes,
    numbers,
    round_up,
    source_ok,
)

SUSPENDED = ("Ahead", "Behind")


class Limits(Thresholds):
    suspended_critical_s: float = 60.0
    """Seconds Ahead/Behind after which it is critical."""
    congested_for: Seconds = 5.0
    """Seconds (s) a connection must stay congested, with out-of-sync growing, to count."""


def _peers(node: NodeTick) -> Iterator[tuple[str, DrbdConnection, DrbdPeerDevice]]:
    for r in node.drbd.resources:
        for c in r.connections:
            for pd in c.peer_devices:
                yield f"{r.name}/{c.peer}", c, pd


def _states(node: NodeTick) -> dict[str, tuple[str | None, bool | None, int | None]] | None:
    """key -> (replication state, congested, out-of-sync KiB) for every peer device."""
    if not source_ok(node, "drbd"):
        return None
    out: dict[str, tuple[str | None, bool | None, int | None]] = {}
    for key, c, pd in _peers(node):
        state, congested, oos = out.get(key, (None, None, 0))
        out[key] = (pd.replication_state if pd.replication_state in SUSPENDED else state,
                    bool(congested) or bool(c.congested),
                    (oos or 0) + (pd.out_of_sync_kib or 0))
    return out


def _run(w: Window, role: Role, key: str, holds: int) -> tuple[float, int | None, int | None]:
    """(seconds the condition ``holds`` (0: suspended, 1: congested) has held without a
    break, out-of-sync KiB at its start and now)."""
    series = w.series(role, _states)
    i = len(series)
    while i > 0:
        s = series[i - 1]
        if s is None or key not in s or not s[key][holds]:
            break
        i -= 1
    if i == len(series):
        return 0.0, None, None
    first, last = series[i], series[-1]
    if first is None or last is None:  # cannot be: the loop stopped on a reading
        return 0.0, None, None
    return w.last.wall - w.ticks[i].wall, first[key][2], last[key][2]


def _growth(secs: float, start: int | None, now: int | None) -> float | None:
    if start is None or now is None or secs <= 0:
        return None
    return (now - start) / secs


def _kib(kib: float | None, per: str = "") -> str:
    """DRBD's KiB (or KiB/s with ``per``) as every view writes sizes: 5120 -> "5 MiB"."""
    return fmt_bytes(None if kib is None else kib * 1024, per=per)


def _flagged(node: NodeTick) -> bool:
    """Any connection congested or any peer device Ahead/Behind (the usual tick: no)."""
    if not source_ok(node, "drbd"):
        return False
    for r in node.drbd.resources:  # plain loops: generators cost more than the scan here
        for c in r.connections:
            if c.congested:
                return True
            for pd in c.peer_devices:
                if pd.replication_state in SUSPENDED:
                    return True
    return False


def _held(w: Window, role: Role) -> Iterator[tuple[str, str | None, int | None, float,
                                                   float | None]]:
    """(key, Ahead/Behind or None when only congested, out-of-sync KiB, seconds the
    condition has held, out-of-sync growth KiB/s) for each of ``role``'s peer devices
    suspended or congested at the last tick: all of it threshold-free, shared by
    ``gauges`` and ``evaluate``."""
    if not _flagged(w.node(role)):
        return
    now = w.series(role, _states)[-1]
    if not now:
        return
    for key, (state, congested, oos) in now.items():
        if state is None and not congested:
            continue
        secs, start, end = _run(w, role, key, 0 if state is not None else 1)
        yield key, state, oos, secs, _growth(secs, start, end)


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    suspended: float
    """1 when a peer device of either node is Ahead/Behind, else 0."""
    congested_s: float | None
    """The longest time a connection has been congested with out-of-sync growing, s,
    rounded up; None without one."""


def measure(w: Window) -> Gauges:
    suspended, congested = 0.0, None
    for role in ("primary", "replica"):
        for _key, state, _oos, secs, growth in _held(w, role):
            if state is not None:
                suspended = 1.0
            elif growth and growth > 0 and (congested is None or secs > congested):
                congested = secs
    return Gauges(suspended, round_up(congested))


def quiet(g: Gauges, t: Limits) -> bool:
    """Ahead/Behind is reported whatever the thresholds (``suspended_critical_s`` only
    makes it critical), so never quiet then; congestion only once it has held
    ``congested_for`` with out-of-sync growing, so when the longest such hold (rounded
    up) is below it, or there is none, nothing is. Any ``congested_for``: a hold with
    a growth is over 0 s (``_growth``), never below a limit of 0 or less."""
    return g.suspended == 0 and (g.congested_s is None or g.congested_s < t.congested_for)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        for key, state, oos, secs, growth in _held(w, role):
            if state is not None:
                out.append(Observation.trusted(
                    key=key, node=role,
                    severity=(Severity.CRITICAL if secs >= t.suspended_critical_s
                              else Severity.WARNING),
                    title=(f"DRBD {key} {state}: replication suspended for {fmt(secs)} s "
                           f"while connected, out-of-sync {_kib(oos)}"
                           + (f" (+{_kib(growth, '/s')})" if growth else "")),
                    numbers=numbers(state=state, suspended_s=secs, out_of_sync_kib=oos,
                                    out_of_sync_growth_kib_s=growth),
                    cause=("on-congestion pull-ahead: the send buffer or activity log filled, "
                           "so the primary only marks writes out of sync instead of "
                           "replicating them; the peer is not current until the resync "
                           "after the congestion"),
                    next_step=("Compare the write rate with the replication link (the "
                               "link_saturation check) and the peer's disk latency; a "
                               "failover now loses the out-of-sync blocks"),
                ))
            else:
                if secs < t.congested_for or not growth or growth <= 0:
                    continue
                out.append(Observation.trusted(
                    key=key, node=role, severity=Severity.WARNING,
                    title=(f"DRBD {key} congested for {fmt(secs)} s, out-of-sync growing "
                           f"{_kib(growth, '/s')} to {_kib(oos)}"),
                    numbers=numbers(congested_s=secs, out_of_sync_kib=oos,
                                    out_of_sync_growth_kib_s=growth),
                    cause=("the network (or the peer's backing device) cannot take the "
                           "writes as fast as they come: DRBD is about to pull ahead, or "
                           "blocks the writers"),
                    next_step="Check the link's throughput and the peer's disk; drbdadm status",
                ))
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("throughput_collapse", "either", "writes wait for DRBD's congested send buffer"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="drbd_congestion", title="DRBD congestion", needs=("drbd",),
              thresholds=Limits, evaluate=evaluate, window=300.0, explains=EXPLAINS,
              reads=("drbd",), gate=Gate(measure, quiet, gauges=Gauges), service="drbd")
