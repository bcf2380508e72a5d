"""Fitting the groups' lines to the overview: to a column's width (``fit``: a line of
figures loses its last fields, others break between fields), to the rows left
(``shed``: the least important lines left out of both columns alike), both columns
aligned (``pad_lines``), and put in a widget only when they changed (``put``). The
wording of each line is render.py's.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Static

from replmon.tui.render import DIFF_STYLE, GUTTER

SUBLABELS = frozenset({"cpu", "mem", "swap", "disk", "net", "stmt/s", "rows/s", "incl.", "bp",
                       "oos", "sync", "sentinel", "true", "repl", "mon", "other"})
"""The words after the gutter that name a line of a group ("disk", "bp"): a line is known
by (group, sub-label), or by its place in the group ("#0") when it has none."""

TAIL_DROP = frozenset({("host", "cpu"), ("host", "mem"), ("host", "swap"), ("host", "disk"),
                       ("host", "net"), ("host", "repl"), ("host", "mon"), ("host", "other"),
                       ("mysql", "stmt/s"), ("mysql", "rows/s"), ("mysql", "bp"),
                       ("mysql", "incl."), ("redis", "#0")})
"""Lines of figures, written most important first: in a narrow column they lose their
last fields (never one in red) instead of wrapping, so the overview keeps its height
whatever the values (a rate growing by a character wrapped a line, a scrollbar appeared
and both columns narrowed). Other lines (states, errors, DRBD) wrap."""

LOW_VALUE = (("mysql", "incl."), ("host", "swap"), ("host", "net"), ("mysql", "bp"),
             ("host", "disk"), ("redis", "mem"), ("host", "mem"), ("mysql", "rows/s"))
"""Lines a short screen leaves out first, in this order, while the findings need the
rows (never a line with a value in red: paging, a full memory). The group view (enter
on a group) shows them all."""

ALARM = ("bold red", DIFF_STYLE)
"""Styles of a value that must stay on screen: red figures and the "≠" of a difference."""


def line_keys(group: str, text: Text) -> list[tuple[tuple[str, str], Text]]:
    """``text``'s lines, each with its key (``group``, sub-label or "#n"); a line continued
    by ``fit`` (indented past the gutter) keeps its line's key."""
    out: list[tuple[tuple[str, str], Text]] = []
    n = 0
    for line in text.split("\n", allow_blank=True):
        plain = line.plain
        if out and plain.startswith(" " * (GUTTER + 1)):
            out.append((out[-1][0], line))  # a continuation
            continue
        first = (plain[GUTTER:].split() or [""])[0]
        out.append(((group, first if first in SUBLABELS else f"#{n}"), line))
        n += 1
    return out


def _alarm(t: Text) -> bool:
    return any(str(sp.style) in ALARM for sp in t.spans)


def _fields(line: Text) -> list[Text]:
    """``line``'s fields, as ``_kv`` wrote them: a key glued to its value ("rtt 0.05ms"),
    a value of several words kept whole ("2 cli", "96% avail"), padding glued to the value
    after it; the line's trailing blanks dropped. Joined by single spaces, they are
    ``line`` again."""
    plain = line.plain.rstrip(" ")
    inside: set[int] = set()  # spaces within one value (one styled run)
    dim: set[int] = set()  # cells of a key or sub-label
    for sp in line.spans:
        if str(sp.style) == "dim":
            dim.update(range(sp.start, sp.end))
        else:
            inside.update(range(sp.start + 1, sp.end - 1))
    out: list[Text] = []
    start = 0
    for i, ch in enumerate(plain):
        if ch != " " or i in inside or (i - 1) in dim or plain[i + 1] == " " \
                or not plain[start:i].strip():
            continue
        out.append(line[start:i])
        start = i + 1
    out.append(line[start:len(plain)])
    return out


def _unpad(field: Text, lead: bool = False) -> Text:
    """``field`` without the blanks that right-align its value (before it, or between its
    key and it: "tx  16KiB/s" -> "tx 16KiB/s"); ``lead``: the line's first field, whose
    leading blanks are the gutter (kept)."""
    start = len(field.plain) - len(field.plain.lstrip(" "))
    if not lead:
        field, start = field[start:], 0
    m = re.compile(r"  +").search(field.plain, start)
    return field[:m.start() + 1] + field[m.end():] if m else field


def _drop_tail(fields: list[Text], width: int) -> list[Text]:
    """``fields`` less their last ones (never the first, never one in red) until they fit
    ``width``; first, when they do not and one is red, without the padding that
    right-aligns a value (a red "101%" of a full link beside two rates of 8 cells: both
    rates stay)."""
    fields = list(fields)
    if sum(f.cell_len for f in fields) + len(fields) - 1 > width \
            and any(map(_alarm, fields[1:])):  # (the first's red may be the group's name)
        fields = [_unpad(f, lead=i == 0) for i, f in enumerate(fields)]
    while sum(f.cell_len for f in fields) + len(fields) - 1 > width:
        i = next((i for i in range(len(fields) - 1, 0, -1) if not _alarm(fields[i])), None)
        if i is None:
            break
        del fields[i]
    return fields


def fit(text: Text, width: int, group: str = "") -> Text:
    """``text`` in ``width`` cells: a line of figures of ``group`` (``TAIL_DROP``) loses its
    last fields; any other line longer than ``width`` breaks between its words, never
    between a key and its value, the rest continued under the values (past the gutter and
    the sub-label), so a narrow column (80x24: 38 characters) never wraps a number away
    from its unit or its name."""
    if width <= GUTTER + 10:
        return text
    out = Text()
    indent = " " * (GUTTER + 5)
    for n, (key, line) in enumerate(line_keys(group, text)):
        if n:
            out.append("\n")
        if line.cell_len <= width:
            out.append_text(line)
            continue
        fields = _fields(line)
        if key in TAIL_DROP:
            fields = _drop_tail(fields, width)
        # a field wider than a continued line ("+/-2.0s server commit timestamps"): its
        # words, or the terminal would wrap it again, under the gutter
        fields = [part for f in fields for part in (
            f.split(" ") if f.cell_len > width - len(indent) else [f])]
        used = 0
        for i, word in enumerate(fields):
            w = word.cell_len + (1 if i else 0)
            if used and used + w > width and word.cell_len:
                word = word[len(word.plain) - len(word.plain.lstrip(" ")):]  # no padding
                out.append("\n" + indent)
                used = len(indent)
                w = word.cell_len
            elif i:
                out.append(" ")
            out.append_text(word)
            used += w
    return out


def shed(texts: list[dict[str, Text]], rows: int,
         keep: frozenset[tuple[str, str]] = frozenset()) -> list[dict[str, Text]]:
    """The nodes' groups (kind -> Text, one dict per column) in ``rows`` lines where they
    can be: the ``LOW_VALUE`` lines left out of both columns alike, one key at a time,
    while the taller column's groups take more rows (a key with a red value in either
    column stays, and the keys in ``keep``: a host's swap line where it has swap)."""
    keyed = [{kind: line_keys(kind, t) for kind, t in col.items()} for col in texts]

    def height() -> int:
        kinds = {k for col in keyed for k in col}
        return sum(max(len(col.get(k, [])) for col in keyed) for k in kinds)

    for key in LOW_VALUE:
        if height() <= rows:
            break
        lines = [ln for col in keyed for k, ls in col.items() for lk, ln in ls if lk == key]
        if not lines or key in keep or any(_alarm(ln) for ln in lines):
            continue
        for col in keyed:
            for k in col:
                col[k] = [(lk, ln) for lk, ln in col[k] if lk != key]
    return [{k: Text("\n").join(ln for _, ln in ls) for k, ls in col.items()} for col in keyed]


def put(widget: Static, content: Text | str, *, layout: bool = True) -> None:
    """``widget.update(content)`` unless it shows that already. An update asks Textual for
    a new layout of the whole screen (~20 ms at 160x50) unless ``layout`` is False (a
    widget of a fixed height: the header, the status bar); the header's clock redrawn
    every second and a paused replay's panels redrawn unchanged cost one each."""
    if widget.content != content:
        widget.update(content, layout=layout)


def pad_lines(text: Text, lines: int) -> Text:
    """``text`` with blank lines added up to ``lines``: a group as tall as the same
    group of the other node, so the two columns stay aligned line by line."""
    missing = lines - len(text.plain.split("\n"))
    return Text.assemble(text, "\n" * missing) if missing > 0 else text
