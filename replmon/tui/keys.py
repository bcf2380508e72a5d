"""The overview's keys: its bindings and what each does (``action_*``): pause, focus the
findings list, and open a view over the overview (help, the graphs, who is connected,
a group's detail, the drift, a finding). ``ReplmonApp`` is an ``OverviewKeys``; the
replay binds its own keys (replay.py) to these actions and its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from textual.app import App
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import DataTable

from replmon.model.findings import Finding
from replmon.model.mysql import channel_fields_lacking
from replmon.model.tick import Tick
from replmon.tui.feeds import TickMemory
from replmon.tui.findings_list import finding_key, recent_key
from replmon.tui.graphs import Point
from replmon.tui.processlist import ProcesslistScreen, Snapshots
from replmon.tui.screens import DetailScreen, DriftScreen, FindingScreen, HelpScreen

W = TypeVar("W", bound=Widget)


class OverviewKeys(App[None]):
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

    # what the keys act on: the app's (ReplmonApp sets them)
    tick: Tick | None
    findings: list[Finding]
    paused: bool
    memory: TickMemory
    clock: Callable[[], float]
    want_processlist: Callable[[float], None] | None

    if TYPE_CHECKING:  # ReplmonApp's
        def main_widget(self, selector: str, kind: type[W]) -> W: ...
        def recent(self) -> list[Finding]: ...
        def closed_history(self) -> list[Finding]: ...
        def node_names(self) -> dict[str, str]: ...
        def _refresh_header(self) -> None: ...

    def action_pause(self) -> None:
        self.paused = not self.paused
        self._refresh_header()

    def action_focus_findings(self) -> None:
        self.main_widget("#findings", DataTable).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def graph_source(self) -> tuple[list[Point], float | None, list[Finding]]:
        """Live: the last HISTORY ticks' points, no cursor, the findings whose onsets to
        mark: the open ones and the closed ones (their lines keep their names)."""
        return list(self.memory.graph_history), None, [*self.findings, *self.closed_history()]

    def action_graphs(self) -> None:
        from replmon.tui.graph_view import GraphScreen  # (textual-plotext: on the first g)

        self.push_screen(GraphScreen(self.graph_source, live=True))

    def processlist_source(self) -> tuple[Snapshots, float | None]:
        """Live: each node's newest processlist, no tick to compare with."""
        return dict(self.memory.processlists), None

    def action_processlist(self) -> None:
        self.push_screen(ProcesslistScreen(self.processlist_source, want=self.want_processlist,
                                           clock=self.clock))

    def action_detail(self, group: str) -> None:
        """``group`` in full for both nodes, as of the tick shown."""
        if self.tick is not None:
            self.push_screen(DetailScreen(self.tick, group, self.memory.binlogs))

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
                node = next((n for n in self.tick.nodes if n.role == f.node), None) \
                    if self.tick is not None else None
                self.push_screen(FindingScreen(f, self.node_names(), channel_fields_lacking(
                    node.mysql.flavour if node is not None else None)))
                return
