"""Fixtures of the live tests beside tests/conftest.py's ``lab``: the pool of labs of
other server versions, and the Oracle MySQL 9.7 lab taken from it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from labpool import MYSQL97, LabPool

from replmon.lab import Lab


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
