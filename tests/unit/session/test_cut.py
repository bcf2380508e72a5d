"""``replmon cut``: around every incident of every shipped session, ``check --replay`` of
the cut finds inside its window the whole file's incidents (same roots and findings,
same open and close times); a damaged input is cut where intact, with the damage said
on stderr; the command's refusals have their exit codes. The cut of a long recording
with stored observations is in test_stored_observations.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replmon.cli import main
from replmon.output.report import render_text, report
from replmon.session import open_recording
from replmon.session.format import FORMAT_VERSION, HEADER_SIZE, KIND_TICK, MAGIC
from replmon.testing.cuts import cut_every_incident
from replmon.units import tick_clock

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.rmrec"))
SQL_STOPPED = ROOT / "sample_sessions" / "replica_sql_stopped.rmrec"


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_every_incident_of_every_shipped_session(sample: Path, tmp_path: Path) -> None:
    cuts = cut_every_incident(sample, tmp_path)
    with open_recording(sample) as rec:
        whole = len(rec)
    for done, want, got in cuts:
        assert got == want, done.path.name
        assert want or "healthy" in sample.name
        with open_recording(done.path) as piece:
            assert piece.problems == [] and len(piece) == done.ticks <= whole
            assert piece.meta.window == done.window and piece.meta.cut_from == sample.name
            assert piece.meta.version == FORMAT_VERSION  # whatever the input's
            assert piece.tick_at(done.warm_up).wall == done.window[0]
    assert cuts or "healthy" in sample.name


def _damaged(tmp_path: Path) -> tuple[Path, int]:
    """replica_sql_stopped with tick 80's frame damaged: ticks 80 to 119 lost."""
    data = bytearray(SQL_STOPPED.read_bytes())
    with open_recording(SQL_STOPPED) as rec:
        pos = rec.chunks[1].offset
    from replmon.session.format import read_frame

    while (fr := read_frame(bytes(data), pos)).kind != KIND_TICK or fr.index != 80:
        pos = fr.end
    for k in range(HEADER_SIZE + 3, HEADER_SIZE + 9):
        data[pos + k] ^= 0x5A
    bad = tmp_path / "bad.rmrec"
    bad.write_bytes(bytes(data))
    return bad, pos


def test_a_damaged_file_is_cut_where_intact_and_the_damage_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad, pos = _damaged(tmp_path)
    out = tmp_path / "piece.rmrec"
    assert main(["cut", str(bad), "--from", "+30s", "--to", "#130", "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert f"byte {pos}" in said.err and "ticks 80 to 119 lost" in said.err
    assert said.out.startswith(f"{out}: 90 ticks: 30 s of warm-up")  # #1..#130, 40 lost
    assert "40 ticks of it lost in the input" in said.out
    with open_recording(out) as piece, open_recording(SQL_STOPPED) as whole:
        assert piece.problems == []
        want = [t for i, t in enumerate(whole.ticks()) if i <= 129 and not 80 <= i <= 119]
        assert list(piece.ticks()) == want  # rates too: the writer stored those after the gap
        assert piece.meta.window == (want[30].wall, want[-1].wall)
    # a damaged header costs the cut no window: the key frames repeat it
    data = bytearray(out.read_bytes())
    data[len(MAGIC) + HEADER_SIZE + 5] ^= 0x5A
    hurt = tmp_path / "hurt.rmrec"
    hurt.write_bytes(bytes(data))
    with open_recording(hurt) as piece:
        assert piece.meta.damaged and piece.meta.window == (want[30].wall, want[-1].wall)
        assert piece.meta.cut_from == bad.name
    # the cut re-checks: its warm-up (ticks 0-29) opens nothing of its own
    assert main(["check", "--replay", str(out), "--format", "json"]) == 2
    run = json.loads(capsys.readouterr().out)
    assert run["ticks"] == 130 - 30  # seqs of the window: 30 to 129 (#31 to #130)
    assert [i["root"]["title"] for i in run["incidents"]] == \
        ["SQL thread stopped (last_sql_errno 0)"]


def test_a_stretch_all_lost_writes_nothing(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad, _ = _damaged(tmp_path)
    out = tmp_path / "lost.rmrec"
    assert main(["cut", str(bad), "--from", "#85", "--to", "#110", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "ticks 80 to 119 lost" in err and "no intact tick from #85 to #110" in err
    assert not out.exists()
    # the first chunk lost (its key frame damaged): a stretch in it is lost, one that
    # goes on past it is cut from the first intact tick
    data = bytearray(SQL_STOPPED.read_bytes())
    with open_recording(SQL_STOPPED) as rec:
        data[rec.chunks[0].offset + 30] ^= 0x5A
    headless = tmp_path / "headless.rmrec"
    headless.write_bytes(bytes(data))
    assert main(["cut", str(headless), "--to", "#30", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "ticks 0 to 59 lost" in err and "no intact tick from #1 to #30" in err
    assert main(["cut", str(headless), "--to", "#100", "-o", str(out)]) == 0
    assert f"{out}: 40 ticks: 0 s of warm-up" in capsys.readouterr().out  # #61..#100


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.rmrec"
    with open_recording(SQL_STOPPED) as rec:
        clock = tick_clock(rec.tick_at(25).wall)
    cases = [
        (["--incident", "7"], "no incident 7 (its incidents: 1)"),
        (["--incident", "1", "--from", "+5s"], "--incident or --from/--to, not both"),
        (["--from", "#100", "--to", "#20"], "--to is before --from (ticks #100 and #20)"),
        (["--from", "soon"], "--from 'soon': not a time of the recording"),
    ]
    for extra, why in cases:
        assert main(["cut", str(SQL_STOPPED), *extra, "-o", str(out)]) == 2, extra
        err = capsys.readouterr().err
        assert why in err and len(err.splitlines()) == 1, err
        assert not out.exists()
    assert main(["cut", str(SQL_STOPPED), "--from", clock, "--to", "#60", "-o", str(out)]) == 0
    assert f"{out}: 60 ticks: 25 s of warm-up" in capsys.readouterr().out  # #1..#60
    with open_recording(out) as piece:
        assert piece.meta.window is not None and tick_clock(piece.meta.window[0]) == clock
        rep = report(piece)
    # the report of a cut: its window, and the re-run's events and incidents in it only
    assert rep["window"]["cut_from"] == SQL_STOPPED.name
    assert rep["findings_rerun"] and all(e["at"] >= piece.meta.window[0]
                                         for e in rep["findings_rerun"])
    assert f"cut from {SQL_STOPPED.name}: the stretch " in render_text(rep)
    assert main(["cut", str(SQL_STOPPED), "-o", str(out)]) == 2
    assert "exists: choose another file" in capsys.readouterr().err
    # --incident: its stretch with the margin before its first finding (since tick 31)
    one = tmp_path / "one.rmrec"
    assert main(["cut", str(SQL_STOPPED), "--incident", "1", "--margin", "10s",
                 "-o", str(one)]) == 0
    assert capsys.readouterr().out.startswith(f"{one}: 150 ticks: 21 s of warm-up")
