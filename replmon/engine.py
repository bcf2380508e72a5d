"""The check engine: window of ticks -> checks -> findings with hysteresis.

Feed it every tick in order (live, or from a recording); it keeps a bounded
window (the longest any check asks for), runs every enabled check on it, and
tracks each observation's lifetime:

- an observation that holds ``open_after`` seconds (tick after tick, and at least
  ``open_min_samples`` ticks) opens a Finding whose ``since`` is the first of those
  ticks; a tick covers its interval, so at 1 s a 3 s hold is 3 ticks, at 0.2 s 15;
- an open finding takes the newest numbers and severity each tick it holds, and keeps
  its past: its worst severity with the title and numbers then, and its story (each
  change of severity or of what its title says, with times, bounded);
- it closes after ``close_after`` seconds without the observation;
- a finding that opened ``FLAP_OPENS`` times within ``FLAP_WINDOW_S`` is flapping:
  it stays open (one finding, not a storm of opens and closes) with ``flaps`` and
  ``flap_span_s`` set, and closes only after ``FLAP_SETTLE_S`` seconds clear.

Deterministic: no clock reads; times come from the ticks.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replmon import __version__
from replmon.check import Check, Gauges, Thresholds, span_ticks
from replmon.errors import ConfigError
from replmon.model.findings import Finding, Observation, Severity, Step, add_step, wording
from replmon.model.tick import Tick
from replmon.plugins import LoadFailure
from replmon.windows import EngineWindow, Thinner, Windows

log = logging.getLogger(__name__)

HISTORY = 1000
"""Closed findings the engine remembers."""

ENGINE_ID = "engine"
"""Check id of the engine's own findings: a check that failed to load or raised."""


Seen = tuple[str, Observation]
"""(check id, observation): what one check saw in one tick."""


FLAP_OPENS = 3
"""Opens of the same finding within FLAP_WINDOW_S that make it flapping."""
FLAP_WINDOW_S = 600.0
"""Seconds over which opens are counted (Nagios counts the last 21 checks: 21 min at
its default 1 min; 10 min keeps replmon's 1 s ticks to a span an on-call reads)."""
FLAP_SETTLE_S = 120.0
"""Seconds clear before a flapping finding closes."""


def _covered(since_wall: float, wall: float, interval: float) -> float:
    """Seconds a run of ticks from ``since_wall`` to ``wall`` covers: each tick stands for
    its interval, plus half a tick of slack so clock jitter cannot move the verdict by a
    tick (at 1 s: 3 ticks cover 3.5 s, 2 ticks 2.5 s; a 3 s hold needs 3)."""
    return wall - since_wall + 1.5 * interval


@dataclass
class _Track:
    first_seq: int
    first_wall: float
    held: int = 0
    clear_since: float | None = None
    """Wall time of the first clear tick of the current clear run (None: holding)."""
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
    seen: list[Seen] = field(default_factory=list)
    """The observations this update was made from (``Engine.feed``; empty from ``apply``
    alone). A recorder stores them so a re-run by the same checks can reuse them."""
    checks_id: str = ""
    """``Engine.checks_id`` of the engine that saw them ("" when unknown)."""
    gauges: dict[str, Gauges | None] = field(default_factory=dict)
    """Each gated check's gauges at this tick (``Engine.feed``; ``check.Gate``): the
    recorder stores them so a re-check with other thresholds can skip quiet ticks."""


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
                 failures: Iterable[LoadFailure] = (), *, packed: bool = False) -> None:
        """``packed``: keep the kept parts of ticks older than the last minute as bytes
        (``windows.Thinner``): a live command's engine."""
        self.checks = [(c, th) for c, th in checks if th.enabled]
        self.failures = list(failures)
        self.window_s = max((c.window for c, _ in self.checks), default=1.0)
        """Seconds of history the longest check window needs."""
        self._interval = 1.0
        self.window = self.window_ticks(1.0)
        """Ticks ``observe`` keeps at the current interval: the longest check window.
        Each check sees its own."""
        self._plan: list[tuple[Check[Any], Thresholds, int]] = []
        """(check, thresholds, its window in ticks at the current interval)."""
        self._thinner = Thinner(packed)
        self._feeds: dict[str | None, Windows] = {
            service: Windows(self._thinner) for service in dict.fromkeys(
                [None, *(c.service for c, _ in self.checks)])}
        """Each service's windows (None: the pair's), each check window's ticks kept from
        tick to tick, and their series' columns: a service's ticks have its own primary
        as ``primary`` (``Tick.oriented``), the same tick objects while it is the pair's,
        and then the same thinned copies (one ``Thinner``, one plan for all feeds)."""
        self._windows = self._feeds[None]
        self._opens: dict[tuple[str, str, str], deque[float]] = {}
        """Wall times a finding opened, per ident, within FLAP_WINDOW_S (flap detection)."""
        self._limits = {c.id: th for c, th in self.checks}
        self._tracks: dict[tuple[str, str, str], _Track] = {}
        self.gauges: dict[str, Gauges | None] = {}
        """The gated checks' gauges at the last tick observed."""
        self._replan(1.0)
        self.history: deque[Finding] = deque(maxlen=HISTORY)
        """The last HISTORY findings that closed, in closing order (bounded: a live
        session runs for weeks)."""

    def ticks_to_open(self, interval: float) -> int:
        """Ticks a run must last at ``interval`` so that every check's finding can open:
        the longest ``open_after`` (as ``_covered`` counts it) and ``open_min_samples``,
        after the first tick, which has no rates."""
        return max((max(math.ceil(th.open_after / interval - 0.5), th.open_min_samples) + 1
                    for th in self._limits.values()), default=2)

    def window_ticks(self, interval: float) -> int:
        """Ticks that cover the longest check window at ``interval`` (warm-up length)."""
        return max(1, math.ceil(self.window_s / interval - 1e-9))

    def _replan(self, interval: float) -> None:
        """Each check's window in ticks at ``interval``, and the kept windows to match
        (filled from the ticks already seen)."""
        self._interval = interval
        self.window = self.window_ticks(interval)
        self._plan = plan = [(c, th, span_ticks(c.window, interval)) for c, th in self.checks]
        # the ticks the checks without ``reads`` look at stay whole; older ones keep only
        # what the longer checks read (replmon.model.parts): most of a tick's bytes. One
        # plan for every feed, so that the feeds holding the same tick thin it at the same
        # tick to the same parts, and share the copy (a feed keeping a part none of its
        # own checks reads costs nothing: the other feeds keep it anyway).
        whole = max((n for c, _, n in plan if c.reads is None), default=1)
        keep = {p for c, _, n in plan if n > whole for p in c.reads or ()}
        for service, feed in self._feeds.items():
            lengths = {n for c, _, n in plan if c.service == service} or {1}
            feed.plan(lengths, feed.ticks, whole, keep)

    @property
    def limits(self) -> dict[str, Thresholds]:
        """Check id -> the thresholds it runs with (enabled checks)."""
        return dict(self._limits)

    @property
    def open_findings(self) -> list[Finding]:
        found = [t.finding for t in self._tracks.values() if t.finding is not None]
        return sorted(found, key=lambda f: (-f.severity, f.since_seq, f.check, f.node, f.key))

    @property
    def kept(self) -> int:
        """Ticks the engine holds now: the longest window of any service's checks."""
        return max(len(feed.ticks) for feed in self._feeds.values())

    def reset_window(self) -> None:
        """Forget the window (not the findings): the next ``observe`` sees only the ticks
        fed from now on (a re-run jumping over ticks whose observations are stored)."""
        for feed in self._feeds.values():
            feed.clear()

    def observe(self, tick: Tick) -> list[Seen]:
        """Add ``tick`` to the window and run every check on it: what each check sees,
        before hysteresis. A pure function of the last ``window`` ticks (the longest
        check window), which is what lets a long re-run split into parts that run in
        parallel and then feed ``apply`` in order."""
        if tick.interval != self._interval and tick.interval > 0:
            self._replan(tick.interval)  # windows are seconds: ticks at this interval
        by_service = {service: self._add(service, feed, tick)
                      for service, feed in self._feeds.items()}
        seen: list[Seen] = []
        for f in self.failures:
            seen.append((ENGINE_ID, Observation(
                key=f.name, node="pair", severity=Severity.WARNING,
                title=f"check {f.name} did not load: {f.error}",
                cause="a broken or incompatible check module",
                next_step="fix or remove the module; the other checks still run")))
        gauges: dict[str, Gauges | None] = {}
        """Each gated check's gauges at this tick (None: its measure raised)."""
        for c, th, n in self._plan:
            windows, seen_tick = by_service[c.service]
            try:
                if c.gate is not None:
                    gauges[c.id] = None
                    g = gauges[c.id] = c.gate.measure(windows[n])
                    if c.gate.quiet(g, th):
                        continue  # nothing to see: what a re-check from stored gauges skips
                obs = c.evaluate(windows[n], th)
            except Exception as e:  # a buggy check must not stop the others; shown as a finding
                log.exception("check %s raised", c.id)
                seen.append((ENGINE_ID, Observation(
                    key=c.id, node="pair", severity=Severity.WARNING,
                    title=f"check {c.id} failed: {type(e).__name__}: {e}",
                    cause="a bug in the check (traceback in the log)",
                    next_step="report it; the other checks still run")))
                continue
            if obs:
                seen.extend([(c.id, _named(o, seen_tick)) for o in obs])
        for feed in self._feeds.values():
            feed.done(tick)
        self._thinner.forget()
        self.gauges = gauges
        return seen

    @staticmethod
    def _add(service: str | None, feed: Windows, tick: Tick
             ) -> tuple[dict[int, EngineWindow], Tick]:
        """``tick`` (as ``service`` sees it) added to its windows: (the windows by length,
        the tick they end with). When the service's primary (the pair's, for None)
        changed, the window starts at the change: its checks judge the pair as it is
        now, not a window whose "primary" was the other node before (a pure function
        of the window: the ticks before the change are left out, whatever was fed)."""
        roles = tick.roles
        since = None
        if roles is not None:
            if service is None:
                since = roles.since
            elif (lr := roles.layer(service)) is not None and lr.flipped is not None:
                since = lr.changed
            else:
                since = roles.since  # recorded before each service had its own
            if service is not None:
                tick = tick.oriented(service)
        if since is not None and feed.ticks and feed.ticks[0].wall < since:
            feed.clear()
        return feed.add(tick), tick  # a tick whose seq went back starts a new feed

    def apply(self, seq: int, wall: float, seen: Iterable[Seen], interval: float = 1.0
              ) -> Update:
        """Hysteresis: turn one tick's observations (from ``observe``) into findings
        opened, updated and closed. Must be called for every tick, in order; ``interval``
        is the tick's (holds are seconds)."""
        upd = Update(seq=seq, open=[], wall=wall)
        seen_now: set[tuple[str, str, str]] = set()
        ident: tuple[str, str, str]
        for check_id, o in seen:
            # a node's finding stays with the node (by the role it was given, which never
            # changes) when the roles change
            ident = (check_id, o.given or o.name or o.node, o.key)
            if ident in seen_now:
                continue  # a check reported the same thing twice: first one wins
            seen_now.add(ident)
            th = self._limits.get(check_id)
            tr = self._tracks.get(ident)
            if tr is None:
                tr = self._tracks[ident] = _Track(first_seq=seq, first_wall=wall)
            tr.held += 1
            tr.clear_since = None
            if tr.finding is not None:
                tr.finding = tr.finding.model_copy(update={
                    "node": o.node,
                    "severity": o.severity, "title": o.title, "numbers": o.numbers,
                    "cause": o.cause, "next_step": o.next_step, "last_seq": seq,
                    "worst": max(tr.finding.worst, o.severity), "last_wall": wall,
                    "clear_wall": None, **_changed(tr.finding, o, seq, wall),
                })
            elif th is None or (tr.held >= th.open_min_samples and _covered(
                    tr.first_wall, wall, interval) >= th.open_after):
                tr.finding = Finding(
                    check=check_id, key=o.key, node=o.node, name=o.name, given=o.given,
                    severity=o.severity, title=o.title,
                    numbers=o.numbers, cause=o.cause, next_step=o.next_step,
                    since_seq=tr.first_seq, since_wall=tr.first_wall, last_seq=seq,
                    last_wall=wall, worst=o.severity, worst_title=o.title,
                    worst_numbers=o.numbers, worst_wall=wall,
                    story=(Step(seq=seq, wall=wall, severity=o.severity, title=o.title),),
                    **self._flapping(ident, wall),
                )
                upd.opened.append(tr.finding)
        for ident in list(self._tracks):
            if ident in seen_now:
                continue
            tr = self._tracks[ident]
            if tr.finding is None:
                del self._tracks[ident]  # did not hold long enough: forget it
                continue
            if tr.clear_since is None:
                tr.clear_since = wall
                # its title's numbers stop here: the headline says as of when
                tr.finding = tr.finding.model_copy(update={"clear_wall": wall})
            th = self._limits.get(ident[0])
            hold = FLAP_SETTLE_S if tr.finding.flaps else (th.close_after if th else 0.0)
            if _covered(tr.clear_since, wall, interval) >= hold:
                closed = tr.finding.model_copy(update={"state": "closed", "closed_seq": seq,
                                                       "closed_wall": wall})
                upd.closed.append(closed)
                self.history.append(closed)
                del self._tracks[ident]
        upd.open = self.open_findings
        return upd

    def _flapping(self, ident: tuple[str, str, str], wall: float) -> dict[str, Any]:
        """Count this opening; the flap fields of the new finding (none when it is not
        flapping)."""
        opens = self._opens.get(ident)
        if opens is None:
            opens = self._opens[ident] = deque()
        opens.append(wall)
        while opens and opens[0] < wall - FLAP_WINDOW_S:
            opens.popleft()
        if len(opens) < FLAP_OPENS:
            if len(opens) == 1 and len(self._opens) > 4 * HISTORY:  # bounded over weeks
                self._opens = {k: v for k, v in self._opens.items()
                               if v and v[-1] >= wall - FLAP_WINDOW_S}
            return {}
        return {"flaps": len(opens), "flap_span_s": round(wall - opens[0], 1)}

    def feed(self, tick: Tick) -> Update:
        """``observe`` then ``apply``: one tick through the checks and the hysteresis."""
        seen = self.observe(tick)
        upd = self.apply(tick.seq, tick.wall, seen, tick.interval)
        upd.seen = seen
        upd.gauges = self.gauges
        upd.checks_id = self.checks_id
        return upd

    @functools.cached_property
    def checks_id(self) -> str:
        """Identifies what ``observe`` computes: the source of every enabled check's module
        and of the code that runs them and decodes ticks, each check's thresholds, and
        the checks that failed to load. Two engines with the same id observe the same
        things in the same window, so a recording's stored observations can stand in
        for a re-run (``session.rerun``)."""
        h = hashlib.sha256(__version__.encode())
        # by content, not path: the same code checked out elsewhere (a worktree, an
        # installed package with checks/ inside) has the same id
        for digest in sorted(_file_digest(path) for path in _observing_sources()):
            h.update(digest)
        for c, th in self.checks:
            h.update(c.id.encode())
            module = sys.modules.get(c.evaluate.__module__)
            source = getattr(module, "__file__", None)
            h.update(_file_digest(source) if source else c.evaluate.__qualname__.encode())
            h.update(th.model_dump_json().encode())
        for f in self.failures:
            h.update(f"{f.name}:{f.error}".encode())
        return h.hexdigest()[:20]


def _changed(f: Finding, o: Observation, seq: int, wall: float) -> dict[str, Any]:
    """What an open finding's record keeps of ``o``, the observation of this tick, besides
    its newest numbers: a step of its story when its severity or what its title says
    (``wording``) changed, and the moment of a new worst severity (the title and numbers
    then). A finding never rewrites its past: readers lead with the worst and tell the
    story."""
    out: dict[str, Any] = {}
    if o.severity > f.worst or f.worst_wall is None:
        out.update(worst_title=o.title, worst_numbers=o.numbers, worst_wall=wall)
    last = f.story[-1] if f.story else None
    if last is None or last.severity != o.severity or wording(last.title) != wording(o.title):
        story, dropped = add_step(
            f.story, Step(seq=seq, wall=wall, severity=o.severity, title=o.title),
            max(f.worst, o.severity))
        out.update(story=story, story_dropped=f.story_dropped + dropped)
    return out


def _named(o: Observation, tick: Tick) -> Observation:
    """``o`` with its node's name and given role (the tick's), for the primary's or the
    replica's (``tick`` as the check saw it: its service's primary is ``primary``)."""
    if o.name or o.node == "pair":
        return o
    n = tick.primary if o.node == "primary" else tick.replica
    return o.model_copy(update={"name": n.name, "given": n.given_role})


def _observing_sources() -> list[str]:
    """Files of the code between a recorded tick and a check's observation: besides each
    enabled check's own module (``checks_id``), the helper modules the built-in checks
    share or keep apart (checks/_*.py, which the plug-in loader skips)."""
    import replmon.check
    import replmon.checks  # type: ignore[import-not-found,unused-ignore]
    import replmon.model
    import replmon.pair
    import replmon.units
    import replmon.windows

    model_dir = Path(replmon.model.__file__).parent
    checks_dir = Path(replmon.checks.__file__).parent
    return [__file__, *(str(m.__file__) for m in (replmon.check, replmon.pair, replmon.units,
                                                   replmon.windows)),
            *map(str, model_dir.glob("*.py")),
            *(str(p) for p in checks_dir.glob("_*.py") if not p.name.startswith("__"))]


@functools.lru_cache(maxsize=256)
def _file_digest(path: str) -> bytes:
    try:
        return hashlib.sha256(Path(path).read_bytes()).digest()
    except OSError:
        return path.encode()


def build_engine(settings: Mapping[str, Mapping[str, Any]] | None = None, *,
                 entry_points: bool = True, live: bool = False) -> Engine:
    """The engine with every discovered check, configured from ``[checks.*]`` settings;
    ``live``: a live command's, which runs for hours (``Engine``'s ``packed``)."""
    from replmon.plugins import discover

    checks, failures = discover(entry_points=entry_points)
    return Engine(configure(checks, settings), failures, packed=live)
