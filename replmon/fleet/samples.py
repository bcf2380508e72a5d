"""How each metric family's samples are read from a pair's state (each row of the table
in fleet/families.py names one of these readers).

A pair reader (``PairReader``) yields (label values, value) for one pair; a node reader
(``NodeReader``) does so for one node, and ``per_node`` turns it into a pair reader that
puts pair/node/host before its labels. A source's values are read only while the source
is ok, and a value it does not know (None) gives no sample: a series is absent, never 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from replmon.fleet.state import PairState, incident_name
from replmon.model.base import SourceState
from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample
from replmon.model.roles import LAYERS
from replmon.model.tick import SOURCE_KINDS, NodeTick

USER_HZ = 100
"""/proc/stat ticks per second on every mainstream Linux build."""

Sample = tuple[tuple[str, ...], float]
"""(label values after pair/node/host or the family's own labels, value)."""
PairReader = Callable[[PairState], Iterable[Sample]]
NodeReader = Callable[[NodeTick], Iterable[Sample]]


def nodes(s: PairState) -> list[tuple[tuple[str, str, str], NodeTick]]:
    """(pair/node/host label values, node) of the pair's last tick: none before it."""
    t = s.tick
    if t is None:
        return []
    return [((s.pair, n.role, n.name), n) for n in (t.primary, t.replica)]


class PerNode:
    """A node reader as a pair reader: its label values after pair/node/host.

    It keeps the node reader (``fn``): metrics.render_pair reads each node once per
    family through it and keys its cached sample text by node and the reader's own
    label values, never building the whole label tuple of every sample."""

    __slots__ = ("fn",)

    def __init__(self, fn: NodeReader) -> None:
        self.fn = fn

    def __call__(self, s: PairState) -> Iterator[Sample]:
        for base, n in nodes(s):
            for labels, v in self.fn(n):
                yield (*base, *labels), v


def per_node(fn: NodeReader) -> PerNode:
    """A node reader as a pair reader (``PerNode``)."""
    return PerNode(fn)


def _ok(n: NodeTick, kind: str) -> bool:
    return bool(getattr(n, kind).status.state is SourceState.OK)


class Scalar:
    """One unlabelled value of a source's sample (only when the source is ok and the
    value known), as a node reader. metrics.render_pair does not call it: it reads the
    value with ``get`` from the sample of each node whose ``kind`` source is ok, checked
    once for all of a pair's scalar families (52 of them)."""

    __slots__ = ("get", "kind")

    def __init__(self, kind: str, get: Callable[[Any], float | int | bool | None]) -> None:
        self.kind = kind
        self.get = get

    def __call__(self, n: NodeTick) -> tuple[Sample, ...]:
        sample = getattr(n, self.kind)
        if sample.status.state is SourceState.OK:
            v = self.get(sample)
            if v is not None:
                return (((), float(v)),)
        return ()


class OnSource:
    """A node reader of one source's sample (``kind``), read only while that source is
    ok: its function ``fn`` does not check. metrics.render_pair checks each node's
    sources once a pair-tick, calls ``fn`` for the ok nodes only and skips a family none
    is ok for: ~65 ``_ok`` calls a pair-tick fewer, and DRBD's 18 families cost nothing
    on a pair without DRBD (they were ~25 µs of its ~390, bench/bench_render.py)."""

    __slots__ = ("fn", "kind")

    def __init__(self, kind: str, fn: NodeReader) -> None:
        self.kind = kind
        self.fn = fn

    def __call__(self, n: NodeTick) -> Iterable[Sample]:
        if getattr(n, self.kind).status.state is SourceState.OK:
            return self.fn(n)
        return ()


def on_source(kind: str) -> Callable[[NodeReader], OnSource]:
    """A node reader of the ``kind`` source, read only while it is ok (``OnSource``)."""
    def wrap(fn: NodeReader) -> OnSource:
        return OnSource(kind, fn)
    return wrap


def scalar(kind: str, get: Callable[[Any], float | int | bool | None]) -> Scalar:
    """One unlabelled value of a source's sample (``Scalar``)."""
    return Scalar(kind, get)


# --- sources ---------------------------------------------------------------------------

def source_state(n: NodeTick) -> Iterator[Sample]:
    for kind in SOURCE_KINDS:
        yield (kind, getattr(n, kind).status.state.value), 1.0


def source_up(n: NodeTick) -> Iterator[Sample]:
    for kind in SOURCE_KINDS:
        st = getattr(n, kind).status.state
        if st is not SourceState.ABSENT:  # switched off: no up series to alert on
            yield (kind,), float(st is SourceState.OK)


def source_age(n: NodeTick) -> Iterator[Sample]:
    now = time.time()
    for kind in SOURCE_KINDS:
        sample = getattr(n, kind)
        if sample.status.state is not SourceState.ABSENT and sample.wall:
            yield (kind,), max(0.0, now - sample.wall)


def source_duration(n: NodeTick) -> Iterator[Sample]:
    for kind in SOURCE_KINDS:
        sample = getattr(n, kind)
        if sample.status.state is not SourceState.ABSENT and sample.elapsed_ms is not None:
            yield (kind,), sample.elapsed_ms / 1000


def source_rtt(n: NodeTick) -> Iterator[Sample]:
    for kind in ("mysql", "redis"):
        sample = getattr(n, kind)
        if _ok(n, kind) and sample.rtt_ms is not None:
            yield (kind,), sample.rtt_ms / 1000


# --- MySQL -----------------------------------------------------------------------------

def mysql_labelled(prefix: str) -> NodeReader:
    """The status counters named ``prefix``*, by the rest of the name in lower case."""
    def fn(n: NodeTick) -> list[Sample]:
        at = len(prefix)
        return [((k[at:].lower(),), float(v)) for k, v in n.mysql.counters.items()
                if k.startswith(prefix)]
    return OnSource("mysql", fn)


def mysql_other(skip: tuple[str, ...]) -> NodeReader:
    """The other status values (counters and gauges) by lower-case name: the counters
    named with a prefix of ``skip`` have families of their own."""
    # Lists rather than a generator: a hundred-odd values a node on every tick. Each
    # status name's label values are worked out once (the names a server has are a
    # few hundred): () for a counter left to its own family.
    counter_labels: dict[str, tuple[str, ...]] = {}
    gauge_labels: dict[str, tuple[str, ...]] = {}

    def fn(n: NodeTick) -> list[Sample]:
        m = n.mysql
        out: list[Sample] = []
        for k, v in m.counters.items():
            labels = counter_labels.get(k)
            if labels is None:
                labels = counter_labels[k] = () if k.startswith(skip) else (k.lower(),)
            if labels:
                out.append((labels, float(v)))
        for k, g in m.gauges.items():
            labels = gauge_labels.get(k)
            if labels is None:
                labels = gauge_labels[k] = (k.lower(),)
            out.append((labels, float(g)))
        return out
    return OnSource("mysql", fn)


@on_source("mysql")
def mysql_rows(n: NodeTick) -> Iterator[Sample]:
    m = n.mysql
    for op, v in (("inserted", m.rows_inserted), ("updated", m.rows_updated),
                  ("deleted", m.rows_deleted), ("read", m.rows_read)):
        if v is not None:
            yield (op, m.row_counters or ""), float(v)


def channels(get: Callable[[Any], float | int | bool | None]) -> NodeReader:
    """A value of each replication channel, labelled with the channel (MySQL) or the
    connection (MariaDB) and its source host."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        mariadb = n.mysql.flavour == "mariadb"
        for ch in n.mysql.replication:
            v = get(ch)
            if v is not None:  # MariaDB names connections, MySQL channels
                name = ch.name or ""
                yield ("" if mariadb else name, name if mariadb else "",
                       ch.source_host or ""), float(v)
    return OnSource("mysql", fn)


_YES = ("ON", "1", "YES", "TRUE")


def variable(name: str, *, flag: bool) -> NodeReader:
    """A global variable as a number (``flag``: 1 for ON, 0 otherwise)."""
    def get(m: MysqlSample) -> float | None:
        v = m.variables.get(name)
        if v is None:
            return None
        if flag:
            return float(str(v).upper() in _YES)
        try:
            return float(v)
        except ValueError:
            return None
    return scalar("mysql", get)


@on_source("mysql")
def mysql_info(n: NodeTick) -> Iterator[Sample]:
    if n.mysql.version:
        yield (n.mysql.version, n.mysql.flavour or ""), 1.0


# --- Redis -----------------------------------------------------------------------------

def client_errors(kind: str) -> NodeReader:
    """Errors raised to clients since start, by kind: Redis INFO errorstats' prefixes
    ("NOREPLICAS"), MySQL 8.0+'s error numbers ("1290")."""
    def fn(n: NodeTick) -> list[Sample]:
        counts = n.redis.error_counts if kind == "redis" else n.mysql.error_counts
        return [((k,), float(v)) for k, v in counts.items()]
    return OnSource(kind, fn)


def redis_counter(field: str) -> NodeReader:
    return scalar("redis", lambda r: r.counters.get(field))


def redis_replicas(get: Callable[[Any], float | int | None]) -> NodeReader:
    """A value of each replica a master lists (slaveN), labelled with its address."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        for rep in n.redis.replicas:
            v = get(rep)
            if v is not None:
                yield (rep.ip or "", str(rep.port or ""), rep.state or ""), float(v)
    return OnSource("redis", fn)


def redis_master(get: Callable[[Any], float | int | bool | None]) -> NodeReader:
    """A replica's value, labelled with the master it follows (as redis_exporter)."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        if n.redis.master_host is not None:
            v = get(n.redis)
            if v is not None:
                yield (n.redis.master_host, str(n.redis.master_port or "")), float(v)
    return OnSource("redis", fn)


def redis_lag_bytes(n: NodeTick) -> Iterator[Sample]:
    for addr, v in n.rates.redis.replica_lag_bytes.items():
        if v is not None:
            yield (addr,), float(v)


@on_source("redis")
def redis_info(n: NodeTick) -> Iterator[Sample]:
    r = n.redis
    yield (str(r.role or ""), r.version or "", r.maxmemory_policy or "", r.server), 1.0


# --- DRBD: drbd-reactor's shapes -------------------------------------------------------

def _resources(n: NodeTick) -> Any:
    """The DRBD resources (the readers below are ``OnSource("drbd")``: read while ok)."""
    return n.drbd.resources


@on_source("drbd")
def drbd_role(n: NodeTick) -> Iterator[Sample]:
    for r in _resources(n):
        if r.role:
            yield (r.name, r.role), 1.0


@on_source("drbd")
def drbd_suspended(n: NodeTick) -> Iterator[Sample]:
    for r in _resources(n):
        if r.suspended is not None:
            yield (r.name,), float(bool(r.suspended))


def _label(v: object) -> str:
    return "" if v is None else str(v)


def _emit(base: tuple[str, ...], v: Any, state: bool) -> Iterator[Sample]:
    """A number as itself, or a state (a string) as its label with the value 1."""
    if state:
        if v:
            yield (*base, str(v)), 1.0
    elif v is not None:
        yield base, float(v)


def drbd_conn(get: Callable[[Any], Any], state: bool = False) -> NodeReader:
    """A value (or with ``state``, a state) of each resource's connection to a peer."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        for r in _resources(n):
            for c in r.connections:
                yield from _emit((r.name, c.peer or "", _label(c.peer_node_id)), get(c), state)
    return OnSource("drbd", fn)


def drbd_dev(get: Callable[[Any], Any], state: bool = False) -> NodeReader:
    """A value (or state) of each resource's local device (volume)."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        for r in _resources(n):
            for d in r.devices:
                yield from _emit((r.name, _label(d.volume), _label(d.minor)), get(d), state)
    return OnSource("drbd", fn)


def drbd_peer(get: Callable[[Any], Any], state: bool = False) -> NodeReader:
    """A value (or state) of each resource's peer device (a volume as a peer has it)."""
    def fn(n: NodeTick) -> Iterator[Sample]:
        for r in _resources(n):
            for c in r.connections:
                for p in c.peer_devices:
                    base = (r.name, c.peer or "", _label(c.peer_node_id), _label(p.volume))
                    yield from _emit(base, get(p), state)
    return OnSource("drbd", fn)


def kib(v: int | None) -> float | None:
    return None if v is None else v * 1024.0


# --- host ------------------------------------------------------------------------------

_CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@on_source("host")
def cpu(n: NodeTick) -> Iterator[Sample]:
    c = n.host.cpu
    if c is not None:
        for mode in _CPU_MODES:
            yield (mode,), getattr(c, mode) / USER_HZ


def mem(field: str) -> NodeReader:
    return scalar("host", lambda h: None if h.mem is None else getattr(h.mem, field))


def vm(field: str) -> NodeReader:
    return scalar("host", lambda h: None if h.vm is None else getattr(h.vm, field))


def disk(get: Callable[[Any], float | int | None]) -> NodeReader:
    def fn(n: NodeTick) -> Iterator[Sample]:
        for name, d in n.host.disks.items():
            v = get(d)
            if v is not None:
                yield (name,), float(v)
    return OnSource("host", fn)


def nic(get: Callable[[Any], float | int | None]) -> NodeReader:
    def fn(n: NodeTick) -> Iterator[Sample]:
        for name, c in n.host.nics.items():
            v = get(c)
            if v is not None:
                yield (name,), float(v)
    return OnSource("host", fn)


# --- roles: which node is the primary now (replmon.roles) ------------------------------

def node_roles(s: PairState) -> Iterator[Sample]:
    """Each node (pair/node/host) with its role now in the pair, the role it was given
    (before roles were observed, in a recording: the given one), and its role in each
    service that has a primary ("" for one that has none: not there, or never read)."""
    t = s.tick
    if t is None:
        return
    roles = None if t.roles is None else t.roles.resolved()
    have = {lr.layer for lr in roles.layers if lr.flipped is not None} if roles else set()
    for n in t.nodes:
        yield ((s.pair, n.role, n.name, n.role, n.given_role,
                *(t.service_role(n, svc) if svc in have else "" for svc in LAYERS)), 1.0)


def role_change_time(s: PairState) -> Iterator[Sample]:
    """When the primary last changed (no sample while it never has this session)."""
    roles = None if s.tick is None else s.tick.roles
    if roles is not None and roles.since is not None:
        yield (s.pair,), roles.since


def role_layers_at_odds(s: PairState) -> Iterator[Sample]:
    """How many layers are at odds with the pair's primary (no sample without roles)."""
    roles = None if s.tick is None else s.tick.roles
    if roles is not None:
        yield (s.pair,), float(len(roles.at_odds()))


# --- pair readers: the findings and replmon itself -------------------------------------

def findings(s: PairState) -> Iterator[Sample]:
    if not s.findings:
        return
    roles = s.incident_roles()  # once for all of them
    for f in s.findings:
        yield (s.pair, f.node, f.check, f.key, f.severity.label, *s.incident_of(f, roles)), 1.0


def incidents_open(s: PairState) -> Iterator[Sample]:
    for inc in s.incidents.open:
        yield (s.pair, incident_name(inc), inc.root.check, inc.root.node,
               inc.severity.label), 1.0


def findings_open(s: PairState) -> Iterator[Sample]:
    for sev in (Severity.CRITICAL, Severity.WARNING, Severity.INFO):
        yield (s.pair, sev.label), float(sum(f.severity is sev for f in s.findings))


def flaps(s: PairState) -> Iterator[Sample]:
    for f in s.findings:
        if f.flaps:
            yield (s.pair, f.node, f.check, f.key), float(f.flaps)


def pair_value(get: Callable[[PairState], float | int | None]) -> PairReader:
    def fn(s: PairState) -> Iterator[Sample]:
        v = get(s)
        if v is not None:
            yield (s.pair,), float(v)
    return fn


def true_lag(get: Callable[[Any], float | None]) -> PairReader:
    """The replica's true lag (``Tick.lag``): pair/node/host, channel, source; no series
    while no source knows it."""
    def read(s: PairState) -> Iterator[Sample]:
        t = s.tick
        lag = t.lag if t is not None else None
        if t is None or lag is None or lag.source is None or (v := get(lag)) is None:
            return
        r = t.replica
        yield (s.pair, r.role, r.name, lag.channel, lag.source), float(v)
    return read


def redis_lag_estimate(s: PairState) -> Iterator[Sample]:
    """The Redis replica's offset lag as seconds at the primary's write rate (an estimate;
    no series while the primary writes nothing and bytes are missing)."""
    t = s.tick
    est = t.redis_lag if t is not None else None
    if t is not None and est is not None and est.seconds is not None:
        yield (s.pair, t.replica.role, t.replica.name), est.seconds


@on_source("mysql")
def heartbeat_stored(n: NodeTick) -> Iterator[Sample]:
    """pt-heartbeat's rows as this replica has them: server_id, ts (epoch seconds)."""
    f = n.mysql.lag_facts
    if f is not None:
        for sid, ts in f.heartbeat.items():
            yield (str(sid),), ts


@on_source("mysql")
def heartbeat_now(n: NodeTick) -> Iterator[Sample]:
    """The replica's clock when it read the heartbeat (epoch seconds)."""
    f = n.mysql.lag_facts
    if f is not None and f.heartbeat and f.server_time is not None:
        yield (), f.server_time
