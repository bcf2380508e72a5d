"""Every view of every shipped session read as its user would, at 80x24, 120x40 and
160x50: no text cut ("…") on a line that has room for it, the two node columns aligned
group by group (a line that wraps in one column does not push the other's groups out of
line), every visible finding's title whole, the header naming the worst finding's check;
in every view (each group's detail, drift, graphs, who, help, a finding) no value broken
inside a word and no Python literal; the views of the tick shown follow a step. Each
view is opened once and the terminal resized under it through the three sizes (as a user
resizes), the screen checked to be laid out at each before it is read.

The screen is read as text from Textual's compositor (what a terminal would show)."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from rich.console import Console
from settle import STILL_LIMIT_S, settle, settle_still
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Static

from replmon.engine import build_engine
from replmon.session.recording import Recording, open_recording
from replmon.tui.findings_list import RECENT_S, closed_words
from replmon.tui.graph_view import ChartPlot, GraphScreen
from replmon.tui.replay import ReplayApp
from replmon.tui.screens import DetailScreen, DriftScreen, FindingScreen
from replmon.units import tick_clock

SESSIONS = sorted((Path(__file__).parents[2] / "sample_sessions").glob("*.rmrec"))
SIZES = [(80, 24), (120, 40), (160, 50)]
VIEWS_SESSIONS = {"replica_sql_stopped", "planned_switchover", "redis_writes_refused",
                  "drbd_peer_disconnected", "auto_increment_updates_miss"}
"""The sessions whose every view (detail, drift, graphs, who, help, a finding) is walked:
one of each kind of content (replication stopped, roles changing, client errors, DRBD,
statements against rows); the others' overview only (the views' code is the same, their
content of one kind already read: ~60% of this test's time). A quiet pair's views hold
the same groups with smaller numbers (its overview is read, at 80x24 and 160x50)."""
ALL_SIZES_SESSION = "replica_sql_stopped"
"""The session whose every view is read at every size (it has findings, a lag, both
threads' state); the other sessions' at the two the on-call reads (80x24 over ssh,
160x50): 120x40 lies between them, and each size costs every session ~8 s (the suite
holds to 8 minutes)."""
WHO_SESSIONS = {ALL_SIZES_SESSION}
"""The sessions whose who view (the nodes' processlists) is walked: no shipped session
recorded a processlist (``test_no_shipped_session_has_a_processlist``), so in each the
view says so for both nodes, the same code and words but the nodes' names; walked in the
others too it cost ~0.4 s each. A session that records processlists belongs here."""
BORDERS = "│█▌▐▎▏╭╮╰╯┃"
GROUPS = ("host ", "drbd ", "mysql", "redis")
GROUPS_SHOWN = ("host", "drbd", "mysql", "redis")
"""The detail's groups in the order tab shows them."""


def screen_lines(app: ReplayApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def segments(line: str) -> list[str]:
    """The line's panels: the text between border characters."""
    return [s for s in re.split(f"[{BORDERS}]", line) if s.strip()]


def cuts_with_room(lines: list[str]) -> list[str]:
    """Lines where a text ends in "…" although its panel has free room: spaces right
    after the "…", or a panel that ends in 8+ blank cells."""
    bad = []
    for line in lines:
        for seg in segments(line):
            if "…" not in seg:
                continue
            if re.search(r"… {6,}", seg) or len(seg) - len(seg.rstrip(" ")) >= 8:
                bad.append(line)
    return bad


def misaligned(lines: list[str]) -> list[str]:
    """Groups (host, drbd, mysql, redis) that start on different rows in the two node
    columns of the overview."""
    rows: dict[str, list[int]] = {"left": [], "right": []}
    for i, line in enumerate(lines):
        cols = line.split("││")
        if len(cols) != 2:
            continue
        for side, col in zip(("left", "right"), cols, strict=True):
            if col.lstrip("│").startswith(GROUPS):
                rows[side].append(i)
    return [] if rows["left"] == rows["right"] else [f"{rows}"]


def findings_text(lines: list[str]) -> str:
    """The findings panel's text, its rows joined (a title wrapped over lines reads whole)."""
    start = next(i for i, line in enumerate(lines) if "findings" in line and "╭" in line)
    body = []
    for line in lines[start + 1:]:
        if line.startswith("╰"):
            break
        body.append(re.sub("[▁▂▃▄▅▆▇█▏▕]", "", line).strip("│ "))  # less the scrollbar
    return " ".join(" ".join(body).split())




WORD = re.compile(r"[\w.\-+:/%@#=]+")
"""A word as the views print them: a value whole ("10.11.19-MariaDB-0+deb12u1-log",
"latin1_swedish_ci", "0-1-908", "16:09:48"); spaces, commas, brackets separate."""
LITERAL = re.compile(r"\b(True|False|None)\b")


def view_text(app: ReplayApp) -> str:
    """What the view on top prints: its widgets' contents rendered on one line each
    (4000 columns: nothing wraps), its charts' titles and legends."""
    console = Console(width=4000, file=io.StringIO(), record=True)
    for w in app.screen.query(Static):
        console.print(w.content)
    for c in app.screen.query(ChartPlot):
        console.print(c.title, *(label for label, _ in c.legend), markup=False)
    return console.export_text()


def view_lines(app: ReplayApp) -> list[str]:
    """The screen's lines within the view's own box (a modal's: not the overview around
    it, whose words are not the view's)."""
    box = app.screen.query(VerticalScroll).first().region
    return [line[box.x:box.right] for line in screen_lines(app)[box.y:box.bottom]]


def broken_words(lines: list[str], words: set[str]) -> list[str]:
    """Words of the view split over two lines: a line holds a piece that is the start of
    a word but no word itself, and the next line one that goes on with its rest
    ("latin1_swedi" / "sh_ci", "REPEATABLE-R" / "EAD")."""
    starts: dict[str, set[str]] = {}
    for w in words:
        for k in range(2, len(w) - 1):
            starts.setdefault(w[:k], set()).add(w)
    bad = []
    for line, after in zip(lines, lines[1:], strict=False):
        tails = WORD.findall(after)
        for head in set(WORD.findall(line)) - words:
            for w in starts.get(head, ()):
                rest = w[len(head):]
                if any(t.startswith(rest) for t in tails):
                    bad.append(f"{w!r} as {head!r} / {rest!r}")
    return bad


def python_literals(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if LITERAL.search(line)]


def view_problems(app: ReplayApp) -> list[str]:
    """What is wrong on the view on top: a cut with room, a word broken, a literal."""
    lines, words = screen_lines(app), set(WORD.findall(view_text(app)))
    return ([f"cut: {x}" for x in cuts_with_room(lines)]
            + [f"broken: {x}" for x in broken_words(view_lines(app), words)]
            + [f"Python literal: {x}" for x in python_literals(lines)])


def busiest_tick(path: Path) -> int:
    """The tick after the last finding opened (every finding of a short incident open)."""
    with open_recording(path) as rec:
        onsets = [i for i, _ in rec.recorded_onsets()]
        return min(len(rec) - 1, (onsets[-1] + 1) if onsets else len(rec) // 2)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
async def test_every_view_fits(path: Path) -> None:
    tick = busiest_tick(path)
    rec = open_recording(path)
    # opened on it (replay --at: the jump done as it mounts, not after a first tick drawn)
    app = ReplayApp(rec, lambda: build_engine(rec.meta.checks), start=tick)
    problems: list[str] = []
    sizes = SIZES if path.stem == ALL_SIZES_SESSION else [SIZES[0], SIZES[-1]]
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot, 10)
        assert app.pos == tick
        for size in sizes:  # the overview at each size
            problems += await resized(app, pilot, size)
            if size == SIZES[0]:  # (before the views: they leave the list's cursor moved)
                problems += [f"80x24 {p}" for p in overview_whole(screen_lines(app))]
            problems += [f"{size[0]}x{size[1]} {p}" for p in overview_fits(app)]
        if path.stem in VIEWS_SESSIONS:
            problems += await views_fit(app, pilot, tick, path == SESSIONS[0], sizes,
                                        who_too=path.stem in WHO_SESSIONS)
        if tuple(app.size) != SIZES[0]:
            await pilot.resize_terminal(*SIZES[0])
        problems += [f"80x24 {p}" for p in await after_the_heal(app, pilot, rec)]
    rec.close()
    assert not problems, "\n".join(problems)


def has_processlists(path: Path) -> bool:
    """Whether a tick of the recording holds a node's processlist (its records read as
    stored, no tick decoded)."""
    with open_recording(path) as rec:
        return any(b'"processlist":[{' in data
                   for ci in range(len(rec.chunks)) for _, data in rec.records(ci))


def test_no_shipped_session_has_a_processlist(tmp_path: Path) -> None:
    """What WHO_SESSIONS relies on: the who view of every shipped session is the same
    "none recorded" view (a session with processlists must be walked: add it there).
    The reading itself finds the lab's processlists in a recording that has them."""
    from tickdata import lab_ticks, with_processlists

    from replmon.session.format import meta_for
    from replmon.session.recorder import RecordingWriter

    ticks = lab_ticks()[:3]
    with RecordingWriter(tmp_path / "who.rmrec", meta_for(interval=1.0)) as w:
        for t in [*ticks[:-1], with_processlists(ticks[-1])]:
            w.write(t)
    assert has_processlists(tmp_path / "who.rmrec")
    assert [p.stem for p in SESSIONS if has_processlists(p)] == []


async def resized(app: ReplayApp, pilot: Pilot[None], size: tuple[int, int]) -> list[str]:
    """The terminal at ``size`` (a resize under a view too: the view and what a modal
    shows around it get the new size) and the screen on top settled there: its lines
    as many and as wide as the terminal (else what is wrong: a screen still drawn at the
    old size would be judged as if it were the new one)."""
    if tuple(app.size) != size:
        await pilot.resize_terminal(*size)

    def laid_out() -> bool:
        lines = screen_lines(app)
        return len(lines) == size[1] and all(len(line) == size[0] for line in lines)

    deadline = time.monotonic() + STILL_LIMIT_S
    while not laid_out() and time.monotonic() < deadline:
        await pilot.pause()
    await settle_still(pilot, lambda: screen_lines(app), 8)
    if laid_out():
        return []
    lines = screen_lines(app)
    return [f"{type(app.screen).__name__} not laid out at {size[0]}x{size[1]}: "
            f"{len(lines)} lines of {sorted({len(line) for line in lines})} cells"]


SCROLLBAR = "▁▂▃▄▅▆▇█▔"
DEMO = ("demo sql-thread-stopped in 20 s: the replica's SQL thread stopped (STOP REPLICA "
        "SQL_THREAD); mysql_replication should flag it")
"""The longest line the lab demo says (its first), as the MySQL 9.7 demo words it."""


def overview_whole(lines: list[str]) -> list[str]:
    """The overview at 80x24 drawn whole: no scrollbar in the node panels or on the screen
    (one narrowed both columns and every line wrapped again), every border of the panels
    and of the findings box present, no Python literal (True/False/None)."""
    problems = []
    width = len(lines[0])
    tops = [i for i, line in enumerate(lines) if line.startswith("╭")]
    bottoms = [i for i, line in enumerate(lines) if line.startswith("╰")]
    if len(tops) != 2 or len(bottoms) != 2 or not lines[tops[1]].startswith("╭─ findings"):
        return [f"panels or findings box not drawn whole: {lines}"]
    half = width // 2
    for i in range(tops[0], bottoms[0] + 1):
        line = lines[i]
        edges = "".join((line[0], line[half - 1], line[half], line[-1]))
        if len(line) != width or edges != {"╭": "╭╮╭╮", "╰": "╰╯╰╯"}.get(line[0], "││││"):
            problems.append(f"node panels' borders broken or a scrollbar: {line!r}")
        elif line[half - 2] in SCROLLBAR or line[-2] in SCROLLBAR:
            problems.append(f"scrollbar in a node panel: {line!r}")
    box = lines[tops[1]:bottoms[1] + 1]
    if not (box[0].endswith("╮") and box[-1].endswith("╯")) or any(
            not (line.startswith("│") and line.endswith("│")) for line in box[1:-1]):
        problems.append(f"findings box lost a border: {box}")
    literal = [line for line in lines if re.search(r"\b(True|False|None)\b", line)]
    problems += [f"Python literal on the overview: {line!r}" for line in literal]
    return problems


def closed_at_the_end(rec: Recording) -> list[str]:
    """The checks whose findings today's checks close in the recording's last RECENT_S,
    the newest first (an engine of the test's own over every tick: ~0.5 s a session)."""
    engine = build_engine(rec.meta.checks)
    closes = [(tick.wall, f.check) for tick in rec for f in engine.feed(tick).closed]
    end = rec.tick_at(len(rec) - 1).wall
    return [check for wall, check in sorted(closes, reverse=True) if end - wall <= RECENT_S]


async def after_the_heal(app: ReplayApp, pilot: Pilot[None], rec: Recording) -> list[str]:
    """At the recording's last tick, each check whose finding closed in its last RECENT_S
    (and is not open again) is listed as closed, with when (all of them when none is open;
    else the newest, below the open ones, when they leave the room); then the demo's
    longest line is whole under the findings, the overview still whole."""
    last = len(rec) - 1
    app._goto(last)
    await settle_still(pilot, lambda: screen_lines(app), 8)
    lines = screen_lines(app)
    shown = findings_text(lines)
    closed = [c for c in closed_at_the_end(rec) if c not in {f.check for f in app.findings}]
    if app.findings:  # open ones come first: the newest closed one, if they leave room
        whole = all(" ".join(f.headline.split()) in shown for f in app.findings)
        closed = closed[:1] if whole else []
    problems = [f"closed finding not in the recent list: {check!r} in {shown!r}"
                for check in closed
                if not re.search(rf"{check}: closed \d\d:\d\d:\d\d after \d+ s", shown)]
    app.say(DEMO)
    await settle_still(pilot, lambda: screen_lines(app), 8)
    lines = screen_lines(app)
    below = " ".join(" ".join(lines[max(i for i, ln in enumerate(lines)
                                        if ln.startswith("╰")) + 1:]).split())
    if DEMO not in below:
        problems.append(f"demo line not whole: {below!r}")
    return problems + overview_whole(lines)


def overview_fits(app: ReplayApp) -> list[str]:
    """What is cut or out of line in the overview: a text cut with room, the node columns'
    groups out of line, a finding's title cut, the header without the worst finding's
    check, no finding row visible."""
    lines = screen_lines(app)
    problems = [f"overview cut: {x}" for x in cuts_with_room(lines)]
    problems += [f"overview columns out of line: {x}" for x in misaligned(lines)]
    shown = findings_text(lines)
    # the open findings' titles and the recently closed ones' (dimmed, "closed 14:05:12
    # after 42 s: ...")
    for title in [f.headline for f in app.findings] + [closed_words(f) for f in app.recent()]:
        first = " ".join(title.split()[:6])
        whole = " ".join(title.split())
        if first in shown and whole not in shown and not any(
                shown.endswith(whole[:n]) for n in range(len(first), len(whole))):
            # (a title whose end is below the panel's last row scrolls: not cut)
            problems.append(f"finding title cut: {title!r} in {shown!r}")
    if app.findings:
        worst = app.ordered(app.findings)[0][0]  # the worst incident's root
        if worst.check not in lines[0]:
            problems.append(f"header lost the worst finding's check: {lines[0]!r}")
        if " ".join(worst.headline.split()[:3]) not in shown:
            problems.append(f"no finding row visible: {shown!r}")
    return problems


async def views_fit(app: ReplayApp, pilot: Pilot[None], tick: int,
                    help_too: bool = True,
                    all_sizes: list[tuple[int, int]] = SIZES, *,
                    who_too: bool = True) -> list[str]:
    """What is wrong in each view opened from the overview (at tick index ``tick``): each
    opened once and checked at every size, the terminal resized under it (the sizes one
    way for a view, the other way for the next: no resize between two views). At the
    largest size, a view of the tick shown follows a step (then the replay goes back to
    ``tick``). The help is the same text in every session: ``help_too`` on one session
    is enough; so is the who view without processlists (``who_too``, WHO_SESSIONS)."""
    views = {  # (those that follow a step last: the others are checked at ``tick``)
        "finding": lambda: app.push_screen(FindingScreen(app.findings[0])),
        "who": app.action_processlist,
        "help": app.action_help,
        "detail": lambda: app.action_detail("host"),
        "graphs": app.action_graphs,
        "drift": app.action_drift,
    }
    if not app.findings:
        del views["finding"]
    if not help_too:
        del views["help"]
    if not who_too:
        del views["who"]
    problems: list[str] = []
    for name, open_view in views.items():
        sizes = all_sizes if tuple(app.size) == all_sizes[0] else all_sizes[::-1]
        open_view()
        await settle_still(pilot, lambda: screen_lines(app), 8)
        if len(app.screen_stack) < 2:
            problems.append(f"{name} did not open")
            continue
        view = app.screen
        for size in sizes:
            at = f"{size[0]}x{size[1]}"
            problems += [f"{at} {name} {x}" for x in await resized(app, pilot, size)]
            if app.screen is not view:
                problems.append(f"{at} {name} no longer on top after a resize")
                break
            if isinstance(view, DetailScreen):  # each group, tab after tab
                problems += [f"{at} {x}" for x in await every_group(app, pilot)]
            else:
                problems += [f"{at} {name} {x}" for x in view_problems(app)]
            if size == all_sizes[-1] and isinstance(view, DetailScreen | DriftScreen | GraphScreen):
                if isinstance(view, DetailScreen):  # (as the last size's walk left it)
                    await to_group(app, pilot, "mysql")
                problems += [f"{at} {x}" for x in await follows_a_step(app, pilot)]
                if size != sizes[-1] or name != list(views)[-1]:  # more to check at ``tick``
                    await back_to(app, pilot, tick)
        app.pop_screen()
        await settle(pilot, 3)
    return problems


async def back_to(app: ReplayApp, pilot: Pilot[None], tick: int) -> None:
    """The replay back on tick index ``tick`` (a jump), the view on top redrawn there (the
    graphs: once their redraw, due within REPLAY_REDRAW_S, is done)."""
    drawn = getattr(app.screen, "drawn", None)
    app._goto(tick)
    for _ in range(50):
        if drawn is None or getattr(app.screen, "drawn", 0) > drawn:
            break
        await pilot.pause(0.1)
    await settle_still(pilot, lambda: screen_lines(app), 3)
    assert app.pos == tick


async def every_group(app: ReplayApp, pilot: Pilot[None]) -> list[str]:
    """The detail's groups (tab: the same screen, redrawn), each checked as a view: the
    one shown, then the 3 others tab after tab (it ends on the group before the first);
    the mysql group's binlog position too."""
    assert isinstance(app.screen, DetailScreen)
    problems, seen = [], []
    for k in range(len(GROUPS_SHOWN)):
        if k:
            await pilot.press("tab")
            await settle_still(pilot, lambda: screen_lines(app), 3)
        seen.append(app.screen.group)
        problems += [f"{app.screen.group} detail {x}" for x in view_problems(app)]
        if app.screen.group == "mysql":
            problems += binlog_shown(app)
    if sorted(seen) != sorted(GROUPS_SHOWN):
        problems.append(f"tab did not show every group of the detail: {seen}")
    return problems


async def to_group(app: ReplayApp, pilot: Pilot[None], group: str) -> None:
    """The detail on ``group`` (tab or shift+tab, the fewer presses), redrawn."""
    assert isinstance(app.screen, DetailScreen)
    ahead = (GROUPS_SHOWN.index(group) - GROUPS_SHOWN.index(app.screen.group)) % len(GROUPS_SHOWN)
    if not ahead:
        return
    key, n = ("tab", ahead) if ahead <= len(GROUPS_SHOWN) // 2 else (
        "shift+tab", len(GROUPS_SHOWN) - ahead)
    await pilot.press(*[key] * n)
    await settle_still(pilot, lambda: screen_lines(app), 3)
    assert app.screen.group == group


def binlog_shown(app: ReplayApp) -> list[str]:
    """The mysql group names each node's newest binary-log position (read every 2 s: a
    tick of its own often has none) in a recording that has them."""
    text = view_text(app)
    return [f"mysql detail lacks {name}'s binlog position {b.file}:{b.position:,}"
            for name, (b, _) in app.memory.binlogs(app.screen.tick).items()
            if b.file and b.position is not None and f"{b.file}:{b.position:,}" not in text]


async def follows_a_step(app: ReplayApp, pilot: Pilot[None]) -> list[str]:
    """The view on top (a group's detail, the drift, the graphs' cursor) is redrawn when
    the replay steps: it names the new tick's time and changes (at the end, a step back
    first, and the view showing it)."""
    if app.cursor.at_end:
        await step(app, pilot, "left")
    view, before = type(app.screen).__name__, screen_lines(app)
    clock, after = await step(app, pilot, "right")
    if after == before or clock not in "\n".join(after):
        return [f"{view} did not follow the step to {clock}"]
    return []


async def step(app: ReplayApp, pilot: Pilot[None], key: str) -> tuple[str, list[str]]:
    """Press ``key`` and wait until the view names the new tick's clock (the graphs: until
    they are redrawn, at most every 0.5 s in a replay) or 5 s pass; that clock, the screen."""
    drawn = getattr(app.screen, "drawn", None)
    await pilot.press(key)
    clock = tick_clock(app.recording.tick_at(app.pos).wall)  # (the cursor moved at once)
    for _ in range(50):
        await pilot.pause(0.1)
        if clock in "\n".join(screen_lines(app)) and (
                drawn is None or getattr(app.screen, "drawn", 0) > drawn):
            break
    await settle_still(pilot, lambda: screen_lines(app), 3)
    return clock, screen_lines(app)
