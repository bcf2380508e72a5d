"""The pipeline: feed -> engine -> readers. A reader that raises is taken off and the
others go on; a reader that blocks loses its oldest ticks, never the collector's
schedule; inline readers see every tick, in order, with the engine's update."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from test_collector import TimedHost, pair

from replmon.engine import Update, build_engine
from replmon.model.tick import Tick
from replmon.pipeline import BaseReader, CallbackReader, Pipeline, from_ticks


class Boom(BaseReader):
    name = "boom"

    def __init__(self, inline: bool, after: int) -> None:
        self.inline = inline  # type: ignore[misc]
        self.after = after
        self.seen = 0
        self.closed = False

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        self.seen += 1
        if self.seen > self.after:
            raise RuntimeError("disk full")

    def close(self) -> None:
        self.closed = True


class Slow(BaseReader):
    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.seqs: list[int] = []
        self.drops: list[int] = []

    def on_drop(self, n: int) -> None:
        self.drops.append(n)

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        time.sleep(self.delay)  # a terminal or pipe that does not take the output
        self.seqs.append(tick.seq)


async def collected(n: int, interval: float = 0.02) -> list[Tick]:
    c = pair({"host": TimedHost()}, {"host": TimedHost()}, interval)
    async with c:
        return [t async for t in c.ticks(n)]


@pytest.mark.parametrize("inline", [True, False])
async def test_a_reader_that_raises_is_reported_and_the_others_go_on(
        inline: bool, caplog: pytest.LogCaptureFixture) -> None:
    ticks = await collected(6)
    got: list[int] = []
    boom = Boom(inline, after=2)
    pipe = Pipeline(from_ticks(ticks), build_engine(entry_points=False),
                    [boom, CallbackReader(lambda t, u: got.append(t.seq))])
    assert await pipe.run() == 6
    assert got == [t.seq for t in ticks], "the other reader missed ticks"
    assert boom.seen == 3, "the failed reader kept getting ticks"
    assert pipe.failed == [("boom", "RuntimeError: disk full")]
    assert boom.closed
    assert "reader boom failed" in caplog.text


async def test_inline_readers_see_every_tick_in_order_with_the_update() -> None:
    ticks = await collected(5)
    seen: list[tuple[int, int | None]] = []
    pipe = Pipeline(from_ticks(ticks), build_engine(entry_points=False),
                    [CallbackReader(lambda t, u: seen.append((t.seq, u.seq if u else None)))])
    await pipe.run()
    assert seen == [(t.seq, t.seq) for t in ticks]


async def test_a_slow_reader_does_not_delay_the_ticks() -> None:
    interval = 0.05
    c = pair({"host": TimedHost()}, {"host": TimedHost()}, interval)
    slow = Slow(delay=0.4)
    walls: list[float] = []
    lag: list[float] = []

    def note(t: Tick, _: Update | None) -> None:
        walls.append(t.mono)
        lag.append(t.mono - t.due_mono)

    async with c:
        pipe = Pipeline(c.ticks(20), None, [slow, CallbackReader(note)], queue_ticks=3)
        await pipe.run()
    assert len(walls) == 20
    gaps = [b - a for a, b in zip(walls, walls[1:], strict=False)]
    # 20 ticks at 0.05 s while the reader takes 0.4 s each: on schedule all the same
    assert max(gaps) < 0.2, f"a tick waited on the slow reader: gaps {gaps}"
    assert walls[-1] - walls[0] < 19 * interval + 0.5
    # no tick started anywhere near a reader's 0.4 s late (the tick's own `late` flag, at
    # 10 % of 0.05 s, also caught a busy machine's scheduling: 1 in a full run)
    assert max(lag[1:]) < 0.15, f"ticks waited on the reader: start lags {lag}"
    # the reader got the newest ticks and was told how many it lost
    assert slow.seqs[-1] == 19
    assert sum(slow.drops) == 20 - len(slow.seqs) > 0


async def test_stop_ends_the_run_while_waiting_for_a_tick() -> None:
    c = pair({"host": TimedHost()}, {"host": TimedHost()}, 0.5)
    stop = asyncio.Event()
    async with c:
        task = asyncio.create_task(Pipeline(c.ticks(None), None, []).run(stop=stop))
        await asyncio.sleep(0.7)  # two ticks (0 s, 0.5 s), then waiting for the third
        stop.set()
        n = await asyncio.wait_for(task, 2)
    assert n == 2


async def test_a_run_with_stop_takes_every_tick_in_its_own_task() -> None:
    # No task per tick to wait for the feed beside ``stop`` (#56): the feed runs in the
    # run's own task, as it does without a stop event (it was a new task each tick).
    c = pair({"host": TimedHost()}, {"host": TimedHost()}, 0.01)
    seen: set[asyncio.Task[object] | None] = set()
    stop = asyncio.Event()

    async def feed() -> AsyncIterator[Tick]:
        async for t in c.ticks(None):
            seen.add(asyncio.current_task())
            yield t

    run = asyncio.create_task(Pipeline(feed(), None, []).run(stop=stop))
    await asyncio.sleep(0.1)
    stop.set()
    n = await asyncio.wait_for(run, 2)
    assert n >= 3
    assert seen == {run}


async def test_a_cancelled_run_with_stop_is_cancelled_not_stopped() -> None:
    # The stop is taken as the run's own cancellation, taken back; a cancellation from
    # outside, even beside a stop, still cancels the run.
    c = pair({"host": TimedHost(0.3)}, {"host": TimedHost()}, 0.5)
    stop = asyncio.Event()
    async with c:
        run = asyncio.create_task(Pipeline(c.ticks(None), None, []).run(stop=stop))
        await asyncio.sleep(0.1)  # in the first tick's sampling
        run.cancel()
        stop.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(run, 2)
    stop2 = asyncio.Event()
    async with c:
        run = asyncio.create_task(Pipeline(c.ticks(None), None, []).run(stop=stop2))
        await asyncio.sleep(0.1)  # in a tick's sampling: stop gives the run up there
        stop2.set()
        assert await asyncio.wait_for(run, 2) == 0
        assert not run.cancelled()
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
