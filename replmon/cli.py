"""Command line. Parses arguments, builds a Config, and hands it to one
builder (factory.build_collector); no sampling logic lives here."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from replmon import __version__
from replmon.config import (
    Config,
    build_config,
    load_toml,
    merge,
    parse_endpoint_spec,
    parse_ssh_spec,
)
from replmon.errors import ConfigError, LabError, SessionError
from replmon.output.nagios import CheckRun

if TYPE_CHECKING:
    from replmon.session.replay import Recording

log = logging.getLogger("replmon")

EXAMPLES = """\
examples:
  replmon --primary db163 --replica db162
      the live screen (q quits, ? explains every column)
  replmon --lab
      the live screen on a throwaway MariaDB + Redis pair with a write load
  replmon --primary db163 --replica db162 --plain | tee pair.log
      no TUI: text rows, findings as they open and close
  replmon sample --lab --count 10
      start a throwaway MariaDB + Redis pair on loopback (needs mariadb-server
      and redis-server installed), put a write load on it, print 10 ticks
  replmon sample --primary db163 --replica db162
      MySQL on 3306 and Redis on 6379 of each node; credentials from
      ~/.my.cnf [client] or REPLMON_MYSQL_PASSWORD / REPLMON_REDIS_PASSWORD
  replmon sample --primary 127.0.0.1 --replica 127.0.0.1 \\
      --primary-mysql monitor@:3306 --replica-mysql monitor@:3307 \\
      --primary-redis :6379 --replica-redis :6380 --json --count 5
  replmon sample --config replmon.toml --json | jq .replica.mysql.replication

remote nodes: host and DRBD metrics of a node that is not this machine are read
  over ssh (BatchMode, one connection per node; ~/.ssh/config applies); override
  with --primary-ssh / --replica-ssh off | local | [USER@]HOST[:PORT]

endpoint syntax (--primary-mysql, --replica-mysql, --primary-redis, --replica-redis):
  off | :PORT | HOST:PORT | USER@HOST:PORT | /path/to/socket | mysql://USER@HOST:PORT
  (a password in a URL is visible in ps; prefer the environment or ~/.my.cnf)
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="replmon",
        description="Monitor a replicated primary/replica database pair: host, DRBD, "
        "MySQL/MariaDB and Redis, side by side.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"replmon {__version__}")
    add_node_options(p)
    p.add_argument("--plain", action="store_true",
                   help="no TUI: one text row per node per tick, findings as they open/close")
    p.add_argument("--lab", action="store_true",
                   help="start a throwaway MariaDB + Redis pair with a write load and monitor it")
    p.add_argument("--record", metavar="FILE",
                   help="also record the session to FILE (replay it with: replmon replay FILE)")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser(
        "sample", help="print ticks as text rows or JSON lines",
        description="Sample both nodes every interval and print one row per node per tick "
        "(or one JSON object per tick with --json).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_node_options(s)
    s.add_argument("--count", type=int, default=None, metavar="N", help="stop after N ticks")
    s.add_argument("--json", action="store_true", help="one JSON object per tick (JSON lines)")
    s.add_argument("--lab", action="store_true",
                   help="start a throwaway MariaDB + Redis pair with a write load and monitor it")
    s.add_argument("-v", "--verbose", action="store_true", help="log to stderr")

    c = sub.add_parser(
        "check", help="sample for a while, print findings, exit 0/1/2/3 (Nagios/Icinga)",
        description="Sample both nodes for --duration, run every check, print the findings "
        "and exit with the monitoring-plugin code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. "
        "The first line is the plugin status line.",
        epilog=CHECK_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_node_options(c)
    c.add_argument("--duration", type=parse_duration, default=10.0, metavar="TIME",
                   help="how long to sample: 10s (default), 2m, 30")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--lab", action="store_true", help="check a throwaway lab pair")
    c.add_argument("--replay", metavar="FILE",
                   help="judge a recording instead of live servers (findings open at its end)")
    c.add_argument("-v", "--verbose", action="store_true", help="log to stderr")

    r = sub.add_parser(
        "record", help="record a session headless (for a daemon / systemd)",
        description="Sample both nodes and write every tick and finding to FILE until "
        "SIGTERM/SIGINT (or --count). Logs go to stderr. With --max-bytes/--max-age the "
        "recording rotates into numbered parts (FILE.0001.rmrec, ...).",
        epilog=RECORD_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_node_options(r)
    r.add_argument("-o", "--output", required=True, metavar="FILE", help="recording file")
    r.add_argument("--count", type=int, default=None, metavar="N", help="stop after N ticks")
    r.add_argument("--max-bytes", type=parse_size, metavar="SIZE",
                   help="rotate when a part reaches SIZE (100M, 1G)")
    r.add_argument("--max-age", type=parse_duration, metavar="TIME",
                   help="rotate when a part spans TIME (1h, 1d)")
    r.add_argument("--keep", type=int, metavar="N", help="delete all but the newest N parts")
    r.add_argument("--lab", action="store_true", help="record a throwaway lab pair")
    r.add_argument("-v", "--verbose", action="store_true", help="log to stderr")

    rp = sub.add_parser(
        "replay", help="the live screen on a recording",
        description="Replay a recording on the live screen: space play/pause, left/right "
        "step, +/- speed (x1..x64), g go to a time, n/N next/previous finding. The checks "
        "re-run with this version's code; the findings seen at capture are marked (rec).",
    )
    rp.add_argument("file", metavar="FILE")
    rp.add_argument("--paused", action="store_true", help="start paused on the first tick")
    rp.add_argument("-v", "--verbose", action="store_true", help="log to stderr")

    rep = sub.add_parser(
        "report", help="summarise a recording: span, versions, findings, peaks, gaps",
        description="What a recording holds: time span, hosts and server versions, the "
        "findings timeline (recorded and re-run), peaks of the key rates, gaps. "
        "--csv exports chosen metrics per tick for plotting.",
    )
    rep.add_argument("file", metavar="FILE")
    rep.add_argument("--format", choices=("text", "json"), default="text")
    rep.add_argument("--csv", metavar="PATHS",
                     help="comma-separated metrics, e.g. primary.rates.mysql.qps,"
                     "replica.mysql.replication.0.seconds_behind; writes CSV to stdout")
    rep.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    return p


RECORD_EXAMPLES = """\
examples:
  replmon record --primary db163 --replica db162 -o /var/lib/replmon/pair.rmrec \\
      --max-age 1d --keep 14
  replmon --primary db163 --replica db162 --record incident.rmrec   # live screen + recording
  replmon replay incident.rmrec
  replmon report incident.rmrec --csv primary.rates.mysql.qps,replica.rates.mysql.qps
  replmon check --replay incident.rmrec --format json
"""


def parse_size(text: str) -> int:
    t = text.strip().upper().removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(t[-1:], 1)
    try:
        value = int(float(t[:-1] if scale > 1 else t) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 100M, 1G)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return value


CHECK_EXAMPLES = """\
examples:
  replmon check --primary db163 --replica db162
  replmon check --config replmon.toml --duration 30s --format json
  replmon check --lab --duration 5s

thresholds: [checks.<id>] tables in the TOML config (see docs/checks.md), e.g.
  [checks.mysql_replication]
  lag_warning_s = 60
  [checks.throughput_collapse]
  enabled = false
"""


def parse_duration(text: str) -> float:
    t = text.strip().lower()
    scale = 1.0
    if t.endswith("ms"):
        t, scale = t[:-2], 0.001
    elif t and t[-1] in "smh":
        t, scale = t[:-1], {"s": 1.0, "m": 60.0, "h": 3600.0}[t[-1]]
    try:
        value = float(t) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (try 10s, 2m)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive: {text!r}")
    return value


def add_node_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--config", metavar="FILE", help="TOML config file (see README)")
    s.add_argument("--primary", metavar="HOST", help="primary node (name or address)")
    s.add_argument("--replica", metavar="HOST", help="replica node (name or address)")
    for role in ("primary", "replica"):
        s.add_argument(f"--{role}-mysql", metavar="ENDPOINT", help=f"{role}'s MySQL endpoint")
        s.add_argument(f"--{role}-redis", metavar="ENDPOINT", help=f"{role}'s Redis endpoint")
        s.add_argument(f"--{role}-ssh", metavar="DEST",
                       help=f"how {role}'s host/DRBD metrics are read: off, local or "
                       "[USER@]HOST[:PORT] (default: local for this machine, else ssh)")
    s.add_argument("--no-drbd", action="store_true", help="do not read DRBD state")
    s.add_argument("--no-host", action="store_true", help="do not read host metrics")
    s.add_argument("--drbd-proc", metavar="PATH", help="path of /proc/drbd (default /proc/drbd)")
    s.add_argument("--interval", type=float, metavar="SECONDS", help="seconds between ticks (1)")
    s.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="per-source timeout (default 0.8 x interval)")


def config_from_args(args: argparse.Namespace, base: dict[str, Any] | None = None) -> Config:
    data: dict[str, Any] = dict(base or {})
    if args.config:
        data = merge(data, load_toml(args.config))
    over: dict[str, Any] = {}
    if args.interval is not None:
        over["interval"] = args.interval
    if args.timeout is not None:
        over["timeout"] = args.timeout
    for role in ("primary", "replica"):
        node: dict[str, Any] = {}
        if getattr(args, role):
            node["host"] = getattr(args, role)
        for kind in ("mysql", "redis"):
            spec = getattr(args, f"{role}_{kind}")
            if spec:
                node[kind] = parse_endpoint_spec(spec, kind)
        ssh_spec = getattr(args, f"{role}_ssh", None)
        if ssh_spec:
            node["ssh"] = parse_ssh_spec(ssh_spec)
        if args.no_drbd:
            node["drbd"] = {"enabled": False}
        elif args.drbd_proc:
            node["drbd"] = {"proc_path": args.drbd_proc}
        if args.no_host:
            node["host_metrics"] = {"enabled": False}
        if node:
            over[role] = node
    data = merge(data, over)
    for role in ("primary", "replica"):
        if "host" not in data.get(role, {}):
            raise ConfigError(f"no {role} given: use --{role} HOST or a [{role}] table in --config")
    return build_config(data, origin=args.config or "command line")


@contextlib.contextmanager
def lab_config() -> Iterator[dict[str, Any]]:
    """Start the lab and a write load; yield config keys pointing at it."""
    from replmon.lab import Lab, WriteLoad

    print("starting the lab (MariaDB + Redis primary/replica on loopback)...", file=sys.stderr)
    with Lab() as lab, WriteLoad(lab, rate=300):
        nodes = lab.settings()
        del nodes["interval"]  # the command line's --interval, or the default
        print(f"lab up in {lab.dir}: MariaDB {lab.primary.mysql_port}/{lab.replica.mysql_port}, "
              f"Redis {lab.primary.redis_port}/{lab.replica.redis_port}", file=sys.stderr)
        yield nodes


@contextlib.asynccontextmanager
async def maybe_recorder(config: Config, path: str | None, **rotation: Any
                         ) -> AsyncIterator[Any]:
    """A started Recorder for ``path`` (None: no recording)."""
    if path is None:
        yield None
        return
    from replmon.session.format import meta_for
    from replmon.session.recorder import Recorder

    async with Recorder(path, meta_for(config), **rotation) as rec:
        log.info("recording to %s", path)
        yield rec
    log.info("recording closed: %d ticks, %d dropped", rec.ticks_written, rec.dropped)


async def run_tui(config: Config, record: str | None = None) -> None:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.tui.app import ReplmonApp
    from replmon.tui.feeds import live

    engine = build_engine(config.checks)
    async with build_collector(config) as collector, maybe_recorder(config, record) as rec:
        app = ReplmonApp(live(collector), engine, on_tick=rec.write if rec else None)
        await app.run_async()


async def run_plain(config: Config, *, count: int | None = None,
                    record: str | None = None) -> None:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.output.plain import PlainWriter, finding_row

    engine = build_engine(config.checks)
    writer = PlainWriter(sys.stdout)
    async with build_collector(config) as collector, maybe_recorder(config, record) as rec:
        async for tick in collector.ticks(count):
            upd = engine.feed(tick)
            if rec is not None:
                rec.write(tick, upd)
            writer.write(tick)
            for f in upd.opened:
                sys.stdout.write(finding_row(tick, f, "open") + "\n")
            for f in upd.closed:
                sys.stdout.write(finding_row(tick, f, "closed") + "\n")
            sys.stdout.flush()


def log_to_file() -> None:
    """While the TUI owns the terminal, log to $XDG_STATE_HOME/replmon/replmon.log."""
    import os
    from pathlib import Path

    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    path = state / "replmon" / "replmon.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path)
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)


def monitor_main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not (args.primary or args.config or args.lab):
        parser.print_help()
        return 2
    run = run_plain if args.plain else run_tui
    if not args.plain:
        log_to_file()  # stderr belongs to the screen
    if args.lab:
        with lab_config() as nodes:
            asyncio.run(run(config_from_args(args, base=nodes), record=args.record))
    else:
        asyncio.run(run(config_from_args(args), record=args.record))
    return 0


async def run_record(config: Config, args: argparse.Namespace) -> int:
    """Headless recording until SIGTERM/SIGINT or --count; systemd-friendly."""
    import signal

    from replmon.engine import build_engine
    from replmon.factory import build_collector

    engine = build_engine(config.checks)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    rotation = {"max_bytes": args.max_bytes, "max_age_s": args.max_age, "keep": args.keep}
    n = 0
    async with build_collector(config) as collector, \
            maybe_recorder(config, args.output, **rotation) as rec:
        ticks = collector.ticks(args.count).__aiter__()
        while not stop.is_set():
            next_tick = asyncio.ensure_future(ticks.__anext__())
            stopped = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({next_tick, stopped},
                                         return_when=asyncio.FIRST_COMPLETED)
            if next_tick not in done:
                next_tick.cancel()
                break
            stopped.cancel()
            try:
                tick = next_tick.result()
            except StopAsyncIteration:
                break
            upd = engine.feed(tick)
            rec.write(tick, upd)
            n += 1
            for f in upd.opened:
                log.warning("finding opened: %s %s %s: %s", f.severity.label, f.node,
                            f.check, f.title)
            for f in upd.closed:
                log.info("finding closed: %s %s: %s", f.node, f.check, f.title)
        log.info("stopping after %d ticks", n)
    return 0


def replay_main(args: argparse.Namespace) -> int:
    from replmon.engine import build_engine
    from replmon.session.replay import open_recording
    from replmon.session.rerun import PARALLEL_MIN_TICKS, rerun_file, start_workers_early
    from replmon.tui.replay import ReplayApp

    rec = open_recording(args.file)
    for problem in rec.problems:
        print(f"replmon: {args.file}: {problem}", file=sys.stderr)
    if not len(rec):
        print(f"replmon: {args.file}: no tick could be read", file=sys.stderr)
        return 1
    if len(rec) >= PARALLEL_MIN_TICKS:  # n / N re-run the file in worker processes
        start_workers_early()
    ReplayApp(rec, lambda: build_engine(rec.meta.checks), start_paused=args.paused,
              rerun=lambda stop: rerun_file(rec.path, should_stop=stop)).run()
    return 0


def report_main(args: argparse.Namespace) -> int:
    import json

    from replmon.output.report import export_csv, render_text, report
    from replmon.session.replay import open_recording

    with open_recording(args.file) as rec:
        if args.csv:
            paths = [p.strip() for p in args.csv.split(",") if p.strip()]
            export_csv(rec.ticks(), paths, sys.stdout)
        elif args.format == "json":
            print(json.dumps(report(rec), indent=2))
        else:
            sys.stdout.write(render_text(report(rec)))
        for problem in rec.problems:
            print(f"replmon: {args.file}: {problem}", file=sys.stderr)
    return 0


def _node_names(rec: Recording) -> dict[str, str]:
    """Role -> node name, from the recording's header (or its first tick)."""
    names = {role: info.name for role, info in rec.meta.nodes.items() if info.name}
    if len(names) < 2 and len(rec):
        with contextlib.suppress(SessionError):
            t = rec.tick_at(0)
            names = {"primary": t.primary.name, "replica": t.replica.name}
    return names


def check_replay(args: argparse.Namespace) -> CheckRun:
    from replmon.model.findings import Finding
    from replmon.session.replay import open_recording
    from replmon.session.rerun import Rerun

    with open_recording(args.replay) as rec:
        run = Rerun(rec)  # on every core for a long recording
        cleared: list[Finding] = []
        first = last = None
        for upd in run:
            first = first or upd
            last = upd
            cleared.extend(upd.closed)
        problems = list(rec.problems)
        nodes = _node_names(rec)
    if first is None or last is None:
        return CheckRun(open=[], cleared=[], ticks=0, span_s=0.0, nodes={},
                        unknown=f"{args.replay}: no tick could be read")
    run_ = CheckRun(open=run.engine.open_findings, cleared=cleared,
                    ticks=last.seq - first.seq + 1, span_s=last.wall - first.wall, nodes=nodes)
    for problem in problems:
        print(f"replmon: {args.replay}: {problem}", file=sys.stderr)
    return run_


async def run_sample(config: Config, *, count: int | None, as_json: bool) -> None:
    from replmon.factory import build_collector
    from replmon.output.plain import PlainWriter

    writer = None if as_json else PlainWriter(sys.stdout)
    async with build_collector(config) as collector:
        async for tick in collector.ticks(count):
            if writer is None:
                sys.stdout.write(tick.model_dump_json() + "\n")
            else:
                writer.write(tick)
            sys.stdout.flush()


async def run_check(config: Config, *, duration: float) -> CheckRun:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.model.findings import Finding

    engine = build_engine(config.checks)
    count = max(2, round(duration / config.interval) + 1)
    cleared: list[Finding] = []
    first = last = None
    ok_samples = 0
    async with build_collector(config) as collector:
        async for tick in collector.ticks(count):
            first = first or tick
            last = tick
            ok_samples += sum(s.ok for n in tick.nodes for s in n.statuses().values())
            cleared.extend(engine.feed(tick).closed)
    if first is None or last is None:  # count >= 2, so the collector yielded
        raise RuntimeError("the collector produced no tick")
    nodes = {"primary": last.primary.name, "replica": last.replica.name}
    unknown = None if ok_samples else "no source of either node could be read"
    return CheckRun(open=engine.open_findings, cleared=cleared, ticks=count,
                    span_s=last.wall - first.wall, nodes=nodes, unknown=unknown)


def check_main(args: argparse.Namespace, base: dict[str, Any] | None = None) -> int:
    from replmon.output.nagios import render_json, render_text

    if args.replay:
        run = check_replay(args)
    else:
        config = config_from_args(args, base=base)
        run = asyncio.run(run_check(config, duration=args.duration))
    if args.format == "json":
        print(render_json(run))
    else:
        sys.stdout.write(render_text(run, color=sys.stdout.isatty()))
    return int(run.status)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    verbose = getattr(args, "verbose", False) or args.command == "record"
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr,
    )
    try:
        if args.command == "check":
            try:
                if args.lab:
                    with lab_config() as nodes:
                        return check_main(args, base=nodes)
                return check_main(args)
            except (ConfigError, LabError) as e:
                print(f"REPLMON UNKNOWN - {e}")
                return 3
            except Exception as e:  # monitoring-plugin contract: anything unexpected is UNKNOWN
                logging.getLogger("replmon").exception("check failed")
                print(f"REPLMON UNKNOWN - {type(e).__name__}: {e}")
                return 3
        if args.command is None:
            return monitor_main(args, parser)
        if args.command == "record":
            if args.lab:
                with lab_config() as nodes:
                    return asyncio.run(run_record(config_from_args(args, base=nodes), args))
            return asyncio.run(run_record(config_from_args(args), args))
        if args.command == "replay":
            return replay_main(args)
        if args.command == "report":
            return report_main(args)
        if args.command == "sample":
            if args.lab:
                with lab_config() as nodes:
                    config = config_from_args(args, base=nodes)
                    asyncio.run(run_sample(config, count=args.count, as_json=args.json))
            else:
                config = config_from_args(args)
                asyncio.run(run_sample(config, count=args.count, as_json=args.json))
    except (ConfigError, LabError, SessionError) as e:
        print(f"replmon: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0
