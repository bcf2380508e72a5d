"""A node that cannot be reached, on real failures: a name that does not resolve (a
``.invalid`` name fails in this machine's resolver), a closed loopback port (refused),
and a live lab node for the healthy side. One cause is one finding, with the advice of
its class, and the node's panel says it in a line per source (issue #54)."""

from __future__ import annotations

import json

import pytest

from replmon.cli import main
from replmon.endpoints import MysqlEndpoint, RedisEndpoint
from replmon.lab import Lab
from replmon.model.base import SourceStatus
from replmon.model.failures import Failure, failure
from replmon.sources.mysql import MysqlSource
from replmon.sources.redis_info import RedisSource
from replmon.sources.ssh import SshHostSource, SshRunner
from replmon.tui import render

pytestmark = pytest.mark.live

NOWHERE = "nosuchhost.invalid"


async def _statuses(host: str, mysql_port: int, redis_port: int, ssh_port: int
                    ) -> dict[str, SourceStatus]:
    """One sample of each kind of source of a node at ``host``: its real failure."""
    out: dict[str, SourceStatus] = {}
    async with MysqlSource(MysqlEndpoint(host=host, port=mysql_port, user="replmon",
                                         connect_timeout=2), timeout=5) as m:
        out["mysql"] = (await m.sample()).status
    async with RedisSource(RedisEndpoint(host=host, port=redis_port, connect_timeout=2),
                           timeout=5) as r:
        out["redis"] = (await r.sample()).status
    runner = SshRunner(host, port=ssh_port, options=("ConnectTimeout=2",))
    async with SshHostSource(runner, timeout=5) as h:
        out["host"] = (await h.sample()).status
    return out


async def test_each_source_names_the_class_of_its_failure_and_its_advice() -> None:
    closed = Lab.free_port()
    unresolved = await _statuses(NOWHERE, closed, closed, closed)
    refused = await _statuses("127.0.0.1", closed, closed, closed)
    for kind, st in unresolved.items():
        assert failure(st) is Failure.DNS, (kind, st)
        assert st.hint is not None and f"the name {NOWHERE} does not resolve" in st.hint, st
        assert "bind-address" not in st.hint and "firewall" not in st.hint, st
        # the panel: the state and one short line, not the resolver's text and a hint
        lines = render.status_text(kind, st, st.since).plain.splitlines()
        assert lines[1].strip() == f"unknown name {NOWHERE}", lines
        assert len(lines) == 2, lines
    for kind, st in refused.items():
        assert failure(st) is Failure.REFUSED, (kind, st)
        assert st.hint is not None and "nothing listens on that port" in st.hint, st
        assert "bind-address" in st.hint and "does not resolve" not in st.hint, st
        lines = render.status_text(kind, st, st.since).plain.splitlines()
        assert len(lines) == 2 and "connection refused" in lines[1], lines


def _check(lab: Lab, capsys: pytest.CaptureFixture[str], primary: str, mysql_port: int,
           redis_port: int) -> dict[str, object]:
    code = main([
        "check", "--format", "json", "--primary", primary, "--replica", "127.0.0.1",
        "--primary-mysql", f"{lab.monitor_user}@:{mysql_port}",
        "--replica-mysql", f"{lab.monitor_user}@:{lab.replica.mysql_port}",
        "--primary-redis", f":{redis_port}", "--replica-redis", f":{lab.replica.redis_port}",
        "--interval", "0.3", "--duration", "1.5s",
    ])
    d: dict[str, object] = json.loads(capsys.readouterr().out)
    assert code == 2 and d["status"] == "CRITICAL", d
    assert lab.monitor_password not in json.dumps(d) and lab.redis_password not in json.dumps(d)
    return d


def test_a_name_that_does_not_resolve_is_one_finding_for_the_node(
    lab: Lab, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REPLMON_MYSQL_PASSWORD", lab.monitor_password)
    monkeypatch.setenv("REPLMON_REDIS_PASSWORD", lab.redis_password)
    closed = lab.free_port()  # (never tried: the name does not resolve)
    d = _check(lab, capsys, NOWHERE, closed, closed)
    found = [f for f in d["open"] if f["check"] == "source_health"]  # type: ignore[attr-defined]
    (f,) = found  # one typo, one finding: not one per source
    assert (f["node"], f["key"], f["severity"]) == ("primary", "dns", "critical"), f
    assert f["title"] == (f"name {NOWHERE} does not resolve (host metrics, DRBD, MySQL, "
                          "Redis not sampled)"), f
    assert "/etc/hosts" in f["next_step"] and f"getent hosts {NOWHERE}" in f["next_step"]
    words = json.dumps(d["open"])
    assert "bind-address" not in words and "firewall" not in words, words
    # the healthy side is still read and judged: no finding says its sources fail
    assert not [g for g in d["open"]  # type: ignore[attr-defined]
                if g["check"] == "source_health" and g["node"] == "replica"]

