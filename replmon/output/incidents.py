"""Incidents (replmon/model/incidents.py) as the outputs say them: one line that leads
with the root ("incident on replica: Redis uses 13.9 GiB ... -> Swapping ... -> ops/s
74,460 -> 6,778"), a dict for JSON, a timeline for the report. Times by the rule of
every view (tick_clock / tick_stamp)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replmon.model.findings import Finding, Severity
from replmon.model.incidents import FindingId, Incident, finding_id
from replmon.units import tick_clock, tick_stamp


def _where(f: Finding, nodes: Mapping[str, str]) -> str:
    return f.where(dict(nodes))


def short(title: str, *, root: bool = False) -> str:
    """A title's first clause: the root's up to its first "; " (what it adds after is
    what its consequences say), a consequence's up to its first ", ", "; " or " (":
    "Swapping: 497 pages/s in, 0 out, ..." -> "Swapping: 497 pages/s in"."""
    cut = ("; ",) if root else ("; ", ", ", " (")
    end = min((i for i in (title.find(c) for c in cut) if i > 0), default=len(title))
    return title[:end]


def incident_line(inc: Incident, nodes: Mapping[str, str] | None = None) -> str:
    """The incident in one line, its root first, then its consequences in the order they
    opened, each by its title's first clause; two candidate roots are both named."""
    nodes = nodes or {}
    roots = " or ".join(short(r.headline, root=True) for r in inc.roots)
    where = _where(inc.root, nodes)
    chain = [roots, *((f"{f.node}: " if f.node != inc.root.node else "") + short(f.headline)
                      for f in inc.consequences)]
    return f"incident on {where}: " + " → ".join(chain)


AsOpened = Mapping[FindingId, Finding]
"""Each finding as it opened (its numbers then), by its id: what a report says of it
everywhere, so one event reads one number (the tracker holds each finding's newest)."""


def _as_opened(f: Finding, opened: AsOpened | None) -> Finding:
    return (opened or {}).get(finding_id(f), f)


def finding_json(f: Finding) -> dict[str, Any]:
    """A finding for JSON outputs (``check --format json``, /findings.json): its record,
    severities as words (its story's too), and its story in one line ("" without one)."""
    d = f.model_dump(mode="json")
    d["severity"] = f.severity.label
    d["worst"] = f.worst.label
    d["story"] = [s | {"severity": Severity(s["severity"]).label} for s in d["story"]]
    d["story_text"] = f.story_text() if f.told else ""
    return d


def _brief(f: Finding, closed_at: float | None, latest: Finding | None = None
           ) -> dict[str, Any]:
    """``f`` as it opened (or as last seen), with ``latest``'s past (as last seen): its
    worst and its story."""
    last = latest or f
    out = {"check": f.check, "node": f.node, "name": f.name, "key": f.key,
           "numbers": f.numbers, "severity": last.worst.label,
           "title": f.headline, "since": f.since_wall, "since_time": tick_stamp(f.since_wall),
           "closed": closed_at, "closed_time": tick_stamp(closed_at) if closed_at else None,
           "cause": f.cause, "next_step": f.next_step}
    if last.worst_title:
        out |= {"worst_title": last.worst_title, "worst_numbers": last.worst_numbers,
                "worst_time": tick_stamp(last.worst_wall)}
    if last.told:
        out["story"] = last.story_text(closed_at)
    return out


def incident_dict(inc: Incident, opened: AsOpened | None = None) -> dict[str, Any]:
    """``{id, root, roots, findings, opened, closed, severity}`` for JSON outputs; each
    finding with its newest title, or with ``opened`` the one it opened with."""
    def brief(f: Finding) -> dict[str, Any]:
        return _brief(_as_opened(f, opened), inc.closed_at.get(finding_id(f)), f)

    return {"id": inc.id, "root": brief(inc.root), "roots": [brief(r) for r in inc.roots],
            "findings": [brief(f) for f in [*inc.roots, *inc.consequences]],
            "opened": inc.opened_wall, "opened_time": tick_stamp(inc.opened_wall),
            "closed": inc.closed_wall,
            "closed_time": tick_stamp(inc.closed_wall) if inc.closed_wall else None,
            "severity": inc.severity.label}


def _told(inc: Incident, f: Finding, indent: str) -> list[str]:
    """The line a timeline adds under a finding whose severity or words changed while
    open (``f`` as last seen): its story, to when it closed."""
    if not f.told:
        return []
    return [f"{indent}story: {f.story_text(inc.closed_at.get(finding_id(f)))}"]


def timeline(inc: Incident, nodes: Mapping[str, str] | None = None,
             opened: AsOpened | None = None) -> list[str]:
    """The incident's lines for a report: its number, severity and span; its root(s) and
    the findings that followed, each with its time and (with ``opened``) the title it
    opened with, the same words as the report's events; then the root's likely cause and
    next step, as its check says them."""
    nodes = nodes or {}
    end = "still open" if inc.closed_wall is None else f"closed {tick_clock(inc.closed_wall)}"
    lines = [f"incident {inc.id} ({inc.severity.label}) {tick_clock(inc.opened_wall)} - {end}"]
    roots = [_as_opened(f, opened) for f in inc.roots]
    root_word = "roots" if len(roots) > 1 else "root"
    for f, last in zip(roots, inc.roots, strict=True):
        lines.append(f"  {root_word}: {tick_clock(f.since_wall)} {_where(f, nodes)} "
                     f"{f.check}: {f.headline}")
        lines += _told(inc, last, "    ")
    for c in inc.consequences:
        f = _as_opened(c, opened)
        lines.append(f"    then {tick_clock(f.since_wall)} {_where(f, nodes)} "
                     f"{f.check}: {f.headline}")
        lines += _told(inc, c, "      ")
    for f in roots:
        who = f" ({f.check} on {_where(f, nodes)})" if len(roots) > 1 else ""
        if f.cause:
            lines.append(f"  likely cause{who}: {f.cause}")
        if f.next_step:
            lines.append(f"  next step{who}: {f.next_step}")
    return lines
