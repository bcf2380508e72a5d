"""replmon.settings: a run's pair from the lab's nodes, the --config file and the command
line, in one place. The options are a table: each row names a real key of the config,
and one more row is all a new option needs there (beside its grammar in cli_args)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon import settings
from replmon.cli_args import build_parser
from replmon.config import Config, NodeConfig


def test_every_row_names_a_key_of_the_config() -> None:
    assert {key.split(".")[0] for key, _ in settings.PAIR_FLAGS} <= set(Config.model_fields)
    assert {key.split(".")[0] for key, _ in settings.NODE_FLAGS} <= set(NodeConfig.model_fields)


def test_a_new_option_is_one_row(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An option the parser does not have (a pair_lag hold from the command line, say)
    set on the parsed options, and its row: it lands under its dotted key, over the
    file's, and nothing else changes."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "pair.toml").write_text(
        '[primary]\nhost = "a"\n[replica]\nhost = "b"\n'
        '[checks.pair_lag]\nheartbeat_table = "file.heartbeat"\nopen_after = "5s"\n')
    args = build_parser().parse_args(["check", "--config", str(tmp_path / "pair.toml")])
    without = settings.config_from_args(args)
    assert without.checks["pair_lag"]["open_after"] == "5s"
    args.lag_open_after = "9s"
    monkeypatch.setattr(settings, "PAIR_FLAGS", (*settings.PAIR_FLAGS, (
        "checks.pair_lag.open_after", lambda a: getattr(a, "lag_open_after", None))))
    cfg = settings.config_from_args(args)
    # the older spelling of heartbeat_table is read into the one key
    assert cfg.checks["pair_lag"] == {"open_after": "9s"}
    assert cfg.heartbeat_table == "file.heartbeat"
    assert cfg.model_dump(exclude={"checks"}) == without.model_dump(exclude={"checks"})


def test_heartbeat_table_and_sentinel_are_rows(tmp_path: Path) -> None:
    args = build_parser().parse_args(["check", "--primary", "a", "--replica", "b",
                                      "--heartbeat-table", "percona.heartbeat",
                                      "--sentinel", "127.0.0.1:26379/pair"])
    cfg = settings.config_from_args(args)
    assert cfg.heartbeat_table == "percona.heartbeat"
    assert cfg.sentinel is not None and cfg.sentinel.master_name == "pair"


def test_the_layers_are_read_once_and_laid_over_the_labs_nodes(tmp_path: Path) -> None:
    """--lab: the file and the options are read (and judged) before the lab starts; the
    lab's nodes go under them when it is up."""
    (tmp_path / "pair.toml").write_text('[replica]\nname = "standby"\n')
    args = build_parser().parse_args(["--config", str(tmp_path / "pair.toml"),
                                      "--primary-redis", ":6390", "--interval", "2s"])
    pair = settings.pair_settings(args)
    lab = {"primary": {"host": "127.0.0.1", "redis": {"port": 6380}},
           "replica": {"host": "127.0.0.1", "name": "lab-replica"}}
    cfg = pair.config(lab)
    assert (cfg.primary.redis.port, cfg.replica.name, cfg.interval) == (6390, "standby", 2.0)


def test_heartbeat_table_is_one_key_and_the_older_spelling_is_still_read(tmp_path: Path) -> None:
    """``[checks.pair_lag] heartbeat_table`` (the older spelling) lands in the one key,
    ``heartbeat_table``, and leaves the check's table; the top-level key wins."""
    (tmp_path / "old.toml").write_text(
        '[primary]\nhost = "a"\n[replica]\nhost = "b"\n'
        '[checks.pair_lag]\nheartbeat_table = "old.hb"\nopen_after = "5s"\n')
    old = settings.config_from_args(build_parser().parse_args(
        ["check", "--config", str(tmp_path / "old.toml")]))
    assert old.heartbeat_table == "old.hb"
    assert old.checks["pair_lag"] == {"open_after": "5s"}
    new = settings.config_from_args(build_parser().parse_args(
        ["check", "--config", str(tmp_path / "old.toml"), "--heartbeat-table", "new.hb"]))
    assert new.heartbeat_table == "new.hb" and "heartbeat_table" not in new.checks["pair_lag"]
