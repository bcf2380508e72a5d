"""LocalRunner's reads of this machine's /proc: kept descriptors, fresh text (#56)."""

from __future__ import annotations

import os
import time

import pytest

from replmon.sources.runner import LocalRunner, read_each, read_proc_text, read_text


def test_a_kept_descriptor_reads_the_file_afresh() -> None:
    """procfs makes the text anew at each read from offset 0: the second read through
    the same kept descriptor sees time go on, as a fresh open does."""
    first = float(read_proc_text("/proc/uptime").split()[0])
    time.sleep(0.05)
    second = float(read_proc_text("/proc/uptime").split()[0])
    third = float(read_text("/proc/uptime").split()[0])
    assert first < second <= third


def test_a_long_file_is_read_whole() -> None:
    """Past one pread (a /proc file longer than the buffer would be read in pieces)."""
    for _ in range(2):
        text = read_proc_text("/proc/self/smaps")  # this process: tens of KB, changes little
        assert text.endswith("\n") and text.count("VmFlags:") > 10


async def test_read_files_as_read_each() -> None:
    etc = "/etc/hostname" if os.path.exists("/etc/hostname") else "/nope"  # noqa: ASYNC240
    paths = ["/proc/sys/kernel/ostype", "/proc/sys/kernel/hostname", "/proc/no-such-file",
             "/proc/self/comm", etc]
    runner = LocalRunner()
    kept = await runner.read_files(paths)
    assert kept == await read_each(runner, paths)
    assert kept["/proc/no-such-file"] is None
    with pytest.raises(FileNotFoundError):
        read_proc_text("/proc/no-such-file")
