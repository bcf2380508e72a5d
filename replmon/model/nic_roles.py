"""Which of a node's NICs carries replication, and which the monitor's traffic: the
ones its routes send the replication source's address and the monitor's address
through (``NicCounters.routes``, /proc/net/route).

The replication source's address is the one the replica was told to replicate from:
MySQL's channel ``source_host`` (Master_Host), else Redis's ``master_host``, when it is
an IPv4 address (a name is not resolved here: the node may resolve it otherwise). On
the replica the route to it is the way replication comes in; on the primary it is its
own address, and the route that holds it (its subnet, on the NIC that has it) is the
way replication goes out. Longest prefix wins, as in the kernel's lookup; the default
route counts (replication through a gateway goes out of the default route's NIC). A
loopback source (both nodes on one host) names no NIC: its traffic is on ``lo``, which
/proc/net/route does not list.

The monitor's address is the one the node sees replmon's ssh connection come from
(``HostSample.monitor_addr``): a node read on this machine has none.
"""

from __future__ import annotations

import ipaddress

from replmon.model.host import HostSample
from replmon.model.tick import NodeTick, Tick


def _ipv4(host: str | None) -> ipaddress.IPv4Address | None:
    try:
        addr = ipaddress.ip_address((host or "").strip())
    except ValueError:
        return None
    if not isinstance(addr, ipaddress.IPv4Address) or addr.is_loopback:
        return None
    return addr


def replication_source(tick: Tick) -> ipaddress.IPv4Address | None:
    """The address replication is read from: a MySQL channel's source_host, else a Redis
    replica's master_host, of either node; None when neither is an IPv4 address."""
    nodes: tuple[NodeTick, ...] = tick.nodes
    for n in nodes:
        for ch in n.mysql.replication:
            if (addr := _ipv4(ch.source_host)) is not None:
                return addr
    for n in nodes:
        if n.redis.role == "replica" and (addr := _ipv4(n.redis.master_host)) is not None:
            return addr
    return None


def route_nic(host: HostSample, addr: ipaddress.IPv4Address) -> str | None:
    """The NIC of ``host`` whose route to ``addr`` has the longest prefix; None when no
    route of a NIC other than lo holds it."""
    best: tuple[int, str] | None = None
    for name, nic in host.nics.items():
        if name == "lo":
            continue
        for cidr in nic.routes:
            try:
                net = ipaddress.IPv4Network(cidr, strict=False)
            except ValueError:
                continue
            if addr in net and (best is None or net.prefixlen > best[0]):
                best = (net.prefixlen, name)
    return None if best is None else best[1]


def replication_nics(tick: Tick) -> dict[str, str]:
    """Node name -> the NIC that carries its replication, for each node where it is
    known (``route_nic`` of ``replication_source``)."""
    addr = replication_source(tick)
    if addr is None:
        return {}
    out = {}
    for n in tick.nodes:
        if n.host.status.ok and (nic := route_nic(n.host, addr)) is not None:
            out[n.name] = nic
    return out


def monitor_nic(host: HostSample) -> str | None:
    """The NIC of ``host`` that routes to the monitor (``HostSample.monitor_addr``)."""
    addr = _ipv4(host.monitor_addr)
    return None if addr is None or not host.status.ok else route_nic(host, addr)


def nic_roles(tick: Tick, node: NodeTick) -> dict[str, str]:
    """``node``'s NICs of known role, "repl" and "mon" -> NIC name (the replication NIC
    alone when both routes go through one NIC)."""
    out = {}
    if (repl := replication_nics(tick).get(node.name)) is not None:
        out["repl"] = repl
    if (mon := monitor_nic(node.host)) is not None and mon != repl:
        out["mon"] = mon
    return out
