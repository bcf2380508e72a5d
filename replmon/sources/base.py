"""The contract every source follows.

A source samples one thing (host, drbd, mysql, redis) on one node. Subclasses
implement ``_fetch()``, which returns a sample with its payload or raises
(SourceError with a state, ParseError, FileNotFoundError, TimeoutError...).
``sample()`` never raises: it runs ``_fetch`` under the per-source timeout and
turns every failure into a SourceStatus on an empty sample, remembering since
when the source has been in its current state.

A fetch that overruns its timeout is not abandoned to pile up: while it is
still running (a blocked pymysql call in a worker thread, say), later ticks
report "timeout" at once instead of starting another request behind it.

One fault, one state: a node whose path is cut (its monitoring link down) makes a
connection hang past the timeout ("timeout"), then fail when the kernel gives up ("No
route to host", "timed out": "unreachable"), then hang again; the state flipped
between the two from tick to tick (issue #55: the two-host lab's monitor-cut). While a
source is unreachable, a timeout within ``UNREACHABLE_HOLD_S`` of its last unreachable
failure keeps the state "unreachable" and that failure's words; only timeouts for
longer than that (a server that answers no more but accepts connections: a frozen
node) turn it to "timeout".
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from types import TracebackType
from typing import ClassVar, Generic, TypeVar

from replmon.errors import ParseError, SourceError
from replmon.model.base import SampleBase, SourceState, SourceStatus, fill_fresh
from replmon.model.failures import Failure, failure

S = TypeVar("S", bound=SampleBase)

UNREACHABLE_HOLD_S = 30.0
"""Seconds an "unreachable" failure holds the state through the timeouts after it (module
docstring): longer than the kernel's connect retries that alternate with them (a few
seconds to ~2 min for an unanswered SYN, shortened by the sources' connect timeouts)."""


class Source(ABC, Generic[S]):
    """Base of all sources; an async context manager around open()/close()."""

    kind: ClassVar[str]
    """"host", "drbd", "mysql" or "redis"."""
    sample_type: type[S]
    fresh_samples: ClassVar[bool] = False
    """``_fetch`` returns a record built for that sample alone, held by nothing else (a
    parser's new record): ``_finish`` sets its status and clocks on it in place
    (``replmon.model.base.fill_fresh``) instead of copying it. A source whose ``_fetch``
    may return a record it keeps or shares (a cached or canned sample) leaves it False."""

    def __init__(self, *, timeout: float = 0.8) -> None:
        self.timeout = timeout
        self._state: SourceState | None = None
        self._since: float | None = None
        self._inflight: asyncio.Task[S] | None = None
        self._inflight_started = 0.0
        self._fetched_at = 0.0
        """When the last fetch ended (monotonic): its round trip, when the caller waits
        for many sources at once."""
        self._unreachable: tuple[float, str, str | None] | None = None
        """(monotonic time, error, hint) of the last "unreachable" failure of the current
        run of failures: the timeouts after it keep its state (``UNREACHABLE_HOLD_S``)."""
        self._ok: SourceStatus | None = None
        """The ok status of the current run of ok samples: the same (immutable) record
        for all of them, not a validated new one per sample (8 per pair-tick)."""
        self._failed: SourceStatus | None = None
        """The last failure's status, handed out again while the failure is the same (a
        source absent or down fails every tick; the engine keeps its samples 300 s)."""

    async def open(self) -> None:
        """Acquire long-lived resources (connections). Must not raise for an
        unreachable server: the first sample() reports that."""

    async def close(self) -> None:
        """Release resources; safe to call twice."""
        if self._inflight is not None and not self._inflight.done():
            self._inflight.cancel()
        self._inflight = None

    async def __aenter__(self) -> Source[S]:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @abstractmethod
    async def _fetch(self) -> S:
        """Fetch and parse one reading, payload filled and status ok."""

    async def sample(self) -> S:
        wall, mono, begun = self._start()
        if not isinstance(begun, asyncio.Task):
            return begun
        task = begun
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
        except asyncio.CancelledError:
            # The caller gave up on this sample (the tick's deadline, the collector
            # closing): the fetch goes on as after a timeout (the next sample sees it
            # pending, no second request piles up on a hung server), and its failure is
            # retrieved when it ends, not logged as "Task exception was never retrieved".
            self._given_up(task, mono)
            raise
        elapsed_ms = (time.monotonic() - mono) * 1000
        if not done:
            return self._timed_out(task, wall, mono)
        return self._finish(task, wall, mono, elapsed_ms)

    # sample() in steps, for a caller that waits for many sources at once
    # (replmon.collector.sample_sources: one wait and one timer a tick, not one a source)

    def _start(self) -> tuple[float, float, S | asyncio.Task[S]]:
        """(wall, mono, the fetch's task), or the sample at once while an earlier fetch
        is still pending (the hung-server rule: no second request behind it)."""
        wall, mono = time.time(), time.monotonic()
        if self._inflight is not None:
            if not self._inflight.done():
                waited = mono - self._inflight_started
                return wall, mono, self._fail(
                    wall, mono, SourceState.TIMEOUT,
                    f"no answer for {waited:.1f} s (previous request still pending)", None,
                )
            self._consume(self._inflight)  # a late answer is stale: drop it
            self._inflight = None
        return wall, mono, asyncio.ensure_future(self._timed_fetch())

    async def _timed_fetch(self) -> S:
        try:
            return await self._fetch()
        finally:
            self._fetched_at = time.monotonic()

    def _given_up(self, task: asyncio.Task[S], mono: float) -> None:
        """The caller stopped waiting (cancelled): the fetch goes on as after a timeout."""
        self._inflight, self._inflight_started = task, mono
        task.add_done_callback(self._consume)

    def _timed_out(self, task: asyncio.Task[S], wall: float, mono: float) -> S:
        self._inflight, self._inflight_started = task, mono
        # Retrieved whenever it ends, also after the collector closed: a late
        # failure must not surface as "Task exception was never retrieved".
        task.add_done_callback(self._consume)
        return self._fail(
            wall, mono, SourceState.TIMEOUT, f"no answer within {self.timeout:.2f} s", None
        )

    def _finish(self, task: asyncio.Task[S], wall: float, mono: float,
                elapsed_ms: float) -> S:
        """The sample of a fetch that ended in time (raises what the fetch raised
        beyond the failures a source reports: a bug)."""
        try:
            result = task.result()
        except SourceError as e:
            return self._fail(wall, mono, _state(e.state), str(e), e.hint, elapsed_ms)
        except ParseError as e:
            return self._fail(wall, mono, SourceState.PARSE_ERROR, str(e), None, elapsed_ms)
        except FileNotFoundError as e:
            return self._fail(
                wall, mono, SourceState.ABSENT, f"not found: {e.filename or e}", None, elapsed_ms
            )
        except TimeoutError as e:
            return self._fail(
                wall, mono, SourceState.TIMEOUT, str(e) or "timed out", None, elapsed_ms
            )
        except OSError as e:
            return self._fail(
                wall, mono, SourceState.UNREACHABLE, str(e), None, elapsed_ms
            )
        self._unreachable = None
        since = self._enter(SourceState.OK, wall)
        status = self._ok
        if status is None or status.since != since:
            status = self._ok = SourceStatus(state=SourceState.OK, since=since)
        changes = {"status": status, "wall": wall, "mono": mono, "elapsed_ms": elapsed_ms}
        if self.fresh_samples:  # a record built for this sample alone: no copy needed
            return fill_fresh(result, changes)
        return result.model_copy(update=changes)

    def _enter(self, state: SourceState, wall: float) -> float:
        if state is not self._state or self._since is None:
            self._state, self._since = state, wall
        return self._since

    def _fail(
        self,
        wall: float,
        mono: float,
        state: SourceState,
        error: str,
        hint: str | None,
        elapsed_ms: float | None = None,
    ) -> S:
        last = self._unreachable
        if state is SourceState.UNREACHABLE:
            self._unreachable = (mono, error, hint)
        elif state is SourceState.TIMEOUT and self._state is SourceState.UNREACHABLE \
                and last is not None and mono - last[0] <= UNREACHABLE_HOLD_S:
            state, error, hint = SourceState.UNREACHABLE, last[1], last[2]  # the same fault
        else:
            self._unreachable = None
        # no validation (Struct.trusted): a SourceState, the error's text, its hint (str or
        # None), and the clocks' floats (``_start``'s time.time() and time.monotonic(), as
        # ``since`` is); a source off or down builds this every tick
        since, status = self._enter(state, wall), self._failed
        if status is None or (status.state, status.error, status.hint, status.since) \
                != (state, error, hint, since):  # the same failure: the same status
            status = self._failed = SourceStatus.trusted(state=state, error=error, hint=hint,
                                                         since=since)
        if elapsed_ms is None:
            elapsed_ms = (time.monotonic() - mono) * 1000
        return self.sample_type.trusted(status=status, wall=wall, mono=mono,
                                        elapsed_ms=elapsed_ms)

    @staticmethod
    def _consume(task: asyncio.Task[S]) -> None:
        if not task.cancelled():
            task.exception()  # mark retrieved; the value is stale either way


def _state(value: str) -> SourceState:
    try:
        return SourceState(value)
    except ValueError:
        return SourceState.ERROR


def reach_hint(text: str, host: str, fallback: str | None) -> str | None:
    """What to do about a connection to ``host`` that failed with ``text``, by the class
    of its failure (replmon.model.failures): the name, the service and its port and
    address, or the path to the host; ``fallback`` for any other failure."""
    why = failure(SourceStatus(state=SourceState.UNREACHABLE, error=text))
    if why is Failure.DNS:
        return (f"the name {host} does not resolve: check the name (a typo?), DNS and "
                "/etc/hosts on this machine")
    if why is Failure.REFUSED:
        return ("the host answered but nothing listens on that port: is the service "
                "running, on this port, and listening on this address (bind-address, bind, "
                "ListenAddress)?")
    if why is Failure.UNANSWERED:
        return ("no answer to the connection: a firewall dropping it, a wrong address or "
                "route, or the host down")
    return fallback
