"""Every command that reads a recording answers a bad path or a bad file with one line
on stderr (check: its UNKNOWN line on stdout) and its documented exit code, never a
traceback (docs/recording.md, "What the commands answer")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replmon.session.format import MAGIC, read_frame

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_sessions" / "replica_sql_stopped.rmrec"


def _bad_files(d: Path) -> dict[str, Path]:
    data = SAMPLE.read_bytes()
    files = {"missing": d / "missing.rmrec", "directory": d / "dir.rmrec",
             "empty": d / "empty.rmrec", "text": d / "notes.txt",
             "magic-only": d / "magic.rmrec", "cut-in-header": d / "cut.rmrec",
             "fifo": d / "fifo.rmrec", "no-tick": d / "notick.rmrec"}
    files["directory"].mkdir()
    files["empty"].write_bytes(b"")
    files["text"].write_text("dstat output, not a recording\n" * 20)
    files["magic-only"].write_bytes(data[:8])
    files["cut-in-header"].write_bytes(data[:40])
    os.mkfifo(files["fifo"])
    header = read_frame(data, len(MAGIC))
    files["no-tick"].write_bytes(data[:header.end + 100])  # header intact, first chunk cut
    return files


# exit codes: replay/report/cut 2 = not readable as a recording, 1 = readable, no tick in
# it; check --replay 3 = UNKNOWN (monitoring-plugin contract) for both.
CASES = [(kind, cmd) for kind in ("missing", "directory", "empty", "text", "magic-only",
                                  "cut-in-header", "fifo", "no-tick")
         for cmd in ("replay", "report", "check")] + [("text", "cut"), ("no-tick", "cut")]


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _bad_files(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize(("kind", "cmd"), CASES, ids=[f"{c}-{k}" for k, c in CASES])
def test_bad_file_gets_one_line_and_its_exit_code(bad: dict[str, Path], kind: str,
                                                  cmd: str) -> None:
    path = str(bad[kind])
    argv = ["check", "--replay", path] if cmd == "check" else [cmd, path]
    p = subprocess.run([sys.executable, "-m", "replmon", *argv], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert "Traceback" not in p.stdout + p.stderr
    if cmd == "check":
        assert p.returncode == 3
        assert p.stdout.startswith("REPLMON UNKNOWN - ") and len(p.stdout.splitlines()) == 1
        return
    assert p.returncode == (1 if kind == "no-tick" else 2), p.stderr
    assert p.stderr.startswith("replmon: ")
    assert path in p.stderr or Path(path).name in p.stderr
    if kind != "no-tick":
        assert len(p.stderr.splitlines()) == 1, p.stderr
    else:  # the damage, then the verdict
        assert p.stderr.splitlines()[-1].endswith("no tick could be read")
