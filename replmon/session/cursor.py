"""A position in a recording, with the check engine as a live run would have it there.

``ReplayCursor`` is what the replay screen drives (and what a test can drive without a
screen): ``step()`` feeds the next tick to the engine; ``seek(i)`` rebuilds the engine,
warms it on the intact ticks just before ``i`` (the longest check window: the ticks a
live engine's window would hold there) and feeds tick ``i``. The findings at a position
are today's checks' findings plus the ones the live engine recorded at capture that
today's checks do not have, marked ``(rec)``.

A finding that opened before the warm-up shows its since-time from within the warm-up:
the window is all that the checks see, so everything else about it is what a
sequential run from the first tick would show.

``intact_before`` and ``warm_up`` are shared with ``session.rerun``, whose worker
processes warm their part's checks the same way.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from replmon.engine import Engine, Update, build_engine
from replmon.errors import SessionError
from replmon.model.findings import Finding
from replmon.model.tick import Tick
from replmon.session.recording import Recording


def intact_before(rec: Recording, index: int, n: int,
                  parts: frozenset[str] | None = None) -> list[Tick]:
    """Up to ``n`` intact ticks right before tick ``index`` (damaged ones skipped), oldest
    first, read by whole chunks from the newest back; ``parts``: decoded thinned to them
    (``Recording.chunk_entries``)."""
    if n <= 0 or not rec.chunks:
        return []
    ci = rec.chunk_of(index) if index < len(rec) else len(rec.chunks)
    out: list[Tick] = []
    if ci < len(rec.chunks) and rec.chunks[ci].first < index:
        out = [e.tick for e in itertools.takewhile(lambda e: e.index < index,
                                                   rec.chunk_entries(ci, parts))]
    while ci > 0 and len(out) < n:
        ci -= 1
        out[:0] = [e.tick for e in rec.chunk_entries(ci, parts)]
    return out[-n:]


def warm_up(engine: Engine, ticks: Iterable[Tick], *, hysteresis: bool) -> None:
    """Run the checks over ``ticks`` (from ``intact_before``) so the engine's window holds
    them: with ``hysteresis`` findings open as they would have (a replay position);
    without, only the window fills (a re-run part, whose observations are applied later,
    in order, by one engine)."""
    for tick in ticks:
        if hysteresis:
            engine.feed(tick)
        else:
            engine.observe(tick)


def parse_jump(text: str, rec_first: float, current: float, n: int,
               localtime: Callable[[float], time.struct_time] = time.localtime
               ) -> tuple[str, float] | None:
    """('index', i) or ('wall', epoch) from the user's text; None if unreadable. The
    forms every command that takes a time of a recording reads (replay's g and --at,
    ``replmon cut``): "03:12:00" (its clock), "+90s" / "-1m" (from ``current``), "#1234"
    (a tick; #1 is the first)."""
    t = text.strip()
    if not t:
        return None
    if t.startswith("#") and t[1:].isdigit():  # tick #1 is the first, as the status bar counts
        return ("index", float(max(0, min(int(t[1:]) - 1, n - 1))))
    if t[0] in "+-":
        unit = {"s": 1, "m": 60, "h": 3600}.get(t[-1], 1)
        num = t[1:-1] if t[-1] in "smh" else t[1:]
        try:
            delta = float(num) * unit
        except ValueError:
            return None
        return ("wall", current + (delta if t[0] == "+" else -delta))
    parts = t.split(":")
    try:
        h, m, s = (int(p) for p in (parts + ["0", "0"])[:3])
    except ValueError:
        return None
    day = localtime(rec_first)
    wall = time.mktime((day.tm_year, day.tm_mon, day.tm_mday, h, m, s, 0, 0, -1))
    if wall < rec_first - 1:
        wall += 86400  # past midnight in the recording
    return ("wall", wall)


def position(rec: Recording, text: str, *, last: bool = False) -> int | None:
    """The tick index a user's time names (``parse_jump``'s forms, "+90s" counted from the
    recording's start): the first tick at or after it, or with ``last`` the last tick at
    or before it (the end of a ``replmon cut`` window). None when unreadable or empty."""
    if not len(rec) or not rec.chunks:
        return None
    first = rec.chunks[0].wall  # the first intact tick's, even when tick 0 is lost
    target = parse_jump(text, first, first, len(rec))
    if target is None:
        return None
    kind, value = target
    return int(value) if kind == "index" else index_at(rec, value, last=last)


def index_at(rec: Recording, wall: float, *, last: bool = False) -> int:
    """The first tick at or after ``wall`` (clamped to the ends); with ``last``, the last
    tick at or before it."""
    i = rec.seek(wall)
    if last and i > 0:
        try:
            after = rec.tick_at(i).wall > wall
        except SessionError:  # a damaged tick: a window ends before it anyway
            after = True
        return i - 1 if after else i
    return i


@dataclass(frozen=True)
class Step:
    """One position of the cursor."""

    index: int
    tick: Tick
    update: Update
    findings: list[Finding]
    """Today's open findings, then the recorded ones today's checks lack, marked (rec)."""


class ReplayCursor:
    """Steps and seeks through a recording with a warmed engine. Not thread-safe."""

    def __init__(self, recording: Recording,
                 engine_factory: Callable[[], Engine] | None = None) -> None:
        self.recording = recording
        self.engine_factory = engine_factory or (lambda: build_engine(recording.meta.checks))
        self.engine = self.engine_factory()
        self.pos = -1
        """Index of the last tick fed (-1 before the first)."""

    def __len__(self) -> int:
        return len(self.recording)

    @property
    def at_end(self) -> bool:
        return self.pos >= len(self.recording) - 1

    def step(self) -> Step | None:
        """Feed the next intact tick; None at the end."""
        i = self.pos + 1
        while i < len(self.recording):
            try:
                return self._feed(i)
            except SessionError:  # a damaged range (listed in recording.problems): skip it
                i += 1
        return None

    def seek(self, index: int) -> Step:
        """A fresh engine warmed on the ticks before ``index`` (clamped), then tick
        ``index`` (or the first intact one after it)."""
        index = max(0, min(index, len(self.recording) - 1))
        self.engine = self.engine_factory()
        n = self.engine.window_ticks(self.recording.meta.interval)
        warm_up(self.engine, intact_before(self.recording, index, n), hysteresis=True)
        self.pos = index - 1
        step = self.step()
        if step is None:
            raise SessionError(f"{self.recording.path.name}: no intact tick from {index} on")
        return step

    def _feed(self, i: int) -> Step:
        entry = self.recording.entry(i)
        update = self.engine.feed(entry.tick)
        self.pos = i
        findings = list(update.open)
        if entry.update is not None:
            seen = {f.ident for f in findings}
            findings += [f.model_copy(update={"check": f"{f.check} (rec)"})
                         for f in entry.update.open if f.ident not in seen]
        return Step(i, entry.tick, update, findings)
