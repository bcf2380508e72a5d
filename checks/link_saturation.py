"""Link saturation: a node sends at (nearly) its network link's speed.

Reads, on both nodes, each interface's send rate (``/proc/net/dev`` tx bytes per
second) and its link speed (``/sys/class/net/<if>/speed``), plus the DRBD send rate
(``ns``/``sent`` per second) and replication protocol of each DRBD peer device.
It judges the send direction: that is where replication leaves a node (the primary
replicating, or either node acting as resync source). A receiving side that is full
shows up as the other node's send.

A shaper as the interface's root qdisc (``tbf``'s rate, ``cake``'s bandwidth, read
with ``tc -j qdisc show`` by the host source) is the link's capacity when it is below
the speed: a veth reads 10000 Mbit/s whatever tbf holds it to, and a host that shapes
its own replication link fills it at the shaped rate. Why the qdisc and not a
configured rate or tbf's backlog: the qdisc's rate is the capacity itself, read on the
node, right when it changes (every 5 s), with nothing to configure and nothing to keep
in step; a backlog or drops say a queue formed, not how full the link is, and a rate in
the config goes stale the day someone re-shapes the link. A cap the node cannot see (a
provider's, a switch's policer) is not known here.

An interface whose speed the kernel does not know (virtual NICs, bonds of unknown
members, ``lo``: speed -1 or unreadable) is NOT judged: no finding, since there is
nothing to compare with. The DRBD rate is not judged on its own either (DRBD does
not say which interface it uses); it explains a full link: how much of it is DRBD,
and whether protocol C makes every write wait for it.

Field notes: ``dd`` onto the DRBD disk ran at 12.6 MB/s with the peer connected and
52.8 MB/s without it (dd's SI megabytes; the title says 12 MiB/s, as every replmon view
writes bytes): 12.6 MB/s x 8 = 101 Mbit/s, the whole 100 Mbit/s link. With
protocol C each write completes only when the peer has it, so the link speed caps
the write rate of the database (the notes' TPS also fell from 19.5 to 13.2 with the
peer connected before tuning).

The rate judged is what an interface sent over the last ``AVERAGE_S`` (5 s: bytes over
seconds), not one tick's: a shaped link sends in bursts as its shaper's bucket empties and
fills, and a read over ssh lands early or late, so one tick's rate swings around the
link's (a 128 kbit/s = 16,000 B/s tbf link on the two-host lab read 9.5-22.3 KB/s tick
by tick under load, 100 % on average, and never 3 ticks in a row at 85 %). Over 5 s only
the two ends of the span are uncertain. It is a fixed span, not a threshold, so that the
gate's gauge (which no threshold may change) is the rate ``evaluate`` judges.

Thresholds: ``warning_pct`` (85) and ``critical_pct`` (95) of the link speed;
the 5 s rate must hold ``open_after`` (3 s) before the finding opens: a link that
fills at 1 s opens one ~7 s later (the 5 s rate passes 85 % after ~4.3 s, then holds
3 s), at a 5 s interval after two ticks;
``min_speed_mbps`` (1) ignores nonsense speeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Role,
    Severity,
    Thresholds,
    Window,
    fmt_byte_rate,
    fmt_link_speed,
    numbers,
    round_up,
    source_ok,
)

AVERAGE_S = 5.0
"""Seconds over which an interface's send rate is taken (bytes sent over the seconds of
the ticks in them): the module docstring says why."""


class Limits(Thresholds):
    warning_pct: float = 85.0
    """Percent of the link speed sent per second at which the finding warns."""
    critical_pct: float = 95.0
    """Percent of the link speed at which it is critical."""
    min_speed_mbps: int = 1
    """Link speeds (Mbit/s) below this are treated as unknown."""


def _drbd(node: NodeTick) -> tuple[float, list[str], bool]:
    """(KiB/s DRBD sends in total, peer-device keys sending, any of them protocol C)."""
    if not source_ok(node, "drbd"):
        return 0.0, [], False
    total, keys, sync = 0.0, [], False
    rates = node.rates.drbd.peer_devices
    for r in node.drbd.resources:
        for c in r.connections:
            for p in c.peer_devices:
                key = f"{r.name}/{c.peer}/{p.volume}"
                kib = rates[key].sent_kib_s if key in rates else None
                if kib:
                    total += kib
                    keys.append(key)
                    sync = sync or c.protocol == "C"
    return total, keys, sync


def _mb(bytes_per_s: float) -> str:
    return fmt_byte_rate(bytes_per_s)


def _speed(mbps: float) -> str:
    return fmt_link_speed(mbps)


def _sent(node: NodeTick) -> tuple[float | None, Mapping[str, float]] | None:
    """(seconds since the node's previous reading, None if not known; bytes/s each
    interface but ``lo`` sent in them) on a node whose host source was read."""
    if not source_ok(node, "host"):
        return None
    r = node.rates.host
    return r.dt_s, {nic: n.send_bytes_per_s for nic, n in r.nics.items()
                    if n.send_bytes_per_s is not None and nic != "lo"}


def _mean_send(series: Sequence[tuple[float | None, Mapping[str, float]] | None], nic: str,
               interval: float) -> float | None:
    """Bytes/s ``nic`` sent over the ticks of ``series`` that have its rate: bytes over
    seconds (a reading's own seconds, else the interval)."""
    sent = secs = 0.0
    for s in series:
        if s is not None and nic in s[1]:
            dt = s[0] or interval
            sent += s[1][nic] * dt
            secs += dt
    return sent / secs if secs else None


def _sends(w: Window, role: Role, min_speed: float) -> list[tuple[str, float, float, float]]:
    """(nic, capacity Mbit/s, bytes/s sent over the last ``AVERAGE_S``, percent of the
    capacity) of each interface but ``lo`` whose send rate (at this tick) and capacity
    are known, on a node whose host source was read. The capacity is the speed (at least
    ``min_speed``), or the root shaper's rate when lower or when the speed is unknown
    (``_capacity``)."""
    node = w.node(role)
    if not source_ok(node, "host"):
        return []
    out = []
    series = None
    for nic, r in node.rates.host.nics.items():
        cap = _capacity(r.speed_mbps, r.shaped_kbit, min_speed)
        if cap is None or r.send_bytes_per_s is None or nic == "lo":
            continue
        if series is None:
            series = w.series(role, _sent, w.span(AVERAGE_S))
        send = _mean_send(series, nic, w.last.interval)
        if send is None:
            continue
        out.append((nic, cap, send, send * 8 / (cap * 1e6) * 100.0))
    return out


def _capacity(speed: int | None, shaped_kbit: float | None, min_speed: float
              ) -> float | None:
    """Mbit/s a NIC can send: its speed (if at least ``min_speed``), or its shaper's rate
    when that is lower; None when neither is known."""
    known = speed if speed is not None and speed >= min_speed else None
    if shaped_kbit:
        return min(shaped_kbit / 1000, known) if known is not None else shaped_kbit / 1000
    return known


def _link(cap_mbps: float, shaper: str | None, shaped_kbit: float | None) -> str:
    """The capacity as the title says it: "100 Mbit/s", "128 kbit/s (tbf)"."""
    if shaped_kbit and abs(shaped_kbit / 1000 - cap_mbps) < 1e-9:
        rate = f"{shaped_kbit:g} kbit/s" if shaped_kbit < 1000 else _speed(shaped_kbit / 1000)
        return f"{rate} ({shaper})"
    return _speed(cap_mbps)


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    send_pct: float | None
    """The largest percent of its link speed an interface of either node sends over
    ``AVERAGE_S``, of those of 1 Mbit/s or more, rounded up; None without one."""


def measure(w: Window) -> Gauges:
    top = None
    for role in ("primary", "replica"):
        for _nic, _cap, _send, pct in _sends(w, role, 1):
            if top is None or pct > top:
                top = pct
    return Gauges(round_up(top))


def quiet(g: Gauges, t: Limits) -> bool:
    """No interface sends ``warning_pct`` of its capacity (``critical_pct`` only makes it
    critical). With ``min_speed_mbps`` of 1 or more the interfaces judged are among the
    gauge's (a shaped one is judged at its shaper's rate either way); below 1, slower
    speeds (0 or less: unknown) would be judged too, which the gauge leaves out: never
    quiet then."""
    return t.min_speed_mbps >= 1 and (g.send_pct is None or g.send_pct < t.warning_pct)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        full = [s for s in _sends(w, role, t.min_speed_mbps) if s[3] >= t.warning_pct]
        if not full:
            continue  # the usual tick: no need for the DRBD rates
        node = w.node(role)
        drbd_kib, drbd_keys, sync = _drbd(node)
        for nic, cap, send, pct in sorted(full):
            r = node.rates.host.nics[nic]
            link = _link(cap, r.shaper, r.shaped_kbit)
            shaped = link.endswith(")")
            drbd_bytes = drbd_kib * 1024
            if drbd_bytes >= 0.5 * send:
                cause = (f"DRBD replication sends {_mb(drbd_bytes)} of it "
                         f"({', '.join(drbd_keys)}): the link, not the disk, bounds "
                         f"replication bandwidth")
                cause += ("; with protocol C every write waits until the peer has it, so "
                          "the database's writes are capped at the link speed."
                          if sync else "; an asynchronous peer falls further behind.")
            else:
                cause = ("The link is full: replication (binlog, Redis, DRBD) and client "
                         "traffic queue behind each other; synchronous writes wait for it.")
            if shaped:
                cause += (f" {nic} is shaped: its root qdisc ({r.shaper}) lets "
                          f"{link.split(' (')[0]} through, far below its "
                          f"{_speed(r.speed_mbps) if r.speed_mbps else 'unknown'} speed; "
                          f"what does not fit queues in it, then is dropped.")
            out.append(Observation.trusted(
                key=nic, node=role,
                severity=Severity.CRITICAL if pct >= t.critical_pct else Severity.WARNING,
                title=f"{nic} sends {_mb(send)} = {pct:.0f} % of {link}",
                numbers=numbers(send_bytes_per_s=send, speed_mbps=r.speed_mbps, link_pct=pct,
                                shaped_kbit_s=r.shaped_kbit if shaped else None,
                                drbd_sent_kib_s=drbd_kib if drbd_keys else None,
                                drbd_protocol_c=sync if drbd_keys else None),
                cause=cause,
                next_step=(f"tc -s qdisc show dev {nic} on the {role} (its rate, backlog, "
                           f"drops): lift or raise the shaping if it was not meant for "
                           f"replication. " if shaped else "") + (
                           f"See what fills {nic} (iftop, ss -tin); put replication on a "
                           f"faster or dedicated link (1 Gbit/s or more); keep a DRBD resync "
                           f"to about 30 % of it (resync-rate / c-max-rate) and schedule "
                           f"bulk loads and backups away from peak."),
            ))
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("drbd_congestion", "same", "a full link fills DRBD's send buffer: writes wait for it"),
    Explains("pair_lag", "either",
             "binlog events wait behind the full link: the replica receives late"),
    Explains("mysql_replication", "either",
             "binlog events wait behind the full link: the lag grows"),
    Explains("latency_bound", "either", "a full link queues every packet: round trips grow"),
    Explains("redis_replication", "either", "the replication stream waits behind the full link"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="link_saturation", title="Link saturation", needs=("host", "drbd"),
              thresholds=Limits, evaluate=evaluate, window=AVERAGE_S, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
