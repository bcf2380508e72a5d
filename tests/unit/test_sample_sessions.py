"""Every shipped session in sample_sessions/ opens intact and, with today's checks
re-run over it, shows the findings it was made to show (and the healthy one none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.model.findings import Severity
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
