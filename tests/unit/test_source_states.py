"""One fault, one state (issue #55): on the two-host lab's monitor-cut the cut node's
sources read "timeout", "timeout", "unreachable", "timeout"... tick after tick (seen with
``replmon --lab --lab-hosts --scenario monitor-cut --plain``: Redis and MySQL every third
tick "unreachable", the host source in runs). A connection on a cut path hangs past the
source's timeout, then fails when the kernel gives up ("No route to host"), and the next
attempt hangs again. Sources here whose timing the test controls, as in
test_collector.py: the path's pattern as the lab showed it, and a frozen node's."""

from __future__ import annotations

import asyncio

import pytest

from replmon.errors import SourceError
from replmon.model.redis import RedisSample
from replmon.sources import base
from replmon.sources.base import Source

TIMEOUT, INTERVAL, HANG = 0.04, 0.06, 0.1
NO_ROUTE = "connecting to 10.9.0.6:6379: [Errno 113] No route to host"


class CutPath(Source[RedisSample]):
    """A connection over a path that is down: every other attempt hangs ``hang`` seconds
    (the SYN unanswered) before it fails, the others fail at once (the kernel's cached
    neighbour failure); ``frozen``: every attempt hangs (the node accepts, never answers)."""

    kind = "redis"
    sample_type = RedisSample

    def __init__(self, frozen: bool = False) -> None:
        super().__init__(timeout=TIMEOUT)
        self.calls = 0
        self.frozen = frozen

    async def _fetch(self) -> RedisSample:
        self.calls += 1
        if self.frozen:
            await asyncio.Event().wait()
        if self.calls % 2:
            await asyncio.sleep(HANG)
        raise SourceError(NO_ROUTE, state="unreachable", hint="no answer to the connection")


async def _states(src: Source[RedisSample], n: int) -> list[tuple[str, str, float | None]]:
    out = []
    for _ in range(n):
        s = await src.sample()
        out.append((s.status.state.value, s.status.error or "", s.status.since))
        await asyncio.sleep(max(0.0, INTERVAL - TIMEOUT))
    await src.close()
    return out


async def test_a_cut_path_reads_unreachable_tick_after_tick() -> None:
    src = CutPath()
    seen = await _states(src, 14)
    first = next(i for i, (state, _, _) in enumerate(seen) if state == "unreachable")
    assert all(state == "timeout" for state, _, _ in seen[:first]), seen
    after = seen[first:]
    assert len(after) >= 8 and src.calls >= 5, (seen, src.calls)  # the path was tried again
    # one state, one text and one since for the rest: no flip back to "timeout"
    assert {(state, error, since) for state, error, since in after} == {
        ("unreachable", NO_ROUTE, after[0][2])}, seen


async def test_a_frozen_node_stays_timeout_and_a_long_one_turns_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the timeouts around an unreachable failure are held: a node that never fails
    to connect reads "timeout" throughout; timeouts for longer than the hold after the
    last unreachable failure read "timeout" again."""
    seen = await _states(CutPath(frozen=True), 5)
    assert {state for state, _, _ in seen} == {"timeout"}, seen

    monkeypatch.setattr(base, "UNREACHABLE_HOLD_S", 0.0)
    seen = await _states(CutPath(), 10)
    assert [s for s, _, _ in seen].count("timeout") > 3 and (
        "unreachable", NO_ROUTE) in [(s, e) for s, e, _ in seen], seen


class Absent(Source[RedisSample]):
    """A source that is not there (no DRBD on this host: every tick the same failure),
    or, with ``errors``, one whose failure changes its words."""

    kind = "redis"
    sample_type = RedisSample

    def __init__(self, errors: list[str] | None = None) -> None:
        super().__init__(timeout=1.0)
        self.errors = errors

    async def _fetch(self) -> RedisSample:
        error = self.errors.pop(0) if self.errors else "/proc/drbd not found"
        raise SourceError("".join(["no DRBD on this host: ", error]), state="absent")


async def test_the_same_failure_is_one_status_and_a_new_one_its_own() -> None:
    """The engine keeps a tick's samples for 300 s: a source that fails the same way
    every tick hands out one status, not one per tick (#56); other words, another
    status."""
    src = Absent(["a", "a", "b"])
    got = [(await src.sample()).status for _ in range(4)]
    await src.close()
    assert [s.state.value for s in got] == ["absent"] * 4
    assert got[0] is got[1], got  # "a" twice: the same words, state and since
    assert got[2] is not got[1] and got[2].error == "no DRBD on this host: b"
    assert got[3] is not got[2] and got[3].error.endswith("/proc/drbd not found")
    assert {s.since for s in got} == {got[0].since}  # one run of "absent" all along
