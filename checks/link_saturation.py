"""Link saturation: a node sends at (nearly) its network link's speed.

Reads, on both nodes, each interface's send rate (``/proc/net/dev`` tx bytes per
second) and its link speed (``/sys/class/net/<if>/speed``), plus the DRBD send rate
(``ns``/``sent`` per second) and replication protocol of each DRBD peer device.
It judges the send direction: that is where replication leaves a node (the primary
replicating, or either node acting as resync source). A receiving side that is full
shows up as the other node's send.

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

Thresholds: ``warning_pct`` (85) and ``critical_pct`` (95) of the link speed;
the rate must hold ``open_after`` (3 s) before the finding opens;
``min_speed_mbps`` (1) ignores nonsense speeds.
"""

from __future__ import annotations

from typing import NamedTuple

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Severity,
    Thresholds,
    Window,
    fmt_byte_rate,
    fmt_link_speed,
    numbers,
    round_up,
    source_ok,
)


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


def _speed(mbps: int) -> str:
    return fmt_link_speed(mbps)


def _sends(node: NodeTick, min_speed: float) -> list[tuple[str, int, float, float]]:
    """(nic, speed Mbit/s, bytes/s sent, percent of the speed) of each interface but
    ``lo`` whose send rate and speed, at least ``min_speed``, are known, on a node whose
    host source was read."""
    if not source_ok(node, "host"):
        return []
    out = []
    for nic, r in node.rates.host.nics.items():
        speed, send = r.speed_mbps, r.send_bytes_per_s
        if speed is None or speed < min_speed or send is None or nic == "lo":
            continue
        out.append((nic, speed, send, send * 8 / (speed * 1e6) * 100.0))
    return out


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    send_pct: float | None
    """The largest percent of its link speed an interface of either node sends, of
    those of 1 Mbit/s or more, rounded up; None without one."""


def measure(w: Window) -> Gauges:
    top = None
    for role in ("primary", "replica"):
        for _nic, _speed, _send, pct in _sends(w.node(role), 1):
            if top is None or pct > top:
                top = pct
    return Gauges(round_up(top))


def quiet(g: Gauges, t: Limits) -> bool:
    """No interface sends ``warning_pct`` of its speed (``critical_pct`` only makes it
    critical). With ``min_speed_mbps`` of 1 or more the interfaces judged are among the
    gauge's; below 1, slower ones (0 or less: unknown) would be judged too, which the
    gauge leaves out: never quiet then."""
    return t.min_speed_mbps >= 1 and (g.send_pct is None or g.send_pct < t.warning_pct)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        node = w.node(role)
        full = [s for s in _sends(node, t.min_speed_mbps) if s[3] >= t.warning_pct]
        if not full:
            continue  # the usual tick: no need for the DRBD rates
        drbd_kib, drbd_keys, sync = _drbd(node)
        for nic, speed, send, pct in sorted(full):
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
            out.append(Observation(
                key=nic, node=role,
                severity=Severity.CRITICAL if pct >= t.critical_pct else Severity.WARNING,
                title=f"{nic} sends {_mb(send)} = {pct:.0f} % of {_speed(speed)}",
                numbers=numbers(send_bytes_per_s=send, speed_mbps=speed, link_pct=pct,
                                drbd_sent_kib_s=drbd_kib if drbd_keys else None,
                                drbd_protocol_c=sync if drbd_keys else None),
                cause=cause,
                next_step=(f"See what fills {nic} (iftop, ss -tin); put replication on a "
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
              thresholds=Limits, evaluate=evaluate, window=1.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
