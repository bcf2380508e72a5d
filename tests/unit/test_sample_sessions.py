"""Every shipped session in sample_sessions/ opens intact, was recorded by today's recorder
(nothing it lacks: format 2, the replica's true lag where MySQL replicates) and, with
today's checks re-run over it, shows the findings it was made to show (and the healthy one
none); where the scenario has lag, ``check --replay`` measures it. (Each is also replayed
in tests/tui/test_layout.py, reported in text and re-checked in test_product_text.py, and
reported as a page in tests/unit/output/test_html_report.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.commands import check_replay
from replmon.model.findings import Severity
from replmon.output.nagios import status_line
from replmon.session.format import FORMAT_VERSION
from replmon.session.recording import open_recording
from replmon.session.rerun import rerun_checks
from replmon.testing.scenarios.sessions import SESSIONS, SUFFIX, Session

FOLDER = Path(__file__).resolve().parents[2] / "sample_sessions"


def test_every_session_is_shipped_and_the_folder_stays_small() -> None:
    shipped = sorted(p.stem for p in FOLDER.glob(f"*{SUFFIX}"))
    assert shipped == sorted(s.name for s in SESSIONS)
    total = sum(p.stat().st_size for p in FOLDER.iterdir())
    assert total < 5 * 2**20, f"sample_sessions/ holds {total / 2**20:.1f} MiB"


@pytest.mark.parametrize("session", SESSIONS, ids=[s.name for s in SESSIONS])
def test_session_shows_its_findings(session: Session) -> None:
    with open_recording(FOLDER / f"{session.name}{SUFFIX}") as rec:
        assert rec.problems == []
        assert rec.end is not None  # closed cleanly
        reconstructed = "reconstructed" in session.title
        assert rec.meta.reconstructed is reconstructed
        assert 2 <= rec.meta.version <= FORMAT_VERSION  # recorded in format 2 (still read)
        assert rec.lacks() is None
        if not reconstructed:
            assert 120 <= len(rec) <= 600  # 2 to 10 minutes at 1 Hz
            assert rec.meta.nodes["primary"].mysql_version  # self-describing
        updates = rerun_checks(rec, entry_points=False)
    # (writes_refused opens at info and turns critical once the refusal outlasts its fence)
    opened = {f.check for u in updates for f in u.open if f.severity > Severity.INFO}
    if session.expect:
        assert set(session.expect) <= opened, opened
    else:
        assert opened == set()


LAGGING = [s for s in SESSIONS if s.lags]


@pytest.mark.parametrize("session", LAGGING, ids=[s.name for s in LAGGING])
def test_check_replay_measures_the_lag(session: Session) -> None:
    """The replica's true lag as the re-check tells it at the end: a number of seconds in
    the status line and the perfdata, from the recorded ticks, not U; and recorded on
    every tick from its first finding on (the report page's lag chart, inside the spans)."""
    path = FOLDER / f"{session.name}{SUFFIX}"
    with open_recording(path) as rec:
        onset = rec.recorded_openings()[0]
        lags = [rec.tick_at(i).lag for i in range(onset, len(rec))]
    assert lags and all(lag is not None and lag.seconds is not None for lag in lags)
    run = check_replay(str(path))
    assert run.lag is not None and run.lag.seconds is not None and run.lag.seconds >= 10
    line = status_line(run)
    assert f"replica {run.lag.seconds:.1f} s behind (" in line
    measured = next(p for p in run.perf if p.label == "replica_mysql_lag_measured")
    assert measured.value is not None and measured.value >= 10
    assert "replica_mysql_lag_measured=U" not in line
