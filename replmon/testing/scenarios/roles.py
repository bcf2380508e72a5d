"""Roles that move (#40): the lab's primary and replica swap places, on one layer or
both, the way a planned switchover does it (replmon.lab.switch), under the write load,
which follows the new primary. The ``roles`` check says "<node> is now the primary".

The change opens an info finding at once (the event; "changing" while half done), so
the scenarios expect info; tests/live/test_roles_live.py holds the half-done warning
and the quiet pair after a switchover. Each ``induce`` switches over on entry and back
on exit, so the lab is as it was for the next test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from replmon.lab import LAYERS, Layer
from replmon.lab.switch import switched
from replmon.model.findings import Severity
from replmon.testing.scenarios import Induce, LabScenario


def switched_over(layers: Sequence[Layer]) -> Induce:
    """An ``induce``: ``layers`` switched over for the block, back after it."""
    @contextlib.contextmanager
    def induce(lab: Any) -> Iterator[None]:
        with switched(lab, layers):
            yield
    return induce


LAB = [
    LabScenario("planned switchover of MySQL and Redis under write load (read_only, "
                "replica caught up and promoted, old primary replicating from it)", "roles",
                induce=switched_over(LAYERS), min_severity=Severity.INFO),
    LabScenario("half-done switchover: MySQL switched over, the Redis master left on the "
                "old primary", "roles", induce=switched_over(("mysql",)),
                min_severity=Severity.INFO),
    LabScenario("Redis switched over only (REPLICAOF NO ONE on the replica, REPLICAOF on "
                "the old master), MySQL left", "roles", induce=switched_over(("redis",)),
                min_severity=Severity.INFO),
]
