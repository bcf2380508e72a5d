"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-
pipe``: JSON messages ended by a NUL byte, on the browser's fds 3 and 4), for the tests
that look at the HTML report as a reader's browser shows it. No driver package and no
websocket: the protocol's own transport, the standard library's json and os.

    with Chromium() as browser:
        shot, = browser.open([Path("page.html")])  # errors, text, charts' PNGs
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

CHROMIUM = "/usr/bin/chromium"
COLOURED_MIN = 40
"""Pixels of a series' colour a drawn chart has at least (a flat line 1,000 px long
has ~1,000; an empty plot area has none: grid and shading are grey or pale)."""
WIDTH = 1200
TIMEOUT_S = 30.0


def chromium_path() -> str:
    """Debian's chromium; missing is a failure, not a skip (.ci/setup installs it)."""
    path = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    assert path, "chromium missing: .ci/setup installs Debian's chromium package"
    return path


@dataclass
class Shot:
    """What a page showed: its errors, its text, its charts' plot boxes (CSS pixels,
    x, y, width, height in the page) and screenshots."""

    errors: list[str] = field(default_factory=list)
    text: str = ""
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    drawn: int = -1
    charts: list[bytes] = field(default_factory=list)
    """A PNG of each chart's plot area (its box)."""
    png: bytes = b""
    """The whole page (``open(..., full=True)``)."""


class Chromium:
    """One browser process; each ``open`` gets a tab of its own and closes it."""

    def __init__(self) -> None:
        self._profile = tempfile.mkdtemp(prefix="replmon-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: the pipe ends at the fds the browser reads
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [chromium_path(), "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--disable-background-networking", "--disable-extensions",
             f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, AssertionError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    # --- the protocol -------------------------------------------------------------

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            assert left > 0, "chromium did not answer in time"
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                assert chunk, "chromium closed its pipe"
                self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)  # type: ignore[no-any-return]

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its answer; events met meanwhile are kept."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            got = self._read(deadline)
            if got.get("id") == self._next:
                assert "error" not in got, f"{method}: {got['error']}"
                return got.get("result", {})  # type: ignore[no-any-return]
            self._events.append(got)

    def _wait_event(self, method: str, session: str) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while not any(ev.get("method") == method and ev.get("sessionId") == session
                      for ev in self._events):
            self._events.append(self._read(deadline))

    # --- a page -------------------------------------------------------------------

    def open(self, pages: list[Path], *, full: bool = False) -> list[Shot]:
        """Load each page, one after the other, in one tab WIDTH pixels wide: its errors
        (console errors, uncaught exceptions, failed loads), text, a screenshot of each
        chart's plot area, and with ``full`` one of the whole page. (Tabs loading at
        once were slower on two cores; a tab per page cost ~0.3 s more each.)"""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        shots = [self._look(page, session, full) for page in pages]
        self.call("Target.closeTarget", {"targetId": target})
        return shots

    def _shot(self, session: str, x: float, y: float, w: float, h: float) -> bytes:
        png = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "optimizeForSpeed": True,
            "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}},
            session=session)["data"]
        return base64.b64decode(png)

    def _look(self, page: Path, session: str, full: bool) -> Shot:
        self._events = [ev for ev in self._events if ev.get("sessionId") != session]
        self.call("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
        self._wait_event("Page.loadEventFired", session)
        facts = self.call("Runtime.evaluate", {"expression": FACTS, "returnByValue": True},
                          session=session)["result"]["value"]
        shot = Shot(text=facts["text"], boxes=[tuple(b) for b in facts["boxes"]],
                    drawn=int(facts["drawn"]))
        shot.charts = [self._shot(session, *box) for box in shot.boxes]
        if full:
            shot.png = self._shot(session, 0, 0, WIDTH, facts["height"])
        shot.errors = self._errors(session)
        return shot

    def _errors(self, session: str) -> list[str]:
        out = []
        for ev in self._events:
            if ev.get("sessionId") != session:
                continue
            p = ev.get("params", {})
            if ev.get("method") == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"uncaught: {d.get('exception', {}).get('description') or d['text']}")
            elif ev.get("method") == "Runtime.consoleAPICalled" and p["type"] in ("error",
                                                                                  "assert"):
                out.append(f"console.{p['type']}: {p['args']}")
            elif ev.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log: {p['entry']['text']} {p['entry'].get('url', '')}")
        self._events = [ev for ev in self._events if ev.get("sessionId") != session]
        return out


FACTS = """(() => ({
  text: document.body.innerText,
  drawn: document.body.getAttribute("data-charts-drawn") || "-1",
  height: Math.ceil(document.documentElement.scrollHeight),
  boxes: Array.from(document.querySelectorAll(".chart")).map(c => {
    const o = c.querySelector(".u-over");
    const r = (o || c).getBoundingClientRect();
    return [r.left + scrollX, r.top + scrollY, r.width, r.height];
  }),
}))()"""
"""What the test reads of a page: its text, how many charts its script drew, its height
and each chart's plot area (uPlot's .u-over: inside the axes), in page coordinates."""


def coloured(png: bytes) -> int:
    """Pixels of a series' colour in a screenshot: saturated (HSV saturation over 100 of
    255), where the white background, the grey grid and the pale shading (~17) are
    not."""
    im = Image.open(io.BytesIO(png)).convert("RGB").convert("HSV")
    return sum(im.getchannel("S").histogram()[100:])


def blank_charts(shot: Shot) -> list[int]:
    """The charts of a page whose plot area shows no line in its screenshot."""
    return [i for i, png in enumerate(shot.charts) if coloured(png) < COLOURED_MIN]


def html_in_chromium(pages: list[Path]) -> list[Shot]:
    """Each page as one browser shows it (one browser process for them all)."""
    with Chromium() as browser:
        return browser.open(pages)
