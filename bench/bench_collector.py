"""Collector benchmark on the real lab (run by hand; figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_collector.py [--seconds 60]

Measures, with all four sources on both lab nodes and a write load running:

1. CPU per tick in replmon's process (time.process_time covers every thread,
   so pymysql calls in worker threads count). Target <= 15 ms.
2. Headless sampling at 1 Hz: CPU as % of one core. Target <= 2 %.
3. Tick start jitter (start - due) p50/p99/max at 1 Hz while the replica's
   mariadbd is SIGSTOPped (a hung server). Target p99 <= 50 ms.
4. The binlog/GTID/clock reads (#15: every ``positions_every`` = 2 s) against none
   (``positions_every`` 1e9: read once at connect), in the same run, alternating:
   tick duration p50/p99, start lag p99 and CPU per tick. Target: jitter p99 unchanged.

The write load runs in its own process (WriteLoad spawns one), so the figures
are replmon's own CPU and nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from replmon.config import build_config
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.model.tick import Tick


async def collect(lab: Lab, interval: float, count: int, positions_every: float | None = None
                  ) -> tuple[list[Tick], float, float]:
    settings = lab.settings(interval)
    if positions_every is not None:
        for role in ("primary", "replica"):
            settings[role]["mysql"]["positions_every"] = positions_every
    collector = build_collector(build_config(settings))
    async with collector:
        await collector.sample_once()  # connect, warm caches
        cpu0, wall0 = time.process_time(), time.monotonic()
        ticks = [t async for t in collector.ticks(count)]
        return ticks, time.process_time() - cpu0, time.monotonic() - wall0


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=60, help="length of each 1 Hz phase")
    ap.add_argument("--rate", type=float, default=300, help="write load, statements/s")
    args = ap.parse_args()
    with Lab() as lab, WriteLoad(lab, rate=args.rate):
        time.sleep(2)

        # 1. CPU per tick: back-to-back ticks (interval 0.25 s) so the per-tick cost dominates.
        ticks, cpu, wall = asyncio.run(collect(lab, 0.25, 200))
        per_tick_ms = cpu / len(ticks) * 1000
        ok = sum(all(s.ok for n in t.nodes for s in n.statuses().values()
                     if s.state.value != "absent") for t in ticks)
        print(f"CPU per tick (both nodes, all sources): {per_tick_ms:.2f} ms "
              f"[target <= 15]  ({len(ticks)} ticks, {ok} fully ok)")

        # 2. Headless 1 Hz.
        ticks, cpu, wall = asyncio.run(collect(lab, 1.0, args.seconds))
        core = 100 * cpu / wall
        lags = [t.start_lag_ms for t in ticks]
        print(f"headless 1 Hz: {core:.2f} % of one core [target <= 2]; start lag p99 "
              f"{pct(lags, 99):.1f} ms")

        # 3. Jitter with the replica's MariaDB hung.
        lab.replica.pause_mysql()
        try:
            ticks, _, _ = asyncio.run(collect(lab, 1.0, args.seconds))
        finally:
            lab.replica.resume_mysql()
        lags = [t.start_lag_ms for t in ticks]
        states = {t.replica.mysql.status.state.value for t in ticks}
        durations = [t.duration_ms for t in ticks]
        print(f"replica MariaDB SIGSTOPped: start lag p50 {statistics.median(lags):.1f} ms, "
              f"p99 {pct(lags, 99):.1f} ms, max {max(lags):.1f} ms [target p99 <= 50]; "
              f"tick duration p50 {statistics.median(durations):.0f} ms; late ticks "
              f"{sum(t.late for t in ticks)}, missed slots {sum(t.missed for t in ticks)}; "
              f"replica mysql states {sorted(states)}")

        # 4. Positions read every 2 s vs never, alternating runs of args.seconds / 2 ticks.
        runs: dict[str, list[tuple[list[Tick], float]]] = {"every 2 s": [], "off": []}
        for _ in range(2):
            for name, every in (("every 2 s", 2.0), ("off", 1e9)):
                got, cpu, _ = asyncio.run(collect(lab, 1.0, args.seconds // 2, every))
                runs[name].append((got, cpu))
        for name, parts in runs.items():
            all_ticks = [t for got, _ in parts for t in got]
            durations = [t.duration_ms for t in all_ticks]
            lags = [t.start_lag_ms for t in all_ticks]
            cpu_ms = sum(c for _, c in parts) / len(all_ticks) * 1000
            read = sum(t.primary.mysql.binlog is not None for t in all_ticks)
            print(f"positions {name:9}: tick duration p50 {statistics.median(durations):.1f} "
                  f"ms p99 {pct(durations, 99):.1f} ms; start lag p99 {pct(lags, 99):.2f} ms; "
                  f"CPU {cpu_ms:.2f} ms/tick; {read} readings in {len(all_ticks)} ticks")


if __name__ == "__main__":
    main()
