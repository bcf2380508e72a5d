"""#54 item 3, the command line: an unknown option is the command's own error (its usage,
the nearest option or where the option belongs), check's usage errors are UNKNOWN."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replmon.cli import main


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(argv)
    out = capsys.readouterr()
    return int(e.value.code or 0), out.out, out.err


def test_a_typo_after_check_is_checks_error_with_the_option_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _error(["check", "--duraton", "5"], capsys)
    assert err.startswith("usage: replmon check "), err
    assert "COMMAND ..." not in err  # not the top level's usage
    assert err.splitlines()[-1] == ("replmon check: error: unknown option --duraton: "
                                    "did you mean --duration?")
    # a monitoring plugin: bad arguments are UNKNOWN (3) on stdout, as check --help says
    assert code == 3
    assert out == "REPLMON UNKNOWN - bad arguments: unknown option --duraton: did you mean " \
                  "--duration?\n"


def test_an_option_serve_lacks_is_serves_error_before_its_missing_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in (["serve", "--no-drbd"], ["serve", "--config", "fleet.toml", "--no-drbd"]):
        code, out, err = _error(argv, capsys)
        assert code == 2 and out == ""
        assert err.startswith("usage: replmon serve "), err
        assert err.splitlines()[-1] == (
            "replmon serve: error: unknown option --no-drbd (serve sets its pairs in the "
            "fleet file: docs/prometheus.md)")


def test_an_option_of_other_commands_says_whose_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _error(["report", "x.rmrec", "--no-drbd"], capsys)
    assert code == 2 and err.startswith("usage: replmon report ")
    assert err.splitlines()[-1] == (
        "replmon report: error: unknown option --no-drbd (an option of the live screen, "
        "sample, check and record, not of report)")
    # a real option elsewhere is not taken for a typo of a near one (--plain, --pair)
    code, _, err = _error(["check", "--plain"], capsys)
    assert code == 3
    assert err.splitlines()[-1].endswith(
        "unknown option --plain (an option of the live screen and serve, not of check)")


def test_the_top_level_suggests_too(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse took "db1" for the command: the typo before it is what went wrong
    code, _, err = _error(["--primray", "db1", "--replica", "db2"], capsys)
    assert code == 2
    assert err.splitlines()[-1] == "replmon: error: unknown option --primray: did you " \
                                   "mean --primary?"
    code, _, err = _error(["chek"], capsys)
    assert err.splitlines()[-1] == "replmon: error: no command 'chek': did you mean check?"


def test_prefixes_and_leftover_arguments_stay_argparses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from replmon.cli_args import build_parser

    assert build_parser().parse_args(["check", "--dur", "5s"]).duration == 5.0
    code, _, err = _error(["report", "a.rmrec", "b.rmrec"], capsys)
    assert code == 2 and err.startswith("usage: replmon report ")
    assert err.splitlines()[-1] == "replmon report: error: unrecognized arguments: b.rmrec"


# --- a file that is not there: one line naming it, in plain words ------------------

@pytest.mark.parametrize("argv", [
    ["report", "{missing}"], ["replay", "{missing}"], ["cut", "{missing}"],
    ["--config", "{missing}", "sample"], ["serve", "--config", "{missing}"],
])
def test_a_missing_file_is_one_plain_line_naming_it(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    missing = str(tmp_path / "no" / "such.rmrec")
    assert main([a.format(missing=missing) for a in argv]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == f"replmon: {missing}: no such file\n"  # no "[Errno 2] ..."


def test_check_replay_of_a_missing_file_is_unknown_in_plain_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    missing = tmp_path / "such.rmrec"
    assert main(["check", "--replay", str(missing)]) == 3
    assert capsys.readouterr().out == f"REPLMON UNKNOWN - {missing}: no such file\n"


def test_an_output_in_a_missing_directory_is_said_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A recording opens its file on the first tick: a missing directory was a logged
    traceback and exit 1 after the servers were reached (here: no server is)."""
    out = tmp_path / "no" / "pair.rmrec"
    nodes = ["--primary", "192.0.2.1", "--replica", "192.0.2.2"]
    assert main(["record", "-o", str(out), "--count", "1", *nodes]) == 2
    assert capsys.readouterr().err == f"replmon: {out}: no such directory {tmp_path / 'no'}\n"
    live = subprocess.run(  # the live rows run until stopped: a subprocess, timed
        [sys.executable, "-m", "replmon", "--plain", "--record", str(out), *nodes],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (live.returncode, live.stdout) == (2, "")
    assert live.stderr == f"replmon: {out}: no such directory {tmp_path / 'no'}\n"
    sessions = Path(__file__).parents[2] / "sample_sessions"
    rec = next(sessions.glob("*.rmrec"))
    for argv in (["cut", str(rec), "-o", str(out)], ["report", str(rec), "-o", str(out)]):
        assert main(argv) == 2
        assert capsys.readouterr().err == f"replmon: {out}: no such directory " \
                                          f"{tmp_path / 'no'}\n"


# --- serve on an open address without a password: said at start --------------------

FLEET = '[[pair]]\nname = "a"\nprimary = "127.0.0.1"\nreplica = "127.0.0.1"\n'
AUTH = 'basic_auth = { username = "prometheus", password_env = "REPLMON_HTTP_PASSWORD" }\n'


def _serve_on_a_taken_port(tmp_path: Path, host: str, fleet: str) -> str:
    """serve's stderr up to its exit on a port already taken (it warns, then fails to
    bind: exit 2 without a pair ever started)."""
    import os
    import socket

    path = tmp_path / "fleet.toml"
    path.write_text(fleet)
    with socket.socket() as s:
        s.bind((host, 0))
        s.listen()
        port = s.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-m", "replmon", "serve", "--config", str(path), "--listen",
             f"{host}:{port}"], capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL, cwd=tmp_path,
            env={**os.environ, "HOME": str(tmp_path), "REPLMON_HTTP_PASSWORD": "pw"})
    assert run.returncode == 2 and "cannot listen on" in run.stderr, run.stderr
    return run.stderr


def test_serve_on_all_addresses_without_auth_warns_once_at_start(tmp_path: Path) -> None:
    err = _serve_on_a_taken_port(tmp_path, "0.0.0.0", FLEET)
    warned = [line for line in err.splitlines() if "without a password" in line]
    assert len(warned) == 1, err
    assert " WARNING replmon: serving 0.0.0.0:" in warned[0]
    assert "basic_auth = " in warned[0] and str(tmp_path / "fleet.toml") in warned[0]
    assert 'docs/prometheus.md "Access"' in warned[0]
    assert err.index("without a password") < err.index("cannot listen on")  # at start


def test_serve_on_loopback_or_with_auth_says_nothing(tmp_path: Path) -> None:
    assert "without a password" not in _serve_on_a_taken_port(tmp_path, "127.0.0.1", FLEET)
    assert "without a password" not in _serve_on_a_taken_port(tmp_path, "0.0.0.0",
                                                               AUTH + FLEET)


def test_unguarded_addresses() -> None:
    from replmon.commands import unguarded

    for listen in ("127.0.0.1:9465", "127.0.0.2:1", "[::1]:9465", "localhost:9465", ":9465"):
        assert unguarded(listen, False, "f.toml") is None, listen
    for listen in ("0.0.0.0:9465", "[::]:9465", "10.0.0.5:9465", "db163:9465"):
        assert (unguarded(listen, False, "f.toml") or "").startswith(f"serving {listen} "), \
            listen
        assert unguarded(listen, True, "f.toml") is None
