"""Re-running today's checks over a recording, on every core.

A check's observations at tick i depend only on the window of ticks before it
(``Engine.observe`` is pure in the window), and the hysteresis that turns
observations into findings (``Engine.apply``) is cheap. So a long recording is
cut into parts along its chunks; worker processes decode their part and observe
it, each first warmed on the ``window - 1`` intact ticks before the part (the
same ticks a sequential run would have in its window there); this process
applies the observations in order. The result is the sequential one, tick for
tick: ``tests/unit/session/test_rerun.py`` compares them. Where the live engine's stored
observations serve, no tick is decoded (reuse.py).

Short recordings, and machines with one core, run in this process: starting
workers costs about half a second. Workers fork from a clean "forkserver"
process (replmon.forking), never from this one (which may run threads: the TUI,
logging); like any multiprocessing user, a script that calls this needs the
``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replmon.engine import Engine, Update, build_engine
from replmon.model.findings import wording
from replmon.model.parts import thin
from replmon.session.cursor import intact_before, warm_up
from replmon.session.decoding import Entry
from replmon.session.format import Packed, pack_seen, unpack_seen
from replmon.session.recording import Recording, open_recording
from replmon.session.reuse import Reuse, plan_reuse, union_parts

PARALLEL_MIN_TICKS = 5_000
"""Below this many ticks (~3 s of checks) a re-run stays in this process."""
MAX_WORKERS = 8
"""Worker processes at most (by default): each holds its part's observations and maps
the file; past 8 a day's re-run gains little (each part also warms on 299 ticks)."""
STOP_POLL_S = 0.25
"""How often a parallel re-run waiting on its workers asks ``should_stop``."""
PARTS_PER_WORKER = 2
"""Parts per worker: smaller parts even out the workers' finishing times, but each
part warms its checks on up to 300 ticks first."""

Observed = tuple[int, int, float, float, list[Packed], Any]
"""(index, seq, wall, interval, what the checks saw, the caller's facts) for one tick."""


Extract = Callable[[Entry], Any]
"""What a caller wants from each decoded tick besides the checks (``report``'s peaks,
versions, gaps): run where the tick is decoded. A module-level function, so that a
worker process can be handed it; it returns plain, picklable data."""


def _none(_: Entry) -> None:
    return None


def cpus() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def _few_collections() -> Iterator[None]:
    """Fewer cyclic-GC passes while ticks stream through: the engine's window holds
    300-600 ticks of acyclic records (~100,000 objects), which every young-generation
    pass walks again; refcounting frees everything else. One pass per million
    allocations instead of per 700: measured on the 24 h bench file, about 15 % of a
    re-run's time, and at 1,000,000 instead of 100,000 another 1.5 %."""
    old = gc.get_threshold()
    gc.set_threshold(1_000_000, 50, 1000)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _observe_chunks(rec: Recording, engine: Engine, first_chunk: int, end_chunk: int,
                    extract: Extract = _none, *, stored: bool = True,
                    reuse: Reuse | None = None, entry_points: bool = True
                    ) -> Iterator[Observed]:
    """What the checks observe at every intact tick of chunks [first_chunk, end_chunk), in
    order: the stored observations where ``plan_reuse`` allows (``reuse``, when the
    caller has it already; decoding the ticks only when ``extract`` wants them or some
    checks are observed again), else by decoding the ticks and observing them, the
    engine's window warmed first on the intact ticks before."""
    if reuse is None:
        reuse = (plan_reuse(rec, engine, first_chunk, end_chunk, entry_points) if stored
                 else Reuse())
    fed: dict[int, int] = {}
    """id of an engine -> index after the last tick it observed (its window is there)."""
    for ci in range(first_chunk, end_chunk):
        if ci in reuse.use:
            yield from _stored_chunk(rec, ci, reuse, extract, fed)
            continue
        _warm(rec, engine, ci, fed)
        for e in rec.chunk_entries(ci):
            yield (e.index, e.tick.seq, e.tick.wall, e.tick.interval,
                   pack_seen(engine.observe(e.tick)), extract(e))
            fed[id(engine)] = e.index + 1


def _warm(rec: Recording, engine: Engine, ci: int, fed: dict[int, int],
          parts: frozenset[str] | None = None) -> None:
    """Unless ``engine`` observed the tick right before chunk ``ci``: its window filled
    with the intact ticks before the chunk (``parts`` of them: they are all it reads)."""
    first = rec.chunks[ci].first
    if fed.get(id(engine)) == first:
        return
    engine.reset_window()
    warm_up(engine, intact_before(rec, first, engine.window_ticks(rec.meta.interval) - 1,
                                  parts), hysteresis=False)


def _stored_chunk(rec: Recording, ci: int, reuse: Reuse, extract: Extract,
                  fed: dict[int, int]) -> Iterator[Observed]:
    """Chunk ``ci`` from its stored observations: alone when they are the engine's own
    (``reuse.again`` None) or only checks' hysteresis differs; else with the ``again``
    checks' restated observations (``Reuse.plan``), and the other ``again`` checks
    observing the chunk's ticks, decoded to what those checks read."""
    obs, walls = reuse.use[ci]
    first = rec.chunks[ci].first
    again = reuse.again
    loud, restated = reuse.plan(obs) if again is not None and again.checks else ([], {})
    if loud:
        for eng, parts in loud:
            _warm(rec, eng, ci, fed, parts)
        union = union_parts([p for _, p in loud])
        entries = rec.chunk_entries(ci, None if extract is not _none else union)
        for k, e in enumerate(entries):
            fresh: list[Packed] = list(restated.get(k, ()))
            for eng, parts in loud:
                fresh += pack_seen(eng.observe(e.tick if parts is None else
                                               thin(e.tick, parts)))
                fed[id(eng)] = e.index + 1
            seen = reuse.merge(obs.seen.get(k, []), fresh)
            yield e.index, e.tick.seq, e.tick.wall, e.tick.interval, seen, extract(e)
        return
    def seen_at(k: int) -> list[Packed]:
        stored = obs.seen.get(k, [])
        return stored if again is None else reuse.merge(stored, restated.get(k, []))
    if extract is _none:
        for k, wall in enumerate(walls):
            yield first + k, obs.seq0 + k, wall, obs.interval, seen_at(k), None
    else:  # the caller wants facts from each tick: decode them, skip the checks
        for k, e in enumerate(rec.chunk_entries(ci)):
            yield e.index, e.tick.seq, e.tick.wall, e.tick.interval, seen_at(k), extract(e)


def _signature(seen: list[Packed], words: dict[str, str]) -> tuple[Any, ...]:
    """What ``Engine.apply`` keys and compares of one tick's observations, in order:
    (check id, node, key, severity, wording of the title) of each. (A stored observation
    has no node name nor given role: its finding's ident is (check, node, key).)
    ``words``: titles already worded."""
    out = []
    for p in seen:
        title = p[4]
        w = words.get(title)
        if w is None:
            w = words[title] = wording(title)
        out.append((p[0], p[2], p[1], p[3], w))
    return tuple(out)


def _open_as_seen(upd: Update, sig: tuple[Any, ...]) -> bool:
    """Whether the findings open after ``upd`` are exactly those of its observations
    (``sig``), one each, each with its worst moment known (``Engine.apply`` then changes
    no finding but for its numbers, title and last tick on a tick of the same signature:
    no opening, no closing, no new worst, no step of its story)."""
    if len(upd.open) != len(sig) or upd.opened or upd.closed:
        return False
    ids = {(c, node, key) for c, node, key, _, _ in sig}
    return len(ids) == len(sig) and all(
        f.ident in ids and f.worst_wall is not None and not f.given and not f.name
        for f in upd.open)


def _observe_part(path: str, settings: Mapping[str, Mapping[str, Any]], entry_points: bool,
                  first_chunk: int, end_chunk: int, extract: Extract = _none,
                  stored: bool = True) -> tuple[list[Observed], list[str]]:
    """Worker: ``_observe_chunks`` over one part. Also returns the problems (damage) met
    on the way; the parent reports them, once."""
    logging.disable(logging.WARNING)  # this worker process only
    with _few_collections(), open_recording(path) as rec:
        engine = build_engine(settings, entry_points=entry_points)
        out = list(_observe_chunks(rec, engine, first_chunk, end_chunk, extract,
                                   stored=stored, entry_points=entry_points))
        return out, list(rec.problems)


def _observe_job(job: tuple[str, Mapping[str, Mapping[str, Any]], bool, int, int, Extract,
                            bool]) -> tuple[list[Observed], list[str]]:
    return _observe_part(*job)


def _parts(recording: Recording, n: int) -> list[tuple[int, int]]:
    """[first, end) chunk ranges, n of them at most, of about equal tick counts."""
    chunks = recording.chunks
    if not chunks:
        return []
    n = max(1, min(n, len(chunks)))
    bounds = [round(i * len(chunks) / n) for i in range(n + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _context() -> Any:
    from replmon.forking import context

    return context()  # workers fork with this module already imported


def start_workers_early() -> None:
    """Start the fork server (and multiprocessing's resource tracker) now. Call it before
    a Textual app takes over stdout/stderr: the resource tracker passes
    ``sys.stderr.fileno()`` to its child, and Textual's stand-in answers -1 ("bad
    value(s) in fds_to_keep" when the replay's re-run starts its workers)."""
    from multiprocessing import forkserver

    _context()
    forkserver.ensure_running()


class Rerun:
    """Today's checks over a recording: iterate for one Update per intact tick, in
    order; ``engine`` holds the findings still open at the end and the closed ones.

        run = Rerun(rec)
        for upd in run: ...
        run.engine.open_findings
    """

    def __init__(self, recording: Recording,
                 settings: Mapping[str, Mapping[str, Any]] | None = None, *,
                 entry_points: bool = True, workers: int | None = None,
                 should_stop: Callable[[], bool] = lambda: False, stored: bool = True) -> None:
        """``should_stop``: asked between ticks and while waiting on the workers; True
        ends the iteration early (a replay screen being closed). ``stored``: use the
        live engine's observations where the recording holds them and they are today's
        checks' (False: observe every tick again, as before format version 2)."""
        self.stored = stored
        self.recording = recording
        self.should_stop = should_stop
        self.settings = dict(recording.meta.checks if settings is None else settings)
        self.entry_points = entry_points
        self.engine: Engine = build_engine(self.settings, entry_points=entry_points)
        self._workers = workers
        self._planned: int | None = None
        self._reuse: Reuse | None = None
        """Stored observations usable here, when planning found them already."""
        self.ticks_read = 0
        """Ticks observed so far (the intact ticks the iteration went through)."""

    @property
    def workers(self) -> int:
        """Processes observing the ticks (1: all in this one). Unless given, more than one
        only when a long stretch must be decoded: ticks without usable stored
        observations, or all of them when the caller extracts facts from each."""
        if self._planned is None:
            self._planned = self._plan(self._workers, decode_all=False)
        return self._planned

    def _plan(self, workers: int | None, *, decode_all: bool) -> int:
        rec = self.recording
        if workers is None:
            to_decode = len(rec)
            if self.stored and not decode_all and len(rec) >= PARALLEL_MIN_TICKS:
                self._reuse = plan_reuse(rec, self.engine, 0, len(rec.chunks),
                                         self.entry_points)
                reuse = self._reuse
                quiet = (reuse.use.values() if reuse.again is None or not reuse.again.checks
                         else (u for u in reuse.use.values() if not reuse.decodes(u[0])))
                to_decode -= sum(obs.count for obs, _ in quiet)
            workers = min(cpus(), MAX_WORKERS) if to_decode >= PARALLEL_MIN_TICKS else 1
        return max(1, min(workers, len(rec.chunks) or 1))

    def __iter__(self) -> Iterator[Update]:
        for _, upd, _ in self.with_facts():
            yield upd

    def indexed(self) -> Iterator[tuple[int, Update]]:
        """(index of the tick in the recording, its Update), in order."""
        for index, upd, _ in self.with_facts():
            yield index, upd

    def with_facts(self, extract: Extract = _none) -> Iterator[tuple[int, Update, Any]]:
        """(index, Update, ``extract(entry)``) for every intact tick, in order."""
        apply = self.engine.apply
        for index, seq, wall, interval, seen, facts in self._observed(extract):
            yield index, apply(seq, wall, unpack_seen(seen), interval), facts

    def changes(self, given_from: float | None = None) -> Iterator[tuple[int, Update]]:
        """(index, Update) of the ticks where the findings may change, in order, for a
        reader that wants what opened and closed, the findings open at each change and at
        the end, not every tick's numbers (``report``, ``check --replay``). A tick is left
        out when it is **steady**: every finding open after the tick before is observed
        again, and nothing else is (no observation still holding to open, none clearing),
        each with the severity and the wording (``wording``: its title without the
        numbers) it had at the tick before. ``Engine.apply`` of such a tick changes only
        the open findings' numbers, title and last tick: of a run of steady ticks only the
        last is applied and given, right before the next tick that is not steady, so the
        engine, and each finding given, is what applying every tick makes it
        (tests/unit/session/test_changes.py holds it to ``with_facts``). The last tick is
        always given, and with ``given_from``, the first tick at or after that wall.
        A long outage is one open finding observed tick after tick: a week of it
        (604,800 ticks) applies a few hundred ticks instead of every one."""
        apply = self.engine.apply
        steady = False
        """Whether the findings after the last tick applied are exactly its observations,
        all open (``_open_as_seen``): then a tick that repeats its signature is steady."""
        sig: tuple[Any, ...] | None = None
        held: tuple[int, int, float, float, list[Packed]] | None = None
        """The last steady tick, not applied yet."""
        words: dict[str, str] = {}
        wait = given_from is not None
        """Still to give the first tick at or after ``given_from``."""
        for index, seq, wall, interval, seen, _ in self._observed(_none):
            now = _signature(seen, words)
            first = wait and given_from is not None and wall >= given_from
            if steady and now == sig and not first:
                held = (index, seq, wall, interval, seen)
                continue
            if held is not None:
                yield held[0], apply(held[1], held[2], unpack_seen(held[4]), held[3])
                held = None
            upd = apply(seq, wall, unpack_seen(seen), interval)
            wait = wait and not first
            sig = now
            steady = _open_as_seen(upd, now)
            if len(words) > 4096:
                words.clear()
            yield index, upd
        if held is not None:
            yield held[0], apply(held[1], held[2], unpack_seen(held[4]), held[3])

    def _observed(self, extract: Extract) -> Iterator[Observed]:
        """What the checks observed at every intact tick, in order (this process, or the
        workers' parts in order), until ``should_stop``."""
        workers = (self._plan(self._workers, decode_all=True) if extract is not _none
                   else self.workers)
        if workers == 1:
            with _few_collections():
                observing = build_engine(self.settings, entry_points=self.entry_points)
                for got in _observe_chunks(
                        self.recording, observing, 0, len(self.recording.chunks), extract,
                        stored=self.stored, reuse=self._reuse,
                        entry_points=self.entry_points):
                    if self.should_stop():
                        return
                    self.ticks_read += 1
                    yield got
            return
        parts = _parts(self.recording, workers * PARTS_PER_WORKER)
        path = str(Path(self.recording.path).resolve())
        pool = _context().Pool(workers)
        try:
            jobs = [(path, self.settings, self.entry_points, a, b, extract, self.stored)
                    for a, b in parts]
            results = pool.imap(_observe_job, jobs)
            while True:
                try:
                    observed, problems = results.next(timeout=STOP_POLL_S)
                except StopIteration:
                    break
                except multiprocessing.TimeoutError:
                    if self.should_stop():
                        return  # the finally below ends the workers at once
                    continue
                for p in problems:
                    self.recording.add_problem(p)
                self.ticks_read += len(observed)
                yield from observed
                if self.should_stop():
                    return
            pool.close()
        finally:
            pool.terminate()  # at once when the caller stopped early (a closed replay)
            pool.join()


def rerun_checks(recording: Recording, settings: Mapping[str, Mapping[str, Any]] | None = None,
                 *, entry_points: bool = True, workers: int | None = None,
                 stored: bool = True) -> list[Update]:
    """Today's checks over the recorded ticks, with the recorded [checks.*] settings
    (or ``settings``). One Update per intact tick, in order."""
    return list(Rerun(recording, settings, entry_points=entry_points, workers=workers,
                      stored=stored))


def rerun_file(path: str | Path, settings: Mapping[str, Mapping[str, Any]] | None = None, *,
               entry_points: bool = True, workers: int | None = None,
               should_stop: Callable[[], bool] = lambda: False
               ) -> Iterator[tuple[int, Update]]:
    """``Rerun(...).indexed()`` on a recording it opens (and closes) itself: for a
    thread that must not share the caller's reader."""
    with open_recording(path) as rec:
        yield from Rerun(rec, settings, entry_points=entry_points, workers=workers,
                         should_stop=should_stop).indexed()
