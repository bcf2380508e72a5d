"""HTTP helpers of the live tests that start servers (replmon serve, Prometheus): a GET
on loopback, and polling until a condition holds."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable
from typing import Any


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        return bytes(r.read())


def wait_for(what: str, fn: Callable[[], Any], timeout: float = 45.0) -> Any:
    """``fn()``'s first truthy value within ``timeout`` s (a connection refused while a
    server starts counts as not yet); AssertionError naming ``what`` and the last value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = fn()
        except OSError as e:
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")
