"""#31 item 8: every cause and next step of redis_replication's link finding follows the
facts of INFO replication: the link down with how long (or never up), the master's own
state, a full sync received, stalled or being loaded, a replica promoted.

INFO captured from the lab's Redis 7.0 (tests/fixtures/redis/) and published excerpts
(tests/fixtures/real/redis/); where a case has no capture, the capture's own line is
changed to that case's value, named in each test."""

from __future__ import annotations

from pathlib import Path

from replmon.checks.redis_replication import CHECK

from replmon.model.findings import Observation, Severity
from replmon.model.redis import RedisSample
from replmon.sources.redis_parse import build_redis_sample, parse_info
from replmon.testing.synth import node, observe, status, tick

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def load(name: str, *edits: tuple[str, str]) -> RedisSample:
    """A lab capture, each ``(old, new)`` INFO line replaced."""
    text = (FIXTURES / "redis" / f"{name}.txt").read_bytes().decode()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return build_redis_sample(parse_info(text))


def published(name: str, version: str) -> RedisSample:
    """A published INFO replication excerpt, with the redis_version it lacks."""
    info = parse_info((FIXTURES / "real" / "redis" / name).read_bytes().decode())
    return build_redis_sample({"redis_version": version, **info})


def link(primary: RedisSample, replica: RedisSample) -> Observation:
    out = observe(CHECK, [tick(0, primary=node("primary", redis=primary),
                               replica=node("replica", redis=replica))])
    (o,) = [x for x in out if x.key.startswith("link/")]
    return o


MASTER = load("redis7.0_master")
DOWN = load("redis7.0_replica_down")


def test_link_down_with_the_master_down_blames_the_master() -> None:
    dead = RedisSample(status=status("unreachable", "connection refused"))
    o = link(dead, DOWN)
    assert o.severity is Severity.CRITICAL
    assert o.cause == ("the master's Redis does not answer replmon either (unreachable): it "
                       "is down or hung.")
    assert "is the master up and reachable from the replica?" in o.next_step


def test_link_that_was_up_and_broke_says_since_when_and_what_drops_it() -> None:
    """The lab's capture 3 s after the link broke, the master answering."""
    o = link(MASTER, DOWN)
    assert o.title == "replica link to 127.0.0.1:60401 down for 3 s (no I/O from the master)"
    assert o.cause.startswith("the link was up and broke 3 s ago: the master dropped the "
                              "replica (repl-timeout, client-output-buffer-limit replica)")
    assert "backlog" in o.cause
    assert "never" not in o.cause
    assert o.next_step.startswith("Read the replica's redis.log")


def test_link_down_295_s_on_a_published_redis_4_capture() -> None:
    o = link(MASTER, published("notes_redis4.0.11_replica_link_down_295s_info_"
                               "replication.txt", "4.0.11"))
    assert o.title.startswith("replica link to 172.16.18.13:6379 down for 295 s")
    assert "broke 295 s ago" in o.cause


def test_link_never_up_on_a_published_noauth_capture_is_reach_or_login() -> None:
    """Redis 3.x refused by a master that wants a password (NOAUTH): the link has never
    been up (Redis 3 printed the epoch as the down time: read as never)."""
    o = link(MASTER, published("notes_redis3x_replica_noauth_link_down_since_epoch.txt",
                               "3.2.0"))
    assert "down since the replica started (never up)" in o.title
    assert o.cause.startswith("the link has not come up once since the replica started: it "
                              "cannot reach or log in to the master")
    assert "masterauth" in o.cause and "protected-mode" in o.cause
    assert "broke" not in o.cause


def test_full_sync_in_progress_lets_it_finish() -> None:
    o = link(load("redis7.0_master_fullsync"), load("redis7.0_replica_fullsync"))
    assert o.severity is Severity.WARNING
    assert o.title.startswith("full sync from 127.0.0.1:60401 in progress: ")
    assert "could not continue from the master's backlog" in o.cause
    assert o.next_step.startswith("Let it finish")


def test_link_down_while_the_master_prepares_the_rdb_says_so() -> None:
    """The master lists the replica in wait_bgsave (Redis 7's diskless sync waits
    repl-diskless-sync-delay): the RDB is still being produced."""
    o = link(load("redis7.0_master_fullsync"), DOWN)
    assert "master in wait_bgsave" in o.title
    assert "the master is still producing the RDB" in o.cause


def test_a_sync_with_no_byte_for_25_s_is_stalled() -> None:
    stuck = load("redis7.0_replica_fullsync", ("master_sync_last_io_seconds_ago:0",
                                               "master_sync_last_io_seconds_ago:25"))
    o = link(load("redis7.0_master_fullsync"), stuck)
    assert o.severity is Severity.CRITICAL and "stalled: no data for 25 s" in o.title
    assert o.cause.startswith("the master stopped sending the RDB")
    assert "client-output-buffer-limit" in o.next_step


def test_a_sync_being_loaded_is_not_stalled() -> None:
    """Every byte received, the replica loads the RDB (loading:1): no byte is awaited,
    so 25 s without one is the load, not a stall."""
    loading = load("redis7.0_replica_fullsync", ("loading:0", "loading:1"),
                   ("master_sync_last_io_seconds_ago:0", "master_sync_last_io_seconds_ago:25"))
    o = link(load("redis7.0_master_fullsync"), loading)
    assert o.severity is Severity.WARNING
    assert o.title.endswith(", loading it") and "stalled" not in o.title
    assert "loading it into memory" in o.cause and "LOADING" in o.cause
    assert o.next_step.startswith("Let it finish")
    all_in = load("redis7.0_replica_fullsync",  # a disk sync whose total is known and read
                  ("master_sync_total_bytes:0", "master_sync_total_bytes:147503"),
                  ("master_sync_last_io_seconds_ago:0", "master_sync_last_io_seconds_ago:25"))
    assert "loading it" in link(load("redis7.0_master_fullsync"), all_in).title


def test_a_replica_promoted_to_master() -> None:
    o = link(MASTER, load("redis7.0_standalone"))
    assert o.title == "replica's Redis is a master (0 replicas of its own): not replicating"
    assert o.cause.startswith("REPLICAOF NO ONE was run")
    assert o.next_step.startswith("If the primary is still the master: REPLICAOF")


def test_redis_failed_over_alone_is_a_half_done_switchover() -> None:
    """The primary's Redis now replicates (the lab's replica capture stands for it) while
    the replica's is a master, the pair's roles held by another layer: Redis moved alone;
    the fix is finishing or undoing the switchover, not replmon's config (the roles
    follow the servers)."""
    o = link(load("redis7.0_replica_up"), load("redis7.0_standalone"))
    assert o.cause.startswith("Redis failed over and the rest of the pair did not")
    assert "now follows 127.0.0.1:60401" in o.cause
    assert o.next_step.startswith("Finish the switchover on the other layers")
    assert "config" not in o.next_step
    assert o.numbers["primary_role"] == "replica"
