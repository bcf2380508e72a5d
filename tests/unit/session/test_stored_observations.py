"""A re-run that takes the live engine's stored observations (observations frames) where they are
today's checks' gives, tick for tick, what observing every tick again gives: on a
recording whose findings open, hold, flap and close across chunks, intact and damaged
(a tick frame, an observations frame), in this process and in worker processes; and on every
shipped sample session. With other thresholds, the stored observations of every check
whose observing thresholds are the recorded ones are still used, and only the others are
observed again: the result is again the observed one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessiondata import CHUNK, LIVE_TICKS, SHARES_LIVE, dump, flapping_ticks, record_live

from replmon.engine import build_engine
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.format import HEADER_SIZE, KIND_OBSERVATIONS, KIND_TICK, MAGIC, read_frame
from replmon.session.rerun import Rerun
from replmon.session.reuse import plan_reuse, stored_usable
from replmon.testing.real_ticks import loop_ticks

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted(p for p in (ROOT / "sample_sessions").glob("*.rmrec") if p.stem in {
    "replica_sql_stopped", "planned_switchover", "redis_writes_refused",
    "redis_link_down_full_resync", "auto_increment_updates_miss", "drbd_peer_disconnected"})
"""The sessions looped and re-checked from stored observations: one of each kind of
finding (replication stopped, roles changing, writes refused, a full resync, statements
against rows, DRBD); every session costs ~10 s of the suite's 8 minutes."""

TICKS = LIVE_TICKS
"""``live``'s length (sessiondata.LIVE_TICKS: why 750)."""
USED = TICKS // CHUNK - 10
"""The chunks of ``live`` whose stored observations are usable (10 to 24)."""
DAMAGED_TICK = 400
"""The tick whose frame the damaged copies of ``live`` lose (chunk 13, ticks 400-419 lost):
the stored observations of chunks 10-12 before it are used, those of chunks 13-23 (its
window) are not, and those of chunk 24 are again."""


def run(path: Path, *, stored: bool, workers: int = 1,
        settings: dict[str, Any] | None = None) -> tuple[list[Any], list[str]]:
    with open_recording(path) as rec:
        ups = list(Rerun(rec, settings, entry_points=False, workers=workers, stored=stored))
        return [dump(u) for u in ups], list(rec.problems)


@pytest.fixture(scope="module", autouse=True)
def no_flap_detection() -> Any:
    """Findings then open and close all along the file, in the stored stretch too."""
    import replmon.engine

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replmon.engine, "FLAP_OPENS", 10**9)
        yield


# SHARES_LIVE: the tests that read ``live`` (and ``observed``) run on one worker, with
# test_changes' (each worker that ran one built both fixtures again: ~10 s of CPU each,
# 27-35 s of setup under load).


@pytest.fixture(scope="module")
def live(flap_live: Path) -> Path:
    """conftest's ``flap_live``: the first TICKS flapping ticks, rates as collected,
    recorded live (shared with test_changes)."""
    return flap_live


@pytest.fixture(scope="module")
def observed(live_observed: tuple[list[tuple[int, Any]], list[Any]]) -> list[Any]:
    """``live`` re-run observing every tick again without flap detection (what each
    stored re-run must equal): conftest's ``live_observed``, worked out once for the
    module's tests and test_changes'."""
    return [u for _, u in live_observed[0]]


def _frame_at(data: bytes, kind: bytes, index: int) -> int:
    pos = len(MAGIC)
    while True:
        fr = read_frame(data, pos)
        if fr.kind == kind and fr.index == index:
            return pos
        pos = fr.end


@SHARES_LIVE
def test_stored_observations_are_used_after_one_window(live: Path) -> None:
    with open_recording(live) as rec:
        use = stored_usable(rec, build_engine(entry_points=False), 0, len(rec.chunks))
        # the 300 s window needs 299 intact ticks before a chunk: chunks 0-9 are observed
        assert sorted(use) == list(range(10, TICKS // CHUNK))
        other = build_engine({"drbd_peer": {"open_after": "7s"}}, entry_points=False)
        assert stored_usable(rec, other, 0, len(rec.chunks)) == {}


@SHARES_LIVE
@pytest.mark.parametrize("workers", [1, 2])
def test_stored_rerun_is_the_observed_one(live: Path, observed: list[Any],
                                          workers: int) -> None:
    again = observed
    assert len(again) == TICKS
    assert any(u[3] for u in again[400:]) and any(u[4] for u in again[400:])
    fast, problems = run(live, stored=True, workers=workers)
    assert problems == []
    for a, b in zip(again, fast, strict=True):
        assert a == b, f"tick {a[0]} differs"


def _damaged(live: Path, tmp_path: Path) -> Path:
    """``live`` with bytes flipped in tick DAMAGED_TICK's frame (its chunk is lost)."""
    data = bytearray(live.read_bytes())
    pos = _frame_at(bytes(data), KIND_TICK, DAMAGED_TICK)
    for k in range(HEADER_SIZE + 2, HEADER_SIZE + 8):
        data[pos + k] ^= 0x5A
    bad = tmp_path / "bad.rmrec"
    bad.write_bytes(bytes(data))
    return bad


OTHER: dict[str, dict[str, Any]] = {
    "one-check": {"drbd_peer": {"disconnected_critical_s": 5},
                  "throughput_collapse": {"open_after": "5s"}},
    "hold-times-and-one-off": {"drbd_peer": {"open_after": "7s", "close_after": "5s"},
                               "link_saturation": {"enabled": False}},
}
"""Other thresholds: one check's limits (a check that names what it reads: observed again
on ticks decoded to that) and another's hold time, in worker processes, on a file with a
damaged tick frame (its chunk and the window after it observed whole again); only hold
times and a check switched off (nothing observed again, its stored ones dropped).
test_every_sample_session has a check that reads whole ticks."""
AGAIN = {"one-check": {"drbd_peer"}, "hold-times-and-one-off": set()}


@SHARES_LIVE
@pytest.mark.parametrize("case", list(OTHER))
def test_other_thresholds_reuse_the_unchanged_checks(live: Path, observed: list[Any],
                                                     tmp_path: Path, case: str) -> None:
    """The re-run with other thresholds takes the stored observations of every check that
    kept its observing thresholds, observes the others again, and gives what observing
    every tick again with those thresholds gives, tick for tick."""
    settings = OTHER[case]
    path, workers = (_damaged(live, tmp_path), 2) if AGAIN[case] else (live, 1)
    with open_recording(path) as rec:
        reuse = plan_reuse(rec, build_engine(settings, entry_points=False), 0,
                           len(rec.chunks), entry_points=False)
        assert reuse.again is not None
        # the damaged chunk and the window after it observed whole, the rest stored
        assert sorted(reuse.use) == ([10, 11, 12, *range(24, TICKS // CHUNK)] if AGAIN[case]
                                     else list(range(10, TICKS // CHUNK)))
        assert {c.id for c, _ in reuse.again.checks} == AGAIN[case]
        assert reuse.parts == frozenset({"drbd", "rates.drbd"} if AGAIN[case] else ())
    again, problems = run(path, stored=False, settings=settings)
    fast, problems_fast = run(path, stored=True, settings=settings, workers=workers)
    assert problems_fast == problems and bool(problems) == (path != live)
    assert len(fast) == TICKS - 20 * (path != live)
    for a, b in zip(again, fast, strict=True):
        assert a == b, f"tick {a[0]} differs"
    assert fast[:len(observed) // 2] != observed[:len(observed) // 2]  # what opens changes


@SHARES_LIVE
@pytest.mark.parametrize(("kind", "index"), [(KIND_TICK, 580), (KIND_OBSERVATIONS, 600)],
                         ids=["tick-frame", "obs-frame"])
def test_stored_rerun_of_a_damaged_file(live: Path, tmp_path: Path, kind: bytes,
                                        index: int) -> None:
    """Damage costs the stored observations of the chunks whose window it touches: those
    are observed again, and the result is still the observed one. The tick frame lost is
    inside the DRBD peer's outage (ticks 580-599 lost): what the checks say after it
    differs without them, so stored observations of a window that held them would not
    pass for the observed ones (at tick 400, among the flaps, they would)."""
    data = bytearray(live.read_bytes())
    pos = _frame_at(bytes(data), kind, index)
    for k in range(HEADER_SIZE + 2, HEADER_SIZE + 8):
        data[pos + k] ^= 0x5A
    bad = tmp_path / "bad.rmrec"
    bad.write_bytes(bytes(data))
    again, problems = run(bad, stored=False)
    fast, problems_fast = run(bad, stored=True)
    assert fast == again
    assert problems_fast and all("byte" in p for p in problems_fast)
    if kind == KIND_TICK:
        assert index not in {u[0] for u in fast}
        assert len(fast) == TICKS - (index % CHUNK and CHUNK - index % CHUNK)
    else:
        assert len(fast) == TICKS and any("no tick lost" in p for p in problems_fast)


GATED: dict[str, tuple[dict[str, dict[str, Any]], set[str]]] = {
    "quiet": ({"pair_lag": {"lag_after": "5s"}}, set()),
    "one-of-two-loud": ({"pair_lag": {"lag_after": "5s"},
                         "disk_saturation": {"iowait_pct": 1.0}}, {"disk_saturation"}),
}
"""pair_lag with a limit above every lag of the file (the lab's: 0 s): quiet everywhere,
no chunk decoded. With disk_saturation's iowait limit under the lab's (1.55 % every 12th
tick) too: every chunk is decoded, for disk_saturation alone."""


@SHARES_LIVE
@pytest.mark.parametrize("case", list(GATED))
def test_a_gated_check_is_observed_again_only_where_its_gate_is_not_quiet(
        live: Path, case: str) -> None:
    """The recorder stored each gated check's gauges for every tick of every chunk; a
    re-check with other limits decodes only the chunks where a changed check's gate is
    not quiet with them, for those checks alone, and gives what observing every tick
    again gives."""
    settings, loud_ids = GATED[case]
    with open_recording(live) as rec:
        reuse = plan_reuse(rec, build_engine(settings, entry_points=False), 0,
                           len(rec.chunks), entry_points=False)
        assert len(reuse.use) == USED
        assert all(len(obs.gauges[cid]) == obs.count for obs, _ in reuse.use.values()
                   for cid in settings)
        loud = [{c.id for eng, _ in reuse.loud(obs) for c, _ in eng.checks}
                for obs, _ in reuse.use.values()]
    assert loud == [loud_ids] * USED
    again, _ = run(live, stored=False, settings=settings)
    fast, _ = run(live, stored=True, settings=settings)
    assert fast == again


RESTATED: dict[str, tuple[dict[str, dict[str, Any]], int]] = {
    "severity-only": ({"drbd_peer": {"disconnected_critical_s": 5.5}}, 0),
    "severity-at-a-down-time": ({"drbd_peer": {"disconnected_critical_s": 5.0}}, 2),
    "severity-and-io-stall": ({"drbd_peer": {"disconnected_critical_s": 5.5,
                                             "io_stall": "6s"}}, USED),
    "severity-and-pair-lag": ({"drbd_peer": {"disconnected_critical_s": 30.0},
                               "pair_lag": {"lag_after": "5s"}}, 0),
}
"""drbd_peer re-checked with another ``disconnected_critical_s``, and in how many of the
15 chunks used its ticks are decoded for it: none where only that limit changed (its
restate tells each peer disconnected's severity from the ``down_s`` stored with it), the 2
chunks where the limit falls on a down time their ticks hold (5 s: ``down_s`` is stored
rounded, so the restate cannot tell), every chunk where another of its limits changed
too (the I/O stall's: no restate; observed again as before, which the other tests here
hold to observing every tick, so this case is not re-run)."""


@SHARES_LIVE
@pytest.mark.parametrize("case", list(RESTATED))
def test_drbd_peer_restates_its_stored_observations(live: Path, observed: list[Any],
                                                    case: str) -> None:
    """The peer of ``live`` flaps all along (down in some tick of every chunk: drbd_peer
    is loud in every chunk whatever its limits): a re-check with another
    ``disconnected_critical_s`` restates its stored observations instead of decoding
    the ticks, and gives what observing every tick again gives."""
    settings, decoded = RESTATED[case]
    with open_recording(live) as rec:
        reuse = plan_reuse(rec, build_engine(settings, entry_points=False), 0,
                           len(rec.chunks), entry_points=False)
        assert len(reuse.use) == USED
        loud = [reuse.loud(obs) for obs, _ in reuse.use.values()]
        restated = [reuse.plan(obs)[1] for obs, _ in reuse.use.values()]
    assert sum(bool(got) for got in loud) == decoded
    if not decoded:
        assert all(restated)  # a peer disconnected in every chunk, restated
        assert {p[3] for got in restated for seen in got.values() for p in seen} == {1, 2}
    if decoded == len(loud):
        assert not any(restated)
        return
    again, _ = run(live, stored=False, settings=settings)
    fast, _ = run(live, stored=True, settings=settings)
    assert fast == again


def test_a_file_without_gauges_is_observed_again(tmp_path: Path) -> None:
    """A recording whose observations frames hold no gauges (written before gates, or by an engine
    whose checks had none): a re-check with other limits decodes every chunk for the
    changed check, and still gives what observing every tick again gives."""
    engine = build_engine(entry_points=False)
    path = tmp_path / "old.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=CHUNK) as w:
        for t in flapping_ticks()[:480]:
            upd = engine.feed(t)
            upd.gauges = {}
            w.write(t, upd)
    settings = {"pair_lag": {"lag_after": "5s"}, "disk_saturation": {"iowait_pct": 30.0}}
    with open_recording(path) as rec:
        reuse = plan_reuse(rec, build_engine(settings, entry_points=False), 0,
                           len(rec.chunks), entry_points=False)
        assert len(reuse.use) == 6 and all(not obs.gauges for obs, _ in reuse.use.values())
        assert all({c.id for eng, _ in reuse.loud(obs) for c, _ in eng.checks} == set(settings)
                   for obs, _ in reuse.use.values())
    assert run(path, stored=True, settings=settings) == run(path, stored=False,
                                                            settings=settings)


OTHER_THRESHOLDS_ON = {"replica_sql_stopped", "redis_link_down_full_resync",
                       "drbd_peer_disconnected"}
"""The sessions re-checked with other thresholds too (~3 s of CPU each): one whose lag
the changed pair_lag judges (the SQL thread stopped: its lag grows), one of Redis, one of
DRBD. Each must be one of SAMPLES (test_the_sessions_re_checked_are_looped)."""


def test_the_sessions_re_checked_are_looped() -> None:
    """A name in OTHER_THRESHOLDS_ON that is not looped is a re-check that never runs
    (replica_lag_growing was, until 2026-12-06)."""
    assert {p.stem for p in SAMPLES} >= OTHER_THRESHOLDS_ON


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_every_sample_session(sample: Path, tmp_path: Path) -> None:
    """The shipped sessions (format 1 without stored observations, but for the
    switchover's), looped long enough for stored observations to be used, recorded as a
    live session would be."""
    with open_recording(sample) as rec:
        ticks = list(rec.ticks())
        interval = rec.meta.interval
    # The stored observations of a chunk are usable once the window before it (300 s,
    # 299 ticks) is intact: from chunk ``warm`` on. Loop for that and then at least one
    # whole lap of the session in chunks used (3 at the least): every finding the
    # session opens, holds and closes is then also met where they are used, across
    # several of their chunks. (The 900 s it looped before met the same ticks of the
    # session, lap after lap.)
    engine = build_engine(entry_points=False)
    warm = -(-(engine.window_ticks(interval) - 1) // CHUNK)
    used = max(3, -(-len(ticks) // CHUNK))
    n = (warm + used) * CHUNK
    path = record_live(tmp_path / "live.rmrec", list(loop_ticks(ticks, n, rates=True)))
    with open_recording(path) as rec:
        usable = stored_usable(rec, engine, 0, len(rec.chunks))
        assert sorted(usable) == list(range(warm, warm + used)) and len(usable) >= 3
    again, _ = run(path, stored=False)
    fast, _ = run(path, stored=True)
    assert len(fast) == n and fast == again
    if sample.stem not in OTHER_THRESHOLDS_ON:
        return
    # other thresholds: two checks observed again (one of them reads whole ticks), a
    # third's hold time changed; the rest from the stored observations
    other = {"pair_lag": {"lag_after": "2s", "lag_critical": "5s"},
             "throughput_collapse": {"warning_ratio": 0.5},
             "mysql_replication": {"open_after": "5s"}}
    again, _ = run(path, stored=False, settings=other)
    fast, _ = run(path, stored=True, settings=other)
    assert len(fast) == n and fast == again


def test_a_derive_writer_stores_no_observations(tmp_path: Path) -> None:
    """Ticks fed to the engine without rates and written with rates="derive": the reader
    derives rates the engine never saw, so their observations must not be stored (the
    day bench once reused them and disagreed with the observed-again run)."""
    ticks = flapping_ticks()[:400]  # no rates attached (as loop_ticks(them, 400) gave them)
    engine = build_engine(entry_points=False)
    path = tmp_path / "derive.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=CHUNK, rates="derive") as w:
        for t in ticks:
            w.write(t, engine.feed(t))
    with open_recording(path) as rec:
        assert all(rec.chunk_observations(ci)[0] is None for ci in range(len(rec.chunks)))
    assert run(path, stored=True) == run(path, stored=False)


@SHARES_LIVE
def test_a_cut_keeps_the_stored_observations_and_the_incidents(live: Path,
                                                               tmp_path: Path) -> None:
    """``replmon cut`` in the middle of a long recording (its warm-up starts well after
    the file's start), around the DRBD peer's long outage: the incidents inside the
    window are the whole file's, the live engine's observations are kept (observations frames) and
    a re-run that uses them gives what observing every tick of the cut again gives."""
    from replmon.testing.cuts import cut_every_incident

    def down(incidents: list[Any]) -> list[Any]:  # the DRBD peer down (ticks 540-700)
        with open_recording(live) as rec:
            at = rec.tick_at(600).wall
        return [next(i for i in incidents if i.opened_wall <= at <= (i.closed_wall or at))]

    cuts = cut_every_incident(live, tmp_path, margin_s=20.0, pick=down)
    assert len(cuts) == 1
    for done, want, got in cuts:
        assert want and got == want
        assert done.warm_up >= 300 and done.ticks < TICKS and done.observations > 0
        again, _ = run(done.path, stored=False)
        fast, _ = run(done.path, stored=True)
        assert fast == again


def test_check_replay_with_a_config_s_thresholds(tmp_path: Path) -> None:
    """``check --replay FILE --config OTHER.toml``: the file's [checks.*] keys over the
    recorded ones judge the recording; a key no check has is a one-line config error."""
    from replmon.commands import check_replay
    from replmon.errors import ConfigError

    sample = ROOT / "sample_sessions" / "replica_lag_growing.rmrec"
    def lag_titles(config: str | None = None) -> list[str]:
        run = check_replay(str(sample), config)
        return [f.title for f in run.open if f.check == "mysql_replication"]

    assert lag_titles() == ["replication lag 120 s (over 30 s), growing 60.0 s/min over 59 s"]
    other = tmp_path / "other.toml"
    other.write_text('[checks.mysql_replication]\nlag_warning_s = 200.0\n'
                     'lag_critical_s = 400.0\n')
    assert lag_titles(str(other)) == ["replication lag 120 s, growing 60.0 s/min over 59 s"]
    other.write_text("[checks.mysql_replication]\nlag_warning = 200\n")
    with pytest.raises(ConfigError, match="lag_warning"):
        check_replay(str(sample), str(other))


MYSQL_GATED: dict[str, tuple[dict[str, dict[str, Any]], int]] = {
    "applier_progress": ({"applier_progress": {"stall_after": "10s"}}, 0),
    "mysql_replication": ({"mysql_replication": {"lag_warning_s": 10,
                                                 "growth_min_rise_s": 5}}, 0),
    "stmt_vs_rows": ({"stmt_vs_rows": {"max_rows_per_statement": 0.9,
                                       "min_statements_per_s": 50}}, 0),
    "throughput_collapse": ({"throughput_collapse": {"warning_ratio": 0.5}}, 0),
    "latency_bound": ({"latency_bound": {"rise_min_ms": 3.0}}, 0),
    "latency_bound-loud": ({"latency_bound": {"rise_min_ms": 1.0, "warning_ms": 4.0}},
                           USED),
}
"""A gated check of the MySQL side re-checked with other observing limits, and how many
of the 15 chunks used its gate is loud in: the lab's replication is idle and its round trips
spike to 1-4 ms (at 1 ms a rise, at 4 ms a high one, in every chunk)."""


QUIET_AT_ONCE: dict[str, dict[str, Any]] = {
    check: limits for settings, loud in MYSQL_GATED.values() if not loud
    for check, limits in settings.items()}
"""The cases whose gate is quiet in every chunk, their limits changed together: each
case's plan is checked on its own (which chunks its gate decodes: none), the re-check
run against observing every tick again once for them all (a stored observation of any
of them restated or reused wrongly makes that run differ from the observed one; one
pair of runs a case cost ~2.5 s of CPU each, for the same comparison)."""


def _loud_chunks(live: Path, settings: dict[str, dict[str, Any]]) -> int:
    with open_recording(live) as rec:
        reuse = plan_reuse(rec, build_engine(settings, entry_points=False), 0,
                           len(rec.chunks), entry_points=False)
        assert len(reuse.use) == USED
        return sum(bool(reuse.loud(obs)) for obs, _ in reuse.use.values())


@SHARES_LIVE
@pytest.mark.parametrize("case", list(MYSQL_GATED))
def test_the_mysql_gates_in_a_recheck(live: Path, case: str) -> None:
    """The gauges of applier_progress, mysql_replication, stmt_vs_rows,
    throughput_collapse and latency_bound, stored by the recorder and read back, keep a
    re-check with other limits from decoding the chunks where the gate is quiet."""
    settings, loud_chunks = MYSQL_GATED[case]
    assert _loud_chunks(live, settings) == loud_chunks


@SHARES_LIVE
@pytest.mark.parametrize("settings", [QUIET_AT_ONCE, MYSQL_GATED["latency_bound-loud"][0]],
                         ids=["the-quiet-ones-at-once", "latency_bound-loud"])
def test_a_recheck_through_the_mysql_gates_is_the_observed_one(
        live: Path, settings: dict[str, dict[str, Any]]) -> None:
    """...and the re-check gives what observing every tick again gives: with the quiet
    cases' limits all changed (no chunk decoded), and with the loud one's (every chunk
    decoded for latency_bound alone)."""
    assert len(QUIET_AT_ONCE) == 5
    assert _loud_chunks(live, settings) == (USED if settings is not QUIET_AT_ONCE else 0)
    again, _ = run(live, stored=False, settings=settings)
    fast, _ = run(live, stored=True, settings=settings)
    assert fast == again
