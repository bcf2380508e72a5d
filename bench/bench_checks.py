"""Check CPU per tick (run by hand; the figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_checks.py [--ticks N] [--baseline GITREF]

Loops the lab's real ticks (tests/fixtures/ticks/lab_pair.jsonl, all four sources on
both nodes, as bench_recording.py does) into N ticks, each with the true lag the
collector attaches (``with_lag``), and times ``Engine.observe`` over them in this
process: CPU per tick of all enabled checks, and of each check alone, in the engine a
live command builds.
``--baseline REF`` runs this same script against REF's code (a git worktree on the same
interpreter, in the same run) and prints the ratio: #15's target is that its new checks
add at most 15 % to the checks' CPU per tick. ``--added ID...`` compares this tree with
and without the checks named (what they add to the others, in the same engine).
``--gates`` times each gated check alone with its gate and without it, with the share
of ticks its gate is quiet on and what decoding a tick costs (a gate saves a re-check
the decoding of the chunks where it is quiet), the bytes its gauges add to a
shipped recording's observations frames, and a re-check of a 1 h recording with one
check's threshold changed, with its gate and with the gate taken away (docs/checks.md,
"A gate").
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _redis_clock(node: Any) -> Any:
    """Redis 6.2+'s server_time_usec, which the capture predates: the node's clock in step
    with replmon's, read half-way through the request."""
    r = node.redis
    return node.model_copy(update={"redis": r.model_copy(update={
        "server_time": r.wall + r.elapsed_ms / 2000.0})})


TX_PER_TICK = 25
"""Transactions the synthetic pair commits per tick (the lab's load writes about that)."""
IN_FLIGHT = 2
"""Transactions the primary's reading is ahead of the replica's in the same tick."""


def _fresh_gtids(ticks: list[Any]) -> list[Any]:
    """The replica channel's executed GTID advanced by TX_PER_TICK each tick: the looped
    capture repeats its few GTIDs on every lap, where a live session's are new each
    tick (and gtid caches miss). Both trees get these ticks."""
    out = []
    for i, t in enumerate(ticks):
        chans = t.replica.mysql.replication
        if not chans:
            out.append(t)
            continue
        ch = chans[0].model_copy(update={"gtid_executed": f"0-1-{1000 + TX_PER_TICK * i}"})
        mysql = t.replica.mysql.model_copy(update={"replication": [ch, *chans[1:]]})
        out.append(t.model_copy(update={"replica": t.replica.model_copy(
            update={"mysql": mysql})}))
    return out


def with_binlog_readings(ticks: list[Any]) -> list[Any]:
    """Fresh GTIDs (``_fresh_gtids``), then both nodes' binlog readings every 2 ticks, as
    MysqlSource takes them, and Redis's server time (the capture predates both), made
    from the replica's own channel: a pair under load with the primary IN_FLIGHT
    transactions ahead of the replica in the same tick and clocks in step, the usual
    case, so pair_lag, errant_writes and clock_skew do their per-tick work. A tree
    without ``MysqlSample.binlog`` (a --baseline) gets the fresh GTIDs only."""
    ticks = _fresh_gtids(ticks)
    try:
        from replmon.model.mysql import BinlogStatus
    except ImportError:
        return ticks
    out = []
    for i, t0 in enumerate(ticks):
        t = t0.model_copy(update={role: _redis_clock(getattr(t0, role))
                                  for role in ("primary", "replica")})
        chans = t.replica.mysql.replication
        if i % 2 or not chans:
            out.append(t)
            continue
        ch = chans[0]
        executed = 1000 + TX_PER_TICK * i
        sides = {}
        for role, sid, seq in (("primary", 1, executed + IN_FLIGHT), ("replica", 2, executed)):
            node = getattr(t, role)
            b = BinlogStatus(file=ch.relay_source_log_file, position=ch.exec_source_log_pos,
                             gtid_executed=f"0-1-{seq}", gtid_binlog_state=f"0-1-{seq}",
                             server_id=sid, sent_wall=t.wall, elapsed_ms=0.4,
                             server_time=t.wall + 0.0002)
            mysql = node.mysql.model_copy(update={"binlog": b})
            sides[role] = node.model_copy(update={"mysql": mysql})
        out.append(t.model_copy(update=sides))
    return out


def with_lag(ticks: list[Any]) -> list[Any]:
    """Each tick with the true lags the collector attaches (``replmon.truelag``), as a live
    engine and a replay get them; a tree without the tracker: as they are."""
    try:
        from replmon.truelag import LagTracker
    except ImportError:
        return ticks
    tracker = LagTracker()
    return [t.model_copy(update={"lag": tracker.measure(t.oriented("mysql")),
                                 "redis_lag": tracker.redis(t.oriented("redis"))})
            for t in ticks]


def measure(n: int, without: tuple[str, ...] = (), cold: bool = False,
            per_check: bool = True) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_recording import four_sources

    from replmon.engine import build_engine
    from replmon.model.tick import Tick
    from replmon.testing.real_ticks import loop_ticks

    src = ROOT / "tests" / "fixtures" / "ticks" / "lab_pair.jsonl"
    real = [Tick.model_validate_json(x) for x in src.read_text().splitlines()]
    ticks = with_lag(with_binlog_readings(list(loop_ticks(four_sources(real), n))))
    engine = _live(build_engine, {c: {"enabled": False} for c in without})
    how = "pre-built ticks" if cold else "each tick decoded just before"
    print(f"checks: {len(engine.checks)}, CPU per tick over {n} ticks "
          f"({how}): {_time(engine, ticks, cold):.0f} us")
    if not per_check:
        return
    from replmon.plugins import discover

    every = [x.id for x in discover(entry_points=False)[0]]
    for c, _ in engine.checks:
        one = _live(build_engine, {k: {"enabled": k == c.id} for k in every})
        print(f"  {c.id:24} {_time(one, ticks[: n // 5], cold):6.1f} us")


def _live(build_engine: Any, settings: dict[str, Any]) -> Any:
    """The engine a live command builds (its older ticks' parts packed:
    replmon/model/packed.py), or a tree's from before ``build_engine(live=...)``."""
    try:
        return build_engine(settings, entry_points=False, live=True)
    except TypeError:
        return build_engine(settings, entry_points=False)


def _time(engine: Any, ticks: list[Any], cold: bool) -> float:
    """us of ``engine.observe`` per tick. Live and in replay a tick reaches the engine
    just after it was built (parsed from the sources' replies or decoded from the
    recording), its objects still in the CPU's caches; so by default each tick is
    decoded from JSON right before it is observed and only ``observe`` is timed.
    ``cold`` observes the ticks built all at once beforehand (10,000 ticks are ~200 MB,
    out of every cache): the first check that touches a part of a tick pays its cache
    misses, which then shift between checks as checks come and go."""
    from replmon.model.tick import Tick

    if cold:
        c0 = time.perf_counter_ns()
        for t in ticks:
            engine.observe(t)
        return (time.perf_counter_ns() - c0) / len(ticks) / 1e3
    texts = [t.model_dump_json() for t in ticks]
    spent = 0
    gc.disable()  # a collection set off by the decoding would land in whichever check
    try:          # allocated next; it runs between ticks instead, untimed
        for i, s in enumerate(texts):
            t = Tick.model_validate_json(s)
            c0 = time.perf_counter_ns()
            engine.observe(t)
            spent += time.perf_counter_ns() - c0
            if i % 100 == 99:
                gc.collect(0)
    finally:
        gc.enable()
    return spent / len(ticks) / 1e3


def gates(n: int) -> None:
    """Each gated check alone, with its gate and without it: us per tick (ticks decoded
    just before, as ``_time``), the share of ticks ``quiet`` (default thresholds), the
    decoding of a tick, and the gauges' share of a shipped file's observations frames."""
    from dataclasses import replace

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_recording import four_sources

    from replmon.engine import Engine
    from replmon.model.tick import Tick
    from replmon.plugins import discover
    from replmon.session import open_recording
    from replmon.session.format import pack_zjson
    from replmon.testing.real_ticks import loop_ticks

    src = ROOT / "tests" / "fixtures" / "ticks" / "lab_pair.jsonl"
    real = [Tick.model_validate_json(x) for x in src.read_text().splitlines()]
    ticks = with_binlog_readings(list(loop_ticks(four_sources(real), n)))
    texts = [t.model_dump_json() for t in ticks]
    c0 = time.perf_counter_ns()
    for s in texts:
        Tick.model_validate_json(s)
    decode = (time.perf_counter_ns() - c0) / len(texts) / 1e3
    print(f"decoding a tick from JSON: {decode:.0f} us ({n} ticks, {len(texts[0])} bytes)")
    import math
    import timeit

    from replmon.check import round_down, round_up
    for name, f in (("round_up", round_up), ("round_down", round_down),
                    ("math.floor", math.floor)):
        per = min(timeit.repeat(lambda f=f: f(1234.5), number=100_000, repeat=5)) / 100_000
        print(f"{name}(1234.5): {per * 1e6:.2f} us a call")
    print(f"  {'check alone':24} {'gated':>7} {'ungated':>8} {'quiet':>6}  (least of 3 runs)")
    for c in discover(entry_points=False)[0]:
        if c.gate is None:
            continue
        th = c.thresholds()
        runs = [(_time(Engine([(c, th)]), ticks, False),
                 _time(Engine([(replace(c, gate=None), th)]), ticks, False))
                for _ in range(3)]  # alternated, the least of each: a shared machine
        with_gate, without = min(r[0] for r in runs), min(r[1] for r in runs)
        probe = Engine([(c, th)])
        quiet = 0
        for t in ticks:
            probe.observe(t)
            g = probe.gauges.get(c.id)
            quiet += g is not None and c.gate.quiet(g, th)
        print(f"  {c.id:24} {with_gate:5.1f} us {without:6.1f} us {100 * quiet / n:5.0f} %")
    path = ROOT / "sample_sessions" / "redis_writes_refused.rmrec"
    with open_recording(path) as rec:
        frames = [o for ci in range(len(rec.chunks))
                  if (o := rec.chunk_observations(ci)[0]) is not None]
        c0 = time.perf_counter_ns()
        count = sum(1 for _ in rec.ticks())
        read = (time.perf_counter_ns() - c0) / count / 1e3
    print(f"{path.name}: reading a tick back from the file {read:.0f} us ({count} ticks, "
          f"{path.stat().st_size / count:.0f} bytes a tick on disk)")
    full = sum(len(pack_zjson(o)) for o in frames)
    bare = sum(len(pack_zjson(o.model_copy(update={"gauges": {}}))) for o in frames)
    count = sum(o.count for o in frames)
    print(f"{path.name}: observations frames {full} bytes, {bare} without gauges: the "
          f"gauges of {sum(len(o.gauges) for o in frames[:1])} checks add "
          f"{(full - bare) / count:.1f} bytes a tick ({count} ticks)")
    recheck_gain(list(loop_ticks(ticks, 3600)))


RECHECKED = {"disk_saturation": {"iowait_pct": 25.0},
             "memory_ceiling": {"low_available_pct": 5.0}}
"""One check's threshold changed, for ``recheck_gain``: two checks quiet on the lab's
ticks, one reading whole ticks, one reading few parts."""


def recheck_gain(ticks: list[Any]) -> None:
    """``check --replay`` with each of RECHECKED on a recording of ``ticks`` (the live
    engine's observations stored), in this process (one worker), with the check's gate
    and with it taken away: what the gate saves a re-check."""
    import tempfile

    from replmon.engine import build_engine
    from replmon.plugins import discover
    from replmon.session import RecordingWriter, Rerun, meta_for, open_recording

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hour.rmrec"
        engine = build_engine(entry_points=False)
        with RecordingWriter(path, meta_for(interval=ticks[0].interval)) as w:
            for t in ticks:
                w.write(t, engine.feed(t))
        by_id = {c.id: c for c in discover(entry_points=False)[0]}  # the ones Rerun loads
        for cid, limits in RECHECKED.items():
            c, gate = by_id[cid], by_id[cid].gate
            took: dict[bool, list[float]] = {True: [], False: []}
            for gated in (True, False, True, False):
                if not gated:
                    object.__setattr__(c, "gate", None)  # a frozen Check: bench only
                try:
                    with open_recording(path) as rec:
                        c0 = time.perf_counter()
                        for _ in Rerun(rec, {cid: limits}, entry_points=False, workers=1):
                            pass
                        took[gated].append(time.perf_counter() - c0)
                finally:
                    object.__setattr__(c, "gate", gate)
            print(f"re-check of {len(ticks)} ticks with {cid} {limits}: "
                  f"{min(took[True]):.1f} s with its gate, {min(took[False]):.1f} s without "
                  f"(least of 2 runs each)")


def _us(out: str) -> float:
    """The total CPU per tick that ``measure`` printed."""
    m = re.search(r"CPU per tick over \d+ ticks \([^)]*\): (\d+) us", out)
    if m is None:
        raise SystemExit(f"no total in the run's output:\n{out}")
    return float(m.group(1))


def added(ticks: int, without: list[str], ids: list[str], cold: bool, repeat: int) -> int:
    """What checks ``ids`` add to this tree's CPU per tick: alternated runs without them
    and with them (``without`` left out of both), medians compared."""
    def run(leave_out: list[str]) -> float:
        cmd = [sys.executable, __file__, "--ticks", str(ticks), "--totals",
               *(["--cold"] if cold else []), "--without", *leave_out]
        return _us(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

    before: list[float] = []
    after: list[float] = []
    for k in range(repeat):
        before.append(run([*without, *ids]))
        after.append(run(without))
        print(f"run {k + 1}: without them {before[-1]:.0f} us, with them {after[-1]:.0f} us: "
              f"+{after[-1] - before[-1]:.0f} us, {after[-1] / before[-1]:.2f}x")
    a, b = statistics.median(before), statistics.median(after)
    print(f"{len(ids)} checks add {b - a:.0f} us per tick to {a:.0f} us, medians of {repeat} "
          f"alternated runs: {b / a:.2f}x")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=20_000)
    ap.add_argument("--baseline")
    ap.add_argument("--without", nargs="*", default=[],
                    help="check ids to leave out of this tree's run (e.g. a later issue's)")
    ap.add_argument("--cold", action="store_true",
                    help="observe ticks built all at once beforehand (out of the CPU caches)")
    ap.add_argument("--repeat", type=int, default=5,
                    help="alternated runs of each tree with --baseline (medians compared)")
    ap.add_argument("--totals", action="store_true", help="leave out each check alone")
    ap.add_argument("--added", nargs="+", metavar="ID",
                    help="compare this tree with and without these checks (alternated runs)")
    ap.add_argument("--gates", action="store_true",
                    help="each gated check with and without its gate (docs/checks.md)")
    args = ap.parse_args()
    if args.gates:
        gates(args.ticks)
        return 0
    if args.added:
        return added(args.ticks, args.without, args.added, args.cold, args.repeat)
    if not args.baseline:
        measure(args.ticks, tuple(args.without), args.cold, per_check=not args.totals)
        return 0
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_recording import worktree

    olds: list[float] = []
    news: list[float] = []
    with worktree(args.baseline) as tree:
        for k in range(args.repeat):  # alternated: a busy spell on a shared machine
            # falls on both trees, and the medians leave it out
            env = {**os.environ, "PYTHONPATH": str(tree)}
            script = [sys.executable, "-c",
                      f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r});"
                      f"import bench_checks as b; b.ROOT=__import__('pathlib').Path({str(tree)!r});"
                      f"b.measure({args.ticks}, cold={args.cold}, per_check={k == 0})"]
            old = subprocess.run(script, env=env, check=True, capture_output=True, text=True,
                                 cwd=tree).stdout  # not this tree's cwd: "" leads sys.path
            new = subprocess.run([sys.executable, __file__, "--ticks", str(args.ticks),
                                  *(["--cold"] if args.cold else []),
                                  *([] if k == 0 else ["--totals"]),
                                  "--without", *args.without],
                                 check=True, capture_output=True, text=True).stdout
            if k == 0:
                for line in old.splitlines():
                    print(f"  {args.baseline}: {line}")
                print(new, end="")
            a, b = _us(old), _us(new)
            olds.append(a)
            news.append(b)
            print(f"run {k + 1}: {args.baseline} {a:.0f} us, this tree {b:.0f} us: "
                  f"{b / a:.2f}x")
    a, b = statistics.median(olds), statistics.median(news)
    print(f"ratio to {args.baseline}, medians of {args.repeat} alternated runs: {b / a:.2f}x "
          f"(#15 target <= 1.15x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
