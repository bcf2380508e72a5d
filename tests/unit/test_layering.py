"""The headless core never imports Textual: models, sources, collector, config,
lab and outputs must work (and stay cheap to import) without a UI. The product never
imports the test scaffolding (replmon.testing), and the wheel leaves it out."""

from __future__ import annotations

import subprocess
import sys

HEADLESS = [
    "replmon.model.tick",
    "replmon.collector",
    "replmon.factory",
    "replmon.config",
    "replmon.configfile",
    "replmon.wording",
    "replmon.lab",
    "replmon.lab.node",
    "replmon.lab.load",
    "replmon.cli",
    "replmon.output.plain",
    "replmon.sources.host",
    "replmon.sources.drbd",
    "replmon.sources.mysql",
    "replmon.sources.redis_info",
    "replmon.check",
    "replmon.engine",
    "replmon.plugins",
    "replmon.testing.synth",
    "replmon.testing.scenarios",
    "replmon.output.nagios",
    "replmon.output.checkdoc",
    "replmon.fleet.serve",
    "replmon.fleet.metrics",
    "replmon.fleet.http",
    "replmon.cli_args",
    "replmon.lab.demo",
    "replmon.lab.faults",
    "replmon.session.recording",
    "replmon.output.html_report",
]


def test_every_check_module_is_headless_too() -> None:
    from replmon.plugins import discover

    checks, _ = discover(entry_points=False)
    mods = [f"replmon.checks.{c.id}" for c in checks]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('textual'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"a check imports textual: {out.stdout}"


def test_headless_modules_do_not_load_textual() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {HEADLESS!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"textual imported by the headless core: {out.stdout}"


def test_checks_folder_installs_as_replmon_checks() -> None:
    import replmon.checks

    assert replmon.checks.__file__ is not None
    assert replmon.checks.__file__.replace("\\", "/").endswith("checks/__init__.py")


def test_the_product_never_imports_the_test_scaffolding() -> None:
    """replmon.testing (scenarios, synthetic ticks, looped sessions) is for tests,
    benchmarks and demos: no module of the product imports it."""
    import ast
    from pathlib import Path

    import replmon

    root = Path(replmon.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if "testing" in path.relative_to(root).parts:
            continue
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                     else [n.module or ""] if isinstance(n, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(root)}: {m}" for m in names
                          if m.startswith("replmon.testing")]
    assert offenders == []


def test_the_wheel_holds_every_product_package_and_not_the_scaffolding() -> None:
    """pyproject's explicit package list: every package under replmon/ (a new one
    forgotten there would be missing from the wheel) but replmon.testing, which stays in
    the source tree for the tests and benches only."""
    import tomllib
    from pathlib import Path

    import replmon

    root = Path(replmon.__file__).parent
    setup = tomllib.loads((root.parent / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(("replmon", *d.relative_to(root).parts)).rstrip(".")
             for d in [root, *(i.parent for i in root.rglob("*/__init__.py"))]}
    product = {p for p in found if not p.startswith("replmon.testing")} | {"replmon.checks"}
    assert sorted(setup["packages"]) == sorted(product)
    assert setup["include-package-data"] is False  # no file of an old build's list


def test_every_check_has_scenarios_found_from_its_id() -> None:
    from replmon.plugins import discover
    from replmon.testing.scenarios import for_check

    checks, _ = discover(entry_points=False)
    # source_health fires on what a scenario breaks (tested by the live source tests);
    # partition needs the two-host lab's faults, which no scenario plays yet (tested by
    # tests/live/test_twohost_checks_live.py and tests/unit/checks/test_partition.py)
    missing = [c.id for c in checks if c.id not in ("source_health", "partition")
               and not any(for_check(c.id))]
    assert missing == []
