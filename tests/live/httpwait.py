"""Helpers of the live tests that start servers (replmon serve, Prometheus): a GET on
loopback, polling until a condition holds, and stopping the servers' processes."""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable
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


def stop(procs: Iterable[subprocess.Popen[Any]], timeout: float = 20.0) -> None:
    """SIGTERM to every process at once, then wait for each (killed after ``timeout``)."""
    procs = list(procs)
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
