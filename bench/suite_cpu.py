"""Where the test suite's CPU goes, per test, servers included (run by hand; figures go in
docs/benchmarks.md under "The test suite").

    SUITE_CPU_DIR=/tmp/suite-cpu PYTHONPATH=bench .venv/bin/pytest -q -p suite_cpu
    .venv/bin/python bench/suite_cpu.py /tmp/suite-cpu [--top 30]

The suite is bound by its CPU on 2 cores (6 xdist workers, /proc/stat idle ~0 % most of
a run), so what shortens it is less CPU, wherever it is spent. ``time -v`` gives only the
total; ``--durations`` gives wall times, which a loaded machine inflates for every test
alike. As a pytest plugin (``-p suite_cpu``) this module writes, for each test, one JSON
line per worker: its node id, the CPU its worker process spent in it (setup, call and
teardown), the CPU its worker's process tree spent meanwhile (lab servers, ``python -m
replmon`` runs, re-run workers: live descendants' own time and what the worker and they
reaped), its wall time, and the CPU its worker spent in Python's cyclic collector
meanwhile (gc.callbacks). A lab started in a test's setup counts to that test; a process
that left the tree (a daemon) is not counted. Run as a script it sums the lines by file
and lists the largest tests.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import time
from pathlib import Path
from typing import IO, Any

TICK = os.sysconf("SC_CLK_TCK")
_out: IO[str] | None = None
_gc = {"since": 0.0, "total": 0.0}
"""CPU seconds in the cyclic collector: the running pass's start, and the sum so far."""


def _gc_timer(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _gc["since"] = time.process_time()
    else:
        _gc["total"] += time.process_time() - _gc["since"]


def _stat(pid: str) -> tuple[int, int, int]:
    """(parent pid, own CPU ticks, reaped children's CPU ticks) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    rest = text[text.rindex(")") + 2:].split()  # fields after the command's name
    return int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def tree_cpu(root: int) -> float:
    """Seconds of CPU of ``root``'s descendants: the live ones' own and reaped, and what
    ``root`` itself reaped."""
    procs: dict[int, tuple[int, int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                procs[int(name)] = _stat(name)
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    kids: dict[int, list[int]] = {}
    for pid, (parent, _, _) in procs.items():
        kids.setdefault(parent, []).append(pid)
    total = procs.get(root, (0, 0, 0))[2]
    stack = list(kids.get(root, []))
    while stack:
        pid = stack.pop()
        _, own, reaped = procs[pid]
        total += own + reaped
        stack.extend(kids.get(pid, []))
    return total / TICK


def _cpu() -> tuple[float, float]:
    t = os.times()
    return t.user + t.system, tree_cpu(os.getpid())


try:
    import pytest
except ImportError:  # the summary needs no pytest
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
        global _out
        if _out is None:
            where = Path(os.environ.get("SUITE_CPU_DIR", "/tmp/suite-cpu"))
            where.mkdir(parents=True, exist_ok=True)
            _out = open(where / f"cpu-{os.getpid()}.jsonl", "a")  # noqa: SIM115 - per worker
            gc.callbacks.append(_gc_timer)
        own, tree = _cpu()
        wall, in_gc = time.monotonic(), _gc["total"]
        yield
        own2, tree2 = _cpu()
        _out.write(json.dumps([item.nodeid, round(own2 - own, 3), round(tree2 - tree, 3),
                               round(time.monotonic() - wall, 3),
                               round(_gc["total"] - in_gc, 3)]) + "\n")
        _out.flush()


def _in_gc(row: list[Any]) -> float:
    """A row's seconds in the collector (rows written before it was timed have none)."""
    return row[4] if len(row) > 4 else 0.0


def summarize(where: Path, top: int) -> None:
    rows = [json.loads(line) for f in sorted(where.glob("cpu-*.jsonl"))
            for line in f.read_text().splitlines() if line]
    own = sum(r[1] for r in rows)
    tree = sum(r[2] for r in rows)
    in_gc = sum(_in_gc(r) for r in rows)
    print(f"{len(rows)} tests: {own:.0f} s of CPU in the workers ({in_gc:.1f} s of it in "
          f"the cyclic collector), {tree:.0f} s in their process trees (servers, commands, "
          f"re-run workers)")
    by_file: collections.Counter[str] = collections.Counter()
    by_file_tree: collections.Counter[str] = collections.Counter()
    by_file_gc: collections.defaultdict[str, float] = collections.defaultdict(float)
    for row in rows:
        nodeid, o, t = row[:3]
        path = nodeid.split("::")[0]
        by_file[path] += o + t
        by_file_tree[path] += t
        by_file_gc[path] += _in_gc(row)
    print(f"\n{'CPU s':>7} {'of it tree':>10} {'in gc':>6}  file")
    for path, cpu in by_file.most_common(top):
        print(f"{cpu:7.1f} {by_file_tree[path]:10.1f} {by_file_gc[path]:6.1f}  {path}")
    print(f"\n{'own s':>7} {'tree s':>7} {'wall s':>7}  test")
    for nodeid, o, t, w, *_ in sorted(rows, key=lambda r: -(r[1] + r[2]))[:top]:
        print(f"{o:7.2f} {t:7.2f} {w:7.2f}  {nodeid[:110]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="SUITE_CPU_DIR of a run")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    summarize(args.dir, args.top)


if __name__ == "__main__":
    main()
