"""Incidents: the findings of one pair grouped under their likely root.

A check declares, next to its code, which other checks' findings its own can explain
(``Explains``: the effect's check, where it appears relative to the cause, how long
before the cause it may already be open, and why, in words). The tracker links
findings by those declarations alone, so live, replay and a re-check give the same
incidents from the same findings:

- a finding that opens joins the open incident holding a finding that explains it or
  that it explains; it links two incidents: they become one (the older one's id);
  linked to none: it opens an incident of its own. Unrelated findings open at the same
  time stay apart.
- the root is the finding nothing else in the incident explains; when several remain
  (or a circle of causes), the ones that explain the most of the others, and of those
  the earliest: one usually, two or more said as such.
- an incident's severity is its worst finding's (worst while open); it opens with its
  first finding (the earliest ``since``) and closes in the tick its last finding
  closes. A finding that opens after that starts a new incident.

Layering: model floor (findings only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal

from replmon.model.findings import Finding, NodeRef, Severity

Where = Literal["same", "other", "replica", "either", "pair"]
"""Where the effect is, relative to the cause's node: the same node, the other node of
the pair, the replica of a cause on the primary (what replicates), either node or the
pair, or the pair itself (a pair-view check)."""


@dataclass(frozen=True)
class Explains:
    """This check's finding can explain a finding of check ``effect``."""

    effect: str
    """The id of the check whose finding this one can explain (it may be this check,
    with another key)."""
    where: Where
    why: str
    """The mechanism, in words: it is documentation too (docs/checks.md)."""
    before_s: float = 30.0
    """Seconds the effect may have opened before its cause (a consequence can be seen
    first: its check holds less long, or reads it sooner); after the cause, any time
    while the incident is open."""
    cause_key: str | None = None
    """Only a cause finding with this key (e.g. memory_ceiling's "redis_memory"); with a
    ``*``, keys matching it as a shell pattern ("*/lag")."""
    effect_key: str | None = None
    """Only an effect finding with this key (a pattern likewise)."""


Causality = Mapping[str, Sequence[Explains]]
"""Check id -> what its findings can explain (Check.explains of every check)."""

FindingId = tuple[str, str, str, int]
"""(check, node, key, since_seq): one finding, for as long as it is open."""


def finding_id(f: Finding) -> FindingId:
    return (f.check, f.node, f.key, f.since_seq)


def _where(cause: NodeRef, effect: NodeRef, where: Where) -> bool:
    if where == "same":
        return effect == cause
    if where == "other":
        return {cause, effect} == {"primary", "replica"}
    if where == "replica":
        return (cause, effect) == ("primary", "replica")
    if where == "pair":
        return effect == "pair"
    return True


def _key_ok(key: str, wanted: str | None) -> bool:
    if wanted is None:
        return True
    return fnmatchcase(key, wanted) if "*" in wanted else key == wanted


def explains(cause: Finding, effect: Finding, links: Causality) -> Explains | None:
    """The declaration by which ``cause`` explains ``effect``, if one does."""
    if finding_id(cause) == finding_id(effect):
        return None
    for link in links.get(cause.check, ()):
        if link.effect != effect.check:
            continue
        if not _key_ok(cause.key, link.cause_key) or not _key_ok(effect.key, link.effect_key):
            continue
        if not _where(cause.node, effect.node, link.where):
            continue
        if effect.since_wall < cause.since_wall - link.before_s:
            continue
        return link
    return None


@dataclass
class Incident:
    """Findings linked by their checks' declarations, under their root."""

    id: int
    """1, 2, ... in the order incidents opened in this stream (deterministic)."""
    findings: dict[FindingId, Finding] = field(default_factory=dict)
    """Every finding that joined, as last seen (closed ones stay)."""
    closed_at: dict[FindingId, float] = field(default_factory=dict)
    """Wall time of the tick each closed finding closed in."""
    closed_wall: float | None = None
    """The tick its last finding closed in (None while open)."""
    roots: list[Finding] = field(default_factory=list)
    """The root, or the candidates when more than one remains (see the module doc)."""

    @property
    def open(self) -> bool:
        return self.closed_wall is None

    @property
    def opened_wall(self) -> float:
        return min(f.since_wall for f in self.findings.values())

    @property
    def severity(self) -> Severity:
        return max(f.worst for f in self.findings.values())

    @property
    def root(self) -> Finding:
        return self.roots[0]

    @property
    def consequences(self) -> list[Finding]:
        """The other findings, in the order they opened."""
        roots = {finding_id(r) for r in self.roots}
        return sorted((f for fid, f in self.findings.items() if fid not in roots),
                      key=lambda f: (f.since_wall, f.check, f.node, f.key))


def find_roots(findings: Iterable[Finding], links: Causality) -> list[Finding]:
    """The findings nothing else in ``findings`` explains (all of them in a circle), the
    ones that explain the most others first, then the earliest."""
    fs = sorted(findings, key=lambda f: (f.since_wall, f.check, f.node, f.key))
    edges = {finding_id(c): [e for e in fs if explains(c, e, links)] for c in fs}
    explained = {finding_id(e) for es in edges.values() for e in es}
    candidates = [f for f in fs if finding_id(f) not in explained] or fs

    def reach(f: Finding) -> int:
        seen: set[FindingId] = set()
        todo = [f]
        while todo:
            for e in edges[finding_id(todo.pop())]:
                if finding_id(e) not in seen:
                    seen.add(finding_id(e))
                    todo.append(e)
        return len(seen - {finding_id(f)})

    best = max(reach(f) for f in candidates)
    top = [f for f in candidates if reach(f) == best]
    return sorted(top, key=lambda f: (-f.worst, f.since_wall, f.check, f.node, f.key))


class IncidentTracker:
    """Feed it each tick's open findings (the engine's Update.open) in order; it keeps
    the pair's incidents."""

    def __init__(self, links: Causality) -> None:
        self.links = links
        self.incidents: list[Incident] = []
        self._of: dict[FindingId, Incident] = {}
        """The open incident each open finding belongs to."""
        self._next = 1

    @property
    def open(self) -> list[Incident]:
        """The open incidents, worst first, then oldest."""
        return sorted((i for i in self.incidents if i.open),
                      key=lambda i: (-i.severity, i.opened_wall, i.id))

    def update(self, wall: float, open_findings: Sequence[Finding]) -> list[Incident]:
        """One tick: ``open_findings`` are every finding open after it. Returns the
        incidents whose members or state changed in it."""
        changed: dict[int, Incident] = {}
        now = {finding_id(f): f for f in open_findings}
        for fid, inc in list(self._of.items()):  # closed since the last tick
            if fid not in now:
                inc.closed_at[fid] = wall
                del self._of[fid]
                changed[inc.id] = inc
        for fid, f in now.items():  # still open: its newest severity and title
            if fid in self._of:
                self._of[fid].findings[fid] = f
        new = sorted((f for fid, f in now.items() if fid not in self._of),
                     key=lambda f: (f.since_wall, f.check, f.node, f.key))
        for f in new:
            inc = self._join(f)
            inc.findings[finding_id(f)] = f
            self._of[finding_id(f)] = inc
            changed[inc.id] = inc
        for inc in list(changed.values()):
            if inc.open and not any(fid in self._of for fid in inc.findings):
                inc.closed_wall = wall
            inc.roots = find_roots(inc.findings.values(), self.links)
        return [changed[k] for k in sorted(changed) if changed[k] in self.incidents]

    def _join(self, f: Finding) -> Incident:
        """The open incident ``f`` belongs to (merging those it links), or a new one."""
        linked = sorted({inc.id: inc for inc in self.incidents if inc.open and any(
            explains(m, f, self.links) or explains(f, m, self.links)
            for m in inc.findings.values())}.values(), key=lambda i: i.id)
        if not linked:
            inc = Incident(self._next)
            self._next += 1
            self.incidents.append(inc)
            return inc
        keep, *rest = linked
        for other in rest:  # one cause behind both: one incident
            keep.findings.update(other.findings)
            keep.closed_at.update(other.closed_at)
            for fid in other.findings:
                if self._of.get(fid) is other:
                    self._of[fid] = keep
            self.incidents.remove(other)
        return keep


def incidents_of(updates: Iterable[tuple[float, Sequence[Finding]]],
                 links: Causality) -> list[Incident]:
    """Every incident of a stream of (tick wall, open findings), in opening order: what a
    replay or a re-check reports."""
    tracker = IncidentTracker(links)
    for wall, open_findings in updates:
        tracker.update(wall, open_findings)
    return tracker.incidents


def causality(checks: Iterable[Any]) -> Causality:
    """Check id -> its declarations (``explains``), from checks (Check objects, or the
    engine's (check, thresholds) pairs). Here, beside the Causality it makes, so that
    session (``replmon cut``) and the outputs take it from below both."""
    out: dict[str, tuple[Any, ...]] = {}
    for c in checks:
        check = c[0] if isinstance(c, tuple) else c
        out[check.id] = tuple(getattr(check, "explains", ()))
    return out
