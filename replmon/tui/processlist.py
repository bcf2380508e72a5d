"""Who is doing it (key w): the longest-running statements on each node, side by side.

Live, the screen asks the collector for the processlists while it is open (both nodes
read theirs every few seconds; nothing is read once it is closed). In a replay it
shows the lists the recording holds nearest the tick shown: a live session captures
them in the tick after a finding opens, and every few seconds while this view was
open, so the replay of an incident shows what ran then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from replmon.model.mysql import ProcessRow
from replmon.model.tick import NodeTick, Role
from replmon.tui.wrap import wrap_text
from replmon.units import tick_clock

WANT_S = 10.0
"""Seconds a request for processlists lasts; the open screen renews it every second, so a
screen that died stops the reads within this."""


@dataclass(frozen=True)
class Snapshot:
    """One node's processlist as read in one tick."""

    name: str
    wall: float
    rows: list[ProcessRow]
    error: str | None = None
    role: Role | None = None
    """The node's role when the list was read."""

    @classmethod
    def of(cls, node: NodeTick, wall: float) -> Snapshot | None:
        """The node's processlist of this tick; None when it was not read in it."""
        m = node.mysql
        if m.processlist is None:
            return None
        return cls(node.name, wall, m.processlist, m.processlist_error, node.role)


Snapshots = dict[Role, Snapshot | None]
"""Each node's newest list by the role the node was GIVEN (``NodeTick.given``): the node
given as the primary is listed first, whatever its role now, as it keeps the left column
of the overview through a switchover."""
SnapshotSource = Callable[[], tuple[Snapshots, float | None]]
"""() -> (each node's newest list, the wall time of the tick shown in a replay / None live)."""


def _age(snap: Snapshot, ref: float) -> str:
    d = snap.wall - ref
    if abs(d) < 0.5:
        return "read in the tick shown"
    return f"read {abs(d):.0f} s {'after' if d > 0 else 'before'} the tick shown"


WIDE = 120
"""Columns from which the rows are a table with the statement beside them; narrower (an
80-column ssh session) each row takes two lines, the statement under its thread."""


def node_table(role: Role, snap: Snapshot | None, *, ref: float | None, now: float,
               asked: bool, width: int = WIDE) -> Group:
    """A heading naming the node (its role when the list was read, else ``role``) and
    when the list was read, then its rows."""
    head = Text(f"{snap.role if snap is not None and snap.role else role} ", style="bold")
    if snap is None:
        head.append("no processlist " + ("yet: asked, both nodes read every few seconds"
                                        if asked else "stored near this tick"), style="dim")
        return Group(head)
    head.append(snap.name, style="bold cyan")
    when = (_age(snap, ref) if ref is not None
            else f"read {max(0.0, now - snap.wall):.0f} s ago")
    head.append(f"  {len(snap.rows)} active thread{'s' if len(snap.rows) != 1 else ''}, "
                f"{when} ({tick_clock(snap.wall)})",
                style="dim")
    if snap.error:
        head.append(f"\n  cannot read it: {snap.error}", style="bold red")
    if not snap.rows:
        head.append("\n  no statement running (an account without PROCESS sees only its own)",
                    style="dim")
        return Group(head)
    if width < WIDE:
        return Group(head, _two_lines(snap.rows, width))
    table = Table(box=None, padding=(0, 1), expand=True, show_edge=False)
    table.add_column("time", justify="right", no_wrap=True, width=7)
    table.add_column("user", no_wrap=True, max_width=12, overflow="ellipsis")
    table.add_column("host", no_wrap=True, max_width=16, overflow="ellipsis")
    table.add_column("db", no_wrap=True, max_width=10, overflow="ellipsis")
    table.add_column("state", overflow="fold")  # whole: the SQL thread's state is the news
    table.add_column("statement (first 120 chars)", ratio=1, overflow="fold")
    for r in snap.rows:
        table.add_row(_secs(r.time_s), r.user, r.host or "-", r.db or "-",
                      r.state or r.command, r.info or f"({r.command})")
    return Group(head, table)


STATE_AT = 33
"""The state's column in the two-line layout: after time (7), user (12) and db (10)."""
INFO_AT = 9
"""The statement's indent in the two-line layout."""


def _hanging(text: Text, indent: int, width: int) -> Text:
    """``text`` (starting ``indent`` cells in) wrapped between words into ``width`` cells,
    its further lines under its first, not at the screen's first column."""
    return Text("\n" + " " * indent).join(wrap_text(text, max(10, width - indent)))


def _two_lines(rows: list[ProcessRow], width: int = WIDE) -> Text:
    """time, user, db and state on one line, the statement on the next, indented; a long
    state or statement goes on under itself (``width``: the terminal's; the view's
    border, padding and scrollbar take 6 cells of it)."""
    out = Text(f"{'time':>7}  {'user':<12} {'db':<10} state\n", style="dim")
    room = width - 6
    for r in rows:
        out.append_text(_secs(r.time_s))
        out.append(f"  {r.user[:12]:<12} {(r.db or '-')[:10]:<10} ")
        out.append_text(_hanging(Text(r.state or r.command), STATE_AT, room))
        out.append("\n" + " " * INFO_AT)
        out.append_text(_hanging(Text(r.info or f"({r.command})",
                                      style="" if r.info else "dim"), INFO_AT, room))
        out.append("\n")
    out.rstrip()
    return out


def _secs(s: float) -> Text:
    text = f"{s:,.0f} s" if s >= 10 else f"{s:.1f} s"
    text = f"{text:>7}"
    return Text(text, style="bold red" if s >= 60 else "bold" if s >= 5 else "")


class ProcesslistScreen(Screen[None]):
    """Both nodes' running statements, one above the other (the 80-column layout): the
    node given as the primary first, as the overview keeps it on the left."""

    BINDINGS = [Binding("escape", "dismiss", "Back"), Binding("q", "app.quit", "Quit"),
                Binding("w", "dismiss", "Back", show=False)]

    def __init__(self, source: SnapshotSource, *, want: Callable[[float], None] | None,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.source, self.want, self.clock = source, want, clock
        self.drawn = 0
        """Redraws done (tests read it)."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="processlist"):
            yield Static(id="processlist-body")
        yield Footer()  # a full screen of its own: its keys at the bottom

    def on_mount(self) -> None:
        self.redraw()
        if self.want is not None:
            self.set_interval(1.0, self.redraw)

    def body(self) -> Group:
        """What the screen shows: both nodes' lists as the source has them now."""
        snaps, ref = self.source()
        parts = [node_table(role, snaps.get(role), ref=ref, now=self.clock(),
                            asked=self.want is not None, width=self.app.size.width)
                 for role in ("primary", "replica")]
        return Group(Text("who is doing it: each node's longest-running statements, longest "
                          "first (w or escape: back)", style="bold"), parts[0], Text(""),
                     parts[1])

    def redraw(self) -> None:
        if self.want is not None:
            self.want(WANT_S)
        self.query_one("#processlist-body", Static).update(self.body())
        self.drawn += 1

    def on_resize(self) -> None:
        """Laid out again for the new width (in a replay nothing else redraws it)."""
        self.query_one("#processlist-body", Static).update(self.body())

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        if self.want is not None:
            self.want(0)
        self.dismiss(result)
