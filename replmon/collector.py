"""The collector: samples both nodes' sources concurrently, once per interval,
and yields each Tick (``ticks()``): the live feed of a ``replmon.pipeline.Pipeline``.

Scheduling: tick slot n is due at t0 + n x interval (monotonic clock), so the
schedule never drifts. Each source has a timeout shorter than the interval, so
one hung server delays nothing: its sample says "timeout" and the tick goes out
on time. A tick waits for all its sources at once (``sample_sources``: one wait
and one timer a tick, each source still held to its own timeout). If a tick
still overruns (the machine stalled), the collector skips the slots it missed
and marks the next tick late, with the number missed; it never fires a burst
of catch-up ticks.

Readers never block the collector: the pipeline takes each tick at once and gives
readers that may block a bounded queue and a thread of their own (pipeline.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from replmon.model.base import SampleBase, SourceState, SourceStatus
from replmon.model.roles import Group, default_groups
from replmon.model.sentinel import SentinelSample
from replmon.model.tick import SOURCE_KINDS, NodeTick, RateTracker, Role, Tick
from replmon.roles import Orienter
from replmon.sources.base import Source
from replmon.truelag import LagTracker

log = logging.getLogger(__name__)

LATE_FRACTION = 0.1
"""A tick whose sampling starts more than this fraction of the interval after
its due time is marked late."""


@dataclass
class NodeSources:
    """The sources of one node. A kind that is None is switched off for this
    node; its samples say "absent" with ``off_reason``."""

    role: Role
    name: str
    sources: dict[str, Source[Any]] = field(default_factory=dict)
    off_reason: dict[str, str] = field(default_factory=dict)

    def all(self) -> list[Source[Any]]:
        return list(self.sources.values())


class Collector:
    """Samples a primary and a replica every ``interval`` seconds."""

    def __init__(
        self,
        primary: NodeSources,
        replica: NodeSources,
        *,
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sentinel: Source[SentinelSample] | None = None,
        together: Sequence[Group] | None = None,
    ) -> None:
        """``sentinel``: a Redis Sentinel's source (pair-level), sampled beside the nodes;
        ``together``: the services that move together (``[roles] together``; None: the
        default for the pair, ``replmon.model.roles.default_groups``)."""
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.primary = primary
        self.replica = replica
        self.sentinel = sentinel
        self.interval = interval
        self._clock = clock
        self._rates = RateTracker()
        self._orienter = Orienter(together if together is not None
                                  else default_groups(sentinel is not None))
        self._lag = LagTracker()
        self._opened = False

    async def __aenter__(self) -> Collector:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _all(self) -> list[Source[Any]]:
        return [*self.primary.all(), *self.replica.all(),
                *([self.sentinel] if self.sentinel is not None else [])]

    async def open(self) -> None:
        if not self._opened:
            for src in self._all():
                await src.open()
            self._opened = True

    async def close(self) -> None:
        for src in self._all():
            await src.close()
        self._opened = False

    def _mysql_sources(self) -> list[Any]:
        return [src for node in (self.primary, self.replica)
                if (src := node.sources.get("mysql")) is not None
                and hasattr(src, "want_processlist")]

    def want_processlist(self, seconds: float) -> None:
        """Both nodes read their processlist every few seconds for the next ``seconds``
        (the screen's processlist view renews it while open; 0 stops)."""
        for src in self._mysql_sources():
            src.want_processlist(seconds)

    def capture_processlist(self) -> None:
        """Both nodes read their processlist once, in the next tick (a finding opened:
        a recording keeps what ran then)."""
        for src in self._mysql_sources():
            src.capture_processlist()

    async def ticks(self, count: int | None = None) -> AsyncIterator[Tick]:
        """Yield ticks on schedule. The time the consumer spends between ticks
        counts against the interval (a slow consumer gets late, skipped ticks)."""
        await self.open()
        t0 = self._clock()
        slot = 0
        prev_slot = -1
        seq = 0
        while count is None or seq < count:
            due = t0 + slot * self.interval
            delay = due - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
            tick = await self.sample_once(seq=seq, slot=slot, due=due, missed=slot - prev_slot - 1)
            yield tick
            seq += 1
            prev_slot = slot
            # Next slot: the first one still in the future (or now); skip, don't burst.
            elapsed_slots = (self._clock() - t0) / self.interval
            slot = max(slot + 1, math.ceil(elapsed_slots - 1e-9))

    async def sample_once(self, *, seq: int = 0, slot: int = 0, due: float | None = None,
                          missed: int = 0) -> Tick:
        """Sample every source of both nodes concurrently and build one Tick."""
        wall, mono = time.time(), self._clock()
        due = mono if due is None else due
        p_kinds, r_kinds = list(self.primary.sources), list(self.replica.sources)
        sources = [*self.primary.sources.values(), *self.replica.sources.values()]
        if self.sentinel is not None:
            sources.append(self.sentinel)
        samples = await sample_sources(sources)
        n = len(p_kinds)
        given_primary = self._node(self.primary, dict(zip(p_kinds, samples[:n], strict=True)))
        given_replica = self._node(self.replica,
                                   dict(zip(r_kinds, samples[n:n + len(r_kinds)], strict=True)))
        sentinel = (cast(SentinelSample, samples[-1]) if self.sentinel is not None else None)
        # the pair as the servers say it is (replmon.roles), not as the command line had it
        primary, replica, roles = self._orienter.orient(given_primary, given_replica, wall,
                                                        sentinel)
        # no validation (Struct.trusted): ints, a bool, the floats validation would make
        # (``float``: an interval or a clock given as ints), the nodes, roles and Sentinel
        # sample just built (each its field's record)
        tick = Tick.trusted(
            seq=seq, slot=slot, interval=float(self.interval), wall=wall, mono=float(mono),
            due_mono=float(due),
            late=missed > 0 or (mono - due) > LATE_FRACTION * self.interval, missed=max(missed, 0),
            duration_ms=float((self._clock() - mono) * 1000),
            primary=self._rates.attach(primary), replica=self._rates.attach(replica),
            roles=roles, sentinel=sentinel,
        )
        # the MySQL replica's true lag, from the first tick (replmon.truelag), and the Redis
        # replica's offsets as seconds: each in its own service's direction
        lag = self._lag.measure(tick.oriented("mysql"))
        return tick.model_copy(update={"lag": lag,
                                       "redis_lag": self._lag.redis(tick.oriented("redis"))})

    def _node(self, node: NodeSources, samples: dict[str, SampleBase]) -> NodeTick:
        wall, mono = time.time(), self._clock()
        for kind in SOURCE_KINDS:
            if kind not in samples:
                reason = node.off_reason.get(kind, f"{kind} is not configured for this node")
                samples[kind] = _absent(kind, reason, wall, mono)
        # each sample is its source's own record (``sample_type``): no validation
        return NodeTick.trusted(role=node.role, name=node.name, given=node.role, **samples)


async def sample_sources(sources: Sequence[Source[Any]]) -> list[SampleBase]:
    """Each source's ``sample()``, concurrently, in the order given: what a gather of
    their ``sample()`` calls returns, with one wait (and one timer) for them all instead
    of a task, a wait and a timer per source. Each keeps its own timeout from its own
    start, its hung-server rule and its round trip (``elapsed_ms``: when its fetch
    ended). A source that raises anyway (a bug) gets an "error" sample; cancelled, every
    fetch still running goes on as after a timeout (``Source.sample``)."""
    out: list[SampleBase | None] = [None] * len(sources)
    pending: dict[asyncio.Task[Any], tuple[int, float, float, float]] = {}
    for i, src in enumerate(sources):
        try:
            wall, mono, begun = src._start()
        except Exception as e:
            out[i] = _error(src, e)
            continue
        if isinstance(begun, asyncio.Task):
            pending[begun] = (i, wall, mono, mono + src.timeout)
        else:
            out[i] = begun
    try:
        while pending:
            deadline = min(v[3] for v in pending.values())
            done, _ = await asyncio.wait(pending, timeout=max(0.0, deadline - time.monotonic()))
            now = time.monotonic()
            for task in done:
                i, wall, mono, _end = pending.pop(task)
                src = sources[i]
                try:
                    out[i] = src._finish(task, wall, mono, (src._fetched_at - mono) * 1000)
                except Exception as e:
                    out[i] = _error(src, e)
            for task, (i, wall, mono, end) in list(pending.items()):
                if end <= now:
                    del pending[task]
                    try:
                        out[i] = sources[i]._timed_out(task, wall, mono)
                    except Exception as e:
                        out[i] = _error(sources[i], e)
    except asyncio.CancelledError:
        for task, (i, _wall, mono, _end) in pending.items():
            sources[i]._given_up(task, mono)
        raise
    return cast(list[SampleBase], out)


def _error(src: Source[Any], e: Exception) -> SampleBase:
    """src.sample() never raises by contract; if a bug makes it raise anyway,
    the tick still goes out with the error in that source's status."""
    log.error("source %s raised (a bug in replmon)", src.kind, exc_info=e)
    wall, mono = time.time(), time.monotonic()
    status = SourceStatus(state=SourceState.ERROR, error=f"{type(e).__name__}: {e}", since=wall)
    return cast(SampleBase, src.sample_type(status=status, wall=wall, mono=mono))


def _absent(kind: str, reason: str, wall: float, mono: float) -> SampleBase:
    """The sample of a source not configured for the node (every tick): not validated
    (Struct.trusted), the reason is the config's text and the clocks' floats."""
    sample_type: type[SampleBase] = NodeTick.model_fields[kind].annotation  # type: ignore[assignment]
    status = SourceStatus.trusted(state=SourceState.ABSENT, error=reason)
    return sample_type.trusted(status=status, wall=wall, mono=float(mono))


async def first_ticks(collector: Collector, n: int) -> list[Tick]:
    """Convenience for scripts and tests: the next ``n`` ticks as a list."""
    return [t async for t in collector.ticks(n)]
