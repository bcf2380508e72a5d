"""Format 1 files still read (#13): every tick, the same findings, the commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.cli import main
from replmon.session.recording import open_recording
from replmon.session.rerun import rerun_checks

FILE = (Path(__file__).resolve().parents[2] / "fixtures" / "recordings"
        / "format1_replica_sql_stopped.rmrec")


def test_a_format1_recording_replays_whole() -> None:
    with open_recording(FILE) as rec:
        assert rec.meta.version == 1 and not rec.meta.damaged
        assert rec.problems == [] and rec.end is not None
        ticks = list(rec.ticks())
        assert len(ticks) == len(rec) == 150
        assert [t.seq for t in ticks] == list(range(ticks[0].seq, ticks[0].seq + 150))
        assert rec.chunk_observations(0)[0] is None  # format 1 stores no observations
        opened = {f.check for u in rerun_checks(rec, entry_points=False) for f in u.opened}
    assert "mysql_replication" in opened


def test_the_commands_read_format1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(FILE)]) == 0
    assert "150 ticks" in capsys.readouterr().out
    assert main(["check", "--replay", str(FILE)]) == 2  # CRITICAL: SQL thread stopped
    assert "SQL thread stopped" in capsys.readouterr().out
