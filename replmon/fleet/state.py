"""One pair's latest state, kept by an inline pipeline reader and read by the HTTP
thread: the last tick (and its metrics, formatted once), the open findings, and
replmon's own tick statistics.

The pipeline thread replaces whole objects (a tick, a tuple of findings); the HTTP
thread reads references. Under the GIL a reference swap is atomic, so a scrape sees
one tick's numbers or the next one's, never a mix, and never waits for a tick.

The pair's per-tick metrics text is formatted only for the ticks a scrape will see: a
pair ticking every 5 s scraped every 15 s (a fleet's usual scrape interval) or 60 s
(Prometheus' default) is formatted once a scrape, not three or twelve times. A tick
formats it at once when a scrape is due before the pair's next tick (``SCRAPES``: the
scrapes' own spacing), so a scrape mostly joins text made beforehand; otherwise it is
left for the first scrape that asks for it (``rendered``). Both take the pair's lock, so
the text is always one tick's whole state (the incident tracker changes in place).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replmon.engine import Update
from replmon.model.findings import RECENT_MAX, Finding
from replmon.model.incidents import (
    Causality,
    FindingId,
    Incident,
    IncidentTracker,
    finding_id,
)
from replmon.model.tick import Tick

log = logging.getLogger("replmon.serve")

Blocks = dict[str, tuple[bytes, bytes]]
"""A pair's per-tick metrics in the text format (fleet/metrics.py): metric name -> (its
HELP and TYPE lines, its sample lines), encoded once per tick."""

TICK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds (s) of the tick duration histogram (sampling both nodes' sources)."""


class ScrapeClock:
    """When the next scrape of /metrics is due, from the last ones (http.App notes each).

    Several scrapers (two Prometheus, a curl every second) are one stream of scrapes: the
    spacing expected is the shorter of the last two, so a tick formats its text too
    often rather than too seldom, and a scrape by hand counts for two scrapes only; with
    none for a few spacings, a scrape is expected at any time (every tick formats)."""

    KEEP = 2
    """Spacings remembered."""
    MARGIN = 0.25
    """A scrape due within this share of the pair's interval after its next tick counts
    as due before it (the ticks' jitter: a scrape that finds the text unformatted formats
    it itself)."""

    def __init__(self) -> None:
        self.last: float | None = None
        self.gaps: deque[float] = deque(maxlen=self.KEEP)

    def seen(self, now: float | None = None) -> None:
        """A scrape now (time.monotonic())."""
        now = time.monotonic() if now is None else now
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def due_within(self, interval: float, now: float) -> bool:
        """Whether a scrape may come within ``interval`` seconds after ``now``."""
        last, gaps = self.last, self.gaps
        if last is None or not gaps:
            return True
        gap = min(gaps)
        if gap <= 0 or now - last > 4 * max(gaps):  # scrapes stopped, or came at once
            return True
        late = now - (last + gap)
        if late >= 0:
            if late < gap / 2:  # late: it may come any moment
                return True
            late -= math.ceil(late / gap) * gap  # its next turn (-gap < late <= 0)
        return -late <= interval * (1 + self.MARGIN)


SCRAPES = ScrapeClock()
"""The process's scrapes of /metrics (fleet/http.py notes them)."""


@dataclass
class Histogram:
    """Cumulative bucket counts, as Prometheus wants them (le-buckets and +Inf)."""

    bounds: tuple[float, ...] = TICK_BUCKETS
    counts: list[int] = field(default_factory=lambda: [0] * (len(TICK_BUCKETS) + 1))
    total: float = 0.0
    n: int = 0

    def observe(self, x: float) -> None:
        for i, b in enumerate(self.bounds):
            if x <= b:
                self.counts[i] += 1
                break
        else:
            self.counts[-1] += 1
        self.total += x
        self.n += 1

    def buckets(self) -> list[tuple[str, int]]:
        """[(le, cumulative count)], ending with +Inf."""
        out, acc = [], 0
        for b, c in zip((*[repr(float(b)) for b in self.bounds], "+Inf"), self.counts,
                        strict=True):
            acc += c
            out.append((b, acc))
        return out


def incident_name(inc: Incident) -> str:
    """An incident's label value: its root's check/node/key."""
    r = inc.root
    return f"{r.check}/{r.node}/{r.key}"


class PairState:
    """The pipeline reader behind a pair's metrics (inline: it only swaps references)."""

    name = "fleet-state"
    inline = True

    def __init__(self, pair: str, interval: float,
                 render: Callable[[PairState], Blocks] | None = None,
                 links: Causality | None = None) -> None:
        """``links``: the pair's checks' declarations, by which its findings group into
        incidents (replmon/model/incidents.py; output.incidents.causality)."""
        self.pair = pair
        self.incidents = IncidentTracker(links or {})
        self.interval = interval
        self.render = render
        """Formats the pair's per-tick metrics (metrics.render_pair): at the first scrape
        after a tick (``rendered``)."""
        self.blocks: Blocks = {}
        """The per-tick metrics text as last formatted (``rendered`` brings it up to date)."""
        self._unrendered = False
        """A tick arrived since ``blocks`` was formatted."""
        self._lock = threading.Lock()
        """Held while a tick updates the state and while its text is formatted."""
        self.kept: dict[Any, Any] = {}
        """render_pair's blocks of the last formatting with what each was made of, by
        family: used again while that is the same (metrics._scalar_blocks)."""
        self.tick: Tick | None = None
        self.findings: tuple[Finding, ...] = ()
        self.closed: deque[Finding] = deque(maxlen=4 * RECENT_MAX)
        """The last findings that closed, oldest first (bounded: /findings.json shows the
        recent ones, model.findings.recently_closed)."""
        self.received_mono: float | None = None
        """time.monotonic() when the last tick arrived (the pair's liveness)."""
        self.ticks_total = 0
        self.late_total = 0
        self.missed_total = 0
        self.durations = Histogram()
        self.findings_opened_total = 0

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        with self._lock:
            self.ticks_total += 1
            self.late_total += int(tick.late)
            self.missed_total += tick.missed
            self.durations.observe(tick.duration_ms / 1000)
            if update is not None:
                self.findings = tuple(update.open)
                self.closed.extend(update.closed)
                self.incidents.update(tick.wall, update.open)
                self.findings_opened_total += len(update.opened)
            self.tick = tick
            self.received_mono = now = time.monotonic()
            if self.render is None:
                return
            if SCRAPES.due_within(self.interval, now):
                self._unrendered = False
                self.blocks = self.render(self)
            else:
                self._unrendered = True

    def rendered(self) -> Blocks:
        """The pair's per-tick metrics text of its last tick, formatted now if a tick
        arrived since it last was (the scrape's thread). A formatting that fails is
        logged and the text of the tick before it stays (the next tick tries again)."""
        if self._unrendered:
            with self._lock:
                if self._unrendered and self.render is not None:
                    self._unrendered = False
                    try:
                        self.blocks = self.render(self)
                    except Exception:
                        log.exception("pair %s: formatting its metrics failed", self.pair)
        return self.blocks

    def incident_of(self, f: Finding,
                    roles: dict[FindingId, tuple[str, str]] | None = None) -> tuple[str, str]:
        """(incident, "root" or "consequence") of an open finding: the labels that let one
        Alertmanager inhibit rule keep a consequence quiet while its root fires. The
        incident is named by its root (check/node/key): bounded and the same after a
        restart, unlike a counter. ``roles``: ``incident_roles()``, for a caller asking
        about every finding of the pair."""
        got = (self.incident_roles() if roles is None else roles).get(finding_id(f))
        return got or (f"{f.check}/{f.node}/{f.key}", "root")

    def incident_roles(self) -> dict[FindingId, tuple[str, str]]:
        """``incident_of`` of each finding in an open incident, by ``finding_id``: one
        sort of the open incidents for all the pair's findings (metrics' ``findings``
        reader sorted them once a finding: ~10 µs of render_pair's pair-tick when some
        are open, bench/bench_render.py)."""
        out: dict[FindingId, tuple[str, str]] = {}
        for inc in self.incidents.open:  # the first (worst) incident of a finding wins
            name = incident_name(inc)
            roots = {finding_id(r) for r in inc.roots}
            for fid in inc.findings:
                if fid not in out:
                    out[fid] = (name, "root" if fid in roots else "consequence")
        return out

    def on_drop(self, n: int) -> None:  # inline readers are never dropped from
        pass

    def close(self) -> None:
        pass

    def age_s(self) -> float | None:
        """Seconds since the last tick arrived (None before the first)."""
        if self.received_mono is None:
            return None
        return time.monotonic() - self.received_mono
