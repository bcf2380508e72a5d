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


def test_parts_are_compressed_under_pythons_small_block_size_and_keep_their_dictionary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab's real ticks, each part deflated with the dictionary of its class's first
    two records: every part is at most 480 bytes of data (a bytes object of at most 512:
    a block of Python's allocator, not of glibc's heap), and a quarter of its encoding or
    less for the large ones. A part keeps the dictionary it was made with: it reads back
    after the dictionaries start anew (another process's, another pair's)."""
    import msgspec

    from replmon.model.tick import Tick

    monkeypatch.setattr(packed, "_dictionaries", {})
    path = Path(__file__).resolve().parents[2] / "fixtures" / "ticks" / "lab_pair.jsonl"
    ticks = [Tick.model_validate_json(line) for line in path.read_text().splitlines()]
    keep = kept_parts(PARTS)
    made = [(pack(thin(t, keep)), t) for t in ticks]
    sizes: dict[str, list[tuple[int, int]]] = {}
    for out, tick in made:
        for role in ("primary", "replica"):
            for kind in packed.PACKED:
                part, record = getattr(getattr(out, role), kind), getattr(getattr(tick, role), kind)
                raw = len(msgspec.msgpack.encode(packed._layout(type(record))[2](record)))
                sizes.setdefault(kind, []).append((part.nbytes, raw))
    for kind, pairs in sizes.items():
        assert max(n for n, _ in pairs) <= 480, (kind, pairs)
        big = [(n, raw) for n, raw in pairs[4:] if raw > 500]  # after the dictionary's two
        assert all(n * 4 <= raw for n, raw in big), (kind, big)
    assert any(raw > 500 for pairs in sizes.values() for _, raw in pairs)  # (some are large)
    monkeypatch.setattr(packed, "_dictionaries", {})  # a new dictionary for the next parts
    packed._last = (None, None)
    for out, tick in made:
        assert out.replica.mysql == tick.replica.mysql and out.primary.redis == tick.primary.redis
