"""A recording gives back exactly the ticks (rates included), the findings and
the header that were written, compactly, with no secret in it."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from rawrecords import raw_records
from sessiondata import four_source_ticks, lab_ticks

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.model.base import SourceState, SourceStatus
from replmon.model.mysql import MysqlSample
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.facts import ChunkFacts, unpack_facts
from replmon.session.format import (
    FORMAT_VERSION,
    KIND_OBSERVATIONS,
    KIND_SUMMARY,
    MAGIC,
    ChunkObservations,
    unpack_observations,
)
from replmon.session.rerun import rerun_checks


def write(path: Path, ticks: list[Tick], **kw: object) -> Path:
    with RecordingWriter(path, meta_for(interval=1.0), **kw) as w:  # type: ignore[arg-type]
        for t in ticks:
            w.write(t)
    return path


def test_round_trip_is_exact_rates_included(tmp_path: Path, ticks_200: list[Tick]) -> None:
    rec = open_recording(write(tmp_path / "s.rmrec", ticks_200, chunk_ticks=50))
    assert len(rec) == 200 and len(rec.chunks) == 4 and rec.problems == []
    back = list(rec.ticks())
    assert back == ticks_200  # every sample and every derived rate, bit for bit
    assert back[120].primary.rates.mysql.qps is not None
    assert back[120].replica.rates.drbd.devices["0/0"].written_kib_s is not None
    assert rec.tick_at(149) == ticks_200[149] and rec.tick_at(150) == ticks_200[150]
    assert rec.end is not None and rec.end["ticks"] == 200


def test_header_describes_the_session(tmp_path: Path, ticks_200: list[Tick]) -> None:
    meta = open_recording(write(tmp_path / "s.rmrec", ticks_200[:3])).meta
    assert meta.format == "replmon-recording" and meta.version == FORMAT_VERSION == 3
    assert meta.started_wall == ticks_200[0].wall
    p, r = meta.nodes["primary"], meta.nodes["replica"]
    assert p.name == "lab-primary" and r.name == "lab-replica"
    assert p.mysql_version.startswith("10.11") and "MariaDB" in p.mysql_version
    assert p.redis_version == ticks_200[0].primary.redis.version != ""
    assert (p.drbd_version, r.drbd_version) == ("8.4.4", "8.4.6")


def test_compact_for_all_four_sources_on_both_nodes(tmp_path: Path,
                                                     ticks_200: list[Tick]) -> None:
    path = write(tmp_path / "s.rmrec", ticks_200)
    per_tick = path.stat().st_size / len(ticks_200)
    raw = sum(len(t.model_dump_json()) for t in ticks_200) / len(ticks_200)
    assert per_tick <= 2048, f"{per_tick:.0f} B/tick (JSON of a tick: {raw:.0f} B)"


def test_recorder_attached_mid_session_keeps_the_live_rates(tmp_path: Path,
                                                             ticks_200: list[Tick]) -> None:
    # Ticks 10.. (rates of tick 10 came from tick 9, which is not in the file) and a
    # gap of 5 ticks: the writer stores exactly the rates it cannot leave to the reader.
    ticks = ticks_200[10:40] + ticks_200[45:60]
    rec = open_recording(write(tmp_path / "s.rmrec", ticks))
    assert list(rec.ticks()) == ticks
    assert rec.tick_at(0).primary.rates.mysql.qps == ticks_200[10].primary.rates.mysql.qps
    stored = [json.loads(r.partition(b"\n")[2] or b"{}") for r in raw_records(rec.path)
              if r.startswith(b'{"seq"')]
    assert [i for i, extra in enumerate(stored) if "r" in extra] == [0, 30]


def _mysql_down(t: Tick) -> Tick:
    down = MysqlSample(status=SourceStatus(state=SourceState.UNREACHABLE, since=t.wall,
                                           error="(2003) Can't connect: refused"),
                       wall=t.wall, mono=t.mono)
    return t.model_copy(update={"replica": t.replica.model_copy(update={"mysql": down})})


def test_findings_recorded_and_rerun(tmp_path: Path, ticks_200: list[Tick]) -> None:
    ticks = ticks_200[:10] + [_mysql_down(t) for t in ticks_200[10:30]] + ticks_200[30:50]
    engine = build_engine(entry_points=False)
    path = tmp_path / "s.rmrec"
    live = []
    with RecordingWriter(path, meta_for(interval=1.0)) as w:
        for t in ticks:
            live.append(engine.feed(t))
            w.write(t, live[-1])
    rec = open_recording(path)
    recorded = [rec.update_at(i) for i in range(len(rec))]
    assert [(u.seq, [f.ident for f in u.open], [f.ident for f in u.opened],
             [f.ident for f in u.closed]) for u in recorded if u] == \
           [(u.seq, [f.ident for f in u.open], [f.ident for f in u.opened],
             [f.ident for f in u.closed]) for u in live]
    assert recorded[20] is not None and recorded[20].open == live[20].open
    opened = [f for u in live for f in u.opened]
    assert any(f.node == "replica" and "mysql" in f.title.lower() for f in opened), opened
    rerun = rerun_checks(rec, entry_points=False)
    assert [[f.ident for f in u.opened] for u in rerun] == [[f.ident for f in u.opened]
                                                              for u in live]


def test_seek_by_wall_time(tmp_path: Path, ticks_200: list[Tick]) -> None:
    rec = open_recording(write(tmp_path / "s.rmrec", ticks_200, chunk_ticks=60))
    assert rec.seek(ticks_200[0].wall - 100) == 0
    assert rec.seek(ticks_200[-1].wall + 100) == 199
    for i in (0, 59, 60, 61, 137, 199):
        assert rec.seek(ticks_200[i].wall) == i
        assert rec.seek(ticks_200[i].wall - 0.001) == i


def test_no_secret_anywhere_in_the_file(tmp_path: Path) -> None:
    secrets = ("s3cret-mysql-pw", "s3cret-redis-pw")
    config = build_config({
        "primary": {"host": "db163", "mysql": {"password": secrets[0]},
                    "redis": {"password": secrets[1]}},
        "replica": {"host": "db162", "mysql": {"password": secrets[0]}},
        "checks": {"stmt_vs_rows": {"open_after": 2}},
    })
    path = tmp_path / "s.rmrec"
    with RecordingWriter(path, meta_for(config)) as w:
        for t in lab_ticks():
            w.write(t)
    blobs = [path.read_bytes(), *raw_records(path)]
    for s in secrets:
        assert not any(s.encode() in b for b in blobs), s
    meta = open_recording(path).meta
    assert meta.config is not None
    assert meta.config["primary"]["mysql"]["password"] == "**********"
    assert meta.checks == {"stmt_vs_rows": {"open_after": 2}}
    assert path.read_bytes().startswith(MAGIC)
    assert any(b"db163" in b for b in blobs)  # the audit does look into the payloads


def test_records_are_json_inside_zlib(tmp_path: Path) -> None:
    # Data only: a plain zlib + JSON reader (no replmon) can read a tick record.
    path = write(tmp_path / "s.rmrec", lab_ticks()[:2])
    records = [json.loads(r.partition(b"\n")[0]) for r in list(raw_records(path))[1:]]
    assert [r["seq"] for r in records if "seq" in r and "wall" in r] == [0, 1]  # the ticks
    assert any("peaks" in r for r in records)  # the summary frame, its zlib undone
    assert zlib.decompressobj  # stdlib only


def test_observations_frames_read_as_pydantic_reads_them(tmp_path: Path) -> None:
    """``unpack_observations`` and ``unpack_facts`` read a chunk's observations and summary
    frames with msgspec (every re-run and report reads one of each a chunk): the same
    records pydantic validates from the same bytes, on frames with findings, gauges of
    every gated check and events, and the same refusals."""
    engine = build_engine(entry_points=False)
    path = tmp_path / "obs.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=30) as w:
        for t in four_source_ticks(120):  # a DRBD peer down: seen at every tick
            w.write(t, engine.feed(t))
    with open_recording(path) as rec:
        frames = [fr.payload for ci in range(len(rec.chunks)) for fr in rec.frames(ci)
                  if fr.kind == KIND_OBSERVATIONS]
        summaries = [fr.payload for ci in range(len(rec.chunks)) for fr in rec.frames(ci)
                     if fr.kind == KIND_SUMMARY]
    assert len(summaries) == 4
    for payload in summaries:
        facts = unpack_facts(payload)
        assert facts == ChunkFacts.model_validate_json(zlib.decompress(payload))
        assert type(facts.seq[0]) is int and facts.charts
    assert any(unpack_facts(payload).events for payload in summaries)
    assert len(frames) == 4
    for payload in frames:
        got = unpack_observations(payload)
        want = ChunkObservations.model_validate_json(zlib.decompress(payload))
        assert got == want and got.seen and got.gauges
        assert type(got.first) is int and all(type(p) is tuple for ps in got.seen.values()
                                              for p in ps)
    good = json.loads(zlib.decompress(frames[0]))
    for bad in ({**good, "first": "zero"}, {**good, "seen": {"0": [["x", 1]]}},
                {**good, "gauges": {"c": [["high"]]}}, {k: v for k, v in good.items()
                                                        if k != "count"}):
        with pytest.raises(ValueError, match="observations do not read"):
            unpack_observations(zlib.compress(json.dumps(bad).encode()))
        with pytest.raises(ValueError, match="validation error"):
            ChunkObservations.model_validate_json(json.dumps(bad))
