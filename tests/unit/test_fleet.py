"""replmon serve without servers: the fleet file, the metrics page made from real
recorded ticks, /findings.json, and the errors a bad fleet file gets."""

from __future__ import annotations

import json
import re
import socket
from functools import partial
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from replmon.cli import main
from replmon.engine import build_engine
from replmon.errors import ConfigError
from replmon.fleet.families import FAMILIES, OPT_IN
from replmon.fleet.http import findings_doc
from replmon.fleet.metrics import (
    SERIES_PER_GROUP,
    SERIES_PER_PAIR,
    FleetCollector,
    exposition,
    groups_of,
    metrics_doc,
    render_pair,
)
from replmon.fleet.rules import RULES
from replmon.fleet.state import PairState
from replmon.model.incidents import causality
from replmon.model.tick import Tick
from replmon.session.recording import open_recording
from replmon.settings import build_fleet

ROOT = Path(__file__).resolve().parent.parent.parent


ALL = groups_of(["all"])


def session(name: str, groups: frozenset[str] = ALL) -> tuple[list[Tick], PairState]:
    with open_recording(ROOT / "sample_sessions" / name) as rec:
        ticks = list(rec.ticks())
    eng = build_engine(entry_points=False)
    state = PairState(name.split(".")[0], ticks[0].interval,
                      render=partial(render_pair, groups=groups), links=causality(eng.checks))
    for t in ticks:
        state.on_tick(t, eng.feed(t))
    return ticks, state


def samples(page: bytes) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(page.decode()):
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def test_a_stopped_sql_thread_and_its_finding_are_on_the_page() -> None:
    ticks, state = session("replica_sql_stopped.rmrec")
    got = samples(exposition([state]))
    (sql,) = got["replmon_mysql_slave_status_slave_sql_running"]
    assert sql[0]["node"] == "replica" and sql[0]["pair"] == "replica_sql_stopped"
    assert sql[1] == 0.0  # the session ends with the thread stopped
    (io,) = got["replmon_mysql_slave_status_slave_io_running"]
    assert io[1] == 1.0
    crit = [lab for lab, v in got["replmon_finding"] if lab["severity"] == "critical"]
    assert [(x["check"], x["node"]) for x in crit] == [("mysql_replication", "replica")]
    counts = {lab["severity"]: v for lab, v in got["replmon_findings_open"]}
    assert counts["critical"] == 1.0
    # counters are the tick's counters, as counters
    last = ticks[-1].primary.mysql.counters
    cmd = {lab["command"]: v for lab, v in got["replmon_mysql_global_status_commands_total"]
           if lab["node"] == "primary"}
    assert cmd["update"] == last["Com_update"] and cmd["select"] == last["Com_select"]
    assert got["replmon_ticks_total"] == [({"pair": "replica_sql_stopped"}, len(ticks))]


def test_every_family_has_help_and_type_and_pair_node_labels() -> None:
    _, a = session("healthy_steady_load.rmrec")
    _, b = session("drbd_peer_disconnected.rmrec")
    page = exposition([a, b]).decode()
    names = set(re.findall(r"^# TYPE (\S+) ", page, re.M))
    assert names == set(re.findall(r"^# HELP (\S+) ", page, re.M))
    assert len(names) > 80 and page.count("# TYPE replmon_source_up ") == 1  # merged
    for fam in text_string_to_metric_families(page):
        for s in fam.samples:
            if fam.name not in ("replmon_build_info", "replmon_tick_duration_seconds"):
                assert "pair" in s.labels, s
    # seed 000 at its end: the primary waits for its peer (8.4 WFConnection, DRBD 9's
    # Connecting, the name drbd-reactor exports); the replica's DRBD is down
    drbd = samples(page.encode())["replmon_drbd_connection_state"]
    assert [(lab["node"], lab["drbd_connection_state"]) for lab, _ in drbd] == [
        ("primary", "Connecting")]


def test_no_label_holds_free_text_or_numbers_of_a_finding() -> None:
    _, state = session("redis_link_down_full_resync.rmrec")
    for labels, _ in samples(exposition([state])).get("replmon_finding", []):
        assert set(labels) == {"pair", "node", "check", "key", "severity", "incident",
                               "incident_role"}
        assert not re.search(r"\d\s", " ".join(labels.values()))


def test_each_finding_names_its_incident_and_role_for_the_inhibit_rule() -> None:
    """#34: the full resync under the small backlog: one incident, its root labelled
    "root", the others "consequence", the same incident id; replmon_incident_open names
    the root; /findings.json carries the incident."""
    _, state = session("redis_link_down_full_resync.rmrec")
    got = samples(exposition([state]))
    roles = {(lb["check"], lb["key"]): (lb["incident"], lb["incident_role"])
             for lb, _ in got["replmon_finding"]}
    name = "config_drift/pair/repl-backlog-size"  # the incident: its root
    assert roles[("config_drift", "repl-backlog-size")] == (name, "root")
    assert roles[("redis_backlog_headroom", "backlog")] == (name, "consequence")
    (inc,) = [lb for lb, v in got["replmon_incident_open"] if v == 1]
    assert (inc["root_check"], inc["root_node"], inc["severity"]) == (
        "config_drift", "pair", "critical")
    doc = findings_doc([state])["pairs"]["redis_link_down_full_resync"]
    assert doc["incidents"][0]["root"]["check"] == "config_drift"
    assert {f["incident_role"] for f in doc["findings"]} == {"root", "consequence"}


def test_findings_json_holds_the_text_and_numbers() -> None:
    _, state = session("replica_sql_stopped.rmrec")
    doc = findings_doc([state])
    found = doc["pairs"]["replica_sql_stopped"]["findings"]
    assert sorted(f["check"] for f in found) == ["mysql_replication", "pair_lag"]
    (f,) = [f for f in found if f["check"] == "mysql_replication"]
    assert f["severity"] == "critical" and f["title"].startswith("SQL thread stopped")
    assert f["cause"] and f["next_step"] and f["numbers"]
    json.dumps(doc)


def test_docs_metrics_md_is_current() -> None:
    assert (ROOT / "docs" / "metrics.md").read_text() == metrics_doc()
    assert all(f.help.endswith((".", ")")) for f in FAMILIES)


def _reference(states: list[PairState]) -> list[str]:
    """The page as prometheus_client writes it from the table (every family, every
    group), without the lines that depend on the time of the scrape (ages)."""
    page = b"".join(generate_latest(FleetCollector(states, live=live)) for live in (False, True))
    return [x for x in page.decode().splitlines() if "_age_seconds" not in x]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "sample_sessions").glob("*.rmrec")))
def test_the_page_is_what_prometheus_client_writes(name: str) -> None:
    """replmon writes the text format itself (several times faster): the same bytes as
    prometheus_client's generate_latest, tick after tick, alone and beside another pair
    (labels escaped, values as Go writes them)."""
    with open_recording(ROOT / "sample_sessions" / name) as rec:
        ticks = list(rec.ticks())
    a = PairState('odd "pair"\\', 5.0, render=partial(render_pair, groups=ALL))
    _, b = session("replica_sql_stopped.rmrec")
    for t in ticks[::max(1, len(ticks) // 25)]:
        a.on_tick(t, None)
        got = [x for x in exposition([a, b]).decode().splitlines() if "_age_seconds" not in x]
        assert got == _reference([a, b])


def test_the_default_leaves_out_only_the_opt_in_groups_and_keeps_what_the_rules_use() -> None:
    _, every = session("healthy_steady_load.rmrec")
    _, default = session("healthy_steady_load.rmrec", frozenset())
    page_all, page = samples(exposition([every])), samples(exposition([default]))
    assert set(page) <= set(page_all)
    gone = set(page_all) - set(page)
    assert gone and all(
        n.startswith(tuple(f"replmon_{x}" for x in (
            "mysql_global_status_commands", "mysql_global_status_handlers",
            "mysql_global_status_innodb", "node_network_receive_errs",
            "node_network_transmit_errs", "node_network_receive_drop",
            "node_network_transmit_drop"))) for n in gone)
    default = {f.exposed for f in FAMILIES if not f.group}
    used = set(re.findall(r"\b(replmon_[a-z_]+)", RULES))
    assert "replmon_finding" in used and used <= default
    for n in page:  # the same series, the same values
        if "_age_seconds" not in n:
            assert page[n] == page_all[n]
    # the figures docs/metrics.md gives
    per_pair = {"default": sum(map(len, page.values())), "all": sum(map(len, page_all.values()))}
    assert per_pair == SERIES_PER_PAIR
    for g in OPT_IN:
        _, one = session("healthy_steady_load.rmrec", frozenset([g]))
        assert sum(map(len, samples(exposition([one])).values())) - per_pair["default"] == \
            SERIES_PER_GROUP[g], g


def test_opt_in_groups_in_the_fleet_file() -> None:
    pair = [{"name": "a", "primary": "x", "replica": "y"}]
    assert build_fleet({"pair": pair}).opt_in == ()
    fleet = build_fleet({"pair": pair, "metrics": {"opt_in": ["innodb", "netdev_errors"]}})
    assert groups_of(fleet.opt_in) == {"innodb", "netdev_errors"}
    assert groups_of(build_fleet({"pair": pair, "metrics": {"opt_in": ["all"]}}).opt_in) == \
        set(OPT_IN)
    for bad, says in (({"opt_in": ["inodb"]}, "unknown group(s) inodb; known: all, "),
                      ({"opt_in": "innodb"}, "must be a list"),
                      ({"optin": ["innodb"]}, "must be a table with opt_in")):
        with pytest.raises(ConfigError, match=re.escape(says)):
            build_fleet({"pair": pair, "metrics": bad})


def test_defaults_apply_to_every_node_and_a_pair_overrides_them() -> None:
    fleet = build_fleet({
        "defaults": {"mysql": {"user": "monitor", "port": 3307}, "ssh": {"mode": "off"}},
        "checks": {"latency_bound": {"enabled": False}},
        "pair": [{"name": "a", "primary": "db1", "replica": "db2"},
                 {"name": "b", "primary": {"host": "db3", "mysql": {"port": 3308}},
                  "replica": "db4", "interval": "2s",
                  "checks": {"stmt_vs_rows": {"open_after": "10s"}}}],
    })
    a, b = (p.config for p in fleet.pairs)
    assert a.interval == 5.0 and b.interval == 2.0  # serve's default, a pair's own
    assert a.replica.mysql.user == "monitor" and a.replica.mysql.port == 3307
    assert b.primary.mysql.port == 3308 and b.primary.mysql.user == "monitor"
    assert b.checks == {"latency_bound": {"enabled": False},
                        "stmt_vs_rows": {"open_after": "10s"}}
    assert fleet.listen == "127.0.0.1:9465"


@pytest.mark.parametrize(("toml", "says"), [
    ('[[pair]]\nname = "a"\nprimary = "x"\nreplica = "y"\n'
     '[[pair]]\nname = "a"\nprimary = "x"\nreplica = "y"\n', "duplicate pair name"),
    ('[[pair]]\nname = "a"\nprimary = "x"\n', "no replica"),
    ('colour = "red"\n[[pair]]\nname = "a"\nprimary = "x"\nreplica = "y"\n',
     "unknown key(s) colour"),
    ('[[pair]]\nname = "a"\nprimary = "x"\nreplica = "y"\nprimray = "z"\n',
     "unknown key(s) primray"),
    ('[[pair]]\nname = "a b"\nprimary = "x"\nreplica = "y"\n', "name must be"),
    ('interval = 1\n', "no pair"),
    ('[[pair]]\nname = "a"\nprimary = "x"\nreplica = "y"\n[checks.nope]\nx = 1\n',
     "unknown check"),
    ('[[pair]]\nname = "a"\nprimary = { host = "x", mysql = { prot = 1 } }\nreplica = "y"\n',
     "primary.mysql.prot"),
])
def test_a_bad_fleet_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str, says: str,
) -> None:
    path = tmp_path / "fleet.toml"
    path.write_text(toml)
    code = main(["serve", "--config", str(path), "--listen", "127.0.0.1:0"])
    err = capsys.readouterr().err
    assert code == 2 and says in err, err
    assert "Traceback" not in err and err.startswith("replmon: ")


def test_a_port_in_use_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "fleet.toml"
    path.write_text('[[pair]]\nname = "a"\nprimary = "127.0.0.1"\nreplica = "127.0.0.1"\n')
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code = main(["serve", "--config", str(path), "--listen", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err, err
    assert "Traceback" not in err


def test_listen_must_be_host_and_port() -> None:
    with pytest.raises(ConfigError, match="HOST:PORT"):
        build_fleet({"pair": [{"name": "a", "primary": "x", "replica": "y"}]},
                    listen="localhost")


def test_basic_auth_guards_every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    from replmon.fleet.config import BasicAuth
    from replmon.fleet.http import App

    monkeypatch.setenv("REPLMON_HTTP_PW", "s3cret")
    _, state = session("replica_sql_stopped.rmrec")
    app = App([state], BasicAuth(username="prom", password_env="REPLMON_HTTP_PW"))
    seen: list[str] = []

    def call(path: str, auth: str | None) -> bytes:
        env = {"PATH_INFO": path} | ({"HTTP_AUTHORIZATION": auth} if auth else {})
        return b"".join(app(env, lambda status, headers: seen.append(status)))

    assert call("/metrics", None) == b"authentication required\n" and seen[-1].startswith("401")
    bad = "Basic " + base64.b64encode(b"prom:wrong").decode()
    call("/findings.json", bad)
    assert seen[-1].startswith("401")
    good = "Basic " + base64.b64encode(b"prom:s3cret").decode()
    assert b"replmon_finding{" in call("/metrics", good) and seen[-1] == "200 OK"
    assert b"s3cret" not in call("/findings.json", good)


def test_overlapping_scrapes_write_the_page_one_at_a_time(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """Eight scrapes at once over real HTTP: each gets the whole page, and no two write it
    at the same time (at 200 pairs a page and its join hold ~11 MB each)."""
    import threading
    import time
    import urllib.request

    from replmon.fleet import http

    inside, most = 0, 0
    guard = threading.Lock()

    def slow_page(states: object) -> bytes:
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)
        with guard:
            inside -= 1
        return b"replmon_up 1\n"

    monkeypatch.setattr(http, "exposition", slow_page)
    server = http.Server(http.App([]), "127.0.0.1:0")
    try:
        def scrape() -> bytes:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics",
                                        timeout=10) as r:
                return bytes(r.read())

        pages: list[bytes] = []
        threads = [threading.Thread(target=lambda: pages.append(scrape())) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.close()
    assert pages == [b"replmon_up 1\n"] * 8
    assert most == 1


def _roles_state(ticks: list[Tick]) -> PairState:
    """A pair's state after ``ticks``, with the roles check's findings."""
    from replmon.checks import roles

    from replmon.engine import Engine

    eng = Engine([(roles.CHECK, roles.CHECK.thresholds())])
    state = PairState("shop", 1.0, render=partial(render_pair, groups=ALL),
                      links=causality(eng.checks))
    for t in ticks:
        state.on_tick(t, eng.feed(t))
    return state


def _role_series(state: PairState) -> tuple[list[tuple[str, str, str, str]], list, list]:
    """(host, node, role, given_role) of each node, the change time, the layers at odds."""
    got = samples(exposition([state]))
    nodes = sorted((lb["host"], lb["node"], lb["role"], lb["given_role"])
                   for lb, v in got["replmon_node_role_info"] if v == 1.0)
    return (nodes, got.get("replmon_pair_role_change_timestamp_seconds", []),
            got.get("replmon_pair_role_layers_at_odds", []))


def test_each_nodes_role_and_the_last_change_are_on_the_page() -> None:
    """#40: the page names each node's role now and the one it was given, with the time of
    the last change and the layers at odds with the primary: as given, half done (MySQL
    moved, Redis not), done, and the roles the other way round from the start."""
    from replmon.testing.synth import T0, directed, oriented

    as_given = directed("db163", "db163")  # db163 given as the primary and it is
    ticks = oriented([as_given] * 5 + [directed("db162", "db163")] * 3
                     + [directed("db162", "db162")] * 5)
    before = _roles_state(ticks[:5])
    assert _role_series(before) == (
        [("db162", "replica", "replica", "replica"), ("db163", "primary", "primary", "primary")],
        [], [({"pair": "shop"}, 0.0)])  # never changed: no time

    half = _roles_state(ticks[:8])
    assert _role_series(half) == (
        [("db162", "primary", "primary", "replica"), ("db163", "replica", "replica", "primary")],
        [({"pair": "shop"}, T0 + 5)], [({"pair": "shop"}, 1.0)])  # Redis still names db163

    done = _roles_state(ticks)
    assert _role_series(done) == (
        [("db162", "primary", "primary", "replica"), ("db163", "replica", "replica", "primary")],
        [({"pair": "shop"}, T0 + 5)], [({"pair": "shop"}, 0.0)])
    # the other per-node series follow the role too: node is the role now, host the name
    got = samples(exposition([done]))
    assert {(lb["node"], lb["host"]) for lb, _ in got["replmon_source_up"]} == {
        ("primary", "db162"), ("replica", "db163")}
    (f,) = got["replmon_finding"]
    assert (f[0]["check"], f[0]["severity"], f[0]["incident_role"]) == ("roles", "info", "root")

    swapped = _roles_state(oriented([directed("db162", "db162")] * 3))
    assert _role_series(swapped) == (
        [("db162", "primary", "primary", "replica"), ("db163", "replica", "replica", "primary")],
        [], [({"pair": "shop"}, 0.0)])

    # the same bytes as prometheus_client writes, the new pair families included
    got_page = [x for x in exposition([half, done]).decode().splitlines()
                if "_age_seconds" not in x]
    assert got_page == _reference([half, done])


def test_a_recording_made_before_roles_were_observed_gives_the_roles_as_recorded() -> None:
    _, state = session("../tests/fixtures/recordings/format1_replica_sql_stopped.rmrec")
    nodes, changed, at_odds = _role_series(state)
    assert nodes == [("lab-primary", "primary", "primary", "primary"),
                     ("lab-replica", "replica", "replica", "replica")]
    assert changed == [] and at_odds == []


def test_the_true_lag_and_the_heartbeat_are_on_the_page() -> None:
    """A tick with its true lag (replmon.truelag), pt-heartbeat's row and a Redis estimate:
    mysqld_exporter's heartbeat shapes, the lag with its source."""
    from replmon.model.lag import LagFacts, MeasuredLag, RedisLagEstimate

    ticks, state = session("replica_sql_stopped.rmrec")
    last = ticks[-1]
    m = last.replica.mysql.model_copy(update={"lag_facts": LagFacts(
        server_time=last.wall, heartbeat={1: last.wall - 41.5})})
    t = last.model_copy(update={
        "replica": last.replica.model_copy(update={"mysql": m}),
        "lag": MeasuredLag(seconds=41.5, bound_s=0.01, source="heartbeat"),
        "redis_lag": RedisLagEstimate(bytes=3000, rate_bytes_per_s=1000.0, seconds=3.0)})
    state.on_tick(t, None)
    got = samples(exposition([state]))
    (lag,) = got["replmon_mysql_replica_lag_seconds"]
    assert lag == ({"pair": "replica_sql_stopped", "node": "replica", "host": t.replica.name,
                    "channel": "", "source": "heartbeat"}, 41.5)
    (stored,) = got["replmon_mysql_heartbeat_stored_timestamp_seconds"]
    assert stored[0]["server_id"] == "1" and stored[1] == pytest.approx(last.wall - 41.5)
    (now,) = got["replmon_mysql_heartbeat_now_timestamp_seconds"]
    assert now[1] == pytest.approx(last.wall)
    (est,) = got["replmon_redis_replica_lag_estimate_seconds"]
    assert est[0]["node"] == "replica" and est[1] == 3.0
