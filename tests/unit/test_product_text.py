"""What replmon writes for people says it in their words: no Python literal (True,
False, None) and no field-note numbering ("seed 004": it means nothing to a user) in a
finding's title, numbers, cause or next step, in `check --replay`'s text or in
`report`'s (the recording's note included), on every shipped session; nor in a shipped
session's name or title, the docs, the README or any command's help (the docs may say an
incident comes from the field notes); and `report`'s text is evidence: one number per
event, no peak of 0, each incident with its likely cause and next step under a heading."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replmon.commands import check_replay
from replmon.output.nagios import render_text as check_text
from replmon.output.report import render_text as report_text
from replmon.output.report import report
from replmon.session.recording import open_recording
from replmon.session.rerun import Rerun
from replmon.units import fmt_number

SESSIONS = sorted((Path(__file__).parents[2] / "sample_sessions").glob("*.rmrec"))
PYTHON = re.compile(r"\b(True|False|None)\b")
SEED = re.compile(r"(?<![-\w])seed(?!ed|ing)", re.IGNORECASE)
"""'seed 004', 'seed004', 'the seed's figures'; not a replica re-seeded ('re-seed')."""
ROOT = Path(__file__).parents[2]


def problems(where: str, text: str, rxs: tuple[re.Pattern[str], ...] = (PYTHON, SEED)
             ) -> list[str]:
    return [f"{where}: {m.group(0)!r} in {text[max(0, m.start() - 60):m.end() + 20]!r}"
            for rx in rxs for m in rx.finditer(text)]


def not_evidence(rep: dict[str, Any], text: str) -> list[str]:
    """What keeps ``report``'s text from being evidence (issue 42, 4): a finding that
    reads one number in the events and another in its incident, a peak of 0, an
    incident without its likely cause and next step, incidents without their heading."""
    bad = []
    opened = {f"{e['check']}: {e['title']}" for e in rep["findings_rerun"]
              if e["event"] == "opened"}
    lines = text.splitlines()
    told = [ln for ln in lines if ln.lstrip().startswith(("root: ", "roots: ", "then "))]
    bad += [f"incident line not as its event: {t!r}" for t in told
            if not any(t.endswith(f" {o}") for o in opened)]
    bad += [f"a peak of 0: {ln!r}" for ln in lines
            if re.search(r"\s0\.0  at ", ln) and "lowest" not in ln]
    heading = [ln for ln in lines if ln.startswith("INCIDENTS")]
    if len(heading) != 1 or f": {len(rep['incidents']) or 'none'}" not in heading[0]:
        bad.append(f"no incidents heading with their count: {heading}")
    for inc in rep["incidents"]:
        for key, word in (("cause", "likely cause"), ("next_step", "next step")):
            if inc["root"][key] and f"  {word}: {inc['root'][key]}" not in text:
                bad.append(f"incident {inc['id']} without its {word}")
    if rep["incidents"] and not told:
        bad.append("incidents counted, none told")
    return bad


def test_a_flag_and_an_unknown_read_as_words() -> None:
    assert fmt_number("sql_running", False) == "No"  # as the server says it, like io_running
    assert fmt_number("lag_at_least", True) == "yes"
    assert fmt_number("seconds_behind_s", None) == "NULL"
    assert fmt_number("measured_lag_s", None) == "unknown"
    assert fmt_number("backlog_bytes", 2048) == "2 KiB"


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_no_python_literal_or_seed_in_what_a_session_writes(path: Path) -> None:
    bad: list[str] = []
    seen: dict[tuple[str, str, str], str] = {}
    with open_recording(path) as rec:
        for upd in Rerun(rec, entry_points=False):
            for f in upd.opened:
                key = (f.check, f.key, f.title)
                if key in seen:
                    continue
                text = "\n".join([f.title, f.cause or "", f.next_step or "", *(
                    f"{k} {fmt_number(k, v)}" for k, v in f.numbers.items())])
                seen[key] = text
                bad += problems(f"{f.check} finding", text)
        rep = report(rec)
        text = report_text(rep)
        bad += problems("report", text)
        bad += not_evidence(rep, text)
    bad += problems("check --replay", check_text(check_replay(str(path)), color=False,
                                                  table=False))
    assert seen or path.stem.startswith("healthy"), "no finding opened: nothing was read"
    assert not bad, "\n".join(bad)


def _helps(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """(command, its --help) of ``parser`` and of every subcommand under it."""
    yield parser.prog, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _helps(sub)


def test_no_field_note_numbering_in_names_titles_docs_or_help() -> None:
    from replmon.cli_args import build_parser
    from replmon.lab.demo import DEMOS
    from replmon.testing.scenarios.sessions import SESSIONS as MADE

    texts = [(f"session {m.name}", f"{m.name} {m.title} {m.scenario}") for m in MADE]
    texts += [(f"sample_sessions/{p.name}", p.name) for p in SESSIONS]
    texts += [(f"--scenario {d.name}", f"{d.name} {d.title}") for d in DEMOS]
    texts += [(str(p.relative_to(ROOT)), p.read_text()) for p in
              [ROOT / "README.md", ROOT / "sample_sessions" / "README.md",
               *sorted((ROOT / "docs").glob("*.md"))]]
    texts += [(f"{prog} --help", text) for prog, text in _helps(build_parser())]
    assert len(texts) > 30
    bad = [line for where, text in texts for line in problems(where, text, (SEED,))]
    assert not bad, "\n".join(bad)
