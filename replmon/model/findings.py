"""Findings: what the checks tell the on-call engineer.

A check returns Observations for one window of ticks (a condition holds right
now, with its numbers). The engine turns observations into Findings with a
lifetime: a finding opens after its condition held ``open_after`` seconds, tick
after tick, and closes after it cleared ``close_after`` seconds (hysteresis), so
a noisy counter does not make it flap; one that opens again and again is marked
flapping (``flaps``) and stays one finding until it settles.
"""

from __future__ import annotations

import functools
import re
from dataclasses import field
from enum import IntEnum
from typing import Literal

from pydantic import Field

from replmon.model.base import Record, Struct, struct
from replmon.units import tick_clock

NodeRef = Literal["primary", "replica", "pair"]
Number = float | int | str | bool | None


class Severity(IntEnum):
    """Ordered: max() of severities is the worst one."""

    INFO = 0
    WARNING = 1
    CRITICAL = 2

    @property
    def label(self) -> str:
        return self.name.lower()


@struct
class Observation(Struct):
    """A condition a check sees in the current window.

    A Struct, not a Record: the checks build one for each condition they see, tick
    after tick (1.7 a tick over the shipped sessions), and the engine copies each with
    its node's name (``model_copy``). ``Observation(...)`` validates, as for any
    check's code (an entry point's); the built-in checks under checks/ build theirs
    with ``Observation.trusted(...)``: their severities are Severity members, their
    texts str and their numbers a new dict (``replmon.check.numbers``, or one built for
    the observation) of int, float, str, bool or None, as validation would leave them
    (tests/unit/checks/conftest.py compares each with its validated twin in every
    check's tests; an IntEnum or a Decimal there would be a float after validation).
    As a validated Record, built in 2.2 µs and copied in 2.0; now 0.8 and 1.0 µs."""

    key: str = ""
    """Tells apart several observations of one check on one node (a DRBD resource, a
    replication channel, a disk); empty when there is only one."""
    node: NodeRef
    severity: Severity
    title: str
    """One line, with the key numbers in it: "UPDATEs 47,240/s vs rows updated 23,489/s"."""
    numbers: dict[str, Number] = field(default_factory=dict)
    """The measured values behind the title, with units in the names (upd_per_s, lag_s)."""
    cause: str = ""
    """The likely cause, in a sentence."""
    next_step: str = ""
    """What to look at or do next."""
    name: str = ""
    """The node's name (db162): the engine fills it from the tick ("" for the pair)."""
    given: str = ""
    """The node by the role it was given ("primary", "replica"): how the engine tells
    the two nodes apart, so a finding stays with its node when the roles change, whatever
    the names ("" for the pair, and in recordings made before it was kept). A pair
    finding about one node sets it too (the roles check's event: the new primary)."""


STORY_LAST = 8
"""Changes a finding's story keeps besides its first and its worst step: the newest ones
(a flapping or restless finding cannot grow without bound)."""

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*(?:\s?(?:[KMGTP]i?B|B|ms|us|s|min|h|d)\b)?")
"""A number and the unit it is written in: "931 KiB" and "1 MiB" are one quantity that
grew, not another wording."""


@functools.lru_cache(maxsize=256)
def wording(title: str) -> str:
    """What a title says, its numbers (with their units) left out: "replication lag 34 s
    (over 30 s)" and "replication lag 41 s (over 30 s)" say the same, so do "4,040
    transactions and 931 KiB of binlog" and "4,639 transactions and 1 MiB of binlog";
    "SQL thread stopped" does not.

    Cached: the engine compares each open finding's title with its story's last one
    every tick, and that one (and often the new one) is the same text as the tick
    before; the substitution was ~2 % of the engine's time on the shipped sessions.
    256 texts: two an open finding a tick, for 128 open at once; at 1,024 an open finding
    whose numbers change every tick filled it with a new title a tick for ~17 minutes
    (#56: no growth after minute 5)."""
    return _DIGITS.sub("#", title)


class Step(Record):
    """One moment of a finding's story: how it opened, or a change of its severity or
    of what its title says (not of the numbers in it)."""

    seq: int
    wall: float
    """Wall time of the tick, epoch seconds."""
    severity: Severity
    title: str
    """The title at that tick, its numbers as they were."""


def add_step(story: tuple[Step, ...], step: Step, worst: Severity) -> tuple[tuple[Step, ...], int]:
    """``story`` with ``step`` appended, bounded: the first step, the first at the worst
    severity ``worst`` and the last STORY_LAST changes are kept; (the story, how many
    older steps were dropped to keep it so)."""
    out = [*story, step]
    dropped = 0
    while True:
        head = {0}  # kept before the last ones: the first, and the worst if older
        w = next((i for i, s in enumerate(out) if s.severity == worst), 0)
        if w < len(out) - STORY_LAST:
            head.add(w)
        if len(out) <= STORY_LAST + len(head):
            return tuple(out), dropped
        del out[min(set(range(1, len(out))) - head)]  # the oldest of the others
        dropped += 1


class Finding(Record):
    """An observation with a lifetime, as the engine reports it."""

    check: str
    """Check id (the module name under checks/, or an entry point's name)."""
    key: str = ""
    node: NodeRef
    """The node's role at the finding's latest tick (the roles follow the servers)."""
    name: str = ""
    """The node's name ("" for the pair, and in recordings made before names were kept)."""
    given: str = ""
    """The node by the role it was given (``Observation.given``)."""
    severity: Severity
    title: str
    numbers: dict[str, Number] = Field(default_factory=dict)
    cause: str = ""
    next_step: str = ""
    since_seq: int
    """Seq of the first tick in which the condition held (before the open_after delay)."""
    since_wall: float
    """Wall time of that tick, epoch seconds."""
    last_seq: int
    """Seq of the latest tick in which the condition held."""
    worst: Severity
    """Worst severity seen while open."""
    state: Literal["open", "closed"] = "open"
    closed_seq: int | None = None
    """Seq of the tick in which it closed (after close_after seconds clear)."""
    flaps: int = 0
    """Flapping: it opened this many times within the engine's flap window (0: not
    flapping). A flapping finding stays open until it has been clear for a while."""
    flap_span_s: float | None = None
    """Seconds between the first and the last of those openings."""
    last_wall: float | None = None
    """Wall time of the latest tick in which the condition held: the tick the title's
    numbers are from (None in recordings made before it was kept)."""
    clear_wall: float | None = None
    """Wall time of the first tick of the current clear run: the condition no longer holds
    and the title's numbers are ``last_wall``'s (None while it holds)."""
    closed_wall: float | None = None
    """Wall time of the tick in which it closed: its one closing time on every view."""
    worst_title: str = ""
    """The title in the tick it first reached its worst severity ("" in recordings made
    before it was kept)."""
    worst_numbers: dict[str, Number] = Field(default_factory=dict)
    """The numbers at that moment (empty as ``worst_title``)."""
    worst_wall: float | None = None
    """Wall time of that tick (None in recordings made before it was kept)."""
    story: tuple[Step, ...] = ()
    """How it opened, then each change of its severity or of what its title says
    (``wording``), oldest first; bounded (``add_step``). Empty in recordings made
    before it was kept."""
    story_dropped: int = 0
    """Steps left out of ``story`` to keep it bounded (between the kept ones)."""

    @property
    def headline(self) -> str:
        """The title as readers show it, by the one rule of every check: while the
        condition holds, the title is this tick's (the engine takes each tick's); once it
        no longer holds, its numbers are of the last tick it held, and the headline says so:
        "(as of 14:03:12, clear since 14:03:14)"; once closed, "(as of 14:03:12, closed
        14:03:17)" (``closed_wall``: the one closing time every view gives). With
        "(flapping: 4 opens in 312 s)" when it flaps."""
        title = self.title
        if self.state == "closed" and self.closed_wall is not None:
            when = f"as of {tick_clock(self.last_wall)}, " if self.last_wall is not None else ""
            title += f" ({when}closed {tick_clock(self.closed_wall)})"
        elif self.clear_wall is not None:
            when = f"as of {tick_clock(self.last_wall)}, " if self.last_wall is not None else ""
            title += f" ({when}clear since {tick_clock(self.clear_wall)})"
        if not self.flaps:
            return title
        return f"{title} (flapping: {self.flaps} opens in {self.flap_span_s or 0:g} s)"

    @property
    def was_worse(self) -> bool:
        """Its worst severity is above the one it has now: readers lead with the worst."""
        return self.worst > self.severity

    @property
    def worst_headline(self) -> str:
        """What it said at its worst (the headline in recordings made before it was kept)."""
        return self.worst_title if self.worst_title else self.headline

    @property
    def worst_words(self) -> str:
        """"" unless it was worse than it is now; then its worst, for a row that shows the
        severity now: "worst critical at 15:55:36: SQL thread stopped"."""
        if not self.was_worse:
            return ""
        when = f" at {tick_clock(self.worst_wall)}" if self.worst_wall is not None else ""
        what = f": {self.worst_title}" if self.worst_title else ""
        return f"worst {self.worst.label}{when}{what}"

    @property
    def told(self) -> bool:
        """It has a story to tell: its severity or what it says changed while open."""
        return len(self.story) > 1 or self.story_dropped > 0

    def story_text(self, closed_at: float | None = None, *, end: bool = True) -> str:
        """The story in one line: "CRIT 15:55:36 SQL thread stopped → 15:56:02 IO thread
        Connecting ... (warning) → closed 15:56:40" (the first step with its severity,
        each change with its severity when it differs from the one before; "" when there is
        no story, as in recordings made before it was kept). It ends with when it closed,
        if it did (``closed_at``: the tick it closed in, for a finding as last seen open;
        ``end`` False: not, for a reader that says it before)."""
        if not self.story:
            return ""
        first, *rest = self.story
        parts = [f"{first.severity.label[:4].upper()} {tick_clock(first.wall)} {first.title}"]
        gap = len(rest) - STORY_LAST  # the dropped steps were before the last ones
        prev = first
        for i, s in enumerate(rest):
            if i == gap and self.story_dropped:
                parts.append(f"({self.story_dropped} more)")
            sev = f" ({s.severity.label})" if s.severity != prev.severity else ""
            parts.append(f"{tick_clock(s.wall)} {s.title}{sev}")
            prev = s
        shut = closed_at if closed_at is not None else (
            self.closed_wall if self.state == "closed" else None)
        if end and shut is not None:
            parts.append(f"closed {tick_clock(shut)}")
        return " → ".join(parts)

    @property
    def ident(self) -> tuple[str, str, str]:
        return (self.check, self.node, self.key)

    def where(self, nodes: dict[str, str] | None = None) -> str:
        """"replica db162", "the pair": its role now and its node's name (from
        ``nodes``, role -> name, for findings that do not carry one)."""
        if self.node == "pair":
            return "the pair"
        name = self.name or (nodes or {}).get(self.node, "")
        return f"{self.node} {name}".strip()


RECENT_S = 600.0
"""Findings closed this many seconds before now are still shown (the screen's findings
list, /findings.json), with when they closed: someone who arrives after the heal sees
what happened."""
RECENT_MAX = 5
"""At most this many of them (the newest)."""


def recently_closed(closed: list[Finding], now: float, open_now: list[Finding]
                    ) -> list[Finding]:
    """Of the ``closed`` findings, those closed in the RECENT_S before ``now``, newest
    first, at most RECENT_MAX (not one open again, in ``open_now``: its open row says it)."""
    again = {f.ident for f in open_now}
    hits = [f for f in closed if f.closed_wall is not None
            and now - RECENT_S <= f.closed_wall <= now and f.ident not in again]
    return sorted(hits, key=lambda f: -(f.closed_wall or 0.0))[:RECENT_MAX]
