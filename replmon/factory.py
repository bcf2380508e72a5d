"""Builds a Collector from a Config. The CLI, the demo and the tests all go
through here, so they sample exactly the same way."""

from __future__ import annotations

from typing import Any

from replmon.collector import Collector, NodeSources
from replmon.config import Config, NodeConfig, Role, is_local, mysql_endpoint, redis_endpoint
from replmon.sources.base import Source
from replmon.sources.drbd import DrbdSource
from replmon.sources.host import HostSource
from replmon.sources.mysql import MysqlSource
from replmon.sources.redis_info import RedisSource
from replmon.sources.runner import LocalRunner

REMOTE_HOST_REASON = (
    "host and DRBD metrics of a remote node come over SSH, which this version "
    "does not have yet; run replmon on the node itself to see them"
)


def node_sources(role: Role, node: NodeConfig, timeout: float) -> NodeSources:
    sources: dict[str, Source[Any]] = {}
    off: dict[str, str] = {}
    local = is_local(node.host)
    runner = LocalRunner()
    if not node.host_metrics.enabled:
        off["host"] = "host metrics switched off in the config"
    elif local:
        sources["host"] = HostSource(runner, timeout=timeout)
    else:
        off["host"] = REMOTE_HOST_REASON
    if not node.drbd.enabled:
        off["drbd"] = "DRBD switched off in the config"
    elif local:
        sources["drbd"] = DrbdSource(
            runner, proc_path=node.drbd.proc_path, drbdsetup_cmd=tuple(node.drbd.command),
            timeout=timeout,
        )
    else:
        off["drbd"] = REMOTE_HOST_REASON
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


def build_collector(config: Config) -> Collector:
    t = config.source_timeout
    return Collector(
        node_sources("primary", config.primary, t),
        node_sources("replica", config.replica, t),
        interval=config.interval,
    )
