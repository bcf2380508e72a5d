"""One pair's latest state, kept by an inline pipeline reader and read by the HTTP
thread: the last tick (and its metrics, formatted once), the open findings, and
replmon's own tick statistics.

The pipeline thread replaces whole objects (a tick, a tuple of findings); the HTTP
thread reads references. Under the GIL a reference swap is atomic, so a scrape sees
one tick's numbers or the next one's, never a mix, and never waits for a tick.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from replmon.engine import Update
from replmon.model.findings import RECENT_MAX, Finding
from replmon.model.incidents import Causality, Incident, IncidentTracker, finding_id
from replmon.model.tick import Tick

Blocks = dict[str, tuple[bytes, bytes]]
"""A pair's per-tick metrics in the text format (fleet/metrics.py): metric name -> (its
HELP and TYPE lines, its sample lines), encoded once per tick."""

TICK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds (s) of the tick duration histogram (sampling both nodes' sources)."""


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
        """Formats the pair's per-tick metrics when a tick arrives (metrics.render_pair)."""
        self.blocks: Blocks = {}
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
        self.received_mono = time.monotonic()
        if self.render is not None:
            self.blocks = self.render(self)

    def incident_of(self, f: Finding) -> tuple[str, str]:
        """(incident, "root" or "consequence") of an open finding: the labels that let one
        Alertmanager inhibit rule keep a consequence quiet while its root fires. The
        incident is named by its root (check/node/key): bounded and the same after a
        restart, unlike a counter."""
        for inc in self.incidents.open:
            if finding_id(f) in inc.findings:
                roots = {finding_id(r) for r in inc.roots}
                return incident_name(inc), "root" if finding_id(f) in roots else "consequence"
        return f"{f.check}/{f.node}/{f.key}", "root"

    def on_drop(self, n: int) -> None:  # inline readers are never dropped from
        pass

    def close(self) -> None:
        pass

    def age_s(self) -> float | None:
        """Seconds since the last tick arrived (None before the first)."""
        if self.received_mono is None:
            return None
        return time.monotonic() - self.received_mono
