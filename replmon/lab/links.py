"""Faults between the two-host lab's nodes (replmon.lab.hosts): its links cut or shaped, a
node frozen. Each is a context manager, as in replmon.lab.faults: entering it makes the
situation, leaving it undoes it and waits until the pair is healthy again (replication
threads running and caught up, the Redis link up), so the lab can be reused.

* ``replication_link_cut``: the replication link down at both ends (``ip link set eth1
  down``); both nodes still answer the monitor on their monitoring links. The replica's
  MySQL IO thread and Redis link notice within NET_TIMEOUT_S (5 s) and keep reconnecting.
* ``replication_link_shaped``: a ``tbf`` qdisc on the primary's end of the replication
  link (what it sends the replica) at a rate below what the write load makes it send:
  the link saturates, the replica falls behind, Redis's backlog fills.
* ``monitor_cut``: one node's monitoring link down (at the node's end; the monitor's end
  loses its carrier): the monitor's connections to the node's servers and sshd time out,
  while replication goes on over the other link. The write load
  comes from the monitor's side too: cutting the primary's link stops the writes.
* ``node_cut_off``: one node's monitoring link and the replication link down at once:
  neither the monitor nor its peer reaches it, as when the host is powered off or its
  switch is gone (its processes keep running, unseen).
* ``node_frozen``: every process in a node's namespace SIGSTOPped (its servers, its sshd
  and the shells it runs for replmon), SIGCONTed on exit.

They need a TwoHostLab (LabError otherwise).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

import redis

from replmon.errors import LabError
from replmon.lab.faults import mysql_healthy, redis_link_up, wait_for
from replmon.lab.netns import MONITOR_DEV, REPLICATION_DEV, Network

SHAPED_KBIT = 128
"""The shaped replication link's rate: about a seventh of what the demo's write load (300
statements/s) makes the primary send the replica (~0.9 Mbit/s measured: MariaDB's row
events and Redis's stream), so the replica falls behind by most of each second (at 512
kbit/s it was 3 s behind after 15 s: pair_lag said nothing)."""


def _net(lab: Any) -> Network:
    net = getattr(lab, "net", None)
    if not isinstance(net, Network):
        raise LabError("this fault is between two hosts: it needs the two-host lab "
                       "(replmon --lab --lab-hosts, replmon.lab.hosts.TwoHostLab)")
    return net


def healed(lab: Any, timeout: float = 30.0) -> None:
    """Both layers replicating again and caught up (MySQL), linked up (Redis)."""
    if lab.has_mysql:
        mysql_healthy(lab)
    redis_link_up(lab, timeout)


@contextlib.contextmanager
def replication_link_cut(lab: Any) -> Iterator[None]:
    """The replication link down at both ends; up again on exit."""
    net = _net(lab)
    net.set_link(lab.primary.net, REPLICATION_DEV, up=False)
    try:
        yield
    finally:
        net.set_link(lab.primary.net, REPLICATION_DEV, up=True)
        healed(lab)


@contextlib.contextmanager
def replication_link_shaped(lab: Any, rate_kbit: int = SHAPED_KBIT) -> Iterator[None]:
    """``tbf`` at ``rate_kbit`` on the MySQL primary's end of the replication link; the
    qdisc removed on exit, once the replica has caught up."""
    net = _net(lab)
    node = lab.mysql_primary
    net.shape(node.net, REPLICATION_DEV, rate_kbit)
    try:
        yield
    finally:
        net.shape(node.net, REPLICATION_DEV, None)
        healed(lab, timeout=60.0)


@contextlib.contextmanager
def monitor_cut(lab: Any, node: Any = None) -> Iterator[None]:
    """``node``'s monitoring link (default: the MySQL replica's) down at its end; up again
    on exit, and its Redis answering the monitor."""
    net = _net(lab)
    node = node if node is not None else lab.mysql_replica
    net.set_link(node.net, MONITOR_DEV, up=False)
    try:
        yield
    finally:
        net.set_link(node.net, MONITOR_DEV, up=True)
        wait_for(lambda: _answers(node), f"{node.hostname} answering the monitor")
        healed(lab)


@contextlib.contextmanager
def node_cut_off(lab: Any, node: Any = None) -> Iterator[None]:
    """``node`` (default: the MySQL replica) reached by no one: its monitoring link and the
    replication link down; both up again on exit, then the pair healed."""
    net = _net(lab)
    node = node if node is not None else lab.mysql_replica
    net.set_link(node.net, MONITOR_DEV, up=False)
    try:
        net.set_link(lab.primary.net, REPLICATION_DEV, up=False)
        try:
            yield
        finally:
            net.set_link(lab.primary.net, REPLICATION_DEV, up=True)
    finally:
        net.set_link(node.net, MONITOR_DEV, up=True)
    wait_for(lambda: _answers(node), f"{node.hostname} answering the monitor")
    healed(lab)


@contextlib.contextmanager
def node_frozen(lab: Any, node: Any = None) -> Iterator[None]:
    """Every process in ``node``'s namespace (default: the MySQL replica's) stopped
    (SIGSTOP); continued (SIGCONT) on exit."""
    net = _net(lab)
    node = node if node is not None else lab.mysql_replica
    net.signal_all(node.net, signal.SIGSTOP)
    try:
        yield
    finally:
        net.signal_all(node.net, signal.SIGCONT)
        healed(lab)


def _answers(node: Any) -> bool:
    try:
        with node.redis() as rc:
            return bool(rc.ping())
    except (redis.exceptions.RedisError, OSError):
        return False
