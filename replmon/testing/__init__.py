"""Test scaffolding, not the product: what only tests and benchmarks use (and the script
that makes sample_sessions/). In the source tree only: the wheel leaves it out.

- ``synth``: ticks built by hand (a node, a tick, a series), for a check's unit tests;
- ``synthetic``: long sessions looped from a few real ticks (the 24 h benchmark file);
- ``scenarios``: each check's situations, induced on the lab or rebuilt from the field
  notes' figures; ``scenarios.for_check(check_id)`` finds a check's own.

Nothing under ``replmon/`` outside this package imports it (tests/unit/test_layering.py).
"""
