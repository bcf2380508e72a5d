"""Labs of other server versions for the live tests: the pool that starts each once per
session (per xdist worker), and the xdist group that keeps the tests sharing one on one
worker."""

from __future__ import annotations

import pytest

from replmon.lab import Lab

Versions = tuple[str | None, str]
"""(mysql, redis) server versions of a lab; mysql None: a lab without MySQL."""


class LabPool:
    """Labs by (mysql, redis) server versions, each started once per session."""

    def __init__(self) -> None:
        self.labs: dict[Versions, Lab] = {}

    def get(self, mysql: str | None, redis: str) -> Lab:
        key = (mysql, redis)
        if key not in self.labs:
            lab = Lab(mysql=mysql, redis=redis)
            lab.start()
            self.labs[key] = lab
        return self.labs[key]

    def stop(self) -> None:
        for lab in self.labs.values():
            lab.stop()


MYSQL97 = ("mysql-9.7", "valkey-8.1")
"""The Oracle MySQL lab (with Valkey 8.1 beside it: the matrix runs its Redis tests too)."""


def name(versions: Versions) -> str:
    """``mysql-9.7+valkey-8.1``; ``redis-6.2`` for a lab without MySQL."""
    return "+".join(v for v in versions if v is not None)


def group(versions: Versions) -> pytest.MarkDecorator:
    """The xdist group of the tests that share the lab of ``versions``."""
    return pytest.mark.xdist_group(name(versions))


MATRIX: tuple[Versions, ...] = (
    ("mariadb-11.8", "redis-8.0"),
    MYSQL97,
    (None, "redis-6.2"),
    (None, "valkey-9.1"),
)
"""The labs of the version matrix beside the default (MariaDB 10.11 + Redis 7.0, which
the rest of the live tests use): every MySQL flavour and every Redis/Valkey at least once.
Redis 6.2 and Valkey 9.1 run without MySQL: they are here for themselves, and a MariaDB
10.11 pair beside them (the default lab's, tested there) only cost its start and its
idle servers."""


NAMED_WITHIN_S = 15.0
"""Issue #55: each fault between two hosts is named within 15 s (the two-host tests)."""
