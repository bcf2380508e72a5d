"""A dropped terminal stops `replmon --lab`'s servers: SIGHUP (twice, as a closing tmux or
ssh session may send) interrupts like ^C, and the second one does not cut the teardown
short. Found leaking after a tmux session was killed during the demo."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.live


def test_hangups_during_the_demo_stop_the_lab_and_remove_its_dir() -> None:
    with subprocess.Popen(
            [sys.executable, "-m", "replmon", "--lab", "--scenario", "sql-thread-stopped",
             "--plain"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        lab_dir, said = _hang_up_twice(proc)
    assert not lab_dir.exists(), f"{lab_dir} left behind"
    # the teardown is not silent (MySQL 9.7's took 11-13 s without a word once)
    assert "stopping the lab" in said and re.search(r"lab stopped in \d+\.\d s", said), said
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(lab_dir) not in ps


def test_a_hangup_to_the_whole_process_group_stops_the_lab_too() -> None:
    """A closing terminal signals its whole process group: the write load's process dies
    too, while it waits on its stop signal. A multiprocessing.Event's set() then waited
    forever for that dead waiter to wake: replmon hung in its teardown, the lab left
    running (seen after `tmux kill-server`). The stop is a plain shared flag now."""
    with subprocess.Popen(
            [sys.executable, "-m", "replmon", "--lab", "--scenario", "sql-thread-stopped",
             "--plain"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True) as proc:
        lab_dir, _ = _hang_up_twice(proc, group=True)
    assert not lab_dir.exists(), f"{lab_dir} left behind"


def _hang_up_twice(proc: subprocess.Popen[str], *, group: bool = False) -> tuple[Path, str]:
    """Wait for the lab, SIGHUP, SIGHUP again during the teardown, wait for the exit;
    the lab's dir and what replmon said on stderr after it came up."""
    assert proc.stderr is not None
    lab_dir = None
    deadline = time.monotonic() + 60
    while lab_dir is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if m := re.search(r"lab up in (\S+):", line):
            lab_dir = Path(m[1])
    assert lab_dir is not None and lab_dir.exists()
    time.sleep(3)

    def hup() -> None:
        if group:  # as a terminal does: every process of its session
            os.killpg(proc.pid, signal.SIGHUP)
        else:
            os.kill(proc.pid, signal.SIGHUP)

    hup()
    time.sleep(0.3)
    hup()  # during the teardown
    proc.wait(timeout=60)
    return lab_dir, proc.stderr.read()
