"""Damage anywhere costs at most the chunk it hits (docs/recording.md, "What damage
costs"). A seeded loop damages real recordings, written as a live session writes them
(the live engine's updates and observations, rotated into parts), at every frame kind
(header, key frame, tick frame, observations, end frame; the last frame of a part and
the first of the next), by truncation, byte flips and zeroed ranges, and asserts:

- nothing but a SessionError (for a file with no readable key frame left) escapes
  opening, reading every tick, re-running the checks (stored observations and observed
  again, which must agree) and the report;
- every tick whose chunk the damage did not reach is read, exactly as written;
- every tick not read is named in a damage report ("ticks A to B lost", "ticks from
  A on are missing"), and an intact file reports nothing.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from sessiondata import four_source_ticks

from replmon.engine import build_engine
from replmon.errors import SessionError
from replmon.output.report import report
from replmon.session import Recorder, meta_for, open_recording
from replmon.session.format import MAGIC, read_frame
from replmon.session.rerun import Rerun

pytestmark = pytest.mark.xdist_group("damage_fuzz")
"""One worker builds ``parts`` (~5 s of CPU) and runs every case on it: spread over the
six workers, each built it again (51 s of setups in one run under load)."""

TICKS = 240
CHUNK = 20
SEED = 13
CASES_PER_KIND = 2


@dataclass(frozen=True)
class FrameAt:
    offset: int
    end: int
    kind: bytes
    index: int


def frames(data: bytes) -> list[FrameAt]:
    out, pos = [], len(MAGIC)
    while pos < len(data):
        fr = read_frame(data, pos)
        out.append(FrameAt(pos, fr.end, fr.kind, fr.index))
        pos = fr.end
    return out


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A live-style recording rotated into parts of ~120 KB: each part has a header,
    key frames, tick frames, observations frames and an end frame."""
    path = tmp_path_factory.mktemp("fuzz") / "live.rmrec"
    ticks = four_source_ticks(TICKS)
    engine = build_engine(entry_points=False)

    async def record() -> list[Path]:
        async with Recorder(path, meta_for(interval=1.0), chunk_ticks=CHUNK,
                            max_bytes=120_000) as rec:
            for t in ticks:
                rec.write(t, engine.feed(t))
        return rec.files

    files = asyncio.run(record())
    assert len(files) >= 2
    return files


def tick_texts(path: Path) -> dict[int, str]:
    with open_recording(path) as rec:
        return {e.index: e.tick.model_dump_json() for e in rec.entries()}


@pytest.fixture(scope="module")
def originals(parts: list[Path]) -> dict[Path, dict[int, str]]:
    """Each intact part's ticks as read (once for the module's cases, not once a case:
    the parts are only read)."""
    return {p: tick_texts(p) for p in parts}


def expected_readable(layout: list[FrameAt], start: int, stop: int) -> set[int]:
    """Ticks whose key frame and every tick frame of their chunk up to theirs lie
    outside the damaged bytes [start, stop)."""
    out: set[int] = set()
    chunk_ok = False
    for f in layout:
        hit = f.offset < stop and start < f.end
        if f.kind == b"K":
            chunk_ok = not hit
        elif f.kind == b"T":
            chunk_ok = chunk_ok and not hit
            if chunk_ok:
                out.add(f.index)
    return out


def named_lost(problems: list[str], total: int) -> set[int]:
    out: set[int] = set()
    for p in problems:
        for a, b in re.findall(r"ticks (\d+) to (\d+) lost", p):
            out |= set(range(int(a), int(b) + 1))
        for a in re.findall(r"ticks from (\d+) on are missing", p):
            out |= set(range(int(a), total))
    return out


def damage(data: bytes, f: FrameAt, how: str, rnd: random.Random) -> tuple[bytes, int, int]:
    """The damaged bytes and the damaged range [start, stop)."""
    at = rnd.randrange(f.offset, f.end)
    if how == "truncate":
        return data[:at], at, len(data)
    buf = bytearray(data)
    if how == "flip":
        spots = sorted(rnd.sample(range(f.offset, f.end), min(3, f.end - f.offset)))
        for s in spots:
            buf[s] ^= rnd.randrange(1, 256)
        return bytes(buf), spots[0], spots[-1] + 1
    stop = min(f.end, at + rnd.randint(1, 64))
    if not any(buf[at:stop]):  # already zero: zero the frame's first bytes instead
        at, stop = f.offset, f.offset + 8
    buf[at:stop] = bytes(stop - at)
    return bytes(buf), at, stop


KINDS = {"header": b"H", "key": b"K", "tick": b"T", "observations": b"O", "end": b"E"}


@pytest.mark.parametrize("how", ["truncate", "flip", "zero"])
@pytest.mark.parametrize("kind", [*KINDS, "rotation-boundary"])
def test_damage_costs_at_most_its_chunk(parts: list[Path],
                                        originals: dict[Path, dict[int, str]],
                                        tmp_path: Path, kind: str, how: str) -> None:
    rnd = random.Random(f"{SEED}-{kind}-{how}")
    for case in range(CASES_PER_KIND):
        if kind == "rotation-boundary":  # the end of one part or the start of the next
            i = rnd.randrange(len(parts) - 1)
            src, pick = ((parts[i], lambda fs: fs[-1:]) if case % 2 == 0
                         else (parts[i + 1], lambda fs: fs[:2]))
        else:
            src = parts[rnd.randrange(len(parts))]
            pick = lambda fs: [f for f in fs if f.kind == KINDS[kind]]  # noqa: E731
        data = src.read_bytes()
        layout = frames(data)
        original = originals[src]
        total = max(original) + 1
        target = rnd.choice(pick(layout))
        bad, start, stop = damage(data, target, how, rnd)
        path = tmp_path / f"{kind}-{how}-{case}.rmrec"
        path.write_bytes(bad)
        where = f"{kind}/{how}/{case}: {src.name} frame {target.kind!r} at {target.offset}"
        try:
            rec = open_recording(path)
        except SessionError:
            # only when no key frame survives: the header cut or garbled and nothing after
            assert not expected_readable(layout, start, stop), where
            continue
        with rec:
            got = {e.index: e.tick.model_dump_json() for e in rec.entries()}
            problems = list(rec.problems)
            assert all(got[i] == original[i] for i in got), where
            want = expected_readable(layout, start, stop)
            assert want <= set(got), f"{where}: intact ticks not read {sorted(want - set(got))}"
            lost = set(original) - set(got)
            assert lost <= named_lost(problems, total), f"{where}: {problems}"
            if lost or kind in ("header", "key", "tick"):
                assert problems, where
            settings = {"drbd_peer": {"open_after": "5s"}}
            fast = [(u.seq, [f.ident for f in u.open]) for u in
                    Rerun(rec, settings, entry_points=False, workers=1)]
            again = [(u.seq, [f.ident for f in u.open]) for u in
                     Rerun(rec, settings, entry_points=False, workers=1, stored=False)]
            assert fast == again and len(fast) == len(got), where
            report(rec)


def test_an_intact_recording_reports_nothing(parts: list[Path]) -> None:
    for p in parts:
        with open_recording(p) as rec:
            assert len(list(rec.entries())) == len(rec) and rec.problems == []
            assert rec.end is not None
