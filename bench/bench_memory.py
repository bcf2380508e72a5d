"""Memory benchmark (run by hand; figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_memory.py imports [--serve-seconds 5]
    .venv/bin/python bench/bench_memory.py live [--seconds 600] [--every 30]
        [--tree NAME=DIR] [--env NAME:VAR=VAL] [--record-only] [--smaps] [--lab-minutes M]
        [--keep DIR]
    .venv/bin/python bench/bench_memory.py heap [--seconds 600] [--every 60]
        [--from-minute M] [--record-only] [--pools] [--lab-minutes M]
    .venv/bin/python bench/bench_memory.py held [--ticks 600] [--interval 1]
        [--baseline GITREF]
    .venv/bin/python bench/bench_memory.py census [--seconds 310] [--baseline GITREF]
    .venv/bin/python bench/bench_memory.py turnover REC [--ticks 1800] [--every 60]
        [--skip N] [--without engine|lag|recorder]

``imports``: each command run once in its own process (``import replmon.cli``,
``--help``, ``check --replay`` and ``report`` on a shipped session, ``serve`` idle on a
fleet file whose one pair is unreachable, the live screen's and ``record``'s imports):
VmRSS and VmHWM at its end (/proc/PID/status), what each top package cost as it was
imported (RSS grown while its own modules ran, its dependencies' counted to them), and
the packages it imported that it does not use (``UNNEEDED``: the same sets
tests/unit/test_import_budget.py forbids).

``live``: the lab and a write load in this process, the real screen in tmux (a real
terminal) pointed at the lab at 1 Hz with all sources and ``--record``; the screen's
VmRSS every ``--every`` seconds (#56: flat from minute 5 to minute 60); with ``--tree``
or ``--env``, other trees or environments' screens beside it, on the same lab at once;
with ``--record-only``, ``replmon record`` (the headless recorder) in their place; with
``--smaps``, each sample's resident memory by kind of mapping as well (glibc's heaps,
threads' stacks, other anonymous memory such as pymalloc's arenas, files: ``smaps_kb``).

``heap``: the same pipeline in this process (the collector on the lab, the engine, the
recorder and the screen headless on a 160x50 virtual terminal; with ``--record-only``,
``replmon record``'s pipeline, no screen); tracemalloc from the
first minute on (started earlier, it slows the imports ~10x), a snapshot every
``--every`` seconds, and what grew most between the first and the last, by traceback: a
cache that grows with time shows there. With ``--pools``, no tracing: pymalloc's pools by
block size every ``--every`` seconds (``sys._debugmallocstats``), and the sizes that took
pools from ``--from-minute`` on, with their blocks in use (held, or pages only).

``census``: what the engine's windows and the true lag's tracker hold after
``--seconds`` of the live collector on the lab (all sources, 1 s, the write load): the
objects they reach by type, and how many of the strings are copies of one another (a
value every tick parses anew); with ``--baseline REF``, REF's tree the same way at the
same time, on the same lab. Unlike ``held`` (ticks decoded from JSON, as replay does),
this is what the collector builds.

``held``: what the engine's windows and the true lag's tracker hold once full, in this
process: the lab's real ticks (tests/fixtures/ticks/lab_pair.jsonl, all four sources,
binlog readings every 2 ticks, as bench_checks.py loops them) fed as the collector and
the engine take them (``LagTracker.measure``/``redis``, ``observe``, ``apply``), each
decoded from JSON just before as replay decodes them (``tick_from_json``: msgspec;
pydantic's ``validate_json`` keeps a cache of up to 16,384 strings, which the unique
GTID texts fill a little every tick), so what is traced at the end is what they kept;
``--interval 5`` a fleet's (``serve``'s default). With ``--baseline REF``, REF's tree the
same way in the same run.

``turnover``: ``replmon record``'s pipeline (the engine of a live command, the true
lag's tracker, the recorder, the paced full collections) fed at full speed with the
ticks of a recording ``REC`` of the lab (``live --keep DIR`` keeps them), each tick
decoded only when fed, looped with its seq and clocks moved on to reach ``--ticks``; the
process's VmRSS, glibc's heap, the other anonymous memory and pymalloc's pools every
``--every`` ticks. Minutes of a recorder's life in seconds, without the collector: if the
step after minute 5 shows at tick 300-600 here, it is the windows' and not the sources'.
``--skip N`` starts at the recording's tick N: the recorder meets a lab N seconds older,
whose uptimes and slow counters are past 256 (Python's shared small ints) already.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "sample_sessions" / "healthy_steady_load.rmrec"
TOP = ("textual", "rich", "plotext", "textual_plotext", "pydantic", "pydantic_core", "msgspec",
       "pymysql", "cryptography", "redis", "prometheus_client", "psutil", "asyncio", "ssl",
       "setproctitle", "shtab")
# What a command does not use, and so must not import (tests/unit/test_import_budget.py)
UNNEEDED = {
    "serve": ("textual", "rich", "plotext", "cryptography.hazmat"),
    "check --replay": ("textual", "prometheus_client", "replmon.fleet.serve", "plotext",
                       "pymysql", "redis", "cryptography.hazmat"),
    "report": ("textual", "prometheus_client", "replmon.fleet.serve", "plotext", "pymysql",
               "redis", "cryptography.hazmat"),
    "live screen": ("prometheus_client", "replmon.fleet.serve", "cryptography.hazmat",
                    "replmon.lab.demo", "greenlet", "rich._emoji_codes"),
    "record": ("textual", "rich", "plotext", "prometheus_client", "replmon.fleet.serve",
               "cryptography.hazmat", "replmon.lab.demo", "greenlet"),
}


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0



MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ (\d+)\s*(.*)$")
HEAP_MAX = 64 << 20
"""glibc's reservation for a thread's arena (64-bit): its used part rw-p, the rest ---p."""


def smaps_kb(pid: int | str = "self") -> dict[str, int]:
    """Resident KiB by kind of mapping (/proc/PID/smaps): ``heap`` glibc's main heap,
    ``arenas`` glibc's thread arenas (a rw-p part and a ---p tail filling 64 MiB),
    ``stacks`` threads' stacks (rw-p after a ---p guard page), ``anon`` the other
    anonymous memory (pymalloc's arenas, glibc's mmap'd large blocks, libraries'
    bss), ``file`` mapped files (code, data)."""
    maps: list[list] = []  # [start, end, perms, path, rss]
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = MAPPING.match(line)
            if m:
                maps.append([int(m[1], 16), int(m[2], 16), m[3], m[5].strip(), 0])
            elif line.startswith("Rss:") and maps:
                maps[-1][4] = int(line.split()[1])
    out = dict.fromkeys(("heap", "arenas", "stacks", "anon", "file"), 0)
    for i, (start, end, perms, path, rss) in enumerate(maps):
        before = maps[i - 1] if i else None
        after = maps[i + 1] if i + 1 < len(maps) else None
        if path == "[heap]":
            kind = "heap"
        elif path.startswith("/"):
            kind = "file"
        elif path:  # [stack], [vdso], [vvar] ...
            kind = "stacks" if path == "[stack]" else "file"
        elif (perms.startswith("rw") and after and after[2] == "---p" and not after[3]
              and after[0] == end and start % HEAP_MAX == 0 and after[1] - start == HEAP_MAX):
            kind = "arenas"
        elif (perms.startswith("rw") and before and before[2] == "---p" and not before[3]
              and before[1] == start and before[1] - before[0] == 4096):
            kind = "stacks"
        else:
            kind = "anon"
        out[kind] += rss
    return out


# -- the import hook: RSS grown while each module ran, children's counted apart -----------

def install_hook() -> dict[str, float]:
    """A meta-path finder that wraps every loader: ``own[name]`` is the RSS (MB) the
    module's own code added, without the modules it imported meanwhile."""
    import importlib.abc

    own: dict[str, float] = {}
    stack: list[list[float]] = []  # [rss at start, children's rss]

    def statm() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    class Loader(importlib.abc.Loader):
        def __init__(self, inner: object, name: str) -> None:
            self.inner, self.name = inner, name

        def create_module(self, spec: object) -> object:
            stack.append([statm(), 0.0])
            return self.inner.create_module(spec)  # type: ignore[attr-defined]

        def exec_module(self, module: object) -> None:
            try:
                self.inner.exec_module(module)  # type: ignore[attr-defined]
            finally:
                r0, kids = stack.pop()
                grown = statm() - r0
                own[self.name] = own.get(self.name, 0.0) + grown - kids
                if stack:
                    stack[-1][1] += grown

        def __getattr__(self, attr: str) -> object:
            return getattr(self.inner, attr)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    if hasattr(spec.loader, "exec_module"):
                        spec.loader = Loader(spec.loader, name)
                    return spec
            return None

    sys.meta_path.insert(0, Finder())
    return own


def by_package(own: dict[str, float]) -> dict[str, float]:
    """Each module's own cost summed by top package (replmon by subpackage)."""
    out: dict[str, float] = {}
    for name, mb in own.items():
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "replmon" else parts[0].lstrip("_")
        key = {"openssl": "cryptography", "rust": "cryptography", "cffi_backend": "cryptography",
               "pydantic_core": "pydantic"}.get(key, key)
        out[key] = out.get(key, 0.0) + mb
    return out


def run_one(out: str, what: str, argv: list[str]) -> None:
    """In the child: the hook, then the command; its report written at exit."""
    import atexit

    own = install_hook()

    def report() -> None:
        mods = sorted(sys.modules)
        Path(out).write_text(json.dumps({
            "what": what, "rss": rss_mb(), "hwm": rss_mb(field="VmHWM"),
            "packages": by_package(own), "modules": mods}))

    atexit.register(report)
    if what == "import replmon.cli":
        import replmon.cli  # noqa: F401
        return
    if what == "live screen":  # the screen's and the recorder's imports, without a terminal
        import replmon.cli  # noqa: F401
        from replmon import commands as cmd  # noqa: F401
        from replmon.engine import build_engine  # noqa: F401
        from replmon.factory import build_collector  # noqa: F401
        from replmon.session.format import meta_for  # noqa: F401
        from replmon.session.recorder import Recorder  # noqa: F401
        from replmon.tui.app import ReplmonApp  # noqa: F401
        from replmon.tui.feeds import live  # noqa: F401
        return
    import contextlib

    from replmon.cli import main

    with contextlib.suppress(SystemExit):
        main(argv)


def fleet_toml(tmp: Path) -> Path:
    path = tmp / "fleet.toml"
    path.write_text('listen = "127.0.0.1:0"\ninterval = 1.0\n[[pair]]\nname = "gone"\n'
                    '[pair.primary]\nhost = "127.0.0.1"\nmysql = { port = 9 }\n'
                    '[pair.replica]\nhost = "127.0.0.2"\nmysql = { port = 9 }\n')
    return path


def imports(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        runs = {
            "import replmon.cli": [],
            "--help": ["--help"],
            "check --replay": ["check", "--replay", str(SESSION)],
            "report": ["report", str(SESSION)],
            "serve": ["serve", "--config", str(fleet_toml(tmp))],
            "live screen": [],
            "record": ["record", "--primary", "127.0.0.1", "--primary-mysql", "127.0.0.1:9",
                       "--replica", "127.0.0.2", "--replica-mysql", "127.0.0.2:9",
                       "--no-drbd", "--count", "3", "--interval", "0.2",
                       "-o", str(tmp / "r.rmrec")],
        }
        print(f"{'command':20} {'VmRSS':>7} {'VmHWM':>7}  " + " ".join(f"{p:>8.8}" for p in
                                                                    ("textual", "rich",
                                                                     "pydantic", "pymysql",
                                                                     "crypto", "redis",
                                                                     "promclnt", "psutil",
                                                                     "msgspec", "asyncio",
                                                                     "replmon")))
        for what, argv in runs.items():
            out = tmp / "out.json"
            out.unlink(missing_ok=True)
            child = subprocess.Popen(
                [sys.executable, __file__, "_one", str(out), what, *argv],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**os.environ, "XDG_STATE_HOME": str(tmp)})
            if what == "serve":
                time.sleep(args.serve_seconds)
                child.send_signal(signal.SIGINT)
            child.wait(timeout=120)
            got = json.loads(out.read_text())
            pk = got["packages"]
            cost = [pk.get(p, 0.0) for p in ("textual", "rich", "pydantic", "pymysql",
                                             "cryptography", "redis", "prometheus_client",
                                             "psutil", "msgspec")]
            cost.append(pk.get("asyncio", 0.0) + pk.get("ssl", 0.0))
            cost.append(sum(v for k, v in pk.items() if k.startswith("replmon")))
            print(f"{what:20} {got['rss']:7.1f} {got['hwm']:7.1f}  "
                  + " ".join(f"{c:8.1f}" for c in cost))
            mods = set(got["modules"])
            extra = [m for m in UNNEEDED.get(what, ()) if m in mods]
            if extra:
                print(f"{'':20} UNNEEDED: {', '.join(extra)}")
        print("(MB; a package's column: RSS its own modules added as they ran; the base "
              f"interpreter: {rss_mb():.1f} MB in this process)")


sys.path.insert(0, str(ROOT / "bench"))


def config_toml(lab: object) -> str:
    from bench_tui import config_toml as tui_config

    return tui_config(lab)  # type: ignore[arg-type]


def variants(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    """The screens to run side by side: this tree, each ``--tree NAME=DIR`` (its replmon
    first on PYTHONPATH, e.g. ``git archive REF`` unpacked, with ``checks/`` copied to
    ``replmon/checks``) and each ``--env NAME:VAR=VAL[,VAR=VAL]`` (this tree so)."""
    out: dict[str, dict[str, str]] = {"this": {}}
    for spec in args.tree:
        name, _, path = spec.partition("=")
        out[name] = {"PYTHONPATH": str(Path(path).resolve())}
    for spec in args.env:
        name, _, pairs = spec.partition(":")
        out[name] = dict(kv.split("=", 1) for kv in pairs.split(","))
    return out


def age_lab(minutes: float) -> None:
    """Let the lab run ``minutes`` under its write load before a monitor starts.

    A fresh lab's servers are young: their uptimes and the counters that move about once
    a second (Questions on a replica, Created_tmp_tables, Connections) pass 256 in their
    first minutes, and a value up to 256 is Python's one shared small int while one above
    is an int of its own (32 bytes) in every tick the windows keep; MariaDB's GTID
    sequence numbers gain a digit (100,000 at ~5.5 min at 300 transactions a second). A
    monitor started with the lab takes more blocks after minute 5, most likely for that
    (``heap --pools``, minute 5 to 16: 3,628 more blocks of 32 bytes, an int's size,
    against 1,242 with ``--lab-minutes 10``); a server that has been up a while is past
    it (docs/benchmarks.md, 2026-12-07, day)."""
    if minutes > 0:
        print(f"the lab runs {minutes:g} min under its write load before the monitor starts",
              flush=True)
        time.sleep(minutes * 60)


def live(args: argparse.Namespace) -> None:
    from bench_tui import start_in_tmux, tmux

    from replmon.lab import Lab
    from replmon.lab.load import WriteLoad

    replmon = str(Path(sys.executable).parent / "replmon")
    runs = variants(args)
    with Lab() as lab, WriteLoad(lab, rate=300), tempfile.TemporaryDirectory() as tmp:
        age_lab(args.lab_minutes)
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(config_toml(lab))
        env = {**os.environ, "BENCH_MYSQL_PASSWORD": lab.monitor_password,
               "BENCH_REDIS_PASSWORD": lab.redis_password, "TERM": "xterm-256color",
               "XDG_STATE_HOME": tmp}
        procs: dict[str, int] = {}
        servers = [f"replmon-mem-{os.getpid()}-{i}" for i in range(len(runs))]
        try:
            for i, (server, (name, extra)) in enumerate(zip(servers, runs.items(), strict=True)):
                command = (f"{replmon} record --config {cfg} -o {tmp}/live-{i}.rmrec"
                           if args.record_only else
                           f"{replmon} --config {cfg} --record {tmp}/live-{i}.rmrec")
                procs[name] = start_in_tmux(server, ("160", "50"), command, {**env, **extra},
                                            "replmon").pid
            print("       " + "".join(f"{name:>12.12}" for name in procs), "(VmRSS, MB)")
            t0 = time.monotonic()
            seen: list[tuple[float, list[float]]] = []
            kinds: list[tuple[float, list[dict[str, int]]]] = []
            while time.monotonic() - t0 < args.seconds:
                time.sleep(args.every)
                seen.append(((time.monotonic() - t0) / 60, [rss_mb(p) for p in procs.values()]))
                print(f"{seen[-1][0]:5.1f} min" + "".join(f"{x:12.1f}" for x in seen[-1][1]),
                      flush=True)
                if args.smaps:
                    kinds.append((seen[-1][0], [smaps_kb(p) for p in procs.values()]))
                    for name, kb in zip(procs, kinds[-1][1], strict=True):
                        print(f"    {name:>10.10} KiB " + " ".join(f"{k} {v:,}"
                                                               for k, v in kb.items()))
            print("VmHWM    " + "".join(f"{rss_mb(pid, 'VmHWM'):12.1f}"
                                         for pid in procs.values()))
            for since in (5, 10):  # #56: flat from minute 5 to 60
                first = next((s for s in seen if s[0] >= since), None)
                if first is not None and first is not seen[-1]:
                    print(f"from {first[0]:.1f} to {seen[-1][0]:.1f} min"
                          + "".join(f"{b - a:+12.1f}" for a, b in zip(first[1], seen[-1][1],
                                                                      strict=True)))
                    at = next((k for k in kinds if k[0] >= since), None)
                    if at is not None and at is not kinds[-1]:
                        for name, a, b in zip(procs, at[1], kinds[-1][1], strict=True):
                            print(f"    {name:>10.10} KiB " + " ".join(
                                f"{k} {b[k] - a[k]:+,}" for k in a))
        finally:
            for server in servers:
                tmux(server, "kill-server", check=False)
            if args.keep:  # the recordings, for ``turnover`` (replayed at full speed)
                keep = Path(args.keep)
                keep.mkdir(parents=True, exist_ok=True)
                for i, name in enumerate(procs):
                    if (rec := Path(tmp) / f"live-{i}.rmrec").exists():
                        shutil.copy(rec, keep / f"{name}.rmrec")


def heap(args: argparse.Namespace) -> None:
    import asyncio

    from replmon.lab import Lab
    from replmon.lab.load import WriteLoad
    from replmon.settings import pair_settings

    with Lab() as lab, WriteLoad(lab, rate=300), tempfile.TemporaryDirectory() as tmp:
        age_lab(args.lab_minutes)
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(config_toml(lab))
        os.environ.update(BENCH_MYSQL_PASSWORD=lab.monitor_password,
                          BENCH_REDIS_PASSWORD=lab.redis_password)
        from replmon.cli_args import build_parser

        config = pair_settings(build_parser().parse_args(["--config", str(cfg)])).config()
        asyncio.run(_heap_run(config, f"{tmp}/heap.rmrec", args))


async def _heap_run(config: object, record: str, args: argparse.Namespace) -> None:
    import asyncio

    from replmon.commands import maybe_recorder
    from replmon.engine import build_engine
    from replmon.factory import build_collector

    engine = build_engine(config.checks)  # type: ignore[attr-defined]
    if args.record_only:
        from replmon.malloc import limit_arenas

        limit_arenas()  # as `replmon record` does, before the collector's threads
    async with build_collector(config) as collector, \
            maybe_recorder(config, record, collector) as extra:  # type: ignore[arg-type]
        if args.record_only:  # what `replmon record` runs (replmon/commands.py run_record)
            from replmon.gcpace import Paced
            from replmon.output.plain import FindingLog
            from replmon.pipeline import Pipeline

            stop = asyncio.Event()
            pipe = asyncio.create_task(Pipeline(collector.ticks(None), engine,
                                                [*extra, FindingLog(), Paced()]).run(stop=stop))
            await (_pools(args) if args.pools else _traced(args))
            stop.set()
            await pipe
            return
        from replmon.tui.app import ReplmonApp
        from replmon.tui.feeds import live as live_feed

        app = ReplmonApp(live_feed(collector), engine, readers=extra,
                         want_processlist=collector.want_processlist)
        async with app.run_test(size=(160, 50)) as pilot:
            await (_pools(args) if args.pools else _traced(args))
            await pilot.press("q")


async def _traced(args: argparse.Namespace) -> None:
    """Snapshots from --from-minute every --every seconds to --seconds, and what grew."""
    import asyncio
    import gc
    import tracemalloc

    t0 = time.monotonic()
    await asyncio.sleep(60)  # imports, windows filling: before tracing (it is slow)
    tracemalloc.start(6)  # what grows is allocated from now on
    # the first snapshot at --from-minute (default: one --every after tracing began)
    await asyncio.sleep(max(args.every, args.from_minute * 60 - (time.monotonic() - t0)))

    def snapshot() -> tracemalloc.Snapshot:  # after a full collection, with the figures
        gc.collect()
        snap = tracemalloc.take_snapshot()
        print(f"{(time.monotonic() - t0) / 60:.1f} min  traced "
              f"{tracemalloc.get_traced_memory()[0] / 2**20:.1f} MB  "
              f"VmRSS {rss_mb():.1f} MB", flush=True)
        return snap

    first = last = snapshot()
    while time.monotonic() - t0 < args.seconds:
        await asyncio.sleep(args.every)
        last = snapshot()
    keep = [tracemalloc.Filter(False, tracemalloc.__file__)]
    last = last.filter_traces(keep)
    diff = last.compare_to(first.filter_traces(keep), "traceback")
    print("grew most from the first snapshot to the end, by the file that allocated it:")
    for stat in last.compare_to(first.filter_traces(keep), "filename")[:args.top]:
        name = stat.traceback[0].filename.split("site-packages/")[-1].replace(f"{ROOT}/", "")
        print(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {name}")
    print("grew most from the first snapshot to the end:")
    for stat in diff[:args.top]:
        print(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
        for line in stat.traceback.format()[-6:]:
            print("      " + line)
    retained(last, args.top)


POOL_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
ARENA_ROW = re.compile(r"^# (arenas [a-z ]+?|bytes in allocated blocks)\s*=\s*([\d,]+)\s*$")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def glibc_kb() -> tuple[int, int]:
    """glibc's malloc now (``mallinfo2``, every arena): KiB in use, KiB free inside its
    heaps (what fragmentation keeps: a free run's whole pages are handed back by trim,
    the rest stays resident)."""
    info = ctypes.CDLL(None).mallinfo2
    info.restype = _Mallinfo2
    m = info()
    return m.uordblks // 1024, m.fordblks // 1024


def malloc_stats() -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """pymalloc's state now (``sys._debugmallocstats``, which writes to the C stderr):
    per block size, (pools, blocks in use); and its arena counts and allocated bytes."""
    with tempfile.TemporaryFile("w+") as out:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    sizes: dict[int, tuple[int, int]] = {}
    totals: dict[str, int] = {}
    for line in text.splitlines():
        if m := POOL_ROW.match(line):
            sizes[int(m[2])] = (int(m[3]), int(m[4]))
        elif m := ARENA_ROW.match(line):
            totals[m[1]] = int(m[2].replace(",", ""))
    return sizes, totals


async def _pools(args: argparse.Namespace) -> None:
    """pymalloc's pools by block size every --every seconds, no tracing (so the windows
    fill at the collector's own pace); then which sizes took pools from --from-minute on:
    pools that grow with blocks in use are something held; pools that grow without them
    are pages taken as the windows turn over (freed blocks scattered over more pools).
    Read without a collection first: as the process runs (its paced full pass every 10 s)."""
    import asyncio

    t0 = time.monotonic()
    seen: list[tuple[float, float, dict[int, tuple[int, int]], dict[str, int]]] = []
    print("  min  VmRSS MB  RssAnon MB  pools  arenas  allocated MB", flush=True)
    while time.monotonic() - t0 < args.seconds:
        await asyncio.sleep(args.every)
        sizes, totals = malloc_stats()
        minute = (time.monotonic() - t0) / 60
        seen.append((minute, rss_mb(), sizes, totals))
        print(f"{minute:5.1f} {seen[-1][1]:9.1f} {rss_mb(field='RssAnon'):11.1f} "
              f"{sum(p for p, _ in sizes.values()):6} {totals['arenas allocated current']:7} "
              f"{totals['bytes in allocated blocks'] / 2**20:13.2f}", flush=True)
    if not seen:
        raise SystemExit(f"--seconds {args.seconds} ends before the first reading "
                         f"(--every {args.every})")
    first = next((s for s in seen if s[0] >= args.from_minute), seen[0])
    last = seen[-1]
    print(f"pools and blocks in use by block size, minute {first[0]:.1f} -> {last[0]:.1f} "
          "(sizes whose pools changed):")
    for size in sorted(set(first[2]) | set(last[2])):
        a, b = first[2].get(size, (0, 0)), last[2].get(size, (0, 0))
        if a[0] != b[0]:
            print(f"  {size:4} B  pools {a[0]:5} -> {b[0]:5} ({b[0] - a[0]:+4})  "
                  f"blocks {a[1]:8,} -> {b[1]:8,} ({b[1] - a[1]:+7,})")


def retained(snap: object, top: int) -> None:
    """What the last snapshot holds of what was allocated since tracing began: by the
    module that allocated it (its package's path cut to a dotted name), then by line."""
    import tracemalloc

    assert isinstance(snap, tracemalloc.Snapshot)
    by_mod: dict[str, list[int]] = {}
    for stat in snap.statistics("filename"):
        name = stat.traceback[0].filename
        cut = name.split("site-packages/")[-1].replace(f"{ROOT}/", "")
        key = cut.removesuffix(".py").replace("/", ".")
        got = by_mod.setdefault(key, [0, 0])
        got[0] += stat.size
        got[1] += stat.count
    print("held at the end, allocated since tracing began, by module:")
    for key, (size, count) in sorted(by_mod.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{size / 1024:9.1f} KiB {count:7d} blocks  {key}")
    print("by line:")
    for stat in snap.statistics("lineno")[:top]:
        frame = stat.traceback[0]
        print(f"{stat.size / 1024:9.1f} KiB {stat.count:7d} blocks  "
              f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}")


def held_once(n: int, interval: float, top: int = 0) -> None:
    """Bytes and blocks the engine and the lag tracker hold after ``n`` ticks (printed
    as one line ``held: <KiB> KiB in <blocks> blocks``), and the ``top`` lines that
    allocated most of it."""
    import gc
    import tracemalloc

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_checks import with_binlog_readings
    from bench_recording import four_sources

    from replmon.engine import build_engine
    from replmon.model.tick import Tick, tick_from_json
    from replmon.testing.real_ticks import loop_ticks
    from replmon.truelag import LagTracker

    src = ROOT / "tests" / "fixtures" / "ticks" / "lab_pair.jsonl"
    real = [Tick.model_validate_json(x) for x in src.read_text().splitlines()]
    texts = [t.model_copy(update={"interval": interval}).model_dump_json()
             for t in with_binlog_readings(list(loop_ticks(four_sources(real), n)))]
    del real
    try:  # a live command's engine (its older ticks' parts packed), as the collector feeds
        engine = build_engine(entry_points=False, live=True)
    except TypeError:  # a tree from before build_engine(live=...)
        engine = build_engine(entry_points=False)
    lag = LagTracker()
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    for s in texts:
        t = tick_from_json(s)
        lag.measure(t.oriented("mysql"))
        lag.redis(t.oriented("redis"))
        engine.apply(t.seq, t.wall, engine.observe(t), t.interval)
        del t
    gc.collect()
    grown = [d for d in tracemalloc.take_snapshot().compare_to(base, "filename")]
    for d in tracemalloc.take_snapshot().compare_to(base, "lineno")[:top]:
        print(f"  {d.size_diff / 1024:8.0f} KiB {d.count_diff:7d} blocks  {d.traceback[0]}")
    size = sum(d.size_diff for d in grown)
    blocks = sum(d.count_diff for d in grown)
    tracemalloc.stop()
    print(f"held: {size / 1024:.0f} KiB in {blocks} blocks "
          f"(after {n} ticks at {interval:g} s: the engine's {engine.kept} ticks kept)")


def held(args: argparse.Namespace) -> None:
    held_once(args.ticks, args.interval, args.top)
    if not args.baseline:
        return
    from bench_recording import worktree

    with worktree(args.baseline) as tree:
        script = (f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r});"
                  f"import bench_memory as b; b.ROOT=__import__('pathlib').Path({str(tree)!r});"
                  f"b.held_once({args.ticks}, {args.interval})")
        out = subprocess.run([sys.executable, "-c", script], check=True, text=True,
                             capture_output=True, cwd=tree,
                             env={**os.environ, "PYTHONPATH": str(tree)}).stdout
        print(f"{args.baseline}: {out.strip()}")


def reached(*roots: object) -> dict[str, object]:
    """What ``roots`` reach (gc referents; modules, classes and code left out): object
    count and bytes (sys.getsizeof) by type, and the strings' count and distinct values."""
    import gc
    import types

    skip = (type, types.ModuleType, types.FunctionType, types.CodeType, types.MethodType,
            types.BuiltinFunctionType)
    seen: set[int] = set()
    count: dict[str, int] = {}
    size: dict[str, int] = {}
    texts: set[str] = set()
    stack = list(roots)
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, skip):
            continue
        seen.add(id(o))
        name = type(o).__name__
        count[name] = count.get(name, 0) + 1
        size[name] = size.get(name, 0) + sys.getsizeof(o)
        if type(o) is str:
            texts.add(o)
        stack.extend(gc.get_referents(o))
    top = sorted(size, key=lambda k: -size[k])[:8]
    return {"objects": sum(count.values()), "kib": sum(size.values()) / 1024,
            "strings": count.get("str", 0), "distinct": len(texts),
            "top": {k: (count[k], size[k] / 1024) for k in top}}


def census_one(out: str, seconds: float, cfg: str) -> None:
    """In the child: the collector and the engine on the lab for ``seconds``, then
    ``reached`` from the engine and the true lag's tracker, written to ``out``."""
    import asyncio
    import gc

    from replmon.cli_args import build_parser
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.pipeline import Pipeline
    from replmon.settings import pair_settings

    config = pair_settings(build_parser().parse_args(["--config", cfg])).config()

    async def run() -> dict[str, object]:
        engine = build_engine(config.checks)
        async with build_collector(config) as collector:
            stop = asyncio.Event()
            pipe = asyncio.create_task(Pipeline(collector.ticks(None), engine, []).run(stop=stop))
            await asyncio.sleep(seconds)
            stop.set()
            await pipe
            gc.collect()
            return {"ticks": engine.kept, **reached(engine, collector._lag)}

    Path(out).write_text(json.dumps(asyncio.run(run())))


def census(args: argparse.Namespace) -> None:
    import contextlib

    from replmon.lab import Lab
    from replmon.lab.load import WriteLoad

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_recording import worktree

    with Lab() as lab, WriteLoad(lab, rate=300), tempfile.TemporaryDirectory() as tmp, \
            contextlib.ExitStack() as stack:
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(config_toml(lab))
        env = {**os.environ, "BENCH_MYSQL_PASSWORD": lab.monitor_password,
               "BENCH_REDIS_PASSWORD": lab.redis_password}
        trees = {"this": {}}
        if args.baseline:
            tree = stack.enter_context(worktree(args.baseline))
            trees[args.baseline] = {"PYTHONPATH": str(tree)}
        procs = {name: subprocess.Popen(
            [sys.executable, __file__, "_census", f"{tmp}/{i}.json", str(args.seconds), str(cfg)],
            env={**env, **extra}) for i, (name, extra) in enumerate(trees.items())}
        got = {}
        for i, (name, proc) in enumerate(procs.items()):
            if proc.wait() != 0:
                raise SystemExit(f"{name}: the census failed (exit {proc.returncode})")
            got[name] = json.loads(Path(f"{tmp}/{i}.json").read_text())
    for name, g in got.items():
        print(f"{name}: {g['ticks']} ticks kept; {g['objects']:,} objects, {g['kib']:,.0f} KiB; "
              f"{g['strings']:,} strings, {g['distinct']:,} distinct")
        for k, (n, kib) in g["top"].items():
            print(f"    {k:24} {n:8,} {kib:9,.0f} KiB")


def turnover(args: argparse.Namespace) -> None:
    import asyncio

    asyncio.run(_turnover(args))


async def _turnover(args: argparse.Namespace) -> None:
    import asyncio

    from replmon.engine import build_engine
    from replmon.gcpace import Paced
    from replmon.malloc import ONE_PAIR, limit_arenas
    from replmon.pipeline import Pipeline
    from replmon.session.format import meta_for
    from replmon.session.recorder import Recorder
    from replmon.session.recording import open_recording
    from replmon.truelag import LagTracker

    limit_arenas(ONE_PAIR)
    with open_recording(args.rec) as rec:
        n = len(rec)  # (from its frame index: nothing decoded)
    if n < 2:
        raise SystemExit(f"{args.rec}: {n} ticks; turnover needs a recording of minutes")
    if args.skip >= n:
        raise SystemExit(f"{args.rec}: {n} ticks; --skip {args.skip} leaves none")
    clock = [0.0]
    lag = LagTracker()
    seen: list[tuple[int, float, dict[str, int], int, float, tuple[int, int]]] = []
    by_size: dict[int, dict[int, tuple[int, int]]] = {}

    def sample(i: int) -> None:
        sizes, totals = malloc_stats()
        kb = smaps_kb()
        by_size[i] = sizes  # kept at the ticks compared only: the bench's own blocks
        for old in [k for k in by_size if k not in (300, 600, i)]:  # would count as growth
            del by_size[old]
        seen.append((i, rss_mb(), kb, sum(p for p, _ in sizes.values()),
                     totals.get("bytes in allocated blocks", 0) / 2**20, glibc_kb()))
        print(f"{i:6} {seen[-1][1]:9.1f} {kb['heap']:9,} {kb['anon']:9,} {seen[-1][3]:6} "
              f"{seen[-1][4]:13.2f} {seen[-1][5][0]:9,} {seen[-1][5][1]:9,}", flush=True)

    async def feed():  # type: ignore[no-untyped-def]
        i, lap = 0, 0
        first_wall = None
        while i < args.ticks:
            with open_recording(args.rec) as rec:
                start = args.skip if lap == 0 else 0  # --skip: an older lab, on lap 0
                for t in (e.tick for ci in range(rec.chunk_of(start), len(rec.chunks))
                          for e in rec.chunk_entries(ci) if e.index >= start):
                    if first_wall is None:
                        first_wall = t.wall
                    shift = lap * n * t.interval
                    t = t.model_copy(update={"seq": i, "slot": i, "wall": t.wall + shift,
                                             "mono": t.mono + shift})
                    if "lag" not in args.without:
                        t = t.model_copy(update={"lag": lag.measure(t.oriented("mysql")),
                                                 "redis_lag": lag.redis(t.oriented("redis"))})
                    clock[0] = t.wall - first_wall
                    yield t
                    i += 1
                    if i % args.every == 0:
                        sample(i)
                    await asyncio.sleep(args.pace)  # the recorder's writer thread keeps up
                    if i >= args.ticks:
                        return
            lap += 1

    print(f"{args.rec}: {n} ticks, fed {args.ticks} (looped)")
    print("  tick  VmRSS MB  heap KiB  anon KiB  pools  allocated MB  glibc in use KiB, free",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        async with Recorder(f"{tmp}/turnover.rmrec", meta_for(None, interval=1.0)) as recorder:
            pipe = Pipeline(feed(), None if "engine" in args.without else build_engine(live=True),
                            [*(() if "recorder" in args.without else (recorder,)),
                             Paced(clock=lambda: clock[0])])
            await pipe.run()
    for since in (300, 600):
        first = next((s for s in seen if s[0] >= since), None)
        if first is not None and first is not seen[-1]:
            last = seen[-1]
            print(f"tick {first[0]} -> {last[0]}: VmRSS {last[1] - first[1]:+.1f} MB, heap "
                  f"{last[2]['heap'] - first[2]['heap']:+,} KiB, anon "
                  f"{last[2]['anon'] - first[2]['anon']:+,} KiB, pools {last[3] - first[3]:+}, "
                  f"allocated {last[4] - first[4]:+.2f} MB, glibc in use "
                  f"{last[5][0] - first[5][0]:+,} KiB, free {last[5][1] - first[5][1]:+,} KiB")
            a, z = by_size[first[0]], by_size[last[0]]
            for size in sorted(set(a) | set(z)):
                (pa, ba), (pz, bz) = a.get(size, (0, 0)), z.get(size, (0, 0))
                if pa != pz:
                    print(f"  {size:4} B  pools {pa:5} -> {pz:5} ({pz - pa:+4})  "
                          f"blocks {ba:8,} -> {bz:8,} ({bz - ba:+7,})")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_one":
        run_one(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "_census":
        census_one(sys.argv[2], float(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("imports")
    p.add_argument("--serve-seconds", type=float, default=5.0)
    p = sub.add_parser("live")
    p.add_argument("--lab-minutes", type=float, default=0,
                   help="minutes the lab runs under its load before the monitor starts")
    p.add_argument("--seconds", type=int, default=600)
    p.add_argument("--every", type=int, default=30)
    p.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    p.add_argument("--record-only", action="store_true",
                   help="`replmon record` (headless) instead of the screen with --record")
    p.add_argument("--env", action="append", default=[], metavar="NAME:VAR=VAL[,VAR=VAL]")
    p.add_argument("--keep", metavar="DIR",
                   help="copy each variant's recording to DIR/<name>.rmrec at the end")
    p.add_argument("--smaps", action="store_true",
                   help="each sample's resident memory by kind of mapping (smaps_kb)")
    p = sub.add_parser("heap")
    p.add_argument("--lab-minutes", type=float, default=0,
                   help="minutes the lab runs under its load before the monitor starts")
    p.add_argument("--seconds", type=int, default=600)
    p.add_argument("--every", type=int, default=60)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--from-minute", type=float, default=0,
                   help="first snapshot at this minute (what grows once the windows are full)")
    p.add_argument("--record-only", action="store_true",
                   help="the pipeline of `replmon record` (no screen)")
    p.add_argument("--pools", action="store_true",
                   help="no tracing: pymalloc's pools by block size (sys._debugmallocstats)")
    p = sub.add_parser("held")
    p.add_argument("--ticks", type=int, default=600)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--baseline", metavar="GITREF")
    p.add_argument("--top", type=int, default=0, help="the lines that allocated most of it")
    p = sub.add_parser("turnover")
    p.add_argument("rec", help="a recording of the lab (live --keep DIR)")
    p.add_argument("--pace", type=float, default=0.005, help="seconds slept after each tick")
    p.add_argument("--without", action="append", default=[],
                   choices=("engine", "lag", "recorder"), help="leave this part out")
    p.add_argument("--ticks", type=int, default=1800)
    p.add_argument("--every", type=int, default=60)
    p.add_argument("--skip", type=int, default=0, metavar="N",
                   help="start at the recording's tick N (the lab N seconds older)")
    p = sub.add_parser("census")
    p.add_argument("--seconds", type=float, default=310.0)
    p.add_argument("--baseline", metavar="GITREF")
    args = ap.parse_args()
    {"imports": imports, "live": live, "heap": heap, "held": held,
     "census": census, "turnover": turnover}[args.what](args)


if __name__ == "__main__":
    main()
