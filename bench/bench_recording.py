"""Recording benchmark (run by hand; figures go in the closing note).

    .venv/bin/python bench/bench_recording.py [--ticks-from FILE.jsonl] [--rerun N]

1. Real ticks: 60 ticks at 1 Hz from the lab under a write load (or JSON lines of
   ``replmon sample --json``), plus a parsed /proc/drbd fixture on both nodes, so
   all four sources are ok on both nodes.
2. Recorder CPU per tick on those ticks, rates as the collector attached them
   (encode + rate check + zlib + write). Target: <= 1 % of one core at 1 Hz.
3. A 24 h recording: 86,400 ticks looped from the real ones (counters keep
   counting, clocks advance). Bytes per tick; target <= 2 KB.
4. Open + seek + read one tick at 20 random times, clean file and the same file
   cut mid-frame (a kill -9 without end frame). Target <= 200 ms.
5. CPU per tick of decoding and of the checks in one process (--rerun N ticks), then
   the whole re-run as ``replmon check --replay`` does it (worker processes on every
   core). Target: 86,400 ticks <= 20 s.
"""

from __future__ import annotations

import argparse
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from replmon.engine import build_engine
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, Rerun, meta_for, open_recording
from replmon.session.rerun import cpus
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.synthetic import loop_ticks, with_drbd

ROOT = Path(__file__).resolve().parent.parent
DAY = 86_400


def lab_ticks(count: int) -> list[Tick]:
    import asyncio

    from replmon.config import build_config
    from replmon.factory import build_collector
    from replmon.lab import Lab, WriteLoad

    async def run(lab: Lab) -> list[Tick]:
        async with build_collector(build_config(lab.settings(1.0))) as c:
            return [t async for t in c.ticks(count)]

    with Lab() as lab, WriteLoad(lab, rate=300):
        return asyncio.run(run(lab))


def four_sources(ticks: list[Tick]) -> list[Tick]:
    fx = ROOT / "tests" / "fixtures" / "drbd"
    drbd = {"primary": parse_proc_drbd((fx / "seed_844_primary_wfconnection.txt")
                                       .read_text(encoding="utf-8")),
            "replica": parse_proc_drbd((fx / "s1_846_replica_connected.txt").read_text())}
    return list(loop_ticks(with_drbd(ticks, drbd), len(ticks), rates=True))


def recorder_cpu(ticks: list[Tick], tmp: Path) -> tuple[float, float]:
    """CPU of RecordingWriter.write per tick (what the recorder thread spends), ms,
    and bytes per tick, over 600 ticks whose rates came from a RateTracker."""
    path = tmp / "cpu.rmrec"
    seq = list(loop_ticks(ticks, 600, rates=True))
    c0 = time.process_time()
    with RecordingWriter(path, meta_for(interval=1.0)) as w:
        for t in seq:
            w.write(t)
    cpu = (time.process_time() - c0) / len(seq)
    return cpu * 1000, path.stat().st_size / len(seq)


def build_day(ticks: list[Tick], path: Path) -> float:
    t0 = time.perf_counter()
    with RecordingWriter(path, meta_for(interval=1.0, note="bench: 24 h looped from lab ticks"),
                         rates="derive") as w:
        for t in loop_ticks(ticks, DAY):
            w.write(t)
    return time.perf_counter() - t0


def seek_ms(path: Path, walls: list[float]) -> list[float]:
    out = []
    for wall in walls:
        t0 = time.perf_counter()
        with open_recording(path) as rec:
            tick = rec.tick_at(rec.seek(wall))
        out.append((time.perf_counter() - t0) * 1000)
        assert tick.wall >= wall - 1e-6
    return out


def main() -> int:
    logging.basicConfig(level=logging.ERROR)  # the cut file's warning is printed below
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks-from", help="JSON lines of Ticks instead of sampling the lab")
    ap.add_argument("--rerun", type=int, default=DAY, help="ticks to re-run the checks over")
    ap.add_argument("--keep", help="copy the 24 h recording here")
    args = ap.parse_args()
    if args.ticks_from:
        real = [Tick.model_validate_json(x) for x in Path(args.ticks_from).read_text().splitlines()]
    else:
        print("sampling 60 ticks at 1 Hz from the lab...", file=sys.stderr)
        real = lab_ticks(60)
    ticks = four_sources(real)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cpu_ms, short_bpt = recorder_cpu(ticks, tmp)
        print(f"recorder CPU per tick: {cpu_ms:.2f} ms = {cpu_ms / 10:.3f} % of one core at 1 Hz"
              f" ({short_bpt:.0f} B/tick on a 600-tick file)")
        day = tmp / "day.rmrec"
        build_s = build_day(ticks, day)
        size = day.stat().st_size
        print(f"24 h file: {DAY} ticks, {size / 1e6:.1f} MB, {size / DAY:.0f} B/tick "
              f"(built in {build_s:.0f} s)")
        with open_recording(day) as rec:
            w0, w1 = rec.tick_at(0).wall, rec.tick_at(DAY - 1).wall
        rnd = random.Random(1)
        walls = [rnd.uniform(w0, w1) for _ in range(20)]
        ms = seek_ms(day, walls)
        print(f"open + seek + tick_at (clean file): median {statistics.median(ms):.1f} ms, "
              f"max {max(ms):.1f} ms")
        cut = tmp / "cut.rmrec"
        cut.write_bytes(day.read_bytes()[:size - 700])  # no end frame, last frame cut
        ms = seek_ms(cut, walls)
        with open_recording(cut) as rec:
            problems = rec.problems
        print(f"open + seek + tick_at (killed, cut mid-frame): median "
              f"{statistics.median(ms):.1f} ms, max {max(ms):.1f} ms; problems: {problems}")
        with open_recording(day) as rec:
            n = min(args.rerun, len(rec))
            c0 = time.process_time()
            for _t, _ in zip(rec.ticks(), range(n), strict=False):
                pass
            dec_s = time.process_time() - c0
            engine = build_engine()
            c0 = time.process_time()
            for t, _ in zip(rec.ticks(), range(n), strict=False):
                engine.observe(t)
            obs_s = time.process_time() - c0 - dec_s
        print(f"one process, CPU over {n} ticks: decode {dec_s / n * 1e6:.0f} us/tick, "
              f"checks {obs_s / n * 1e6:.0f} us/tick ({len(engine.checks)} checks)")
        with open_recording(day) as rec:
            run = Rerun(rec)
            t0 = time.perf_counter()
            count = sum(1 for _ in run)
            wall = time.perf_counter() - t0
        print(f"re-run of all checks over the 24 h file ({count} ticks, {run.workers} "
              f"worker processes on {cpus()} cores): {wall:.1f} s (target <= 20 s)")
        if args.keep:
            shutil.copy(day, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
