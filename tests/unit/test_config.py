"""Settings: endpoint strings, TOML, precedence, ~/.my.cnf, and secrets that stay secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.cli import config_from_args
from replmon.cli_args import build_parser
from replmon.config import build_config, parse_endpoint_spec
from replmon.errors import ConfigError
from replmon.resolve import mysql_endpoint, redis_endpoint


@pytest.mark.parametrize(
    ("spec", "kind", "expected"),
    [
        ("off", "mysql", {"enabled": False}),
        (":3307", "mysql", {"port": 3307}),
        ("db1:3307", "mysql", {"host": "db1", "port": 3307}),
        ("monitor@db1:3307", "mysql", {"host": "db1", "port": 3307, "user": "monitor"}),
        ("monitor@:3307", "mysql", {"port": 3307, "user": "monitor"}),
        ("mysql://mon:p%40ss@db1", "mysql", {"host": "db1", "user": "mon", "password": "p@ss"}),
        ("/run/mysqld/mysqld.sock", "mysql", {"socket": "/run/mysqld/mysqld.sock"}),
        ("redis://:s3cret@db1:6380", "redis", {"host": "db1", "port": 6380, "password": "s3cret"}),
        (":6380", "redis", {"port": 6380}),
        ("[::1]:6380", "redis", {"host": "::1", "port": 6380}),
        ("mysql://mon@db1?ssl-mode=verify_ca&ssl-ca=/etc/mysql/ca.pem", "mysql",
         {"host": "db1", "user": "mon", "ssl_mode": "VERIFY_CA", "ssl_ca": "/etc/mysql/ca.pem"}),
    ],
)
def test_endpoint_specs(spec: str, kind: str, expected: dict[str, object]) -> None:
    assert parse_endpoint_spec(spec, kind) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", ["db1:notaport", "http://db1:3306", "db1:99999",
                                  "db1?sslmode=require"])
def test_bad_endpoint_specs_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError, match="bad mysql endpoint"):
        parse_endpoint_spec(spec, "mysql")


def test_defaults_are_3306_and_6379_on_the_node(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("MYSQL_PWD", "REPLMON_MYSQL_PASSWORD", "REDISCLI_AUTH", "REPLMON_REDIS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    argv = ["sample", "--primary", "db163", "--replica", "db162"]
    cfg = config_from_args(build_parser().parse_args(argv))
    m = mysql_endpoint("primary", cfg.primary, cfg.source_timeout)
    r = redis_endpoint("replica", cfg.replica, cfg.source_timeout)
    assert (m.host, m.port, m.password) == ("db163", 3306, None)
    assert (r.host, r.port) == ("db162", 6379)
    assert cfg.interval == 1.0 and cfg.source_timeout == pytest.approx(0.8)


def test_command_line_overrides_toml_per_node(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    toml = tmp_path / "replmon.toml"
    toml.write_text(
        'interval = 2.0\n[primary]\nhost = "db163"\n[primary.mysql]\nuser = "mon"\nport = 3310\n'
        '[replica]\nhost = "db162"\n[replica.redis]\nenabled = false\n'
    )
    args = build_parser().parse_args(
        ["sample", "--config", str(toml), "--primary-mysql", ":3311", "--replica", "db999"]
    )
    cfg = config_from_args(args)
    assert cfg.interval == 2.0
    assert cfg.primary.mysql.user == "mon" and cfg.primary.mysql.port == 3311
    assert cfg.replica.host == "db999" and cfg.replica.redis.enabled is False


def test_password_precedence_and_mycnf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".my.cnf").write_text("[client]\nuser = cnfuser\npassword = 'cnf-pw'\nport=3316\n")
    for var in ("MYSQL_PWD", "REPLMON_MYSQL_PASSWORD", "REPLMON_PRIMARY_MYSQL_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    cfg = build_config({"primary": {"host": "a"}, "replica": {"host": "b"}})
    m = mysql_endpoint("primary", cfg.primary, 0.8)
    assert m.user == "cnfuser" and m.port == 3316
    assert m.password is not None and m.password.get_secret_value() == "cnf-pw"
    monkeypatch.setenv("REPLMON_MYSQL_PASSWORD", "env-pw")
    m = mysql_endpoint("primary", cfg.primary, 0.8)
    assert m.password is not None and m.password.get_secret_value() == "env-pw"
    monkeypatch.setenv("REPLMON_PRIMARY_MYSQL_PASSWORD", "node-pw")
    m = mysql_endpoint("primary", cfg.primary, 0.8)
    assert m.password is not None and m.password.get_secret_value() == "node-pw"
    assert "node-pw" not in repr(m) and "node-pw" not in m.model_dump_json()
    assert "node-pw" not in repr(cfg)


def test_secret_in_url_never_printed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    args = build_parser().parse_args(
        ["sample", "--primary", "a", "--replica", "b", "--primary-mysql", "mysql://u:hunter2@a"]
    )
    cfg = config_from_args(args)
    assert "hunter2" not in repr(cfg) and "hunter2" not in cfg.model_dump_json()
    assert cfg.primary.mysql.password is not None
    assert cfg.primary.mysql.password.get_secret_value() == "hunter2"


def test_missing_node_and_bad_values_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no replica given"):
        config_from_args(build_parser().parse_args(["sample", "--primary", "a"]))
    with pytest.raises(ConfigError, match="timeout .* must be shorter than the interval"):
        build_config({"interval": 1, "timeout": 1.5, "primary": {"host": "a"},
                      "replica": {"host": "b"}})
    with pytest.raises(ConfigError, match="primary.mysql.port"):
        build_config({"primary": {"host": "a", "mysql": {"port": "x"}}, "replica": {"host": "b"}})
    bad = tmp_path / "bad.toml"
    bad.write_text("[primary\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config_from_args(build_parser().parse_args(["sample", "--config", str(bad)]))


def test_resolve_reads_mycnf_once_and_the_factory_never_reads_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """Endpoints are resolved once, when the config is read: the factory builds sources
    from the resolved records without calling back into the config module."""
    import replmon.resolve as config_mod
    from replmon.factory import build_collector
    from replmon.resolve import resolve

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".my.cnf").write_text("[client]\nuser = cnfuser\npassword = cnf-pw\n")
    monkeypatch.setenv("REPLMON_REDIS_PASSWORD", "redis-pw")
    reads: list[object] = []
    real = config_mod.read_mycnf
    monkeypatch.setattr(config_mod, "read_mycnf", lambda *a: reads.append(a) or real(*a))
    cfg = config_from_args(build_parser().parse_args(
        ["--primary", "127.0.0.1", "--replica", "127.0.0.2", "--replica-redis", ":6380",
         "--primary-redis", "off"]))
    pair = resolve(cfg)
    assert len(reads) == 1
    assert pair.primary.mysql is not None and pair.primary.mysql.user == "cnfuser"
    assert pair.replica.redis is not None and pair.replica.redis.port == 6380
    assert pair.primary.redis is None
    assert pair.link_peer == ("127.0.0.2", 6380)
    assert "cnf-pw" not in repr(pair) and "redis-pw" not in pair.model_dump_json()
    monkeypatch.setenv("REPLMON_REDIS_PASSWORD", "changed later")
    for name in ("read_mycnf", "mysql_endpoint", "redis_endpoint", "resolve"):
        monkeypatch.setattr(config_mod, name, None)  # a call back into config would fail
    c = build_collector(pair)
    assert c.replica.sources["redis"].endpoint.password.get_secret_value() == "redis-pw"  # type: ignore[attr-defined]
    assert "redis" not in c.primary.sources


@pytest.mark.parametrize(
    ("mysql", "cnf", "host", "mode"),
    [
        ({}, "", "db1", "PREFERRED"),  # MySQL's client default
        ({}, "", "127.0.0.1", "DISABLED"),  # loopback: TLS buys nothing
        ({"socket": "/run/mysqld/mysqld.sock"}, "", "db1", "DISABLED"),
        ({"ssl_ca": "/ca.pem"}, "", "db1", "VERIFY_CA"),  # a CA and no mode, as mysql does
        ({}, "ssl-mode = REQUIRED\n", "db1", "REQUIRED"),
        ({}, "ssl-ca = /cnf-ca.pem\n", "127.0.0.1", "VERIFY_CA"),
        ({"tls": True}, "", "127.0.0.1", "REQUIRED"),  # the older spelling
        ({"tls": False}, "ssl-mode = VERIFY_IDENTITY\n", "db1", "DISABLED"),
        ({"ssl_mode": "VERIFY_IDENTITY"}, "ssl-mode = DISABLED\n", "db1", "VERIFY_IDENTITY"),
    ],
)
def test_ssl_mode_from_config_mycnf_and_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mysql: dict[str, object], cnf: str,
    host: str, mode: str,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".my.cnf").write_text("[client]\n" + cnf)
    cfg = build_config({"primary": {"host": host, "mysql": mysql}, "replica": {"host": "b"}})
    assert mysql_endpoint("primary", cfg.primary, 0.8).tls_mode == mode


def test_a_bad_ssl_mode_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".my.cnf").write_text("[client]\nssl-mode = VERIFY\n")
    cfg = build_config({"primary": {"host": "a"}, "replica": {"host": "b"}})
    with pytest.raises(ConfigError, match="ssl-mode 'VERIFY': expected one of DISABLED"):
        mysql_endpoint("primary", cfg.primary, 0.8)
    with pytest.raises(ConfigError, match="ssl_mode"):
        build_config({"primary": {"host": "a", "mysql": {"ssl_mode": "ON"}},
                      "replica": {"host": "b"}})
