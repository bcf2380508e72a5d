"""What each command runs: a Config → a pipeline (``replmon.pipeline``) with its readers.

    monitor   live collector → engine → screen poster (+ recorder)
    --plain   live collector → engine → PlainReader (+ recorder)
    record    live collector → engine → recorder + FindingLog, until SIGTERM/SIGINT
    sample    live collector → (no engine) → PlainReader or JsonLinesReader
    check     live collector → engine → CheckSummary, for --duration
    replay / report / check --replay read a recording (session/)

Argument parsing lives in cli.py; building sources from a Config in factory.py; the lab
that a --lab run watches, and its fault demo, in lab/demo.py.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from replmon.config import Config
from replmon.errors import ConfigError, SessionError
from replmon.pipeline import BaseReader, Pipeline, Reader
from replmon.units import fmt_bytes
from replmon.wording import plural

if TYPE_CHECKING:
    from replmon.collector import Collector
    from replmon.engine import Update
    from replmon.model.tick import Tick
    from replmon.output.nagios import CheckRun

log = logging.getLogger("replmon")
NOT_A_TIME = "not a time of the recording (03:12:00, +90s or #1234)"


@contextlib.asynccontextmanager
async def maybe_recorder(config: Config, path: str | None, collector: Collector | None = None,
                         **rotation: Any) -> AsyncIterator[list[Reader]]:
    """[a started Recorder for ``path``] (and, with the live ``collector``, a reader that
    has it capture the processlists when a finding opens, so the recording shows what
    ran then), or [] for no recording."""
    if path is None:
        yield []
        return
    from replmon.session.format import meta_for
    from replmon.session.recorder import Recorder

    async with Recorder(path, meta_for(config), **rotation) as rec:
        log.info("recording to %s", path)
        yield [rec] if collector is None else [CaptureOnOpen(collector), rec]
    log.info("recording closed: %s, %d dropped, writer CPU %.2f s (%.3f ms/tick)",
             plural(rec.ticks_written, "tick"), rec.dropped, rec.cpu_s,
             1000 * rec.cpu_s / max(1, rec.ticks_written))


class CaptureOnOpen(BaseReader):
    """Inline reader: when a finding opens, both nodes read their processlist in the next
    tick (one query each), which the recorder then stores with that tick."""

    inline = True

    def __init__(self, collector: Collector) -> None:
        self.collector = collector

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        if update is not None and update.opened:
            self.collector.capture_processlist()


async def run_tui(config: Config, record: str | None = None) -> None:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.malloc import ONE_PAIR, limit_arenas
    from replmon.tui.app import ReplmonApp
    from replmon.tui.feeds import live

    engine = build_engine(config.checks, live=True)
    limit_arenas(ONE_PAIR)  # before the collector's threads (replmon/malloc.py)
    # a --lab run's demo (cli imported it) says what it does on the screen; else no lab
    announce = getattr(sys.modules.get("replmon.lab.demo"), "ANNOUNCE", None)
    async with build_collector(config) as collector, \
            maybe_recorder(config, record, collector) as extra:
        app = ReplmonApp(live(collector), engine, readers=extra,
                         want_processlist=collector.want_processlist)

        def toast(text: str) -> None:  # under the findings, covering none of them
            app.call_from_thread(app.say, text)

        if announce is not None:
            announce.append(toast)
        try:
            await app.run_async()
        finally:
            if announce is not None:
                announce.remove(toast)


async def run_plain(config: Config, *, count: int | None = None,
                    record: str | None = None) -> None:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.gcpace import Paced
    from replmon.malloc import ONE_PAIR, limit_arenas
    from replmon.output.plain import PlainReader

    limit_arenas(ONE_PAIR)  # before the collector's threads (replmon/malloc.py)
    async with build_collector(config) as collector, \
            maybe_recorder(config, record, collector) as extra:
        await Pipeline(collector.ticks(count), build_engine(config.checks, live=True),
                       [*extra, PlainReader(sys.stdout), Paced()]).run()


async def run_record(config: Config, output: str, *, count: int | None,
                     rotation: dict[str, Any]) -> int:
    """Headless recording until SIGTERM/SIGINT or ``count`` ticks; systemd-friendly."""
    import asyncio
    import signal

    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.gcpace import Paced
    from replmon.malloc import ONE_PAIR, limit_arenas
    from replmon.output.plain import FindingLog

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    limit_arenas(ONE_PAIR)  # before the collector's threads (replmon/malloc.py)
    async with build_collector(config) as collector, \
            maybe_recorder(config, output, collector, **rotation) as rec:
        pipe = Pipeline(collector.ticks(count), build_engine(config.checks, live=True),
                        [*rec, FindingLog(), Paced()])  # full collections paced (#56)
        n = await pipe.run(stop=stop)
        log.info("stopping after %s", plural(n, "tick"))
    return 1 if pipe.failed else 0


async def run_sample(config: Config, *, count: int | None, as_json: bool) -> None:
    from replmon.factory import build_collector
    from replmon.output.plain import JsonLinesReader, PlainReader

    reader = JsonLinesReader(sys.stdout) if as_json else PlainReader(sys.stdout)
    async with build_collector(config) as collector:
        await Pipeline(collector.ticks(count), None, [reader]).run()


async def run_check(config: Config, *, duration: float) -> CheckRun:
    from replmon.engine import build_engine
    from replmon.factory import build_collector
    from replmon.model.incidents import causality
    from replmon.output.nagios import CheckSummary

    count = max(2, round(duration / config.interval) + 1)

    engine = build_engine(config.checks)
    summary = CheckSummary(causality(engine.checks))
    need = engine.ticks_to_open(config.interval)  # whatever --duration says
    if need > count:
        log.info("checking for %.1f s, not %.1f s: the checks' holds need %d ticks",
                 (need - 1) * config.interval, duration, need)
        count = need
    async with build_collector(config) as collector:
        n = await Pipeline(collector.ticks(count), engine, [summary]).run()
    return summary.result(ticks=n, limits=engine.limits)


def print_check(run: CheckRun, fmt: str) -> int:
    """The plugin output on stdout; returns the plugin exit code."""
    from replmon.output.nagios import render_json, render_text
    from replmon.output.term import color_ok

    if fmt == "json":
        print(render_json(run))
    else:
        sys.stdout.write(render_text(run, color=color_ok(sys.stdout),
                                     table=sys.stdout.isatty()))
    return int(run.status)


def check_replay(path: str, config: str | None = None, pair: str | None = None) -> CheckRun:
    """``check --replay``: today's checks over a recording (on every core for a long one),
    with the recorded thresholds or, with ``config`` (and a fleet file's ``pair``), the
    ``[checks.*]`` that file gives the pair over them (replmon.settings.replay_checks;
    only the checks whose thresholds differ are observed again)."""
    from replmon.model.findings import Finding
    from replmon.model.incidents import IncidentTracker, causality
    from replmon.model.lag import MeasuredLag
    from replmon.output.nagios import CheckRun
    from replmon.output.perfdata import pair_perf
    from replmon.pair import LAG_WINDOW_S
    from replmon.session.cut import in_window
    from replmon.session.recording import open_recording
    from replmon.session.rerun import Rerun
    from replmon.settings import replay_checks

    with open_recording(path) as rec:
        run = Rerun(rec, replay_checks(rec.meta.checks, config, pair))
        tracker = IncidentTracker(causality(run.engine.checks))
        cleared: list[Finding] = []
        first = last = None
        # a cut's warm-up ticks (before its window) count for the checks, not the result
        window_from = rec.meta.window[0] if rec.meta.window else -math.inf
        # the ticks where findings may change (a long outage's steady ticks applied once),
        # the first of the window's and the last among them: what is read of them below
        for _, upd in run.changes(None if rec.meta.window is None else window_from):
            tracker.update(upd.wall, upd.open)
            if upd.wall < window_from:
                continue
            first = first or upd
            last = upd
            cleared.extend(f for f in upd.closed if f.since_wall >= window_from)
        perf: list[Any] = []
        if len(rec):  # the last pair_lag window's ticks: the measured lag at the end
            i0 = rec.seek(rec.tick_at(len(rec) - 1).wall - LAG_WINDOW_S)
            perf = pair_perf([rec.tick_at(i) for i in range(i0, len(rec))],
                             run.engine.limits)
        last_tick = rec.tick_at(len(rec) - 1) if len(rec) else None
        last_lag = last_tick.lag if last_tick is not None else None
        if last_lag is None and (lacks := rec.lacks()):  # why the measured lag reads U
            last_lag = MeasuredLag(detail=lacks)
        problems = list(rec.problems)
        nodes = rec.node_names()
    say_problems(problems)
    if first is None or last is None:
        return CheckRun(open=[], cleared=[], ticks=0, span_s=0.0, nodes={},
                        unknown=f"{path}: no tick could be read")
    return CheckRun(open=run.engine.open_findings, cleared=cleared,
                    ticks=last.seq - first.seq + 1, span_s=last.wall - first.wall, nodes=nodes,
                    perf=perf, incidents=in_window(rec.meta, tracker.incidents), lag=last_lag,
                    lag_wall=last_tick.wall if last_tick is not None else None)


def replay(path: str, *, play: bool, at: str | None = None) -> int:
    from replmon.engine import build_engine
    from replmon.output.term import screen_ok
    from replmon.session.cursor import index_at, position
    from replmon.session.recording import open_recording
    from replmon.session.rerun import PARALLEL_MIN_TICKS, rerun_file, start_workers_early

    rec = open_recording(path)
    say_problems(rec.problems)
    if not len(rec):
        print(f"replmon: {path}: no tick could be read", file=sys.stderr)
        return 1
    # a cut opens at its stretch (its warm-up is there to step back into)
    start = index_at(rec, rec.meta.window[0]) if rec.meta.window else 0
    if at is not None:
        target = position(rec, at)
        if target is None:
            print(f"replmon: --at {at!r}: {NOT_A_TIME}", file=sys.stderr)
            return 2
        start = target
    drawable, why = screen_ok(sys.stdout)
    if not drawable:  # `replmon replay FILE | less`: the recording as text rows
        import asyncio

        from replmon.output.plain import PlainReader
        from replmon.pipeline import from_ticks

        print(f"replmon: {why}: writing the recording as text rows", file=sys.stderr)
        with rec:
            asyncio.run(Pipeline(from_ticks(rec.ticks()), build_engine(rec.meta.checks),
                                 [PlainReader(sys.stdout, inline=True)]).run())
        return 0
    if len(rec) >= PARALLEL_MIN_TICKS:  # n / N re-run the file in worker processes
        start_workers_early()
    from replmon.tui.replay import ReplayApp  # (Textual: only now, half a second)

    ReplayApp(rec, lambda: build_engine(rec.meta.checks), play=play, start=start,
              rerun=lambda stop: rerun_file(rec.path, should_stop=stop)).run()
    return 0


@contextlib.contextmanager
def _output(out: str | None) -> Iterator[TextIO]:
    """stdout, or the file ``out`` (written whole: a failed report leaves no half page
    behind under that name)."""
    if out is None:
        yield sys.stdout
        return
    buf = io.StringIO()
    yield buf
    try:
        Path(out).write_text(buf.getvalue(), encoding="utf-8")
    except OSError as e:  # one line in plain words: no such directory /no/dir
        from replmon.configfile import shown, write_problem

        raise SessionError(f"{shown(out)}: {write_problem(out, e)}") from None
    print(f"replmon: wrote {out} ({fmt_bytes(len(buf.getvalue().encode()))})",
          file=sys.stderr)


def report(path: str, *, fmt: str, csv: str | None, out: str | None = None) -> int:
    """``fmt``: text, json or html; ``out``: a file to write instead of stdout."""
    import json

    from replmon.output.report import export_csv, render_text
    from replmon.output.report import report as build_report
    from replmon.session.recording import open_recording

    with open_recording(path) as rec, _output(out) as dest:
        if csv:
            paths = [p.strip() for p in csv.split(",") if p.strip()]
            export_csv(rec.ticks(), paths, dest)
        elif fmt == "html":
            from replmon.output.html_report import html_report

            dest.write(html_report(rec))
        elif fmt == "json":
            dest.write(json.dumps(build_report(rec), indent=2) + "\n")
        else:
            dest.write(render_text(build_report(rec)))
        say_problems(rec.problems)
        if not len(rec):
            print(f"replmon: {path}: no tick could be read", file=sys.stderr)
            return 1
    return 0


def cut(path: str, *, start: str | None, end: str | None, incident: int | None,
        margin_s: float, output: str | None) -> int:
    """``replmon cut``: a stretch (or incident N) of a recording into a new recording.
    Exit 2 when FILE is not a readable recording, the times are unreadable or OUT
    exists; 1 when no tick of the stretch is intact; 0 once written (damage on stderr)."""
    from pathlib import Path

    from replmon.errors import SessionError
    from replmon.session.cursor import position
    from replmon.session.cut import cut as make_cut
    from replmon.session.cut import find_incident, incident_span
    from replmon.session.recording import open_recording

    if incident is not None and (start or end):
        print("replmon: cut: --incident or --from/--to, not both", file=sys.stderr)
        return 2
    src = Path(path)
    out = output or f"{src.stem}.{'cut' if incident is None else f'incident-{incident}'}" \
        f"{src.suffix or '.rmrec'}"
    with open_recording(path) as rec:
        if not len(rec):
            say_problems(rec.problems)
            print(f"replmon: {path}: no tick could be read", file=sys.stderr)
            return 1
        if incident is not None:
            first, last = incident_span(rec, find_incident(rec, incident), margin_s)
        else:
            ends = {"--from": position(rec, start or "#1"),
                    "--to": position(rec, end or f"#{len(rec)}", last=True)}
            for opt, at in ends.items():
                if at is None:
                    print(f"replmon: {opt} {start if opt == '--from' else end!r}: "
                          f"{NOT_A_TIME}", file=sys.stderr)
                    return 2
            first, last = ends["--from"] or 0, ends["--to"] or 0
            if last < first:
                print(f"replmon: cut: --to is before --from (ticks #{first + 1} and #{last + 1})",
                      file=sys.stderr)
                return 2
        try:
            done = make_cut(rec, first, last, out)
        except SessionError as e:
            if "nothing to cut" not in str(e):
                raise
            say_problems(rec.problems)
            print(f"replmon: {e}", file=sys.stderr)
            return 1
        say_problems(rec.problems)
    print(cut_summary(done))
    return 0


def cut_summary(done: Any) -> str:
    """What a cut wrote, in one line for the terminal."""
    from replmon.units import tick_stamp

    lost = f"; {plural(done.lost, 'tick')} of it lost in the input (above)" if done.lost else ""
    kept = (f"; the live engine's observations kept for {plural(done.observations, 'chunk')}"
            if done.observations else "")
    lo, hi = done.window
    return (f"{done.path}: {plural(done.ticks, 'tick')}: {lo - done.first_wall:.0f} s of "
            f"warm-up, then the stretch {tick_stamp(lo)} .. {tick_stamp(hi)} "
            f"({hi - lo:.0f} s){lost}{kept}")


def say_problems(problems: list[str]) -> None:
    """A recording's damage on stderr, one line each (each names its file)."""
    for problem in problems:
        print(f"replmon: {problem}", file=sys.stderr)


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


def serve(path: str, *, listen: str | None, interval: float | None, plain: bool,
          shard: str | None = None) -> int:
    """``replmon serve``: the fleet file's pairs (those of ``shard`` "K/N") until
    SIGTERM/SIGINT."""
    import asyncio

    from replmon.fleet.serve import run_serve
    from replmon.fleet.shard import parse_shard
    from replmon.settings import load_fleet

    fleet = load_fleet(path, interval=interval, listen=listen)
    if shard is not None:
        try:
            part = parse_shard(shard)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        mine = tuple(p for p in fleet.pairs if part.owns(p.name))
        log.info("fleet %s: shard %s serves %s of %d", path, part,
                 plural(len(mine), "pair"), len(fleet.pairs))
        fleet = fleet.model_copy(update={"pairs": mine})
    log.info("fleet %s: %s", path, plural(len(fleet.pairs), "pair"))
    open_to_all = unguarded(fleet.listen, fleet.basic_auth is not None, path)
    if open_to_all:  # said once, at start, on stderr (serve's log) as well as in --help
        log.warning("%s", open_to_all)
    return asyncio.run(run_serve(fleet, plain=plain))


def unguarded(listen: str, auth: bool, path: str) -> str | None:
    """What to say when serve's pages are readable by anyone who reaches ``listen``: an
    address beyond loopback and no basic_auth in the fleet file ``path``; else None."""
    import ipaddress

    from replmon.fleet.config import parse_listen

    if auth:
        return None
    host = parse_listen(listen)[0]
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:  # a name: localhost is this machine, another may be any
        if host.lower() in ("localhost", "ip6-localhost"):
            return None
    return (f"serving {listen} without a password: anyone who reaches it reads /metrics "
            "and /findings.json (each finding's title, numbers and cause). Add basic_auth = "
            '{ username = "prometheus", password_env = "REPLMON_HTTP_PASSWORD" } (and tls = '
            f'{{ certfile = ..., keyfile = ... }}) to {path}, or a firewall in front of it '
            '(docs/prometheus.md "Access")')


def rules(path: str | None, *, alertmanager: bool = False) -> int:
    """``replmon rules [--config FLEET]``: the alert rules, with the fleet file (validated
    as serve reads it) in each pair alert's ``screen`` annotation; ``--alertmanager``:
    Alertmanager's inhibit rule for incidents instead."""
    from replmon.fleet.rules import INHIBIT
    from replmon.fleet.rules import rules as make_rules
    from replmon.settings import load_fleet

    if alertmanager:
        sys.stdout.write(INHIBIT)
        return 0

    if path is not None:
        load_fleet(path)
    try:
        text = make_rules(path)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    sys.stdout.write(text)
    return 0

