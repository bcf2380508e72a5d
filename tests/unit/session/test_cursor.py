"""ReplayCursor without a screen: stepping is a sequential run; a seek warms the engine so
the findings at the new position are the ones a run from the first tick has there."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.engine import Update, build_engine
from replmon.model.findings import Finding
from replmon.session.cursor import ReplayCursor, intact_before
from replmon.session.recording import open_recording

SESSIONS = sorted((Path(__file__).parents[3] / "sample_sessions").glob("*.rmrec"))


def shown(findings: list[Finding]) -> list[tuple[object, ...]]:
    """What the screen lists of a finding, its since-time aside."""
    return [(f.check, f.node, f.key, f.severity, f.title) for f in findings]


def sequential(path: Path) -> list[list[Finding]]:
    engine = build_engine(entry_points=False)
    with open_recording(path) as rec:
        return [engine.feed(t).open for t in rec.ticks()]


@pytest.fixture(scope="module", params=SESSIONS, ids=lambda p: p.stem)
def shipped(request: pytest.FixtureRequest) -> tuple[Path, list[list[Finding]]]:
    """A shipped session and what the sequential run has open at each tick: worked out
    once for both tests of it (pytest runs them one after the other)."""
    return request.param, sequential(request.param)


def test_stepping_is_the_sequential_run(shipped: tuple[Path, list[list[Finding]]]) -> None:
    path, want = shipped
    with open_recording(path) as rec:
        cur = ReplayCursor(rec, lambda: build_engine(entry_points=False))
        got = []
        while (step := cur.step()) is not None:
            got.append(step.update.open)
        assert cur.at_end
    assert [shown(x) for x in got] == [shown(x) for x in want]
    assert [[f.since_seq for f in x] for x in got] == [[f.since_seq for f in x] for x in want]


def test_seek_anywhere_shows_what_a_run_from_the_start_shows(
        shipped: tuple[Path, list[list[Finding]]]) -> None:
    path, want = shipped
    with open_recording(path) as rec:
        n = len(rec)
        cur = ReplayCursor(rec, lambda: build_engine(entry_points=False))
        # forwards, backwards, the ends, and every finding's opening
        targets = [n - 1, 0, n // 2, n // 3, 1, *rec.recorded_openings()]
        for i in targets:
            step = cur.seek(i)
            assert step.index == i == cur.pos
            assert shown(step.update.open) == shown(want[i]), f"tick {i} of {path.name}"
            nxt = cur.step()  # and stepping on from there goes on like the run
            if i + 1 < n:
                assert nxt is not None and shown(nxt.update.open) == shown(want[i + 1])
            else:
                assert nxt is None


def test_findings_recorded_live_that_todays_checks_lack_are_marked_rec() -> None:
    path = next(p for p in SESSIONS if "replica_sql_stopped" in p.name)
    with open_recording(path) as rec:
        at = rec.recorded_openings()[0]
        # a cursor whose engine runs no check: every recorded finding is "(rec)"
        cur = ReplayCursor(rec, lambda: build_engine({c: {"enabled": False} for c in (
            "disk_saturation", "drbd_peer", "latency_bound", "link_saturation",
            "memory_ceiling", "mysql_replication", "redis_replication", "source_health",
            "stmt_vs_rows", "throughput_collapse", "two_primaries")}, entry_points=False))
        step = cur.seek(at)
        recorded = rec.update_at(at)
        assert recorded is not None and recorded.open
        assert not step.update.open
        assert [f.check for f in step.findings] == [f"{f.check} (rec)" for f in recorded.open]


def test_intact_before_is_the_ticks_before_the_position() -> None:
    with open_recording(SESSIONS[0]) as rec:
        n = len(rec)
        for index, k in ((0, 5), (1, 5), (n - 1, 300), (n // 2, 7)):
            got = [t.seq for t in intact_before(rec, index, k)]
            assert got == [rec.tick_at(j).seq for j in range(max(0, index - k), index)]


@pytest.mark.xdist_group("flap_recording")  # test_rerun's worker: the recording is there
def test_seek_in_a_long_recording_warms_on_the_window_before(
        flap_recording: Path, flap_run: list[Update]) -> None:
    """1,200 ticks with a DRBD peer flapping and down from 540 to 700 (test_rerun's
    recording): a seek past the 300-tick window shows what the run from tick 0 shows
    (conftest's ``flap_run``: the one test_rerun holds its parallel re-runs to)."""
    path = flap_recording
    want = [u.open for u in flap_run]
    with open_recording(path) as rec:
        cur = ReplayCursor(rec, lambda: build_engine(entry_points=False))
        for i in (650, 1199, 400, 899, 301, 700, 650):
            step = cur.seek(i)
            assert shown(step.update.open) == shown(want[i]), f"tick {i}"
            assert cur.engine.kept == min(i + 1, cur.engine.window)
        # the last seek's (650, back from 700: a seek is a fresh engine warmed on the
        # window before, whatever came before it, so seeking 650 a third time to read
        # this gave the same step for the same 300 ticks decoded again)
        assert step.index == 650
        down = [f for f in step.update.open if f.check == "drbd_peer"]
        assert down and down[0].since_seq <= 540  # opened inside the warm-up, as in the run
