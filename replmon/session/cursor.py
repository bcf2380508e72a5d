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
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from replmon.engine import Engine, Update, build_engine
from replmon.errors import SessionError
from replmon.model.findings import Finding
from replmon.model.tick import Tick
from replmon.session.recording import Recording


def intact_before(rec: Recording, index: int, n: int) -> list[Tick]:
    """Up to ``n`` intact ticks right before tick ``index`` (damaged ones skipped), oldest
    first, read by whole chunks from the newest back."""
    if n <= 0 or not rec.chunks:
        return []
    ci = rec.chunk_of(index) if index < len(rec) else len(rec.chunks)
    out: list[Tick] = []
    if ci < len(rec.chunks) and rec.chunks[ci].first < index:
        out = [e.tick for e in itertools.takewhile(lambda e: e.index < index,
                                                   rec.chunk_entries(ci))]
    while ci > 0 and len(out) < n:
        ci -= 1
        out[:0] = [e.tick for e in rec.chunk_entries(ci)]
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
