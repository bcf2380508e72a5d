"""Builds a Collector from a Config. The CLI, the demo and the tests all go
through here, so they sample exactly the same way."""

from __future__ import annotations

from typing import Any

from replmon.collector import Collector, NodeSources
from replmon.config import Config, NodeConfig, Role, mysql_endpoint, redis_endpoint
from replmon.sources.base import Source
from replmon.sources.drbd import DrbdSource
from replmon.sources.host import HostSource
from replmon.sources.mysql import MysqlSource
from replmon.sources.redis_info import RedisSource
from replmon.sources.runner import LocalRunner, Runner
from replmon.sources.ssh import SshDrbdSource, SshHostSource, SshRunner

SSH_OFF_REASON = "host and DRBD metrics of this node are switched off ([node.ssh] mode = off)"


def node_sources(role: Role, node: NodeConfig, timeout: float,
                 peer: tuple[str, int] | None = None) -> NodeSources:
    """``peer``: the other node's server whose TCP connect time this node's host source
    measures each tick (the primary times its replica: the replication link)."""
    sources: dict[str, Source[Any]] = {}
    off: dict[str, str] = {}
    mode = node.ssh.resolved_mode(node.host)
    runner: Runner = LocalRunner()
    host_cls, drbd_cls = HostSource, DrbdSource
    if mode == "ssh":
        runner = SshRunner(
            node.ssh.host or node.host, user=node.ssh.user, port=node.ssh.port,
            options=node.ssh.options, config_file=node.ssh.config_file,
            command_timeout=max(2.0, 2 * timeout),  # a hung drbdsetup frees the channel
        )
        host_cls, drbd_cls = SshHostSource, SshDrbdSource
    if not node.host_metrics.enabled:
        off["host"] = "host metrics switched off in the config"
    elif mode == "off":
        off["host"] = SSH_OFF_REASON
    else:
        sources["host"] = host_cls(runner, timeout=timeout, peer=peer)
    if not node.drbd.enabled:
        off["drbd"] = "DRBD switched off in the config"
    elif mode == "off":
        off["drbd"] = SSH_OFF_REASON
    else:
        sources["drbd"] = drbd_cls(
            runner, proc_path=node.drbd.proc_path, drbdsetup_cmd=tuple(node.drbd.command),
            timeout=timeout,
        )
    if node.mysql.enabled:
        sources["mysql"] = MysqlSource(mysql_endpoint(role, node, timeout), timeout=timeout,
                                       variables_every=node.mysql.variables_every)
    else:
        off["mysql"] = "MySQL switched off in the config"
    if node.redis.enabled:
        sources["redis"] = RedisSource(redis_endpoint(role, node, timeout), timeout=timeout)
    else:
        off["redis"] = "Redis switched off in the config"
    return NodeSources(role=role, name=node.name or node.host, sources=sources, off_reason=off)


def link_peer(config: Config) -> tuple[str, int] | None:
    """What the primary connects to, to time the replication link: the replica's Redis
    port. A TCP connect that sends nothing is harmless there; on MySQL it would count
    as a handshake error toward max_connect_errors and could get the primary's address
    blocked, so a pair without Redis gets no link round trip."""
    if not config.replica.redis.enabled:
        return None
    ep = redis_endpoint("replica", config.replica, config.source_timeout)
    if ep.socket:
        return None
    return (ep.host, ep.port)


def build_collector(config: Config) -> Collector:
    t = config.source_timeout
    return Collector(
        node_sources("primary", config.primary, t, peer=link_peer(config)),
        node_sources("replica", config.replica, t),
        interval=config.interval,
    )
