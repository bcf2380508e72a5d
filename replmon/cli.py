"""Command line. Parses arguments, builds a Config, and hands it to one
builder (factory.build_collector); no sampling logic lives here."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from replmon import __version__
from replmon.config import Config, build_config, load_toml, merge, parse_endpoint_spec
from replmon.errors import ConfigError, LabError
from replmon.output.nagios import CheckRun

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
    c.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    return p


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


async def run_tui(config: Config) -> None:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.tui.app import ReplmonApp
    from replmon.tui.feeds import live

    engine = build_engine(config.checks)
    async with build_collector(config) as collector:
        await ReplmonApp(live(collector), engine).run_async()


async def run_plain(config: Config, *, count: int | None = None) -> None:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.output.plain import PlainWriter, finding_row

    engine = build_engine(config.checks)
    writer = PlainWriter(sys.stdout)
    async with build_collector(config) as collector:
        async for tick in collector.ticks(count):
            upd = engine.feed(tick)
            writer.write(tick)
            for f in upd.opened:
                sys.stdout.write(finding_row(tick, f, "open") + "\n")
            for f in upd.closed:
                sys.stdout.write(finding_row(tick, f, "closed") + "\n")
            sys.stdout.flush()


def monitor_main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not (args.primary or args.config or args.lab):
        parser.print_help()
        return 2
    run = run_plain if args.plain else run_tui
    if args.lab:
        with lab_config() as nodes:
            asyncio.run(run(config_from_args(args, base=nodes)))
    else:
        asyncio.run(run(config_from_args(args)))
    return 0


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
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
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
        if args.command == "sample":
            if args.lab:
                with lab_config() as nodes:
                    config = config_from_args(args, base=nodes)
                    asyncio.run(run_sample(config, count=args.count, as_json=args.json))
            else:
                config = config_from_args(args)
                asyncio.run(run_sample(config, count=args.count, as_json=args.json))
    except (ConfigError, LabError) as e:
        print(f"replmon: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0
