"""Builds a Collector from a pair's resolved endpoints (``replmon.resolve``). The CLI, the
demo and the tests all go through here, so they sample exactly the same way. Nothing
here reads the config, the environment or ~/.my.cnf: that happened once, in resolve."""

from __future__ import annotations

from typing import Any

from replmon.collector import Collector, NodeSources
from replmon.config import Config
from replmon.resolve import NodeEndpoints, PairEndpoints, resolve
from replmon.sources.base import Source
from replmon.sources.drbd import DrbdSource
from replmon.sources.host import HostSource
from replmon.sources.mysql import MysqlSource
from replmon.sources.redis_info import RedisSource
from replmon.sources.runner import LocalRunner, Runner
from replmon.sources.sentinel import SentinelSource
from replmon.sources.ssh import SshDrbdSource, SshHostSource, SshRunner

SSH_OFF_REASON = "host and DRBD metrics of this node are switched off ([node.ssh] mode = off)"


def node_sources(node: NodeEndpoints, timeout: float,
                 peer: tuple[str, int] | None = None, *,
                 mysql_on_loop: bool = False) -> NodeSources:
    """``peer``: the other node's server whose TCP connect time this node's host source
    measures each tick (the primary times its replica: the replication link).
    ``mysql_on_loop``: the MySQL source samples on the event loop in a greenlet, not in
    a worker thread (serve's many pairs: ``MysqlSource``'s ``on_loop``)."""
    sources: dict[str, Source[Any]] = {}
    off: dict[str, str] = {}
    runner: Runner = LocalRunner()
    host_cls, drbd_cls = HostSource, DrbdSource
    if node.ssh is not None:
        runner = SshRunner(
            node.ssh.host, user=node.ssh.user, port=node.ssh.port,
            options=list(node.ssh.options), config_file=node.ssh.config_file,
            command_timeout=max(2.0, 2 * timeout),  # a hung drbdsetup frees the channel
        )
        host_cls, drbd_cls = SshHostSource, SshDrbdSource
    if not node.host_metrics:
        off["host"] = "host metrics switched off in the config"
    elif node.access == "off":
        off["host"] = SSH_OFF_REASON
    else:
        sources["host"] = host_cls(runner, timeout=timeout, peer=peer)
    if node.drbd is None:
        off["drbd"] = "DRBD switched off in the config"
    elif node.access == "off":
        off["drbd"] = SSH_OFF_REASON
    else:
        sources["drbd"] = drbd_cls(
            runner, proc_path=node.drbd.proc_path, drbdsetup_cmd=tuple(node.drbd.command),
            timeout=timeout,
        )
    if node.mysql is not None:
        sources["mysql"] = MysqlSource(node.mysql, timeout=timeout,
                                       variables_every=node.mysql_variables_every,
                                       positions_every=node.mysql_positions_every,
                                       heartbeat_table=node.mysql_heartbeat_table,
                                       on_loop=mysql_on_loop)
    else:
        off["mysql"] = "MySQL switched off in the config"
    if node.redis is not None:
        sources["redis"] = RedisSource(node.redis, timeout=timeout)
    else:
        off["redis"] = "Redis switched off in the config"
    return NodeSources(role=node.role, name=node.name, sources=sources, off_reason=off)


def build_collector(pair: PairEndpoints | Config, *, mysql_on_loop: bool = False
                    ) -> Collector:
    """A collector for a resolved pair (a Config is resolved first, once);
    ``mysql_on_loop`` as ``node_sources``'."""
    if isinstance(pair, Config):
        pair = resolve(pair)
    return Collector(
        node_sources(pair.primary, pair.timeout, peer=pair.link_peer,
                     mysql_on_loop=mysql_on_loop),
        node_sources(pair.replica, pair.timeout, mysql_on_loop=mysql_on_loop),
        interval=pair.interval,
        sentinel=sentinel_source(pair),
        together=pair.together,
    )


def sentinel_source(pair: PairEndpoints) -> SentinelSource | None:
    """The pair's Sentinel source, knowing the pair's Redis servers by address."""
    if pair.sentinel is None:
        return None
    nodes = {(n.redis.host, n.redis.port): n.name for n in pair.nodes
             if n.redis is not None and not n.redis.socket}
    given = {(n.redis.host, n.redis.port): n.role for n in pair.nodes
             if n.redis is not None and not n.redis.socket}
    return SentinelSource(pair.sentinel, nodes, given=given, timeout=pair.timeout)
