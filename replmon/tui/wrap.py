"""A value that wraps only where it may: at spaces and after commas (a sql_mode, a GTID
set), never inside a word. Rich's own wrapping breaks at spaces only, and folds a word
longer than its column at the column's edge: "latin1_swedi" / "sh_ci",
"REPEATABLE-R" / "EAD", a sql_mode cut at 35 characters inside a 140-column box.

``Wrapped(text)`` is a rich renderable: its minimum width is its longest unbreakable
piece, so a table gives it that much before squeezing it (a piece wider than the whole
column is still folded: there is nothing else to do)."""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

UNIT = r"(?:[KMGT]i?B|B|[mu]?s|pg|sect|%)(?:/s)?"
"""A unit as the views write it after a number and a space: "62 s", "501 us/s",
"1.8 MiB", "3 pg/s"."""
_CHAR = r"(?:[^\s,]|(?<=\d),(?=\d{3}(?![\w-])))"
"""A character of a piece: not a space, not a comma but one between thousands
("4,741")."""
PIECE = re.compile(rf"{_CHAR}*\d {UNIT}(?![\w/]){_CHAR}*,?\s*|{_CHAR}*,?\s*")
"""A piece: up to and including a comma and the spaces after it, or up to a space; a
number and its unit are one piece ("after 62 s:", "(full 501 us/s)"), never split over
two lines."""


def pieces(plain: str) -> list[tuple[int, int]]:
    """(start, end) of each unbreakable piece of ``plain``, its trailing spaces included."""
    return [(m.start(), m.end()) for m in PIECE.finditer(plain) if m.end() > m.start()]


def wrap_text(text: Text, width: int) -> list[Text]:
    """``text`` in lines of at most ``width`` cells, broken between pieces only (a piece
    wider than ``width`` alone on its line, folded)."""
    out: list[Text] = []
    for para in text.split("\n", allow_blank=True):
        starts: list[int] = []
        used = 0
        for start, end in pieces(para.plain):
            word = para.plain[start:end].rstrip()
            if used and used + len(word) > width:
                starts.append(start)
                used = 0
            used += end - start
        lines = para.divide(starts) if starts else [para]
        for line in lines:
            line.rstrip()
            out += line.wrap(Console(width=width), width, overflow="fold") \
                if line.cell_len > width else [line]
    return out


class Wrapped:
    """``text`` as a renderable that wraps between pieces only (see the module)."""

    def __init__(self, text: Text | str, style: str = "") -> None:
        self.text = text if isinstance(text, Text) else Text(text, style=style)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = wrap_text(self.text, max(1, options.max_width))
        yield Text("\n").join(lines) if lines else Text("")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        plain = self.text.plain
        widest = max((len(plain[s:e].rstrip()) for s, e in pieces(plain)), default=0)
        longest = max((len(line) for line in plain.split("\n")), default=0)
        return Measurement(min(widest, options.max_width), min(longest, options.max_width))
