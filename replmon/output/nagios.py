"""Findings as a monitoring-plugin result: status line, exit code, text or JSON.

Exit codes follow the Nagios/Icinga plugin API: 0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN. The status is the worst severity among the findings open at the end
of the run (info findings do not raise it); findings that opened and cleared
during the run are listed, but do not set the status. The first text line is
the plugin status line, e.g.::

    REPLMON CRITICAL - replica db162: SQL thread stopped (errno 1062) (+1 warning) \
        | critical=1 warning=1 info=0   (one line)
"""

from __future__ import annotations

import io
import json
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from replmon.engine import Update
from replmon.model.findings import Finding, Severity
from replmon.model.incidents import Causality, Incident, IncidentTracker
from replmon.model.lag import MeasuredLag, lag_summary
from replmon.model.tick import Tick
from replmon.output.incidents import finding_json, incident_dict, incident_line
from replmon.output.perfdata import Perf, pair_perf
from replmon.output.roles import ServiceRoles, service_roles
from replmon.pair import LAG_WINDOW_S
from replmon.pipeline import BaseReader
from replmon.units import tick_clock
from replmon.wording import plural


class Status(IntEnum):
    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3


SEVERITY_STYLE = {Severity.CRITICAL: "bold red", Severity.WARNING: "yellow",
                  Severity.INFO: "cyan"}


@dataclass
class CheckRun:
    """The outcome of a ``replmon check`` run."""

    open: list[Finding]
    cleared: list[Finding]
    ticks: int
    span_s: float
    nodes: dict[str, str]
    """role -> node name."""
    unknown: str | None = None
    """Why the run could not judge the pair (status UNKNOWN), if it could not."""
    perf: list[Perf] = field(default_factory=list)
    """The last tick's figures per node (``replmon.output.perfdata``)."""
    incidents: list[Incident] = field(default_factory=list)
    """The run's findings grouped under their roots (replmon/model/incidents.py)."""
    lag: MeasuredLag | None = None
    """The replica's true lag at the last tick, with its source (``Tick.lag``)."""
    lag_wall: float | None = None
    """When that tick was sampled (epoch seconds): the moment ``lag`` is of."""
    roles: list[ServiceRoles] = field(default_factory=list)
    """Each service's primary at the last tick and how long it has held."""

    @property
    def open_incidents(self) -> list[Incident]:
        return sorted((i for i in self.incidents if i.open),
                      key=lambda i: (-i.severity, i.opened_wall, i.id))

    @property
    def status(self) -> Status:
        if self.unknown:
            return Status.UNKNOWN
        worst = max((f.severity for f in self.open), default=Severity.INFO)
        return {Severity.CRITICAL: Status.CRITICAL, Severity.WARNING: Status.WARNING}.get(
            worst, Status.OK)

    def counts(self) -> dict[str, int]:
        return {s.label: sum(f.severity is s for f in self.open)
                for s in (Severity.CRITICAL, Severity.WARNING, Severity.INFO)}


class CheckSummary(BaseReader):
    """The pipeline reader behind ``replmon check``: what a run saw, for ``CheckRun``."""

    name = "check-summary"
    inline = True

    def __init__(self, links: Causality | None = None) -> None:
        """``links``: the checks' declarations (output.incidents.causality(engine.checks))
        by which findings group into incidents; None: each finding its own."""
        self.incidents = IncidentTracker(links or {})
        self.cleared: list[Finding] = []
        self.first: Tick | None = None
        self.last: Tick | None = None
        self.last_update: Update | None = None
        self.ok_samples = 0
        """Source samples that were read (0 at the end: nothing could be read: UNKNOWN)."""
        self.recent: deque[Tick] = deque()
        """The ticks of the last ``LAG_WINDOW_S`` (pair_lag's window, 300 s): the
        perfdata's measured lag walks back over them, and a source unreadable in the last
        tick keeps the labels it had in them."""
        self._keep_s = LAG_WINDOW_S

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        self.first = self.first or tick
        self.last = tick
        recent = self.recent
        recent.append(tick)
        while recent[0].wall < tick.wall - self._keep_s:
            recent.popleft()
        self.ok_samples += sum(s.ok for n in tick.nodes for s in n.statuses().values())
        if update is not None:
            self.cleared.extend(update.closed)
            self.last_update = update
            self.incidents.update(tick.wall, update.open)

    def result(self, ticks: int, limits: Mapping[str, Any] | None = None) -> CheckRun:
        if self.first is None or self.last is None:
            return CheckRun(open=[], cleared=[], ticks=0, span_s=0.0, nodes={},
                            unknown="no tick was sampled")
        nodes = {"primary": self.last.primary.name, "replica": self.last.replica.name}
        unknown = None if self.ok_samples else "no source of either node could be read"
        return CheckRun(open=self.last_update.open if self.last_update else [],
                        cleared=self.cleared, ticks=ticks,
                        span_s=self.last.wall - self.first.wall, nodes=nodes, unknown=unknown,
                        perf=pair_perf(list(self.recent), limits), lag=self.last.lag,
                        lag_wall=self.last.wall, roles=service_roles(self.last),
                        incidents=list(self.incidents.incidents))


def where(f: Finding, nodes: dict[str, str]) -> str:
    return "pair" if f.node == "pair" else f.where(nodes)


def status_line(run: CheckRun) -> str:
    """The plugin's first line: status, summary, ``|`` perfdata. One line whatever its
    length (a newline in a title would cut the perfdata: replaced by a space)."""
    c = run.counts()
    flapping = sum(bool(f.flaps) for f in run.open)
    perf = " ".join([*(str(p) for p in run.perf), *(f"{k}={v}" for k, v in c.items()),
                     f"flapping={flapping}"])
    if run.unknown:
        summary = run.unknown
    elif run.open and run.status is not Status.OK:
        worst = run.open[0]  # the engine sorts worst first
        top = next((i for i in run.open_incidents if len(i.findings) > 1
                    and i.severity >= worst.severity), None)
        if top is not None:  # the root first, its consequences after it
            summary = incident_line(top, run.nodes)
            members = [f for f in run.open if any(
                (f.check, f.node, f.key) == m[:3] for m in top.findings)]
        else:
            summary = f"{where(worst, run.nodes)}: {worst.headline}"
            members = [worst]
        others = {k: n - sum(f.severity.label == k for f in members) for k, n in c.items()}
        more = [f"+{n} {k}" for k, n in others.items() if n > 0]
        if more:
            summary += f" ({', '.join(more)})"
    else:
        extra = f"; {c['info']} info" if c["info"] else ""
        summary = f"{plural(run.ticks, 'tick')} over {run.span_s:.0f} s, no problem found{extra}"
    if not run.unknown and (lag := lag_summary(run.lag)):
        summary += f"; {lag}"
    summary = " ".join(summary.replace("|", "/").split())  # '|' would start the perfdata
    return f"REPLMON {run.status.name} - {summary} | {perf}"


def _since(f: Finding, localtime: Callable[[float], time.struct_time]) -> str:
    return tick_clock(f.since_wall, localtime)  # as the screen and the report say it


CLEARED_SHOWN = 20
"""Cleared findings the text output lists (a day's replay can clear thousands)."""


def _sections(run: CheckRun) -> list[tuple[str, list[Finding]]]:
    cleared = run.cleared[-CLEARED_SHOWN:]
    out = []
    for title, findings in (("open", run.open), ("cleared during the run", cleared)):
        if not findings:
            continue
        if findings is cleared and len(run.cleared) > len(cleared):
            title += (f" (the last {len(cleared)} of {len(run.cleared)}; "
                      "--format json lists all)")
        out.append((title, findings))
    return out


def render_text(run: CheckRun, *, width: int = 100, color: bool = False, table: bool = True,
                localtime: Callable[[float], time.struct_time] = time.localtime) -> str:
    """Status line, then the findings: a table for a terminal (``table``), or plain
    lines an agent, a mail or a log keeps readable (no box drawing)."""
    head = status_line(run) + "\n" + _roles_lines(run) + _incident_lines(run)  # no Rich: no wrap
    if not table:
        return head + _plain_long_output(run, localtime)
    buf = io.StringIO()
    con = Console(file=buf, width=width, color_system="standard" if color else None,
                  highlight=False, soft_wrap=False)
    for title, findings in _sections(run):
        grid = Table(title=f"findings {title}", title_justify="left", expand=False,
                     show_lines=False, pad_edge=False)
        grid.add_column("sev", no_wrap=True)
        grid.add_column("since", no_wrap=True)
        grid.add_column("node", no_wrap=True)
        grid.add_column("check", no_wrap=True)
        grid.add_column("what")
        for f in findings:
            what = Text(f.headline)
            for line in _past(f):
                what.append(f"\n{line}")
            if f.cause:
                what.append(f"\ncause: {f.cause}", style="dim")
            if f.next_step:
                what.append(f"\nnext: {f.next_step}", style="dim")
            level = _level(f)
            grid.add_row(Text(level.label, style=SEVERITY_STYLE[level]),
                         _since(f, localtime), where(f, run.nodes), f.check, what)
        con.print(grid)
    return head + buf.getvalue()


def _roles_lines(run: CheckRun) -> str:
    """"roles: ..." (each service's primary and how long it has held), one line."""
    if not run.roles or run.unknown:
        return ""
    return "roles: " + "; ".join(s.line() for s in run.roles) + "\n"


def _incident_lines(run: CheckRun) -> str:
    """The open incidents of more than one finding, root first: one line each."""
    many = [i for i in run.open_incidents if len(i.findings) > 1]
    if not many:
        return ""
    return "incidents open:\n" + "".join(f"{i.severity.label.upper()} "
                                          f"{incident_line(i, run.nodes)}\n" for i in many)


def _plain_long_output(run: CheckRun, localtime: Callable[[float], time.struct_time]) -> str:
    lines = []
    for title, findings in _sections(run):
        lines.append(f"findings {title}:")
        for f in findings:
            lines.append(f"{_level(f).label.upper()} since {_since(f, localtime)} "
                         f"{where(f, run.nodes)} {f.check}: {f.headline}")
            lines += [f"  {line}" for line in _past(f)]
            if f.cause:
                lines.append(f"  cause: {f.cause}")
            if f.next_step:
                lines.append(f"  next: {f.next_step}")
    return "".join(line + "\n" for line in lines)


def _level(f: Finding) -> Severity:
    """The severity a finding's row shows: an open one's now, a cleared one's worst (what
    it was, not what it ended as)."""
    return f.worst if f.state == "closed" else f.severity


def _past(f: Finding) -> list[str]:
    """What a finding's row adds of its past: its worst, when it was worse than now or
    closed as less, and its story, when its severity or words changed."""
    out = [f.worst_words] if f.worst_words else []
    if f.told:
        out.append(f"story: {f.story_text()}")
    return out


def _finding_json(f: Finding) -> dict[str, object]:
    return finding_json(f)


def render_json(run: CheckRun) -> str:
    return json.dumps({
        "status": run.status.name, "code": int(run.status), "summary": status_line(run),
        "ticks": run.ticks, "span_s": round(run.span_s, 3), "nodes": run.nodes,
        "counts": run.counts(), "unknown": run.unknown,
        "open": [_finding_json(f) for f in run.open],
        "cleared": [_finding_json(f) for f in run.cleared],
        "incidents": [incident_dict(i) for i in run.incidents],
        "lag": None if run.lag is None else run.lag.model_dump(mode="json"),
        "lag_wall": run.lag_wall,
        "roles": [s.as_dict() for s in run.roles],
    }, indent=2)

