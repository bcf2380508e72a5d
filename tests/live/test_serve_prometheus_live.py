"""``replmon serve`` under a real Prometheus: the lab pair and a pair whose replica is
unreachable, scraped every second with the shipped rules loaded. Two faults are
induced on the lab (a stopped SQL thread; seed 004's auto_increment_increment=2 under
random-id UPDATEs) and the alerts are read back through Prometheus's HTTP API: firing
while the fault lasts, gone (resolved) after it is undone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from httpwait import get, stop, wait_for

from replmon.fleet.rules import RULES
from replmon.lab import Lab
from replmon.lab.faults import stop_thread
from replmon.lab.load import WriteLoad
from replmon.lab.switch import switched
from replmon.testing.scenarios.mysql_rows import AUTO_INC_TABLE, auto_increment_2

pytestmark = pytest.mark.live


class Stack:
    def __init__(self, lab: Lab, tmp: Path) -> None:
        self.lab = lab
        self.tmp = tmp
        self.logs: list[IO[bytes]] = []
        self.serve_port = lab.free_port()
        self.prom_port = lab.free_port()
        s = lab.settings()
        p, r = s["primary"], s["replica"]
        closed = lab.free_port()
        (tmp / "fleet.toml").write_text(f"""
interval = "1s"
metrics = {{ opt_in = ["mysql_commands"] }}  # the statement rates below (docs/metrics.md)
[defaults]
mysql = {{ user = "{lab.monitor_user}", password_env = "LAB_MYSQL_PW" }}
redis = {{ password_env = "LAB_REDIS_PW" }}
[[pair]]
name = "lab"
[pair.primary]
host = "127.0.0.1"
name = "lab-primary"
mysql = {{ port = {p["mysql"]["port"]} }}
redis = {{ port = {p["redis"]["port"]} }}
[pair.replica]
host = "127.0.0.1"
name = "lab-replica"
mysql = {{ port = {r["mysql"]["port"]} }}
redis = {{ port = {r["redis"]["port"]} }}
[[pair]]
name = "broken"
primary = {{ host = "127.0.0.1", mysql = {{ port = {p["mysql"]["port"]} }} }}
replica = {{ host = "127.0.0.1", mysql = {{ port = {closed} }}, redis = {{ port = {closed} }} }}
""")
        (tmp / "rules.yml").write_text(RULES)
        (tmp / "prometheus.yml").write_text(json.dumps({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": ["rules.yml"],
            "scrape_configs": [{"job_name": "replmon", "static_configs": [
                {"targets": [f"127.0.0.1:{self.serve_port}"]}]}]}))
        env = dict(os.environ, LAB_MYSQL_PW=lab.monitor_password,
                   LAB_REDIS_PW=lab.redis_password)
        self.serve = subprocess.Popen(
            [sys.executable, "-m", "replmon", "serve", "--config", str(tmp / "fleet.toml"),
             "--listen", f"127.0.0.1:{self.serve_port}"],
            env=env, stdout=subprocess.DEVNULL, stderr=self._log("serve.log"))
        prometheus = shutil.which("prometheus")
        assert prometheus, "prometheus missing: .ci/setup installs Debian's package"
        self.prom = subprocess.Popen(
            [prometheus, f"--config.file={tmp / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.prom_port}"],
            cwd=tmp, stdout=subprocess.DEVNULL, stderr=self._log("prometheus.log"))

    def _log(self, name: str) -> IO[bytes]:
        f = open(self.tmp / name, "wb")  # noqa: SIM115 - closed in close()
        self.logs.append(f)
        return f

    def query(self, expr: str) -> list[dict[str, Any]]:
        q = urllib.parse.urlencode({"query": expr})
        doc = json.loads(get(f"http://127.0.0.1:{self.prom_port}/api/v1/query?{q}"))
        assert doc["status"] == "success", doc
        return list(doc["data"]["result"])

    def alerts(self, name: str, **labels: str) -> list[dict[str, Any]]:
        doc = json.loads(get(f"http://127.0.0.1:{self.prom_port}/api/v1/alerts"))
        return [a for a in doc["data"]["alerts"] if a["labels"]["alertname"] == name
                and all(a["labels"].get(k) == v for k, v in labels.items())]

    def close(self) -> None:
        stop((self.serve, self.prom))
        for f in self.logs:
            f.close()


@pytest.fixture
def stack(lab: Lab, tmp_path: Path) -> Iterator[Stack]:
    s = Stack(lab, tmp_path)
    try:
        wait_for("prometheus ready", lambda: get(
            f"http://127.0.0.1:{s.prom_port}/-/ready"), timeout=30)
        yield s
    finally:
        s.close()
    assert s.serve.returncode == 0, (tmp_path / "serve.log").read_text()


def firing(s: Stack, name: str, **labels: str) -> Callable[[], list[dict[str, Any]]]:
    return lambda: [a for a in s.alerts(name, **labels) if a["state"] == "firing"]


def test_prometheus_scrapes_serve_and_the_alerts_fire_and_resolve(
    stack: Stack, lab: Lab,
) -> None:
    s = stack
    up = wait_for("the lab pair's series in Prometheus", lambda: s.query(
        'replmon_source_up{pair="lab",source="mysql"}'))
    assert {(x["metric"]["node"], x["value"][1]) for x in up} == {("primary", "1"),
                                                                   ("replica", "1")}
    assert s.query('up{job="replmon"}')[0]["value"][1] == "1"
    # #40: each node's role as the servers say it, by name; the lab's layers agree
    roles = s.query('replmon_node_role_info{pair="lab"}')
    assert {(x["metric"]["host"], x["metric"]["role"], x["metric"]["given_role"])
            for x in roles} == {("lab-primary", "primary", "primary"),
                                ("lab-replica", "replica", "replica")}
    assert s.query('replmon_pair_role_layers_at_odds{pair="lab"}')[0]["value"][1] == "0"
    assert not s.query('replmon_pair_role_change_timestamp_seconds{pair="lab"}')
    # the pair pointed at nothing: its replica's sources are down, the lab's are not delayed
    down = wait_for("the broken pair's replica down", lambda: s.query(
        'replmon_source_up{pair="broken",node="replica"} == 0'))
    assert {x["metric"]["source"] for x in down} == {"mysql", "redis"}
    state = s.query('replmon_source_state{pair="broken",node="replica",source="mysql"}')
    assert state[0]["metric"]["state"] == "unreachable"
    wait_for("the broken pair's critical alert", firing(
        s, "ReplmonFindingCritical", pair="broken", check="mysql_replication"))
    assert not s.alerts("ReplmonFindingCritical", pair="lab")
    assert not s.alerts("ReplmonSwitchover") and not s.alerts("ReplmonSwitchoverHalfDone")
    late = s.query('replmon_ticks_late_total{pair="lab"}')
    ticks = s.query('replmon_ticks_total{pair="lab"}')
    assert float(late[0]["value"][1]) <= 0.1 * float(ticks[0]["value"][1])
    # the live page passes promtool's lint
    page = get(f"http://127.0.0.1:{s.serve_port}/metrics")
    lint = subprocess.run(["promtool", "check", "metrics"], input=page, capture_output=True,
                          timeout=30)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert lab.monitor_password.encode() not in page
    assert lab.monitor_password.encode() not in get(
        f"http://127.0.0.1:{s.serve_port}/findings.json")

    # fault 1: the replica's SQL thread stopped
    with stop_thread(lab, "SQL_THREAD"):
        (a,) = wait_for("ReplmonFindingCritical for the stopped SQL thread", firing(
            s, "ReplmonFindingCritical", pair="lab", check="mysql_replication"))
        assert a["labels"]["node"] == "replica"
        assert "findings.json" in a["annotations"]["description"]
        doc = json.loads(get(f"http://127.0.0.1:{s.serve_port}/findings.json"))
        titles = [f["title"] for f in doc["pairs"]["lab"]["findings"]]
        assert any(t.startswith("SQL thread stopped") for t in titles), titles
    wait_for("the SQL-thread alert resolved", lambda: not s.alerts(
        "ReplmonFindingCritical", pair="lab", check="mysql_replication"))

    # fault 2: seed 004, half of the UPDATEs change no row
    with auto_increment_2(lab), WriteLoad(lab, rate=400, rows=500, table=AUTO_INC_TABLE,
                                          id_max=1000, redis=False):
        (a,) = wait_for("ReplmonFindingWarning for stmt_vs_rows", firing(
            s, "ReplmonFindingWarning", pair="lab", check="stmt_vs_rows"))
        assert a["labels"]["node"] == "primary"
        rates = wait_for("UPDATE vs rows updated rates", lambda: s.query(
            'rate(replmon_mysql_global_status_commands_total{pair="lab",node="primary",'
            'command="update"}[5s])'))
        assert float(rates[0]["value"][1]) > 50
    wait_for("the stmt_vs_rows alert resolved", lambda: not s.alerts(
        "ReplmonFindingWarning", pair="lab", check="stmt_vs_rows"))

    # #40: a planned switchover of MySQL and Redis: one info alert naming the new primary
    with switched(lab, ("mysql", "redis")):
        (a,) = wait_for("ReplmonSwitchover naming lab-replica", firing(
            s, "ReplmonSwitchover", pair="lab", primary="lab-replica"))
        assert a["labels"]["severity"] == "info"
        assert a["annotations"]["summary"] == "lab: lab-replica is now the primary"
        primary = s.query('replmon_node_role_info{pair="lab",role="primary"}')
        assert [(x["metric"]["host"], x["metric"]["given_role"]) for x in primary] == [
            ("lab-replica", "replica")]
        assert not [x for x in s.alerts("ReplmonFindingInfo", pair="lab")
                    if x["labels"]["check"] == "roles"]
