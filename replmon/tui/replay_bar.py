"""A replay's two lines of its own, as text: the header's end that says it is a replay
(which file, the recorded date and time of the tick shown) and the position bar over
the keys (▶/⏸, speed, the place in the recording)."""

from __future__ import annotations

import time

from rich.text import Text

from replmon.units import tick_clock

REPLAY = " REPLAY "
"""The header's word in a replay, playing or paused."""


def _cut(name: str, room: int) -> str:
    return name if len(name) <= room else name[:room - 1] + "…"


def _date(wall: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(wall))


def header_tails(playing: bool, name: str, wall: float | None) -> list[Text]:
    """The header's end, longest first, for the header to take the first that fits:
    " REPLAY  ⏸ replica_sql_stopped.rmrec 2026-11-23 16:12:53", then without the date,
    with the name cut, without the name, without ⏸/▶ (the position bar has it), and
    last the word alone: never without "REPLAY" (a live screen's "PAUSED" or data age
    would pass a replay for a live screen), and the pair's names before the time."""
    day = f"{_date(wall)} " if wall is not None else ""
    clock = tick_clock(wall) if wall is not None else ""
    state = "▶ " if playing else "⏸ "
    out = []
    for shown, date, mark in ((name, day, state), (name, "", state),
                              (_cut(name, 16), "", state), ("", "", state), ("", "", "")):
        t = Text(REPLAY, style="bold black on cyan")
        t.append(f" {mark}", style="bold")
        if shown:
            t.append(f"{shown} ", style="dim")
        t.append(f"{date}{clock}", style="bold")
        out.append(t)
    # last, at 80 columns with a finding open: the word alone, so the pair's names stay
    # whole (the recorded time is on the position bar, two lines down)
    out.append(Text(" REPLAY", style="bold black on cyan"))
    return out


def position_line(playing: bool, speed: int, pos: int, n: int, wall: float | None,
                  stem: str, width: int) -> Text:
    """▶/⏸, speed, a bar of the place in the recording, the date and clock of the tick
    shown, its number (the first is #1, as g takes it) and the file's name."""
    head = Text("▶ " if playing else "⏸ ", style="bold")
    head.append(f"x{speed:<3}")
    tail = Text()
    if wall is not None:
        tail.append(f" {_date(wall)} {tick_clock(wall)}", style="bold")
    tail.append(f"  tick #{pos + 1} of {n}", style="dim")
    tail.append(f"  {stem}", style="dim")
    room = max(8, width - head.cell_len - tail.cell_len - 1)
    filled = 0 if n <= 1 else round(pos / (n - 1) * room)
    head.append("━" * filled, style="bold cyan")
    head.append("─" * (room - filled), style="dim")
    return head + tail
