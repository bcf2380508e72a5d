"""What the tests hold ``replmon cut`` to (unit tests on the shipped sessions, the live
tests on a MySQL 9.7 recording and on ``replmon serve``'s): cut around every incident
of a recording, and ``check --replay``'s incidents of the cut, inside its window, are
the whole file's that open there: same roots and findings, same open and close times.

Cuts whose spans coincide (short sessions: every incident's margins reach both ends)
are made and re-checked once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from replmon.model.incidents import Incident, IncidentTracker, causality
from replmon.output.incidents import incident_dict
from replmon.session.cut import Cut, cut, incident_span, incidents_of
from replmon.session.recording import Recording, open_recording
from replmon.session.rerun import Rerun

Said = tuple[Any, ...]
"""An incident as the comparison sees it."""


def said(inc: Incident, until: float) -> Said:
    """Opening time, closing time, roots and findings (each with its check, node, key,
    since-time, severity and closing time); a close after ``until`` (the cut's last tick)
    reads as still open, as it is in the cut."""
    d = incident_dict(inc)

    def closed(wall: float | None) -> float | None:
        return wall if wall is not None and wall <= until + 1e-6 else None

    def brief(b: dict[str, Any]) -> Said:
        return (b["check"], b["node"], b["key"], b["since"], b["severity"], closed(b["closed"]))

    return (d["opened"], closed(d["closed"]), [brief(b) for b in d["roots"]],
            sorted(brief(b) for b in d["findings"]))


def cut_every_incident(path: Path, out_dir: Path, margin_s: float = 60.0,
                       pick: Callable[[list[Incident]], list[Incident]] = list,
                       ) -> list[tuple[Cut, list[Said], list[Said]]]:
    """For each incident of ``path`` (those ``pick`` keeps): the cut around it, the whole
    file's incidents that open in the cut's window and the cut's own (both as ``said``;
    equal when the cut is right). One cut per distinct span; one re-run of the whole."""
    with open_recording(path) as rec:
        incidents, as_of = _whole(rec)
        spans = sorted({incident_span(rec, inc, margin_s) for inc in pick(incidents)})
        cuts = [cut(rec, first, last, out_dir / f"{path.stem}.cut{n}.rmrec")
                for n, (first, last) in enumerate(spans)]
    out = []
    for done in cuts:
        lo, hi = done.window
        want = [s for s in as_of[hi] if s[0] >= lo]
        with open_recording(done.path) as piece:
            out.append((done, want, [said(i, hi) for i in incidents_of(piece)]))
    return out


def _whole(rec: Recording) -> tuple[list[Incident], dict[float, list[Said]]]:
    """The whole file's incidents, and at each tick (by its wall time) the incidents as
    they stand then (a finding whose hold ends after a cut's last tick opens in
    neither file).

    A closed incident no longer changes (the tracker joins new findings to open ones
    only and updates only open findings; its closing times are all before any later
    tick): what it says is worked out once, at the tick it closed, and kept. Each tick
    then describes only the open incidents (a recording whose findings open and close
    all along has hundreds closed: describing every one at every tick cost ~2/3 of a
    cut test's CPU)."""
    run = Rerun(rec)
    tracker = IncidentTracker(causality(run.engine.checks))
    as_of: dict[float, list[Said]] = {}
    closed: dict[int, Said] = {}
    for upd in run:
        tracker.update(upd.wall, upd.open)
        now = []
        for i in tracker.incidents:
            s = closed.get(i.id)
            if s is None:
                s = said(i, upd.wall)
                if not i.open:
                    closed[i.id] = s
            now.append(s)
        as_of[upd.wall] = now
    return tracker.incidents, as_of
