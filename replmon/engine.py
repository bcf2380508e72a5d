"""The check engine: window of ticks -> checks -> findings with hysteresis.

Feed it every tick in order (live, or from a recording); it keeps a bounded
window (the longest any check asks for), runs every enabled check on it, and
tracks each observation's lifetime:

- an observation that holds ``open_after`` ticks in a row opens a Finding whose
  ``since`` is the first of those ticks;
- an open finding takes the newest numbers and severity each tick it holds;
- it closes after ``close_after`` ticks in a row without the observation.

Deterministic: no clock reads; times come from the ticks.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from replmon.check import Check, SeriesCache, Thresholds, Window
from replmon.errors import ConfigError
from replmon.model.findings import Finding, Observation, Severity
from replmon.model.tick import Tick
from replmon.plugins import LoadFailure

log = logging.getLogger(__name__)

HISTORY = 1000
"""Closed findings the engine remembers."""

ENGINE_ID = "engine"
"""Check id of the engine's own findings: a check that failed to load or raised."""


Seen = tuple[str, Observation]
"""(check id, observation): what one check saw in one tick."""


@dataclass
class _Track:
    first_seq: int
    first_wall: float
    held: int = 0
    clear: int = 0
    finding: Finding | None = None


@dataclass
class Update:
    """What one tick changed."""

    seq: int
    open: list[Finding]
    """Every finding open after this tick, worst first."""
    wall: float = 0.0
    """The tick's wall time (epoch s)."""
    opened: list[Finding] = field(default_factory=list)
    closed: list[Finding] = field(default_factory=list)


def configure(checks: Iterable[Check[Any]],
              settings: Mapping[str, Mapping[str, Any]] | None = None
              ) -> list[tuple[Check[Any], Thresholds]]:
    """Pair each check with its thresholds from ``settings`` ([checks.<id>] tables).
    Unknown ids and unknown or invalid keys are a ConfigError naming them."""
    settings = dict(settings or {})
    out: list[tuple[Check[Any], Thresholds]] = []
    by_id = {c.id: c for c in checks}
    unknown = sorted(set(settings) - set(by_id))
    if unknown:
        raise ConfigError(f"[checks] names unknown check(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(by_id))}")
    for c in by_id.values():
        try:
            th = c.thresholds.model_validate(dict(settings.get(c.id, {})))
        except ValidationError as e:
            lines = [f"  checks.{c.id}.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                     for err in e.errors()]
            raise ConfigError("invalid check settings:\n" + "\n".join(lines)) from None
        out.append((c, th))
    return out


class Engine:
    def __init__(self, checks: Iterable[tuple[Check[Any], Thresholds]],
                 failures: Iterable[LoadFailure] = ()) -> None:
        self.checks = [(c, th) for c, th in checks if th.enabled]
        self.failures = list(failures)
        size = max((c.window for c, _ in self.checks), default=1)
        self.window = max(size, 1)
        """Ticks ``observe`` keeps: the longest check window. Each check sees its own."""
        self._ticks: list[Tick] = []
        """The window, oldest first: at least the last ``window`` ticks, at most twice that
        (trimmed in one go when it doubles, cheaper than a deque copied to a list each tick)."""
        self._limits = {c.id: th for c, th in self.checks}
        self._tracks: dict[tuple[str, str, str], _Track] = {}
        self._cache = SeriesCache()
        self.history: deque[Finding] = deque(maxlen=HISTORY)
        """The last HISTORY findings that closed, in closing order (bounded: a live
        session runs for weeks)."""

    @property
    def limits(self) -> dict[str, Thresholds]:
        """Check id -> the thresholds it runs with (enabled checks)."""
        return dict(self._limits)

    @property
    def open_findings(self) -> list[Finding]:
        found = [t.finding for t in self._tracks.values() if t.finding is not None]
        return sorted(found, key=lambda f: (-f.severity, f.since_seq, f.check, f.node, f.key))

    def observe(self, tick: Tick) -> list[Seen]:
        """Add ``tick`` to the window and run every check on it: what each check sees,
        before hysteresis. A pure function of the last ``window`` ticks (the longest
        check window), which is what lets a long re-run split into parts that run in
        parallel and then feed ``apply`` in order."""
        ticks = self._ticks
        if ticks and tick.seq <= ticks[-1].seq:
            self._cache.clear()  # a new feed (seq went back): cached values are not its
        ticks.append(tick)
        if len(ticks) > 2 * self.window:
            del ticks[:-self.window]
        seen: list[Seen] = []
        for f in self.failures:
            seen.append((ENGINE_ID, Observation(
                key=f.name, node="pair", severity=Severity.WARNING,
                title=f"check {f.name} did not load: {f.error}",
                cause="a broken or incompatible check module",
                next_step="fix or remove the module; the other checks still run")))
        windows: dict[int, Window] = {}  # one Window per length: checks mostly share a few
        for c, th in self.checks:
            n = min(c.window if c.window >= 1 else self.window, len(ticks))
            w = windows.get(n)
            if w is None:
                w = windows[n] = Window(ticks[-n:], self._cache)
            try:
                obs = c.evaluate(w, th)
            except Exception as e:  # a buggy check must not stop the others; shown as a finding
                log.exception("check %s raised", c.id)
                seen.append((ENGINE_ID, Observation(
                    key=c.id, node="pair", severity=Severity.WARNING,
                    title=f"check {c.id} failed: {type(e).__name__}: {e}",
                    cause="a bug in the check (traceback in the log)",
                    next_step="report it; the other checks still run")))
                continue
            if obs:
                seen.extend([(c.id, o) for o in obs])
        self._cache.prune(tick.seq)
        return seen

    def apply(self, seq: int, wall: float, seen: Iterable[Seen]) -> Update:
        """Hysteresis: turn one tick's observations (from ``observe``) into findings
        opened, updated and closed. Must be called for every tick, in order."""
        upd = Update(seq=seq, open=[], wall=wall)
        seen_now: set[tuple[str, str, str]] = set()
        ident: tuple[str, str, str]
        for check_id, o in seen:
            ident = (check_id, o.node, o.key)
            if ident in seen_now:
                continue  # a check reported the same thing twice: first one wins
            seen_now.add(ident)
            th = self._limits.get(check_id)
            open_after = th.open_after if th else 1
            tr = self._tracks.get(ident)
            if tr is None:
                tr = self._tracks[ident] = _Track(first_seq=seq, first_wall=wall)
            tr.held += 1
            tr.clear = 0
            if tr.finding is not None:
                tr.finding = tr.finding.model_copy(update={
                    "severity": o.severity, "title": o.title, "numbers": o.numbers,
                    "cause": o.cause, "next_step": o.next_step, "last_seq": seq,
                    "worst": max(tr.finding.worst, o.severity),
                })
            elif tr.held >= open_after:
                tr.finding = Finding(
                    check=check_id, key=o.key, node=o.node, severity=o.severity, title=o.title,
                    numbers=o.numbers, cause=o.cause, next_step=o.next_step,
                    since_seq=tr.first_seq, since_wall=tr.first_wall, last_seq=seq,
                    worst=o.severity,
                )
                upd.opened.append(tr.finding)
        for ident in list(self._tracks):
            if ident in seen_now:
                continue
            tr = self._tracks[ident]
            if tr.finding is None:
                del self._tracks[ident]  # did not hold long enough: forget it
                continue
            tr.clear += 1
            th = self._limits.get(ident[0])
            if tr.clear >= (th.close_after if th else 1):
                closed = tr.finding.model_copy(update={"state": "closed", "closed_seq": seq})
                upd.closed.append(closed)
                self.history.append(closed)
                del self._tracks[ident]
        upd.open = self.open_findings
        return upd

    def feed(self, tick: Tick) -> Update:
        """``observe`` then ``apply``: one tick through the checks and the hysteresis."""
        return self.apply(tick.seq, tick.wall, self.observe(tick))


def build_engine(settings: Mapping[str, Mapping[str, Any]] | None = None, *,
                 entry_points: bool = True) -> Engine:
    """The engine with every discovered check, configured from ``[checks.*]`` settings."""
    from replmon.plugins import discover

    checks, failures = discover(entry_points=entry_points)
    return Engine(configure(checks, settings), failures)
