"""The worker's frozen heap, as the tests about freezing read it (tests/conftest.py
freezes each worker's heap after every test: ``_freeze_heap``)."""

from __future__ import annotations


def frozen_kept(count: int, frozen: int) -> bool:
    """Whether ``count`` (``gc.get_freeze_count()`` now) is the ``frozen`` read before,
    with nothing frozen on top and nothing unfrozen. Only ``gc.freeze()`` adds to the
    count and ``gc.unfreeze()`` empties it; a frozen object that dies leaves it (2 of
    ~380,000-712,000 did between two readings in a suite run), so a little less is kept."""
    return frozen * 0.99 <= count <= frozen
