"""config_drift on real ticks: the auto_increment session recorded on the lab (MariaDB 10.11 and
Redis 7.0 variables as read), with one setting changed at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from replmon.checks.config_drift import CHECK, MUST_AGREE, NAMES

from replmon.endpoints import RedisEndpoint
from replmon.errors import ParseError
from replmon.model.findings import Severity
from replmon.model.mysql import VARIABLE_NAMES
from replmon.model.redis import RedisSample
from replmon.model.tick import Tick
from replmon.session.recording import open_recording
from replmon.sources.redis_info import CONFIG_PARAMS, RedisSource, _ErrorReply, _takes_many
from replmon.sources.redis_parse import parse_buffer_limit, parse_min_replicas
from replmon.testing.synth import observe, status
from replmon.units import fmt_setting

SESSION = (Path(__file__).resolve().parents[3] / "sample_sessions"
           / "auto_increment_updates_miss.rmrec")


@pytest.fixture(scope="module")
def seed004() -> Tick:
    """The session's last tick without the settings known by several names (MariaDB
    10.11 reports log_slave_updates, tx_isolation, slave_parallel_*): each test sets the
    names it compares."""
    with open_recording(SESSION) as rec:
        t = rec.tick_at(len(rec) - 1)
    aliases = {n for names in NAMES.values() for n in names}
    for role in ("primary", "replica"):
        n = getattr(t, role)
        kept = {k: v for k, v in n.mysql.variables.items() if k not in aliases}
        t = t.model_copy(update={role: n.model_copy(update={
            "mysql": n.mysql.model_copy(update={"variables": kept})})})
    return t


def changed(t: Tick, role: str, mysql: dict[str, str] | None = None, **redis: Any) -> Tick:
    n = getattr(t, role)
    m = n.mysql.model_copy(update={"variables": {**n.mysql.variables, **(mysql or {})}})
    r = n.redis.model_copy(update=redis)
    return t.model_copy(update={role: n.model_copy(update={"mysql": m, "redis": r})})


def test_seed_004s_root_cause_in_one_look(seed004: Tick) -> None:
    (o,) = observe(CHECK, [seed004])
    assert (o.node, o.key, o.severity) == ("pair", "auto_increment_increment", Severity.WARNING)
    assert o.title == "auto_increment_increment differs: primary 2, replica 1"
    assert "UPDATEs by id that then change no row" in o.cause  # what seed 004 saw


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
    # sizes as every view writes them (IEC); maxmemory 0 is Redis's "no limit"
    assert found["maxmemory"].title == "maxmemory differs: primary 0 (no limit), replica 64 MiB"
    assert found["maxmemory-policy"].severity is Severity.WARNING
    t = changed(base, "replica", replica_buffer_limit=(8192, 4096, 1))
    t = changed(t, "primary", replica_buffer_limit=(268435456, 67108864, 60))
    (o,) = observe(CHECK, [t])
    assert o.title == ("client-output-buffer-limit replica differs: primary 256 MiB "
                       "64 MiB 60 s, replica 8 KiB 4 KiB 1 s")


def test_a_node_that_does_not_report_a_setting_is_not_compared(seed004: Tick) -> None:
    n = seed004.replica
    gone = {k: v for k, v in n.mysql.variables.items() if k != "auto_increment_increment"}
    t = seed004.model_copy(update={"replica": n.model_copy(update={
        "mysql": n.mysql.model_copy(update={"variables": gone})})})
    assert observe(CHECK, [t]) == []


# --- issue #30 item 5: the settings reviewed per server -------------------------------
# Values as the lab's servers report them (MySQL 9.7.4, MariaDB 11.8.9, Redis 6.2.14,
# Valkey 8.1.1): SHOW GLOBAL VARIABLES / CONFIG GET, read with the names below.

def both(t: Tick, primary: dict[str, str], replica: dict[str, str]) -> Tick:
    return changed(changed(t, "primary", primary), "replica", replica)


def dropped(t: Tick, role: str, name: str) -> Tick:
    n = getattr(t, role)
    gone = {k: v for k, v in n.mysql.variables.items() if k != name}
    return t.model_copy(update={role: n.model_copy(update={
        "mysql": n.mysql.model_copy(update={"variables": gone})})})


@pytest.fixture
def quiet(seed004: Tick) -> Tick:
    """Seed 004 with its drift fixed: nothing to say."""
    t = changed(seed004, "replica", {"auto_increment_increment": "2",
                                     "auto_increment_offset": "2"})
    assert observe(CHECK, [t]) == []
    return t


NEW_SETTINGS = [
    # name, primary, replica (as a server prints them), severity
    ("log_bin", "ON", "OFF", Severity.WARNING),
    ("lower_case_table_names", "0", "1", Severity.WARNING),
    ("sql_mode", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                 "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
     "NO_ENGINE_SUBSTITUTION", Severity.WARNING),
    ("log_replica_updates", "ON", "OFF", Severity.INFO),
    ("enforce_gtid_consistency", "ON", "WARN", Severity.INFO),
    ("binlog_row_image", "FULL", "MINIMAL", Severity.INFO),
    ("collation_server", "utf8mb4_0900_ai_ci", "latin1_swedish_ci", Severity.INFO),
    ("time_zone", "SYSTEM", "+02:00", Severity.INFO),
    ("transaction_isolation", "REPEATABLE-READ", "READ-COMMITTED", Severity.INFO),
    ("max_allowed_packet", "67108864", "16777216", Severity.INFO),
    ("replica_parallel_workers", "4", "0", Severity.INFO),
    ("replica_preserve_commit_order", "ON", "OFF", Severity.INFO),
]


@pytest.mark.parametrize(("name", "a", "b", "severity"), NEW_SETTINGS,
                         ids=[s[0] for s in NEW_SETTINGS])
def test_a_reviewed_setting_that_differs_is_flagged_and_an_equal_one_is_not(
        quiet: Tick, name: str, a: str, b: str, severity: Severity) -> None:
    (o,) = observe(CHECK, [both(quiet, {name: a}, {name: b})])
    assert (o.key, o.node, o.severity) == (name, "pair", severity)
    assert o.title == f"{name} differs: primary {fmt_setting(name, a)}, replica " \
        f"{fmt_setting(name, b)}"
    if name == "max_allowed_packet":  # bytes, IEC: 67108864 is 64 MiB
        assert o.title == f"{name} differs: primary 64 MiB, replica 16 MiB"
    assert o.cause == next(why for n, _, why in MUST_AGREE if n == name)
    assert observe(CHECK, [both(quiet, {name: a}, {name: a})]) == []
    assert observe(CHECK, [both(quiet, {name: b}, {name: b.lower()})]) == []  # ON = on
    assert observe(CHECK, [dropped(both(quiet, {name: a}, {name: b}), "primary", name)]
                   ) == []  # reported by one node only


def test_every_compared_setting_is_read_from_the_server() -> None:
    """The source reads VARIABLE_NAMES only: a name config_drift compares but nobody reads
    would never differ."""
    compared = {n for name, _, _ in MUST_AGREE for n in NAMES.get(name, (name,))}
    compared |= {"server_id", "auto_increment_offset", *NAMES["replica_max_allowed_packet"]}
    assert compared <= set(VARIABLE_NAMES), compared - set(VARIABLE_NAMES)


@pytest.mark.parametrize(("old", "new", "a", "b"), [
    ("log_slave_updates", "log_replica_updates", "ON", "OFF"),  # MariaDB, MySQL < 8.0.26
    ("tx_isolation", "transaction_isolation", "REPEATABLE-READ", "READ-COMMITTED"),
    ("slave_parallel_threads", "replica_parallel_workers", "4", "0"),  # MariaDB
    ("slave_parallel_workers", "replica_parallel_workers", "4", "0"),  # MySQL < 8.0.26
    ("slave_preserve_commit_order", "replica_preserve_commit_order", "ON", "OFF"),
])
def test_a_setting_under_its_other_name_is_the_same_setting(
        quiet: Tick, old: str, new: str, a: str, b: str) -> None:
    # both nodes of the old name (MariaDB 10.11 says only log_slave_updates, tx_isolation):
    # one finding, keyed by the new name (the drift view's row), titled as the server says
    (o,) = observe(CHECK, [both(quiet, {old: a}, {old: b})])
    assert (o.key, o.title) == (new, f"{old} differs: primary {a}, replica {b}")
    assert o.next_step.startswith(f"Set {old} alike")
    # one node of each name: compared as one setting
    assert observe(CHECK, [both(quiet, {new: a}, {old: a})]) == []
    (o,) = observe(CHECK, [both(quiet, {new: a}, {old: b})])
    assert (o.key, o.title) == (new, f"{new} differs: primary {a}, replica {b}")
    # MySQL 8.0.26+ reports both names with one value: the new one is read, once
    (o,) = observe(CHECK, [both(quiet, {new: a, old: a}, {new: b, old: b})])
    assert o.title == f"{new} differs: primary {a}, replica {b}"


def test_mariadb_11_8_and_mysql_9_7_as_read_on_the_lab_are_no_drift(quiet: Tick) -> None:
    """Each server's own spelling, as SHOW GLOBAL VARIABLES gave it on the lab (equal on
    both nodes of a lab): nothing to say, so none of the names collide."""
    mariadb = {"log_slave_updates": "ON", "slave_max_allowed_packet": "1073741824",
               "slave_parallel_threads": "0", "slave_parallel_workers": "0",
               "max_allowed_packet": "16777216", "transaction_isolation": "REPEATABLE-READ",
               "tx_isolation": "REPEATABLE-READ", "collation_server": "utf8mb4_uca1400_ai_ci"}
    mysql = {"log_replica_updates": "ON", "log_slave_updates": "ON",
             "replica_max_allowed_packet": "1073741824", "slave_max_allowed_packet": "1073741824",
             "replica_parallel_workers": "4", "slave_parallel_workers": "4",
             "replica_preserve_commit_order": "ON", "slave_preserve_commit_order": "ON",
             "enforce_gtid_consistency": "ON", "max_allowed_packet": "67108864"}
    for v in (mariadb, mysql):
        assert observe(CHECK, [both(quiet, v, v)]) == []


def test_a_replica_that_refuses_packets_the_primary_accepts(quiet: Tick) -> None:
    t = both(quiet, {"max_allowed_packet": "67108864"},
             {"max_allowed_packet": "67108864", "replica_max_allowed_packet": "1048576"})
    (o,) = observe(CHECK, [t])
    assert (o.key, o.severity) == ("replica_max_allowed_packet", Severity.WARNING)
    assert o.title == ("replica_max_allowed_packet below the other node's max_allowed_packet: "
                       "primary max_allowed_packet 64 MiB, replica "
                       "replica_max_allowed_packet 1 MiB")
    assert "(1 MiB)" in o.cause and "up to 64 MiB from its clients" in o.cause
    assert "stops replication (error 1153" in o.cause
    # MariaDB's name; the limit equal to the packet is enough
    t = both(quiet, {"max_allowed_packet": "16777216"},
             {"max_allowed_packet": "16777216", "slave_max_allowed_packet": "1048576"})
    (o,) = observe(CHECK, [t])
    assert o.title.startswith("slave_max_allowed_packet below")
    t = changed(t, "replica", {"slave_max_allowed_packet": "16777216"})
    assert observe(CHECK, [t]) == []
    # after a failover: the primary's own limit below the replica's max_allowed_packet
    t = both(quiet, {"max_allowed_packet": "16777216", "slave_max_allowed_packet": "1048576"},
             {"max_allowed_packet": "16777216", "slave_max_allowed_packet": "1073741824"})
    (o,) = observe(CHECK, [t])
    assert o.title == ("slave_max_allowed_packet below the other node's max_allowed_packet "
                       "after a failover: primary slave_max_allowed_packet 1 MiB, replica "
                       "max_allowed_packet 16 MiB")
    # the defaults (1 GiB) and an unreadable value say nothing
    t = both(quiet, {"max_allowed_packet": "67108864", "replica_max_allowed_packet": "1073741824"},
             {"max_allowed_packet": "67108864", "replica_max_allowed_packet": "x"})
    assert observe(CHECK, [t]) == []


def test_min_replicas_to_write_differs(quiet: Tick) -> None:
    t = both(quiet, {}, {})
    t = changed(changed(t, "primary", min_replicas=(0, 10)), "replica", min_replicas=(1, 10))
    (o,) = observe(CHECK, [t])
    assert (o.key, o.severity) == ("min-replicas-to-write", Severity.WARNING)
    assert o.title == "min-replicas-to-write differs: primary 0, replica 1 (max-lag 10 s)"
    assert "NOREPLICAS" in o.cause
    # the lag means nothing while the count is 0; it does once the count is set
    t = changed(changed(t, "primary", min_replicas=(0, 10)), "replica", min_replicas=(0, 20))
    assert observe(CHECK, [t]) == []
    t = changed(changed(t, "primary", min_replicas=(1, 10)), "replica", min_replicas=(1, 20))
    (o,) = observe(CHECK, [t])
    assert o.title == ("min-replicas-to-write differs: primary 1 (max-lag 10 s), "
                       "replica 1 (max-lag 20 s)")
    # Redis 6.2 (one parameter per CONFIG GET: not read) on one node: not compared
    t = changed(t, "replica", min_replicas=None)
    assert observe(CHECK, [t]) == []


def test_appendonly_differs(quiet: Tick) -> None:
    t = changed(quiet, "replica", aof_enabled=True)  # INFO aof_enabled: the primary's is 0
    (o,) = observe(CHECK, [t])
    assert (o.key, o.severity) == ("appendonly", Severity.INFO)
    assert o.title == "appendonly differs: primary no, replica yes"
    assert observe(CHECK, [changed(t, "primary", aof_enabled=True)]) == []


# the read side: one CONFIG GET with the three parameters (Valkey 8.1.1's reply on the lab)
COBL = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
VALKEY = {"client-output-buffer-limit": COBL, "min-replicas-max-lag": "10",
          "min-replicas-to-write": "0"}


def test_one_config_get_reply_gives_the_buffer_limit_and_min_replicas() -> None:
    flat = [x for kv in VALKEY.items() for x in kv]  # RESP2, in the server's order
    for reply in (VALKEY, flat, flat[2:] + flat[:2]):
        assert parse_buffer_limit(reply) == (268435456, 67108864, 60)
        assert parse_min_replicas(reply) == (0, 10)
    only_limit = ["client-output-buffer-limit", COBL]  # Redis < 7.0: asked alone
    assert (parse_buffer_limit(only_limit), parse_min_replicas(only_limit)) == (
        (268435456, 67108864, 60), None)
    with pytest.raises(ParseError, match="min-replicas"):
        parse_min_replicas({**VALKEY, "min-replicas-to-write": "many"})


def redis_sample(server: str, version: str) -> RedisSample:
    return RedisSample(status=status("ok"), wall=0.0, mono=0.0, server=server,
                       version=version)


@pytest.mark.parametrize(("server", "version", "many"), [
    ("redis", "6.2.14", False),  # "Unknown subcommand or wrong number of arguments"
    ("redis", "7.0.15", True), ("redis", "8.0.2", True),
    ("valkey", "8.1.1", True), ("redis", "", False)])
def test_several_parameters_are_asked_of_servers_that_take_them(
        server: str, version: str, many: bool) -> None:
    assert _takes_many(redis_sample(server, version)) is many


async def test_a_server_that_refuses_the_long_config_get_is_asked_the_short_one() -> None:
    src = RedisSource(RedisEndpoint())
    asked: list[tuple[str, ...]] = []

    async def command(_conn: object, *args: str) -> object:
        asked.append(args)
        if len(args) > 3:
            raise _ErrorReply("ERR Unknown subcommand or wrong number of arguments for 'GET'")
        return ["client-output-buffer-limit", COBL]

    src._command = command  # type: ignore[method-assign]
    got = await src._config_get(None, True)  # type: ignore[arg-type]
    assert got == ((268435456, 67108864, 60), None, (None, None), None)
    assert asked == [("CONFIG", "GET", *CONFIG_PARAMS), ("CONFIG", "GET", CONFIG_PARAMS[0])]
    asked.clear()
    got = await src._config_get(None, False)  # type: ignore[arg-type]
    assert asked == [("CONFIG", "GET", "client-output-buffer-limit")]
