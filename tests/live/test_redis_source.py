"""RedisSource against the lab's real password-protected Redis master + replica.

The lab is shared by the whole session: every test that changes it (role,
paused or stopped process) restores it in ``finally``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Iterator

import pytest

from replmon.endpoints import RedisEndpoint
from replmon.lab import Lab
from replmon.model.base import SourceState
from replmon.model.redis import RedisSample, derive_redis_rates
from replmon.sources.redis_info import RedisSource

pytestmark = pytest.mark.live


def wait_link_up(lab: Lab, timeout: float = 30.0) -> None:
    """Block until the replica's link to the primary is up again."""
    deadline = time.monotonic() + timeout
    with lab.replica.redis() as r:
        while time.monotonic() < deadline:
            info = r.info("replication")
            if info.get("role") == "slave" and info.get("master_link_status") == "up":
                return
            time.sleep(0.05)
    pytest.fail("replica link to the primary did not come back up")


async def sample_once(endpoint: RedisEndpoint) -> RedisSample:
    async with RedisSource(endpoint) as src:
        return await src.sample()


async def test_ops_rate_under_write_load(lab: Lab) -> None:
    async with RedisSource(lab.primary.redis_endpoint()) as src:
        first = await src.sample()
        with lab.primary.redis() as r:
            pipe = r.pipeline(transaction=False)
            for i in range(2000):
                pipe.set(f"replmon:test:ops:{i}", i)
            pipe.execute()
        await asyncio.sleep(0.1)
        second = await src.sample()
    assert first.status.ok, first.status
    assert second.status.ok, second.status
    rates = derive_redis_rates(first, second)
    assert rates.reset is None
    assert rates.ops_per_s is not None
    assert rates.ops_per_s > 0
    assert rates.dt_s is not None
    done = second.counters["total_commands_processed"] - first.counters["total_commands_processed"]
    assert done >= 2000
    assert rates.ops_per_s == pytest.approx(done / rates.dt_s)
    assert rates.net_in_bytes_per_s is not None
    assert rates.net_in_bytes_per_s > 0


async def test_master_sees_online_replica_and_replica_sees_link_up(lab: Lab) -> None:
    wait_link_up(lab)
    with lab.primary.redis() as r:
        r.set("replmon:test:offset", "x")  # make sure the stream has moved
    # the master learns the replica's offset from its REPLCONF ACK, once a second: on a
    # loaded machine the first sample can come before it (slave0 offset=0)
    deadline = time.monotonic() + 10
    master = await sample_once(lab.primary.redis_endpoint())
    while (time.monotonic() < deadline and master.replicas
           and not master.replicas[0].offset):
        await asyncio.sleep(0.2)
        master = await sample_once(lab.primary.redis_endpoint())
    replica = await sample_once(lab.replica.redis_endpoint())

    assert master.status.ok, master.status
    assert master.role == "master"
    assert master.connected_replicas == 1
    assert len(master.replicas) == 1
    link = master.replicas[0]
    assert (link.ip, link.port, link.state) == ("127.0.0.1", lab.replica.redis_port, "online")
    assert link.offset is not None
    assert link.offset > 0
    assert master.master_repl_offset is not None
    assert master.master_repl_offset >= link.offset
    assert master.rtt_ms is not None
    assert 0 < master.rtt_ms < 100
    assert master.version

    assert replica.status.ok, replica.status
    assert replica.role == "replica"
    assert replica.link_status == "up"
    assert (replica.master_host, replica.master_port) == ("127.0.0.1", lab.primary.redis_port)
    assert replica.repl_offset is not None
    assert replica.repl_offset > 0
    assert replica.sync_in_progress is False
    lag = derive_redis_rates(None, master).replica_lag_bytes
    assert list(lag) == [f"127.0.0.1:{lab.replica.redis_port}"]


async def test_role_change_is_visible(lab: Lab) -> None:
    wait_link_up(lab)
    endpoint = lab.replica.redis_endpoint()
    try:
        with lab.replica.redis() as r:
            r.execute_command("REPLICAOF", "NO", "ONE")
        promoted = await sample_once(endpoint)
        assert promoted.status.ok, promoted.status
        assert promoted.role == "master"
        assert promoted.link_status is None
        assert promoted.master_host is None
    finally:
        with lab.replica.redis() as r:
            r.execute_command("REPLICAOF", "127.0.0.1", str(lab.primary.redis_port))
        wait_link_up(lab)
    back = await sample_once(endpoint)
    assert back.role == "replica"
    assert back.link_status == "up"


async def test_closed_port_is_unreachable(lab: Lab) -> None:
    endpoint = RedisEndpoint(host="127.0.0.1", port=lab.free_port(), connect_timeout=0.5)
    started = time.monotonic()
    s = await sample_once(endpoint)
    assert s.status.state is SourceState.UNREACHABLE
    assert s.status.error is not None
    assert str(endpoint.port) in s.status.error
    assert time.monotonic() - started < 0.8
    assert s.role is None  # empty payload


async def test_wrong_password_is_auth_and_never_shown(
    lab: Lab, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-" + os.urandom(8).hex()
    endpoint = lab.primary.redis_endpoint(password=wrong)
    async with RedisSource(endpoint) as src:
        s = await src.sample()
        shown = [repr(src), str(src), repr(endpoint), endpoint.model_dump_json()]
    assert s.status.state is SourceState.AUTH, s.status
    assert s.status.hint
    shown += [s.model_dump_json(), str(s.status.error), str(s.status.hint), repr(s), caplog.text]
    for text in shown:
        assert wrong not in text
        assert lab.redis_password not in text


async def test_missing_password_is_auth(lab: Lab) -> None:
    endpoint = RedisEndpoint(host="127.0.0.1", port=lab.primary.redis_port)
    s = await sample_once(endpoint)
    assert s.status.state is SourceState.AUTH, s.status
    assert s.status.error is not None
    assert "Authentication required" in s.status.error
    assert s.status.hint is not None
    assert "none is configured" in s.status.hint


async def test_good_sample_never_shows_the_password(
    lab: Lab, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with RedisSource(lab.primary.redis_endpoint()) as src:
        s = await src.sample()
        texts = [repr(src), s.model_dump_json(), repr(s), caplog.text]
    assert s.status.ok
    assert all(lab.redis_password not in t for t in texts)


async def test_paused_server_times_out_then_recovers(lab: Lab) -> None:
    node = lab.replica
    async with RedisSource(node.redis_endpoint(), timeout=0.5) as src:
        assert (await src.sample()).status.ok  # connection established
        node.pause_redis()
        try:
            first = await src.sample()
            assert first.status.state is SourceState.TIMEOUT, first.status
            assert 400 <= first.elapsed_ms < 1500
            started = time.monotonic()
            second = await src.sample()
            assert time.monotonic() - started < 0.1  # no new request behind the hung one
            assert second.status.state is SourceState.TIMEOUT, second.status
            assert second.status.since == first.status.since
        finally:
            node.resume_redis()
        states = []
        for _ in range(4):
            s = await src.sample()
            states.append(s.status.state)
            if s.status.ok:
                break
            await asyncio.sleep(0.2)
    assert states[-1] is SourceState.OK, states
    assert len(states) <= 3, states


async def test_restarted_server_reconnects_and_resets_rates(lab: Lab) -> None:
    node = lab.replica
    async with RedisSource(node.redis_endpoint(), timeout=0.8) as src:
        before = await src.sample()
        assert before.status.ok
        try:
            node.stop_redis()
            down = await src.sample()
            assert down.status.state is SourceState.UNREACHABLE, down.status
        finally:
            node.start_redis()
            wait_link_up(lab)
        after = await src.sample()
    assert after.status.ok, after.status
    assert after.run_id != before.run_id
    assert derive_redis_rates(before, after).reset == "restart"


async def test_restart_between_samples_is_ok_at_once(lab: Lab) -> None:
    node = lab.replica
    async with RedisSource(node.redis_endpoint(), timeout=0.8) as src:
        before = await src.sample()
        assert before.status.ok
        try:
            node.stop_redis()
        finally:
            node.start_redis()
        after = await src.sample()  # the kept connection is dead: one reconnect, same sample
        wait_link_up(lab)
    assert after.status.ok, after.status
    assert after.run_id != before.run_id
    assert derive_redis_rates(before, after).reset == "restart"


@contextlib.contextmanager
def acl_user(lab: Lab, user: str, password: str) -> Iterator[None]:
    """A Redis ACL user on the lab's primary allowed INFO and PING only (redis_exporter's
    README ACL, without CONFIG GET), removed on exit."""
    with lab.primary.redis() as r:
        r.execute_command("ACL", "SETUSER", user, "on", f">{password}", "-@all", "+info",
                          "+ping")
        try:
            yield
        finally:
            r.execute_command("ACL", "DELUSER", user)


async def test_config_get_refused_by_the_acl_is_a_note_not_a_failure(lab: Lab) -> None:
    """An account with +info +ping but no +config|get (redis_exporter's README ACL): the
    sample is ok, the buffer limit unknown, and config_error says which permission."""
    from pydantic import SecretStr

    with acl_user(lab, "replmon_ro", "ro-pass-123"):
        s = await sample_once(RedisEndpoint(
            host="127.0.0.1", port=lab.primary.redis_port, username="replmon_ro",
            password=SecretStr("ro-pass-123")))
        full = await sample_once(RedisEndpoint(
            host="127.0.0.1", port=lab.primary.redis_port,
            password=SecretStr(lab.redis_password)))
    assert s.status.ok and s.role == "master" and s.replica_buffer_limit is None
    assert s.config_error is not None and "+config|get" in s.config_error, s.config_error
    assert "ro-pass-123" not in s.config_error
    assert full.replica_buffer_limit == (268435456, 67108864, 60) and full.config_error is None


async def test_a_mysql_port_is_not_taken_for_redis(lab: Lab) -> None:
    """replmon's own RESP connection (replmon.sources.resp, #56) given a server that is
    not Redis (the lab's MySQL): a failed sample within the timeouts, never auth nor ok,
    and the connection is not kept for the next sample."""
    endpoint = RedisEndpoint(host="127.0.0.1", port=lab.primary.mysql_port,
                             connect_timeout=1.0, read_timeout=1.0)
    async with RedisSource(endpoint, timeout=1.5) as src:
        started = time.monotonic()
        first = await src.sample()
        assert time.monotonic() - started < 2.0
        assert src._conn is not None and not src._conn.is_connected
        second = await src.sample()
    for s in (first, second):
        assert s.status.state not in (SourceState.OK, SourceState.AUTH), s.status
        assert s.status.error is not None and s.role is None


async def test_an_acl_user_with_a_wrong_password_is_auth(lab: Lab) -> None:
    """AUTH with a user name (Redis 6+ ACL) that the server refuses: "auth", the hint about
    the password, neither password in any text."""
    from pydantic import SecretStr

    with acl_user(lab, "replmon_acl", "acl-pass-456"):
        wrong = await sample_once(RedisEndpoint(
            host="127.0.0.1", port=lab.primary.redis_port, username="replmon_acl",
            password=SecretStr("not-acl-pass-789")))
        right = await sample_once(RedisEndpoint(
            host="127.0.0.1", port=lab.primary.redis_port, username="replmon_acl",
            password=SecretStr("acl-pass-456")))
    assert wrong.status.state is SourceState.AUTH, wrong.status
    assert wrong.status.hint is not None and "password" in wrong.status.hint
    assert "not-acl-pass-789" not in wrong.model_dump_json()
    assert right.status.ok and right.role == "master", right.status


async def test_a_refused_ping_leaves_the_connection_in_step(lab: Lab) -> None:
    """PING and INFO go out in one write (#56): when PING is refused (an ACL without
    +ping) INFO's reply is read off too, so the next sample on the same connection reads
    its own replies: PING refused again, then, once +ping is granted, a whole sample."""
    from pydantic import SecretStr

    user, password = "replmon_noping", "np-pass-321"
    with lab.primary.redis() as r:
        r.execute_command("ACL", "SETUSER", user, "on", f">{password}", "-@all", "+info")
        try:
            async with RedisSource(RedisEndpoint(
                    host="127.0.0.1", port=lab.primary.redis_port, username=user,
                    password=SecretStr(password))) as src:
                first, second = await src.sample(), await src.sample()
                r.execute_command("ACL", "SETUSER", user, "+ping")
                third = await src.sample()
        finally:
            r.execute_command("ACL", "DELUSER", user)
    for refused in (first, second):
        assert refused.status.state == SourceState.AUTH, refused.status
        assert "PING refused" in (refused.status.error or ""), refused.status.error
    assert third.status.ok, third.status
    assert third.role == "master" and third.run_id and third.rtt_ms is not None
