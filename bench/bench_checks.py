"""Check CPU per tick (run by hand; the figures go in the closing note).

    .venv/bin/python bench/bench_checks.py [--ticks N] [--baseline GITREF]

Loops the lab's real ticks (tests/fixtures/ticks/lab_pair.jsonl, all four sources on
both nodes, as bench_recording.py does) into N ticks and times ``Engine.observe`` over
them in this process: CPU per tick of all enabled checks, and of each check alone.
``--baseline REF`` runs this same script against REF's code (a git worktree on the same
interpreter, in the same run) and prints the ratio: #15's target is that its new checks
add at most 15 % to the checks' CPU per tick.
"""

from __future__ import annotations

import argparse
import os
import re
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


def with_binlog_readings(ticks: list[Any]) -> list[Any]:
    """Both nodes' binlog readings every 2 ticks, as MysqlSource takes them, and Redis's
    server time (the capture predates both), made from the replica's own channel: a
    caught-up pair with clocks in step, the usual case, so pair_lag, errant_writes and
    clock_skew do their per-tick work. A tree without ``MysqlSample.binlog`` (a
    --baseline) gets the ticks unchanged."""
    try:
        from replmon.model.mysql import BinlogStatus  # type: ignore[attr-defined]
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
        sides = {}
        for role, sid in (("primary", 1), ("replica", 2)):
            node = getattr(t, role)
            b = BinlogStatus(file=ch.relay_source_log_file, position=ch.exec_source_log_pos,
                             gtid_executed=ch.gtid_executed, gtid_binlog_state=ch.gtid_executed,
                             server_id=sid, sent_wall=t.wall, elapsed_ms=0.4,
                             server_time=t.wall + 0.0002)
            mysql = node.mysql.model_copy(update={"binlog": b})
            sides[role] = node.model_copy(update={"mysql": mysql})
        out.append(t.model_copy(update=sides))
    return out


def measure(n: int, without: tuple[str, ...] = ()) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_recording import four_sources

    from replmon.engine import build_engine
    from replmon.model.tick import Tick
    from replmon.testing.synthetic import loop_ticks

    src = ROOT / "tests" / "fixtures" / "ticks" / "lab_pair.jsonl"
    real = [Tick.model_validate_json(x) for x in src.read_text().splitlines()]
    ticks = with_binlog_readings(list(loop_ticks(four_sources(real), n)))
    engine = build_engine({c: {"enabled": False} for c in without}, entry_points=False)
    c0 = time.process_time()
    for t in ticks:
        engine.observe(t)
    total = (time.process_time() - c0) / n * 1e6
    print(f"checks: {len(engine.checks)}, CPU per tick over {n} ticks: {total:.0f} us")
    from replmon.plugins import discover

    every = [x.id for x in discover(entry_points=False)[0]]
    for c, _ in engine.checks:
        one = build_engine({k: {"enabled": k == c.id} for k in every}, entry_points=False)
        c0 = time.process_time()
        for t in ticks[: n // 5]:
            one.observe(t)
        print(f"  {c.id:24} {(time.process_time() - c0) / (n // 5) * 1e6:6.1f} us")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=20_000)
    ap.add_argument("--baseline")
    ap.add_argument("--without", nargs="*", default=[],
                    help="check ids to leave out of this tree's run (e.g. a later issue's)")
    args = ap.parse_args()
    if not args.baseline:
        measure(args.ticks, tuple(args.without))
        return 0
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_recording import worktree

    with worktree(args.baseline) as tree:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        script = [sys.executable, "-c",
                  f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r});"
                  f"import bench_checks as b; b.ROOT=__import__('pathlib').Path({str(tree)!r});"
                  f"b.measure({args.ticks})"]
        old = subprocess.run(script, env=env, check=True, capture_output=True, text=True,
                             cwd=tree).stdout  # not this tree's cwd: "" leads sys.path
    for line in old.splitlines():
        print(f"  {args.baseline}: {line}")
    new = subprocess.run([sys.executable, __file__, "--ticks", str(args.ticks),
                          "--without", *args.without], check=True,
                         capture_output=True, text=True).stdout
    print(new, end="")
    pat = r"CPU per tick over \d+ ticks: (\d+) us"
    a, b = (float(m.group(1)) for m in (re.search(pat, old), re.search(pat, new)) if m)
    print(f"ratio to {args.baseline}: {b / a:.2f}x (#15 target <= 1.15x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
