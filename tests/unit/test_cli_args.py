"""Connection options work before or after the subcommand, defined once: the same
config either way, for every command that connects."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.cli import config_from_args
from replmon.cli_args import build_parser

CONN = ["--primary", "db163", "--replica", "db162", "--primary-mysql", "mon@:3307",
        "--replica-redis", ":6380", "--interval", "2s", "--no-drbd", "-v"]
COMMANDS = {"sample": ["--count", "3"], "check": ["--duration", "4s"],
            "record": ["-o", "x.rmrec"]}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.my.cnf of the machine


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_options_before_and_after_the_command_are_the_same(command: str) -> None:
    before = build_parser().parse_args([*CONN, command, *COMMANDS[command]])
    after = build_parser().parse_args([command, *CONN, *COMMANDS[command]])
    assert vars(before) == vars(after)
    cfg = config_from_args(before)
    assert (cfg.primary.host, cfg.replica.host, cfg.interval) == ("db163", "db162", 2.0)
    assert cfg.primary.mysql.port == 3307 and cfg.primary.mysql.user == "mon"
    assert cfg.replica.redis.port == 6380 and not cfg.primary.drbd.enabled
    assert before.verbose is True


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_option_after_the_command_overrides_the_same_one_before(command: str) -> None:
    args = build_parser().parse_args(["--primary", "a", "--replica", "b", command,
                                 "--primary", "c", *COMMANDS[command]])
    assert (args.primary, args.replica) == ("c", "b")


def test_the_monitor_takes_them_without_a_command() -> None:
    args = build_parser().parse_args([*CONN, "--plain"])
    assert args.command is None and args.plain
    assert config_from_args(args).replica.redis.port == 6380


def test_absent_options_keep_their_defaults_after_a_command() -> None:
    args = build_parser().parse_args(["check", "--primary", "a", "--replica", "b"])
    assert (args.lab, args.no_host, args.interval, args.config) == (False, False, None, None)


def test_lab_scenario_list_and_a_bad_name_start_no_lab() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "replmon", "--lab", "--scenario", "list"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "sql-thread-stopped" in out.stdout
    assert "starting the lab" not in out.stderr
    bad = subprocess.run([sys.executable, "-m", "replmon", "--lab", "--scenario", "nope"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "starting the lab" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "replmon: no scenario 'nope'; replmon --lab --scenario list shows them: "
        "sql-thread-stopped, io-thread-stopped, auto-increment, replica-writable, "
        "errant-write, redis-link-down, redis-maxmemory, switchover, sentinel-failover, "
        "primary-read-only, max-connections, offline-mode, disk-full, redis-noreplicas, "
        "redis-no-master, redis-oom, redis-misconf, replication-link-cut, "
        "replication-link-saturated, monitor-cut, node-cut-off, node-frozen"]


@pytest.mark.parametrize("mysql", ["mariadb-10.11", "mysql-9.7"])
def test_scenario_list_says_what_the_labs_server_runs(
    mysql: str, capsys: pytest.CaptureFixture[str],
) -> None:
    """#54 item 3: the switchover said STOP SLAVE ... CHANGE MASTER TO whatever the lab
    ran. Its words are the statements replmon.lab.switch sends to that server."""
    from types import SimpleNamespace

    from replmon.cli import main
    from replmon.lab import switch

    assert main(["--lab", "--lab-mysql", mysql, "--scenario", "list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines()
                if x.startswith("switchover "))
    sent: list[str] = []
    node = SimpleNamespace(name="n", host="127.0.0.1", repl_host="127.0.0.1", mysql_port=3306,
                           sql=lambda stmt, *args: sent.append(stmt) or [])
    lab = SimpleNamespace(is_mysql=mysql.startswith("mysql"), set_primary=lambda *a: None,
                          repl_user="repl", repl_password="pw")
    switch._promote_mysql(lab, node)  # type: ignore[arg-type]
    switch.replicate_from(lab, node, node)  # type: ignore[arg-type]
    verbs = ("STOP REPLICA", "RESET REPLICA ALL", "CHANGE MASTER TO",
             "CHANGE REPLICATION SOURCE TO", "STOP SLAVE", "RESET SLAVE ALL", "START SLAVE")
    run = {v for v in verbs for stmt in sent if stmt.startswith(v)}
    assert {"STOP REPLICA", "RESET REPLICA ALL"} <= run, sent
    assert "SLAVE" not in line
    for v in verbs:
        assert (v in line) == (v in run), (v, line, sent)
