"""A bad --config file is ONE line naming the file and what is wrong with it, exit 2
(check: the Nagios UNKNOWN line and exit 3), for every command that reads one: never a
traceback, never a hang (a FIFO), never a 50 MB read (replmon.configfile)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from replmon.configfile import MAX_BYTES, read_text, read_toml
from replmon.errors import ConfigError

TIMEOUT_S = 20.0
"""A run that takes this long hangs (a FIFO opened for reading blocks until a writer)."""


def _write(data: bytes) -> Callable[[Path], object]:
    return lambda p: p.write_bytes(data)


def _huge(p: Path) -> None:
    with p.open("wb") as f:  # sparse: 50 MiB in size, nothing on the disk
        f.truncate(50 * 2**20)


def _unreadable(p: Path) -> None:
    p.write_text('[primary]\nhost = "a"\n[replica]\nhost = "b"\n')
    p.chmod(0)


BAD: dict[str, tuple[Callable[[Path], object], str]] = {
    # case: (how the file is made, what the line says after "<file>: ")
    "not-utf8": (_write(b'[primary]\nhost = "caf\xe9"\n'),
                 "not UTF-8 text (byte 0xe9 at offset 21, line 2)"),
    "binary": (_write(b"\x7fELF\x02\x01\x01\x00\x00\x00"),
               "binary, not text (a NUL byte at offset 7)"),
    "directory": (lambda p: p.mkdir(), "is a directory"),
    "fifo": (lambda p: os.mkfifo(p), "is not a regular file (a FIFO)"),
    "nested-5000": (_write(b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"), "nested too deep"),
    "empty": (_write(b""), "empty: no ["),
    "only-comments": (_write(b"# [primary]\n# host = 'a'\n"), "no settings in it, only comments"),
    "huge": (_huge, "too large (50.0 MiB; a config file is under 1 MiB)"),
    "missing": (lambda p: None, "no such file"),
    "dangling-symlink": (lambda p: p.symlink_to(p.parent / "gone.toml"),
                         "no such file (a symlink to "),
    "unreadable": (_unreadable, "permission denied (replmon runs as "),
    "invalid-toml": (_write(b"[primary\nhost = 1\n"),
                     "not valid TOML: Expected ']' at the end of a table declaration "
                     "(at line 1, column 9)"),
}

COMMANDS: dict[str, Callable[[str, Path], list[str]]] = {
    # every command that reads --config (the file goes before or after the command)
    "live-screen": lambda f, tmp: ["--config", f],  # stdout is a pipe: would be --plain
    "live-plain": lambda f, tmp: ["--config", f, "--plain", "--record", str(tmp / "p.rmrec")],
    "sample": lambda f, tmp: ["sample", "--config", f, "--count", "1"],
    "check": lambda f, tmp: ["check", "--config", f, "--duration", "1s"],
    "check-config-first": lambda f, tmp: ["--config", f, "check"],
    "record": lambda f, tmp: ["record", "--config", f, "-o", str(tmp / "r.rmrec")],
    "serve": lambda f, tmp: ["serve", "--config", f, "--listen", "127.0.0.1:0"],
}


EVERY_CASE = ("sample", "check")
"""The commands every kind of bad file goes through (the two ways of saying it: exit 2
with one line on stderr, the Nagios UNKNOWN line with exit 3)."""
EVERY_COMMAND = ("fifo", "invalid-toml")
"""The kinds of bad file every command gets (a hang, a parse error). Since #40 every
command reads --config through one function (replmon.settings.pair_settings), so the full
cross product (84 runs of ``python -m replmon``, 63 s of CPU) tested that one path 7 times
over; these 34 runs cover each kind of file and each command."""
PAIRS = sorted({(c, k) for c in EVERY_CASE for k in BAD}
               | {(c, k) for c in COMMANDS for k in EVERY_COMMAND})


@pytest.mark.parametrize(("command", "case"), PAIRS)
def test_a_bad_config_file_is_one_line_for_every_command(
    tmp_path: Path, case: str, command: str,
) -> None:
    make, says = BAD[case]
    # root reads a mode-000 file through CAP_DAC_OVERRIDE: replmon runs without it (and
    # without CAP_DAC_READ_SEARCH) there, as an unprivileged user would (util-linux setpriv)
    drop = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
            if case == "unreadable" and os.geteuid() == 0 else [])
    path = tmp_path / f"{case}.toml"
    make(path)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "COLUMNS": "80"}
    try:
        run = subprocess.run(
            [*drop, sys.executable, "-m", "replmon", *COMMANDS[command](str(path), tmp_path)],
            capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL,
            env=env, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"replmon {command} hung on a {case} config file")
    finally:
        if case == "unreadable":
            path.chmod(0o600)  # tmp_path's cleanup must be able to remove it
    both = run.stdout + run.stderr
    assert "Traceback" not in both, both
    if command.startswith("check"):
        assert run.returncode == 3, both
        assert run.stderr == "", run.stderr
        line, _, rest = run.stdout.partition("\n")
        assert line.startswith(f"REPLMON UNKNOWN - {path}: {says}"), line
    else:
        assert run.returncode == 2, both
        assert run.stdout == "", run.stdout
        line, _, rest = run.stderr.partition("\n")
        assert line.startswith(f"replmon: {path}: {says}"), line
    assert rest == "", f"more than one line: {both!r}"
    assert not list(tmp_path.glob("*.rmrec")), "a recording was started"


# --- the reader itself, in process ------------------------------------------------

def test_a_file_without_a_size_is_capped_while_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """/proc files say size 0: the cap holds on what is read, not only on st_size."""
    import replmon.configfile as configfile

    monkeypatch.setattr(configfile, "MAX_BYTES", 64)
    with pytest.raises(ConfigError, match=r"^/proc/self/status: too large \(over 1 MiB"):
        read_text("/proc/self/status")
    assert MAX_BYTES == 2**20


def test_utf16_is_named_and_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    p = tmp_path / "c.toml"
    p.write_bytes('[primary]\nhost = "a"\n'.encode("utf-16"))
    with pytest.raises(ConfigError, match="UTF-16 text, not UTF-8"):
        read_toml(p, empty="x")
    p.write_bytes(b'\xef\xbb\xbf[primary]\nhost = "a"\n')
    assert read_toml(p, empty="x") == {"primary": {"host": "a"}}


def test_a_name_with_a_newline_stays_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        read_toml(tmp_path / "a\nb.toml", empty="x")
    assert "\n" not in str(e.value) and str(e.value).endswith(": no such file")


def test_nesting_a_parser_accepts_is_still_refused(tmp_path: Path) -> None:
    """40 levels parse fine, but nothing of a config is that deep (and deeper data
    would reach recursive code further on: merge, validation, JSON)."""
    p = tmp_path / "c.toml"
    p.write_text("a = " + "[" * 40 + "]" * 40 + "\n")
    with pytest.raises(ConfigError, match="nested too deep"):
        read_toml(p, empty="x")
    p.write_text('[primary.mysql]\nport = 1\n[checks.x]\ny = [[1, 2], [3]]\n')
    assert read_toml(p, empty="x")["checks"]["x"]["y"] == [[1, 2], [3]]


def test_mycnf_is_read_through_the_same_reader(
    tmp_path: Path,
) -> None:
    from replmon.resolve import read_mycnf

    assert read_mycnf(tmp_path / "none.cnf") == {}  # no ~/.my.cnf: nothing to add
    fifo = tmp_path / "fifo.cnf"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"fifo.cnf: is not a regular file \(a FIFO\)$"):
        read_mycnf(fifo)
    latin1 = tmp_path / "latin1.cnf"
    latin1.write_bytes(b"[client]\npassword = \xe9t\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1.cnf: not UTF-8 text \(byte 0xe9"):
        read_mycnf(latin1)
    good = tmp_path / "good.cnf"
    good.write_text("[client]\nuser = mon\npassword = 'pw'\n")
    assert read_mycnf(good) == {"user": "mon", "password": "pw"}


def test_an_empty_config_name_is_no_such_file_not_ignored() -> None:
    """``--config "$UNSET"``: said, not read as "no --config"."""
    from replmon.cli import config_from_args
    from replmon.cli_args import build_parser

    args = build_parser().parse_args(["--config", "", "--primary", "a", "--replica", "b", "check"])
    with pytest.raises(ConfigError, match=r"^'': no such file$"):
        config_from_args(args)
