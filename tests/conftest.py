"""Shared fixtures. The ``lab`` fixture starts a real MariaDB + Redis
primary/replica pair on loopback (replmon.lab) once per test session and tears
it down at the end, also when tests fail. A missing server binary is an error,
never a skip: CI must run the live tests.

Under pytest-xdist each worker is its own session: its labs are its own, on free
ports and in temp dirs of their own. The labs of other server versions (the matrix)
come from ``lab_pool`` (tests/live/conftest.py): started at a worker's first use and
kept for its session; tests sharing one carry its xdist group (tests/live/labpool.py)."""

from __future__ import annotations

import sys

# This machine's environment sets PYTHONDONTWRITEBYTECODE=1: every process the suite
# starts (4 workers, ~150 `python -m replmon` runs, each lab's write load) then compiled
# replmon and the rewritten test modules from source again. The suite writes bytecode
# (__pycache__, ignored by git); the processes it starts read it (the variable only
# stops writing).
sys.dont_write_bytecode = False

import gc  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from replmon.lab import Lab  # noqa: E402


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    with Lab() as the_lab:
        yield the_lab


class _Raised(logging.Handler):
    """The checks that raised inside an Engine (it logs "check %s raised" and goes on)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.raised: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == "check %s raised":
            exc = record.exc_info[1] if record.exc_info else None
            self.raised.append(f"{record.args[0] if record.args else '?'}: {exc!r}")


@pytest.fixture(autouse=True)
def _no_check_raised(request: pytest.FixtureRequest) -> Iterator[None]:
    """A check that raises inside an Engine fails the test that ran it: the engine turns
    the exception into a finding and goes on (right for a user), so an assert inside a
    probe's evaluate, or a bug a test's ticks hit, would otherwise pass unseen. A test
    that makes a check raise on purpose says so: ``@pytest.mark.check_raises``."""
    handler = _Raised()
    engine_log = logging.getLogger("replmon.engine")
    engine_log.addHandler(handler)
    try:
        yield
    finally:
        engine_log.removeHandler(handler)
    if handler.raised and request.node.get_closest_marker("check_raises") is None:
        pytest.fail("a check raised inside the engine (caught, logged, and turned into a "
                    f"finding): {'; '.join(handler.raised[:3])}", pytrace=False)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times in titles and on screen in UTC, whatever the machine's zone (the TUI tests
    take it for every test: tests/tui/conftest.py)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _freeze_heap() -> None:
    """Collect what is not frozen, then freeze what survives (``gc.freeze``).

    A worker's heap grows through the run (modules, collected tests, the recordings and
    re-runs shared between tests: millions of objects by its end), and every full
    collection walked all of it: ~57 a worker, 0.3-0.4 s each late in the run, 100 s of
    the five workers' ~435 s of CPU in the cyclic collector (measured with gc.callbacks
    in one suite run). Frozen after each test, a full collection walks only what the
    tests since made. A cycle that was alive at a freeze and dies later is not freed
    (a worker lives one run); each test's own garbage is, here, before it is frozen."""
    gc.collect()
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    _freeze_heap()  # the modules and the collected tests


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    try:
        return (yield)
    finally:
        _freeze_heap()


FIRST = ("tests/live/test_sentinel_live.py::"
         "test_sentinel_fails_redis_over_alone_named_and_told",)
LAST = ("tests/live/test_sentinel_live.py::"
        "test_two_minutes_on_a_fresh_check_says_how_long_and_sentinel_fails_back",)
"""The Sentinel failover first and its fresh check two minutes on last: both in the
MariaDB 11.8 matrix lab's xdist group, whose tests (~120 s, on the same worker, in this
order) fill the wait between them (test_sentinel_live)."""


def spread(items: list[pytest.Item]) -> list[pytest.Item]:
    """The live tests spread evenly among the others, each kind in its own order.

    The live tests mostly wait on servers (a 70 s test may use 3 s of CPU); the others
    use a core throughout. xdist (loadgroup) deals the groups first, largest first, then
    the tests of no group in this order, one to each worker that has room: in collection
    order (tests/live before tests/tui and tests/unit) the workers that finished their
    group all took live tests at once, and the 2 cores idled for a stretch (up to half of
    them, measured with /proc/stat), to be saturated later by the unit tests alone."""
    live = [i for i in items if i.nodeid.startswith("tests/live/")]
    rest = [i for i in items if not i.nodeid.startswith("tests/live/")]
    keyed = [((k + 0.5) / len(live), 0, i) for k, i in enumerate(live)]
    keyed += [((k + 0.5) / len(rest), 1, i) for k, i in enumerate(rest)]
    return [i for *_, i in sorted(keyed, key=lambda e: e[:2])]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = [i for i in items if i.nodeid.startswith(FIRST)]
    last = [i for i in items if i.nodeid.startswith(LAST)]
    middle = spread([i for i in items if i not in first and i not in last])
    items[:] = first + middle + last
