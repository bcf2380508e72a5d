"""`replmon record` as a daemon would run it (a real subprocess, SIGTERM), then
`replmon report` and `replmon check --replay` on what it wrote."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replmon import malloc
from replmon.cli import main
from replmon.lab import Lab
from replmon.session.recording import open_recording

pytestmark = pytest.mark.live


def record_cmd(lab: Lab, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "replmon", "record", "-o", str(out),
        "--primary", "127.0.0.1", "--replica", "127.0.0.1",
        "--primary-mysql", f"{lab.monitor_user}@:{lab.primary.mysql_port}",
        "--replica-mysql", f"{lab.monitor_user}@:{lab.replica.mysql_port}",
        "--primary-redis", f":{lab.primary.redis_port}",
        "--replica-redis", f":{lab.replica.redis_port}",
        "--interval", "0.2", *extra,
    ]


def env(lab: Lab) -> dict[str, str]:
    return {**os.environ, "REPLMON_MYSQL_PASSWORD": lab.monitor_password,
            "REPLMON_REDIS_PASSWORD": lab.redis_password}


def wait_ticks(path: Path, n: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            try:
                if len(open_recording(path)) >= n:
                    return
            except Exception:  # noqa: BLE001 - header not written yet
                pass
        time.sleep(0.1)
    raise AssertionError(f"{path} did not reach {n} ticks")


def test_record_stops_cleanly_on_sigterm_then_report_and_check_replay(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "pair.rmrec"
    proc = subprocess.Popen(record_cmd(lab, out), env=env(lab), stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_ticks(out, 8)
        if malloc._glibc() is not None:  # started again with glibc's thread caches off
            start_env = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
            assert f"GLIBC_TUNABLES={malloc.TCACHE_OFF}".encode() in start_env
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "recording to" in err and "stopping after" in err  # logs go to stderr
    assert lab.monitor_password not in err
    rec = open_recording(out)
    assert rec.problems == [] and rec.end is not None  # closed, not cut off
    assert len(rec) >= 8
    assert main(["report", str(out), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ticks"] == len(rec)
    assert main(["report", str(out), "--csv", "primary.rates.mysql.qps"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(rec) + 1 and "primary.rates.mysql.qps" in lines[0]
    assert main(["check", "--replay", str(out)]) == 0
    assert capsys.readouterr().out.startswith("REPLMON OK - ")


def test_kill_9_leaves_a_file_that_replays(lab: Lab, tmp_path: Path) -> None:
    out = tmp_path / "killed.rmrec"
    proc = subprocess.Popen(record_cmd(lab, out), env=env(lab), stderr=subprocess.DEVNULL)
    try:
        wait_ticks(out, 10)
        time.sleep(1.0)  # > 1 s more of ticks that must survive the kill
        written_before_kill = len(open_recording(out))
        proc.kill()
        proc.wait(10)
    finally:
        proc.kill()
    rec = open_recording(out)
    assert rec.end is None  # no clean close
    assert len(rec) >= written_before_kill >= 10
    assert list(rec.ticks())[-1].seq == len(rec) - 1
