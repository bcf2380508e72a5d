"""Shared fixtures. The ``lab`` fixture starts a real MariaDB + Redis
primary/replica pair on loopback (replmon.lab) once per test session and tears
it down at the end, also when tests fail. A missing server binary is an error,
never a skip: CI must run the live tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replmon.lab import Lab


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    with Lab() as the_lab:
        yield the_lab


@pytest.fixture(scope="session")
def mysql97() -> Iterator[Lab]:
    """An Oracle MySQL 9.7 pair (Debian sid in a chroot, prepared on first use) with the
    session's Redis 7.0; shared by the tests that read what only Oracle MySQL says."""
    with Lab(mysql="mysql-9.7") as the_lab:
        yield the_lab
