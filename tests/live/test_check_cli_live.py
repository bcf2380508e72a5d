"""`replmon check` on the lab: exit codes and findings from real servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replmon.cli import main
from replmon.lab import Lab

pytestmark = pytest.mark.live


def args(lab: Lab, *extra: str) -> list[str]:
    return [
        "check", "--primary", "127.0.0.1", "--replica", "127.0.0.1",
        "--primary-mysql", f"{lab.monitor_user}@:{lab.primary.mysql_port}",
        "--replica-mysql", f"{lab.monitor_user}@:{lab.replica.mysql_port}",
        "--primary-redis", f":{lab.primary.redis_port}",
        "--replica-redis", f":{lab.replica.redis_port}",
        "--interval", "0.3", "--duration", "1.5s", *extra,
    ]


@pytest.fixture
def creds(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLMON_MYSQL_PASSWORD", lab.monitor_password)
    monkeypatch.setenv("REPLMON_REDIS_PASSWORD", lab.redis_password)


@pytest.mark.usefixtures("creds")
def test_healthy_lab_is_ok(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(args(lab))
    out = capsys.readouterr().out
    assert out.startswith("REPLMON OK - "), out
    assert code == 0


@pytest.mark.usefixtures("creds")
def test_unreachable_primary_mysql_is_critical_in_json(
    lab: Lab, capsys: pytest.CaptureFixture[str],
) -> None:
    closed = lab.free_port()
    argv = args(lab, "--format", "json")
    argv[argv.index("--primary-mysql") + 1] = f"{lab.monitor_user}@:{closed}"
    code = main(argv)
    d = json.loads(capsys.readouterr().out)
    assert code == 2 and d["status"] == "CRITICAL"
    f = next(f for f in d["open"] if f["check"] == "source_health")
    assert f["node"] == "primary" and f["key"] == "mysql" and str(closed) in f["title"]
    # the advice of a refused connection (the service, its port and address), not DNS's
    assert "connection refused at " in f["title"] and "nothing listens" in f["cause"], f
    assert "bind-address" in f["next_step"] and "DNS" not in f["next_step"], f
    assert lab.monitor_password not in json.dumps(d)


def test_bad_config_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--primary", "a", "--replica", "b", "--interval", "1",
                 "--timeout", "2"])
    assert code == 3
    assert capsys.readouterr().out.startswith("REPLMON UNKNOWN - ")


def fleet_file(lab: Lab, path: Path) -> Path:
    """serve's fleet file: the lab pair (as "lab") beside a pair of nothing."""
    path.write_text(f"""
interval = "5s"
[defaults]
mysql = {{ user = "{lab.monitor_user}", password_env = "REPLMON_MYSQL_PASSWORD" }}
redis = {{ password_env = "REPLMON_REDIS_PASSWORD" }}
[[pair]]
name = "elsewhere"
primary = "db163.invalid"
replica = "db162.invalid"
[[pair]]
name = "lab"
[pair.primary]
host = "127.0.0.1"
mysql = {{ port = {lab.primary.mysql_port} }}
redis = {{ port = {lab.primary.redis_port} }}
[pair.replica]
host = "127.0.0.1"
mysql = {{ port = {lab.replica.mysql_port} }}
redis = {{ port = {lab.replica.redis_port} }}
""")
    return path


HOST_CHECKS = {"disk_saturation", "memory_ceiling", "link_saturation"}
"""Checks that judge the machine the lab runs on, which the suite shares."""


@pytest.mark.usefixtures("creds")
def test_check_and_sample_take_a_pair_of_a_fleet_file(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    fleet = str(fleet_file(lab, tmp_path / "fleet.toml"))
    code = main(["check", "--config", fleet, "--pair", "lab", "--interval", "0.3",
                 "--duration", "1.5s", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    # the lab pair judged and healthy; this shared machine's own disk may be busy (another
    # suite's clone deleted beside it made disk_saturation warn once): not the pair's
    pair_findings = [f["check"] for f in d["open"] if f["check"] not in HOST_CHECKS]
    assert code in (0, 1) and d["status"] in ("OK", "WARNING") and pair_findings == [], d
    assert main(["--config", fleet, "--pair", "lab", "sample", "--count", "2", "--json",
                 "--interval", "0.3"]) == 0
    ticks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(ticks) == 2
    assert main(["check", "--config", fleet]) == 3
    assert capsys.readouterr().out == (
        f"REPLMON UNKNOWN - {fleet} is a fleet file (2 pairs: elsewhere, lab): give --pair "
        "NAME, e.g. --pair elsewhere\n")
