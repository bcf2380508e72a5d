"""Every view of every shipped session read as its user would, at 80x24, 120x40 and
160x50: no text cut ("…") on a line that has room for it, the two node columns aligned
group by group (a line that wraps in one column does not push the other's groups out of
line), every visible finding's title whole, the header naming the worst finding's check.

The screen is read as text from Textual's compositor (what a terminal would show)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from settle import settle, settle_still
from textual.pilot import Pilot

from replmon.engine import build_engine
from replmon.session.recording import open_recording
from replmon.tui.replay import ReplayApp
from replmon.tui.screens import FindingScreen

SESSIONS = sorted((Path(__file__).parents[2] / "sample_sessions").glob("*.rmrec"))
SIZES = [(80, 24), (120, 40), (160, 50)]
BORDERS = "│█▌▐▎▏╭╮╰╯┃"
GROUPS = ("host ", "drbd ", "mysql", "redis")


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




def busiest_tick(path: Path) -> int:
    """The tick after the last finding opened (every finding of a short incident open)."""
    with open_recording(path) as rec:
        onsets = [i for i, _ in rec.recorded_onsets()]
        return min(len(rec) - 1, (onsets[-1] + 1) if onsets else len(rec) // 2)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
async def test_every_view_fits(path: Path) -> None:
    tick = busiest_tick(path)
    rec = open_recording(path)
    app = ReplayApp(rec, lambda: build_engine(rec.meta.checks))
    problems: list[str] = []
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot, 10)
        app._goto(tick)
        await settle(pilot, 10)
        assert app.pos == tick
        for size in SIZES:
            await pilot.resize_terminal(*size)
            await settle_still(pilot, lambda: screen_lines(app), 8)
            problems += [f"{size[0]}x{size[1]} {p}" for p in await views_fit(app, pilot)]
    rec.close()
    assert not problems, "\n".join(problems)


async def views_fit(app: ReplayApp, pilot: Pilot[None]) -> list[str]:
    """What is cut or out of line in the overview and in each view opened from it."""
    lines = screen_lines(app)
    problems = [f"overview cut: {x}" for x in cuts_with_room(lines)]
    problems += [f"overview columns out of line: {x}" for x in misaligned(lines)]
    shown = findings_text(lines)
    for f in app.findings:
        first = " ".join(f.headline.split()[:6])
        whole = " ".join(f.headline.split())
        if first in shown and whole not in shown and not any(
                shown.endswith(whole[:n]) for n in range(len(first), len(whole))):
            # (a title whose end is below the panel's last row scrolls: not cut)
            problems.append(f"finding title cut: {f.headline!r} in {shown!r}")
    if app.findings:
        worst = app.ordered(app.findings)[0][0]  # the worst incident's root
        if worst.check not in lines[0]:
            problems.append(f"header lost the worst finding's check: {lines[0]!r}")
        if " ".join(worst.headline.split()[:3]) not in shown:
            problems.append(f"no finding row visible: {shown!r}")
    views = {
        "finding": lambda: app.push_screen(FindingScreen(app.findings[0])),
        "detail": lambda: app.action_detail("mysql"),
        "graphs": app.action_graphs,
        "drift": app.action_drift,
        "who": app.action_processlist,
        "help": app.action_help,
    }
    for name, open_view in views.items():
        if name == "finding" and not app.findings:
            continue
        open_view()
        await settle_still(pilot, lambda: screen_lines(app), 8)
        if len(app.screen_stack) < 2:
            problems.append(f"{name} did not open")
            continue
        problems += [f"{name} cut: {x}" for x in cuts_with_room(screen_lines(app))]
        app.pop_screen()
        await settle(pilot, 3)
    return problems
