"""``replmon serve --shard 1/2`` and ``--shard 2/2`` on one fleet file, scraped by one
real Prometheus as two targets of the job ``replmon`` (a ``shard`` label on each, as
docs/prometheus.md configures it), with the shipped rules for that fleet file loaded.

The fleet's six pairs all alias the lab pair's servers under different names, three on
each shard by the hash of their names. Asserted through Prometheus's HTTP API: every
pair's series come from exactly one shard (its own, by ``shard_of``), none twice and
none missing; then, with the lab replica's SQL thread stopped (seen by every pair of
both shards, since they all watch that replica), ReplmonFindingCritical fires for every
pair, each from its own shard's instance, with the command that opens its screen.

The rule has no ``for:`` (the finding held its open_after in replmon): with 1 s ticks,
scrapes and evaluations the alerts fire a few seconds after the fault."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from httpwait import get, stop, wait_for

from replmon.fleet.rules import rules
from replmon.fleet.shard import shard_of
from replmon.lab import Lab
from replmon.lab.faults import stop_thread

pytestmark = pytest.mark.live

PAIRS = ("shop", "billing", "cache", "search", "auth", "orders")
SHARDS = 2
DOC = Path(__file__).resolve().parents[2] / "docs" / "prometheus.md"


def doc_global_view() -> tuple[list[str], str]:
    """docs/prometheus.md's federation ``match[]`` selectors and remote write ``keep``
    regex, as the page shows them (the test runs what the docs say)."""
    text = DOC.read_text()
    fed = text[text.index('"match[]":'):]
    selectors = re.findall(r"^\s+- '(.*)'$", fed[:fed.index("static_configs")], re.M)
    (regex,) = re.findall(r"^\s+regex: (.*)$", text[text.index("remote_write:"):], re.M)[:1]
    assert selectors and regex, "docs/prometheus.md: the global view's examples moved"
    return selectors, regex


class Shards:
    """N ``replmon serve --shard K/N`` processes and one Prometheus, on loopback ports."""

    def __init__(self, lab: Lab, tmp: Path) -> None:
        self.tmp = tmp
        self.logs: list[IO[bytes]] = []
        self.ports = {k: lab.free_port() for k in range(1, SHARDS + 1)}
        self.prom_port = lab.free_port()
        self.global_port = lab.free_port()
        self.selectors, regex = doc_global_view()
        s = lab.settings()
        p, r = s["primary"], s["replica"]
        self.fleet = tmp / "fleet.toml"
        self.fleet.write_text(f"""
interval = "1s"
[defaults]
mysql = {{ user = "{lab.monitor_user}", password_env = "LAB_MYSQL_PW" }}
redis = {{ password_env = "LAB_REDIS_PW" }}
""" + "".join(f"""
[[pair]]
name = "{name}"
[pair.primary]
host = "127.0.0.1"
mysql = {{ port = {p["mysql"]["port"]} }}
redis = {{ port = {p["redis"]["port"]} }}
[pair.replica]
host = "127.0.0.1"
mysql = {{ port = {r["mysql"]["port"]} }}
redis = {{ port = {r["redis"]["port"]} }}
""" for name in PAIRS))
        (tmp / "rules.yml").write_text(rules(str(self.fleet)))
        (tmp / "prometheus.yml").write_text(json.dumps({  # JSON is YAML
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                       "external_labels": {"site": "dc1"}},
            "rule_files": ["rules.yml"],
            "scrape_configs": [{"job_name": "replmon", "static_configs": [
                {"targets": [self.target(k)], "labels": {"shard": str(k)}}
                for k in self.ports]}],
            # the global view by remote write, as the docs configure it (sent every 1 s)
            "remote_write": [{
                "url": f"http://127.0.0.1:{self.global_port}/api/v1/write",
                "write_relabel_configs": [{"source_labels": ["__name__", "job", "alertname"],
                                           "regex": regex, "action": "keep"}],
                "queue_config": {"batch_send_deadline": "1s"}}]}))
        (tmp / "global.yml").write_text("{}")
        env = dict(os.environ, LAB_MYSQL_PW=lab.monitor_password,
                   LAB_REDIS_PW=lab.redis_password)
        self.serves = {k: subprocess.Popen(
            [sys.executable, "-m", "replmon", "serve", "--config", str(self.fleet),
             "--shard", f"{k}/{SHARDS}", "--listen", self.target(k)],
            env=env, stdout=subprocess.DEVNULL, stderr=self._log(f"serve{k}.log"))
            for k in self.ports}
        prometheus = shutil.which("prometheus")
        assert prometheus, "prometheus missing: .ci/setup installs Debian's package"
        self.prom = subprocess.Popen(
            [prometheus, f"--config.file={tmp / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.prom_port}"],
            cwd=tmp, stdout=subprocess.DEVNULL, stderr=self._log("prometheus.log"))
        self.central = subprocess.Popen(  # the central store remote write feeds
            [prometheus, f"--config.file={tmp / 'global.yml'}",
             f"--storage.tsdb.path={tmp / 'tsdb-global'}", "--web.enable-remote-write-receiver",
             f"--web.listen-address=127.0.0.1:{self.global_port}"],
            cwd=tmp, stdout=subprocess.DEVNULL, stderr=self._log("global.log"))

    def target(self, k: int) -> str:
        return f"127.0.0.1:{self.ports[k]}"

    def _log(self, name: str) -> IO[bytes]:
        f = open(self.tmp / name, "wb")  # noqa: SIM115 - closed in close()
        self.logs.append(f)
        return f

    def query(self, expr: str, port: int | None = None) -> list[dict[str, Any]]:
        q = urllib.parse.urlencode({"query": expr})
        doc = json.loads(get(f"http://127.0.0.1:{port or self.prom_port}/api/v1/query?{q}"))
        assert doc["status"] == "success", doc
        return list(doc["data"]["result"])

    def firing(self, name: str, **labels: str) -> list[dict[str, Any]]:
        doc = json.loads(get(f"http://127.0.0.1:{self.prom_port}/api/v1/alerts"))
        return [a for a in doc["data"]["alerts"] if a["labels"]["alertname"] == name
                and a["state"] == "firing"
                and all(a["labels"].get(k) == v for k, v in labels.items())]

    def federate(self) -> list[str]:
        """The series lines of /federate with the docs' ``match[]`` selectors."""
        q = urllib.parse.urlencode([("match[]", m) for m in self.selectors])
        page = get(f"http://127.0.0.1:{self.prom_port}/federate?{q}").decode()
        return [line for line in page.splitlines() if line and not line.startswith("#")]

    def close(self) -> None:
        # the central store last: the site's Prometheus flushes its remote write on exit
        for procs in ([*self.serves.values(), self.prom], [self.central]):
            stop(procs)
        for f in self.logs:
            f.close()


@pytest.fixture
def shards(lab: Lab, tmp_path: Path) -> Iterator[Shards]:
    s = Shards(lab, tmp_path)
    try:
        for url in (f"http://127.0.0.1:{p}/-/ready" for p in (s.prom_port, s.global_port)):
            wait_for("prometheus ready", lambda u=url: get(u), timeout=30)
        yield s
    finally:
        s.close()
    for k, proc in s.serves.items():
        assert proc.returncode == 0, (tmp_path / f"serve{k}.log").read_text()


def test_two_shards_serve_every_pair_once_and_each_fires_its_alerts(
    shards: Shards, lab: Lab,
) -> None:
    s = shards
    owner = {name: shard_of(name, SHARDS) for name in PAIRS}
    assert set(owner.values()) == {1, 2}, "both shards must get pairs"

    # every pair's series exactly once across the shards, from its own shard
    def all_pairs() -> list[dict[str, Any]]:
        got = s.query("replmon_pair_interval_seconds")
        return got if len(got) >= len(PAIRS) else []

    got = wait_for("every pair's series from both shards", all_pairs)
    assert sorted(x["metric"]["pair"] for x in got) == sorted(PAIRS), got
    for x in got:
        k = owner[x["metric"]["pair"]]
        assert (x["metric"]["instance"], x["metric"]["shard"]) == (s.target(k), str(k)), x
    counts = s.query("count by (pair) (replmon_pair_interval_seconds)")
    assert {x["metric"]["pair"]: x["value"][1] for x in counts} == dict.fromkeys(PAIRS, "1")
    # and every node's source series, once each (none doubled on the other shard)
    sources = wait_for("both nodes' MySQL and Redis of every pair", lambda: (
        r if len(r := s.query("count by (pair, node, source) "
                              '(replmon_source_up{source=~"mysql|redis"})'))
        == 4 * len(PAIRS) else []))
    assert {x["value"][1] for x in sources} == {"1"}
    assert {(x["metric"]["shard"], x["value"][1]) for x in s.query('up{job="replmon"}')} == {
        ("1", "1"), ("2", "1")}
    assert not s.firing("ReplmonFindingCritical", check="mysql_replication")

    # a fault on the lab replica: every pair of both shards sees it, from its own shard
    def every_pair_fires() -> list[dict[str, Any]]:
        a = s.firing("ReplmonFindingCritical", check="mysql_replication")
        return a if {x["labels"]["pair"] for x in a} == set(PAIRS) else []

    def central_has_every_pair() -> list[dict[str, Any]]:
        r = s.query('replmon_finding{check="mysql_replication",site="dc1"}', s.global_port)
        return r if {x["metric"]["pair"] for x in r} == set(PAIRS) else []

    t0 = time.monotonic()
    with stop_thread(lab, "SQL_THREAD"):
        alerts = wait_for("ReplmonFindingCritical for every pair", every_pair_fires)
        fired_s = time.monotonic() - t0
        # the global view, by the docs' federation selectors and remote write filter:
        # the findings of both shards' pairs with the site's label, not the node detail
        fed = s.federate()
        central = wait_for("every pair's finding written to the central store",
                           central_has_every_pair)
        central_s = time.monotonic() - t0
    for a in alerts:
        pair, k = a["labels"]["pair"], owner[a["labels"]["pair"]]
        assert a["labels"]["node"] == "replica"
        assert (a["labels"]["instance"], a["labels"]["shard"]) == (s.target(k), str(k)), a
        assert a["annotations"]["screen"] == f"replmon --config {s.fleet} --pair {pair}"
    assert {a["labels"]["shard"] for a in alerts} == {"1", "2"}
    assert len(alerts) == len(PAIRS), "one alert per pair: none from the other shard"
    assert fired_s < 20, f"alerts fired {fired_s:.1f} s after the fault"

    for pair, k in owner.items():
        assert any(line.startswith("replmon_finding{") and f'pair="{pair}"' in line
                   and f'shard="{k}"' in line and 'site="dc1"' in line
                   and 'check="mysql_replication"' in line for line in fed), (pair, fed)
    assert any(line.startswith("ALERTS{") and "ReplmonFindingCritical" in line
               for line in fed), fed
    assert not [line for line in fed if line.startswith("replmon_source_up")]
    assert {(x["metric"]["pair"], x["metric"]["shard"]) for x in central} == {
        (pair, str(k)) for pair, k in owner.items()}
    assert s.query('count({__name__=~"replmon_source_up|replmon_mysql_.*"})',
                   s.global_port) == []  # the node detail stays at the site
    assert central_s < 30, f"the central store had them {central_s:.1f} s after the fault"
