"""The shipped alert rules under the real ``promtool``: ``check rules``, and ``test rules``
on series made from shipped recordings (the findings replmon opened and closed there,
tick by tick), so what is asserted is when a real incident's alerts fire and resolve."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from replmon.engine import build_engine
from replmon.fleet.rules import RULES
from replmon.session.recording import open_recording
from replmon.testing.synth import directed, oriented

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parent.parent.parent
INSTANCE = {"instance": "replmon:9465", "job": "replmon"}


def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool missing: .ci/setup installs Debian's prometheus package"
    return path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def finding_series(name: str, pair: str) -> tuple[list[dict[str, Any]], dict[tuple, int],
                                                   dict[tuple, int], int]:
    """promtool input series of replmon_finding for every tick of a recording (one
    sample per tick, 1 s apart; a closed finding's series goes stale as on a real
    scrape), with the tick index each finding opened and closed at."""
    with open_recording(ROOT / "sample_sessions" / name) as rec:
        ticks = list(rec.ticks())
    eng = build_engine(entry_points=False)
    values: dict[tuple, list[str]] = {}
    opened: dict[tuple, int] = {}
    closed: dict[tuple, int] = {}
    for i, t in enumerate(ticks):
        upd = eng.feed(t)
        now = {(f.node, f.check, f.key, f.severity.label) for f in upd.open}
        for key in now:
            values.setdefault(key, ["_"] * i)
            opened.setdefault(key, i)
        for key, vs in values.items():
            vs.append("1" if key in now else ("stale" if vs and vs[-1] == "1" else "_"))
            if key not in now and vs[-1] == "stale":
                closed.setdefault(key, i)
    series = []
    for (node, check, key, sev), vs in values.items():
        labels = {"pair": pair, "node": node, "check": check, "key": key, "severity": sev,
                  **INSTANCE}
        sel = ",".join(f'{k}="{v}"' for k, v in labels.items())
        series.append({"series": f"replmon_finding{{{sel}}}", "values": " ".join(vs)})
    series.append({"series": 'up{instance="replmon:9465",job="replmon"}',
                   "values": f"1x{len(ticks)}"})
    return series, opened, closed, len(ticks)


def expected(pair: str, node: str, check: str, key: str, sev: str) -> dict[str, Any]:
    labels = {"pair": pair, "node": node, "check": check, "key": key, "severity": sev,
              **INSTANCE}
    if sev == "critical":
        desc = (f'replmon\'s check {check} (key "{key}") is critical on the {node} of pair '
                f"{pair}. Title, numbers, cause and next step: "
                f"http://{INSTANCE['instance']}/findings.json")
    else:
        desc = (f'replmon\'s check {check} (key "{key}") warns on the {node} of pair {pair}. '
                f"Title, numbers, cause and next step: "
                f"http://{INSTANCE['instance']}/findings.json")
    return {"exp_labels": labels,
            "exp_annotations": {"summary": f"{pair} {node}: {check} {sev}", "description": desc,
                                "screen": f"replmon --config FLEET.toml --pair {pair}"}}


def write_test(tmp: Path, series: list[dict[str, Any]], cases: list[dict[str, Any]]) -> None:
    (tmp / "rules.yml").write_text(RULES)
    (tmp / "test.yml").write_text(json.dumps({  # JSON is YAML: no PyYAML needed
        "rule_files": ["rules.yml"], "evaluation_interval": "1s",
        "tests": [{"interval": "1s", "input_series": series, "alert_rule_test": cases}]},
        indent=1))


def promtool_test(tmp: Path, series: list[dict[str, Any]],
                  cases: list[dict[str, Any]]) -> None:
    """``promtool test rules`` on the shipped rules with ``series`` and ``cases``: passes."""
    write_test(tmp, series, cases)
    out = run("test", "rules", "test.yml", cwd=tmp)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_shipped_rules_pass_promtool_check(tmp_path: Path) -> None:
    (tmp_path / "rules.yml").write_text(RULES)
    out = run("check", "rules", "rules.yml", cwd=tmp_path)
    assert out.returncode == 0 and "SUCCESS: 10 rules found" in out.stdout, out.stdout + out.stderr


def test_rules_for_a_fleet_file_name_it_in_every_pair_alert_and_pass_promtool(
    tmp_path: Path,
) -> None:
    """``replmon rules --config FLEET``: the fleet file's absolute path (shell-quoted)
    in the `screen` annotation of every alert of a pair, which promtool accepts and
    renders into the command that opens the pair's screen."""
    import sys

    fleet = tmp_path / "my fleet.toml"
    fleet.write_text('[[pair]]\nname = "shop"\nprimary = "db1"\nreplica = "db2"\n')
    out = subprocess.run([sys.executable, "-m", "replmon", "rules", "--config", fleet.name],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    (tmp_path / "rules.yml").write_text(out.stdout)
    check = run("check", "rules", "rules.yml", cwd=tmp_path)
    assert check.returncode == 0 and "SUCCESS: 10 rules found" in check.stdout, (
        check.stdout + check.stderr)
    screen = f"replmon --config '{fleet}' --pair {{{{ $labels.pair }}}}"
    assert out.stdout.count(f"screen: {json.dumps(screen)}") == 9  # all but ReplmonDown
    series = [{"series": 'replmon_finding{pair="shop",node="replica",check="mysql_replication",'
                         'key="sql",severity="critical",instance="replmon:9465",job="replmon"}',
               "values": "1x5"}]
    case = {"eval_time": "2s", "alertname": "ReplmonFindingCritical", "exp_alerts": [
        {"exp_labels": {"pair": "shop", "node": "replica", "check": "mysql_replication",
                        "key": "sql", "severity": "critical", **INSTANCE},
         "exp_annotations": {**expected("shop", "replica", "mysql_replication", "sql",
                                        "critical")["exp_annotations"],
                             "screen": f"replmon --config '{fleet}' --pair shop"}}]}
    (tmp_path / "test.yml").write_text(json.dumps({
        "rule_files": ["rules.yml"], "evaluation_interval": "1s",
        "tests": [{"interval": "1s", "input_series": series, "alert_rule_test": [case]}]}))
    test = run("test", "rules", "test.yml", cwd=tmp_path)
    assert test.returncode == 0, test.stdout + test.stderr
    bad = subprocess.run([sys.executable, "-m", "replmon", "rules", "--config", "nope.toml"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (bad.returncode, bad.stdout, bad.stderr) == (2, "", "replmon: nope.toml: no such file\n")


def test_a_stopped_sql_thread_fires_critical_from_the_tick_its_finding_opened(
    tmp_path: Path,
) -> None:
    series, opened, _, n = finding_series("replica_sql_stopped.rmrec", "shop")
    ((key, at),) = [(k, i) for k, i in opened.items() if k[3] == "critical"]
    assert key[:2] == ("replica", "mysql_replication")
    crit = expected("shop", *key)
    # the lag the stopped thread leaves, measured (pair_lag's warning, its own finding)
    lag = [k for k in opened if k[3] == "warning"]
    assert [k[1] for k in lag] == ["pair_lag"], opened
    cases = [
        {"eval_time": f"{at - 1}s", "alertname": "ReplmonFindingCritical", "exp_alerts": []},
        {"eval_time": f"{at}s", "alertname": "ReplmonFindingCritical", "exp_alerts": [crit]},
        {"eval_time": f"{n - 1}s", "alertname": "ReplmonFindingCritical", "exp_alerts": [crit]},
        {"eval_time": f"{n - 1}s", "alertname": "ReplmonFindingWarning",
         "exp_alerts": [expected("shop", *k) for k in lag]},
        {"eval_time": f"{n - 1}s", "alertname": "ReplmonDown", "exp_alerts": []},
    ]
    promtool_test(tmp_path, series, cases)


def test_a_redis_link_outage_fires_and_resolves_with_its_finding(tmp_path: Path) -> None:
    series, opened, closed, _ = finding_series("redis_link_down_full_resync.rmrec", "cache")
    link = next(k for k in opened if k[1:3] == ("redis_replication", "link/sync"))
    assert link in closed, "the session's link comes back"
    warn = expected("cache", *link)
    cases = [
        {"eval_time": f"{opened[link]}s", "alertname": "ReplmonFindingWarning",
         "exp_alerts": [warn] + [expected("cache", *k) for k, i in opened.items()
                                 if k != link and k[3] == "warning" and i <= opened[link]
                                 and closed.get(k, 10**9) > opened[link]]},
        {"eval_time": f"{closed[link]}s", "alertname": "ReplmonFindingWarning",
         "exp_alerts": [expected("cache", *k) for k, i in opened.items()
                        if k[3] == "warning" and i <= closed[link]
                        and closed.get(k, 10**9) > closed[link]]},
    ]
    promtool_test(tmp_path, series, cases)


def test_a_pair_that_stops_ticking_and_replmon_itself_down_fire(tmp_path: Path) -> None:
    # a 5 s pair: last tick age grows from 0 after its last tick at 60 s
    age = " ".join(["2"] * 60 + [str(i) for i in range(1, 200)])
    series = [
        {"series": 'replmon_pair_last_tick_age_seconds{pair="shop",instance="replmon:9465",'
                   'job="replmon"}', "values": age},
        {"series": 'replmon_pair_interval_seconds{pair="shop",instance="replmon:9465",'
                   'job="replmon"}', "values": "5x260"},
        {"series": 'up{instance="replmon:9465",job="replmon"}', "values": "1x100 0x160"},
    ]
    stale = {"exp_labels": {"pair": "shop", "severity": "critical", **INSTANCE},
             "exp_annotations": {
                 "summary": "replmon has stopped sampling pair shop",
                 "description": "No tick from pair shop for 1m 31s: its pipeline is stuck "
                                "or ended (replmon's log says why).",
                 "screen": "replmon --config FLEET.toml --pair shop"}}
    down = {"exp_labels": {"severity": "critical", **INSTANCE},
            "exp_annotations": {
                "summary": "replmon serve on replmon:9465 is not scraped",
                "description": "Prometheus has not scraped replmon serve on replmon:9465 for "
                               "2 minutes: none of its pairs is watched."}}
    cases = [
        # age passes 3 x 5 + 10 = 25 s at 85 s; held for 1m: firing from 145 s
        {"eval_time": "140s", "alertname": "ReplmonPairStale", "exp_alerts": []},
        {"eval_time": "150s", "alertname": "ReplmonPairStale", "exp_alerts": [stale]},
        {"eval_time": "210s", "alertname": "ReplmonDown", "exp_alerts": []},
        {"eval_time": "225s", "alertname": "ReplmonDown", "exp_alerts": [down]},
    ]
    promtool_test(tmp_path, series, cases)


def test_the_prometheus_configs_of_the_docs_pass_promtool(tmp_path: Path) -> None:
    """Every prometheus.yml block of docs/prometheus.md (one process, the shards, the
    global view's federation and remote write) is a valid Prometheus config."""
    import re

    text = (ROOT / "docs" / "prometheus.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S)
              if re.search(r"^(scrape_configs|remote_write|global):", b, re.M)]
    assert len(blocks) >= 5, "docs/prometheus.md: the Prometheus configs moved"
    (tmp_path / "rules.yml").write_text(RULES)
    for i, block in enumerate(blocks):
        path = tmp_path / f"prometheus{i}.yml"
        path.write_text(block.replace("/etc/prometheus/rules/replmon.yml",
                                      str(tmp_path / "rules.yml")))
        out = run("check", "config", path.name, cwd=tmp_path)
        assert out.returncode == 0, block + out.stdout + out.stderr


# --- a switchover (#40): the series come from ticks through the /metrics page -----------

ROLE_FAMILIES = ("replmon_finding", "replmon_node_role_info",
                 "replmon_pair_role_layers_at_odds", "replmon_pair_role_change_timestamp_seconds")


def page_series(ticks: list[Any], pair: str) -> list[dict[str, Any]]:
    """promtool input series of the roles families as /metrics has them after each tick
    (the roles check's findings only; one scrape per tick, 1 s apart; a series gone from
    the page goes stale, as on a real scrape)."""

    from prometheus_client.parser import text_string_to_metric_families
    from replmon.checks import roles

    from replmon.engine import Engine
    from replmon.fleet.metrics import exposition, render_pair
    from replmon.fleet.state import PairState
    from replmon.model.incidents import causality

    eng = Engine([(roles.CHECK, roles.CHECK.thresholds())])
    state = PairState(pair, 1.0, render=render_pair, links=causality(eng.checks))
    values: dict[str, list[str]] = {}
    for i, t in enumerate(ticks):
        state.on_tick(t, eng.feed(t))
        now: dict[str, float] = {}
        for fam in text_string_to_metric_families(exposition([state]).decode()):
            for smp in fam.samples:
                if smp.name in ROLE_FAMILIES:
                    sel = ",".join(f'{k}="{v}"' for k, v in sorted(
                        {**smp.labels, **INSTANCE}.items()))
                    now[f"{smp.name}{{{sel}}}"] = smp.value
        for key in now:
            values.setdefault(key, ["_"] * i)
        for key, vs in values.items():
            vs.append(repr(now[key]) if key in now else (
                "stale" if vs and vs[-1] not in ("_", "stale") else "_"))
    return [{"series": k, "values": " ".join(vs)} for k, vs in values.items()]


def roles_alert(pair: str, primary: str, severity: str, *, done: bool) -> dict[str, Any]:
    """The alert the roles finding raises: every label of the finding, and the primary."""
    key = primary if done else "half_done"  # the completed event (by its primary), or under way
    labels = {"pair": pair, "node": "pair", "check": "roles", "key": key,
              "severity": severity, "incident": f"roles/pair/{key}", "incident_role": "root",
              "primary": primary, **INSTANCE}
    screen = f"replmon --config FLEET.toml --pair {pair}"
    findings = f"http://{INSTANCE['instance']}/findings.json"
    if done:
        return {"exp_labels": labels, "exp_annotations": {
            "screen": screen, "summary": f"{pair}: {primary} is now the primary",
            "description": (
                f"The roles of pair {pair} changed, every layer agreeing: {primary} is the "
                f"primary and the other node replicates from it (a switchover or failover, "
                f"or the roles were the other way round from the start). replmon's checks "
                f"now judge the pair as it is. Check that clients write to {primary} only. "
                f"When, and each layer's say: {findings}")}}
    return {"exp_labels": labels, "exp_annotations": {
        "screen": screen, "summary": f"{pair}: switchover to {primary} half done",
        "description": (
            f"The roles of pair {pair} are changing and the layers disagree: {primary} is "
            f"the primary for the first layer that moved, another still names the old "
            f"primary or has lost its direction (nobody replicates from anybody, or the old "
            f"primary does not follow yet). Finish the change on the layer that did not "
            f"move (REPLICAOF, CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO, drbdadm "
            f"primary) or roll it back, and make sure writes go to one node only. Each "
            f"layer's say: {findings}")}}


def no_finding_alerts(at: int) -> list[dict[str, Any]]:
    """The roles finding raises none of the ReplmonFinding* alerts (its own instead)."""
    return [{"eval_time": f"{at}s", "alertname": f"ReplmonFinding{sev}", "exp_alerts": []}
            for sev in ("Critical", "Warning", "Info")]


def test_a_switchover_is_one_info_alert_naming_the_new_primary(tmp_path: Path) -> None:
    """MySQL moves to db162 at 10 s, Redis a second later: ReplmonSwitchover (info) from
    the tick the layers agree, naming db162; the second between is under the roles
    check's settle (2 s: a runbook switchover moves its layers within a second), so no
    ReplmonSwitchoverHalfDone: one alert for one event."""
    ticks = oriented([directed("db163", "db163")] * 10 + [directed("db162", "db163")]
                     + [directed("db162", "db162")] * 30)
    series = page_series(ticks, "shop")
    done = roles_alert("shop", "db162", "info", done=True)
    cases = [
        {"eval_time": "9s", "alertname": "ReplmonSwitchover", "exp_alerts": []},
        {"eval_time": "9s", "alertname": "ReplmonSwitchoverHalfDone", "exp_alerts": []},
        {"eval_time": "10s", "alertname": "ReplmonSwitchover", "exp_alerts": []},
        {"eval_time": "10s", "alertname": "ReplmonSwitchoverHalfDone", "exp_alerts": []},
        {"eval_time": "11s", "alertname": "ReplmonSwitchover", "exp_alerts": [done]},
        {"eval_time": "11s", "alertname": "ReplmonSwitchoverHalfDone", "exp_alerts": []},
        {"eval_time": "40s", "alertname": "ReplmonSwitchover", "exp_alerts": [done]},
        *no_finding_alerts(10), *no_finding_alerts(40),
    ]
    promtool_test(tmp_path, series, cases)


def test_a_half_done_switchover_warns_then_goes_critical_naming_the_new_primary(
    tmp_path: Path,
) -> None:
    """MySQL moves to db162 at 10 s, Redis stays on db163: the roles finding is info for
    its 15 s hold, a warning from 25 s and critical from 130 s, and
    ReplmonSwitchoverHalfDone follows it, naming db162; no ReplmonSwitchover."""
    ticks = oriented([directed("db163", "db163")] * 10 + [directed("db162", "db163")] * 131)
    series = page_series(ticks, "shop")
    cases = [
        {"eval_time": "24s", "alertname": "ReplmonSwitchoverHalfDone",
         "exp_alerts": [roles_alert("shop", "db162", "info", done=False)]},
        {"eval_time": "25s", "alertname": "ReplmonSwitchoverHalfDone",
         "exp_alerts": [roles_alert("shop", "db162", "warning", done=False)]},
        {"eval_time": "129s", "alertname": "ReplmonSwitchoverHalfDone",
         "exp_alerts": [roles_alert("shop", "db162", "warning", done=False)]},
        {"eval_time": "130s", "alertname": "ReplmonSwitchoverHalfDone",
         "exp_alerts": [roles_alert("shop", "db162", "critical", done=False)]},
        *({"eval_time": f"{at}s", "alertname": "ReplmonSwitchover", "exp_alerts": []}
          for at in (10, 25, 130)),
        *no_finding_alerts(25), *no_finding_alerts(130),
    ]
    promtool_test(tmp_path, series, cases)


def test_redis_failed_over_alone_is_one_service_alert_naming_its_primary(
        tmp_path: Path) -> None:
    """Redis moves to db162 at 10 s with MySQL left on db163, Redis on its own (Sentinel's
    groups): ReplmonServiceSwitchover names db162 and Redis; no ReplmonSwitchover (whose
    primary would be MySQL's) and no half-done alert."""
    from replmon.model.roles import default_groups

    ticks = oriented([directed("db163", "db163")] * 10 + [directed("db163", "db162")] * 30,
                     groups=default_groups(sentinel=True))
    series = page_series(ticks, "shop")
    labels = {"pair": "shop", "node": "pair", "check": "roles", "key": "redis:db162",
              "severity": "info", "incident": "roles/pair/redis:db162",
              "incident_role": "root", "service": "redis", "primary": "db162", **INSTANCE}
    alert = {"exp_labels": labels, "exp_annotations": {
        "screen": "replmon --config FLEET.toml --pair shop",
        "summary": "shop: db162 is now the redis primary",
        "description": (
            "The redis of pair shop failed over on its own (Redis under Sentinel, or as "
            "[roles] together says): db162 is its primary now, the other services stay "
            "where they were. Check that clients of redis write to db162 only. When, and "
            f"what Sentinel said: http://{INSTANCE['instance']}/findings.json")}}
    cases = [
        {"eval_time": "9s", "alertname": "ReplmonServiceSwitchover", "exp_alerts": []},
        {"eval_time": "11s", "alertname": "ReplmonServiceSwitchover", "exp_alerts": [alert]},
        *({"eval_time": f"{at}s", "alertname": name, "exp_alerts": []}
          for at in (11, 30) for name in ("ReplmonSwitchover", "ReplmonSwitchoverHalfDone")),
        *no_finding_alerts(30),
    ]
    promtool_test(tmp_path, series, cases)
