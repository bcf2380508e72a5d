"""One feed, one engine, many readers: the loop every command runs.

    feed (the live collector, a list, a recording) ──► engine.feed(tick) ──► readers

Every command is "config → a pipeline with these readers": ``--plain`` reads with a
``PlainReader``, ``record`` with a ``RecordReader``, ``check`` with a ``CheckSummary``,
the screen with its poster, and the fleet (later) with its metrics state. The engine
sees every tick, in order, before any reader.

A reader is anything with ``on_tick(tick, update)`` and ``close()``, and two class
attributes that say how it is fed:

- ``inline = True``: called in the event loop right after the engine. It must not
  block (the recorder only queues the tick for its writer thread; the screen's poster
  posts a message; a metrics state keeps the latest tick). Cheapest; never drops.
- ``inline = False``: the reader gets a bounded queue (``queue_ticks``) and a thread of
  its own, so a reader that blocks (stdout into a full pipe, a slow terminal) never
  delays sampling. When its queue is full the oldest tick is dropped; ``dropped``
  counts them, the reader is told through ``on_drop(n)`` before its next tick (the
  text writer prints a row saying so) and the pipeline logs it.

A reader that raises is logged with its traceback, gets no further ticks, and is
listed in ``Pipeline.failed``; the engine and the other readers go on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from replmon.engine import Engine, Update
from replmon.model.tick import Tick

log = logging.getLogger(__name__)

QUEUE_TICKS = 120
"""Ticks a threaded reader may fall behind before its oldest are dropped (2 min at 1 s)."""


@runtime_checkable
class Reader(Protocol):
    """What the pipeline hands each tick to."""

    inline: bool

    def on_tick(self, tick: Tick, update: Update | None) -> None: ...

    def close(self) -> None: ...


class BaseReader:
    """Defaults for readers: threaded, nothing to close, drops ignored."""

    inline = False
    dropped = 0

    def on_tick(self, tick: Tick, update: Update | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def on_drop(self, n: int) -> None:
        """``n`` ticks were dropped before the next one (this reader fell behind)."""

    def close(self) -> None:
        """After the last tick (also when the feed failed)."""


class CallbackReader(BaseReader):
    """A plain function as an inline reader (e.g. a test's list.append)."""

    inline = True

    def __init__(self, fn: Callable[[Tick, Update | None], None]) -> None:
        self.fn = fn

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        self.fn(tick, update)


class _Lane:
    """A threaded reader's bounded queue and its thread."""

    def __init__(self, reader: Reader, size: int, failed: Callable[[Reader, BaseException], None]
                 ) -> None:
        self.reader = reader
        self.size = size
        self._failed = failed
        self._items: deque[tuple[Tick, Update | None] | None] = deque()
        self._cv = threading.Condition()
        self._pending_drops = 0
        self.dropped = 0
        self.dead = False
        self._thread = threading.Thread(target=self._run, name=f"reader-{_name(reader)}",
                                        daemon=True)
        self._thread.start()

    def offer(self, tick: Tick, update: Update | None) -> int:
        """Queue a tick; returns how many old ticks this dropped (0 or 1)."""
        with self._cv:
            if self.dead:
                return 0
            lost = 0
            while len(self._items) >= self.size:
                self._items.popleft()
                lost += 1
            self._items.append((tick, update))
            self.dropped += lost
            self._pending_drops += lost
            self._cv.notify()
        return lost

    def finish(self, timeout: float | None) -> None:
        with self._cv:
            self._items.append(None)
            self._cv.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._items:
                    self._cv.wait()
                item = self._items.popleft()
                drops, self._pending_drops = self._pending_drops, 0
            if item is None:
                return
            try:
                if drops:
                    getattr(self.reader, "on_drop", _ignore)(drops)
                self.reader.on_tick(*item)
            except BaseException as e:  # reported; this reader stops, the others go on
                with self._cv:
                    self.dead = True
                    self._items.clear()
                self._failed(self.reader, e)
                return


def _ignore(_: int) -> None:
    return None


def _name(reader: object) -> str:
    return str(getattr(reader, "name", type(reader).__name__))


@dataclass
class Pipeline:
    """``feed`` → ``engine`` → ``readers``. Run it with ``await pipeline.run()``."""

    feed: AsyncIterable[Tick]
    engine: Engine | None
    readers: Sequence[Reader] = ()
    queue_ticks: int = QUEUE_TICKS
    close_timeout: float | None = 10.0
    """Seconds ``run`` waits for a threaded reader to finish its queue at the end."""
    ticks: int = 0
    """Ticks taken from the feed (the engine saw each one)."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(reader, error) of each reader that raised and was taken off."""
    last_update: Update | None = None

    def _reader_failed(self, reader: Reader, e: BaseException) -> None:
        if isinstance(e, BrokenPipeError):  # `| head`: the reader's output went away
            log.info("reader %s stops: its output was closed", _name(reader))
        else:
            log.error("reader %s failed and gets no more ticks: %s: %s", _name(reader),
                      type(e).__name__, e, exc_info=e)
        self.failed.append((_name(reader), f"{type(e).__name__}: {e}"))

    def _close_readers(self) -> None:
        for r in self.readers:
            try:
                r.close()  # a recorder flushes and fsyncs here: in a thread, off the loop
            except Exception as e:  # one reader's close must not keep the others open
                self._reader_failed(r, e)

    async def run(self, count: int | None = None, stop: asyncio.Event | None = None) -> int:
        """Take ticks from the feed until it ends, ``count`` ticks, or ``stop`` is set;
        then close every reader (threaded ones after their queue drains). Returns the
        number of ticks."""
        inline = [r for r in self.readers if r.inline]
        lanes = [_Lane(r, self.queue_ticks, self._reader_failed)
                 for r in self.readers if not r.inline]
        try:
            async for tick in _until(self.feed, stop):
                update = self.engine.feed(tick) if self.engine is not None else None
                self.last_update = update
                self.ticks += 1
                for r in list(inline):
                    try:
                        r.on_tick(tick, update)
                    except Exception as e:  # reported; this reader stops, the others go on
                        inline.remove(r)
                        self._reader_failed(r, e)
                for lane in lanes:
                    if lane.offer(tick, update):
                        log.warning("reader %s falls behind: %d ticks dropped so far",
                                    _name(lane.reader), lane.dropped)
                if count is not None and self.ticks >= count:
                    break
                if self.readers and len(self.failed) >= len(self.readers):
                    log.info("every reader is gone: the run ends")
                    break
        finally:
            for lane in lanes:
                await asyncio.to_thread(lane.finish, self.close_timeout)
            await asyncio.to_thread(self._close_readers)
        return self.ticks


async def _until(feed: AsyncIterable[Tick], stop: asyncio.Event | None
                 ) -> AsyncIterable[Tick]:
    """The feed's ticks until it ends or ``stop`` is set (also while waiting for one).

    The wait for the next tick runs in the caller's own task: when ``stop`` is set, the
    task is cancelled where it waits (inside the feed, as a task of its own per tick
    was before: the feed sees the same CancelledError), and that one cancellation is
    taken back here. No task and no wait per tick; one waiter on ``stop`` per run."""
    if stop is None:
        async for tick in feed:
            yield tick
        return
    it = feed.__aiter__()
    me = asyncio.current_task()
    assert me is not None
    waiting = False
    stopping = False

    def on_stop(_: object) -> None:
        nonlocal stopping
        if waiting and not stopping:
            stopping = True
            me.cancel()

    stopped = asyncio.ensure_future(stop.wait())
    stopped.add_done_callback(on_stop)
    try:
        while not stop.is_set():
            waiting = True
            try:
                tick = await it.__anext__()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if stopping and me.uncancel() == 0:
                    return  # ours: the feed was given up on at ``stop``
                raise
            finally:
                waiting = False
            if stopping:  # stop came as the tick did and the feed gave it anyway: the
                me.uncancel()  # tick goes out, as it went before, and the loop ends
            yield tick
    finally:
        stopped.remove_done_callback(on_stop)
        stopped.cancel()
        aclose = getattr(it, "aclose", None)
        if aclose is not None:
            await aclose()


async def from_ticks(ticks: Iterable[Tick]) -> AsyncIterable[Tick]:
    """A fixed sequence of ticks as a feed (tests, re-checks of decoded ticks)."""
    for tick in ticks:
        yield tick
