"""Shared fixtures of the recording tests (the tick builders are in sessiondata.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessiondata import (
    CHUNK,
    FLAP_OPENS,
    LIVE_TICKS,
    dump,
    flapping_ticks,
    four_source_ticks,
    record_live,
)

import replmon.engine
from replmon.engine import Update
from replmon.model.tick import Tick
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.rerun import Rerun
from replmon.testing.real_ticks import loop_ticks


@pytest.fixture(scope="session")
def ticks_200() -> list[Tick]:
    return four_source_ticks(200)


@pytest.fixture(scope="session")
def flap_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """flapping_ticks written as a recording (rates derived on reading, no updates):
    test_rerun's, and test_cursor's long one. Read only."""
    path = tmp_path_factory.mktemp("flap") / "flap.rmrec"
    with RecordingWriter(path, meta_for(interval=1.0), chunk_ticks=CHUNK,
                         rates="derive") as w:
        for t in flapping_ticks():
            w.write(t)
    return path


@pytest.fixture(scope="session")
def flap_run(flap_recording: Path) -> list[Update]:
    """Today's checks run over ``flap_recording`` from its first tick, in this process
    (``Rerun``, one worker), with the engine's own flap detection: what test_rerun holds
    its parallel re-runs to, and test_cursor its seeks (the same 1,200 ticks decoded and
    observed, ~1.2 s of CPU, once for both: they share the xdist group "flap_recording").
    Read only."""
    with pytest.MonkeyPatch.context() as mp, open_recording(flap_recording) as rec:
        mp.setattr(replmon.engine, "FLAP_OPENS", FLAP_OPENS)
        ups = list(Rerun(rec, entry_points=False, workers=1))
        assert rec.problems == []
        return ups


@pytest.fixture(scope="session")
def flap_live(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first LIVE_TICKS flapping ticks, rates attached as collected, recorded as
    ``replmon --record`` writes them (the live engine with its own flap detection,
    whatever a module patched: that changes the recorded updates, not the stored
    observations): ``live`` of test_stored_observations and test_changes, whose tests
    that take it carry sessiondata.SHARES_LIVE. Read only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replmon.engine, "FLAP_OPENS", FLAP_OPENS)
        ticks = list(loop_ticks(flapping_ticks(), LIVE_TICKS, rates=True))
        return record_live(tmp_path_factory.mktemp("live") / "live.rmrec", ticks)


@pytest.fixture(scope="session")
def live_copy(tmp_path_factory: pytest.TempPathFactory
              ) -> Callable[[Path], tuple[Path, int]]:
    """A shipped session's ticks recorded as a live session records them (the live
    engine's updates, 30-tick chunks, rates "auto"), and how many ticks: each recorded
    once in a worker (~0.3 s of CPU) for test_report_facts' and test_chart_facts' tests
    of it, which carry its ``sessiondata.of_sample`` group. Read only."""
    made: dict[Path, tuple[Path, int]] = {}
    out = tmp_path_factory.mktemp("live_copies")

    def get(sample: Path) -> tuple[Path, int]:
        if sample not in made:
            with open_recording(sample) as rec:
                ticks = list(rec.ticks())
            made[sample] = (record_live(out / sample.name, ticks, chunk=30), len(ticks))
        return made[sample]

    return get


@pytest.fixture(scope="session")
def live_observed(flap_live: Path) -> tuple[list[tuple[int, Any]], list[Any]]:
    """``flap_live`` re-run with its recorded thresholds observing every tick again
    (``Rerun``, stored=False, one worker) without flap detection: (index, ``dump``) of
    each tick's Update, and the engine's open findings and history at the end (as
    ``model_dump``s). test_stored_observations holds its stored re-runs to it, and
    test_changes its ``changes`` observed again without flap detection (one run, ~0.7 s
    of CPU, for both). Read only."""
    with pytest.MonkeyPatch.context() as mp, open_recording(flap_live) as rec:
        mp.setattr(replmon.engine, "FLAP_OPENS", 10**9)
        every = Rerun(rec, entry_points=False, workers=1, stored=False)
        full = [(i, dump(u)) for i, u in every.indexed()]
        ends = [[f.model_dump() for f in every.engine.open_findings],
                [f.model_dump() for f in every.engine.history]]
        assert rec.problems == []
        return full, ends
