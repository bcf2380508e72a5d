"""Every option and argument of every command says what it is for in --help; counts in
the output agree with their noun ("1 event", "2 events")."""

from __future__ import annotations

import argparse

import pytest

from replmon.cli_args import build_parser
from replmon.wording import plural


def _undocumented(parser: argparse.ArgumentParser, name: str) -> list[str]:
    missing: list[str] = []
    for action in parser._actions:
        what = f"{name} {'/'.join(action.option_strings) or action.metavar or action.dest}"
        if not action.help or action.help == argparse.SUPPRESS:
            missing.append(what)
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                missing += _undocumented(sub, f"{name} {sub_name}")
    return missing


def test_every_option_of_every_command_has_a_help_text() -> None:
    parser = build_parser()
    assert _undocumented(parser, "replmon") == []
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"sample", "check", "record", "replay", "report", "cut", "serve", "rules",
            "completion"} <= set(subs.choices), "the walk must reach every command"
    listed = {a.dest: a.help for a in subs._choices_actions}
    assert [n for n in subs.choices if not listed.get(n)] == [], \
        "every command has its line in replmon --help"
    fmt = next(a for a in subs.choices["check"]._actions if "--format" in a.option_strings)
    assert fmt.help and "json" in fmt.help


def test_plural() -> None:
    assert plural(0, "event") == "0 events"
    assert plural(1, "event") == "1 event"
    assert plural(2, "event") == "2 events"
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "entry", "entries") == "3 entries"


def test_report_text_says_1_event_and_1_tick() -> None:
    from replmon.output.report import render_text

    event = {"time": "12:00:00", "since_time": "12:00:00", "event": "opened",
             "severity": "warning", "node": "replica", "check": "source_health",
             "title": "MySQL unreachable"}
    rep = {"file": "s.rmrec", "ticks": 1, "start": "12:00:00", "end": "12:00:00",
           "duration_s": 0.0, "interval_s": 1.0, "format_version": 2, "replmon_version": "x",
           "reconstructed": False, "closed_cleanly": True, "note": None, "nodes": {},
           "versions_seen": {}, "findings_recorded": [event], "findings_rerun": [event, event],
           "peaks": {}, "gaps": [], "problems": []}
    text = render_text(rep)
    assert "s.rmrec: 1 tick, " in text
    assert "findings recorded live: 1 event\n" in text
    assert "findings re-run with today's checks: 2 events\n" in text


COMMANDS = ["", "sample", "check", "record", "replay", "report", "cut", "serve", "rules",
            "completion"]


def _help(command: str, columns: int, monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> str:
    from replmon.cli import main

    monkeypatch.setenv("COLUMNS", str(columns))
    with pytest.raises(SystemExit):
        main([command, "--help"] if command else ["--help"])
    return capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_fits_80_columns(command: str, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """#54 item 3: check/serve/cut's descriptions were 250-character lines (argparse's
    RawDescriptionHelpFormatter), and the epilogs' prose ran to 93 columns."""
    text = _help(command, 80, monkeypatch, capsys)
    assert [line for line in text.splitlines() if len(line) > 80] == []


def test_help_prose_follows_the_terminal_by_paragraph(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    narrow = _help("replay", 50, monkeypatch, capsys)
    assert max(len(line) for line in narrow.split("positional")[0].splitlines()) <= 50
    # paragraphs stay apart: the description, then its keys
    assert "marked (rec).\n\nkeys: space play/pause," in narrow
    wide = _help("cut", 100, monkeypatch, capsys)
    assert "Write a stretch of a recording to a new recording that anyone with replmon can " \
           "replay, report" in wide  # one line up to the width, not 250 characters
    # laid out by hand (examples, indented lines) stays as written at any width
    assert "  replmon cut pair.rmrec --incident 2 -o incident-2.rmrec\n      incident 2 " \
           "(as report numbers it)" in _help("cut", 50, monkeypatch, capsys)
