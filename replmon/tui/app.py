"""The live screen: primary | replica side by side, findings below.

``ReplmonApp`` puts the parts together: the node columns (panels.py), the findings list
(findings_list.py), the ticks coming in (feeds.py) and the keys (keys.py: the bindings
and their actions, most of which open a view of screens.py, graphs.py or
processlist.py); it lays the overview out to the screen's size.

The app reads Ticks, never a server. It is given a feed (an async iterator of
Ticks: the live collector, a fixed list in tests, a recording in replay) and a
check engine. One worker iterates the feed, runs the checks on every tick and
posts a TickReceived message; a newer one replaces an older one still queued,
so a slow screen shows the newest tick while the engine still saw them all.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterable, Callable, Sequence

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widgets import DataTable, Footer, Static

from replmon import gcpace
from replmon.engine import Engine, Update
from replmon.model.base import SourceState
from replmon.model.findings import Finding
from replmon.model.incidents import Causality, IncidentTracker, causality
from replmon.model.tick import NodeTick, Tick
from replmon.pipeline import CallbackReader, Pipeline, Reader
from replmon.tui import drawcaches, fitting, header, render
from replmon.tui.feeds import FeedEnded, Poster, TickMemory, TickReceived
from replmon.tui.findings_list import (
    FINDING_COLUMNS,
    NARROW_FINDINGS,
    FindingsList,
    ordered,
    recent,
)
from replmon.tui.keys import OverviewKeys, W
from replmon.tui.panels import SPARKS, NodePanel
from replmon.tui.screens import FollowsTicks
from replmon.units import tick_clock

SHORT_ROWS = 32


class ReplmonApp(OverviewKeys):
    CSS_PATH = "replmon.tcss"
    TITLE = "replmon"
    ENABLE_COMMAND_PALETTE = False  # nothing of replmon's in it; its ^p took 12 columns

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
        self.memory = TickMemory()
        """What is kept of every tick (sparklines, graphs, processlists, binlogs)."""
        self.findings_list = FindingsList()
        self.ticks_shown = 0
        self.paused = False
        self.feed_ended = False
        self._said = ""
        """The demo's last notice (``say``)."""
        self.want_processlist = want_processlist

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
        # Text, not str: a str label is read as rich markup, whose emoji codes import
        # rich's emoji table (~0.6 MB, #56) for five plain words
        table.add_columns(*map(Text, FINDING_COLUMNS[False]))
        table.focus()  # enter opens the selected (the worst) finding, up/down choose one
        self.set_interval(1.0, self._refresh_header)
        gcpace.start()
        self.set_interval(gcpace.FULL_EVERY_S, gcpace.collect)
        self.set_interval(drawcaches.CELL_CACHE_EVERY_S, drawcaches.clear)
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
        self.memory.remember(tick)
        self.incidents.update(tick.wall, findings)
        self.post_message(TickReceived(tick, findings))

    def causality(self) -> Causality:
        """The checks' declarations the incidents are made by (the live engine's)."""
        return causality(self.engine.checks) if self.engine is not None else {}

    def ordered(self, findings: list[Finding]) -> list[tuple[Finding, int]]:
        """The findings as the table lists them (``findings_list.ordered``)."""
        return ordered(self.incidents, findings)

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
                 r.role: panels[r.role].texts(r, p, now, self.memory.gtid_rows.get(tick.wall),
                                              sentinel, tick=tick)}
        self._show_findings()  # first: the rows the findings need
        hidden = self._hidden_groups(p, r)
        rows, limit = self._node_rows()
        cols = fitting.shed([texts[p.role], texts[r.role]], rows + sum(
            max(len(t[k].plain.split("\n")) for t in texts.values()) for k in hidden),
            render.kept_lines(p, r))
        for panel in panels.values():  # never taller: clipped inside its border rather
            # than the screen scrolling (which narrowed both columns: every line rewrapped)
            panel.styles.max_height = max(3, limit + self._frame())
        texts = {p.role: cols[0], r.role: cols[1]}
        lines = {kind: max(len(t[kind].plain.split("\n")) for t in texts.values() if kind in t)
                 for kind in NodePanel.SECTIONS}
        since = tick.roles.since if tick.roles is not None else None
        for node in (p, r):
            panel = panels[node.role]
            panel.show(node, texts[node.role], lines, self.memory.history[panel.role], since,
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
        findings = max(least, 2 + (0 if short else 1) + max(1, self.findings_list.rows))
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

    def on_feed_ended(self, _msg: FeedEnded) -> None:
        self.feed_ended = True
        self._refresh_header()

    def _show_findings(self) -> None:
        """The findings list (findings_list.py), as of the tick shown."""
        self.findings_list.show(self.main_widget("#findings", DataTable), self.findings,
                                self.ordered(self.findings), self.recent(),
                                self.node_names(), self.console)

    def closed_history(self) -> list[Finding]:
        """The findings the engine closed, oldest first (``Engine.history``, bounded)."""
        return list(self.engine.history) if self.engine is not None else []

    def recent(self) -> list[Finding]:
        """Findings closed in the RECENT_S before the tick shown, newest first."""
        return recent(self.closed_history(), self.tick, self.findings)

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
