"""Struct's own constructors: ``trusted`` (no validation, for values replmon's parsers
have just typed) and ``model_copy``."""

from __future__ import annotations

import pytest

from replmon.model.base import SourceState, SourceStatus
from replmon.model.host import HostSample, NicCounters, PsiLine
from replmon.model.redis import RedisSample


def test_trusted_is_the_constructor_without_validation() -> None:
    args = {"avg10": 1.5, "avg60": 0.25, "avg300": 0.0, "total_us": 12}
    assert PsiLine.trusted(**args) == PsiLine(**args)
    # defaults and default factories as the constructor fills them, a fresh one each
    a, b = NicCounters.trusted(rx_bytes=3), NicCounters.trusted()
    assert a == NicCounters(rx_bytes=3) and a.routes == [] and a.routes is not b.routes
    assert HostSample.trusted() == HostSample()
    # no validation: what it is given is what it holds (the constructor would refuse)
    assert PsiLine.trusted(avg10="x").avg10 == "x"  # type: ignore[arg-type]


def test_trusted_refuses_what_is_not_a_field() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'speed'"):
        NicCounters.trusted(speed=1)


def test_trusted_record_is_frozen_and_serialises() -> None:
    s = HostSample.trusted(hostname="db1", load1=0.5)
    with pytest.raises(AttributeError):
        s.hostname = "x"  # type: ignore[misc]
    assert HostSample.model_validate_json(s.model_dump_json()) == s


def test_model_copy_replaces_the_update_only() -> None:
    r = RedisSample(run_id="r", counters={"a": 1}, status=SourceStatus(state=SourceState.TIMEOUT))
    c = r.model_copy(update={"rtt_ms": 2.5})
    assert c.rtt_ms == 2.5 and c.counters is r.counters and c.status is r.status
    assert c == RedisSample(run_id="r", counters={"a": 1}, rtt_ms=2.5,
                            status=SourceStatus(state=SourceState.TIMEOUT))
    assert r.model_copy() == r and r.model_copy() is not r
    with pytest.raises(TypeError, match="no field 'nope'"):
        r.model_copy(update={"nope": 1})
    one = SourceStatus().model_copy(update={"error": "e"})
    assert one == SourceStatus(error="e")


def test_trusted_of_each_kind_of_field() -> None:
    """The constructor ``@struct`` writes out for a class: a required field, a default, a
    default factory (a fresh one a record), and Python's TypeError for a missing one."""
    from dataclasses import field

    from replmon.model.base import Struct, struct

    @struct
    class Three(Struct):
        name: str
        port: int = 6379
        tags: list[str] = field(default_factory=list)

    a, b = Three.trusted(name="a"), Three.trusted(name="b", tags=["x"])
    assert a == Three(name="a") and b == Three(name="b", tags=["x"])
    assert Three.trusted(name="c").tags is not a.tags
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'name'"):
        Three.trusted(port=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        Three.trusted("a")  # type: ignore[misc]
