"""Finding the checks: every module in replmon.checks (the top-level checks/
folder) plus third-party checks registered under the entry-point group
``replmon.checks`` (``[project.entry-points."replmon.checks"] mine = "pkg.mod"``,
where the module exposes ``CHECK``).

A module that fails to import or has no valid ``CHECK`` becomes a LoadFailure;
the engine reports it as a finding, so a broken check is never silence.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import pkgutil
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from replmon.check import Check

log = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "replmon.checks"


@dataclass(frozen=True)
class LoadFailure:
    name: str
    """Module or entry-point name."""
    error: str


_DOCUMENTED: dict[str, tuple[Check[Any], Check[Any]]] = {}
"""Module name -> (its CHECK, that check with the module's docstring): one copy per
process, not one per engine (``replmon serve`` builds an engine per pair: 19 docstrings,
47 KB a pair). A reloaded module's new CHECK replaces the entry."""


def _from_module(mod: ModuleType, name: str) -> Check[Any] | LoadFailure:
    check = getattr(mod, "CHECK", None)
    if not isinstance(check, Check):
        return LoadFailure(name, "module has no CHECK = replmon.check.Check(...)")
    kept = _DOCUMENTED.get(mod.__name__)
    if kept is None or kept[0] is not check:
        kept = _DOCUMENTED[mod.__name__] = (check, replace(check, doc=(mod.__doc__ or "").strip()))
    return kept[1]


def _import(modname: str, name: str) -> Check[Any] | LoadFailure:
    try:
        mod = importlib.import_module(modname)
    except Exception as e:  # surfaced as a finding by the engine, with the error text
        log.exception("check module %s failed to import", modname)
        return LoadFailure(name, f"import failed: {type(e).__name__}: {e}")
    return _from_module(mod, name)


def discover(*, entry_points: bool = True) -> tuple[list[Check[Any]], list[LoadFailure]]:
    """All checks, built-in first (sorted by module name), then plug-ins."""
    import replmon.checks as pkg  # type: ignore[import-not-found,unused-ignore]

    checks: list[Check[Any]] = []
    failures: list[LoadFailure] = []
    found = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))
    results = [_import(f"{pkg.__name__}.{name}", name) for name in found]
    if entry_points:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            results.append(_import(ep.value, ep.name))
    seen: set[str] = set()
    for r in results:
        if isinstance(r, LoadFailure):
            failures.append(r)
        elif r.id in seen:
            failures.append(
                LoadFailure(r.id, f"duplicate check id {r.id!r}; the first one is used"))
        else:
            seen.add(r.id)
            checks.append(r)
    return checks, failures
