"""replmon's /proc parsers against psutil, on this machine, at the same moment.

psutil reads the same kernel files with its own, widely used parsers; the two
readings are taken back to back (~1 ms apart), so gauges and identities must
match exactly and counters within what can change in that time.
"""

from __future__ import annotations

import os
import sys

import psutil
import pytest

from replmon.model.host import HostSample
from replmon.sources.host_parse import PROC_FILES, build_host_sample
from replmon.sources.runner import LocalRunner

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads Linux /proc")

HZ = os.sysconf("SC_CLK_TCK")


async def _replmon() -> HostSample:
    return build_host_sample(await LocalRunner().read_files(PROC_FILES))


async def test_cpu_times_match_psutil() -> None:
    ours = (await _replmon()).cpu
    theirs = psutil.cpu_times()
    assert ours is not None
    slack = 0.2 * psutil.cpu_count()  # seconds of CPU time that can pass between reads
    for name in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"):
        assert abs(getattr(ours, name) / HZ - getattr(theirs, name)) <= slack, name
    psutil_total = sum(getattr(theirs, f) for f in theirs._fields if f not in ("guest",
                                                                               "guest_nice"))
    assert abs(ours.total / HZ - psutil_total) <= slack * 2


async def test_memory_swap_and_load_match_psutil() -> None:
    s = await _replmon()
    vm, sw = psutil.virtual_memory(), psutil.swap_memory()
    assert s.mem is not None
    assert s.mem.total == vm.total
    assert s.mem.swap_total == sw.total
    assert abs((s.mem.swap_free or 0) - sw.free) <= 16 * 2**20
    assert abs((s.mem.available or 0) - vm.available) <= 256 * 2**20
    assert s.vm is not None
    assert abs((s.vm.pswpin or 0) * s.page_size - sw.sin) <= 2**20
    assert abs((s.vm.pswpout or 0) * s.page_size - sw.sout) <= 2**20
    assert s.ncpu == psutil.cpu_count()
    assert s.btime == int(psutil.boot_time()) or abs((s.btime or 0) - psutil.boot_time()) < 2
    load = psutil.getloadavg()
    assert (s.load1, s.load5, s.load15) == pytest.approx(load, abs=0.1)


async def test_disk_counters_match_psutil() -> None:
    s = await _replmon()
    theirs = psutil.disk_io_counters(perdisk=True, nowrap=False)
    assert s.disks, "no whole disk found on this machine"
    assert set(s.disks) <= set(theirs)
    # psutil lists partitions too; every whole disk it lists must be ours
    sys_block = set(os.listdir("/sys/block"))
    whole = {n for n in theirs if n in sys_block and not n.startswith(("loop", "ram", "zram"))}
    assert whole == set(s.disks)
    for name, d in s.disks.items():
        t = theirs[name]
        assert abs(d.reads - t.read_count) <= 50, name
        assert abs(d.writes - t.write_count) <= 50, name
        assert abs(d.read_bytes - t.read_bytes) <= 16 * 2**20, name
        assert abs(d.write_bytes - t.write_bytes) <= 16 * 2**20, name
        assert abs(d.io_ms - t.busy_time) <= 200, name


async def test_nic_counters_match_psutil() -> None:
    s = await _replmon()
    theirs = psutil.net_io_counters(pernic=True, nowrap=False)
    assert set(s.nics) == set(theirs)
    for name, n in s.nics.items():
        t = theirs[name]
        assert abs(n.rx_packets - t.packets_recv) <= 100, name
        assert abs(n.tx_packets - t.packets_sent) <= 100, name
        assert abs(n.rx_bytes - t.bytes_recv) <= 2**20, name
        assert abs(n.tx_bytes - t.bytes_sent) <= 2**20, name
        assert (n.rx_errors, n.rx_drops) == (t.errin, t.dropin), name
        assert (n.tx_errors, n.tx_drops) == (t.errout, t.dropout), name
