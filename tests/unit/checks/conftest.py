"""Every check's tests also check that the observations the built-in checks build without
validation (``Observation.trusted``) are what validation would build from the same values
(``replmon.model.findings.Observation``): a Severity, str texts, a numbers dict of int,
float, str, bool or None (an IntEnum or a Decimal there would be a float after it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from typedleaves import typed_leaves

from replmon.model.findings import Observation


@pytest.fixture(autouse=True)
def _observations_as_validation_builds_them() -> Iterator[None]:
    trusted = Observation.trusted

    def checked(**values: Any) -> Observation:
        o = trusted(**values)
        assert typed_leaves(o) == typed_leaves(Observation(**values)), values
        return o

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Observation, "trusted", checked)
        yield
