"""``--config FLEET.toml --pair NAME``: one pair of serve's fleet file for the screen,
check, record and sample; a fleet file without --pair, or an unknown name, is one line
that says what to give. And the `screen` annotation of the rules that names the command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replmon.cli import config_from_args, main
from replmon.cli_args import build_parser
from replmon.config import Config
from replmon.errors import ConfigError
from replmon.fleet.rules import RULES, rules

FLEET = """
interval = "5s"
timeout = "3s"
[defaults]
mysql = { user = "monitor", password_env = "FLEET_PW" }
ssh = { mode = "off" }
[checks.latency_bound]
enabled = false
[[pair]]
name = "shop"
primary = "db163"
replica = { host = "db162", mysql = { port = 3307 } }
checks = { stmt_vs_rows = { open_after = "10s" } }
[[pair]]
name = "shop-eu"
primary = "db201"
replica = "db202"
[[pair]]
name = "billing"
primary = "db301"
replica = "db302"
"""

COMMANDS = {"sample": ["--count", "3"], "check": ["--duration", "4s"],
            "record": ["-o", "x.rmrec"], None: []}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.my.cnf of the machine
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet.toml").write_text(FLEET)


def parse(*argv: str) -> Config:
    return config_from_args(build_parser().parse_args(list(argv)))


def argv_for(command: str | None, *opts: str) -> list[str]:
    return [*opts] if command is None else [command, *opts, *COMMANDS[command]]


@pytest.mark.parametrize("command", ["sample", "check", "record", None])
def test_pair_picks_its_nodes_and_checks_on_the_fleet_defaults(command: str | None) -> None:
    args = build_parser().parse_args(argv_for(command, "--config", "fleet.toml",
                                              "--pair", "shop"))
    cfg = config_from_args(args)
    assert (cfg.primary.host, cfg.replica.host) == ("db163", "db162")
    assert cfg.replica.mysql.port == 3307 and cfg.primary.mysql.port is None
    assert {cfg.primary.mysql.user, cfg.replica.mysql.user} == {"monitor"}
    assert cfg.primary.mysql.password_env == "FLEET_PW"
    assert cfg.primary.ssh.mode == "off"
    assert cfg.checks == {"latency_bound": {"enabled": False},
                          "stmt_vs_rows": {"open_after": "10s"}}
    # serve's 5 s ticks and 3 s timeout are the fleet's: the screen keeps its 1 s
    assert (cfg.interval, cfg.timeout) == (1.0, None)


@pytest.mark.parametrize("command", ["sample", "check", "record"])
def test_pair_before_or_after_the_command_is_the_same(command: str) -> None:
    before = build_parser().parse_args(["--config", "fleet.toml", "--pair", "billing",
                                        command, *COMMANDS[command]])
    after = build_parser().parse_args([command, "--config", "fleet.toml", "--pair", "billing",
                                       *COMMANDS[command]])
    assert vars(before) == vars(after) and before.pair == "billing"


def test_the_command_line_wins_over_the_pair() -> None:
    cfg = parse("check", "--config", "fleet.toml", "--pair", "shop", "--interval", "2s",
                "--replica", "db999", "--primary-mysql", "ops@:3310")
    assert (cfg.interval, cfg.replica.host, cfg.replica.mysql.port) == (2.0, "db999", 3307)
    assert (cfg.primary.mysql.user, cfg.primary.mysql.port) == ("ops", 3310)


def test_a_fleet_file_without_pair_names_its_pairs_in_one_line() -> None:
    with pytest.raises(ConfigError) as e:
        parse("check", "--config", "fleet.toml")
    assert str(e.value) == ("fleet.toml is a fleet file (3 pairs: shop, shop-eu, billing): "
                            "give --pair NAME, e.g. --pair shop")


def test_a_big_fleet_shows_a_few_names_and_how_many_more(tmp_path: Path) -> None:
    names = [f"db{i:02}" for i in range(12)]
    (tmp_path / "big.toml").write_text("".join(
        f'[[pair]]\nname = "{n}"\nprimary = "a{n}"\nreplica = "b{n}"\n' for n in names))
    with pytest.raises(ConfigError) as e:
        parse("--config", "big.toml")
    assert str(e.value) == ("big.toml is a fleet file (12 pairs: db00, db01, db02, db03, "
                            "db04, db05 and 6 more): give --pair NAME, e.g. --pair db00")


@pytest.mark.parametrize(("name", "message"), [
    ("shpo", "fleet.toml: no pair 'shpo': did you mean shop or shop-eu?"),
    ("biling", "fleet.toml: no pair 'biling': did you mean billing?"),
    ("cache", "fleet.toml: no pair 'cache': it has 3 pairs: shop, shop-eu, billing"),
])
def test_an_unknown_pair_says_the_close_matches(name: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse("sample", "--config", "fleet.toml", "--pair", name)
    assert str(e.value) == message


def test_pair_needs_a_fleet_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--pair shop picks a pair of a fleet file: "
                                          r"give --config FLEET.toml too$"):
        parse("check", "--primary", "a", "--replica", "b", "--pair", "shop")
    (tmp_path / "one.toml").write_text('[primary]\nhost = "a"\n[replica]\nhost = "b"\n')
    with pytest.raises(ConfigError, match=r"^--pair shop: one.toml is a one-pair config"):
        parse("--config", "one.toml", "--pair", "shop")


def test_a_bad_pair_elsewhere_in_the_fleet_is_named_as_serve_names_it(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(FLEET + '[[pair]]\nname = "x"\nprimary = "a"\n')
    with pytest.raises(ConfigError, match=r"^bad.toml: pair 'x': no replica"):
        parse("--config", "bad.toml", "--pair", "shop")


def test_check_answers_unknown_and_the_others_one_line_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "--config", "fleet.toml"]) == 3
    out = capsys.readouterr().out
    assert out == ("REPLMON UNKNOWN - fleet.toml is a fleet file (3 pairs: shop, shop-eu, "
                   "billing): give --pair NAME, e.g. --pair shop\n")
    for argv in (["--config", "fleet.toml", "--pair", "shpo"],
                 ["sample", "--config", "fleet.toml"],
                 ["record", "-o", "x.rmrec", "--config", "fleet.toml", "--pair", "nope"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("replmon: fleet.toml") and err.count("\n") == 1, err


def test_the_rules_carry_the_screen_command_of_each_pair_alert(
    capsys: pytest.CaptureFixture[str],
) -> None:
    placeholder = 'screen: "replmon --config FLEET.toml --pair {{ $labels.pair }}"'
    assert RULES.count(placeholder) == 9 and RULES.count("- alert:") == 10
    assert main(["rules", "--config", "fleet.toml"]) == 0
    out = capsys.readouterr().out
    path = os.path.abspath("fleet.toml")
    assert out.count(f'screen: "replmon --config {path} --pair {{{{ $labels.pair }}}}"') == 9
    assert out == rules("fleet.toml")
    assert main(["--config", "fleet.toml", "rules"]) == 0  # before the command too
    assert capsys.readouterr().out == out
    spaced = rules("/etc/replmon/my fleet.toml")
    assert json.dumps("replmon --config '/etc/replmon/my fleet.toml' --pair "
                      "{{ $labels.pair }}") in spaced
    with pytest.raises(ValueError, match="template"):
        rules("/etc/{{ x }}.toml")


def test_rules_of_a_file_that_is_no_fleet_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "one.toml").write_text('[primary]\nhost = "a"\n[replica]\nhost = "b"\n')
    assert main(["rules", "--config", "one.toml"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("replmon: one.toml: ")
    assert captured.err.count("\n") == 1, captured.err


def test_each_pair_of_the_fleet_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """--pair shop: the fleet's other pairs are validated as serve validates them, and
    shop once, with the command line over it (not once by the fleet and again by the
    command line)."""
    from collections import Counter

    seen: Counter[str] = Counter()
    real = Config.model_validate

    def counting(data: dict[str, object], **kw: object) -> Config:
        seen[data["primary"]["host"]] += 1  # type: ignore[index]
        return real(data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Config, "model_validate", staticmethod(counting))
    cfg = parse("check", "--config", "fleet.toml", "--pair", "shop", "--interval", "2s")
    assert cfg.interval == 2.0 and cfg.replica.mysql.port == 3307
    assert seen == {"db163": 1, "db201": 1, "db301": 1}


def test_check_replay_takes_the_checks_of_the_chosen_fleet_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """check --replay FILE --config FLEET --pair NAME: that pair's own [checks] (on the
    file's shared ones) judge the recording, as they judge it live."""
    sample = Path(__file__).parents[2] / "sample_sessions" / "replica_lag_growing.rmrec"
    (tmp_path / "lag.toml").write_text(
        '[checks.latency_bound]\nenabled = false\n'
        '[[pair]]\nname = "tolerant"\nprimary = "a"\nreplica = "b"\n'
        'checks = { mysql_replication = { lag_warning_s = 200.0, lag_critical_s = 400.0 } }\n'
        '[[pair]]\nname = "strict"\nprimary = "c"\nreplica = "d"\n')

    def lag_titles(*argv: str) -> list[str]:
        main(["check", "--replay", str(sample), "--format", "json", *argv])
        out = json.loads(capsys.readouterr().out)
        return [f["title"] for f in out["open"] if f["check"] == "mysql_replication"]

    assert lag_titles() == ["replication lag 120 s (over 30 s), growing 60.0 s/min over 59 s"]
    assert lag_titles("--config", "lag.toml", "--pair", "strict") == lag_titles()
    assert lag_titles("--config", "lag.toml", "--pair", "tolerant") == [
        "replication lag 120 s, growing 60.0 s/min over 59 s"]
    assert main(["check", "--replay", str(sample), "--config", "lag.toml"]) == 3
    assert "give --pair NAME" in capsys.readouterr().out
