"""Fixtures of the live tests beside tests/conftest.py's ``lab``: the pool of labs of
other server versions, the Oracle MySQL 9.7 lab taken from it, and the two-host lab
(``twohost``) the tests/live/test_twohost_*.py modules share."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
from labpool import MYSQL97, LabPool

from replmon.lab import Lab
from replmon.lab.hosts import TwoHostLab
from replmon.lab.load import WriteLoad


@pytest.fixture(scope="session")
def lab_pool() -> Iterator[LabPool]:
    pool = LabPool()
    try:
        yield pool
    finally:
        pool.stop()


@pytest.fixture(scope="session")
def mysql97(lab_pool: LabPool) -> Lab:
    """An Oracle MySQL 9.7 pair (Debian sid in a chroot, prepared on first use); tests
    using it carry ``group(MYSQL97)`` so that one worker starts it."""
    return lab_pool.get(*MYSQL97)


class _TwoHost:
    """The two-host lab under the demo's write load (300 statements/s), started by the
    first test that asks and stopped after the last one of a run of them
    (``pytest_runtest_teardown``): the worker's later tests do not pay for its load."""

    def __init__(self) -> None:
        self.lab: TwoHostLab | None = None
        self._stack: contextlib.ExitStack | None = None

    def get(self) -> TwoHostLab:
        if self.lab is None:
            t0 = time.monotonic()
            stack = contextlib.ExitStack()
            lab = stack.enter_context(TwoHostLab())
            # 150 writes/s: ~55 KB/s on the replication link, 3.4x the shaped link's
            # 16 KB/s, at half the CPU of 300/s beside the suite's other workers
            stack.enter_context(WriteLoad(lab, rate=150))
            self.lab, self._stack = lab, stack
            print(f"two-host lab up in {time.monotonic() - t0:.1f} s: {lab.describe()}")
        return self.lab

    def stop(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self.lab, self._stack = None, None


_TWOHOST = _TwoHost()


@pytest.fixture
def twohost() -> TwoHostLab:
    """The two-host lab (replmon.lab.hosts) under a write load, shared by the
    tests/live/test_twohost_*.py modules (each marks ``xdist_group("twohost")``: one
    worker starts it once)."""
    return _TWOHOST.get()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if _TWOHOST.lab is not None and (
            nextitem is None or "twohost" not in getattr(nextitem, "fixturenames", ())):
        _TWOHOST.stop()
