"""The headless core never imports Textual: models, sources, collector, config,
lab and outputs must work (and stay cheap to import) without a UI."""

from __future__ import annotations

import subprocess
import sys

HEADLESS = [
    "replmon.model.tick",
    "replmon.collector",
    "replmon.factory",
    "replmon.config",
    "replmon.lab",
    "replmon.cli",
    "replmon.output.plain",
    "replmon.sources.host",
    "replmon.sources.drbd",
    "replmon.sources.mysql",
    "replmon.sources.redis_info",
    "replmon.check",
    "replmon.engine",
    "replmon.plugins",
    "replmon.synth",
    "replmon.scenarios",
    "replmon.output.nagios",
    "replmon.output.checkdoc",
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
