"""``replmon report FILE``: what a recording holds, as a dict (JSON) or text, and a
CSV export of chosen metrics.

One pass over the ticks gives the time span, the hosts and server versions
seen, the findings timeline (recorded live and re-run with today's checks),
the peaks of the key rates and the gaps (missed ticks, or wall-clock steps
longer than twice the interval).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TextIO

from replmon.engine import Update
from replmon.errors import SessionError
from replmon.model.findings import Finding
from replmon.model.incidents import FindingId, IncidentTracker, causality, finding_id
from replmon.model.roles import LAYER_NAMES
from replmon.model.tick import Tick
from replmon.output.incidents import incident_dict, timeline
from replmon.output.roles import ServiceRoles, service_roles
from replmon.session.cut import in_window
from replmon.session.decoding import Entry
from replmon.session.facts import ChunkFacts, better, metric, values_of, versions_of
from replmon.session.facts import findings_of as facts_findings
from replmon.session.format import RecordingMeta
from replmon.session.recording import Recording
from replmon.session.rerun import Extract, Rerun
from replmon.units import fmt_duration, tick_stamp
from replmon.wording import plural


def iso(wall: float | None) -> str:
    """A tick's time with its date and zone, by the rule of every view (``tick_stamp``:
    the local zone, truncated to the second): "2026-11-23 16:09:44 UTC"."""
    return tick_stamp(wall)


def _event(kind: str, f: Finding, wall: float) -> dict[str, Any]:
    """``at``/``time``: the tick the event happened in; ``since``/``since_time``: the
    finding's own time (the first tick its condition held), which the findings table,
    its detail and the text timeline's openings show."""
    ev = {"at": wall, "time": iso(wall), "event": kind, "check": f.check, "node": f.node,
          "name": f.name, "key": f.key, "severity": f.severity.label, "title": f.headline,
          "since": f.since_wall, "since_time": iso(f.since_wall), "since_seq": f.since_seq,
          "worst": f.worst.label}
    if f.worst_title:
        ev |= {"worst_title": f.worst_title, "worst_time": iso(f.worst_wall)}
    if f.told:
        ev["story"] = f.story_text()
    if f.flaps:
        ev |= {"flaps": f.flaps, "flap_span_s": f.flap_span_s}
    return ev


def _events(upd: Update, wall: float) -> list[dict[str, Any]]:
    return ([_event("opened", f, wall) for f in upd.opened]
            + [_event("closed", f, wall) for f in upd.closed])


@dataclass(frozen=True)
class TickFacts:
    """What the report keeps of one tick, taken where the tick is decoded (a worker
    process, for a long recording)."""

    wall: float
    interval: float
    missed: int
    seq: int
    versions: list[tuple[str, str]]
    """(node + server kind, version); the node by the role it was given (the header's)."""
    values: list[tuple[str, float, str, str]]
    """(node + PEAKS label, value, the node's name, its role in this tick) for each key
    rate this tick has; the node by the role it was given, which it keeps through a
    switchover (the header's nodes), as the screen keeps its column."""
    recorded: list[dict[str, Any]]
    """Findings events the live engine recorded with this tick."""
    more: Any = None
    """What a caller's own Extract took from this tick (``report(rec, more=...)``: the
    HTML page's chart points), None when it gave none."""


def tick_facts(e: Entry) -> TickFacts:
    t = e.tick
    return TickFacts(t.wall, t.interval, t.missed, t.seq, versions_of(t), values_of(t),
                     _events(e.update, t.wall) if e.update is not None else [])


StoredMore = Callable[[ChunkFacts, list[float]], list[Any] | None]
"""What a caller's Extract (``report(rec, more=...)``) gives for each tick of a chunk,
taken from its summary frame and its ticks' walls instead of the decoded ticks; None when the
frame cannot give it (the ticks are decoded then)."""


StoredChunk = tuple[ChunkFacts, list[float], list[Any] | None]
"""A chunk's summary frame, its intact ticks' walls and what ``more`` gives for them."""


def stored_chunks(recording: Recording, more: StoredMore | None = None
                  ) -> list[StoredChunk] | None:
    """Every chunk's summary frame (``stored_facts``), None unless every chunk has one
    (and, with ``more``, unless it gives each chunk's ``more`` too)."""
    chunks = []
    for ci in range(len(recording.chunks)):
        facts, walls = recording.chunk_facts(ci, charts=more is not None)
        if facts is None:
            return None
        extra = more(facts, walls) if more is not None else None
        if more is not None and (extra is None or len(extra) != len(walls)):
            return None
        chunks.append((facts, walls, extra))
    return chunks


def stored_facts(recording: Recording, more: StoredMore | None = None
                 ) -> Iterator[tuple[int, TickFacts]] | None:
    """(index, TickFacts) of every intact tick from the recorder's summary frames, without
    decoding a tick: None unless every chunk has one (a recording of an older version,
    one written from derived rates, or a damaged chunk: the ticks are decoded then),
    and, with ``more``, unless it gives each chunk's ``more`` too.
    A tick carries only the values that are its chunk's peaks (the report wants no
    other), and the chunk's versions on its first tick."""
    chunks = stored_chunks(recording, more)
    if chunks is None:
        return None

    def ticks() -> Iterator[tuple[int, TickFacts]]:
        for facts, walls, extra in chunks:
            values: dict[int, list[tuple[str, float, str, str]]] = {}
            for key, (val, k, name, role) in facts.peaks.items():
                values.setdefault(k, []).append((key, val, name, role))
            for k, wall in enumerate(walls):
                events = facts.events.get(k)
                recorded = ([_event(kind, f, wall) for kind, f in facts_findings(events)]
                            if events else [])
                yield facts.first + k, TickFacts(
                    wall, facts.interval[k], facts.missed[k], facts.seq[k],
                    list(facts.versions) if k == 0 else [], values.get(k, []), recorded,
                    None if extra is None else extra[k])
    return ticks()


def _facts_beside(run: Rerun, stored: Iterator[tuple[int, TickFacts]]
                  ) -> Iterator[tuple[int, Update, TickFacts]]:
    """The re-run's updates with the stored facts of the same ticks (a tick the re-run
    could not decode is skipped in both)."""
    at, facts = next(stored, (None, None))
    for index, upd in run.indexed():
        while at is not None and at < index:
            at, facts = next(stored, (None, None))
        if at == index and facts is not None:
            yield index, upd, facts


def tick_facts_and(more: Extract, e: Entry) -> TickFacts:
    """``tick_facts`` with ``more(e)`` in its ``more`` (module level, so a worker can be
    handed it bound with functools.partial)."""
    return replace(tick_facts(e), more=more(e))


def report(recording: Recording, more: Extract | None = None,
           more_stored: StoredMore | None = None) -> dict[str, Any]:
    """Everything ``replmon report`` prints, as JSON-ready data. One pass: the checks
    re-run and the facts are taken together (on every core, for a long recording).
    ``more``: also take this from every intact tick, where it is decoded; the report's
    "more" is then the list of what it returned, in tick order (the HTML page's charts).
    ``more_stored``: what gives the same from the summary frames; with it, a recording whose
    every chunk has them decodes no tick (without it, ``more`` decodes every tick)."""
    meta = recording.meta
    run = Rerun(recording)
    extract = tick_facts if more is None else partial(tick_facts_and, more)
    kept: list[Any] = []
    tracker = IncidentTracker(causality(run.engine.checks))
    versions: dict[str, set[str]] = {}
    peaks: dict[str, dict[str, Any]] = {}
    recorded: list[dict[str, Any]] = []
    rerun_events: list[dict[str, Any]] = []
    as_opened: dict[FindingId, Finding] = {}
    """Each finding as it opened: the incidents say it in the events' words."""
    gaps: list[dict[str, Any]] = []
    first: TickFacts | None = None
    prev: TickFacts | None = None
    count = 0
    chunks = (stored_chunks(recording) if more is None
              else stored_chunks(recording, more_stored) if more_stored is not None else None)
    if chunks is not None:
        got = _from_chunks(recording, chunks, more is not None)
        if got is not None:
            return got
        run = Rerun(recording)  # (ticks the re-run could not read: tick by tick below)
        tracker = IncidentTracker(causality(run.engine.checks))
    stored = None if chunks is None else stored_facts(
        recording, more_stored if more is not None else None)
    passes = (run.with_facts(extract) if stored is None else _facts_beside(run, stored))
    for _, upd, t in passes:
        count += 1
        if more is not None:
            kept.append(t.more)
        first = first or t
        for key, v in t.versions:
            versions.setdefault(key, set()).add(v)
        for key, val, name, role in t.values:
            best = peaks.get(key)
            if better(key, val, None if best is None else best["value"]):
                peaks[key] = {"value": val, "at": t.wall, "time": iso(t.wall), "node": name,
                              "role": role, "what": key.partition(" ")[2]}
        if prev is not None:
            step = t.wall - prev.wall
            if t.missed or step > 2 * t.interval:
                gaps.append({"after_seq": prev.seq, "from": iso(prev.wall), "to": iso(t.wall),
                             "gap_s": round(step, 3), "missed": t.missed})
        recorded.extend(t.recorded)
        if meta.window is None or t.wall >= meta.window[0]:  # a cut: not its warm-up's
            rerun_events.extend(_events(upd, t.wall))
        as_opened.update((finding_id(f), f) for f in upd.opened)
        tracker.update(t.wall, upd.open)
        prev = t
    return _report_dict(recording, run, tracker, count=count,
                        span=(first.wall, prev.wall) if first and prev else None,
                        versions=versions, recorded=recorded, rerun_events=rerun_events,
                        as_opened=as_opened, peaks=peaks, gaps=gaps,
                        kept=kept if more is not None else None)


def _from_chunks(recording: Recording, chunks: list[StoredChunk], more: bool
                 ) -> dict[str, Any] | None:
    """``report`` from the summary frames, chunk by chunk, and the re-run's changes
    (``Rerun.changes``: the ticks where findings open, close or change their severity or
    wording, not every tick of a long outage): the same report as tick by tick (tests/
    unit/session/test_changes.py), a week's in a few seconds. None when the re-run read
    fewer ticks than the summary frames list (damaged ticks: the caller goes tick by
    tick, skipping them in both)."""
    meta = recording.meta
    run = Rerun(recording)
    tracker = IncidentTracker(causality(run.engine.checks))
    versions: dict[str, set[str]] = {}
    peaks: dict[str, dict[str, Any]] = {}
    recorded: list[dict[str, Any]] = []
    gaps: list[dict[str, Any]] = []
    kept: list[Any] = []
    count = 0
    prev: tuple[float, int] | None = None
    """(wall, seq) of the tick before."""
    for facts, walls, extra in chunks:
        if more and extra is not None:
            kept.extend(extra)
        if not walls:
            continue
        for key, v in facts.versions:
            versions.setdefault(key, set()).add(v)
        for key, (val, k, name, role) in facts.peaks.items():
            best = peaks.get(key)
            if better(key, val, None if best is None else best["value"]):
                peaks[key] = {"value": val, "at": walls[k], "time": iso(walls[k]),
                              "node": name, "role": role, "what": key.partition(" ")[2]}
        missed, interval, seqs = facts.missed, facts.interval, facts.seq
        for k, wall in enumerate(walls):
            if prev is not None:
                step = wall - prev[0]
                if missed[k] or step > 2 * interval[k]:
                    gaps.append({"after_seq": prev[1], "from": iso(prev[0]), "to": iso(wall),
                                 "gap_s": round(step, 3), "missed": missed[k]})
            prev = (wall, seqs[k])
        for k, events in sorted(facts.events.items()):
            recorded.extend(_event(kind, f, walls[k]) for kind, f in facts_findings(events))
        count += len(walls)
    start = next((w[0] for _, w, _ in chunks if w), None)
    span = (start, prev[0]) if start is not None and prev is not None else None
    rerun_events: list[dict[str, Any]] = []
    as_opened: dict[FindingId, Finding] = {}
    last = -1
    for index, upd in run.changes():
        if meta.window is None or upd.wall >= meta.window[0]:
            rerun_events.extend(_events(upd, upd.wall))
        as_opened.update((finding_id(f), f) for f in upd.opened)
        tracker.update(upd.wall, upd.open)
        last = index
    if run.ticks_read != count or (count and last < 0):
        return None
    return _report_dict(recording, run, tracker, count=count, span=span, versions=versions,
                        recorded=recorded, rerun_events=rerun_events, as_opened=as_opened,
                        peaks=peaks, gaps=gaps, kept=kept if more else None)


def _report_dict(recording: Recording, run: Rerun, tracker: IncidentTracker, *, count: int,
                 span: tuple[float, float] | None, versions: dict[str, set[str]],
                 recorded: list[dict[str, Any]], rerun_events: list[dict[str, Any]],
                 as_opened: dict[FindingId, Finding], peaks: dict[str, dict[str, Any]],
                 gaps: list[dict[str, Any]], kept: list[Any] | None) -> dict[str, Any]:
    meta = recording.meta
    nodes = {r: n.name for r, n in meta.nodes.items()}
    roles = _roles_at_end(recording)
    incidents = in_window(meta, tracker.incidents)
    return {
        "file": str(recording.path),
        "format_version": meta.version,
        "replmon_version": meta.replmon_version,
        "reconstructed": meta.reconstructed,
        "lacks": recording.lacks(),
        "note": meta.note,
        "ticks": count,
        "interval_s": meta.interval,
        "start": iso(span[0] if span else None),
        "end": iso(span[1] if span else None),
        "duration_s": round(span[1] - span[0], 3) if span else 0.0,
        "nodes": {role: info.model_dump() for role, info in meta.nodes.items()},
        "roles_at_end": [r.as_dict() for r in roles],
        "versions_seen": {k: sorted(v) for k, v in sorted(versions.items())},
        "findings_recorded": recorded if meta.findings_recorded else None,
        "findings_rerun": rerun_events,
        "still_open_rerun": [f.headline for f in run.engine.open_findings],
        "window": _window(meta),
        "incidents": [incident_dict(i, as_opened) for i in incidents],
        "incident_timelines": [timeline(i, nodes, as_opened) for i in incidents],
        "peaks": {k: v for k, v in peaks.items() if round(v["value"], 1) or "lowest" in k},
        "gaps": gaps,
        "problems": list(recording.problems),
        "closed_cleanly": recording.end is not None,
    } | ({"more": kept} if kept is not None else {})


def _roles_at_end(recording: Recording) -> list[ServiceRoles]:
    """Each service's primary at the recording's last tick (one tick decoded; none when
    it is damaged)."""
    if not len(recording):
        return []
    try:
        return service_roles(recording.tick_at(len(recording) - 1))
    except SessionError:
        return []


def _window(meta: RecordingMeta) -> dict[str, Any] | None:
    """A cut's window (``replmon cut``): the stretch it was cut for, after its warm-up."""
    if meta.window is None:
        return None
    return {"cut_from": meta.cut_from, "from": iso(meta.window[0]), "to": iso(meta.window[1])}


def _when(e: dict[str, Any]) -> str:
    """An event's time in the text timeline: an opening at the finding's since-time, as
    the findings table and its detail say it (the tick it opened in, after its hold, is
    the JSON's "at"); a closing at its tick's."""
    return str(e["since_time"] if e["event"] == "opened" else e["time"])


def _level(e: dict[str, Any]) -> str:
    """An event's severity in the text timeline: a closing's worst (what it was, not
    what it ended as; reports written before it was kept: its last)."""
    return str(e.get("worst") or e["severity"]) if e["event"] == "closed" else str(e["severity"])


def _peak_label(key: str, peak: dict[str, Any]) -> str:
    """"lab-replica (primary) mysql qps": the node's name, its role at the peak, what."""
    if "node" not in peak:  # a report written before peaks named their node
        return key
    return f"{peak['node']} ({peak['role']}) {peak['what']}"


def _incident_text(rep: dict[str, Any]) -> list[str]:
    """The incidents section: a heading that says what it holds, then each incident
    (root, what followed, likely cause, next step), a blank line between them."""
    timelines = rep.get("incident_timelines") or []
    where = " inside the cut's window" if rep.get("window") else ""
    if not timelines:
        return ["", f"INCIDENTS{where}: none"]
    out = ["", f"INCIDENTS{where}: {len(timelines)} (each: its root, the findings that "
           "followed, the likely cause and the next step)"]
    for tl in timelines:
        out += ["", *(f"  {line}" for line in tl)]
    return out


def render_text(rep: dict[str, Any]) -> str:
    """The report for a terminal."""
    lines = [f"{rep['file']}: {plural(rep['ticks'], 'tick')}, {rep['start']} .. {rep['end']} "
             f"({rep['duration_s']:.0f} s, every {rep['interval_s']} s)",
             f"format v{rep['format_version']}, written by replmon {rep['replmon_version']}"
             + (", RECONSTRUCTED (not a live capture)" if rep["reconstructed"] else "")
             + ("" if rep["closed_cleanly"] else ", not closed cleanly")]
    if rep.get("lacks"):
        lines.append(f"lacks: {rep['lacks']}")
    if rep["note"]:
        lines.append(f"note: {rep['note']}")
    if rep.get("window"):
        w = rep["window"]
        lines.append(f"cut from {w['cut_from']}: the stretch {w['from']} .. {w['to']}; the "
                     "ticks before it are the checks' warm-up")
    lines.append("")
    lines.append("nodes:")
    for role, info in rep["nodes"].items():
        lines.append(f"  {role:8} {info['name']} ({info['host'] or '?'})")
    for k, vs in rep["versions_seen"].items():
        lines.append(f"  {k:16} {', '.join(vs)}")
    for r in rep.get("roles_at_end") or []:
        lines.append(f"  {LAYER_NAMES[r['service']] + ' roles':16} {r['primary']} → "
                     f"{r['replica']} at the end, for {fmt_duration(r['held_s'])} "
                     f"({r['held_how']})")
    for title, key in (("findings recorded live", "findings_recorded"),
                       ("findings re-run with today's checks", "findings_rerun")):
        events = rep[key]
        if events is None:
            continue
        lines += ["", f"{title}: {plural(len(events), 'event')}"]
        lines += [f"  {_when(e)}  {e['event']:6} {_level(e):8} {e['node']:7} "
                  f"{e['check']}: {e.get('story') or e['title']}" for e in events]
    lines += _incident_text(rep)
    lines += ["", "peaks (each node's, and its role then; rates that stayed at 0 left out):"]
    labels = {k: _peak_label(k, v) for k, v in rep["peaks"].items()}
    wide = max(map(len, labels.values()), default=0)
    lines += [f"  {labels[k]:{wide}} {v['value']:>14,.1f}  at {v['time']}"
              for k, v in rep["peaks"].items()]
    lines += ["", f"gaps: {len(rep['gaps'])}"]
    lines += [f"  {g['from']} -> {g['to']}: {g['gap_s']} s, {g['missed']} missed"
              for g in rep["gaps"]]
    if rep["problems"]:
        lines += ["", "damage:"] + [f"  {p}" for p in rep["problems"]]
    return "\n".join(lines) + "\n"


def export_csv(ticks: Iterable[Tick], paths: Sequence[str], out: TextIO) -> int:
    """One CSV row per tick: seq, wall, UTC time, then each dotted path (empty when
    None). Returns the number of rows."""
    w = csv.writer(out)
    w.writerow(["seq", "wall", "time", *paths])
    rows = 0
    for t in ticks:
        vals = [metric(t, p) for p in paths]
        w.writerow([t.seq, f"{t.wall:.3f}", iso(t.wall),
                    *("" if v is None else v for v in vals)])
        rows += 1
    return rows
