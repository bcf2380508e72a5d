"""Command line: parses arguments (the grammar is cli_args.py), has them made into a
Config (``replmon.settings``, with the --config file's pair) and calls one command of
``replmon.commands`` (with --lab, on the lab that ``replmon.lab.demo``
starts); no sampling logic lives here. It also says which options go together
(--scenario and --lab-* need --lab) and turns errors into exit codes (a monitoring
plugin's for ``check``).

Each command imports what it uses when it runs (``replmon.commands`` after the arguments
are read, asyncio and the config's models for the live ones): ``--help`` reads no
config, ``serve`` imports no screen, the screen no Prometheus client
(tests/unit/test_import_budget.py; measured: docs/benchmarks.md#bench_memorypy-memory).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from replmon.cli_args import build_parser
from replmon.configfile import output_problem, shown
from replmon.errors import ConfigError, LabError, SessionError
from replmon.lab.servers import DEFAULT_MYSQL, DEFAULT_REDIS
from replmon.passwords import scrub_own_command_line


def __getattr__(name: str) -> Any:
    """``config_from_args``: its old home, kept (imported when asked: replmon.settings)."""
    if name == "config_from_args":
        from replmon.settings import config_from_args

        return config_from_args
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _live(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The commands that watch live servers: one place for --lab and the config."""
    import asyncio

    from replmon import commands as cmd
    from replmon.settings import pair_settings

    if args.command is None and not (args.primary or args.config or args.lab):
        parser.print_help()
        return 2
    if args.scenario == "list":
        _list_scenarios(args.lab_mysql or DEFAULT_MYSQL)
        return 0
    if args.scenario and not args.lab:
        print("replmon: --scenario needs --lab (it injects faults into the lab's servers "
              "only)", file=sys.stderr)
        return 2
    if (args.lab_mysql or args.lab_redis or args.lab_hosts) and not args.lab:
        print("replmon: --lab-mysql, --lab-redis and --lab-hosts choose the lab: they need "
              "--lab", file=sys.stderr)
        return 2
    recording = args.output if args.command == "record" else args.record
    wrong = output_problem(recording) if recording else None
    if wrong:  # the recording opens on the first tick: said now, before any server or lab
        raise ConfigError(f"{shown(recording)}: {wrong}")
    lab: contextlib.AbstractContextManager[dict[str, Any]] = contextlib.nullcontext({})
    if args.lab:  # a bad --scenario name: one line (LabError), before the screen or the lab
        from replmon.lab.demo import demo, lab_nodes

        lab = lab_nodes(demo(args.scenario) if args.scenario else None,
                        mysql=args.lab_mysql or DEFAULT_MYSQL,
                        redis=args.lab_redis or DEFAULT_REDIS, hosts=args.lab_hosts)
    # a bad --config file or option: one line (ConfigError) before any output, the screen
    # or the lab
    pair = pair_settings(args)
    config = None if args.lab else pair.config()
    if args.command is None and not args.plain:
        from replmon.output.term import screen_ok

        drawable, why = screen_ok(sys.stdout)
        if drawable:
            cmd.log_to_file()  # stderr belongs to the screen
        else:  # as dstat/vmstat do in a pipe: rows, not a screen drawn on stderr
            print(f"replmon: {why}: writing text rows (--plain)", file=sys.stderr)
            args.plain = True
    with lab as base:
        if config is None:  # the lab's nodes under the file's and the command line's keys
            config = pair.config(base)
        if args.command == "check":
            return cmd.print_check(asyncio.run(cmd.run_check(config, duration=args.duration)),
                                   args.format)
        if args.command == "record":
            rotation = {"max_bytes": args.max_bytes, "max_age_s": args.max_age, "keep": args.keep}
            return asyncio.run(cmd.run_record(config, args.output, count=args.count,
                                              rotation=rotation))
        if args.command == "sample":
            asyncio.run(cmd.run_sample(config, count=args.count, as_json=args.json))
        elif args.plain:
            asyncio.run(cmd.run_plain(config, record=args.record))
        else:
            asyncio.run(cmd.run_tui(config, record=args.record))
    return 0


def _list_scenarios(mysql: str) -> None:
    """``--scenario list``: each demo in the words of the server the lab would run
    (--lab-mysql: MariaDB's CHANGE MASTER TO, MySQL's CHANGE REPLICATION SOURCE TO),
    wrapped to a terminal under its name (one line each in a pipe, for scripts)."""
    import shutil
    import textwrap
    from types import SimpleNamespace

    from replmon.lab.demo import DEMOS
    from replmon.lab.servers import MYSQL_SERVERS

    lab = SimpleNamespace(is_mysql=MYSQL_SERVERS[mysql].product == "mysql")  # Lab.is_mysql
    width = max(shutil.get_terminal_size().columns - 1, 60) if sys.stdout.isatty() else 0
    for d in DEMOS:
        line = f"{d.name:20} {d.describe(lab)} ({d.check})"
        print(textwrap.fill(line, width, break_on_hyphens=False, subsequent_indent=" " * 21)
              if width else line)


def _unexpected(e: BaseException, verbose: bool) -> None:
    """An error no code path expected: its traceback in the log under -v only."""
    if verbose:
        logging.getLogger("replmon").error("unexpected error", exc_info=e)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # --help, --version and a wrong option end here
    if argv is None and args.command in (None, "record"):
        # a one-pair command that runs for hours: started once more, with glibc's thread
        # caches off (replmon/malloc.py)
        from replmon.malloc import reexec_without_tcache

        reexec_without_tcache()
    from replmon import commands as cmd
    if argv is None:  # this process's own command line: hide its passwords from ps
        scrub_own_command_line()
    logging.basicConfig(
        level=(logging.INFO if args.verbose or args.command in ("record", "serve")
               else logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        if args.command == "check":
            try:
                if args.replay:
                    return cmd.print_check(cmd.check_replay(args.replay, args.config, args.pair),
                                           args.format)
                return _live(args, parser)
            except (ConfigError, LabError, SessionError) as e:
                print(f"REPLMON UNKNOWN - {e}")
                return 3
            except Exception as e:  # monitoring-plugin contract: anything unexpected is UNKNOWN
                _unexpected(e, args.verbose)
                print(f"REPLMON UNKNOWN - {type(e).__name__}: {e}")
                return 3
        if args.command in ("replay", "report", "cut"):
            try:
                if args.command == "replay":
                    return cmd.replay(args.file, play=args.play, at=args.at)
                if args.command == "cut":
                    return cmd.cut(args.file, start=args.start, end=args.end,
                                   incident=args.incident, margin_s=args.margin,
                                   output=args.output)
                return cmd.report(args.file, fmt="html" if args.html else args.format,
                                  csv=args.csv, out=args.output)
            except (SessionError, KeyboardInterrupt, BrokenPipeError):
                raise
            except Exception as e:  # one line, not a traceback (that is for -v)
                _unexpected(e, args.verbose)
                print(f"replmon: {args.file}: cannot read it: {type(e).__name__}: {e}"
                      + ("" if args.verbose else " (-v shows where)"), file=sys.stderr)
                return 2
        if args.command == "serve":
            return cmd.serve(args.config, listen=args.listen, interval=args.interval,
                             plain=args.plain, shard=args.shard)
        if args.command == "rules":
            return cmd.rules(args.config, alertmanager=args.alertmanager)
        if args.command == "completion":
            import shtab

            print(shtab.complete(parser, shell=args.shell))
            return 0
        return _live(args, parser)
    except (ConfigError, LabError, SessionError) as e:
        print(f"replmon: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
