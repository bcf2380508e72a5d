"""What a re-run takes from the live engine's stored observations (each chunk's
observations frame) instead of decoding ticks and observing them again: the chunks
where they are exactly what a sequential re-run would observe (``stored_usable``), and,
when the thresholds changed, which checks observe those chunks again and where a gated
check is quiet (``plan_reuse``, ``Reuse``). Running the re-run is rerun.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from replmon.check import Check, Restate, Thresholds
from replmon.engine import ENGINE_ID, Engine, build_engine
from replmon.errors import ConfigError
from replmon.model.parts import kept_parts
from replmon.session.format import ChunkObservations, Packed, pack_seen, unpack_seen
from replmon.session.recording import Recording

Usable = dict[int, tuple[ChunkObservations, list[float]]]
"""``stored_usable``'s answer: chunk -> its stored observations and its ticks' walls."""


def stored_usable(rec: Recording, engine: Engine, first: int, end: int,
                  gauges: bool = True) -> Usable:
    """Chunks in [first, end) whose stored observations (observations frames) are exactly what
    ``engine`` would observe in a sequential re-run: the live engine had the same
    ``checks_id``, and the window before the chunk is what a re-run has there (the
    longest check window of ticks before it, all intact and in this file, their seqs
    without a gap). Maps the chunk to its observations and its ticks' wall times.
    Reads frames only: about 2 us a tick. Without ``gauges``: the observations frames'
    gauges are not read (left empty: for a re-run with the recorded thresholds)."""
    out: Usable = {}
    chunk_ticks = max(1, rec.meta.chunk_ticks)
    back = engine.window_ticks(rec.meta.interval) // chunk_ticks + 2
    run = 0
    """Intact, gap-free ticks that end right before the current chunk."""
    prev: ChunkObservations | None = None
    for ci in range(max(0, first - back), end):
        obs, walls = rec.chunk_observations(ci, gauges)
        if obs is not None and prev is not None and run and (
                prev.seq0 + prev.count != obs.seq0 or prev.interval != obs.interval):
            run = 0
        if (ci >= first and obs is not None and obs.checks_id == engine.checks_id
                and run >= engine.window_ticks(obs.interval) - 1):
            out[ci] = (obs, walls)
        complete = (obs is not None and ci + 1 < len(rec.chunks)
                    and rec.chunks[ci + 1].first - rec.chunks[ci].first == obs.count)
        run = run + len(walls) if complete else 0
        prev = obs
    return out


HYSTERESIS = frozenset({"enabled", "open_after", "open_min_samples", "close_after"})
"""Thresholds fields that only the engine reads (which checks run, and the hysteresis of
``Engine.apply``), never a check's ``evaluate`` (docs/checks.md): other values of these
change no observation."""


def observing(th: Thresholds) -> dict[str, Any]:
    """What of a check's thresholds its observations depend on: all but HYSTERESIS."""
    return th.model_dump(exclude=set(HYSTERESIS))


@dataclass
class Reuse:
    """What a re-run with ``engine`` takes from the stored observations: the chunks whose
    observations frames are usable (``stored_usable``), and when they were made with other
    thresholds, the checks to observe again there (``again``) and what those read."""

    use: Usable = field(default_factory=dict)
    again: Engine | None = None
    """None: the stored observations are ``engine``'s own (same ``checks_id``). Else an
    engine of the checks whose observing thresholds differ from the recorded ones (or
    that did not run live): only they are observed again; the stored observations of
    every other check still running are kept."""
    rank: dict[str, int] = field(default_factory=dict)
    """Check id -> its place in ``engine``'s order (the order ``observe`` reports in)."""
    known: frozenset[str] = frozenset()
    """Ids of the checks of both engines: an engine observation keyed by one of them is
    that check's ("check X failed"), any other one of a module that did not load."""
    parts: frozenset[str] | None = None
    """The tick parts the ``again`` checks read (None: whole ticks), decoded alone."""
    always: tuple[Engine, frozenset[str] | None] | None = None
    """The ``again`` checks without a gate, or without stored gauges in some usable chunk,
    as one engine (and the parts they read): they observe every usable chunk."""
    gauged: list[tuple[Check[Any], Thresholds]] = field(default_factory=list)
    """The other ``again`` checks: each observes the chunks where it is not quiet."""
    recorded: dict[str, Thresholds] = field(default_factory=dict)
    """Check id -> the thresholds the stored observations were made with."""
    _each: dict[str, tuple[Engine, frozenset[str] | None]] = field(default_factory=dict)
    """Gated check id -> an engine of that check alone and the parts it reads."""
    _noisy: dict[int, list[tuple[Check[Any], Thresholds]]] = field(default_factory=dict)
    """A chunk's first tick -> the ``gauged`` checks not quiet in it."""
    _restaters: dict[str, Restate[Any] | None] = field(default_factory=dict)
    """Gated check id -> its gate's ``restater`` from the recorded thresholds to its own."""

    def loud(self, obs: ChunkObservations) -> list[tuple[Engine, frozenset[str] | None]]:
        """The engines that must observe the chunk's ticks, each with the parts it reads;
        none when every ``again`` check is quiet there or restates its stored
        observations (``plan``)."""
        return self.plan(obs)[0]

    def plan(self, obs: ChunkObservations) -> tuple[
            list[tuple[Engine, frozenset[str] | None]], dict[int, list[Packed]]]:
        """The engines that must observe the chunk's ticks (``loud``) and, by offset in
        the chunk, the observations of the ``again`` checks that restate theirs instead
        (``Gate.restate``: their ticks need no decoding either). A gated check whose
        stored gauges are ``quiet`` at every tick of the chunk with its new thresholds
        finds nothing there (the engine skips ``evaluate`` on the same test). Each gated
        check has an engine of its own: which of them are loud changes from chunk to
        chunk, and an engine that did not observe the chunk before is first warmed on its
        window (up to 300 ticks decoded), so an engine of the loud ones together would
        warm at every change (135 s against 24 s on the bench day). The checks that
        observe every chunk anyway share one engine (``always``): an engine per check
        costs ~100 us a tick of its own."""
        engines = [self.always] if self.always is not None else []
        fresh: dict[int, list[Packed]] = {}
        for c, th in self._noisy_in(obs):
            got = self._restated(c, th, obs)
            if got is None:
                engines.append(self._engine_of(c, th))
                continue
            for k, packed in got.items():
                fresh.setdefault(k, []).extend(packed)
        return engines, fresh

    def decodes(self, obs: ChunkObservations) -> bool:
        """Whether the chunk's ticks are likely decoded (``plan``, without restating: a
        check that can restate is taken to), to plan the worker processes."""
        return self.always is not None or any(
            self._restater(c, th) is None for c, th in self._noisy_in(obs))

    def _noisy_in(self, obs: ChunkObservations) -> list[tuple[Check[Any], Thresholds]]:
        got = self._noisy.get(obs.first)
        if got is None:
            got = self._noisy[obs.first] = [(c, th) for c, th in self.gauged
                                            if not _quiet_chunk(c, th, obs)]
        return got

    def _restater(self, check: Check[Any], th: Thresholds) -> Restate[Any] | None:
        if check.id not in self._restaters:
            was = self.recorded.get(check.id)
            try:
                self._restaters[check.id] = (None if check.gate is None or was is None
                                             else check.gate.restater(was, th))
            except Exception:  # a buggy restate: observe again, where the engine reports it
                self._restaters[check.id] = None
        return self._restaters[check.id]

    def _restated(self, check: Check[Any], th: Thresholds, obs: ChunkObservations
                  ) -> dict[int, list[Packed]] | None:
        """``check``'s observations with ``th`` at each tick of the chunk from its stored
        ones and gauges (``Gate.restate``), by offset; None when some tick cannot be
        restated (a tick without gauges, or quiet with the recorded thresholds, where
        ``evaluate`` did not run, or that its restate cannot tell)."""
        at = self._restater(check, th)
        column = obs.gauges.get(check.id)
        gate, was = check.gate, self.recorded.get(check.id)
        if at is None or gate is None or was is None or column is None \
                or len(column) != obs.count:
            return None
        out: dict[int, list[Packed]] = {}
        known, cid = self.known, check.id
        last: tuple[Any, list[Packed], list[Packed] | None] | None = None
        quiet: dict[Any, tuple[bool, bool]] = {}
        """Gauges -> quiet with ``th``, with ``was`` (a long stretch repeats its gauges)."""
        try:
            for k, g in enumerate(column):
                if g is None:
                    return None
                q = quiet.get(g)
                if q is None:
                    q = quiet[g] = (gate.quiet(g, th), gate.quiet(g, was))
                if q[0]:
                    continue
                own = [p for p in obs.seen.get(k, ()) if _owner(p, known) == cid]
                if last is not None and last[0] == g and last[1] == own:
                    got = last[2]  # a long outage: the same observation tick after tick
                elif q[1] or any(p[0] != cid for p in own):
                    return None  # not evaluated with ``was`` there, or it raised
                else:
                    told = at([o for _, o in unpack_seen(own)], g)
                    got = None if told is None else pack_seen([(cid, o) for o in told])
                    last = (g, own, got)
                if got is None:
                    return None
                if got:
                    out[k] = got
        except Exception:  # a buggy restate: observe the chunk, where the engine reports it
            return None
        return out

    def _engine_of(self, check: Check[Any], th: Thresholds
                   ) -> tuple[Engine, frozenset[str] | None]:
        got = self._each.get(check.id)
        if got is None:
            got = self._each[check.id] = (Engine([(check, th)]), _parts_of([(check, th)]))
        return got

    def merge(self, stored: list[Packed], fresh: list[Packed]) -> list[Packed]:
        """One tick's observations as ``engine.observe`` gives them: the stored ones of the
        checks kept, the ``again`` checks' ``fresh`` ones, in the engine's order (checks
        that failed to load first, then each check's, as ``Engine.observe`` lists them)."""
        if not stored and not fresh:
            return []
        rank, known, again = self.rank, self.known, self.again
        assert again is not None
        kept = [p for p in stored if (o := _owner(p, known)) == "" or (
            o in rank and o not in again.limits)]
        if not fresh:
            return kept
        return sorted(kept + fresh, key=lambda p: rank.get(_owner(p, known), -1))


def _quiet_chunk(check: Check[Any], th: Thresholds, obs: ChunkObservations) -> bool:
    """Whether ``check``'s gate is quiet with ``th`` at every tick of the chunk, from the
    gauges its observations frame stored (False without a gate or without stored gauges)."""
    gate = check.gate
    column = obs.gauges.get(check.id)
    if gate is None or column is None or len(column) != obs.count:
        return False
    quiet = gate.quiet
    try:
        return all(g is not None and quiet(g, th) for g in column)
    except Exception:  # a buggy quiet: observe the chunk, where the engine reports it
        return False


def _owner(p: Packed, known: frozenset[str]) -> str:
    """The check an observation is of: its own, or for the engine's "check X failed", X;
    "" for a check module that did not load."""
    if p[0] != ENGINE_ID:
        return p[0]
    return p[1] if p[1] in known else ""


def recorded_engine(rec: Recording, entry_points: bool) -> Engine | None:
    """The engine that made the recording's stored observations, if it is today's code:
    today's checks with the recorded ``[checks.*]`` (None when those no longer load)."""
    try:
        return build_engine(rec.meta.checks, entry_points=entry_points)
    except ConfigError:
        return None


def plan_reuse(rec: Recording, engine: Engine, first: int, end: int,
               entry_points: bool = True) -> Reuse:
    """The stored observations a re-run with ``engine`` can use in chunks [first, end).

    With the recorded thresholds (same ``checks_id``): all of them. With others: those
    the recorded engine made, when that engine is today's code with the recorded
    settings (its ``checks_id`` is the one stored), for every check whose observing
    thresholds (``observing``: not the hysteresis) are the recorded ones; the others
    are observed again there, alone, on ticks decoded to what they read."""
    live = recorded_engine(rec, entry_points)
    if live is None or live.checks_id == engine.checks_id:
        # (reads every observations frame once; their gauges serve only other thresholds)
        return Reuse(stored_usable(rec, engine, first, end, gauges=False))
    use = stored_usable(rec, live, first, end)
    if not use:
        return Reuse()
    had = live.limits
    again = [(c, th) for c, th in engine.checks
             if c.id not in had or observing(th) != observing(had[c.id])]
    # gated checks whose gauges every usable chunk stored: observed only where loud
    gauged = [(c, th) for c, th in again if c.gate is not None
              and all(c.id in obs.gauges for obs, _ in use.values())]
    rest = [(c, th) for c, th in again if c.id not in {g.id for g, _ in gauged}]
    rank = {c.id: i for i, (c, _) in enumerate(engine.checks)}
    known = frozenset(rank) | set(had)
    return Reuse(use, Engine(again), rank, known, _parts_of(again),
                 always=(Engine(rest), _parts_of(rest)) if rest else None,
                 gauged=gauged, recorded=had)


def _parts_of(checks: list[tuple[Check[Any], Thresholds]]) -> frozenset[str] | None:
    """The tick parts ``checks`` read together (None: whole ticks)."""
    return union_parts([c.reads for c, _ in checks])


def union_parts(reads: list[Iterable[str] | None]) -> frozenset[str] | None:
    """The tick parts of all of ``reads`` (``kept_parts``); None when one is None (whole
    ticks)."""
    return None if None in reads else kept_parts(p for r in reads for p in r or ())
