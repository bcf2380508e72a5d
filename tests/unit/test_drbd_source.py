"""DrbdSource on captured outputs (CannedRunner) and on real files and processes
(LocalRunner): 8.x reads /proc/drbd, 9.x runs drbdsetup; every failure becomes a status
and ``sample()`` never raises."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from replmon.errors import SourceError
from replmon.model.base import SourceState
from replmon.model.drbd import DrbdSample
from replmon.sources.drbd import DRBDSETUP_JSON, DrbdSource
from replmon.sources.drbd_parse import parse_drbdsetup_json, parse_proc_drbd
from replmon.sources.runner import CannedRunner, LocalRunner

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "drbd"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def payload(s: DrbdSample) -> dict[str, object]:
    return s.model_dump(exclude={"status", "wall", "mono", "elapsed_ms"})


class ExitingRunner(CannedRunner):
    """A host where the command exists but exits non-zero, as LocalRunner reports it."""

    async def run(self, argv: Sequence[str]) -> str:
        raise SourceError(f"{' '.join(argv)}: No such resource", state="error")


def test_kind_and_defaults() -> None:
    src = DrbdSource(CannedRunner())
    assert (DrbdSource.kind, DrbdSource.sample_type) == ("drbd", DrbdSample)
    assert (src.proc_path, src.drbdsetup_cmd, src.timeout) == (
        "/proc/drbd", ("drbdsetup", "status", "--json"), 0.8)


async def test_drbd8_reads_proc_drbd() -> None:
    raw = text("s4_8311_peer_gone_collapsed.txt")
    s = await DrbdSource(CannedRunner({"/proc/drbd": raw})).sample()
    assert s.status.state is SourceState.OK, s.status.error
    assert payload(s) == payload(parse_proc_drbd(raw))
    assert (s.flavour, s.version, [r.name for r in s.resources]) == ("8", "8.3.11", ["0", "1"])
    assert s.resources[1].connections[0].peer_devices[0].out_of_sync_kib == 305611780
    assert s.mono > 0
    assert s.wall > 0
    assert s.status.since == s.wall


class RecordingRunner(CannedRunner):
    """CannedRunner that remembers the commands it was asked to run."""

    def __init__(self, files: dict[str, str], commands: dict[tuple[str, ...], str]) -> None:
        super().__init__(files, commands)
        self.ran: list[tuple[str, ...]] = []

    async def run(self, argv: Sequence[str]) -> str:
        self.ran.append(tuple(argv))
        return await super().run(argv)


async def test_drbd8_never_runs_drbdsetup_and_drbd9_runs_it_once() -> None:
    json_out = {DRBDSETUP_JSON: "[]"}
    r8 = RecordingRunner({"/proc/drbd": text("s1_846_replica_connected.txt")}, json_out)
    assert (await DrbdSource(r8).sample()).status.state is SourceState.OK
    assert r8.ran == []
    r9 = RecordingRunner({"/proc/drbd": text("d9_proc_9022.txt")}, json_out)
    s9 = await DrbdSource(r9).sample()
    assert (s9.status.state, s9.resources, r9.ran) == (SourceState.OK, [], [DRBDSETUP_JSON])


async def test_drbd9_runs_drbdsetup_json() -> None:
    out = text("d9_status_clusterlabs.json")
    runner = CannedRunner({"/proc/drbd": text("d9_proc_9022.txt")}, {DRBDSETUP_JSON: out})
    s = await DrbdSource(runner).sample()
    assert s.status.state is SourceState.OK, s.status.error
    assert (s.flavour, s.version) == ("9", "9.0.22-2")
    assert payload(s) == payload(parse_drbdsetup_json(out, version="9.0.22-2"))
    assert s.resources[0].connections[0].peer == "SLE15-sp1-gm-drbd1145296-node2"


async def test_custom_paths_and_command() -> None:
    cmd = ("sudo", "-n", "drbdsetup", "status", "--json")
    runner = CannedRunner({"/host/proc/drbd": text("d9_proc_9022.txt")},
                          {cmd: text("d9_status_peer_unreachable.json")})
    s = await DrbdSource(runner, proc_path="/host/proc/drbd", drbdsetup_cmd=list(cmd)).sample()
    assert s.status.state is SourceState.OK, s.status.error
    assert s.resources[0].connections[0].connection_state == "Connecting"


async def test_missing_proc_drbd_is_absent() -> None:
    s = await DrbdSource(CannedRunner()).sample()
    assert s.status.state is SourceState.ABSENT
    assert s.status.error == "no DRBD on this host: /proc/drbd not found"
    assert s.resources == []
    assert s.flavour is None


async def test_garbled_proc_drbd_is_parse_error() -> None:
    garbled = text("s1_846_replica_connected.txt").replace("nr:397028104", "nr:39#028104")
    s = await DrbdSource(CannedRunner({"/proc/drbd": garbled})).sample()
    assert s.status.state is SourceState.PARSE_ERROR
    assert "line 4" in (s.status.error or "")
    assert "nr:39#028104" in (s.status.error or "")
    assert s.resources == []


async def test_garbled_first_line_is_parse_error() -> None:
    s = await DrbdSource(CannedRunner({"/proc/drbd": "\x00\x01 binary junk"})).sample()
    assert s.status.state is SourceState.PARSE_ERROR


async def test_drbd9_without_drbdsetup_is_error_with_hint() -> None:
    s = await DrbdSource(CannedRunner({"/proc/drbd": text("d9_proc_9022.txt")})).sample()
    assert s.status.state is SourceState.ERROR
    assert "drbdsetup" in (s.status.error or "")
    assert "drbd-utils" in (s.status.hint or "")


async def test_drbd9_drbdsetup_exit_status_is_error() -> None:
    s = await DrbdSource(ExitingRunner({"/proc/drbd": text("d9_proc_9022.txt")})).sample()
    assert s.status.state is SourceState.ERROR
    assert s.status.error == "drbdsetup status --json: No such resource"
    assert "root" in (s.status.hint or "")


async def test_drbd9_garbled_json_is_parse_error() -> None:
    runner = CannedRunner({"/proc/drbd": text("d9_proc_9022.txt")},
                          {DRBDSETUP_JSON: text("d9_status_clusterlabs.json")[:200]})
    s = await DrbdSource(runner).sample()
    assert s.status.state is SourceState.PARSE_ERROR
    assert "JSON" in (s.status.error or "")


async def test_state_since_is_kept_while_unchanged() -> None:
    src = DrbdSource(CannedRunner())
    first = await src.sample()
    second = await src.sample()
    assert second.status.since == first.status.since == first.wall
    assert second.mono > first.mono


# --- real files and processes through LocalRunner ------------------------------------


async def test_local_runner_reads_a_real_file(tmp_path: Path) -> None:
    proc = tmp_path / "drbd"
    proc.write_text(text("seed_844_primary_wfconnection_damaged.txt"), encoding="utf-8")
    s = await DrbdSource(LocalRunner(), proc_path=str(proc)).sample()
    assert s.status.state is SourceState.OK, s.status.error
    assert s.resources[0].connections[0].peer_devices[0].out_of_sync_kib == 308


async def test_local_runner_missing_file_is_absent(tmp_path: Path) -> None:
    s = await DrbdSource(LocalRunner(), proc_path=str(tmp_path / "nope")).sample()
    assert s.status.state is SourceState.ABSENT
    assert str(tmp_path / "nope") in (s.status.error or "")


async def test_local_runner_runs_a_real_command(tmp_path: Path) -> None:
    proc = tmp_path / "drbd"
    proc.write_text(text("d9_proc_9022.txt"), encoding="utf-8")
    doc = json.loads(text("d9_status_peer_unreachable.json"))
    cmd = (sys.executable, "-c", f"print({json.dumps(json.dumps(doc))})")
    s = await DrbdSource(LocalRunner(), proc_path=str(proc), drbdsetup_cmd=cmd,
                        timeout=10).sample()
    assert s.status.state is SourceState.OK, s.status.error
    assert s.resources[0].name == "r0"


async def test_local_runner_missing_binary_and_failing_command(tmp_path: Path) -> None:
    proc = tmp_path / "drbd"
    proc.write_text(text("d9_proc_9022.txt"), encoding="utf-8")
    missing = await DrbdSource(LocalRunner(), proc_path=str(proc), timeout=10,
                               drbdsetup_cmd=(str(tmp_path / "drbdsetup"), "status")).sample()
    assert missing.status.state is SourceState.ERROR
    assert "drbd-utils" in (missing.status.hint or "")
    failing = await DrbdSource(LocalRunner(), proc_path=str(proc), timeout=10, drbdsetup_cmd=(
        sys.executable, "-c", "import sys; sys.exit('No such resource')")).sample()
    assert failing.status.state is SourceState.ERROR
    assert "No such resource" in (failing.status.error or "")
