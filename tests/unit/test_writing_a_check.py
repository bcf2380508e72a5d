"""docs/checks.md's "Writing a check": its worked example, the code taken from the page
as a reader would copy it, runs as a check: quiet on the lab's real ticks, and on the
same ticks with a node's RDB save failing a finding that opens after its hold, names
its numbers and turns critical after ``critical_after`` seconds (set as TOML would)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from replmon.check import Check, Role, Window
from replmon.engine import Engine, configure
from replmon.model.findings import Finding, Severity
from replmon.model.tick import Tick
from replmon.output.checkdoc import render
from replmon.plugins import _from_module
from replmon.testing.real_ticks import loop_ticks
from replmon.testing.synth import GateTally, judge_gate

ROOT = Path(__file__).parent.parent.parent
DOC = ROOT / "docs" / "checks.md"
LAB = ROOT / "tests" / "fixtures" / "ticks" / "lab_pair.jsonl"
FAILS_AT = 30
"""Index of the first tick with the failure."""


def example_code(gated: bool = False) -> str:
    """The worked example's module as the page shows it; ``gated``: with the lines "A gate"
    adds at its end."""
    text = DOC.read_text()
    section = text[text.index("\n## Writing a check\n"):]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "no python block in 'Writing a check'"
    if not gated:
        return found[1]
    gate = re.search(r"```python\n(.*?)```", section[section.index("\n### A gate\n"):], re.S)
    assert gate is not None, "no python block in 'A gate'"
    return found[1] + "\n\n" + gate[1]


def _load(tmp_path_factory: pytest.TempPathFactory, code: str) -> Check[Any]:
    path = tmp_path_factory.mktemp("example") / "redis_persistence_example.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod  # as an import would (pydantic reads the module)
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[path.stem]
    check = _from_module(mod, "redis_persistence")  # what the plugin loader does
    assert isinstance(check, Check), check
    return check


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Check[Any]:
    return _load(tmp_path_factory, example_code())


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Check[Any]:
    return _load(tmp_path_factory, example_code(gated=True))


def lab_ticks(n: int = 200) -> list[Tick]:
    real = [Tick.model_validate_json(line) for line in LAB.read_text().splitlines()]
    return list(loop_ticks(real, n, rates=True))


def failing(ticks: list[Tick], role: Role, **redis: Any) -> list[Tick]:
    """``ticks`` with ``role``'s Redis INFO saying ``redis`` from FAILS_AT on."""
    out = ticks[:FAILS_AT]
    for t in ticks[FAILS_AT:]:
        node = getattr(t, role)
        changed = node.model_copy(update={"redis": node.redis.model_copy(update=redis)})
        out.append(t.model_copy(update={role: changed}))
    return out


def run(check: Check[Any], ticks: list[Tick], **settings: Any
        ) -> tuple[dict[int, list[Finding]], dict[int, list[Finding]]]:
    """(opened by seq, open after each seq)."""
    engine = Engine(configure([check], {check.id: settings}))
    opened, open_ = {}, {}
    for t in ticks:
        upd = engine.feed(t)
        assert not [s for s in upd.seen if s[0] == "engine"], upd.seen  # it never raised
        opened[t.seq], open_[t.seq] = upd.opened, upd.open
    return opened, open_


def test_the_example_is_a_check_the_page_documents(example: Check[Any]) -> None:
    assert example.id == "redis_persistence" and example.needs == ("redis",)
    assert example.doc.startswith("Redis persistence: the last RDB save or AOF write failed.")
    assert "| `critical_after` | `120.0` | Seconds (s) of failing after which it is " \
        "critical. |" in render([example])


def test_quiet_on_the_lab_ticks(example: Check[Any]) -> None:
    ticks = lab_ticks()
    assert {t.primary.redis.rdb_last_bgsave_status for t in ticks} == {"ok"}
    opened, _ = run(example, ticks)
    assert not any(opened.values())


def test_a_failing_save_opens_after_its_hold_and_turns_critical(example: Check[Any]) -> None:
    ticks = failing(lab_ticks(), "primary", rdb_last_bgsave_status="err")
    opened, open_ = run(example, ticks)
    first = next(seq for seq, found in opened.items() if found)
    f = opened[first][0]
    assert first - ticks[FAILS_AT].seq == 1  # open_after 2 s: its second tick (at 1 s)
    assert (f.check, f.node, f.key, f.severity) == \
        ("redis_persistence", "primary", "rdb", Severity.WARNING)
    assert f.title.startswith("RDB save failing on the primary's Redis for 1 s (")
    assert f.title.endswith("writes not in a snapshot); the replica's works")
    assert f.numbers["failing_s"] == pytest.approx(1.0, abs=0.1)
    assert f.numbers["other_failing"] is False and f.numbers["failing_at_least"] is False
    assert isinstance(f.numbers["unsaved_writes"], int)
    at = {seq: [x.severity for x in found] for seq, found in open_.items()}
    walls = {t.seq: t.wall for t in ticks}
    critical = min(seq for seq, sev in at.items() if Severity.CRITICAL in sev)
    assert walls[critical] - walls[ticks[FAILS_AT].seq] == pytest.approx(120, abs=1.1)
    assert at[ticks[-1].seq] == [Severity.CRITICAL]


def test_its_settings_take_durations_as_toml_does(example: Check[Any]) -> None:
    ticks = failing(lab_ticks(120), "replica", aof_last_write_status="err")
    _, open_ = run(example, ticks, critical_after="1m", open_after="5s")
    first = min(seq for seq, found in open_.items() if found)
    assert first - ticks[FAILS_AT].seq == 4  # its fifth tick
    critical = min(seq for seq, found in open_.items()
                   if any(f.severity == Severity.CRITICAL for f in found))
    assert critical - ticks[FAILS_AT].seq == pytest.approx(60, abs=1)
    assert [(f.node, f.key) for f in open_[ticks[-1].seq]] == [("replica", "aof")]


def test_both_nodes_failing_say_so(example: Check[Any]) -> None:
    ticks = failing(failing(lab_ticks(60), "primary", rdb_last_bgsave_status="err"),
                    "replica", rdb_last_bgsave_status="err")
    _, open_ = run(example, ticks)
    found = open_[ticks[-1].seq]
    assert sorted(f.node for f in found) == ["primary", "replica"]
    assert all(f.title.endswith("'s too") and f.numbers["other_failing"] is True
               and "on both nodes" in f.cause for f in found)


def test_the_gated_example_hides_nothing_and_is_quiet_where_nothing_fails(
        gated: Check[Any]) -> None:
    """The page's gate, judged window by window outside an engine (so that a gate that
    raises fails here): never quiet where ``evaluate`` sees a failing save, with the
    default thresholds and others; quiet on the healthy ticks, loud from the failure."""
    gate = gated.gate
    assert gate is not None and gate.gauges is not None
    assert gate.gauges._fields == ("failing",)
    limits = [gated.thresholds(), gated.thresholds(critical_after=1.0),
              gated.thresholds(critical_after=1e6)]
    ticks = failing(failing(lab_ticks(90), "primary", rdb_last_bgsave_status="err"),
                    "replica", aof_last_write_status="err")
    tally = GateTally()
    quiet_at = []
    for i in range(len(ticks)):
        w = Window(ticks[:i + 1])
        assert type(gate.measure(w)) is gate.gauges
        judge_gate(gated, w, limits, tally, f"tick {i}:")
        quiet_at.append(gate.quiet(gate.measure(w), limits[0]))
    assert not tally.hidden, tally.hidden[:3]
    assert tally.seen  # evaluate saw the failure: the comparison proves something
    assert quiet_at == [i < FAILS_AT for i in range(len(ticks))]
