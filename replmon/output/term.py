"""What the terminal on the other end can take, by the conventions other tools follow.

- ``NO_COLOR`` (https://no-color.org): set to anything non-empty, no colour anywhere.
- ``TERM=dumb`` (what Emacs shells, some CI runners and ``ssh -T`` give): no colour and
  no full-screen drawing; replmon writes its text rows instead, as ``top -b`` would.
- stdout not a terminal (a pipe, a file, a monitoring agent): no colour, no screen.
"""

from __future__ import annotations

import os
from typing import TextIO


def dumb_terminal() -> bool:
    return os.environ.get("TERM", "") == "dumb"


def color_ok(stream: TextIO) -> bool:
    """Colour escapes may be written to ``stream``."""
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty() and not dumb_terminal()


def screen_ok(stream: TextIO) -> tuple[bool, str]:
    """(can the full screen be drawn on ``stream``, why not when it cannot)."""
    if not stream.isatty():
        return False, "stdout is not a terminal"
    if dumb_terminal():
        return False, "TERM=dumb"
    return True, ""
