"""``replmon.model.packed``: a thinned tick's kept parts as bytes read back as the same
records, on every tick of every shipped recording (DRBD 8 and 9, MySQL replicas
stopped and lagging, Redis resyncs, Sentinel failovers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.model import packed
from replmon.model.packed import PackedPart, pack
from replmon.model.parts import PARTS, SAMPLES, DroppedPart, DroppedPartError, kept_parts, thin
from replmon.session.recording import open_recording

SESSIONS = sorted((Path(__file__).resolve().parents[3] / "sample_sessions").glob("*.rmrec"))


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_every_part_reads_back_equal(path: Path) -> None:
    keep = kept_parts(PARTS)  # everything kept: every record of the tick packed
    parts = ticks = 0
    for tick in open_recording(path).ticks():
        ticks += 1
        out = pack(thin(tick, keep))
        assert (out.seq, out.wall, out.roles, out.lag) == (tick.seq, tick.wall, tick.roles,
                                                           tick.lag)
        for role in ("primary", "replica"):
            node, was = getattr(out, role), getattr(tick, role)
            assert (node.role, node.name, node.given) == (was.role, was.name, was.given)
            for kind in packed.PACKED:
                got, want = getattr(node, kind), getattr(was, kind)
                assert type(got) is (PackedPart if want is not None else type(None))
                assert got.open() == want if want is not None else True, (kind, tick.seq)
                parts += want is not None
            for kind in SAMPLES:
                got, want = getattr(node.rates, kind), getattr(was.rates, kind)
                assert type(got) is PackedPart and got.open() == want, (kind, tick.seq)
    assert parts == 2 * len(packed.PACKED) * ticks > 0  # (a node's samples are never None)


def test_a_dropped_part_still_raises_once_read_back() -> None:
    tick = next(iter(open_recording(SESSIONS[0]).ticks()))
    out = pack(thin(tick, kept_parts(["redis", "rates.redis"])))  # not redis.counters
    redis = out.primary.redis
    assert type(redis) is PackedPart
    assert redis.role == tick.primary.redis.role  # what was kept reads as before
    assert type(redis.counters) is DroppedPart
    with pytest.raises(DroppedPartError, match="redis.counters"):
        redis.counters.get("sync_full")
    assert type(out.primary.host) is DroppedPart  # dropped whole: not packed


def test_a_packed_part_is_frozen_compares_as_its_record_and_decodes_once_in_a_row() -> None:
    tick = next(iter(open_recording(SESSIONS[0]).ticks()))
    record = tick.replica.redis
    part = PackedPart(record)
    with pytest.raises(AttributeError, match="frozen"):
        part.role = "primary"
    assert part == record and part == PackedPart(record) and part != PackedPart(tick.primary.redis)
    PackedPart(tick.primary.redis).open()  # another part opened last
    before = packed.opened
    assert (part.role, part.master_repl_offset) == (record.role, record.master_repl_offset)
    assert part.model_dump() == record.model_dump()  # a method: the record's
    assert packed.opened == before + 1  # read three times in a row: decoded once
    assert part.nbytes < 0.5 * len(record.model_dump_json())

