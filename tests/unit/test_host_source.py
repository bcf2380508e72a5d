"""HostSource on captured text (CannedRunner, or LocalRunner pointed at a fixture tree)
and on this machine's live /proc, cross-checked against psutil."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

import replmon.sources.host as host_module
from replmon.model.base import SourceState
from replmon.model.host import HostSample
from replmon.sources.host import HostSource
from replmon.sources.host_parse import build_host_sample, speed_path
from replmon.sources.runner import CannedRunner, LocalRunner

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "host"


def capture(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {"/" + p.relative_to(root).as_posix(): p.read_text()
            for p in root.rglob("*") if p.is_file()}


class RecordingRunner(CannedRunner):
    """CannedRunner that remembers what was asked of it, batch by batch."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(files)
        self.batches: list[list[str]] = []
        self.singles: list[str] = []

    async def read_files(self, paths: Sequence[str]) -> dict[str, str | None]:
        self.batches.append(list(paths))
        return {p: self.files.get(p) for p in paths}

    async def read_file(self, path: str) -> str:
        self.singles.append(path)
        return await super().read_file(path)


def payload(s: HostSample) -> dict[str, object]:
    return s.model_dump(exclude={"status", "wall", "mono", "elapsed_ms"})


async def test_canned_capture_samples_ok() -> None:
    files = capture("a")
    s = await HostSource(CannedRunner(files)).sample()
    assert s.status.state is SourceState.OK, s.status.error
    assert payload(s) == payload(build_host_sample(files))
    assert s.hostname == "vm"
    assert s.cpu is not None
    assert s.cpu.user == 26955
    assert s.mono > 0
    assert s.wall > 0


async def test_local_runner_on_a_fixture_tree() -> None:
    src = HostSource(LocalRunner(), proc_root=str(FIXTURES / "b" / "proc"),
                     sys_root=str(FIXTURES / "b" / "sys"))
    s = await src.sample()
    assert s.status.ok, s.status.error
    assert s.ctxt == 2504008
    assert s.disks["vda"].writes == 113806
    assert s.nics["eth0"].speed_mbps is None  # the file says -1


async def test_one_batch_read_per_tick_and_speeds_only_when_nics_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = capture("a")
    files[speed_path("eth0")] = "1000\n"
    runner = RecordingRunner(files)
    src = HostSource(runner)
    s1 = await src.sample()
    assert s1.nics["eth0"].speed_mbps == 1000
    assert len(runner.batches) == 1
    assert "/proc/stat" in runner.batches[0]
    assert sorted(runner.singles) == [speed_path(n) for n in ("eth0", "ifb0", "ifb1")]  # no lo

    runner.singles.clear()
    await src.sample()
    assert len(runner.batches) == 2
    assert runner.singles == []

    # a bond appears: its speed is read at once
    runner.files["/proc/net/dev"] += "bond0: " + "1 " * 16 + "\n"
    runner.files[speed_path("bond0")] = "20000\n"
    s3 = await src.sample()
    assert s3.nics["bond0"].speed_mbps == 20000
    assert s3.nics["eth0"].speed_mbps == 1000
    assert speed_path("bond0") in runner.singles

    # same NICs, but the minute is up: the link renegotiated down to 100 Mb/s
    runner.singles.clear()
    runner.files[speed_path("eth0")] = "100\n"
    monkeypatch.setattr(host_module, "SPEED_REFRESH_S", 0.0)
    s4 = await src.sample()
    assert s4.nics["eth0"].speed_mbps == 100
    assert runner.singles


async def test_garbled_proc_stat_is_a_parse_error_status_not_an_exception() -> None:
    files = capture("a")
    files["/proc/stat"] = files["/proc/stat"].replace("cpu  26955 0 7879", "cpu  26955 0 78#9")
    s = await HostSource(CannedRunner(files)).sample()
    assert s.status.state is SourceState.PARSE_ERROR
    assert "/proc/stat line 1" in (s.status.error or "")
    assert s.cpu is None
    assert s.disks == {}


async def test_missing_proc_stat_is_unreachable() -> None:
    s = await HostSource(CannedRunner({}), proc_root="/nonexistent/proc").sample()
    assert s.status.state is SourceState.UNREACHABLE
    assert "/nonexistent/proc/stat" in (s.status.error or "")
    assert s.status.hint


async def test_missing_optional_files_leave_fields_empty() -> None:
    files = {k: v for k, v in capture("a").items() if "pressure" not in k and "net" not in k}
    s = await HostSource(CannedRunner(files)).sample()
    assert s.status.ok
    assert (s.psi_cpu, s.psi_memory, s.psi_io) == (None, None, None)
    assert s.nics == {}
    assert s.load1 == 0.03


# --- this machine, against psutil ------------------------------------------------------


async def test_live_sample_matches_psutil_and_os() -> None:
    src = HostSource(LocalRunner())
    before = await src.sample()
    ps_cpu = psutil.cpu_times()
    ps_mem = psutil.virtual_memory()
    ps_swap = psutil.swap_memory()
    ps_disks = psutil.disk_io_counters(perdisk=True)
    ps_nics = psutil.net_io_counters(pernic=True)
    load = os.getloadavg()
    after = await src.sample()
    assert before.status.ok, before.status
    assert after.status.ok, after.status
    assert before.cpu is not None
    assert after.cpu is not None
    assert before.mem is not None
    assert after.mem is not None

    # Counters only grow, so psutil's reading lies between ours (one tick of rounding).
    hz = os.sysconf("SC_CLK_TCK")
    for field in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"):
        ticks = round(getattr(ps_cpu, field) * hz)
        assert getattr(before.cpu, field) - 1 <= ticks <= getattr(after.cpu, field) + 1, field
    assert before.ncpu == psutil.cpu_count(logical=True)

    assert before.mem.total == ps_mem.total
    assert before.mem.available is not None
    assert after.mem.available is not None
    lo, hi = sorted((before.mem.available, after.mem.available))
    assert lo - 8 * 2**20 <= ps_mem.available <= hi + 8 * 2**20
    assert before.mem.swap_total == ps_swap.total

    shared = set(before.disks) & set(ps_disks)
    assert shared, (list(before.disks), list(ps_disks))
    for name in shared:
        d0, d1, ps = before.disks[name], after.disks[name], ps_disks[name]
        assert d0.reads <= ps.read_count <= d1.reads, name
        assert d0.writes <= ps.write_count <= d1.writes, name
        assert d0.read_bytes <= ps.read_bytes <= d1.read_bytes, name
        assert d0.write_bytes <= ps.write_bytes <= d1.write_bytes, name

    assert set(before.nics) == set(ps_nics)
    n0, n1, pn = before.nics["lo"], after.nics["lo"], ps_nics["lo"]
    assert n0.rx_bytes <= pn.bytes_recv <= n1.rx_bytes
    assert n0.tx_bytes <= pn.bytes_sent <= n1.tx_bytes

    assert before.load1 is not None
    assert after.load1 is not None
    lo_load, hi_load = sorted((before.load1, after.load1))
    assert lo_load - 0.01 <= load[0] <= hi_load + 0.01
    assert before.hostname == os.uname().nodename
    assert before.btime is not None
    assert abs(before.btime - psutil.boot_time()) <= 1


@pytest.mark.parametrize(("text", "ms"), [
    ("1795452892.846903 1795452892.847153\n", 0.25),
    ("1795452892,846903 1795452892,856903\n", 10.0),  # a locale with a decimal comma
    ("", None), ("garbage\n", None), ("1795452892.9 1795452892.8\n", None),
])
def test_peer_rtt_output(text: str, ms: float | None) -> None:
    from replmon.sources.host import parse_peer_rtt

    got = parse_peer_rtt(text)
    assert (got is None) if ms is None else got == pytest.approx(ms, abs=1e-3)


async def test_peer_rtt_is_timed_on_this_machine_and_a_closed_port_is_none() -> None:
    """A real TCP connect through LocalRunner: to a listening loopback socket it gives a
    small round trip; to a closed port None, quickly, and the sample is still ok."""
    import asyncio
    import socket

    from replmon.sources.host import HostSource
    from replmon.sources.runner import LocalRunner

    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        s = await HostSource(LocalRunner(), timeout=0.8, peer=("127.0.0.1", port)).sample()
    finally:
        server.close()
    assert s.status.ok and s.peer == f"127.0.0.1:{port}"
    assert s.peer_rtt_ms is not None and 0 < s.peer_rtt_ms < 50
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    s = await HostSource(LocalRunner(), timeout=0.8, peer=("127.0.0.1", closed)).sample()
    assert s.status.ok and s.peer_rtt_ms is None


async def test_peer_rtt_on_this_machine_is_the_kernels_and_starts_no_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """LocalRunner's connect is made in-process and timed by the kernel (TCP_INFO): no
    bash per tick (0.8 ms of replmon's CPU and 2.6 ms of the child's, per primary and
    tick, at fleet scale). Loopback's handshake is microseconds: under 5 ms even with the
    event loop busy elsewhere, which a wall-clock timing in the loop would not be."""
    import asyncio
    import time

    from replmon.sources.host import HostSource
    from replmon.sources.runner import LocalRunner

    async def no_process(*args: object, **kw: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", no_process)
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]

    async def busy() -> None:  # holds the loop 20 ms at a time while the connect runs
        for _ in range(5):
            time.sleep(0.02)  # noqa: ASYNC251 (the point: the loop is held)
            await asyncio.sleep(0)

    try:
        # without the root qdiscs' read (tc, a process every QDISC_REFRESH_S, not per tick)
        src = HostSource(LocalRunner(), timeout=0.8, peer=("localhost", port), qdiscs=False)
        s, _ = await asyncio.gather(src.sample(), busy())
    finally:
        server.close()
    assert s.status.ok and s.peer_rtt_ms is not None and 0 < s.peer_rtt_ms < 5


# --- local nodes share this machine's tc read (replmon serve) ---------------------------


async def test_local_sources_share_one_tc_read(monkeypatch: Any) -> None:
    """Two local nodes sampled together (a pair's, in serve) run one ``tc`` between them,
    and no other until QDISC_REFRESH_S has passed; each reads /proc itself."""
    import replmon.sources.runner as runner

    procs: list[tuple[str, ...]] = []
    reads: list[str] = []
    real_exec, real_read = asyncio.create_subprocess_exec, runner.read_text
    real_proc_read = runner.read_proc_text

    async def counting_exec(*argv: str, **kw: Any) -> Any:
        procs.append(argv)
        return await real_exec(*argv, **kw)

    def counting_read(path: str) -> str:
        reads.append(path)
        return real_read(path)

    def counting_proc_read(path: str) -> str:
        reads.append(path)
        return real_proc_read(path)

    monkeypatch.setattr(asyncio, "create_subprocess_exec", counting_exec)
    monkeypatch.setattr(runner, "read_text", counting_read)
    monkeypatch.setattr(runner, "read_proc_text", counting_proc_read)
    a, b = HostSource(LocalRunner()), HostSource(LocalRunner())
    sa, sb = await asyncio.gather(a.sample(), b.sample())
    assert sa.status.ok and sb.status.ok, (sa.status, sb.status)
    assert [p for p in procs if p[0] == "tc"] == [("tc", "-j", "qdisc", "show")]
    assert reads.count("/proc/stat") == 2, reads
    again = await a.sample()
    assert again.status.ok
    assert reads.count("/proc/stat") == 3
    assert len([p for p in procs if p[0] == "tc"]) == 1  # tc: once per QDISC_REFRESH_S
