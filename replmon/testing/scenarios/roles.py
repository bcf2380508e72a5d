"""Roles that move (#40): the lab's primary and replica swap places, on one layer or
both, the way a planned switchover does it (replmon.lab_switch), under the write load,
which follows the new primary. The ``roles`` check says "<node> is now the primary".

In ``SWITCHOVERS``, not ``LAB``: the matrix and the accuracy bench (``all_scenarios``)
do not run them until the check exists. Each ``induce`` switches over on entry and back
on exit, so the lab is as it was for the next test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from replmon.lab import LAYERS, Layer
from replmon.lab_switch import switched
from replmon.testing.scenarios import Induce, LabScenario


def switched_over(layers: Sequence[Layer]) -> Induce:
    """An ``induce``: ``layers`` switched over for the block, back after it."""
    @contextlib.contextmanager
    def induce(lab: Any) -> Iterator[None]:
        with switched(lab, layers):
            yield
    return induce


SWITCHOVERS = [
    LabScenario("planned switchover of MySQL and Redis under write load (read_only, "
                "replica caught up and promoted, old primary replicating from it)", "roles",
                induce=switched_over(LAYERS)),
    LabScenario("half-done switchover: MySQL switched over, the Redis master left on the "
                "old primary", "roles", induce=switched_over(("mysql",))),
    LabScenario("Redis switched over only (REPLICAOF NO ONE on the replica, REPLICAOF on "
                "the old master), MySQL left", "roles", induce=switched_over(("redis",))),
]
