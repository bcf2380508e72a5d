"""Format 1 files still read (#13): every tick, the same findings, the commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replmon.cli import main
from replmon.session.recorder import RecordingWriter
from replmon.session.recording import BEFORE_TRUE_LAG, BEFORE_TRUE_LAG_POSITIONS, open_recording
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
    """... and each says what the file lacks: its measured lag reads U for that reason."""
    assert main(["report", str(FILE)]) == 0
    out = capsys.readouterr().out
    assert "150 ticks" in out
    assert f"lacks: {BEFORE_TRUE_LAG}\n" in out
    assert main(["check", "--replay", str(FILE)]) == 2  # CRITICAL: SQL thread stopped
    status = capsys.readouterr().out.splitlines()[0]
    assert "SQL thread stopped" in status
    assert f"; replica lag unknown: {BEFORE_TRUE_LAG} |" in status
    assert "replica_mysql_lag_measured=U;" in status
    assert main(["check", "--format", "json", "--replay", str(FILE)]) == 2
    assert json.loads(capsys.readouterr().out)["lag"]["detail"] == BEFORE_TRUE_LAG
    assert main(["report", "--html", str(FILE)]) == 0
    assert f"written by replmon 0.1.0; {BEFORE_TRUE_LAG}</p>" in capsys.readouterr().out


def test_a_format2_file_written_before_true_lag_says_it_is_worked_out_again(
        tmp_path: Path) -> None:
    """Format 2 ticks without ``Tick.lag`` (written before it), but with the primary's
    positions: the replay measures the lag again from them, and says so."""
    sample = FILE.parents[2].parent / "sample_sessions" / "replica_sql_stopped.rmrec"
    path = tmp_path / "before_true_lag.rmrec"
    with open_recording(sample) as rec, RecordingWriter(path, rec.meta) as w:
        for i in range(40):
            w.write(rec.tick_at(i).model_copy(update={"lag": None}))
        assert rec.lacks() is None
    with open_recording(path) as rec:
        assert rec.meta.version == 2 and rec.lacks() == BEFORE_TRUE_LAG_POSITIONS
