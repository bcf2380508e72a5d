"""The live screen: primary | replica side by side, findings below.

The app reads Ticks, never a server. It is given a feed (an async iterator of
Ticks: the live collector, a fixed list in tests, a recording in replay) and a
check engine. One worker iterates the feed, runs the checks on every tick and
posts a TickReceived message; a newer one replaces an older one still queued,
so a slow screen shows the newest tick while the engine still saw them all.
"""

from __future__ import annotations

import contextlib
import textwrap
import time
from collections import deque
from collections.abc import AsyncIterable, Callable, Sequence
from typing import TypeVar

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Sparkline, Static

from replmon.engine import Engine, Update
from replmon.model.base import SourceState
from replmon.model.findings import Finding
from replmon.model.incidents import Causality, IncidentTracker, causality, finding_id
from replmon.model.mysql import BinlogStatus
from replmon.model.sentinel import SentinelSample
from replmon.model.tick import NodeTick, Role, Tick
from replmon.output.plain import human
from replmon.pair import gtid_slave_pos_inserts  # what stmt_vs_rows leaves out, shown
from replmon.pipeline import BaseReader, CallbackReader, Pipeline, Reader
from replmon.tui import fitting, gcpace, header, render
from replmon.tui.graphs import GraphScreen, Point, points
from replmon.tui.processlist import ProcesslistScreen, Snapshot, Snapshots
from replmon.tui.screens import (
    DetailScreen,
    DriftScreen,
    FindingScreen,
    FollowsTicks,
    HelpScreen,
)
from replmon.units import tick_clock

W = TypeVar("W", bound=Widget)

HISTORY = 300
"""Ticks of sparkline history kept per node (5 minutes at 1 Hz); bounded."""
SHORT_ROWS = 32
SPARKS = (("qps", "stmt"), ("ops", "rds"))
"""Sparklines under each node: (history key, label); the last 5 minutes, with the
highest value shown on the right (the y scale: the tallest bar)."""


def finding_key(f: Finding) -> str:
    return f"{f.check}/{f.node}/{f.key}"


def recent_key(f: Finding) -> str:
    """A closed finding's row in the findings list (one finding can close more than once)."""
    return f"closed@{f.closed_seq}:{finding_key(f)}"


def closed_words(f: Finding) -> str:
    """A closed finding's row: "closed 14:05:12 after 42 s: <title> (as of 14:05:07)"."""
    end = f.closed_wall if f.closed_wall is not None else f.since_wall
    when = f" (as of {tick_clock(f.last_wall)})" if f.last_wall is not None else ""
    return (f"closed {tick_clock(end)} after {max(0.0, end - f.since_wall):.0f} s: "
            f"{f.title}{when}")


RECENT_S = 600.0
"""Findings closed this many seconds before the tick shown stay in the findings list,
dimmed, with when they closed: someone who arrives after the heal sees what happened."""
RECENT_MAX = 5
"""At most this many of them (the newest)."""
NARROW_FINDINGS = 100
"""Under this many cells the findings table puts node, check and title in one column."""
FINDING_COLUMNS = {False: ("sev", "since", "node", "check", "what"),
                   True: ("sev", "since", "where: what")}


class TickReceived(Message):
    def __init__(self, tick: Tick, findings: list[Finding]) -> None:
        super().__init__()
        self.tick = tick
        self.findings = findings

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TickReceived)


class FeedEnded(Message):
    pass


class Poster(BaseReader):
    """The screen as a pipeline reader: inline, it only posts a message."""

    name = "screen"
    inline = True

    def __init__(self, app: ReplmonApp) -> None:
        self.app = app

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        self.app.show_tick(tick, update.open if update is not None else [])


class Section(Static, can_focus=True):
    """One group of a node's column (host, drbd, mysql, redis); enter opens its detail."""

    BINDINGS = [Binding("enter", "open", "Detail")]

    def __init__(self, kind: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.kind = kind

    def action_open(self) -> None:
        app = self.app
        if isinstance(app, ReplmonApp):
            app.action_detail(self.kind)


class NodePanel(VerticalScroll):
    """One node: host, DRBD, MySQL, Redis, each shown in place, ok or not. ``role`` is
    the column's: the role the node in it was given (``NodeTick.given``); its title says
    the node's name and its role now."""

    SECTIONS = ("host", "drbd", "mysql", "redis")

    def __init__(self, role: Role) -> None:
        super().__init__(id=role, classes="node")
        self.role = role
        self.border_title = role

    def compose(self) -> ComposeResult:
        for kind in self.SECTIONS:
            yield Section(kind, id=f"{self.role}-{kind}", classes=f"section {kind}")
        for key, label in SPARKS:
            with Horizontal(classes="spark"):
                yield Static(label, classes="spark-label")
                yield Sparkline([], id=f"{self.role}-{key}")
                yield Static("", id=f"{self.role}-{key}-max", classes="spark-max")

    def texts(self, node: NodeTick, other: NodeTick | None, now: float | None,
              gtid_rows_per_s: float | None = None,
              sentinel: SentinelSample | None = None, tick: Tick | None = None
              ) -> dict[str, Text]:
        """Each group's lines for ``node``, broken to this column's width; ``other``:
        the other node of the same tick (values that differ are marked);
        ``gtid_rows_per_s``: see render.mysql_text; ``sentinel``: the tick's Sentinel
        sample (a line under Redis: render.sentinel_text); ``tick``: the tick, for the
        true lag of the node that is MySQL's replica (``Tick.lag``) and the offset lag of
        the one that is Redis's (``Tick.redis_lag``): each service has its own."""
        lag = tick.lag if tick is not None and \
            tick.service_role(node, "mysql") == "replica" else None
        redis_lag = tick.redis_lag if tick is not None and \
            tick.service_role(node, "redis") == "replica" else None

        def mysql(n: NodeTick, o: NodeTick | None) -> Text:
            return render.mysql_text(n, o, gtid_rows_per_s=gtid_rows_per_s, lag=lag)

        def redis(n: NodeTick, o: NodeTick | None) -> Text:
            return render.redis_text(n, o, lag=redis_lag)

        renderers: dict[str, Callable[[NodeTick, NodeTick | None], Text]] = {
            "host": render.host_text, "drbd": render.drbd_text, "mysql": mysql,
            "redis": redis}
        width = self.scrollable_content_region.width
        out = {kind: renderers[kind](node, other) if st.ok else render.status_text(kind, st, now)
               for kind, st in node.statuses().items()}
        if sentinel is not None:
            out["redis"] = out["redis"] + render.sentinel_text(sentinel, node.name, now)
        return {kind: fitting.fit(text, width, kind) for kind, text in out.items()}

    def show(self, node: NodeTick, texts: dict[str, Text], lines: dict[str, int],
             history: dict[str, deque[float]], since: float | None = None,
             services: str = "") -> None:
        """``texts`` from ``texts()``, each padded to ``lines`` (the taller of the two
        nodes' same group, so both columns stay aligned group by group); ``since``: when
        the roles last changed (``Roles.since``), said after the role; ``services``:
        its roles in the services where they are not its role in the pair ("redis
        replica"), said after its name."""
        title = f"{node.role} {node.name}"
        room = self.outer_size.width - 6  # the border's corners and the spaces
        if services:  # at 80 columns in the header's words: "· rds replica"
            full = f" · {services}"
            title += full if len(title) + len(full) <= room or room <= 0 else \
                " · " + header.short_services(services)
        if since is not None:
            # "since" goes first when the panel is narrow: the time must stay whole (at
            # 80 columns "replica lab-primary since 13:47:…" lost its seconds)
            when = tick_clock(since)
            title += f" since {when}" if len(title) + 7 + len(when) <= room or room <= 0 \
                else f" {when}"
        self.border_title = title
        for kind, st in node.statuses().items():
            w = self.query_one(f"#{self.role}-{kind}", Static)
            fitting.put(w, fitting.pad_lines(texts[kind], lines.get(kind, 0)))
            w.set_class(not st.ok and st.state.value != "absent", "down")
            w.set_class(st.state.value == "absent", "absent")
        for key, _ in SPARKS:
            data = list(history[key])
            top = max(data, default=0.0)
            # all zero: no bars (Sparkline draws equal values as full ones)
            self.query_one(f"#{self.role}-{key}", Sparkline).data = data if top > 0 else []
            fitting.put(self.query_one(f"#{self.role}-{key}-max", Static),
                       f"max {human(top).strip()}/s" if data else "")


class ReplmonApp(App[None]):
    CSS_PATH = "replmon.tcss"
    TITLE = "replmon"
    ENABLE_COMMAND_PALETTE = False  # nothing of replmon's in it; its ^p took 12 columns
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("p", "pause", "Pause"),
        Binding("f", "focus_findings", "Findings"),
        Binding("d", "drift", "Drift"),
        Binding("g", "graphs", "Graphs"),
        Binding("w", "processlist", "Who"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("tab", "focus_next", "Next panel", show=False),
        # the list has the focus (on_mount); this one serves enter wherever else the focus
        # is on the overview but on a group, whose own enter opens the group
        Binding("enter", "open_finding", "Finding", show=False),
    ]

    def __init__(self, feed: AsyncIterable[Tick] | None, engine: Engine | None = None, *,
                 clock: Callable[[], float] = time.time, source: str = "live",
                 readers: Sequence[Reader] = (),
                 on_tick: Callable[[Tick, Update | None], None] | None = None,
                 want_processlist: Callable[[float], None] | None = None) -> None:
        """The app runs ``Pipeline(feed, engine, readers + [its poster])``: ``readers``
        see every tick with the engine's update (e.g. a Recorder); ``on_tick`` is a
        plain function as one more inline reader. ``want_processlist(seconds)`` asks the
        live collector for the nodes' processlists (key w)."""
        super().__init__()
        self.readers = [*readers, *([CallbackReader(on_tick)] if on_tick else [])]
        self.feed = feed
        self.engine = engine
        self.clock = clock
        self.source = source
        self.tick: Tick | None = None
        self.findings: list[Finding] = []
        self.incidents = IncidentTracker(self.causality())
        """The findings grouped under their roots (replmon/model/incidents.py), fed every
        tick: the table lists each root with its consequences under it."""
        self.ticks_seen = 0
        """Ticks the worker took from the feed (the engine saw each one)."""
        self.ticks_shown = 0
        self.paused = False
        self.feed_ended = False
        self._findings_sig: list[tuple[object, ...]] = []
        self._findings_rows = 0
        """Lines the findings list's rows took when last shown (the node panels give way)."""
        self._said = ""
        """The demo's last notice (``say``)."""
        self.history: dict[str, dict[str, deque[float]]] = {
            role: {"qps": deque(maxlen=HISTORY), "ops": deque(maxlen=HISTORY)}
            for role in ("primary", "replica")}
        """Sparkline data, appended for every tick (also ticks whose message was folded)."""
        self.want_processlist = want_processlist
        self.processlists: Snapshots = {"primary": None, "replica": None}
        """Each node's newest processlist (read while the w view is open, and after a
        finding opens when recording)."""
        self._last_seen: Tick | None = None
        self.gtid_rows: dict[float, float] = {}
        """Per tick (by wall time): rows/s a MariaDB replica wrote to mysql.gtid_slave_pos
        (checks/stmt_vs_rows.py's count: the growth of Gtid_Slave_Pos since the tick
        before), said under its rows/s."""
        self.graph_history: deque[Point] = deque(maxlen=HISTORY)
        """Every chart's values of the last HISTORY ticks (the graph view, key g)."""
        self.binlog_readings: dict[str, tuple[BinlogStatus, float]] = {}
        """Each node's newest binary-log reading and its tick's wall time (read every 2 s,
        not in every tick: the mysql group's detail shows the newest, with its age)."""

    def compose(self) -> ComposeResult:
        yield Static(header.header_text(None, [], age_s=None), id="header")
        with Horizontal(id="nodes"):
            yield NodePanel("primary")
            yield NodePanel("replica")
        table: DataTable[object] = DataTable(id="findings", cursor_type="row", zebra_stripes=False)
        table.border_title = "findings"
        yield table
        yield Static("", id="say")
        # compact under 100 columns: a replay's keys all fit 80 (the last three fell off)
        yield Footer(compact=self.size.width < NARROW_FINDINGS)

    def main_widget(self, selector: str, kind: type[W]) -> W:
        """A widget of the main screen, also while a modal screen (help, a finding) is on
        top: App.query_one would search the modal and fail."""
        return self.screen_stack[0].query_one(selector, kind)

    def _mounted(self) -> bool:
        """False while starting up or tearing down (a timer or a late TickReceived can
        fire then: seen as NoMatches for #header in a test run)."""
        try:
            self.main_widget("#header", Static)
        except (NoMatches, IndexError):
            return False
        return True

    def on_resize(self, event: events.Resize) -> None:
        """Under 32 rows (an 80x24 ssh session) the sparklines give their rows to the
        findings list: a finding must be readable without scrolling."""
        self._set_short(event.size.height, event.size.width)
        if self._mounted():
            # the groups and titles fitted to the new width and rows, the header shortened
            self.call_after_refresh(self._reshow)
            self.call_after_refresh(self._refresh_header)

    def _set_short(self, height: int, width: int) -> None:
        """Under SHORT_ROWS: no sparklines, no group absent on both nodes, no header row
        over the findings (their rows go to the findings themselves); under
        NARROW_FINDINGS columns the compact footer (a replay's keys all fit 80)."""
        self.screen_stack[0].set_class(height < SHORT_ROWS, "short")
        with contextlib.suppress(NoMatches, IndexError):
            self.screen_stack[0].query_one(Footer).compact = width < NARROW_FINDINGS
        with_header = height >= SHORT_ROWS
        with contextlib.suppress(NoMatches, IndexError):
            self.main_widget("#findings", DataTable).show_header = with_header

    def on_mount(self) -> None:
        self._set_short(self.size.height, self.size.width)
        table = self.main_widget("#findings", DataTable)
        table.add_columns(*FINDING_COLUMNS[False])
        table.focus()  # enter opens the selected (the worst) finding, up/down choose one
        self.set_interval(1.0, self._refresh_header)
        gcpace.start()
        self.set_interval(gcpace.FULL_EVERY_S, gcpace.collect)
        self.consume()

    def on_unmount(self) -> None:
        gcpace.stop()

    @work(exclusive=True, group="feed")
    async def consume(self) -> None:
        await self.drive()
        self.post_message(FeedEnded())

    async def drive(self) -> None:
        """Take ticks until the feed ends: the pipeline, with this screen as a reader."""
        if self.feed is not None:
            await Pipeline(self.feed, self.engine, [*self.readers, Poster(self)]).run()

    def show_tick(self, tick: Tick, findings: list[Finding]) -> None:
        """Keep the tick's graph points and incidents and post it to the screen (a newer
        one replaces it while queued). Called in the app's event loop, for every tick."""
        self.remember(tick)
        self.incidents.update(tick.wall, findings)
        self.post_message(TickReceived(tick, findings))

    def causality(self) -> Causality:
        """The checks' declarations the incidents are made by (the live engine's)."""
        return causality(self.engine.checks) if self.engine is not None else {}

    def ordered(self, findings: list[Finding]) -> list[tuple[Finding, int]]:
        """The findings as the table lists them: each open incident (worst first) with
        its root first and its consequences under it; (finding, depth), depth 1 for a
        consequence."""
        rank = {finding_id(f): i for i, f in enumerate(findings)}
        out: list[tuple[Finding, int]] = []
        for inc in self.incidents.open:
            roots = [f for f in inc.roots if finding_id(f) in rank]
            rest = [f for f in inc.consequences if finding_id(f) in rank]
            out += [(f, 0) for f in roots] + [(f, 1 if roots else 0) for f in rest]
        shown = {finding_id(f) for f, _ in out}
        out += [(f, 0) for f in findings if finding_id(f) not in shown]
        latest = {finding_id(f): f for f in findings}  # this tick's title and severity
        return [(latest[finding_id(f)], d) for f, d in out]

    def remember(self, tick: Tick) -> None:
        """Every tick's sparkline and graph points and processlists (also for ticks whose
        message gets folded)."""
        self.graph_history.append(points(tick))
        self.remember_binlogs(tick)
        for node in tick.nodes:
            if (snap := Snapshot.of(node, tick.wall)) is not None:
                self.processlists[node.given_role] = snap
            h = self.history[node.given_role]  # its column's, through a switchover
            h["qps"].append(node.rates.mysql.qps or 0.0)
            h["ops"].append(node.rates.redis.ops_per_s or 0.0)
        self.ticks_seen += 1
        prev, self._last_seen = self._last_seen, tick
        if prev is not None and 0 < tick.wall - prev.wall <= 1.5 * tick.interval \
                and prev.replica.name == tick.replica.name:  # (not across a switchover)
            g = gtid_slave_pos_inserts(tick.replica, prev.replica)
            if g is not None:
                self.gtid_rows[tick.wall] = g
                while len(self.gtid_rows) > 8:  # only the ticks waiting to be shown
                    del self.gtid_rows[next(iter(self.gtid_rows))]

    def remember_binlogs(self, tick: Tick) -> None:
        """Keep each node's binary-log reading of this tick, if it has one."""
        for node in tick.nodes:
            if node.mysql.status.ok and node.mysql.binlog is not None:
                self.binlog_readings[node.name] = (node.mysql.binlog, tick.wall)

    def on_tick_received(self, msg: TickReceived) -> None:
        self.findings = msg.findings
        if self.paused or not self._mounted():
            return
        self.tick = msg.tick
        self._show_tick(msg.tick)
        self.ticks_shown += 1
        self.follow(msg.tick, msg.findings)

    def _reshow(self) -> None:
        """The tick shown, laid out again (the width or the rows changed)."""
        if self.tick is not None and self._mounted():
            self._show_tick(self.tick)

    def _show_tick(self, tick: Tick) -> None:
        """``tick``'s panels, the findings list and the header."""
        now = self.clock()
        p, r = tick.primary, tick.replica
        # each node in its own column (the role it was given), whatever its role now
        panels = {n.role: self.main_widget(f"#{n.given_role}", NodePanel)
                  for n in (p, r)}
        sentinel = tick.sentinel
        texts = {p.role: panels[p.role].texts(p, r, now, sentinel=sentinel, tick=tick),
                 r.role: panels[r.role].texts(r, p, now, self.gtid_rows.get(tick.wall),
                                              sentinel, tick=tick)}
        self._show_findings()  # first: the rows the findings need
        hidden = self._hidden_groups(p, r)
        rows, limit = self._node_rows()
        cols = fitting.shed([texts[p.role], texts[r.role]], rows + sum(
            max(len(t[k].plain.split("\n")) for t in texts.values()) for k in hidden))
        for panel in panels.values():  # never taller: clipped inside its border rather
            # than the screen scrolling (which narrowed both columns: every line rewrapped)
            panel.styles.max_height = max(3, limit + self._frame())
        texts = {p.role: cols[0], r.role: cols[1]}
        lines = {kind: max(len(t[kind].plain.split("\n")) for t in texts.values() if kind in t)
                 for kind in NodePanel.SECTIONS}
        since = tick.roles.since if tick.roles is not None else None
        for node in (p, r):
            panel = panels[node.role]
            panel.show(node, texts[node.role], lines, self.history[panel.role], since,
                       header.service_roles_note(tick, node))
            for kind in node.statuses():  # a short screen skips what neither has
                panel.query_one(f"#{panel.role}-{kind}").set_class(kind in hidden,
                                                                  "both-absent")
        self._refresh_header()

    @staticmethod
    def _hidden_groups(p: NodeTick, r: NodeTick) -> set[str]:
        """Groups absent on both nodes (no DRBD here): a short screen does not show them."""
        return {kind for kind, st in p.statuses().items()
                if st.state is SourceState.ABSENT
                and r.statuses()[kind].state is SourceState.ABSENT}

    def _node_rows(self) -> tuple[int, int]:
        """Lines the node panels' groups may take: the screen less the header, the footer,
        the replay's position bar, the demo's line, the panels' borders and sparklines,
        and the rows the findings list needs now (its border, header and open findings:
        what matters most); ``fitting.shed`` leaves out the least important lines to fit.
        Then the most they can take: with the findings list at its least."""
        main = self.screen_stack[0]
        short = self.size.height < SHORT_ROWS
        room = self.size.height - 2 - len(main.query("#position")) - self._say_rows() \
            - self._frame()
        table = self.main_widget("#findings", DataTable)
        least = int(table.styles.min_height.value) if table.styles.min_height else 0
        findings = max(least, 2 + (0 if short else 1) + max(1, self._findings_rows))
        return room - findings, room - least

    def _frame(self) -> int:
        """Rows of the node panels that are not their groups: borders, sparklines."""
        return 2 + (0 if self.size.height < SHORT_ROWS else len(SPARKS))

    def follow(self, tick: Tick, findings: list[Finding]) -> None:
        """The views opened over the overview that show the tick shown (a group's detail,
        the drift) take this one too."""
        for screen in self.screen_stack[1:]:
            if isinstance(screen, FollowsTicks):
                screen.tick_shown(tick, findings)

    def as_of(self, tick: Tick) -> str:
        """What a view says of the tick it shows (the replay adds its place in the file)."""
        return f"as of {tick_clock(tick.wall)}"

    def binlogs(self, tick: Tick) -> dict[str, tuple[BinlogStatus, float]]:
        """Each node's newest binary-log reading up to ``tick`` and its age then."""
        return {name: (b, tick.wall - wall) for name, (b, wall) in self.binlog_readings.items()
                if wall <= tick.wall}

    def on_feed_ended(self, _msg: FeedEnded) -> None:
        self.feed_ended = True
        self._refresh_header()

    def _show_findings(self) -> None:
        """The open findings, each incident's root first, then the recently closed ones
        (dimmed, with when they closed); each title wrapped onto the lines of its row."""
        table = self.main_widget("#findings", DataTable)
        narrow = table.scrollable_content_region.width < NARROW_FINDINGS
        columns = FINDING_COLUMNS[narrow]
        rows = self.ordered(self.findings)
        recent = self.recent()
        room = self._what_width(table, narrow, [*self.findings, *recent])
        nodes = self.node_names()
        sig: list[tuple[object, ...]] = [
            (f.check, f.where(nodes), f.key, f.severity, f.headline, room, d) for f, d in rows]
        sig += [(f.check, f.where(nodes), f.key, f.closed_wall, room) for f in recent]
        if sig == self._findings_sig:
            return
        self._findings_sig = sig
        cursor = table.cursor_row
        if tuple(str(c.label) for c in table.columns.values()) != columns:
            table.clear(columns=True)
            table.add_columns(*columns)
        table.clear()
        height = 0
        for f, depth in rows:  # an incident's root, its consequences under it ("└ ")
            height += self._add_finding(table, f, narrow, room, "└ " if depth else "",
                                        f.headline, "", finding_key(f))
        for i, f in enumerate(recent):  # the node panels give rows to the newest only,
            # or to all of them when none is open (after the heal: what happened)
            lines = self._add_finding(table, f, narrow, room, "", closed_words(f), "dim",
                                      recent_key(f))
            height += lines if not (i and rows) else 0
        self._findings_rows = height
        if self.findings:
            table.move_cursor(row=min(max(cursor, 0), len(self.findings) - 1))

    def _add_finding(self, table: DataTable[object], f: Finding, narrow: bool, room: int,
                     lead: str, title: str, style: str, key: str) -> int:
        """One row of the findings list (``style`` "dim": a closed one); its height."""
        since = tick_clock(f.since_wall)  # the one tick -> clock rule of every view
        sev = Text(f" {f.severity.label[:4].upper()} ",
                   style=style or render.SEV_STYLE[f.severity])
        nodes = self.node_names()
        if narrow:  # 80 columns: where and what in one column, the title's room doubled
            what = Text(lead, style="dim")
            # the node's name alone (its role is its column's title): the worst title's
            # first words stay on the row's first line, all a short screen may show
            what.append(f"{f.name or nodes.get(f.node) or f.node} ", style=style or "bold")
            what.append(f"{f.check}: ", style=style or "bold")
            what.append(title, style=style)
            lines = what.wrap(self.console, room)
            table.add_row(sev, Text(since, style=style),
                          Text("\n").join(lines), height=len(lines), key=key)
            return len(lines)
        # at spaces only, as the narrow column's Text.wrap: a node name (lab-replica,
        # db-prod-163) or a setting (repl-backlog-size) is never split over two lines
        wrapped = textwrap.wrap(lead + title, room, break_on_hyphens=False,
                                subsequent_indent=" " * len(lead)) or [""]
        table.add_row(sev, Text(since, style=style), Text(f.where(nodes), style=style),
                      Text(f.check, style=style), Text("\n".join(wrapped), style=style),
                      height=len(wrapped), key=key)
        return len(wrapped)

    def closed_history(self) -> list[Finding]:
        """The findings the engine closed, oldest first (``Engine.history``, bounded)."""
        return list(self.engine.history) if self.engine is not None else []

    def recent(self) -> list[Finding]:
        """Findings closed in the RECENT_S before the tick shown, newest first (not one
        open again: its open row says it)."""
        if self.tick is None:
            return []
        now = self.tick.wall
        open_now = {finding_key(f) for f in self.findings}
        closed = [f for f in self.closed_history() if f.closed_wall is not None
                  and now - RECENT_S <= f.closed_wall <= now and finding_key(f) not in open_now]
        return sorted(closed, key=lambda f: -(f.closed_wall or 0.0))[:RECENT_MAX]

    def _what_width(self, table: DataTable[object], narrow: bool, listed: list[Finding]
                    ) -> int:
        """Cells left for the ``what`` column: the table's width less the other columns
        (each with its padding, as wide as the ``listed`` findings need), so a finding's
        title wraps onto more lines of its row instead of being cut at the edge."""
        nodes = self.node_names()
        others = [6, 8] if narrow else [
            6, 8, max((len(f.where(nodes)) for f in listed), default=4),
            max((len(f.check) for f in listed), default=5)]
        padding = 2 * table.cell_padding
        return max(20, table.scrollable_content_region.width - 1
                   - sum(w + padding for w in others) - padding)

    def node_names(self) -> dict[str, str]:
        """Role now -> node name, as of the tick shown: names a finding that carries no
        name of its own (one recorded before findings kept them), ``Finding.where``."""
        return {} if self.tick is None else {n.role: n.name for n in self.tick.nodes}

    def _refresh_header(self) -> None:
        if not self._mounted():
            return
        age = None if self.tick is None else max(0.0, self.clock() - self.tick.wall)
        source = "ended" if self.feed_ended else self.source
        fitting.put(self.main_widget("#header", Static), header.header_text(
            self.tick, [f for f, _ in self.ordered(self.findings)],
            age_s=age if self.source == "live" else None,
            paused=self.paused, source=source, width=self.size.width), layout=False)

    def say(self, text: str) -> None:
        """A notice (the lab demo's steps) on a line of its own under the findings, with its
        time, whole, until the next one: a toast would cover the findings' titles at 80x24,
        and the findings' border cut it there."""
        if self._mounted():
            line = self.main_widget("#say", Static)
            self._said = f"{tick_clock(self.clock())} {text}"
            line.update(Text(self._said, style="bold"))
            line.display = True
            self._reshow()  # the panels give the line its rows

    def _say_rows(self) -> int:
        """Rows the demo's line takes at this width (0 without one)."""
        if not self._said:
            return 0
        return len(Text(self._said).wrap(self.console, max(1, self.size.width)))

    def action_pause(self) -> None:
        self.paused = not self.paused
        self._refresh_header()

    def action_focus_findings(self) -> None:
        self.main_widget("#findings", DataTable).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def graph_source(self) -> tuple[list[Point], float | None, list[Finding]]:
        """Live: the last HISTORY ticks' points, no cursor, the open findings."""
        return list(self.graph_history), None, list(self.findings)

    def action_graphs(self) -> None:
        self.push_screen(GraphScreen(self.graph_source, live=True))

    def processlist_source(self) -> tuple[Snapshots, float | None]:
        """Live: each node's newest processlist, no tick to compare with."""
        return dict(self.processlists), None

    def action_processlist(self) -> None:
        self.push_screen(ProcesslistScreen(self.processlist_source, want=self.want_processlist,
                                           clock=self.clock))

    def action_detail(self, group: str) -> None:
        """``group`` in full for both nodes, as of the tick shown."""
        if self.tick is not None:
            self.push_screen(DetailScreen(self.tick, group, self.binlogs))

    def action_drift(self) -> None:
        """The two nodes' settings side by side, as of the tick shown."""
        if self.tick is not None:
            self.push_screen(DriftScreen(self.tick, self.findings))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_finding":  # the overview's enter, not another view's
            stack = self.screen_stack
            return bool(stack) and stack[-1] is stack[0]
        return True

    def action_open_finding(self) -> None:
        """The finding at the findings list's cursor (the worst unless moved): what enter
        on the list does, also while the focus is elsewhere (a terminal's start can put it
        on a node's panel)."""
        table = self.main_widget("#findings", DataTable)
        if table.row_count:
            table.action_select_cursor()  # -> on_data_table_row_selected

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        for f in [*self.findings, *self.recent()]:
            if key in (finding_key(f), recent_key(f)):
                self.push_screen(FindingScreen(f, self.node_names()))
                return
