"""Small helpers for the words of messages and reports.

Layering: the bottom floor (standard library only): any module may import it.
"""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` with the noun that fits it: plural(1, "event") is "1 event", plural(2,
    "event") "2 events", plural(0, "entry", "entries") "0 entries"."""
    return f"{n} {one if n == 1 else many or one + 's'}"
