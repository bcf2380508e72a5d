"""The whole collector on the real lab: every source of both nodes, built the
way the CLI builds it (config -> factory -> collector)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replmon.cli import main
from replmon.collector import Collector
from replmon.config import build_config
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.model.base import SourceState

pytestmark = pytest.mark.live


def lab_settings(lab: Lab, **over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"interval": 0.5}
    for node in (lab.primary, lab.replica):
        data[node.name] = {
            "host": node.host,
            "name": f"lab-{node.name}",
            "mysql": {"port": node.mysql_port, "user": lab.monitor_user,
                      "password": lab.monitor_password},
            "redis": {"port": node.redis_port, "password": lab.redis_password},
        }
    for role, node_over in over.items():
        for kind, values in node_over.items():
            data[role][kind] = {**data[role][kind], **values}
    return data


def collector_for(lab: Lab, **over: Any) -> Collector:
    return build_collector(build_config(lab_settings(lab, **over)))


async def test_every_source_of_both_nodes_samples_ok(lab: Lab) -> None:
    with WriteLoad(lab, rate=300):
        async with collector_for(lab) as c:
            ticks = [t async for t in c.ticks(4)]
    last = ticks[-1]
    for node in last.nodes:
        states = {k: s.state for k, s in node.statuses().items()}
        assert states == {"host": SourceState.OK, "drbd": SourceState.ABSENT,
                          "mysql": SourceState.OK, "redis": SourceState.OK}, node.name
        assert "no DRBD" in (node.drbd.status.error or "")
    p, r = last.primary, last.replica
    assert p.mysql.replication == [] and len(r.mysql.replication) == 1
    assert r.mysql.replication[0].sql_running and r.mysql.replication[0].io_running == "Yes"
    assert p.redis.role == "master" and r.redis.role == "replica"
    # Rates exist from the second tick on and move under the write load.
    assert p.rates.mysql.qps is not None and p.rates.mysql.qps > 50
    assert p.rates.redis.ops_per_s is not None and p.rates.redis.ops_per_s > 50
    assert p.rates.host.cpu_idle_pct is not None
    # The primary times the replication link itself: a TCP connect to the replica's Redis.
    assert p.host.peer == f"127.0.0.1:{lab.replica.redis_port}"
    assert p.host.peer_rtt_ms is not None and 0 < p.host.peer_rtt_ms < 50
    assert r.host.peer is None
    assert ticks[0].primary.rates.mysql.qps is None  # no previous sample yet
    assert [t.seq for t in ticks] == [0, 1, 2, 3] and not any(t.missed for t in ticks)


async def test_closed_port_is_unreachable_and_the_rest_keeps_schedule(lab: Lab) -> None:
    closed = lab.free_port()
    async with collector_for(lab, replica={"mysql": {"port": closed}}) as c:
        ticks = [t async for t in c.ticks(4)]
    for t in ticks:
        st = t.replica.mysql.status
        assert st.state is SourceState.UNREACHABLE
        assert st.error and str(closed) in st.error
        assert t.primary.mysql.status.ok and t.replica.redis.status.ok
    span = ticks[-1].mono - ticks[0].mono
    assert span == pytest.approx(3 * 0.5, abs=0.2)
    assert ticks[-1].replica.mysql.status.since == ticks[0].replica.mysql.status.since


async def test_hung_redis_times_out_without_delaying_the_tick(lab: Lab) -> None:
    async with collector_for(lab) as c:
        await c.sample_once()
        lab.primary.pause_redis()
        try:
            ticks = [t async for t in c.ticks(4)]
        finally:
            lab.primary.resume_redis()
    for t in ticks:
        assert t.primary.redis.status.state is SourceState.TIMEOUT
        assert t.primary.mysql.status.ok
        assert t.duration_ms < 0.5 * 1000  # per-source timeout 0.4 s < interval
    assert ticks[-1].start_lag_ms < 100


def test_cli_sample_json_and_text_never_print_passwords(
    lab: Lab, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLMON_MYSQL_PASSWORD", lab.monitor_password)
    monkeypatch.setenv("REPLMON_REDIS_PASSWORD", lab.redis_password)
    common = [
        "sample", "--primary", "127.0.0.1", "--replica", "127.0.0.1",
        "--primary-mysql", f"{lab.monitor_user}@:{lab.primary.mysql_port}",
        "--replica-mysql", f"{lab.monitor_user}@:{lab.replica.mysql_port}",
        "--primary-redis", f":{lab.primary.redis_port}",
        "--replica-redis", f":{lab.replica.redis_port}",
        "--interval", "0.3", "--count", "3",
    ]
    assert main([*common, "--json"]) == 0
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert len(lines) == 3
    ticks = [json.loads(line) for line in lines]
    assert ticks[-1]["replica"]["mysql"]["status"]["state"] == "ok"
    assert ticks[-1]["replica"]["mysql"]["replication"][0]["io_running"] == "Yes"
    assert main(common) == 0
    text = capsys.readouterr()
    rows = [ln for ln in text.out.splitlines() if ln[:2].isdigit()]
    assert len(rows) == 6  # one per node per tick
    for blob in (out.out, out.err, text.out, text.err):
        assert lab.monitor_password not in blob and lab.redis_password not in blob


def test_cli_wrong_password_reports_auth_without_echoing_it(
    lab: Lab, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "wrong-" + lab.monitor_password[::-1]
    monkeypatch.setenv("REPLMON_MYSQL_PASSWORD", wrong)
    monkeypatch.delenv("REPLMON_REDIS_PASSWORD", raising=False)
    assert main([
        "sample", "--primary", "127.0.0.1", "--replica", "127.0.0.1",
        "--primary-mysql", f"{lab.monitor_user}@:{lab.primary.mysql_port}",
        "--replica-mysql", "off", "--primary-redis", "off", "--replica-redis", "off",
        "--interval", "0.3", "--count", "1", "--json",
    ]) == 0
    out = capsys.readouterr()
    tick = json.loads(out.out)
    assert tick["primary"]["mysql"]["status"]["state"] == "auth"
    assert wrong not in out.out and wrong not in out.err
