"""The command line's grammar: every option and subcommand of ``replmon``, and no
behaviour (cli.py runs what is parsed; the help's epilogs are cli_help.py).

Every connection option is defined once (``_connection_options``) and accepted before or
after the subcommand: ``replmon --primary db163 --replica db162 check`` and
``replmon check --primary db163 --replica db162`` are the same run.
"""

from __future__ import annotations

import argparse
from typing import Any

from replmon import __version__
from replmon.cli_help import (
    CHECK_EXAMPLES,
    CUT_EXAMPLES,
    EXAMPLES,
    RECORD_EXAMPLES,
    SERVE_EXAMPLES,
)
from replmon.cli_parser import Commands, Parser, note_where_options_belong
from replmon.errors import ConfigError
from replmon.lab.servers import DEFAULT_MYSQL, DEFAULT_REDIS, MYSQL_SERVERS, REDIS_SERVERS
from replmon.units import parse_duration_text, parse_size_text

CUT_MARGIN_S = 60.0
"""``replmon cut --incident``: seconds kept before the incident and after it closed."""
DEFAULTS: dict[str, Any] = {
    "config": None, "pair": None, "primary": None, "replica": None, "no_drbd": False,
    "no_host": False,
    "drbd_proc": None, "interval": None, "timeout": None, "lab": False, "verbose": False,
    "scenario": None, "lab_mysql": None, "lab_redis": None, "lab_hosts": False,
    "heartbeat_table": None,
    "ask_pass": False, "ask_redis_pass": False, "sentinel": None, "together": None,
    **{f"{role}_{kind}": None for role in ("primary", "replica")
       for kind in ("mysql", "redis", "ssh", "name")},
}


FILES = {"bash": "_shtab_compgen_files", "zsh": "_files"}
"""shtab's completion of a file name (shtab.FILE), without importing shtab to parse."""


def parse_duration(text: str) -> float:
    try:
        return parse_duration_text(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_size(text: str) -> int:
    try:
        return parse_size_text(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _connection_options() -> Parser:
    """The options shared by the top level and sample/check/record, defined once. Their
    defaults are SUPPRESS, so an option given after the subcommand overrides the same
    option given before it and an absent one leaves the top level's value."""
    s = Parser(add_help=False, argument_default=argparse.SUPPRESS)
    g = s.add_argument_group("connection (before or after the command)")
    g.add_argument("--config", metavar="FILE", help="TOML config file (see README): a pair's, "
                   "or a fleet file's with --pair")
    g.add_argument("--pair", metavar="NAME",
                   help="with --config FLEET.toml (replmon serve's file): watch this pair of "
                        "the fleet (its nodes and checks, on the file's [defaults])")
    g.add_argument("--primary", metavar="HOST", help="primary node (name or address)")
    g.add_argument("--replica", metavar="HOST", help="replica node (name or address)")
    for role in ("primary", "replica"):
        g.add_argument(f"--{role}-name", metavar="LABEL",
                       help=f"{role}'s name on the screen and in findings (default: its "
                            "host; two nodes on one host are told apart by their ports)")
        g.add_argument(f"--{role}-mysql", metavar="ENDPOINT", help=f"{role}'s MySQL endpoint")
        g.add_argument(f"--{role}-redis", metavar="ENDPOINT", help=f"{role}'s Redis endpoint")
        g.add_argument(f"--{role}-ssh", metavar="DEST",
                       help=f"how {role}'s host/DRBD metrics are read: off, local or "
                       "[USER@]HOST[:PORT] (default: local for this machine, else ssh)")
    g.add_argument("--sentinel", metavar="HOST:PORT[/NAME]",
                   help="a Redis Sentinel watching the pair's master: show its view (flags, "
                        "quorum, epoch) and failover events (port 26379 by default; NAME: "
                        "the master's name there, found by address when left out)")
    g.add_argument("--together", metavar="SERVICES", action="append",
                   help="services that fail over together, e.g. mysql,drbd (repeat for "
                        "another group; the others each move alone). Default: all of "
                        "them, but Redis alone with --sentinel")
    g.add_argument("--no-drbd", action="store_true", help="do not read DRBD state")
    g.add_argument("--no-host", action="store_true", help="do not read host metrics")
    g.add_argument("--drbd-proc", metavar="PATH", help="path of /proc/drbd (default /proc/drbd)")
    g.add_argument("--interval", type=parse_duration, metavar="TIME",
                   help="time between ticks: 1s (default), 500ms, 5s. The checks' windows "
                        "and holds are seconds, tuned at 1s and meaning the same from 0.2s "
                        "to 5s (docs/checks.md); a condition shorter than two ticks can "
                        "be missed")
    g.add_argument("--heartbeat-table", metavar="DB.TABLE",
                   help="pt-heartbeat's table (e.g. percona.heartbeat): read on the replica "
                        "every tick for its true lag, never written")
    g.add_argument("--timeout", type=parse_duration, metavar="TIME",
                   help="per-source timeout (default 0.8 x interval)")
    g.add_argument("--lab", action="store_true",
                   help="start a throwaway MariaDB + Redis pair with a write load and watch it")
    g.add_argument("--lab-mysql", metavar="SERVER", choices=list(MYSQL_SERVERS),
                   help=f"with --lab: the MySQL server to run ({', '.join(MYSQL_SERVERS)}; "
                   f"default {DEFAULT_MYSQL}); one this machine lacks is installed from "
                   "Debian's newer suites into a chroot on first use (root only)")
    g.add_argument("--lab-redis", metavar="SERVER", choices=list(REDIS_SERVERS),
                   help=f"with --lab: the Redis server to run ({', '.join(REDIS_SERVERS)}; "
                   f"default {DEFAULT_REDIS})")
    g.add_argument("--lab-hosts", action="store_true",
                   help="with --lab: the two-host lab (root only): each node a network "
                        "namespace with its own name and addresses, a monitoring link from "
                        "here and a replication link between them; host metrics over ssh")
    g.add_argument("--scenario", metavar="NAME",
                   help="with --lab: inject this fault after 20 s and undo it 60 s later, "
                        "to watch a finding open and close on live servers ('list' shows "
                        "the names)")
    g.add_argument("--ask-pass", action="store_true",
                   help="prompt (no echo) for the MySQL password of both nodes")
    g.add_argument("--ask-redis-pass", action="store_true",
                   help="prompt (no echo) for the Redis password of both nodes")
    g.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    return s


def build_parser() -> argparse.ArgumentParser:
    # one definition, built anew for each parser: parents share their action objects, and
    # the top level's set_defaults below must not give the subcommands' copies defaults
    p = Parser(
        prog="replmon", parents=[_connection_options()], epilog=EXAMPLES,
        description="Monitor a replicated primary/replica database pair: host, DRBD, "
        "MySQL/MariaDB and Redis, side by side.")
    p.set_defaults(**DEFAULTS)
    p.add_argument("--version", action="version", version=f"replmon {__version__}")
    p.add_argument("--plain", action="store_true",
                   help="no TUI: one text row per node per tick, findings as they open/close")
    p.add_argument("--record", metavar="FILE",
                   help="also record the session to FILE (replay it with: replmon replay FILE)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", action=Commands,
                           help="what to run; none: the live screen (or --plain rows)")
    s = sub.add_parser(
        "sample", parents=[_connection_options()], help="print ticks as text rows or JSON lines",
        description="Sample both nodes every interval and print one row per node per tick "
        "(or one JSON object per tick with --json).", epilog=EXAMPLES)
    s.add_argument("--count", type=int, default=None, metavar="N", help="stop after N ticks")
    s.add_argument("--json", action="store_true", help="one JSON object per tick (JSON lines)")
    c = sub.add_parser(
        "check", parents=[_connection_options()], plugin=True,  # bad arguments: UNKNOWN
        help="sample for a while, print findings, exit 0/1/2/3 (Nagios/Icinga)",
        description="Sample both nodes for --duration, run every check, print the findings "
        "and exit with the monitoring-plugin code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. "
        "The first line is the plugin status line.", epilog=CHECK_EXAMPLES)
    c.add_argument("--duration", type=parse_duration, default=10.0, metavar="TIME",
                   help="how long to sample: 10s (default), 2m, 30; at least the checks' "
                        "longest hold (open_after, 3 s) past the first tick")
    c.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default): the plugin status line with perfdata, then the "
                        "findings; json: one JSON object (status, exit code, status line, "
                        "open and cleared findings) for scripts")
    c.add_argument("--replay", metavar="FILE",
                   help="judge a recording instead of live servers (findings open at its end); "
                        "with --config, by that file's [checks.*] thresholds over the "
                        "recorded ones")
    r = sub.add_parser(
        "record", parents=[_connection_options()],
        help="record a session headless (for a daemon / systemd)",
        description="Sample both nodes and write every tick and finding to FILE until "
        "SIGTERM/SIGINT (or --count). Logs go to stderr. With --max-bytes/--max-age the "
        "recording rotates into numbered parts (FILE.0001.rmrec, ...).",
        epilog=RECORD_EXAMPLES)
    r.add_argument("-o", "--output", required=True, metavar="FILE", help="recording file")
    r.add_argument("--count", type=int, default=None, metavar="N", help="stop after N ticks")
    r.add_argument("--max-bytes", type=parse_size, metavar="SIZE",
                   help="rotate when a part reaches SIZE (100M, 1G)")
    r.add_argument("--max-age", type=parse_duration, metavar="TIME",
                   help="rotate when a part spans TIME (1h, 1d)")
    r.add_argument("--keep", type=int, metavar="N", help="delete all but the newest N parts")
    rp = sub.add_parser(
        "replay", help="the live screen on a recording",
        description="Replay a recording on the live screen. The checks re-run with this "
        "version's code; the findings seen at capture are marked (rec).\n\n"
        "keys: space play/pause, left/right step, +/- speed (x1..x64), g go to a time, "
        "n/N next/previous finding, enter a finding's details, d drift, G graphs, w who, "
        "? help, q quit.")
    rp.add_argument("file", metavar="FILE",  # type: ignore[attr-defined]
                    help="the recording (written by record or --record)").complete = FILES
    rp.add_argument("--play", action="store_true",
                    help="start playing (by default it opens paused on the first tick; "
                         "space plays)")
    rp.add_argument("--at", metavar="WHEN",
                    help="open at this time of the recording: 03:12:00 (its clock), +90s "
                         "(after its start) or #1234 (a tick), as g takes it")
    rp.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    rep = sub.add_parser(
        "report", help="summarise a recording: span, versions, findings, peaks, gaps",
        description="What a recording holds: time span, hosts and server versions, the "
        "findings timeline (recorded and re-run), peaks of the key rates, gaps. "
        "--csv exports chosen metrics per tick for plotting; --html -o incident.html "
        "writes a page to share (charts of each incident, no network needed to open it).")
    rep.add_argument("file", metavar="FILE",  # type: ignore[attr-defined]
                     help="the recording (written by record or --record)").complete = FILES
    rep.add_argument("--format", choices=("text", "json"), default="text",
                     help="text (default): for a terminal; json: the same report as one "
                          "JSON object")
    rep.add_argument("--csv", metavar="PATHS",
                     help="comma-separated metrics, e.g. primary.rates.mysql.qps,"
                     "replica.mysql.replication.0.seconds_behind; writes CSV to stdout")
    rep.add_argument("--html", action="store_true",
                     help="one self-contained HTML page (opens offline in any browser): the "
                          "pair, each incident with its cause, next step and charts, the "
                          "settings that differ; written to -o, or to stdout")
    rep.add_argument("-o", "--output", metavar="OUT",
                     help="write the report (text, JSON, --csv or --html) to this file instead of "
                          "stdout")
    rep.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    ct = sub.add_parser(
        "cut", help="cut a stretch (or one incident) out of a recording into a new one",
        description="Write a stretch of a recording to a new recording that anyone with "
        "replmon can replay, report or re-check: the stretch asked for, after the checks' "
        "warm-up (their longest window, 300 s, of the ticks before it), so that check "
        "--replay of the cut finds the same incidents inside the stretch as in the whole "
        "file. Damage in FILE: the intact ticks are cut, what was lost is said on stderr.",
        epilog=CUT_EXAMPLES)
    ct.add_argument("file", metavar="FILE",  # type: ignore[attr-defined]
                    help="the recording (written by record or --record)").complete = FILES
    ct.add_argument("--from", dest="start", metavar="WHEN",
                    help="first tick of the stretch: 03:12:00 (its clock), +90s (after its "
                         "start) or #1234 (a tick), as replay --at takes it; default: the start")
    ct.add_argument("--to", dest="end", metavar="WHEN",
                    help="last tick of the stretch, the same forms (+90s: after the "
                         "recording's start); default: the end")
    ct.add_argument("--incident", type=int, metavar="N",
                    help="the stretch of incident N (its number in report and check "
                         "--replay --format json), from MARGIN before its first finding to "
                         "MARGIN after it closed")
    ct.add_argument("--margin", type=parse_duration, default=CUT_MARGIN_S, metavar="TIME",
                    help=f"with --incident: time kept before it and after it (default "
                         f"{CUT_MARGIN_S:.0f}s: what led to it, and that it stayed closed)")
    ct.add_argument("-o", "--output", metavar="OUT",
                    help="the new recording (never overwritten); default: FILE's name with "
                         ".cut (or .incident-N) before .rmrec, in this directory")
    ct.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sv = sub.add_parser(
        "serve", help="watch many pairs; /metrics for Prometheus, /findings.json",
        instead="serve sets its pairs in the fleet file: docs/prometheus.md",
        description="Watch every pair of a fleet file (one collector and engine per pair) "
        "and serve /metrics (Prometheus), /findings.json and /healthz. Runs until "
        "SIGTERM/SIGINT. Interval 5s unless the file or --interval says otherwise.",
        epilog=SERVE_EXAMPLES)
    sv.add_argument("--config", required=True, metavar="FILE",
                    help="fleet file: [[pair]] tables on shared [defaults] (docs/prometheus.md)")
    sv.add_argument("--listen", metavar="HOST:PORT",
                    help="address to serve on (default 127.0.0.1:9465, or the file's listen)")
    sv.add_argument("--interval", type=parse_duration, metavar="TIME",
                    help="time between ticks for every pair (default 5s)")
    sv.add_argument("--plain", action="store_true",
                    help="also print one line per pair per tick (pair, worst severity, findings)")
    sv.add_argument("--shard", metavar="K/N",
                    help="serve only shard K of N: the same fleet file on N processes or "
                         "hosts, each pair on exactly one (by a stable hash of its name; "
                         "docs/prometheus.md)")
    sv.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    rl = sub.add_parser(
        "rules", help="print the Prometheus alert rules for replmon serve",
        description="Print the alert rules (YAML) for a Prometheus scraping replmon serve: "
        "one alert per finding severity, plus a pair that stopped reporting, an unreadable "
        "source and late ticks. Each alert of a pair carries the command that opens its "
        "screen (annotation `screen`). See docs/prometheus.md.")
    rl.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                    help="the fleet file serve runs: its path goes into the `screen` "
                         "annotation (replmon --config FILE --pair PAIR); without it, "
                         "FLEET.toml stands there")
    rl.add_argument("--alertmanager", action="store_true",
                    help="print Alertmanager's inhibit rule instead: a consequence's alert "
                         "stays quiet while its incident's root fires (alertmanager.yml)")
    comp = sub.add_parser(
        "completion", help="print the shell completion script (bash, zsh)",
        description="Print a completion script for replmon's commands and options.",
        epilog="install:\n  replmon completion bash > ~/.local/share/bash-completion/"
        "completions/replmon\n  replmon completion zsh > ~/.zfunc/_replmon\n"
        "      with fpath+=(~/.zfunc) before compinit in ~/.zshrc")
    comp.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in")
    note_where_options_belong(p)
    return p
