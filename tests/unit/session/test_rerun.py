"""A re-run split across worker processes gives, tick for tick, what one engine fed
every tick in order gives: same findings open, opened and closed, with the same
since-times, on a recording whose DRBD peer drops and comes back in runs of random
length (so findings open, hold and close across the parts' boundaries), intact and
damaged."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sessiondata import CHUNK, FLAP_OPENS, TICKS, dump

from replmon.engine import Update
from replmon.session import open_recording
from replmon.session.format import HEADER_SIZE, MAGIC, read_frame
from replmon.session.rerun import Rerun, _parts

pytestmark = pytest.mark.xdist_group("flap_recording")
"""With test_cursor's long-recording test, on one worker: the recording (conftest's
``flap_recording``, ~1 s of CPU) is then written once, not once per worker."""


@pytest.fixture
def recording(flap_recording: Path) -> Path:
    return flap_recording


def run(path: Path, workers: int) -> tuple[list[Any], list[str]]:
    with open_recording(path) as rec:
        ups = list(Rerun(rec, entry_points=False, workers=workers))
        return [dump(u) for u in ups], list(rec.problems)


@pytest.mark.parametrize("flap_opens", [3, 10**9], ids=["flap-detection", "no-flap-detection"])
def test_parallel_rerun_is_the_sequential_one(recording: Path, flap_run: list[Update],
                                              flap_opens: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Both with flap detection (the default: the synthetic flapping findings stay open)
    and without it (the data then opens and closes findings across part boundaries).
    The sequential run with the default is conftest's ``flap_run`` (test_cursor's too)."""
    import replmon.engine

    assert FLAP_OPENS == 3  # the engine's own: ``flap_run``'s
    monkeypatch.setattr(replmon.engine, "FLAP_OPENS", flap_opens)  # applied in this process
    one, problems = (([dump(u) for u in flap_run], []) if flap_opens == FLAP_OPENS
                     else run(recording, 1))
    assert len(one) == TICKS and problems == []
    with open_recording(recording) as rec:
        parts = _parts(rec, 4)
        starts = [rec.chunks[a].first for a, _ in parts[1:]]
    assert len(parts) == 4 and starts == [300, 600, 900]
    # The data must exercise what the parts could get wrong: findings that opened
    # before a part starts and close after it, and ones that open and close inside.
    closed = [f for u in one for f in u[4]]
    if flap_opens > 3:
        assert len(closed) >= 10
        assert any(f["since_seq"] < s <= f["closed_seq"] for f in closed for s in starts)
    else:  # flapping findings stay open across the part boundaries instead
        assert any(f["flaps"] for u in one for f in u[2])
    assert {f["check"] for f in closed} >= {"drbd_peer"}
    long = [f for f in one[650][2] if f["check"] == "drbd_peer"]
    assert long and long[0]["since_seq"] <= 540 and long[0]["numbers"]["down_s"] > 100
    # 2 and 3 workers cut the recording at other part boundaries (PARTS_PER_WORKER
    # each): both with flap detection, 3 alone without it (~10 s of CPU a re-run)
    for workers in ((2, 3) if flap_opens == 3 else (3,)):
        many, problems = run(recording, workers)
        assert problems == []
        assert len(many) == len(one)
        for a, b in zip(one, many, strict=True):
            assert a == b, f"tick {a[0]} differs with {workers} workers"


def test_parallel_rerun_of_a_damaged_file(recording: Path, tmp_path: Path) -> None:
    """Bytes flipped inside part 2: both runs lose the same ticks, report the same
    damage (once), and agree on every tick they have."""
    data = bytearray(recording.read_bytes())
    pos = len(MAGIC)
    while True:
        fr = read_frame(bytes(data), pos)
        if fr.kind == b"T" and fr.index == 700:
            break
        pos = fr.end
    for k in range(HEADER_SIZE + 2, HEADER_SIZE + 8):
        data[pos + k] ^= 0x5A
    bad = tmp_path / "bad.rmrec"
    bad.write_bytes(bytes(data))
    one, problems_one = run(bad, 1)
    many, problems_many = run(bad, 2)
    assert len(problems_one) == 1 and "byte" in problems_one[0]
    assert problems_many == problems_one
    assert TICKS - CHUNK < len(one) < TICKS and 700 not in {u[0] for u in one}
    assert many == one


def test_a_rerun_stopped_early_stops_its_workers(recording: Path) -> None:
    """A replay closed while its re-run runs: closing the iterator ends the worker
    processes instead of waiting for their parts."""
    with open_recording(recording) as rec:
        it = Rerun(rec, entry_points=False, workers=2).indexed()
        first = next(it)
        assert first[0] == 0
        assert multiprocessing.active_children()
        it.close()
        assert not multiprocessing.active_children()


def test_report_facts_are_the_same_from_workers() -> None:
    """``replmon report`` takes its per-tick facts (peaks, versions, gaps, recorded
    events) where the tick is decoded: a worker gives what this process gives. On
    SHORT (three chunks: three parts, each but the first warmed on the ticks before it,
    two of them in one worker), which has recorded events too; the 1,200 ticks of
    ``recording`` cost ~3 s of CPU more for the same comparison."""
    from replmon.output.report import tick_facts

    def facts(workers: int) -> list[Any]:
        with open_recording(SHORT) as rec:
            assert len(rec.chunks) == 3 and rec.problems == []
            return [(i, f) for i, _, f in
                    Rerun(rec, entry_points=False, workers=workers).with_facts(tick_facts)]

    one = facts(1)
    assert len(one) == 150 and any(f.values for _, f in one)
    assert any(f.recorded for _, f in one)
    assert facts(2) == one


def test_should_stop_ends_a_parallel_rerun_and_its_workers(recording: Path) -> None:
    """What a closing replay screen does: asked between parts and while waiting on the
    workers, True ends the re-run within one part and leaves no worker behind."""
    asked: list[bool] = []

    def stop() -> bool:
        asked.append(True)
        return True

    with open_recording(recording) as rec:
        out = list(Rerun(rec, entry_points=False, workers=2, should_stop=stop).indexed())
    assert asked and len(out) <= TICKS // 4
    assert not multiprocessing.active_children()


SCRIPT = """
import io, sys
from replmon.session.rerun import rerun_file, start_workers_early

class Captured(io.StringIO):  # what a Textual app puts in place of sys.stderr
    def fileno(self):
        return -1

if __name__ == "__main__":
    if sys.argv[2] == "early":
        start_workers_early()
    sys.stderr = Captured()
    try:
        n = sum(1 for _ in rerun_file(sys.argv[1], entry_points=False, workers=2))
    except ValueError as e:
        sys.__stdout__.write(f"ValueError: {e}")
    else:
        sys.__stdout__.write(f"ticks {n}")
"""


SHORT = Path(__file__).resolve().parents[3] / "sample_sessions" / "replica_sql_stopped.rmrec"
"""A shipped session (150 ticks, 3 chunks: two workers each get a part): what is tested is
that the workers start and give every tick, not how long they work (the 1,200 ticks of
``recording`` cost this test ~4 s of CPU in the workers for the same answer)."""


@pytest.mark.parametrize(("when", "expect"), [("early", "ticks {n}"),
                                              ("late", "bad value(s) in fds_to_keep")],
                         ids=["early", "late"])
def test_workers_start_under_a_tui_only_when_started_early(tmp_path: Path,
                                                           when: str, expect: str) -> None:
    """Under Textual, sys.stderr.fileno() is -1 and multiprocessing cannot start its
    helper processes; `replmon replay` starts them before the app (start_workers_early)."""
    with open_recording(SHORT) as rec:
        n = len(rec)
        assert n > 100 and len(rec.chunks) >= 2 and rec.problems == []
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(SHORT), when],
                         capture_output=True, text=True, timeout=120, check=False)
    assert expect.format(n=n) in out.stdout, (out.stdout, out.stderr[-2000:])
