"""Passwords off the command line (#20 item 4) and shell completion (item 5)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replmon.cli import main
from replmon.passwords import scrub_argv

SECRET = "S3cretPW"


def test_scrub_replaces_only_the_password() -> None:
    argv = ["--primary", "db163", "--primary-mysql", f"mysql://monitor:{SECRET}@db163:3306",
            f"--replica-redis=redis://:{SECRET}@db162:6380", "--replica-mysql", "monitor@:3307",
            "sample"]
    out, found = scrub_argv(argv)
    assert SECRET not in " ".join(out)
    assert out[3] == "mysql://monitor:***@db163:3306"
    assert out[4] == "--replica-redis=redis://:***@db162:6380"
    assert out[6] == "monitor@:3307" and out[0:3] == argv[0:3]
    assert found == ["--primary-mysql", "--replica-redis"]


def test_nothing_to_scrub_leaves_argv_alone() -> None:
    argv = ["--primary", "a:b@c", "--primary-mysql", "monitor@db:3306", "check"]
    assert scrub_argv(argv) == (argv, [])


def test_a_child_replmon_hides_the_password_from_proc_cmdline(tmp_path: Path) -> None:
    """What `ps aux` shows of a running replmon: read from /proc/PID/cmdline."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "replmon", "--primary", "127.0.0.1", "--replica", "127.0.0.1",
         "--primary-mysql", f"mysql://monitor:{SECRET}@127.0.0.1:1", "--primary-redis", "off",
         "--replica-mysql", "off", "--replica-redis", "off", "--no-host", "--no-drbd",
         "sample", "--count", "40", "--interval", "0.25s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HOME": str(tmp_path)})
    cmdline = ""
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "***" not in cmdline:
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            time.sleep(0.05)
        assert "mysql://monitor:***@127.0.0.1:1" in cmdline, cmdline
        assert SECRET not in cmdline
        time.sleep(0.5)  # still hidden while it runs
        assert SECRET not in Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(
            errors="replace")
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert "warning: a password on the command line (--primary-mysql)" in err
    assert "--ask-pass" in err and SECRET not in out + err


def test_ask_pass_without_a_terminal_is_a_clear_error(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    rc = main(["--primary", "a", "--replica", "b", "--ask-pass", "sample", "--count", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and "--ask-pass needs a terminal" in err and "password_env" in err


def test_bash_completion_completes_commands_and_options(tmp_path: Path) -> None:
    script = tmp_path / "replmon.bash"
    script.write_text(subprocess.run([sys.executable, "-m", "replmon", "completion", "bash"],
                                     capture_output=True, text=True, check=True).stdout)
    bash = shutil.which("bash")
    assert bash
    def complete(*words: str) -> list[str]:
        cmd = (f"source {script}; COMP_WORDS=(replmon {' '.join(words)}); "
               f"COMP_CWORD={len(words)}; _shtab_replmon; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        return subprocess.run([bash, "-c", cmd], capture_output=True, text=True,
                              check=True).stdout.split()
    assert complete("ch") == ["check"]
    assert "--primary-mysql" in complete("check", "--prim")
    assert "--primary-mysql" in complete("--prim")  # before the command as well


def test_zsh_completion_is_a_compdef() -> None:
    out = subprocess.run([sys.executable, "-m", "replmon", "completion", "zsh"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("#compdef replmon") and "--replica-redis" in out
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n"], input=out, text=True, check=True)


def test_check_help_lists_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    for code in ("0 OK", "1 WARNING", "2 CRITICAL", "3 UNKNOWN"):
        assert code in out


# --- #20 item 2: a pipe gets rows; NO_COLOR, TERM=dumb ------------------------------

class _Tty:
    def isatty(self) -> bool:
        return True


def test_term_conventions(monkeypatch: pytest.MonkeyPatch) -> None:
    from replmon.output.term import color_ok, screen_ok

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert color_ok(_Tty()) and screen_ok(_Tty()) == (True, "")  # type: ignore[arg-type]
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color_ok(_Tty())  # type: ignore[arg-type]
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not color_ok(_Tty()) and screen_ok(_Tty()) == (False, "TERM=dumb")  # type: ignore[arg-type]
    with open(os.devnull, "w") as devnull:
        assert screen_ok(devnull) == (False, "stdout is not a terminal")


def test_the_monitor_into_a_pipe_writes_rows(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "replmon", "--primary", "127.0.0.1", "--replica", "127.0.0.1",
         "--primary-mysql", "off", "--replica-mysql", "off", "--primary-redis", "off",
         "--replica-redis", "off", "--no-drbd", "--interval", "0.2s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HOME": str(tmp_path)})
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline() for _ in range(6)]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert any(ln.startswith("time") and "usr" in ln for ln in lines), lines
    assert sum(" P 127.0.0.1 " in ln or " R 127.0.0.1 " in ln for ln in lines) >= 2, lines
    assert "stdout is not a terminal: writing text rows (--plain)" in err
