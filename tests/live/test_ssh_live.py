"""The SSH runner against a real OpenSSH server (tests/live/sshd.py) on loopback.

The "remote" node is this machine reached over ssh to 127.0.0.1, so what comes
over SSH can be compared with what LocalRunner reads at the same moment. The
client uses a throwaway ssh_config (-F) and never touches ~/.ssh.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from sshd import Sshd

from replmon.collector import Collector
from replmon.config import build_config, parse_ssh_spec
from replmon.factory import build_collector
from replmon.model.base import SourceState
from replmon.model.tick import Tick
from replmon.sources.drbd import DrbdSource
from replmon.sources.host import HostSource
from replmon.sources.runner import LocalRunner
from replmon.sources.ssh import SshHostSource, SshRunner

pytestmark = pytest.mark.live

FIXTURES = Path(__file__).parent.parent / "fixtures" / "drbd"
OFF = {"enabled": False}


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    with Sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server


@pytest.fixture
def trusted(sshd: Sshd) -> Iterator[Sshd]:
    sshd.trust(True)
    yield sshd
    sshd.trust(True)


def runner(sshd: Sshd) -> SshRunner:
    return SshRunner("127.0.0.1", config_file=str(sshd.ssh_config))


def node(name: str, ssh: dict[str, Any] | None = None, **drbd: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"host": "127.0.0.1", "name": name, "mysql": OFF, "redis": OFF}
    if ssh is not None:
        out["ssh"] = ssh
    if drbd:
        out["drbd"] = drbd
    return out


def ssh_node(sshd: Sshd, name: str, **drbd: Any) -> dict[str, Any]:
    return node(name, {"mode": "ssh", "config_file": str(sshd.ssh_config)}, **drbd)


def collector(primary: dict[str, Any], replica: dict[str, Any]) -> Collector:
    return build_collector(build_config({"interval": 1.0, "primary": primary,
                                         "replica": replica}))


def ssh_children() -> list[psutil.Process]:
    """Our `ssh` client processes still alive.

    The walk is recursive, so it also meets the test sshd's per-connection
    children, which exit on their own schedule: one gone between the listing
    and its name() is not an ssh we left behind (CI failed on exactly that).
    """
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.name() == "ssh":
                found.append(p)
        except psutil.NoSuchProcess:
            continue
    return found


# --- (a) same numbers as LocalRunner ---------------------------------------------

async def test_host_sample_over_ssh_matches_local(trusted: Sshd) -> None:
    r = runner(trusted)
    remote = HostSource(r, timeout=5)
    local = HostSource(LocalRunner(), timeout=5)
    try:
        await remote.sample()  # connect; link speeds read once
        await local.sample()
        a, b = await asyncio.gather(remote.sample(), local.sample())
    finally:
        await r.close()
    assert a.status.ok, a.status
    assert b.status.ok, b.status
    assert (a.hostname, a.btime, a.ncpu, a.page_size) == (b.hostname, b.btime, b.ncpu,
                                                          b.page_size)
    assert a.mem is not None
    assert b.mem is not None
    assert a.mem.total == b.mem.total
    assert a.mem.swap_total == b.mem.swap_total
    assert set(a.disks) == set(b.disks)
    assert set(a.nics) == set(b.nics)
    assert {n: c.speed_mbps for n, c in a.nics.items()} == \
        {n: c.speed_mbps for n, c in b.nics.items()}
    assert {n: c.routes for n, c in a.nics.items()} == {n: c.routes for n, c in b.nics.items()}
    # the monitor's address as the node sees the ssh connection (this machine: loopback);
    # read on this machine, none
    assert (a.monitor_addr, b.monitor_addr) == ("127.0.0.1", None)
    assert a.cpu is not None
    assert b.cpu is not None
    total_a = sum(a.cpu.model_dump().values())
    total_b = sum(b.cpu.model_dump().values())
    # USER_HZ ticks; the two reads are ~ms apart: a few ticks per CPU at most
    assert abs(total_a - total_b) <= 50 * (b.ncpu or 1), (total_a, total_b)
    for name, d in b.disks.items():
        assert abs(a.disks[name].reads - d.reads) <= 100, name
        assert abs(a.disks[name].write_bytes - d.write_bytes) <= 64 * 2**20, name
    for name, n in b.nics.items():
        # the ssh traffic itself crosses lo; everything else barely moves in ms
        assert abs(a.nics[name].rx_packets - n.rx_packets) <= 500, name


async def test_commands_files_and_errors_over_ssh(trusted: Sshd, tmp_path: Path) -> None:
    r = runner(trusted)
    odd = tmp_path / "odd name 'q'.txt"
    odd.write_bytes(b"no newline at the end")
    try:
        got = await r.read_files([str(odd), "/proc/loadavg", str(tmp_path / "missing")])
        assert got[str(odd)] == "no newline at the end"
        assert got[str(tmp_path / "missing")] is None
        assert await r.run(["printf", "%s\\n", "a b", "$HOME"]) == "a b\n$HOME\n"
        with pytest.raises(FileNotFoundError):
            await r.run(["replmon-no-such-program"])
        with pytest.raises(Exception, match="boom") as exc:
            await r.run(["sh", "-c", "echo boom >&2; exit 3"])
        assert getattr(exc.value, "state", None) == "error"
        drbd = DrbdSource(r, proc_path=str(FIXTURES / "s10_8411_syncsource_synced.txt"))
        s = await drbd.sample()
        assert s.status.ok, s.status
        assert s.resources
    finally:
        await r.close()
    assert r.connects == 1


async def test_files_are_not_held_back_by_a_slow_command_of_the_same_round_trip(
        trusted: Sshd, tmp_path: Path) -> None:
    """The node sends a round trip's files in one block before its commands: a command
    that takes 2 s (a hung drbdsetup, say), asked first in the same round trip, does not
    delay the files asked after it, and each answer is whole and in its own place."""
    r = runner(trusted)
    many = tmp_path / "lines.txt"
    many.write_text("".join(f"line {i}\n" for i in range(5000)))  # ~50 KB: several reads
    try:
        await r.read_files(["/proc/uptime"])  # connected
        slow = asyncio.ensure_future(r.run(["sh", "-c", "sleep 2; echo done"]))
        files = asyncio.ensure_future(r.read_files([str(many), "/proc/loadavg",
                                                    str(tmp_path / "missing")]))
        t0 = time.monotonic()
        got = await files
        files_s = time.monotonic() - t0
        assert await slow == "done\n"
        slow_s = time.monotonic() - t0
    finally:
        await r.close()
    assert got[str(many)] == many.read_text()
    assert got["/proc/loadavg"] is not None and len(got["/proc/loadavg"].split()) == 5
    assert got[str(tmp_path / "missing")] is None
    assert files_s < 1.0 <= 1.9 < slow_s, (files_s, slow_s)
    assert r.connects == 1

# --- (b) unknown host key ----------------------------------------------------------

async def test_unknown_host_key_is_a_clear_error_without_a_prompt(trusted: Sshd) -> None:
    trusted.trust(known=False)
    r = runner(trusted)
    src = SshHostSource(r, timeout=10)
    t0 = time.monotonic()
    async with src:
        s = await src.sample()
    assert time.monotonic() - t0 < 5
    assert s.status.state is SourceState.AUTH, s.status
    assert "Host key verification failed" in (s.status.error or "")
    assert "ssh-keyscan" in (s.status.hint or "")
    assert "known_hosts" in (s.status.hint or "")
    assert not ssh_children()


async def test_remote_name_defaults_to_ssh_and_fails_fast_when_unresolvable() -> None:
    cfg = build_config({"primary": {"host": "replmon-no-such-host.invalid", "mysql": OFF,
                                    "redis": OFF},
                        "replica": node("local")})
    async with build_collector(cfg) as c:
        tick = await c.sample_once()
    host, drbd = tick.primary.host.status, tick.primary.drbd.status
    assert host.state is SourceState.UNREACHABLE, host
    assert drbd.state is SourceState.UNREACHABLE, drbd
    assert "replmon-no-such-host.invalid" in (host.error or "")
    assert tick.replica.host.status.ok


# --- (c) dropped connection -----------------------------------------------------------

async def test_dropped_connection_is_unreachable_then_reconnects(trusted: Sshd) -> None:
    synced = str(FIXTURES / "s10_8411_syncsource_synced.txt")
    c = collector(node("local"), ssh_node(trusted, "remote", proc_path=synced))
    ticks: list[Tick] = []
    async with c:
        it = c.ticks(14).__aiter__()
        for _ in range(5):
            ticks.append(await it.__anext__())
            if ticks[-1].replica.host.status.ok:
                break
        assert ticks[-1].replica.host.status.ok, ticks[-1].replica.host.status
        assert ticks[-1].replica.drbd.status.ok, ticks[-1].replica.drbd.status
        assert trusted.drop_sessions() == 1
        dropped = await it.__anext__()
        for state in (dropped.replica.host.status, dropped.replica.drbd.status):
            assert state.state is SourceState.UNREACHABLE, state
            # OpenSSH words it "closed" or, when the drop lands mid-read, "Connection lost"
            assert any(w in (state.error or "") for w in ("closed", "lost")), state
        assert dropped.primary.host.status.ok
        back = None
        async for t in it:
            if t.replica.host.status.ok and t.replica.drbd.status.ok:
                back = t
                break
        runners = {src.runner for src in c.replica.all()}
    assert back is not None, "no reconnect within the ticks"
    assert back.seq - dropped.seq <= 4
    (r,) = runners
    assert isinstance(r, SshRunner)
    assert r.connects == 2
    assert not ssh_children()


# --- (d) a slow remote does not delay the other node --------------------------------------

async def test_slow_remote_command_does_not_delay_the_local_node(
    trusted: Sshd, tmp_path: Path
) -> None:
    v9 = tmp_path / "drbd9"
    shutil.copy(FIXTURES / "d9_proc_9022.txt", v9)
    c = collector(node("local"), ssh_node(trusted, "slow", proc_path=str(v9),
                                          command=["sleep", "5"]))
    async with c:
        ticks = [t async for t in c.ticks(4)]
    drbd_states = [t.replica.drbd.status.state for t in ticks]
    assert SourceState.TIMEOUT in drbd_states, drbd_states
    # Bounds from the design, not from an idle machine: a local read or a tick start that
    # had waited on the remote would take the remote's whole timeout (0.8 x the 1 s
    # interval; its command sleeps 5 s); on a busy machine a local read alone has taken
    # 351 ms (4 test workers and a CPU hog on 2 cores).
    timeout_ms = 1000 * 0.8
    for t in ticks:
        assert t.primary.host.status.ok, t.primary.host.status
        assert t.primary.host.elapsed_ms is not None
        assert t.primary.host.elapsed_ms < timeout_ms, t.primary.host.elapsed_ms
        assert (t.mono - t.due_mono) * 1000 < timeout_ms, (t.seq, t.due_mono, t.mono)
        assert t.duration_ms < timeout_ms + 150, t.duration_ms


# --- (e) one ssh process per node ------------------------------------------------------------

async def test_one_ssh_process_per_node_for_the_session(trusted: Sshd) -> None:
    synced = str(FIXTURES / "s10_8411_syncsource_synced.txt")
    c = collector(ssh_node(trusted, "a", proc_path=synced), ssh_node(trusted, "b"))
    counts = []
    async with c:
        async for t in c.ticks(5):
            counts.append(len(ssh_children()))
            last = t
        runners = [next(iter({s.runner for s in n.all()})) for n in (c.primary, c.replica)]
    assert counts == [2] * 5, counts
    assert last.primary.host.status.ok
    assert last.replica.host.status.ok
    assert last.primary.drbd.status.ok
    assert [r.connects for r in runners] == [1, 1]
    assert not ssh_children()


def test_ssh_spec_parsing() -> None:
    assert parse_ssh_spec("off") == {"mode": "off"}
    assert parse_ssh_spec("local") == {"mode": "local"}
    assert parse_ssh_spec("mon@db163:2222") == {"mode": "ssh", "user": "mon", "host": "db163",
                                                "port": 2222}
    assert parse_ssh_spec("db163") == {"mode": "ssh", "host": "db163"}
    assert parse_ssh_spec("[fe80::1]:22") == {"mode": "ssh", "host": "fe80::1", "port": 22}


async def test_the_link_timing_does_not_run_the_nodes_bashrc(tmp_path: Path) -> None:
    """bash started under sshd reads ~/.bashrc even with -c (Debian builds it with
    SSH_SOURCE_BASHRC): on a node whose .bashrc sets up pyenv that was ~90 ms of the
    node's CPU per tick and primary, and a .bashrc that prints breaks the reading. The
    sessions of this test's own sshd get a HOME whose .bashrc prints and leaves a mark.
    (The old code failed the first assertion: no link timing, the reply was the .bashrc's.)"""
    home = tmp_path / "home"
    home.mkdir()
    mark = home / "bashrc-ran"
    (home / ".bashrc").write_text(f"echo hello from bashrc; echo ran >> {mark}\n")
    (tmp_path / "sshd").mkdir()
    with Sshd(tmp_path / "sshd", extra_config=f"SetEnv HOME={home}\n") as server:
        server.trust(True)
        peer = await asyncio.start_server(lambda rd, wr: wr.close(), "127.0.0.1", 0)
        r = runner(server)
        try:
            assert (await r.run(["sh", "-c", "echo $HOME"])).strip() == str(home)
            src = HostSource(r, timeout=5, peer=("127.0.0.1", peer.sockets[0].getsockname()[1]))
            samples = [await src.sample() for _ in range(3)]
        finally:
            peer.close()
            await r.close()
    assert all(s.status.ok and s.peer_rtt_ms is not None for s in samples), samples
    # once: the login shell sshd starts for the connection (the user's shell, which
    # replmon does not choose), never per tick
    assert mark.read_text() == "ran\n"


async def test_link_round_trip_is_timed_on_the_remote_node(trusted: Sshd) -> None:
    """The primary's link timing runs on the node, through its SSH channel, in the same
    tick as the /proc reads; a closed port gives None and the sample stays ok."""
    server = await asyncio.start_server(lambda rd, wr: wr.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    r = runner(trusted)
    try:
        src = HostSource(r, timeout=5, peer=("127.0.0.1", port))
        await src.sample()  # connect
        s = await src.sample()
        server.close()
        await server.wait_closed()
        closed = await HostSource(r, timeout=5, peer=("127.0.0.1", port)).sample()
    finally:
        server.close()
        await r.close()
    assert s.status.ok and s.peer == f"127.0.0.1:{port}"
    assert s.peer_rtt_ms is not None and 0 < s.peer_rtt_ms < 50
    assert closed.status.ok and closed.peer_rtt_ms is None
