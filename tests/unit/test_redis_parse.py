"""INFO parsing on real captured output (tests/fixtures/redis/, origins in its
README.md) and on garbage: a result or ParseError, never another exception."""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replmon.errors import ParseError
from replmon.model.redis import RedisReplica, RedisSample
from replmon.sources.redis_parse import (
    FIELDS_READ,
    build_redis_sample,
    parse_info,
    parse_nested,
    read_redis_info,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "redis"
ALL_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.txt"))


def raw(name: str) -> str:
    """The capture as redis-py hands it over: CRLF kept (Path.read_text would drop the CRs)."""
    return (FIXTURES / name).read_bytes().decode()


def load(name: str) -> RedisSample:
    return build_redis_sample(parse_info(raw(name)))


# --- parse_info ---------------------------------------------------------------


def test_parse_info_crlf_sections_and_unknown_fields() -> None:
    text = "# Server\r\nredis_version:7.0.15\r\nfuture_field:a:b:c\r\n\r\n# Keyspace\r\n"
    assert parse_info(text) == {"redis_version": "7.0.15", "future_field": "a:b:c"}


def test_parse_info_splits_on_first_colon_so_ipv6_survives() -> None:
    info = parse_info("slave0:ip=::1,port=6380,state=online,offset=28,lag=1\n")
    assert info["slave0"] == "ip=::1,port=6380,state=online,offset=28,lag=1"


def test_parse_info_keeps_raw_strings() -> None:
    info = parse_info(raw("redis7.0_master.txt"))
    assert info["master_replid2"] == "0000000000000000000000000000000000000000"
    assert info["used_memory_peak_perc"] == "100.16%"
    assert "\r\n" in raw("redis7.0_master.txt")
    assert not any(k.startswith("#") or v.endswith("\r") for k, v in info.items())


@pytest.mark.parametrize("text", ["", "\r\n\r\n", "# Server\r\n", "hello world\nno colons here"])
def test_parse_info_without_fields_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError, match="no field"):
        parse_info(text)


def test_parse_nested() -> None:
    assert parse_nested("db0", "keys=1,expires=0,avg_ttl=0,subexpiry=0") == {
        "keys": "1", "expires": "0", "avg_ttl": "0", "subexpiry": "0",
    }
    with pytest.raises(ParseError, match="db0"):
        parse_nested("db0", "keys=1,garbage")


# --- build_redis_sample on every real capture -----------------------------------


def test_master_with_replica() -> None:
    s = load("redis7.0_master.txt")
    assert (s.version, s.run_id, s.uptime_s, s.role) == (
        "7.0.15", "6762bec4bd01ebaca0504d43adbbb4fede966bb3", 8, "master",
    )
    assert s.status.ok
    assert s.rtt_ms is None
    assert s.connected_replicas == 1
    assert s.replicas == [
        RedisReplica(ip="127.0.0.1", port=44073, state="online", offset=9410, lag_s=1)
    ]
    assert s.master_repl_offset == 9424
    assert s.master_replid == "48f869a98618911174ad36b10236d726fd0f90b4"
    assert (s.repl_backlog_active, s.repl_backlog_size) == (True, 1048576)
    assert (s.repl_backlog_first_byte_offset, s.repl_backlog_histlen) == (1, 9424)
    assert s.link_status is None
    assert s.master_host is None
    assert s.repl_offset is None
    assert (s.keys, s.expires) == (231, 30)  # db0 230 + db2 1
    assert s.counters == {
        "total_commands_processed": 281, "total_connections_received": 274,
        "rejected_connections": 0, "expired_keys": 0, "evicted_keys": 0,
        "keyspace_hits": 20, "keyspace_misses": 20, "total_net_input_bytes": 10304,
        "total_net_output_bytes": 11106, "sync_full": 1, "sync_partial_ok": 0,
        "sync_partial_err": 0, "total_error_replies": 0,
    }
    assert (s.connected_clients, s.blocked_clients, s.maxclients) == (1, 0, 10000)
    assert s.instantaneous_ops_per_sec == 10
    assert (s.used_memory, s.used_memory_rss, s.used_memory_peak) == (1128848, 12431360, 1128848)
    assert (s.maxmemory, s.maxmemory_policy) == (0, "noeviction")
    assert s.total_system_memory == 25276502016
    assert s.mem_fragmentation_ratio == pytest.approx(11.42)
    assert (s.loading, s.rdb_bgsave_in_progress, s.rdb_last_bgsave_status) == (False, False, "ok")
    assert (s.rdb_changes_since_last_save, s.rdb_last_save_time) == (231, 1795388996)
    assert (s.aof_enabled, s.aof_rewrite_in_progress, s.aof_last_write_status) == (
        False, False, "ok",
    )
    assert s.aof_delayed_fsync is None  # printed only with AOF on
    assert s.latest_fork_usec == 501


def test_replica_link_up() -> None:
    s = load("redis7.0_replica_up.txt")
    assert s.role == "replica"  # INFO says role:slave
    assert (s.master_host, s.master_port, s.link_status) == ("127.0.0.1", 60401, "up")
    assert (s.last_io_seconds_ago, s.sync_in_progress) == (0, False)
    assert (s.repl_offset, s.read_repl_offset, s.master_repl_offset) == (9424, 9424, 9424)
    assert s.link_down_since_seconds is None  # printed only while down
    assert s.connected_replicas == 0
    assert s.replicas == []
    assert s.sync_total_bytes is None


def test_replica_link_down_after_master_killed() -> None:
    s = load("redis7.0_replica_down.txt")
    # Redis prints master_last_io_seconds_ago:-1 with no link: unknown, never a number
    assert (s.role, s.link_status, s.last_io_seconds_ago) == ("replica", "down", None)
    assert s.link_down_since_seconds == 3
    assert s.repl_offset == 12869808
    assert (s.replica_read_only, s.failover_state) == (True, "no-failover")
    assert s.master_replid2 == "0" * 40 and s.second_repl_offset is None  # -1: never promoted


def test_replica_during_diskless_full_sync() -> None:
    s = load("redis7.0_replica_fullsync.txt")
    # master_link_down_since_seconds:-1 and master_last_io_seconds_ago:-1: unknown
    assert (s.link_status, s.sync_in_progress, s.link_down_since_seconds) == ("down", True, None)
    assert s.last_io_seconds_ago is None
    # diskless: the total is unknown, so Redis 7.0 prints total 0, a negative "left" and
    # master_sync_perc:0.00; all three are unknown, what was read is known
    assert (s.sync_total_bytes, s.sync_read_bytes, s.sync_left_bytes) == (None, 147503, None)
    assert s.sync_perc is None and s.sync_last_io_seconds_ago == 0
    assert s.repl_backlog_active is False


def test_master_while_replica_waits_for_bgsave() -> None:
    s = load("redis7.0_master_fullsync.txt")
    assert s.rdb_bgsave_in_progress is True
    assert s.replicas[0].state == "wait_bgsave"
    assert s.keys == 20000


def test_master_past_maxmemory_with_resyncs() -> None:
    s = load("redis7.0_master_maxmemory.txt")
    assert (s.maxmemory, s.maxmemory_policy, s.used_memory) == (3145728, "allkeys-lru", 1672952)
    assert s.used_memory_peak == 3170744  # went past the ceiling before evicting
    assert s.counters["evicted_keys"] == 57965
    assert (s.counters["sync_full"], s.counters["sync_partial_ok"]) == (2, 1)
    assert s.counters["sync_partial_err"] == 2
    assert (s.repl_backlog_size, s.repl_backlog_first_byte_offset) == (16384, 16699481)


def test_restarted_master_has_new_run_id_and_no_keys() -> None:
    s = load("redis7.0_master_restarted.txt")
    assert (s.run_id, s.uptime_s) == ("40de5488cfad09dd70543014955135b536ca9cde", 6)
    assert (s.keys, s.expires) == (0, 0)  # no dbN lines at all


def test_standalone_server() -> None:
    s = load("redis7.0_standalone.txt")
    assert (s.version, s.role, s.uptime_s) == ("7.0.15", "master", 3317)
    assert (s.connected_replicas, s.replicas, s.keys) == (0, [], 0)
    assert s.repl_backlog_active is False


def test_redis6_master_with_ipv6_replica() -> None:
    s = load("redis6.2.5_master_ipv6_replica.txt")  # LF line ends (copied from a notes file)
    assert (s.version, s.role, s.master_repl_offset) == ("6.2.5", "master", 28)
    assert s.replicas == [RedisReplica(ip="::1", port=6380, state="online", offset=28, lag_s=1)]
    assert s.replicas[0].addr == "[::1]:6380"
    assert s.read_repl_offset is None  # slave_read_repl_offset is 7.0+
    assert s.counters["total_error_replies"] == 3
    assert s.counters["sync_full"] == 1


def test_redis4_master_with_two_replicas() -> None:
    s = load("redis4.0.10_cluster_master_2replicas.txt")
    assert (s.version, s.connected_replicas, s.maxclients) == ("4.0.10", 2, None)
    assert [r.addr for r in s.replicas] == ["172.16.35.76:8203", "172.16.35.77:8203"]
    assert [r.lag_s for r in s.replicas] == [1, 2]
    assert s.master_repl_offset == 19957610038
    assert "total_error_replies" not in s.counters  # Redis 6.2+
    assert (s.maxmemory, s.keys) == (6000000000, 2511467)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_builds(name: str) -> None:
    s = load(name)
    assert s.version
    assert s.run_id
    assert s.role in ("master", "replica")
    RedisSample.model_validate_json(s.model_dump_json())  # round-trips


# --- garbage -----------------------------------------------------------------------


def _mutated(name: str, field: str, value: str | None) -> dict[str, str]:
    info = parse_info(raw(name))
    if value is None:
        del info[field]
    else:
        info[field] = value
    return info


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("redis_version", None),
        ("role", None),
        ("role", "sentinel"),
        ("used_memory", "12M"),
        ("uptime_in_seconds", "1.5"),
        ("total_commands_processed", "-"),
        ("loading", "yes"),
        ("mem_fragmentation_ratio", "1,2"),
        ("slave0", "ip=127.0.0.1,port=x,state=online,offset=1,lag=0"),
        ("slave0", "ip=127.0.0.1,state=online"),
        ("slave0", "nonsense"),
        ("db0", "keys=abc,expires=0"),
        ("db0", "expires=1"),
    ],
)
def test_bad_field_is_a_parse_error_naming_it(field: str, value: str | None) -> None:
    with pytest.raises(ParseError, match=field):
        build_redis_sample(_mutated("redis7.0_master.txt", field, value))


def test_bad_link_status_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="master_link_status"):
        build_redis_sample(_mutated("redis7.0_replica_up.txt", "master_link_status", "maybe"))


def test_non_finite_ratio_is_unknown_not_an_error() -> None:
    s = build_redis_sample(_mutated("redis7.0_master.txt", "mem_fragmentation_ratio", "nan"))
    assert s.mem_fragmentation_ratio is None


def test_legacy_replica_line_of_redis_2_6() -> None:
    s = build_redis_sample(_mutated("redis7.0_master.txt", "slave0", "10.0.0.2,6379,online"))
    assert s.replicas == [RedisReplica(ip="10.0.0.2", port=6379, state="online")]


def _parse_or_error(text: str) -> None:
    """A sample or ParseError, and read_redis_info's is the same (or the same message)."""
    assert _outcome(read_redis_info, text) == _outcome(_parse_then_build, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
def test_random_text_gives_a_sample_or_parse_error(text: str) -> None:
    _parse_or_error(text)


_INFO_ALPHABET = st.sampled_from(list("abcdefgiklmnoprstuvy_:=,.-#0123456789\r\n \t%"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_INFO_ALPHABET, max_size=400))
def test_info_like_text_gives_a_sample_or_parse_error(text: str) -> None:
    _parse_or_error("redis_version:7.0.0\nrole:master\n" + text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(ALL_FIXTURES),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 20), st.text(max_size=8)), max_size=6
    ),
)
def test_mutated_real_fixtures_give_a_sample_or_parse_error(
    name: str, edits: list[tuple[float, int, str]]
) -> None:
    text = raw(name)
    for where, cut, insert in edits:  # replace a random slice with random text
        i = int(where * len(text))
        text = text[:i] + insert + text[i + cut :]
    _parse_or_error(text)


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(ALL_FIXTURES),
    field=st.sampled_from(["used_memory", "role", "slave0", "db0", "master_link_status",
                           "uptime_in_seconds", "loading", "mem_fragmentation_ratio"]),
    value=st.text(max_size=30),
)
def test_any_value_in_a_typed_field_gives_a_sample_or_parse_error(
    name: str, field: str, value: str
) -> None:
    info = parse_info(raw(name))
    info[field] = value
    with contextlib.suppress(ParseError):
        build_redis_sample(info)


# Redis 7.0.15 (Debian 12), CONFIG GET client-output-buffer-limit, as redis-cli prints it and
# as redis-py returns it (RESP2 list, RESP3 map)
COBL = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


def test_replica_output_buffer_limit_from_config_get() -> None:
    from replmon.sources.redis_parse import parse_buffer_limit

    assert parse_buffer_limit(["client-output-buffer-limit", COBL]) == (268435456, 67108864, 60)
    assert parse_buffer_limit({"client-output-buffer-limit": COBL.replace("slave", "replica")}
                              ) == (268435456, 67108864, 60)
    assert parse_buffer_limit([]) is None  # no such parameter (an old or odd server)
    with pytest.raises(ParseError, match="no replica class"):
        parse_buffer_limit(["client-output-buffer-limit", "normal 0 0 0 pubsub 1 2 3"])
    with pytest.raises(ParseError, match="unexpected"):
        parse_buffer_limit(b"\x00")


def test_rdb_last_bgsave_time_minus_one_is_unknown() -> None:
    info = parse_info((FIXTURES / "redis7.0_master.txt").read_text())
    s = build_redis_sample({**info, "rdb_last_bgsave_time_sec": "-1"})
    assert s.rdb_last_bgsave_time_s is None
    assert build_redis_sample({**info, "rdb_last_bgsave_time_sec": "3"}).rdb_last_bgsave_time_s == 3


def test_client_list_gives_the_age_of_a_replicas_master_link() -> None:
    """CLIENT LIST TYPE master as Redis 7.0 answers it (fixtures/redis/README.md): the
    replica's master connection's age; none on a master; garbage is a parse error."""
    from replmon.sources.redis_parse import parse_master_link_age

    replica = (FIXTURES / "redis7.0_replica_client_list_master.clientlist").read_bytes()
    assert parse_master_link_age(replica) == 7
    assert parse_master_link_age(replica.decode()) == 7
    assert parse_master_link_age((FIXTURES / "redis7.0_master_client_list_master.clientlist")
                                 .read_bytes()) is None
    with pytest.raises(ParseError, match="not a number of seconds"):
        parse_master_link_age(replica.decode().replace("age=7", "age=seven"))
    with pytest.raises(ParseError, match="not text"):
        parse_master_link_age(["id=3"])


def test_errorstats_and_good_replicas() -> None:
    """INFO errorstats (6.2+) by error kind; min_slaves_good_slaves, printed only while
    min-replicas-to-write is set; a garbled errorstat is a parse error naming it."""
    from replmon.sources.redis_parse import build_redis_sample, parse_info

    base = raw("redis6.2.5_master_ipv6_replica.txt")
    s = load("redis6.2.5_master_ipv6_replica.txt")
    assert s.error_counts == {"ERR": 3} and s.good_replicas is None
    info = parse_info(base + "min_slaves_good_slaves:1\r\nerrorstat_NOREPLICAS:count=12\r\n")
    s = build_redis_sample(info)
    assert s.good_replicas == 1 and s.error_counts == {"ERR": 3, "NOREPLICAS": 12}
    with pytest.raises(ParseError, match="errorstat_OOM"):
        build_redis_sample(parse_info(base + "errorstat_OOM:count=x\r\n"))
    with pytest.raises(ParseError, match="errorstat_OOM"):
        build_redis_sample(parse_info(base + "errorstat_OOM:total=3\r\n"))


def test_bgsave_guard_from_config_get() -> None:
    from replmon.sources.redis_parse import parse_bgsave_guard

    assert parse_bgsave_guard(["stop-writes-on-bgsave-error", "yes", "save", "3600 1"]) == (
        True, "3600 1")
    assert parse_bgsave_guard(["client-output-buffer-limit", "normal 0 0 0"]) == (None, None)
    with pytest.raises(ParseError, match="stop-writes-on-bgsave-error"):
        parse_bgsave_guard(["stop-writes-on-bgsave-error", "maybe"])


# --- read_redis_info: the sample of parse_info + build_redis_sample, from fewer lines ---


REAL = FIXTURES.parent / "real" / "redis"
"""Published INFO outputs (Redis 3.2 to 7.4, Valkey; tests/fixtures/real/README.md)."""


def _parse_then_build(text: str) -> RedisSample:
    return build_redis_sample(parse_info(text))


def _outcome(read: Callable[[str], RedisSample], text: str) -> tuple[str, object]:
    try:
        return "sample", read(text)
    except ParseError as e:
        return "ParseError", str(e)


def _texts() -> list[str]:
    return [p.read_bytes().decode() for p in [*sorted(FIXTURES.glob("*.txt")),
                                              *sorted(REAL.glob("*.txt"))]]


_GARBAGE = ("", "x", "-", "-1", "1.5", "nan", " 1", "\uff11", "1\r", "a:b", "::1", "ip,port",
            "ip=::1,port=1,state=online", "keys=x", "count=", "1e3", "\r", "a\rb",
            "ip=1,port=2,state=x,offset=-1,lag=y")


def _mutations(text: str, rnd: random.Random) -> Iterator[str]:
    """``text``, its line ends changed, each line left out, each read field's value
    garbled, its line duplicated, without its ':', with CRs or a '#' or a space added;
    truncations and random one-character edits."""
    lf = text.replace("\r\n", "\n")
    yield from (text, lf, lf.replace("\n", "\r\n"), text.replace("\r\n", "\r\r\n"),
                text + "\r\n", text.rstrip("\r\n"), "\r\n" + text,
                text.replace("\r\n\r\n", "\r\n"), text.replace("# ", "#"))
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(nl)
    for i, line in enumerate(lines):
        yield nl.join(lines[:i] + lines[i + 1:])
        name, sep, value = line.partition(":")
        if not sep or not (name in FIELDS_READ or name.startswith(("slave", "db", "errorstat_"))):
            continue
        edited = [*(f"{name}:{g}" for g in rnd.sample(_GARBAGE, 4)), name, f"{name}\n{line}",
                  f"{line}\r", f"{name}\r:{value}", f"#{line}", f" {line}",
                  line.replace(":", "\n:", 1), f"{line}{nl}{name}:{rnd.choice(_GARBAGE)}"]
        yield from (nl.join([*lines[:i], e, *lines[i + 1:]]) for e in edited)
    for _ in range(20):
        yield text[:rnd.randrange(len(text) + 1)]
        i = rnd.randrange(len(text))
        yield text[:i] + rnd.choice(":\r\n#,=x0-") + text[i + 1:]


def test_read_redis_info_gives_what_parse_info_and_build_give() -> None:
    """On every real capture and ~25,000 mutations of them: the same sample, or a
    ParseError with the same message. (Every value of _GARBAGE in every read field of
    every capture, ~55,000 texts, gave the same too; four a field here, for time.)"""
    rnd, count = random.Random(56), 0
    for text in _texts():
        for mutated in _mutations(text, rnd):
            count += 1
            assert _outcome(read_redis_info, mutated) == _outcome(_parse_then_build, mutated), \
                repr(mutated[:200])
    assert count > 20_000
    for text in ("", "\r\n", "# Server\r\n", "hello", ":\r\n", "role:master\r\n",
                 "redis_version:7\r\nrole:master\r\nerrorstat_A\rB:count=1\r\n",
                 "redis_version:7\nrole:master\nslave0:ip=::1,port=6380,state=online,"
                 "offset=1,lag=0\n# Keyspace\n"):
        assert _outcome(read_redis_info, text) == _outcome(_parse_then_build, text)
    with pytest.raises(ParseError, match="INFO reply is bytes, not text"):
        read_redis_info(b"redis_version:7.0.0\r\nrole:master\r\n")  # type: ignore[arg-type]


class _Reads(dict[str, str]):
    """A parsed INFO that notes the fields read from it by name."""

    def __init__(self, info: dict[str, str]) -> None:
        super().__init__(info)
        self.read: set[str] = set()

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def test_build_redis_sample_reads_only_the_fields_read_redis_info_keeps() -> None:
    """read_redis_info drops every line but FIELDS_READ and the slaveN, dbN and
    errorstat_* families: build_redis_sample must read nothing else."""
    family = re.compile(r"(?:slave|db)[0-9]+|errorstat_.*")
    for text in _texts():
        info = _Reads(parse_info(text))
        with contextlib.suppress(ParseError):
            build_redis_sample(info)
        assert {k for k in info.read if not family.fullmatch(k)} <= FIELDS_READ


def test_the_texts_of_two_readings_are_one_object() -> None:
    """The same version, ids, host and statuses every tick are one string, not one per
    tick: the engine keeps each tick's Redis sample 300 s (#56). Two readings of the
    same capture, each parsed from its own copy of the text."""
    a, b = load("redis7.0_replica_up.txt"), load("redis7.0_replica_up.txt")
    for name in ("version", "run_id", "master_host", "master_replid", "master_replid2",
                 "rdb_last_bgsave_status", "aof_last_write_status", "link_status"):
        assert getattr(a, name), name
        assert getattr(a, name) is getattr(b, name), name
    m1, m2 = load("redis7.0_master.txt"), load("redis7.0_master.txt")
    assert m1.replicas and m1.replicas[0].ip is m2.replicas[0].ip
    assert m1.replicas[0].state is m2.replicas[0].state
