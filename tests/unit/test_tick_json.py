"""tick_from_json (msgspec, the replay's fast path) against Tick.model_validate_json
(pydantic, the reference): the same Tick, value for value and type for type, on
every tick of the shipped sessions and the lab fixture; the same refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from pydantic import ValidationError

from replmon.model.base import SourceState
from replmon.model.tick import NO_RATES, Tick, tick_from_json
from replmon.session.recording import open_recording

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = sorted((ROOT / "sample_sessions").glob("*.rmrec"))
NO_RATES_DUMP: Any = {"primary": {"rates"}, "replica": {"rates"}}


def leaves(o: object, path: str = "") -> Iterator[tuple[str, type, object]]:
    """Every value in a tick with its path and exact type (an int is not a float)."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield from leaves(v, f"{path}.{k}")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from leaves(v, f"{path}[{i}]")
    elif hasattr(o, "_field_names"):
        yield path, type(o), None
        for name in o._field_names:
            yield from leaves(getattr(o, name), f"{path}.{name}")
    else:
        yield path, type(o), o


def recorded_tick_json(path: Path) -> list[bytes]:
    """The tick JSON of every intact tick as stored (samples only; rates are derived)."""
    with open_recording(path) as rec:
        return [t.model_dump_json(exclude=NO_RATES_DUMP).encode() for t in rec.ticks()]


def test_sessions_are_there() -> None:
    assert len(SESSIONS) >= 7


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_same_tick_as_pydantic_on_every_recorded_tick(path: Path) -> None:
    ticks = recorded_tick_json(path)
    assert ticks
    for raw in ticks:
        ours, ref = tick_from_json(raw), Tick.model_validate_json(raw)
        assert ours == ref
        assert list(leaves(ours)) == list(leaves(ref))
        assert ours.primary.rates is NO_RATES  # the default, as pydantic fills it


def test_same_tick_on_the_lab_fixture_with_rates() -> None:
    lines = (ROOT / "tests/fixtures/ticks/lab_pair.jsonl").read_bytes().splitlines()
    for raw in lines:
        ours, ref = tick_from_json(raw), Tick.model_validate_json(raw)
        assert ours == ref
        assert list(leaves(ours)) == list(leaves(ref))
    assert isinstance(ours.primary.host.status.state, SourceState)


def _tampered(change: Any) -> bytes:
    raw = (ROOT / "tests/fixtures/ticks/lab_pair.jsonl").read_bytes().splitlines()[3]
    d = json.loads(raw)
    change(d)
    return json.dumps(d).encode()


@pytest.mark.parametrize("change", [
    lambda d: d["primary"]["host"].update(ncpu="two"),          # wrong type
    lambda d: d["primary"]["host"]["status"].update(state="on fire"),  # not a SourceState
    lambda d: d.update(role="primary") or d["replica"].pop("role"),  # missing field
    lambda d: d["primary"]["mysql"]["counters"].update(Questions=1.5),  # float for an int
    lambda d: d.update(seq=None),
], ids=["wrong-type", "bad-enum", "missing-field", "float-for-int", "null-for-int"])
def test_both_refuse_the_same_bad_values(change: Any) -> None:
    bad = _tampered(change)
    with pytest.raises(ValidationError):
        Tick.model_validate_json(bad)
    with pytest.raises(msgspec.ValidationError):
        tick_from_json(bad)


def test_bad_json_is_a_value_error_the_decoder_reports() -> None:
    # the replay decoder turns ValueError (both libraries' errors are ones) into a problem
    assert issubclass(msgspec.DecodeError, ValueError)
    assert issubclass(msgspec.ValidationError, ValueError)
    assert issubclass(ValidationError, ValueError)
    with pytest.raises(msgspec.DecodeError, match="truncated"):
        tick_from_json(b'{"seq": 1, "interval"')


@pytest.mark.parametrize("path", [p for p in SESSIONS if p.stem in {
    "planned_switchover", "drbd_peer_disconnected", "redis_maxmemory_evictions"}],
    ids=lambda p: p.stem)
def test_a_tick_decoded_for_some_samples_only(path: Path) -> None:
    """``tick_from_json_thinned`` (a re-run of checks that name what they read): the
    samples asked for are tick_from_json's, value for value and type for type, the tick's
    own fields too; every other sample is a DroppedPart, which refuses to be read."""
    from replmon.model.parts import DroppedPart, DroppedPartError, tick_from_json_thinned

    kinds = ("host", "drbd", "mysql", "redis")
    for raw in recorded_tick_json(path)[::7]:
        whole = tick_from_json(raw)
        for keep in ({"drbd"}, {"mysql", "redis"}, {"host"}):
            part = tick_from_json_thinned(raw, frozenset(keep))
            assert (part.seq, part.wall, part.roles, part.lag) == (
                whole.seq, whole.wall, whole.roles, whole.lag)
            for role in ("primary", "replica"):
                a, b = getattr(part, role), getattr(whole, role)
                assert (a.role, a.name, a.given) == (b.role, b.name, b.given)
                for kind in kinds:
                    if kind in keep:
                        assert list(leaves(getattr(a, kind))) == list(leaves(getattr(b, kind)))
                    else:
                        assert type(getattr(a, kind)) is DroppedPart
                        with pytest.raises(DroppedPartError):
                            _ = getattr(a, kind).status


def test_a_tick_decoded_for_some_samples_refuses_what_tick_from_json_refuses() -> None:
    """A wrong type in a sample decoded is a ValueError; in one stepped over, the JSON
    must still be well formed."""
    from replmon.model.parts import tick_from_json_thinned

    raw = recorded_tick_json(SESSIONS[0])[3]
    doc = json.loads(raw)
    doc["primary"]["mysql"]["status"]["state"] = 7
    bad = json.dumps(doc).encode()
    with pytest.raises(ValueError, match="state"):
        tick_from_json_thinned(bad, frozenset({"mysql"}))
    tick_from_json_thinned(bad, frozenset({"drbd"}))  # not read: not judged
    with pytest.raises(ValueError, match="truncated|malformed|Input data"):
        tick_from_json_thinned(raw[:-40], frozenset({"drbd"}))
