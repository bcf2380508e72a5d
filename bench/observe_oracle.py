"""Oracle and CPU timer for ``Engine.observe`` (run by hand while optimising the checks).

    .venv/bin/python bench/observe_oracle.py dump OUT.jsonl [--findings] [--day FILE]
                                               [--stretches ...]
    .venv/bin/python bench/observe_oracle.py time [--repeat 3] [--per-check] [--day FILE]
    cmp baseline.jsonl OUT.jsonl        # a change to the checks must keep this silent

``dump`` feeds ticks through ``Engine.observe`` (the engine from
``replmon.engine.build_engine()``) and writes one JSON line per tick: where the tick
comes from, its index and seq, and every observation of that tick in the order the
engine returned them, as [check id, node, key, severity, title, numbers, cause,
next_step]. The ticks:

a. every tick of every ``sample_sessions/*.rmrec``, one fresh engine per file;
b. stretches of 60 consecutive chunks (~3,600 ticks each) of the 24 h recording
   (``--day``, default /tmp/day.rmrec), by default 5 of them spread over the day
   (300 chunks); each stretch starts on a fresh engine, so its windows fill as in a
   live session;
c. the SEEDS scenarios of ``replmon.testing.scenarios`` (ticks rebuilt from the seeds'
   figures: DRBD, disks, swapping... paths the recordings do not reach), each on a
   fresh engine with the scenario's own settings.

Two runs of the same code give byte-identical files, so an optimisation of the checks
is exact when ``cmp`` finds no difference with the dump of the code before it.

``time`` measures only the checks: it decodes each day stretch into a list first
(about 50 KB per tick in memory), then runs ``observe`` over it with a fresh engine
and takes ``time.process_time()`` around the loop. The cyclic GC is collected before
and disabled during the timed loop (decoded ticks are acyclic; a full GC pass over
3,600 held ticks would otherwise land in whichever check happens to run). Each
repeat re-runs every stretch; the report gives µs/tick for every repeat, the min and
the median. With ``--per-check`` a second, instrumented pass wraps each check's
``evaluate`` (and a gated check's ``measure`` and ``quiet``, which run every tick where
``evaluate`` may not) with ``time.perf_counter_ns`` and reports µs/tick per check (min over
repeats) and the engine's own bookkeeping (instrumented total minus the checks);
the wrapping adds ~0.1 µs per check call. The machine is shared: compare figures
taken in the same session, and repeat.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import glob
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from replmon.check import Check, Gate
from replmon.engine import Engine, build_engine
from replmon.model.tick import Tick
from replmon.session import open_recording  # the package: a tree of before #32 has it too

ROOT = Path(__file__).resolve().parent.parent
DAY = "/tmp/day.rmrec"
STRETCH = 60
"""Chunks per stretch of the day (~60 ticks each)."""


def default_starts(n_chunks: int, count: int = 5) -> list[int]:
    """``count`` stretch starts spread evenly over the file, the last one ending at its end."""
    last = max(0, n_chunks - STRETCH)
    if count == 1:
        return [0]
    return [round(i * last / (count - 1)) for i in range(count)]


def day_stretch(path: str, start: int) -> Iterator[Tick]:
    rec = open_recording(path)
    try:
        for ci in range(start, min(start + STRETCH, len(rec.chunks))):
            for e in rec.chunk_entries(ci):
                yield e.tick
    finally:
        rec.close()


def sources(day: str, starts: list[int] | None, seeds: bool = True
            ) -> Iterator[tuple[str, Iterable[Tick], dict[str, Any]]]:
    """(label, ticks, check settings) of every feed, each to run on a fresh engine."""
    for p in sorted(glob.glob(str(ROOT / "sample_sessions" / "*.rmrec"))):
        rec = open_recording(p)
        yield Path(p).name, list(rec.ticks()), {}
        rec.close()
    with open_recording(day) as rec:
        n_chunks = len(rec.chunks)
    for s in starts if starts is not None else default_starts(n_chunks):
        yield f"day@{s}", day_stretch(day, s), {}
    if seeds:
        from replmon.testing.scenarios import all_scenarios

        for i, sc in enumerate(all_scenarios()[0]):
            ticks, _ = sc.build()
            yield f"seed#{i}:{sc.name}", ticks, sc.settings


def dump(out: Path, day: str, starts: list[int] | None, findings: bool = False) -> int:
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for label, ticks, settings in sources(day, starts):
            engine = build_engine(settings)
            for i, t in enumerate(ticks):
                if findings:  # what the hysteresis made of them: opens and closes
                    upd = engine.feed(t)
                    ev = [[k, x.check, x.node, x.key, int(x.severity), x.since_seq, x.title]
                          for k, xs in (("open", upd.opened), ("close", upd.closed))
                          for x in xs]
                    if ev:
                        f.write(json.dumps({"src": label, "i": i, "seq": t.seq, "ev": ev},
                                           ensure_ascii=False) + "\n")
                    n += 1
                    continue
                seen = engine.observe(t)
                obs = [[cid, o.node, o.key, int(o.severity), o.title, o.numbers, o.cause,
                        o.next_step] for cid, o in seen]
                f.write(json.dumps({"src": label, "i": i, "seq": t.seq, "obs": obs},
                                   ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} ticks written to {out}", file=sys.stderr)
    return n


def _timed_loop(engine: Engine, ticks: list[Tick]) -> float:
    gc.collect()
    gc.disable()
    try:
        c0 = time.process_time()
        for t in ticks:
            engine.observe(t)
        return time.process_time() - c0
    finally:
        gc.enable()


def _instrument(engine: Engine, acc: dict[str, int]) -> None:
    """Wrap each check's evaluate, and a gated check's measure and quiet, to add their
    perf_counter_ns to ``acc[check id]``."""
    def wrap(cid: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.perf_counter_ns

        def timed(*args: Any) -> Any:
            t0 = clock()
            try:
                return fn(*args)
            finally:
                acc[cid] += clock() - t0
        return timed

    checks: list[tuple[Check[Any], Any]] = []
    for c, th in engine.checks:
        acc.setdefault(c.id, 0)
        g = c.gate
        gate = None if g is None else Gate(wrap(c.id, g.measure), wrap(c.id, g.quiet),
                                           g.gauges, g._restate)
        checks.append((dataclasses.replace(c, evaluate=wrap(c.id, c.evaluate), gate=gate),
                       th))
    engine.checks = checks
    # the engine runs the plan it made of its checks when built (and again when the
    # interval changes), not ``engine.checks``: plan the wrapped ones
    engine._replan(engine._interval)


def timing(day: str, starts: list[int] | None, repeat: int, per_check: bool) -> None:
    with open_recording(day) as rec:
        n_chunks = len(rec.chunks)
    starts = starts if starts is not None else default_starts(n_chunks)
    totals = [0.0] * repeat
    inst_totals = [0.0] * repeat
    per: list[dict[str, int]] = [{} for _ in range(repeat)]
    n = 0
    for s in starts:
        t0 = time.perf_counter()
        ticks = list(day_stretch(day, s))
        print(f"stretch day@{s}: {len(ticks)} ticks decoded in "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
        n += len(ticks)
        for r in range(repeat):
            totals[r] += _timed_loop(build_engine(), ticks)
            if per_check:
                eng = build_engine()
                _instrument(eng, per[r])
                inst_totals[r] += _timed_loop(eng, ticks)
        del ticks
    us = [x / n * 1e6 for x in totals]
    print(f"observe CPU over {n} ticks ({len(starts)} stretches of {STRETCH} chunks), "
          f"{repeat} repeat(s): " + ", ".join(f"{u:.1f}" for u in us)
          + f" µs/tick; min {min(us):.1f}, median {statistics.median(us):.1f}")
    if per_check:
        ids = list(per[0])
        rows = [(cid, min(p[cid] for p in per) / n / 1e3,
                 statistics.median(p[cid] for p in per) / n / 1e3) for cid in ids]
        rows.sort(key=lambda r: -r[1])
        print(f"{'check':22} {'min µs/tick':>12} {'median':>8}")
        for cid, lo, med in rows:
            print(f"{cid:22} {lo:12.2f} {med:8.2f}")
        sums = [sum(p.values()) / n / 1e3 for p in per]
        inst = [x / n * 1e6 for x in inst_totals]
        over = [a - b for a, b in zip(inst, sums, strict=True)]
        print(f"{'sum of checks':22} {min(sums):12.2f} {statistics.median(sums):8.2f}")
        print(f"{'engine bookkeeping':22} {min(over):12.2f} {statistics.median(over):8.2f}"
              "   (instrumented total - checks)")
        print(f"{'instrumented total':22} {min(inst):12.2f} {statistics.median(inst):8.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("dump", help="write every tick's observations as JSON lines")
    d.add_argument("out", type=Path)
    d.add_argument("--findings", action="store_true",
                   help="the findings opened and closed per tick (engine.feed) instead")
    tm = sub.add_parser("time", help="CPU µs/tick of observe over day stretches")
    tm.add_argument("--repeat", type=int, default=3)
    tm.add_argument("--per-check", action="store_true")
    for p in (d, tm):
        p.add_argument("--day", default=DAY, help="the 24 h recording (read only)")
        p.add_argument("--stretches", type=int, nargs="*",
                       help="first chunk of each stretch of 60 chunks (default: 5 spread "
                            "over the day)")
    args = ap.parse_args()
    if args.mode == "dump":
        dump(args.out, args.day, args.stretches, args.findings)
    else:
        timing(args.day, args.stretches, args.repeat, args.per_check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
