"""replmon's check modules (installed as ``replmon.checks``).

One check per module, each exposing ``CHECK`` (``replmon.check.Check``): it reads a
window of ticks and returns observations; the engine (``replmon.engine``) runs every
check found here and through the ``replmon.checks`` entry points (``replmon.plugins``)
and turns observations into findings. docs/checks.md documents them, generated from the
modules' docstrings, and its "Writing a check" walks through writing one.

A module whose name starts with ``_`` is no check but a check's helper (the loader
skips it; ``_mysql_replication_advice``: mysql_replication's wording of each thread's
error); the engine's ``checks_id`` covers it as it covers the checks.
"""
