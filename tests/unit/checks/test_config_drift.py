"""config_drift on real ticks: seed 004's session recorded on the lab (MariaDB 10.11 and
Redis 7.0 variables as read), with one setting changed at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from replmon.checks.config_drift import CHECK

from replmon.model.findings import Severity
from replmon.model.tick import Tick
from replmon.session.replay import open_recording
from replmon.testing.synth import observe

SESSION = Path(__file__).resolve().parents[3] / "sample_sessions" / "seed004_auto_increment.rmrec"


@pytest.fixture(scope="module")
def seed004() -> Tick:
    with open_recording(SESSION) as rec:
        return rec.tick_at(len(rec) - 1)


def changed(t: Tick, role: str, mysql: dict[str, str] | None = None, **redis: Any) -> Tick:
    n = getattr(t, role)
    m = n.mysql.model_copy(update={"variables": {**n.mysql.variables, **(mysql or {})}})
    r = n.redis.model_copy(update=redis)
    return t.model_copy(update={role: n.model_copy(update={"mysql": m, "redis": r})})


def test_seed_004s_root_cause_in_one_look(seed004: Tick) -> None:
    (o,) = observe(CHECK, [seed004])
    assert (o.node, o.key, o.severity) == ("pair", "auto_increment_increment", Severity.WARNING)
    assert o.title == "auto_increment_increment differs: primary 2, replica 1"
    assert "seed 004" in o.cause


def test_the_same_setting_on_both_is_no_drift(seed004: Tick) -> None:
    t = changed(seed004, "replica", {"auto_increment_increment": "2"})
    # the offsets are equal (1, 1) with a step of 2: worth an info for master-master
    (o,) = observe(CHECK, [t])
    assert (o.key, o.severity) == ("auto_increment_offset", Severity.INFO)
    t = changed(t, "replica", {"auto_increment_offset": "2"})
    assert observe(CHECK, [t]) == []


@pytest.mark.parametrize(("name", "value", "severity"), [
    ("binlog_format", "STATEMENT", Severity.WARNING),
    ("gtid_strict_mode", "ON", Severity.WARNING),
    ("sync_binlog", "1", Severity.INFO),
    ("innodb_flush_log_at_trx_commit", "0", Severity.INFO),
    ("max_connections", "151", Severity.INFO),
])
def test_mysql_settings_that_must_agree(seed004: Tick, name: str, value: str,
                                        severity: Severity) -> None:
    base = changed(seed004, "replica", {"auto_increment_increment": "2",
                                        "auto_increment_offset": "2"})
    assert name in base.primary.mysql.variables, name  # read on the lab, not made up
    found = {o.key: o for o in observe(CHECK, [changed(base, "replica", {name: value})])}
    assert found[name].severity is severity
    assert found[name].title.startswith(f"{name} differs: primary ")


def test_equal_server_ids_are_a_warning(seed004: Tick) -> None:
    sid = seed004.primary.mysql.variables["server_id"]
    found = {o.key: o for o in observe(CHECK, [changed(seed004, "replica", {"server_id": sid})])}
    assert found["server_id"].title == f"server_id is the same: primary {sid}, replica {sid}"


def test_redis_settings(seed004: Tick) -> None:
    base = changed(seed004, "replica", {"auto_increment_increment": "2",
                                        "auto_increment_offset": "2"})
    t = changed(base, "replica", maxmemory=64 << 20, maxmemory_policy="allkeys-lru")
    found = {o.key: o for o in observe(CHECK, [t])}
    assert found["maxmemory"].severity is Severity.WARNING
    assert found["maxmemory"].title == "maxmemory differs: primary 0, replica 67108864"
    assert found["maxmemory-policy"].severity is Severity.WARNING
    t = changed(base, "replica", replica_buffer_limit=(8192, 4096, 1))
    t = changed(t, "primary", replica_buffer_limit=(268435456, 67108864, 60))
    (o,) = observe(CHECK, [t])
    assert o.title == ("client-output-buffer-limit replica differs: primary 268435456 "
                       "67108864 60, replica 8192 4096 1")


def test_a_node_that_does_not_report_a_setting_is_not_compared(seed004: Tick) -> None:
    n = seed004.replica
    gone = {k: v for k, v in n.mysql.variables.items() if k != "auto_increment_increment"}
    t = seed004.model_copy(update={"replica": n.model_copy(update={
        "mysql": n.mysql.model_copy(update={"variables": gone})})})
    assert observe(CHECK, [t]) == []
