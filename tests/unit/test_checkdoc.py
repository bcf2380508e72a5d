"""docs/checks.md is generated from the checks; it must match the code."""

from __future__ import annotations

from pathlib import Path

from replmon.output.checkdoc import field_docs, render
from replmon.plugins import discover

DOC = Path(__file__).parent.parent.parent / "docs" / "checks.md"


def test_docs_checks_md_is_up_to_date() -> None:
    checks, failures = discover(entry_points=False)
    assert failures == []
    assert DOC.read_text() == render(checks), (
        "docs/checks.md is stale: run  python -m replmon.output.checkdoc > docs/checks.md")


def test_every_threshold_is_documented() -> None:
    checks, _ = discover(entry_points=False)
    for c in checks:
        docs = field_docs(c.thresholds)
        for name in c.thresholds.model_fields:
            assert docs.get(name), f"checks.{c.id}.{name} has no docstring"


def test_each_check_says_what_it_can_cause_and_be_caused_by() -> None:
    """#34: docs/checks.md gives every check's place in incidents, both ways, from the
    checks' own declarations."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text()
    section = text.split("\n## stmt_vs_rows\n")[1].split("\n## ")[0]
    assert "can be caused by [`config_drift`](#config_drift) (auto_increment_increment)" \
        in section
    mem = text.split("\n## memory_ceiling\n")[1].split("\n## ")[0]
    assert "can cause [`throughput_collapse`](#throughput_collapse) on the same node, " \
        "from its paging finding" in mem
