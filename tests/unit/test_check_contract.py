"""The check contract, both ways: the product never imports a check's module (it finds
the checks through ``replmon.plugins``), and a check imports nothing of replmon but
``replmon.check`` (with the standard library, pydantic for its limits, and the private
helpers beside it in checks/, whose names start with "_"). A check written against
``replmon.check`` alone keeps working while the product moves around it; a product that
reached into a check would break when the check is switched off or replaced."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DISCOVERY = {"replmon/plugins.py", "replmon/engine.py"}
"""Product modules that import the checks' package (not a check) to discover them."""
CHECK_MAY_IMPORT = {"replmon.check", "pydantic", "__future__"}


def imports(path: Path) -> Iterator[tuple[int, str, int]]:
    """(line, module imported, relative level) of every import in ``path``, at any
    depth (a function's own import too); ``from a import b`` gives "a.b" (b may be a
    module)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, 0
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node.lineno, ".".join(filter(None, (node.module, alias.name))), \
                    node.level


def product_violations() -> list[str]:
    out = []
    for path in sorted((ROOT / "replmon").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, module, _ in imports(path):
            if module.startswith(("replmon.checks.", "checks.")) or (
                    module in ("replmon.checks", "checks") and rel not in DISCOVERY):
                out.append(f"{rel}:{line} imports {module}")
    return out


def check_violations() -> list[str]:
    out = []
    for path in sorted((ROOT / "checks").glob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, module, level in imports(path):
            top = module.split(".")[0]
            if level:
                ok = level == 1 and module.startswith("_")  # a private helper beside it
            else:
                ok = any(module == m or module.startswith(m + ".") for m in CHECK_MAY_IMPORT) \
                    or top in sys.stdlib_module_names
            if not ok:
                out.append(f"{rel}:{line} imports {'.' * level}{module}")
    return out


def test_no_product_module_imports_a_check() -> None:
    assert product_violations() == []


def test_checks_import_only_replmon_check() -> None:
    assert check_violations() == []


def test_the_rules_see_a_breach(tmp_path: Path) -> None:
    """The walk finds imports at any depth and of any form (it would pass vacuously
    otherwise)."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from replmon.checks import pair_lag\n"
                     "import replmon.truelag\nfrom ._advice import x\n", encoding="utf-8")
    assert sorted(imports(probe)) == [(2, "replmon.checks.pair_lag", 0),
                                      (3, "replmon.truelag", 0), (4, "_advice.x", 1)]
