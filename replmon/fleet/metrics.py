"""The metric families of every pair as Prometheus text: the /metrics page, and
docs/metrics.md (``python -m replmon.fleet.metrics > docs/metrics.md``).

Both are made from the table in fleet/families.py. ``render_pair`` writes a pair's
per-tick families once per tick a scrape sees (kept in its ``PairState.blocks``,
encoded; fleet/state.py says when), in the very
text prometheus_client's ``generate_latest`` writes for them (tests/unit/test_fleet.py
compares the two on every shipped recording) but without its per-sample objects: each
family keeps the text of its sample lines up to the value (``name{labels} ``) from one
tick to the next, and the text of values met before is kept too (``_value_text``), so a
tick mostly looks text up. ``exposition`` joins every pair's blocks
family by family under one HELP/TYPE (a scrape is a join of cached bytes), then adds the
scrape-time families (ages) and replmon's own (tick duration histogram, build info).
The opt-in groups (``render_pair``'s ``groups``, the fleet file's ``metrics.opt_in``)
add families beyond the default; docs/metrics.md says which and what they cost.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    UnknownMetricFamily,
)
from prometheus_client.openmetrics.exposition import escape_metric_name
from prometheus_client.registry import Collector

from replmon import __version__
from replmon.fleet.families import BUILD_INFO, FAMILIES, OPT_IN, TICK_DURATION, Family
from replmon.fleet.samples import OnSource, PerNode, Sample, Scalar, nodes
from replmon.fleet.state import Blocks, PairState
from replmon.model.base import SourceState
from replmon.model.tick import NodeTick


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


_NO_GROUPS: frozenset[str] = frozenset()


def floatToGoString(d: float) -> str:  # noqa: N802 - prometheus_client.utils' own name
    """A value as prometheus_client writes it (its ``floatToGoString``, typed)."""
    s = repr(float(d))
    dot = s.find(".")
    if dot < 0:  # inf, nan, or an exponent already
        if s == "inf":
            return "+Inf"
        if s == "-inf":
            return "-Inf"
        if s == "nan":
            return "NaN"
        return s
    if dot > 6 and s[0] != "-":  # Go switches to exponents sooner than Python
        # "1.<digits>" and "e+" with two digits at least ("e+06"), with concatenations
        # rather than f-strings and a format spec: 0.75 µs instead of 0.95 (one in six
        # values of a pair takes this path).
        mantissa = (s[0] + "." + s[1:dot] + s[dot + 1:]).rstrip("0.")
        return mantissa + ("e+0" if dot < 11 else "e+") + str(dot - 1)
    return s


VALUES_KEPT = 50_000
"""Texts of values ``_value_text`` keeps (cleared past it)."""
_TEXTS: dict[float, str] = {}
"""floatToGoString's text of non-zero values met before (see ``_value_text``)."""
_ZERO = {1.0: "0.0", -1.0: "-0.0"}
"""The texts of 0.0 and -0.0, by ``math.copysign(1.0, v)``: the two are equal as keys of
``_TEXTS`` but not as text, so no zero is kept there."""


def _value_text(v: float) -> str:
    """floatToGoString(v) of a non-zero ``v``, kept in ``_TEXTS``.

    A pair's values repeat tick after tick (gauges, idle counters, sizes, flags): with
    zeros, four in five of them were met before (sample_sessions). The sample loops read
    a value's text as ``_TEXTS.get(v) or _value_text(v)`` for a non-zero ``v`` and from
    ``_ZERO`` for a zero: a dict lookup instead of a call, a repr and string work
    (0.2 to 1 µs a value; render_pair: ~400 instead of ~510 µs a pair-tick,
    bench/bench_render.py)."""
    text = floatToGoString(v)
    if v == v:  # a NaN is never found again (NaN != NaN): not kept
        if len(_TEXTS) >= VALUES_KEPT:
            _TEXTS.clear()
        _TEXTS[v] = text
    return text


def _esc(v: str) -> str:
    """A label value as the text format writes it (backslash, newline, double quote)."""
    if "\\" in v or "\n" in v or '"' in v:
        return v.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')
    return v


def _head(name: str, kind: str, help_: str) -> str:
    text = help_.replace("\\", r"\\").replace("\n", r"\n")
    return f"# HELP {name} {text}\n# TYPE {name} {kind}\n"


class _Shape:
    """How a family's samples are written, worked out once: the label names in the order
    prometheus_client writes them (sorted) and where each one's value is in the reader's
    tuple."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.order = sorted(range(len(labels)), key=lambda i: labels[i])
        self.keys = [f'{labels[i]}="' for i in self.order]

    def prefix(self, name: str, labels: Sequence[str]) -> str:
        """A sample line up to its value: ``name{l1="v1",...} ``."""
        if self.keys:
            inner = ",".join([k + _esc(labels[i]) + '"'
                              for k, i in zip(self.keys, self.order, strict=True)])
            return f"{name}{{{inner}}} "
        return f"{name} "

    def line(self, name: str, labels: Sequence[str], v: float) -> str:
        return f"{self.prefix(name, labels)}{floatToGoString(v)}\n"


PREFIXES_KEPT = 200_000
"""Sample-line prefixes a family keeps between ticks (label values -> their text): a
fleet's series repeat tick after tick, so a tick formats only values. Past this many
(label values that keep changing), the family starts over."""


class _Format:
    """A family of the table, ready to write: the same text prometheus_client's
    ``generate_latest`` writes for it (tests/unit/test_fleet.py compares the two), several
    times faster. Written from the pipelines' and the scrapes' threads: a prefix
    cached by one pair's tick is the same text for any other (a dict's get and set are
    atomic under the GIL)."""

    def __init__(self, fam: Family) -> None:
        self.fam = fam
        self.exposed = escape_metric_name(fam.exposed)
        self.head = _head(self.exposed, fam.kind, fam.help)
        self.head_bytes = self.head.encode()
        self.at = len(fam.all_labels) - len(fam.labels)
        self.group, self.split = fam.group, fam.split
        if fam.split:
            self.shape = _Shape(fam.all_labels[:self.at] + fam.all_labels[self.at + 1:])
        else:
            self.shape = _Shape(fam.all_labels)
        node_read = fam.read.fn if isinstance(fam.read, PerNode) else None
        self.scalar = node_read if isinstance(node_read, Scalar) else None
        """A scalar family's reader: its ``get`` only is called (``_scalar_blocks``)."""
        self.source = node_read.kind if isinstance(node_read, OnSource) else ""
        """The source an ``OnSource`` reader reads: only the nodes it is ok on are read."""
        self.node_read = node_read.fn if isinstance(node_read, OnSource) else node_read
        """A per-node family's node reader: read node by node (see ``_over``); an
        ``OnSource`` reader's own function, which does not check its source."""
        self._split_heads: dict[str, tuple[str, bytes, str]] = {}
        self._known: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {}
        """Cached sample-line prefixes: pair/node/host label values (none for a pair
        family) -> the reader's own label values -> ``name{labels} ``."""
        self._kept = 0

    def split_head(self, key: str) -> tuple[str, bytes, str]:
        """(sample name, HELP/TYPE lines, opt-in group or "") of a split family's value
        ``key``, worked out once: a pair-tick meets ~90 keys (MySQL's status values)."""
        got = self._split_heads.get(key)
        if got is None:
            name = escape_metric_name(f"{self.fam.name}_{key}" + (
                "_total" if self.fam.kind == "counter" else ""))
            help_ = self.fam.help.replace("<name>", key, 1)
            got = self._split_heads[key] = (name, _head(name, self.fam.kind, help_).encode(),
                                            self.fam.key_group(key))
        return got

    def _prefix(self, base: tuple[str, ...], labels: tuple[str, ...]) -> str:
        """The text of a sample line before its value (label values ``base`` then
        ``labels``), made and cached."""
        if self._kept >= PREFIXES_KEPT:
            self._known, self._kept = {}, 0
        full = (*base, *labels)
        if self.fam.split:
            at = self.at
            text = self.shape.prefix(self.split_head(full[at])[0], full[:at] + full[at + 1:])
        else:
            text = self.shape.prefix(self.exposed, full)
        known = self._known.get(base)
        if known is None:
            known = self._known[base] = {}
        known[labels] = text
        self._kept += 1
        return text

    def _over(self, state: PairState, nodes: list[tuple[tuple[str, str, str], NodeTick]],
              ok: dict[str, list[tuple[tuple[str, str, str], NodeTick]]] | None = None
              ) -> tuple[Callable[[Any], Iterable[Sample]], Sequence[tuple[tuple[str, ...], Any]]]:
        """(reader, [(label values before the reader's, what it reads)]): each node for a
        per-node family (those its source is ok on, for an ``OnSource`` reader: from
        ``ok``, ``_ok_nodes``, or worked out here), the pair for a pair family; render_pair
        works the same out inline (a call a family fewer).

        A per-node family is read node by node, its cached text keyed by the node and
        the reader's own label values: through the pair reader (samples.PerNode) every
        sample would build its whole label tuple only to look its text up. The loops
        that use this are plain loops rather than helpers and comprehensions: a pair has
        ~120 families, most with one sample a node, so calls per family, not per sample,
        were most of render_pair (bench/bench_render.py: ~600 µs a pair-tick before,
        ~510 after these two, ~400 with the value texts of ``_value_text``)."""
        if self.node_read is None:
            return self.fam.read, [((), state)]
        if not self.source:
            return self.node_read, nodes
        if ok is None:
            ok = _ok_nodes(nodes, (self.source,))
        return self.node_read, ok[self.source]

    def lines(self, state: PairState, nodes: list[tuple[tuple[str, str, str], NodeTick]]
              ) -> list[str]:
        """The sample lines of a scrape-time family (NaN: no sample): the ages, new at
        every scrape (their texts are not kept)."""
        read, over = self._over(state, nodes)
        make, known_by, sign = self._prefix, self._known, math.copysign
        lines: list[str] = []
        for base, of in over:
            known = known_by.get(base, _NONE_KNOWN)
            for labels, v in read(of):
                if v == v:
                    value = floatToGoString(v) if v else _ZERO[sign(1.0, v)]
                    lines.append(f"{known.get(labels) or make(base, labels)}{value}\n")
        return lines

    def block(self, read: Callable[[Any], Iterable[Sample]],
              over: Sequence[tuple[tuple[str, ...], Any]], out: Blocks) -> None:
        """The block of a family that is not split (NaN: no sample) into ``out``: its
        samples read by ``read`` from each of ``over`` (``_over``)."""
        make, known_by, sign = self._prefix, self._known, math.copysign
        texts, go = _TEXTS, _value_text
        lines: list[str] = []
        for base, of in over:
            known = known_by.get(base, _NONE_KNOWN)
            for labels, v in read(of):
                if v == v:
                    value = (texts.get(v) or go(v)) if v else _ZERO[sign(1.0, v)]
                    lines.append(f"{known.get(labels) or make(base, labels)}{value}\n")
        if lines:
            out[self.exposed] = (self.head_bytes, "".join(lines).encode())

    def scalar_body(self, made: list[tuple[tuple[str, str, str], str]], out: Blocks,
                    kept: dict[Any, Any]) -> None:
        """A scalar family's block of ``made`` (``_scalar_blocks``) into ``out``, made and
        kept in ``kept`` with what it was made of."""
        known_by, make = self._known, self._prefix
        body = "".join([f"{known_by.get(base, _NONE_KNOWN).get(()) or make(base, ())}{text}\n"
                        for base, text in made])
        block = out[self.exposed] = (self.head_bytes, body.encode())
        kept[self] = (made, block)

    def split_blocks(self, read: Callable[[Any], Iterable[Sample]],
                     over: Sequence[tuple[tuple[str, ...], Any]], groups: frozenset[str],
                     out: Blocks) -> None:
        """A split family's blocks into ``out`` (NaN: a sample, as prometheus_client), one
        for each value of its first own label that ``groups`` export."""
        make, known_by, sign = self._prefix, self._known, math.copysign
        texts, go, heads, head_of = _TEXTS, _value_text, self._split_heads, self.split_head
        # key -> its sample name, HELP/TYPE and lines; None: its group is not exported
        by_key: dict[str, tuple[str, bytes, list[str]] | None] = {}
        for base, of in over:
            known = known_by.get(base, _NONE_KNOWN)
            for labels, v in read(of):
                key = labels[0]  # the first of the family's own labels
                got = by_key.get(key, _UNSEEN)
                if got is _UNSEEN:
                    name, head, g = heads.get(key) or head_of(key)
                    got = by_key[key] = None if g and g not in groups else (name, head, [])
                if got is not None:
                    value = (texts.get(v) or go(v)) if v else _ZERO[sign(1.0, v)]
                    got[2].append(f"{known.get(labels) or make(base, labels)}{value}\n")
        # In the readers' order: exposition sorts a split family's names over the pairs.
        for got in by_key.values():
            if got is not None:
                out[got[0]] = (got[1], "".join(got[2]).encode())


_UNSEEN: Any = object()
"""A split family's key not met yet this pair-tick (``by_key``'s None: not exported)."""
_NONE_KNOWN: dict[tuple[str, ...], str] = {}
"""Looked up (never written) for a node no prefix is cached for yet."""
_FORMATS = [_Format(f) for f in FAMILIES if not f.live]
_STATIC = {f.exposed for f in FAMILIES}
_SCALARS = {kind: [f for f in _FORMATS if f.scalar is not None and f.scalar.kind == kind]
            for kind in sorted({f.scalar.kind for f in _FORMATS if f.scalar is not None})}
"""The scalar families by the source they read (``_scalar_blocks``)."""
_OTHERS = [f for f in _FORMATS if f.scalar is None]
_SOURCES = sorted({f.source for f in _FORMATS if f.source} | set(_SCALARS))


def _ok_nodes(at: list[tuple[tuple[str, str, str], NodeTick]], kinds: Iterable[str]
              ) -> dict[str, list[tuple[tuple[str, str, str], NodeTick]]]:
    """The nodes (with their label values) each source of ``kinds`` is ok on."""
    return {kind: [(base, n) for base, n in at if getattr(n, kind).status.state is SourceState.OK]
            for kind in kinds}


def _scalar_blocks(formats: list[_Format], ok: list[tuple[tuple[str, str, str], Any]],
                   groups: frozenset[str], out: Blocks, kept: dict[Any, Any]) -> None:
    """The blocks of the scalar families of one source (one unlabelled value a node,
    ``samples.Scalar``) from the samples of the nodes that source is ok on (``ok``:
    checked once for all of them), into ``out``: one loop over the families rather
    than a call each (52 of them: render_pair ~255 -> ~245 µs a pair-tick, thread CPU).

    Most of them hold the same value tick after tick (load, memory, variables, idle
    counters: ~60 % of the pair's blocks are the same bytes as at its last tick): the
    block is kept in the pair's ``kept`` with what it was made of (each node's label
    values and value text) and used again while that is the same. The value texts
    are compared, not the values: 0.0 and -0.0 are equal numbers but not the same
    text."""
    texts, sign = _TEXTS, math.copysign
    for f in formats:
        if f.group and f.group not in groups:
            continue
        get = f.scalar.get  # type: ignore[union-attr]
        made: list[tuple[tuple[str, str, str], str]] = []
        for base, sample in ok:
            v = get(sample)
            if v is not None:
                v = float(v)
                if v == v:
                    made.append((base, (texts.get(v) or _value_text(v)) if v
                                 else _ZERO[sign(1.0, v)]))
        if made:
            got = kept.get(f)
            if got is not None and got[0] == made:
                out[f.exposed] = got[1]
            else:
                f.scalar_body(made, out, kept)


def groups_of(opt_in: Sequence[str]) -> frozenset[str]:
    """The opt-in groups a fleet file's ``metrics.opt_in`` names ("all": every one)."""
    return frozenset(OPT_IN) if "all" in opt_in else frozenset(opt_in)


def render_pair(state: PairState, groups: frozenset[str] = _NO_GROUPS) -> Blocks:
    """One pair's per-tick families with the opt-in ``groups``, as the text format (once
    per tick, so a scrape only joins text)."""
    out: Blocks = {}
    at = nodes(state)  # both nodes' pair/node/host label values, for every family
    ok = _ok_nodes(at, _SOURCES)  # the nodes the OnSource families read
    kept, pair = state.kept, [((), state)]
    for kind, formats in _SCALARS.items():
        _scalar_blocks(formats, [(base, getattr(n, kind)) for base, n in ok[kind]], groups,
                       out, kept)
    # One call a family (79 besides the scalar ones, most with a sample or two a node):
    # what each reads is worked out here, not by three methods (render, lines, _over) a
    # family; with mysql_other's labels kept, ~258 -> ~247 µs a pair-tick
    # (bench_render.py's ticks, thread CPU, best of 7, the two alternated twice).
    read: Callable[[Any], Iterable[Sample]]
    over: Sequence[tuple[tuple[str, ...], Any]]
    for f in _OTHERS:
        if f.group and f.group not in groups:
            continue
        if f.node_read is None:
            read, over = f.fam.read, pair
        elif f.source:
            read = f.node_read
            over = ok[f.source]
            if not over:
                continue
        else:
            read, over = f.node_read, at
        if f.split:
            f.split_blocks(read, over, groups, out)
        else:
            f.block(read, over, out)
    return out


def exposition(states: Sequence[PairState]) -> bytes:
    """The /metrics page: every pair's per-tick blocks (``state.rendered()``: formatted by
    ``render_pair`` at the first scrape after each of its ticks) merged family by family
    under one HELP/TYPE, then the scrape-time families and replmon's own."""
    heads: dict[str, bytes] = {}
    bodies: dict[str, list[bytes]] = {}  # metric name -> its sample lines of every pair
    for s in states:
        for name, (head, body) in s.rendered().items():  # a new dict each formatting
            got = bodies.get(name)
            if got is None:
                heads[name], bodies[name] = head, [body]
            else:
                got.append(body)
    parts: list[bytes] = []
    for f in _FORMATS:
        fam = f.fam
        if fam.split:  # its families, whatever names each pair had, in one order
            prefix = fam.name + "_"
            names = sorted(k for k in bodies if k.startswith(prefix) and k not in _STATIC)
        else:
            names = [f.exposed] if f.exposed in bodies else []
        for name in names:
            parts.append(heads[name])
            parts.extend(bodies[name])
    live: list[str] = []
    _live(states, live)
    parts.append("".join(live).encode())
    return b"".join(parts)


_LIVE = [_Format(f) for f in FAMILIES if f.live]
_TICK_DURATION = _Format(TICK_DURATION)
_BUILD_INFO = _Format(BUILD_INFO)


_HISTOGRAMS: weakref.WeakKeyDictionary[PairState, tuple[int, str]] = (
    weakref.WeakKeyDictionary())
"""A pair's tick duration histogram text, with the observation count it was made at."""


def _histogram(s: PairState) -> str:
    """The lines of a pair's tick duration histogram, kept until its next observation.

    It changes once a tick, and a scrape (every few seconds, from each Prometheus) wrote
    its 14 lines anew (``_live``: ~6 µs a pair and scrape less, bench/bench_render.py)."""
    d = s.durations
    got = _HISTOGRAMS.get(s)
    if got is not None and got[0] == d.n:
        return got[1]
    name, pair = _TICK_DURATION.exposed, _esc(s.pair)
    buckets = d.buckets()
    lines = [f'{name}_bucket{{le="{le}",pair="{pair}"}} {float(c)!r}\n' for le, c in buckets]
    lines.append(f'{name}_count{{pair="{pair}"}} {float(buckets[-1][1])!r}\n')
    lines.append(f'{name}_sum{{pair="{pair}"}} {floatToGoString(d.total)}\n')
    text = "".join(lines)
    _HISTOGRAMS[s] = (d.n, text)
    return text


def _live(states: Sequence[PairState], parts: list[str]) -> None:
    """The scrape-time families (ages), replmon's tick duration histogram and its build
    info, as prometheus_client writes them (every pair's in one family)."""
    at = [nodes(s) for s in states]
    for f in _LIVE:
        lines = [line for s, n in zip(states, at, strict=True)
                 for line in f.lines(s, n)]
        if lines:
            parts.append(f.head)
            parts.extend(lines)
    parts.append(_TICK_DURATION.head)
    parts.extend(_histogram(s) for s in states if s.ticks_total)
    parts.append(_BUILD_INFO.head)
    parts.append(_BUILD_INFO.shape.line(_BUILD_INFO.exposed, [__version__], 1.0))


def _own(states: Sequence[PairState]) -> Iterator[Metric]:
    h = HistogramMetricFamily(TICK_DURATION.name, TICK_DURATION.help, labels=["pair"])
    for s in states:
        if s.ticks_total:
            h.add_metric([s.pair], s.durations.buckets(), s.durations.total)
    yield h
    b = GaugeMetricFamily(BUILD_INFO.name, BUILD_INFO.help, labels=["version"])
    b.add_metric([__version__], 1.0)
    yield b


SERIES_PER_PAIR = {"default": 291, "all": 399}
"""Series of one pair on /metrics after sample_sessions/healthy_steady_load.rmrec (MariaDB
10.11 and Redis on the lab, no finding open at its end), its 21 scrape-time ones
included; tests/unit/test_fleet.py keeps these current."""
SERIES_PER_GROUP = {"mysql_commands": 22, "mysql_handlers": 18, "innodb": 36,
                    "netdev_errors": 32}
"""What each opt-in group adds to that pair."""


def metrics_doc() -> str:
    """docs/metrics.md."""
    head = """# Metrics of `replmon serve`

Generated by `python -m replmon.fleet.metrics > docs/metrics.md` from the table in
`replmon/fleet/families.py`; edit the table, not this file.

Every per-node series carries `pair` (the fleet file's pair name), `node` (`primary` or
`replica`: the node's role now, as the servers say it, so it changes at a switchover) and
`host` (the node's name, which does not). `replmon_node_role_info` says both for each
node, with the role the fleet file gave it: `replmon_node_role_info{role="primary"}`
names a pair's primary, and `* on(pair, host) group_left(given_role)` joins it onto any
per-node series. Labels hold names and states only: a finding's
title, numbers, cause and next step are on `/findings.json`. Counters are counters (use
`rate()`); the `like` column names the exporter metric of the same quantity and shape
(mysqld_exporter, redis_exporter, node_exporter, drbd-reactor), so a dashboard or a query
written for it works with the `replmon_` prefix and the extra labels. A family with no
sample (no DRBD on the pair, a source that is down) is left out of the page.

## Default and opt-in

Every pair exports the families a pair's alerts and dashboard need: the findings,
replmon's own ticks and sources (every family `replmon rules` uses is here), replication
(MySQL channels, Redis links and offsets, DRBD), the MySQL status values and variables
replmon reads except InnoDB's, Redis, and the host's CPU, load, memory, paging, disks and
network bytes. The families below are opt-in, as mysqld_exporter's collectors are flags:
they are wide (one series per statement type or handler), or detail a dashboard for the
one server under study wants and a fleet of 200 pairs pays for on every scrape. Switch
them on for every pair in the fleet file:

```toml
metrics = { opt_in = ["innodb", "mysql_commands"] }   # or ["all"]
```

| group | adds | series per pair |
|---|---|---:|
"""
    groups = "".join(f"| `{g}` | {what} | {SERIES_PER_GROUP[g]} |\n" for g, what in OPT_IN.items())
    counts = f"""
A pair on MariaDB 10.11 with Redis and local host metrics (after
`sample_sessions/healthy_steady_load.rmrec`, no finding open) has
{SERIES_PER_PAIR["default"]} series on /metrics by default and {SERIES_PER_PAIR["all"]} with
every group (21 of them are the scrape-time ages and the tick duration histogram): about
{SERIES_PER_PAIR["default"] * 200:,} samples per scrape at 200 pairs instead of \
{SERIES_PER_PAIR["all"] * 200:,}.
Each open finding adds one series, a pair with DRBD its resources' series, a MySQL
replica with several channels its channels', a pair whose primary has changed
`replmon_pair_role_change_timestamp_seconds`.

## Families

| metric | type | labels | help | like | group |
|---|---|---|---|---|---|
"""
    rows = []
    for fam in [*FAMILIES, TICK_DURATION, BUILD_INFO]:
        labels = ", ".join(f"`{x}`" for x in fam.all_labels)
        group = f"`{fam.group}`" if fam.group else "default"
        if fam.split_groups:
            group += "; " + ", ".join(f"`{p}*`: `{g}`" for p, g in fam.split_groups)
        rows.append(f"| `{fam.exposed}` | {fam.kind} | {labels} | {fam.help} | "
                    f"{f'`{fam.like}`' if fam.like else 'replmon'} | {group} |")
    return head + groups + counts + "\n".join(rows) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(metrics_doc())
