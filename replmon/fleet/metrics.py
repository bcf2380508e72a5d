"""The metric families of every pair as Prometheus text: the /metrics page, and
docs/metrics.md (``python -m replmon.fleet.metrics > docs/metrics.md``).

Both are made from the table in fleet/families.py. prometheus_client writes the
exposition format: ``render_pair`` formats a pair's per-tick families once per tick
(kept in its ``PairState.blocks``), and ``exposition`` joins every pair's blocks family
by family under one HELP/TYPE, then adds the scrape-time families (ages) and replmon's
own (tick duration histogram, build info).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    UnknownMetricFamily,
)
from prometheus_client.registry import Collector

from replmon import __version__
from replmon.fleet.families import BUILD_INFO, FAMILIES, TICK_DURATION, Family
from replmon.fleet.state import Blocks, PairState


def _split(fam: Family, states: Sequence[PairState]) -> Iterator[Metric]:
    """``fam`` as one family per value of its first own label."""
    at = len(fam.all_labels) - len(fam.labels)
    rest = fam.all_labels[:at] + fam.all_labels[at + 1:]
    out: dict[str, Any] = {}  # name -> its metric family
    for s in states:
        for labels, v in fam.read(s):
            key = labels[at]
            m = out.get(key)
            if m is None:
                m = out[key] = _KINDS[fam.kind](f"{fam.name}_{key}", fam.help.replace(
                    "<name>", key, 1), labels=rest)
            m.add_metric(labels[:at] + labels[at + 1:], v)
    for key in sorted(out):
        yield out[key]


_KINDS: dict[str, Any] = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily,
                          "untyped": UnknownMetricFamily}


def collect(states: Sequence[PairState], live: bool) -> Iterator[Metric]:
    """The table's families over every pair (those with no sample are left out): the
    scrape-time ones (``live``) or the per-tick ones."""
    for fam in FAMILIES:
        if fam.live is not live:
            continue
        if fam.split:
            yield from _split(fam, states)
            continue
        m = _KINDS[fam.kind](fam.name, fam.help, labels=fam.all_labels)
        for s in states:
            for labels, v in fam.read(s):
                if not math.isnan(v):
                    m.add_metric(labels, v)
        if m.samples:
            yield m


class FleetCollector(Collector):
    """prometheus_client collector over the pairs' states: the per-tick families, or
    (``live``) the scrape-time ones with replmon's histogram and build info."""

    def __init__(self, states: Sequence[PairState], live: bool) -> None:
        self.states = list(states)
        self.live = live

    def collect(self) -> Iterator[Metric]:
        yield from collect(self.states, self.live)
        if self.live:
            yield from _own(self.states)


def _blocks(text: str) -> Blocks:
    """prometheus_client's text cut into its families."""
    out: Blocks = {}
    name, head, body = "", [], []  # type: ignore[var-annotated]
    for line in text.splitlines(keepends=True):
        if line.startswith("# HELP "):
            if name:
                out[name] = ("".join(head), "".join(body))
            name, head, body = line.split(" ", 3)[2], [line], []
        elif line.startswith("#"):
            head.append(line)
        else:
            body.append(line)
    if name:
        out[name] = ("".join(head), "".join(body))
    return out


def render_pair(state: PairState) -> Blocks:
    """One pair's per-tick families, formatted by prometheus_client (once per tick, so a
    scrape of fifty pairs only joins text)."""
    return _blocks(generate_latest(FleetCollector([state], live=False)).decode())


def exposition(states: Sequence[PairState]) -> bytes:
    """The /metrics page: every pair's per-tick blocks (``state.blocks``, rendered by
    ``render_pair`` when the tick arrived) merged family by family under one HELP/TYPE,
    then the scrape-time families and replmon's own, formatted by prometheus_client."""
    parts: list[str] = []
    cached = [s.blocks for s in states if s.blocks]
    static = {f.exposed for f in FAMILIES}
    for fam in FAMILIES:
        if fam.live:
            continue
        if fam.split:  # its families, whatever names each pair had, in one order
            prefix = fam.name + "_"
            names = sorted({k for b in cached for k in b
                            if k.startswith(prefix) and k not in static})
            for name in names:
                bodies = [b[name] for b in cached if name in b]
                parts.append(bodies[0][0])
                parts.extend(body for _, body in bodies)
            continue
        bodies = [b[fam.exposed] for b in cached if fam.exposed in b]
        if bodies:
            parts.append(bodies[0][0])
            parts.extend(body for _, body in bodies)
    parts.append(generate_latest(FleetCollector(states, live=True)).decode())
    return "".join(parts).encode()


def _own(states: Sequence[PairState]) -> Iterator[Metric]:
    h = HistogramMetricFamily(TICK_DURATION.name, TICK_DURATION.help, labels=["pair"])
    for s in states:
        if s.ticks_total:
            h.add_metric([s.pair], s.durations.buckets(), s.durations.total)
    yield h
    b = GaugeMetricFamily(BUILD_INFO.name, BUILD_INFO.help, labels=["version"])
    b.add_metric([__version__], 1.0)
    yield b


def metrics_doc() -> str:
    """docs/metrics.md."""
    head = """# Metrics of `replmon serve`

Generated by `python -m replmon.fleet.metrics > docs/metrics.md` from the table in
`replmon/fleet/families.py`; edit the table, not this file.

Every per-node series carries `pair` (the fleet file's pair name), `node` (`primary` or
`replica`) and `host` (the node's name). Labels hold names and states only: a finding's
title, numbers, cause and next step are on `/findings.json`. Counters are counters (use
`rate()`); the `like` column names the exporter metric of the same quantity and shape
(mysqld_exporter, redis_exporter, node_exporter, drbd-reactor), so a dashboard or a query
written for it works with the `replmon_` prefix and the extra labels. A family with no
sample (no DRBD on the pair, a source that is down) is left out of the page.

| metric | type | labels | help | like |
|---|---|---|---|---|
"""
    rows = []
    for fam in [*FAMILIES, TICK_DURATION, BUILD_INFO]:
        labels = ", ".join(f"`{x}`" for x in fam.all_labels)
        rows.append(f"| `{fam.exposed}` | {fam.kind} | {labels} | {fam.help} | "
                    f"{f'`{fam.like}`' if fam.like else 'replmon'} |")
    return head + "\n".join(rows) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(metrics_doc())
