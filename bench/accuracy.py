"""Check accuracy over every scenario (run by hand; figures go in the closing note).

    .venv/bin/python bench/accuracy.py [--healthy-seconds 300] [--skip-lab]

1. Seed scenarios: ticks rebuilt from the field notes' own figures.
2. Lab scenarios: each situation induced on a real MariaDB/Redis lab pair.
   Target for 1 and 2: the expected check flags within 3 ticks of onset; a
   scenario that expects nothing opens nothing above info.
3. A healthy lab under steady mixed load (UPDATE/INSERT + Redis SET/GET) for
   --healthy-seconds at 1 Hz with every check: target, no finding above info.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab, WriteLoad
from replmon.testing.scenarios import all_scenarios, judge, run_lab_scenario, run_seed_scenario


def row(kind: str, name: str, check: str, ok: bool, why: str) -> None:
    print(f"{'PASS' if ok else 'FAIL'}  {kind:4}  {name[:58]:58}  {check or '-':20}  {why[:90]}")


async def healthy(lab: Lab, seconds: int) -> tuple[int, list[str], dict[str, int]]:
    eng = build_engine(entry_points=False)
    bad: list[str] = []
    info: dict[str, int] = {}
    n = 0
    async with build_collector(build_config(lab.settings(1.0))) as c:
        async for t in c.ticks(seconds):
            n += 1
            for f in eng.feed(t).opened:
                if f.severity > 0:
                    bad.append(f"tick {t.seq}: {f.check} {f.node}: {f.title}")
                else:
                    info[f.check] = info.get(f.check, 0) + 1
    return n, bad, info


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--healthy-seconds", type=int, default=300)
    ap.add_argument("--skip-lab", action="store_true")
    args = ap.parse_args()
    seeds, labs = all_scenarios()
    results: list[bool] = []
    for sc in seeds:
        out = run_seed_scenario(sc)
        ok, why = judge(out, sc.min_severity)
        results.append(ok)
        row("seed", sc.name, sc.check, ok, why)
    if args.skip_lab:
        print(f"\n{sum(results)}/{len(results)} passed (lab skipped)")
        return
    with Lab() as lab:
        for lsc in labs:
            t0 = time.monotonic()
            out = asyncio.run(run_lab_scenario(lab, lsc))
            ok, why = judge(out, lsc.min_severity)
            results.append(ok)
            row("lab", lsc.name, lsc.check, ok, f"{why} ({time.monotonic() - t0:.0f} s)")
        with WriteLoad(lab, rate=300):
            n, bad, info = asyncio.run(healthy(lab, args.healthy_seconds))
        ok = not bad
        results.append(ok)
        row("lab", f"healthy, steady mixed load, {n} ticks at 1 Hz", "", ok,
            "; ".join(bad) or f"no finding above info (info opened: {info or 'none'})")
    print(f"\n{sum(results)}/{len(results)} passed")


if __name__ == "__main__":
    main()
