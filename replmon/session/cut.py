"""``replmon cut``: a stretch of a recording as a recording of its own, to share one
incident with people who were not at the terminal.

The cut holds the stretch asked for (its *window*) and, before it, *warm-up* ticks: at
least the checks' longest window (``Engine.window_ticks``: 300 s) of intact ticks,
from the start of a chunk, as the replay's seek warms its engine (``intact_before``).
Today's checks then observe at every tick of the window exactly what they observe there
in the whole file (an observation is a pure function of the window before it), and open
and close the same findings at the same ticks. The header's ``window`` marks where the
stretch starts and ends: ``check --replay`` and ``report`` count only the incidents that
open inside it (``in_window``), never one that the warm-up alone opens.

The ticks are decoded and written again by ``RecordingWriter`` (header, nodes, server
versions, chunks, end frame), so the cut is a recording like any other:

- rates read as in the whole file: the writer stores the ones a reader could not derive
  (the first tick, a tick after damaged ones);
- the live engine's recorded findings stay with their ticks;
- its stored observations (observations frames) stay too: each tick is written with what the live
  engine saw there (its chunk's observations frame in the whole file), and the writer packs them
  again. Where the whole file has none usable (format 1, damage, another engine) the
  cut's chunk has none either, and a re-run observes it again.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from replmon import __version__
from replmon.configfile import shown, write_problem
from replmon.engine import Update, build_engine
from replmon.errors import SessionError
from replmon.model.incidents import Incident, IncidentTracker, causality
from replmon.session.decoding import Entry
from replmon.session.format import (
    FORMAT_VERSION,
    ChunkObservations,
    RecordingMeta,
    unpack_seen,
)
from replmon.session.recorder import RecordingWriter
from replmon.session.recording import Recording
from replmon.session.rerun import Rerun


@dataclass(frozen=True)
class Cut:
    """What ``cut`` wrote."""

    path: Path
    ticks: int
    """Ticks written: warm-up and window."""
    warm_up: int
    """Of those, ticks before the window."""
    first_wall: float
    """Wall time of the first tick written (the warm-up's start)."""
    window: tuple[float, float]
    """Wall times of the window's first and last tick."""
    lost: int
    """Ticks of the span asked for (warm-up and window) that the input had lost."""
    observations: int
    """Chunks written with the live engine's stored observations."""


def in_window(meta: RecordingMeta, incidents: Iterable[Incident]) -> list[Incident]:
    """The incidents that open inside a cut's window (all of them in a whole recording):
    those the warm-up opens are the whole file's business, not the cut's."""
    if meta.window is None:
        return list(incidents)
    return [i for i in incidents if i.opened_wall >= meta.window[0]]


def incidents_of(rec: Recording, until: float = math.inf) -> list[Incident]:
    """The incidents ``check --replay`` finds in ``rec`` (today's checks, the recorded
    thresholds), by their ids as ``report`` and ``check --format json`` number them; as
    they stand at the tick at ``until`` (epoch s), when given."""
    run = Rerun(rec)
    tracker = IncidentTracker(causality(run.engine.checks))
    for upd in run:
        if upd.wall > until:
            break
        tracker.update(upd.wall, upd.open)
    return in_window(rec.meta, tracker.incidents)


def find_incident(rec: Recording, number: int) -> Incident:
    """Incident ``number`` of ``rec`` (a re-run of the checks); SessionError naming the
    recording's incidents when it has no such one."""
    found = incidents_of(rec)
    inc = next((i for i in found if i.id == number), None)
    if inc is None:
        have = ", ".join(str(i.id) for i in found) or "none"
        raise SessionError(f"{rec.path.name}: no incident {number} (its incidents: {have})")
    return inc


def incident_span(rec: Recording, inc: Incident, margin_s: float) -> tuple[int, int]:
    """First and last tick index of ``inc`` with ``margin_s`` before its first finding
    and after it closed (or up to the end, still open)."""
    from replmon.session.cursor import index_at

    end = inc.closed_wall if inc.closed_wall is not None else math.inf
    return index_at(rec, inc.opened_wall - margin_s), index_at(rec, end + margin_s, last=True)


def _intact_walls(rec: Recording, ci: int) -> list[tuple[int, float]]:
    """(index, wall) of chunk ``ci``'s intact tick frames, reading frames only (damage
    ends a chunk, so they are its first ticks)."""
    _, walls = rec.chunk_observations(ci)
    return [(rec.chunks[ci].first + k, w) for k, w in enumerate(walls)]


def warm_up_start(rec: Recording, first: int, ticks: int) -> int:
    """Index of the first tick of the chunk from which at least ``ticks`` intact ticks
    precede tick ``first`` (tick 0 when the recording starts later than that)."""
    ci = rec.chunk_of(first)
    have = sum(i < first for i, _ in _intact_walls(rec, ci))
    while have < ticks and ci > 0:
        ci -= 1
        have += len(_intact_walls(rec, ci))
    return rec.chunks[ci].first


def _window_walls(rec: Recording, first: int, last: int) -> tuple[float, float]:
    walls = [w for ci in range(rec.chunk_of(first), rec.chunk_of(last) + 1)
             for i, w in _intact_walls(rec, ci) if first <= i <= last]
    if not walls:
        raise SessionError(f"{rec.path.name}: no intact tick from #{first + 1} to #{last + 1}: "
                           "nothing to cut")
    return walls[0], walls[-1]


def _as_recorded(e: Entry, obs: ChunkObservations | None, k: int) -> Update | None:
    """The live engine's update for the tick at offset ``k`` of its chunk, with what it
    observed there when the whole file stored it (the writer packs that into the cut's
    own observations frames); None when no engine ran."""
    if e.update is None:
        return None
    if obs is None:
        return dataclasses.replace(e.update, seen=[], checks_id="")
    return dataclasses.replace(e.update, seen=unpack_seen(obs.seen.get(k, [])),
                               checks_id=obs.checks_id)


def cut(rec: Recording, first: int, last: int, out: str | Path) -> Cut:
    """Write ticks ``first``..``last`` of ``rec`` (indexes, both included) to ``out`` (a
    new file: never overwritten), after the warm-up the checks need. Damaged ticks of
    the input are left out (``rec.problems`` says which); SessionError when none of the
    window's ticks is intact."""
    if not len(rec) or not rec.chunks:
        raise SessionError(f"{rec.path.name}: no tick could be read: nothing to cut")
    last = max(0, min(last, len(rec) - 1))
    first = max(0, min(first, last))
    if last < rec.chunks[0].first:  # ticks before the first intact chunk are lost
        raise SessionError(f"{rec.path.name}: no intact tick from #{first + 1} to #{last + 1}: "
                           "nothing to cut")
    first = max(first, rec.chunks[0].first)
    engine = build_engine(rec.meta.checks)
    start = warm_up_start(rec, first, engine.window_ticks(rec.meta.interval))
    window = _window_walls(rec, first, last)
    meta = rec.meta.model_copy(update={  # a file of this replmon's format, whatever the input's
        "version": FORMAT_VERSION, "replmon_version": __version__, "window": window,
        "cut_from": rec.path.name, "part": 0, "previous": None, "damaged": False})
    try:
        writer = RecordingWriter(out, meta, chunk_ticks=rec.meta.chunk_ticks)
    except FileExistsError:
        raise SessionError(f"{out} exists: choose another file (never overwritten)") from None
    except OSError as e:  # one line in plain words: no such directory /no/dir
        raise SessionError(f"{shown(out)}: {write_problem(out, e)}") from None
    warm = 0
    first_wall = window[0]
    with writer:
        for ci in range(rec.chunk_of(start), rec.chunk_of(last) + 1):
            obs, _ = rec.chunk_observations(ci)
            for k, entry in enumerate(rec.chunk_entries(ci)):
                if entry.index > last:
                    break
                writer.write(entry.tick, _as_recorded(entry, obs, k))
                if entry.index < first:
                    first_wall = min(first_wall, entry.tick.wall)
                    warm += 1
    # observations frames the writer wrote: one per chunk whose every tick came with observations
    kept = _stored_chunks(Path(out))
    return Cut(Path(out), writer.ticks, warm, first_wall, window,
               last - start + 1 - writer.ticks, kept)


def _stored_chunks(path: Path) -> int:
    from replmon.session.recording import open_recording

    with open_recording(path) as written:
        return sum(written.chunk_observations(ci)[0] is not None
                   for ci in range(len(written.chunks)))
