"""The Recorder beside a collector: queued writes, clean close, rotation, and a
kill -9 that leaves a file which replays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from replmon.errors import SessionError
from replmon.model.tick import Tick
from replmon.session import Recorder, meta_for, open_recording
from replmon.session.recorder import SharedWriter, existing_parts


async def test_recorder_writes_everything_and_closes_cleanly(tmp_path: Path,
                                                             ticks_200: list[Tick]) -> None:
    path = tmp_path / "pair.rmrec"
    async with Recorder(path, meta_for(interval=1.0)) as rec:
        for t in ticks_200[:80]:
            rec.write(t)
    assert rec.files == [path] and rec.ticks_written == 80 and rec.dropped == 0
    assert rec.cpu_s > 0
    r = open_recording(path)
    assert list(r.ticks()) == ticks_200[:80] and r.end is not None and r.problems == []
    with pytest.raises(SessionError, match="exists"):
        Recorder(path, meta_for(interval=1.0)).start()


async def test_rotation_by_size_keeps_every_part_self_describing(
        tmp_path: Path, ticks_200: list[Tick]) -> None:
    path = tmp_path / "pair.rmrec"
    async with Recorder(path, meta_for(interval=1.0), max_bytes=40_000, keep=3,
                        chunk_ticks=20) as rec:
        for t in ticks_200:
            rec.write(t)
    parts = existing_parts(path)
    assert len(rec.files) > 3 and [p for _, p in parts] == rec.files[-3:]
    got: list[Tick] = []
    for n, p in parts:
        r = open_recording(p)
        assert r.meta.part == n and r.meta.nodes["primary"].name == "lab-primary"
        assert r.meta.previous == part_name(path, n - 1)
        assert r.end is not None and p.stat().st_size < 40_000 + 20_000
        got += list(r.ticks())
    assert got == ticks_200[-len(got):] and len(got) > 20


def part_name(path: Path, n: int) -> str:
    return f"{path.stem}.{n:04d}{path.suffix}"


async def test_rotation_by_age(tmp_path: Path, ticks_200: list[Tick]) -> None:
    path = tmp_path / "pair.rmrec"
    async with Recorder(path, meta_for(interval=1.0), max_age_s=60) as rec:
        for t in ticks_200[:150]:
            rec.write(t)
    lengths = [len(open_recording(p)) for p in rec.files]
    assert lengths == [60, 60, 30]


def test_a_full_queue_drops_instead_of_blocking(tmp_path: Path,
                                                ticks_200: list[Tick]) -> None:
    rec = Recorder(tmp_path / "x.rmrec", meta_for(interval=1.0), queue_max=2)
    t0 = time.perf_counter()
    for t in ticks_200[:5]:  # writer thread not started: nothing drains the queue
        rec.write(t)
    assert rec.dropped == 3 and time.perf_counter() - t0 < 0.05


def test_one_shared_thread_writes_every_recording_and_a_failing_one_stops_alone(
        tmp_path: Path, ticks_200: list[Tick]) -> None:
    """serve's recordings: one thread for all of them; each file is what its own thread
    would have written; a recording whose file cannot be made fails alone."""
    before = threading.active_count()
    writer = SharedWriter()
    gone = tmp_path / "gone"
    gone.mkdir()
    recs = [Recorder(tmp_path / f"p{i}.rmrec", meta_for(interval=1.0), chunk_ticks=20,
                     writer=writer) for i in range(5)]
    broken = Recorder(gone / "b.rmrec", meta_for(interval=1.0), writer=writer)
    for r in (*recs, broken):
        r.start()
    gone.rmdir()  # the broken one's first write cannot create its file
    for k, t in enumerate(ticks_200[:90]):
        for i, r in enumerate(recs):
            if k % (i + 1) == 0:  # each recording its own share of the ticks
                r.write(t)
        broken.write(t)
    assert threading.active_count() == before + 1
    for r in recs:
        r.close()
    with pytest.raises(SessionError, match="b.rmrec"):
        broken.close()
    writer.close()
    assert threading.active_count() == before
    assert broken.dropped == 89  # the first failed, the rest drained, never blocked
    for i, r in enumerate(recs):
        want = ticks_200[:90][::i + 1]
        got = open_recording(r.path)
        assert list(got.ticks()) == want and got.end is not None and got.problems == []
        assert r.ticks_written == len(want) and r.dropped == 0 and r.cpu_s > 0


def test_a_shared_writer_that_falls_behind_drops_per_recording(
        tmp_path: Path, ticks_200: list[Tick]) -> None:
    writer = SharedWriter()
    a = Recorder(tmp_path / "a.rmrec", meta_for(interval=1.0), queue_max=3, writer=writer)
    b = Recorder(tmp_path / "b.rmrec", meta_for(interval=1.0), queue_max=3, writer=writer)
    hold = threading.Event()
    real = a._step
    a._step = lambda: (hold.wait(), real())[1]  # type: ignore[method-assign]  # a stalled disk
    a.start()
    b.start()
    t0 = time.perf_counter()
    for t in ticks_200[:10]:
        a.write(t)
        b.write(t)
    assert time.perf_counter() - t0 < 0.05  # write() never waits for the writer
    assert a.dropped >= 6 and b.dropped >= 6  # the shared thread is stuck in a's first
    hold.set()
    a.close()
    b.close()
    writer.close()
    assert len(open_recording(a.path)) == 10 - a.dropped
    assert len(open_recording(b.path)) == 10 - b.dropped


CHILD = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, sys.argv[2])
    from sessiondata import four_source_ticks
    from replmon.session import Recorder, meta_for

    async def main():
        ticks = four_source_ticks(400)
        async with Recorder(sys.argv[1], meta_for(interval=0.05)) as rec:
            for i, t in enumerate(ticks):
                rec.write(t)
                print(i, flush=True)
                await asyncio.sleep(0.05)

    asyncio.run(main())
""")


def test_kill_9_loses_at_most_one_second(tmp_path: Path, ticks_200: list[Tick]) -> None:
    path = tmp_path / "killed.rmrec"
    here = str(Path(__file__).parent)
    with subprocess.Popen([sys.executable, "-c", CHILD, str(path), here],
                          stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        last = -1
        while last < 120:  # wait for the child to have queued 121 ticks (6 s of ticks)
            line = proc.stdout.readline()
            assert line, "child died"
            last = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    rec = open_recording(path)
    assert rec.end is None  # no clean close
    assert len(rec) >= last + 1 - 20, (len(rec), last)  # 20 ticks = 1 s at 0.05 s
    assert list(rec.ticks()) == ticks_200[:len(rec)]
    assert len(rec.problems) <= 1  # at most the frame being written when killed
