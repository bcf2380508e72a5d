"""Writing recordings.

``RecordingWriter`` encodes ticks into one file, synchronously (benchmarks,
reconstructed sessions, the recorder's thread). ``Recorder`` is what the CLI
uses beside a live collector: ``write()`` only queues the tick, a writer thread
encodes and writes it, so a slow disk never delays the collector; files rotate
by size or age; closing flushes, writes the end frame and fsyncs.

Each tick is written (one write() syscall per frame) as soon as it is encoded,
so a kill -9 loses only the ticks still queued (normally none); the page cache
survives a killed process. ``fsync_s`` bounds what a power cut loses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import re
import threading
import time
import zlib
from array import array
from pathlib import Path
from typing import Any, BinaryIO, Literal

import msgspec
from pydantic import TypeAdapter

from replmon.engine import Update
from replmon.errors import SessionError
from replmon.model.base import SourceState
from replmon.model.tick import NodeTick, RateTracker, Tick
from replmon.session.delta import DeltaWriter
from replmon.session.facts import FactsCollector, Slots, encode_json, number
from replmon.session.format import (
    DELTA_VERSION,
    KIND_END,
    KIND_HEADER,
    KIND_KEY,
    KIND_OBSERVATIONS,
    KIND_SUMMARY,
    KIND_TICK,
    MAGIC,
    NO_OFFSET,
    NodeInfo,
    Packed,
    RecordingMeta,
    key_info,
    pack_frame,
    pack_key_payload,
    pack_seen,
    zip_json,
)

log = logging.getLogger(__name__)
ZLIB_LEVEL = 8
"""Compression of the tick stream. Measured on 3,000 lab ticks with a finding open
throughout (bytes per tick, writer CPU per tick): level 6 1,220 B 0.47 ms, 7 1,195 B
0.47 ms, 8 1,171 B 0.49 ms, 9 1,169 B 0.49 ms. Reading is as fast at any level."""
ZLIB_MEM_LEVEL = 5
"""zlib's memLevel (hash table and literal buffer size; 8 by default). Each chunk's
compressor lives as long as its recording: at 5 it holds 149 KB instead of 217 KB, 14 MB
less at 200 recording pairs in ``replmon serve``. Over the 966 ticks of
sample_sessions/ the stream is as small (1,975.8 against 1,976.0 bytes a tick); any
zlib reader decodes it."""
_NO_RATES: Any = {"primary": {"rates"}, "replica": {"rates"}}


def _ok(node: NodeTick, kind: str) -> bool:
    return bool(getattr(node, kind).status.state is SourceState.OK)


def encode_update(update: Update) -> dict[str, Any]:
    """An engine Update as JSON: open findings, indexes of the newly opened ones, closed ones."""
    opened = {f.ident for f in update.opened}
    out: dict[str, Any] = {"open": [f.model_dump(mode="json") for f in update.open]}
    if opened:
        out["opened"] = [i for i, f in enumerate(update.open) if f.ident in opened]
    if update.closed:
        out["closed"] = [f.model_dump(mode="json") for f in update.closed]
    return out


class RecordingWriter:
    """Encodes ticks into one recording file. Not thread-safe; one writer per file."""

    def __init__(self, path: str | Path, meta: RecordingMeta, *, chunk_ticks: int = 60,
                 level: int = ZLIB_LEVEL, rates: Literal["auto", "derive", "store"] = "auto"
                 ) -> None:
        """``rates``: "auto" stores a tick's rates only where a reader recomputing them
        would get something else; "derive" never stores them (ticks built from samples,
        whose rates are by definition the recomputed ones); "store" always does (ticks
        whose rates were set by hand, e.g. reconstructed from published figures). With
        "derive" no live observations are stored (observations frames): the engine may have seen
        other rates than a reader derives."""
        self.path = Path(path)
        self.rates_mode = rates
        self.meta = meta.model_copy(update={"chunk_ticks": chunk_ticks})
        self.chunk_ticks = chunk_ticks
        self.level = level
        self.ticks = 0
        self.first_wall: float | None = None
        self.size = 0
        self._f: BinaryIO | None = open(self.path, "xb", buffering=0)  # noqa: SIM115
        self._z: Any = None
        self._in_chunk = 0
        self._prev_key = NO_OFFSET
        self._tracker = RateTracker()
        """The collector's rate arithmetic, replayed: what a reader will derive."""
        self._prev_seq: int | None = None
        self._key_info = b""
        self._obs: _ChunkSeen | None = None
        """The live engine's observations of the current chunk, for its observations frame."""
        self._facts: FactsCollector | None = None
        """What the report keeps of the current chunk's ticks, for its summary frame."""
        self._kept = _ChunkSeen(0), FactsCollector(0)
        """The two collectors, made once and restarted at each chunk (their arrays are
        not given back and taken again every minute)."""
        self._delta = DeltaWriter() if self.meta.version >= DELTA_VERSION else None
        """Each tick record after a chunk's first as its change (version 3; a meta of
        version 2, e.g. copied from a version 2 file, writes whole records)."""

    # -- encoding ---------------------------------------------------------------

    def _put(self, frame: bytes) -> None:
        if self._f is None:
            raise SessionError(f"{self.path}: recording already closed")
        self._f.write(frame)
        self.size += len(frame)

    def _header(self, tick: Tick | None) -> None:
        meta = self.meta
        if tick is not None:
            nodes = dict(meta.nodes)
            for n in tick.nodes:  # by the role it was given: the config's (its host's) key,
                given = n.given_role  # also when the part starts after a switchover
                old = nodes.get(given, NodeInfo(name=n.name))
                nodes[given] = old.model_copy(update={
                    "name": n.name,
                    "mysql_version": n.mysql.version if _ok(n, "mysql") else old.mysql_version,
                    "redis_version": n.redis.version if _ok(n, "redis") else old.redis_version,
                    "drbd_version": (n.drbd.version or "") if _ok(n, "drbd")
                    else old.drbd_version,
                })
            meta = meta.model_copy(update={"nodes": nodes, "started_wall": tick.wall})
        self.meta = meta
        self._key_info = key_info(meta)
        self._put(MAGIC + pack_frame(KIND_HEADER, meta.model_dump_json().encode()))

    def _key(self, tick: Tick) -> None:
        self._end_chunk()
        # both nodes' baselines written by pydantic as they are, not dumped to dicts first
        # (a node's samples are ~600 small objects as dicts: a peak at every chunk's start)
        base = b'{"primary":%s,"replica":%s}' % tuple(
            n.model_dump_json(exclude={"rates"}).encode() if n else b"null"
            for n in (self._tracker.baseline("primary"), self._tracker.baseline("replica")))
        self._z = zlib.compressobj(self.level, zlib.DEFLATED, zlib.MAX_WBITS, ZLIB_MEM_LEVEL)
        data = self._z.compress(base)
        data += self._z.flush(zlib.Z_SYNC_FLUSH)
        offset = self.size
        self._put(pack_frame(KIND_KEY, pack_key_payload(self._prev_key, self._key_info, data),
                             self.ticks, tick.wall))
        self._prev_key = offset
        self._in_chunk = 0
        if self._delta is not None:
            self._delta.restart()
        # Stored observations are valid only if a reader rebuilds exactly the ticks the
        # live engine saw: "derive" takes the caller's word that rates are derivable,
        # which a tick fed to the engine without its rates would break. (The same for the
        # facts: the peaks are of the rates a reader derives.)
        if self.rates_mode == "derive":
            self._obs = self._facts = None
        else:
            self._obs, self._facts = self._kept
            self._obs.restart(self.ticks)
            self._facts.restart(self.ticks)

    def _end_chunk(self) -> None:
        """The observations frame of the chunk just finished, when the live engine saw all
        its ticks; then its summary frame."""
        obs, self._obs = self._obs, None
        if obs is not None and (frame := obs.frame()) is not None:
            self._put(frame)
        collected, self._facts = self._facts, None
        if collected is not None and (payload := collected.payload()) is not None:
            self._put(pack_frame(KIND_SUMMARY, payload, collected.first))

    def _rates_to_store(self, tick: Tick) -> dict[str, Any]:
        """Rates a reader could not recompute exactly (first tick after a gap, a
        recorder attached mid-session): stored explicitly; usually none."""
        out: dict[str, Any] = {}
        continuous = self._prev_seq is not None and tick.seq == self._prev_seq + 1
        for n in tick.nodes:
            if self.rates_mode == "auto":
                derived = self._tracker.rates(n)  # (remembers n's samples too)
                store = not continuous or derived != n.rates
            else:
                self._tracker.remember(n)
                store = self.rates_mode == "store"
            if store:
                out[n.role] = n.rates.model_dump(mode="json")
        self._prev_seq = tick.seq
        return out

    def write(self, tick: Tick, update: Update | None = None) -> None:
        """Append one tick (and the live engine's update for it, if any)."""
        if self.ticks == 0:
            self.first_wall = tick.wall
            self._header(tick)
        if self._z is None or self._in_chunk >= self.chunk_ticks:
            self._key(tick)
        extra: dict[str, Any] = {}
        rates = self._rates_to_store(tick)
        if rates:
            extra["r"] = rates
        if update is not None:
            extra["u"] = encode_update(update)
        if self._obs is not None:
            self._obs.add(tick, update)
        if self._facts is not None:
            self._facts.add(tick, update)
        tick_json = tick.model_dump_json(exclude=_NO_RATES).encode()
        if self._delta is not None:
            record = self._delta.record(tick_json, extra)
        else:
            record = tick_json + b"\n"
            if extra:
                record += json.dumps(extra, separators=(",", ":")).encode()
        data = self._z.compress(record) + self._z.flush(zlib.Z_SYNC_FLUSH)
        self._put(pack_frame(KIND_TICK, data, self.ticks, tick.wall))
        self.ticks += 1
        self._in_chunk += 1

    def sync(self) -> None:
        if self._f is not None:
            os.fsync(self._f.fileno())

    def close(self, *, reason: str = "close", next_file: str | None = None,
              dropped: int = 0) -> None:
        """Write the end frame and fsync. Idempotent."""
        if self._f is None:
            return
        if self.ticks == 0:
            self._header(None)
        self._end_chunk()
        end = {"ticks": self.ticks, "closed_wall": time.time(), "reason": reason,
               "next": next_file, "dropped": dropped}
        self._put(pack_frame(KIND_END, json.dumps(end).encode(), self.ticks, time.time()))
        self.sync()
        self._f.close()
        self._f = None

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ChunkSeen:
    """Collects what the live engine observed over one chunk (its observations frame);
    ``restart`` for the next chunk.

    Each gated check's gauges are kept as numbers in an array of its own (``Slots``:
    before each tick's gauges their count, -1 for None), reused from chunk to chunk: a
    minute of 20 checks' gauges kept as tuples was ~1,200 tuples and their floats until
    the chunk ended, then copied once more by the model's validation, a peak of small
    blocks at every chunk's end (see FactsCollector). The frame's JSON is the one
    ``ChunkObservations`` would write, read back the same (None and NaN inside a gauge
    tuple as null)."""

    def __init__(self, first: int) -> None:
        self._slots: dict[str, Slots] = {}
        """Every gated check's array seen by this writer, by check id."""
        self.restart(first)

    def restart(self, first: int) -> None:
        self.first = first
        self.count = 0
        self.checks_id: str | None = None
        self.seq0 = 0
        self.interval = 0.0
        self.usable = True
        self.seen: dict[int, list[Packed]] = {}
        self.gauges: dict[str, Slots] = {}
        """The chunk's gated checks' arrays."""

    def add(self, tick: Tick, update: Update | None) -> None:
        if not self.usable:
            return
        if update is None or not update.checks_id or update.seq != tick.seq:
            self.usable = False  # no engine, or not this tick's: nothing to reuse
            return
        if self.count == 0:
            self.checks_id, self.seq0, self.interval = update.checks_id, tick.seq, tick.interval
            self.gauges = {cid: self._slots.setdefault(cid, Slots("d"))
                           for cid in update.gauges}
            for slots in self.gauges.values():
                slots.restart()
        elif (update.checks_id != self.checks_id or tick.seq != self.seq0 + self.count
              or tick.interval != self.interval):
            self.usable = False  # another engine, a gap in seq, or a new interval
            return
        if update.seen:
            self.seen[self.count] = pack_seen(update.seen)
        if update.gauges.keys() != self.gauges.keys():
            self.gauges = {}  # not the same gated checks (same checks_id: never seen)
        for cid, slots in self.gauges.items():
            g = update.gauges[cid]
            if g is None:
                slots.put(-1)
            else:
                slots.put(len(g))
                slots.put_row(array("d", map(number, g)))
        self.count += 1

    def frame(self) -> bytes | None:
        if not self.usable or not self.count or self.checks_id is None:
            return None
        gauges = {}
        for cid, slots in self.gauges.items():  # one check's tuples at a time
            flat, column, i = slots.values(), [], 0
            while i < len(flat):
                n = int(flat[i])
                column.append(None if n < 0 else tuple(flat[i + 1:i + 1 + n]))
                i += 1 + max(n, 0)
            gauges[cid] = msgspec.Raw(encode_json(column))
        doc = {"checks_id": self.checks_id, "first": self.first, "seq0": self.seq0,
               "count": self.count, "interval": self.interval,
               "seen": msgspec.Raw(_SEEN_JSON(self.seen)), "gauges": gauges}
        return pack_frame(KIND_OBSERVATIONS, zip_json(encode_json(doc)), self.first)


_SEEN_JSON = TypeAdapter(dict[int, list[Packed]]).dump_json
"""The observations' JSON as the model writes them (their numbers may hold any value
pydantic can write)."""


def part_path(path: Path, n: int) -> Path:
    """``pair.rmrec`` part 3 -> ``pair.0003.rmrec``."""
    return path.with_name(f"{path.stem}.{n:04d}{path.suffix}")


def existing_parts(path: Path) -> list[tuple[int, Path]]:
    pat = re.compile(re.escape(path.stem) + r"\.(\d{4,})" + re.escape(path.suffix) + "$")
    out = [(int(m.group(1)), p) for p in path.parent.glob(f"{path.stem}.*{path.suffix}")
           if (m := pat.match(p.name))]
    return sorted(out)


class Recorder:
    """Records ticks beside a live collector, in a writer thread.

        async with Recorder(path, meta_for(config)) as rec:
            async for tick in collector.ticks():
                rec.write(tick, engine.feed(tick))

    ``write`` never blocks: when the writer falls ``queue_max`` ticks behind
    (a stalled disk), the newest ticks are dropped and counted in ``dropped``.
    With ``max_bytes`` or ``max_age_s`` every file gets a part number
    (``pair.0001.rmrec``, ``pair.0002.rmrec``...) and starts with its own header;
    ``keep`` deletes the oldest parts beyond that many.

    With ``writer`` (a ``SharedWriter``) the recording is written by that thread, shared
    with other recordings, instead of a thread of its own (``replmon serve``: one thread
    for every pair's recording).

    A pipeline reader (``replmon.pipeline``): inline, since ``write`` only queues."""

    name = "recorder"
    inline = True

    def __init__(self, path: str | Path, meta: RecordingMeta, *, max_bytes: int | None = None,
                 max_age_s: float | None = None, keep: int | None = None,
                 chunk_ticks: int = 60, fsync_s: float = 5.0, queue_max: int = 600,
                 writer: SharedWriter | None = None) -> None:
        self.path = Path(path)
        self.meta = meta
        self.max_bytes, self.max_age_s, self.keep = max_bytes, max_age_s, keep
        self.chunk_ticks, self.fsync_s = chunk_ticks, fsync_s
        self.rotating = max_bytes is not None or max_age_s is not None
        self.files: list[Path] = []
        self.ticks_written = 0
        self.dropped = 0
        self.cpu_s = 0.0
        """Thread CPU time spent encoding and writing (time.thread_time)."""
        self.error: BaseException | None = None
        self._q: queue.Queue[tuple[Tick, Update | None] | None] = queue.Queue(queue_max)
        self._thread: threading.Thread | None = None
        self._shared = writer
        self._started = False
        self._done = threading.Event()
        """Set by the writing thread once the recording is closed (its end frame written)."""
        self._writer: RecordingWriter | None = None
        self._part = 0
        self._last_sync = 0.0

    async def __aenter__(self) -> Recorder:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def start(self) -> None:
        if self.rotating:
            parts = existing_parts(self.path)
            self._part = parts[-1][0] if parts else 0
        elif self.path.exists():
            raise SessionError(f"{self.path} exists: choose another file (never overwritten)")
        self._started = True
        self._last_sync = time.monotonic()
        if self._shared is None:
            self._thread = threading.Thread(target=self._run, name="replmon-recorder",
                                            daemon=True)
            self._thread.start()

    def write(self, tick: Tick, update: Update | None = None) -> None:
        """Queue a tick for writing; returns at once."""
        try:
            self._q.put_nowait((tick, update))
        except queue.Full:
            self.dropped += 1
            return
        if self._shared is not None:
            self._shared.notify(self)

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        self.write(tick, update)

    def close(self) -> None:
        """Flush everything queued, write the end frame, fsync (blocking)."""
        if not self._started:
            return
        self._started = False
        self._q.put(None)  # blocks while the queue is full: the writer is draining it
        if self._shared is not None:
            self._shared.notify(self)
            self._done.wait()
        elif self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.error is not None:
            raise SessionError(f"recording to {self.path} failed: {self.error}") from self.error

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    # -- writer thread ------------------------------------------------------------

    def _open_next(self) -> RecordingWriter:
        previous = self._writer.path.name if self._writer else None
        if self.rotating:
            self._part += 1
            path = part_path(self.path, self._part)
        else:
            path = self.path
        meta = self.meta.model_copy(update={"part": self._part if self.rotating else 0,
                                            "previous": previous})
        w = RecordingWriter(path, meta, chunk_ticks=self.chunk_ticks)
        self.files.append(path)
        if self.keep is not None:
            for _, old in existing_parts(self.path)[:-self.keep]:
                with contextlib.suppress(OSError):
                    old.unlink()
        return w

    def _due_rotation(self, w: RecordingWriter, tick: Tick) -> bool:
        if not self.rotating or w.ticks == 0:
            return False
        if self.max_bytes is not None and w.size >= self.max_bytes:
            return True
        return (self.max_age_s is not None and w.first_wall is not None
                and tick.wall - w.first_wall >= self.max_age_s)

    def _run(self) -> None:
        """The recording's own writer thread."""
        while self._step():
            pass

    def _step(self) -> bool:
        """Write the next queued tick (in the writing thread: its own or the shared one);
        False once the end was queued and the recording is closed."""
        item = self._q.get()
        if item is None:
            self._finish()
            return False
        if self.error is not None or self._done.is_set():  # failed before (keep draining
            self.dropped += 1  # so write() never blocks), or a tick after the end
            return True
        try:
            c0 = time.thread_time()
            tick, update = item
            if self._writer is None:
                self._writer = self._open_next()
            elif self._due_rotation(self._writer, tick):
                old = self._writer
                self._writer = self._open_next()
                old.close(reason="rotate", next_file=self._writer.path.name)
            self._writer.write(tick, update)
            self.ticks_written += 1
            if time.monotonic() - self._last_sync >= self.fsync_s:
                self._writer.sync()
                self._last_sync = time.monotonic()
            self.cpu_s += time.thread_time() - c0
        except BaseException as e:  # surfaced by close(); the collector keeps running
            log.exception("recorder failed; ticks are no longer recorded")
            self.error = e
        return True

    def _finish(self) -> None:
        try:
            if self._writer is not None:
                try:
                    self._writer.close(dropped=self.dropped)
                except OSError as e:
                    self.error = self.error or e
        finally:
            self._done.set()


class SharedWriter:
    """One thread that writes many recordings (``Recorder(writer=...)``).

    ``replmon serve`` records every pair of the fleet: a writer thread per recording was
    200 threads at 200 pairs, ~100 KB of memory each (their stacks and malloc caches:
    49.9 MB for 200 recorders against 30.4 MB written from one thread, 30 ticks each).
    Each recording keeps its own bounded queue and its own drop count; the shared thread
    takes the recordings' ticks in the order they were queued. A recording that fails
    stops only itself. One slow disk write delays the others' (they are in one
    directory, on one disk, anyway): each drops its newest ticks once ``queue_max``
    behind, as with a thread of its own."""

    def __init__(self, name: str = "replmon-recorders") -> None:
        self._ready: queue.SimpleQueue[Recorder | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def notify(self, rec: Recorder) -> None:
        """``rec`` has queued one item (a tick or its end)."""
        self._ready.put(rec)

    def close(self) -> None:
        """Stop the thread (after the recordings were closed)."""
        self._ready.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (rec := self._ready.get()) is not None:
            rec._step()
