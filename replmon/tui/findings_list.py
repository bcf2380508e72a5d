"""The overview's findings list: the open findings, each incident's root first and its
consequences under it, then the recently closed ones (dimmed, with when they closed),
each title wrapped onto the lines of its row."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable

from replmon.model.findings import RECENT_S, Finding, recently_closed  # noqa: F401 (RECENT_S: read here too)
from replmon.model.incidents import IncidentTracker, finding_id
from replmon.model.tick import Tick
from replmon.tui import render
from replmon.tui.wrap import wrap_text
from replmon.units import tick_clock

NARROW_FINDINGS = 100
"""Under this many cells the findings table puts node, check and title in one column."""
FINDING_COLUMNS = {False: ("sev", "since", "node", "check", "what"),
                   True: ("sev", "since", "where: what")}


def finding_key(f: Finding) -> str:
    return f"{f.check}/{f.node}/{f.key}"


def recent_key(f: Finding) -> str:
    """A closed finding's row in the findings list (one finding can close more than once)."""
    return f"closed@{f.closed_seq}:{finding_key(f)}"


def closed_words(f: Finding) -> str:
    """A closed finding's row: "closed 14:05:12 after 42 s: <title> (as of 14:05:07)";
    one whose severity or words changed while open tells its story instead, from how it
    opened ("closed 15:56:40 after 64 s: CRIT 15:55:36 IO thread Connecting ... →
    15:55:50 IO thread not running (critical)"). The row's severity is its worst."""
    end = f.closed_wall if f.closed_wall is not None else f.since_wall
    head = f"closed {tick_clock(end)} after {max(0.0, end - f.since_wall):.0f} s: "
    if f.told:
        return head + f.story_text(end=False)
    when = f" (as of {tick_clock(f.last_wall)})" if f.last_wall is not None else ""
    return head + f"{f.title}{when}"


def open_words(f: Finding) -> str:
    """An open finding's row: its headline, and its worst when it was worse than now."""
    worst = f.worst_words
    return f"{f.headline} ({worst})" if worst else f.headline


def ordered(incidents: IncidentTracker, findings: list[Finding]) -> list[tuple[Finding, int]]:
    """The findings as the table lists them: each open incident (worst first) with
    its root first and its consequences under it; (finding, depth), depth 1 for a
    consequence."""
    rank = {finding_id(f): i for i, f in enumerate(findings)}
    out: list[tuple[Finding, int]] = []
    for inc in incidents.open:
        roots = [f for f in inc.roots if finding_id(f) in rank]
        rest = [f for f in inc.consequences if finding_id(f) in rank]
        out += [(f, 0) for f in roots] + [(f, 1 if roots else 0) for f in rest]
    shown = {finding_id(f) for f, _ in out}
    out += [(f, 0) for f in findings if finding_id(f) not in shown]
    latest = {finding_id(f): f for f in findings}  # this tick's title and severity
    return [(latest[finding_id(f)], d) for f, d in out]


def recent(closed: list[Finding], tick: Tick | None, findings: list[Finding]
           ) -> list[Finding]:
    """Of the ``closed`` findings, those recently closed before ``tick`` (the tick shown):
    replmon.model.findings.recently_closed."""
    return [] if tick is None else recently_closed(closed, tick.wall, findings)


class FindingsList:
    """Fills the overview's findings table (a DataTable) with rows, only when they
    changed; ``rows``: lines they took when last shown (the node panels give way)."""

    def __init__(self) -> None:
        self.rows = 0
        self._sig: list[tuple[object, ...]] = []

    def show(self, table: DataTable[object], findings: list[Finding],
             listed: list[tuple[Finding, int]], closed: list[Finding],
             nodes: dict[str, str], console: Console) -> None:
        """``findings``: the open ones; ``listed``: them as ``ordered`` lists them;
        ``closed``: the recently closed ones (``recent``); ``nodes``: role now -> node
        name (``Finding.where``); ``console``: the app's (wraps the narrow column)."""
        narrow = table.scrollable_content_region.width < NARROW_FINDINGS
        columns = FINDING_COLUMNS[narrow]
        room = self._what_width(table, narrow, [*findings, *closed], nodes)
        sig: list[tuple[object, ...]] = [
            (f.check, f.where(nodes), f.key, f.severity, open_words(f), room, d)
            for f, d in listed]
        sig += [(f.check, f.where(nodes), f.key, f.closed_wall, closed_words(f), room)
                for f in closed]
        # an empty box says so (a calm screen's blank box read as not loaded yet)
        table.border_title = "findings" if findings else "findings: none open"
        if sig == self._sig:
            return
        self._sig = sig
        cursor = table.cursor_row
        if tuple(str(c.label) for c in table.columns.values()) != columns:
            table.clear(columns=True)
            table.add_columns(*map(Text, columns))  # not markup (rich's emoji table)
        table.clear()
        height = 0
        for f, depth in listed:  # an incident's root, its consequences under it ("└ ")
            height += self._add(table, f, narrow, room, "└ " if depth else "",
                                open_words(f), "", finding_key(f), nodes, console)
        for i, f in enumerate(closed):  # the node panels give rows to the newest only,
            # or to all of them when none is open (after the heal: what happened)
            lines = self._add(table, f, narrow, room, "", closed_words(f), "dim",
                              recent_key(f), nodes, console)
            height += lines if not (i and listed) else 0
        self.rows = height
        if findings:
            table.move_cursor(row=min(max(cursor, 0), len(findings) - 1))

    def _add(self, table: DataTable[object], f: Finding, narrow: bool, room: int,
             lead: str, title: str, style: str, key: str, nodes: dict[str, str],
             console: Console) -> int:
        """One row of the findings list (``style`` "dim": a closed one); its height."""
        since = tick_clock(f.since_wall)  # the one tick -> clock rule of every view
        level = f.worst if style else f.severity  # a closed one: its worst
        sev = Text(f" {level.label[:4].upper()} ", style=style or render.SEV_STYLE[level])
        if narrow:  # 80 columns: where and what in one column, the title's room doubled
            what = Text(lead, style="dim")
            # the node's name alone (its role is its column's title): the worst title's
            # first words stay on the row's first line, all a short screen may show
            what.append(f"{f.name or nodes.get(f.node) or f.node} ", style=style or "bold")
            what.append(f"{f.check}: ", style=style or "bold")
            what.append(title, style=style)
            lines = wrap_text(what, room)  # a number never apart from its unit ("62 s")
            table.add_row(sev, Text(since, style=style),
                          Text("\n").join(lines), height=len(lines), key=key)
            return len(lines)
        # between words only, as the narrow column: a node name (lab-replica,
        # db-prod-163), a setting (repl-backlog-size), a number and its unit ("1.8 MiB")
        # never split over two lines; the lines after the first under the title
        wrapped = [" " * len(lead) * bool(i) + line.plain for i, line in enumerate(
            wrap_text(Text(lead + title), room - len(lead)))] or [""]
        table.add_row(sev, Text(since, style=style), Text(f.where(nodes), style=style),
                      Text(f.check, style=style), Text("\n".join(wrapped), style=style),
                      height=len(wrapped), key=key)
        return len(wrapped)

    @staticmethod
    def _what_width(table: DataTable[object], narrow: bool, listed: list[Finding],
                    nodes: dict[str, str]) -> int:
        """Cells left for the ``what`` column: the table's width less the other columns
        (each with its padding, as wide as the ``listed`` findings need), so a finding's
        title wraps onto more lines of its row instead of being cut at the edge."""
        others = [6, 8] if narrow else [
            6, 8, max((len(f.where(nodes)) for f in listed), default=4),
            max((len(f.check) for f in listed), default=5)]
        padding = 2 * table.cell_padding
        return max(20, table.scrollable_content_region.width - 1
                   - sum(w + padding for w in others) - padding)
