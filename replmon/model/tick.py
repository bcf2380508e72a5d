"""The Tick: the one stream every reader consumes.

A Tick pairs the primary's and the replica's samples taken in the same
interval. Each node carries its raw samples (counters stay counters) and the
rates derived from its previous samples, so readers need no state of their own.
``derive_node_rates`` is pure: replay recomputes exactly what the live
collector computed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, Literal

import msgspec

from replmon.model.base import SourceState, SourceStatus, Struct, struct
from replmon.model.drbd import DrbdRates, DrbdSample, derive_drbd_rates
from replmon.model.host import HostRates, HostSample
from replmon.model.host_rates import derive_host_rates
from replmon.model.lag import MeasuredLag, RedisLagEstimate
from replmon.model.mysql import MysqlSample
from replmon.model.mysql_rates import MysqlRates, derive_mysql_rates
from replmon.model.redis import RedisRates, RedisSample, derive_redis_rates
from replmon.model.roles import Roles
from replmon.model.sentinel import SentinelSample

Role = Literal["primary", "replica"]
SOURCE_KINDS = ("host", "drbd", "mysql", "redis")


@struct
class NodeRates(Struct):
    """Per-second rates for one node, from its previous and current samples."""

    host: HostRates = field(default_factory=HostRates)
    drbd: DrbdRates = field(default_factory=DrbdRates)
    mysql: MysqlRates = field(default_factory=MysqlRates)
    redis: RedisRates = field(default_factory=RedisRates)


NO_RATES = NodeRates()
"""No rates: a tick's NodeTicks start with it. One frozen instance for all, as
validating each recorded tick would otherwise build two of these only to replace them."""


@struct
class NodeTick(Struct):
    """One node's share of a tick. Every source is always present: one that is
    switched off for this node has state "absent" and says so."""

    role: Role
    """The node's role now in the pair: what the servers say (``Tick.roles``), not always
    the one the command line gave it. A service may have its own primary
    (``Tick.oriented``, ``Tick.service_role``)."""
    name: str
    """The node's name as the user gave it (e.g. db163)."""
    given: Role | None = None
    """The role the command line or config gave this node (None in recordings made
    before roles were observed: then ``role``). Rates and history follow it: it never
    changes for a node."""
    host: HostSample = field(default_factory=HostSample)
    drbd: DrbdSample = field(default_factory=DrbdSample)
    mysql: MysqlSample = field(default_factory=MysqlSample)
    redis: RedisSample = field(default_factory=RedisSample)
    rates: NodeRates = field(default_factory=lambda: NO_RATES)
    """This node's rates (none until a RateTracker attaches them: a recorded tick
    stores its samples, and a reader derives the rates)."""

    @property
    def given_role(self) -> Role:
        """The node's identity: the role it was given (``given``; ``role`` in a recording
        made before roles were observed)."""
        return self.given or self.role

    def statuses(self) -> dict[str, SourceStatus]:
        """Source kind -> its status, for compact displays."""
        return {
            "host": self.host.status,
            "drbd": self.drbd.status,
            "mysql": self.mysql.status,
            "redis": self.redis.status,
        }


@struct
class Tick(Struct):
    """Both nodes' samples for tick number ``seq``."""

    seq: int
    """0 for the first tick; increases by one per emitted tick (skipped slots do not count)."""
    interval: float
    """Configured sampling interval, seconds."""
    wall: float
    """Epoch seconds at which sampling of this tick started."""
    mono: float
    """time.monotonic() at which sampling of this tick started."""
    due_mono: float
    """When this tick was due: t0 + slot x interval. ``mono - due_mono`` is its start lag."""
    slot: int
    """Schedule slot this tick was due in; a gap from the previous tick's slot means
    missed slots."""
    late: bool = False
    """Not on schedule: slots were missed before it, or sampling started more than
    collector.LATE_FRACTION of the interval after it was due."""
    missed: int = 0
    """Slots skipped before this tick because the previous one overran (never caught up
    in a burst)."""
    duration_ms: float = 0.0
    """Time from the start of sampling to the tick being complete."""
    primary: NodeTick
    replica: NodeTick
    roles: Roles | None = None
    """How the servers said which node is the primary, layer by layer, and since when
    (None in recordings made before roles were observed: the roles as given)."""
    sentinel: SentinelSample | None = None
    """Redis Sentinel's view of the pair's master (``--sentinel``; None when no
    Sentinel is configured, and in recordings made before it was read)."""
    lag: MeasuredLag | None = None
    """The replica's true lag at this tick and where it comes from (``PairView.lag`` over the
    collector's last 300 s, attached by ``replmon.truelag``); None without the replica's
    MySQL, and in recordings made before it was measured (a replay works it out again)."""
    redis_lag: RedisLagEstimate | None = None
    """The Redis replica's offset lag also as seconds at the primary's write rate (an
    estimate); None without a Redis replica."""

    @property
    def nodes(self) -> tuple[NodeTick, NodeTick]:
        return (self.primary, self.replica)

    def oriented(self, service: str) -> Tick:
        """This tick as ``service``'s checks judge it ("mysql", "redis", "drbd"): its
        ``primary`` is that service's primary (``Roles``: each service has its own; Redis
        under Sentinel may have failed over while MySQL stayed), each node's ``role`` its
        role in that service. The tick itself when they are the pair's (the usual case,
        and ticks recorded before each service had its own)."""
        r = self.roles
        lr = None if r is None else r.layer(service)
        if lr is None or lr.flipped is None or r is None or r.flipped is None \
                or lr.flipped == r.flipped:
            return self
        p, q = self.replica, self.primary
        return self.model_copy(update={
            "primary": p.model_copy(update={"role": "primary"}),
            "replica": q.model_copy(update={"role": "replica"})})

    def service_role(self, node: NodeTick, service: str) -> Role:
        """``node``'s role in ``service`` (its ``role`` when that is the pair's)."""
        r = self.roles
        lr = None if r is None else r.layer(service)
        if lr is None or lr.flipped is None or r is None or r.flipped is None \
                or lr.flipped == r.flipped:
            return node.role
        return "replica" if node.role == "primary" else "primary"

    @property
    def start_lag_ms(self) -> float:
        return (self.mono - self.due_mono) * 1000


AnySample = HostSample | DrbdSample | MysqlSample | RedisSample

_TICK_JSON = msgspec.json.Decoder(Tick)


def tick_from_json(data: bytes | str) -> Tick:
    """The Tick in ``data`` (JSON as ``Tick.model_dump_json`` writes it): what
    ``Tick.model_validate_json`` gives, in half the time. Replay and re-run read ticks
    by the hundred thousand, and JSON validation was a fifth of a re-run's time.

    msgspec builds the same slotted records from the same annotations, and checks
    every value's type as strictly (a wrong type, a missing field or bad JSON is a
    ValueError, as pydantic's ValidationError is); unlike pydantic, it skips unknown
    fields, which only a newer format version has (and the header refuses those).
    ``tests/unit/test_tick_json.py`` holds the two readers to the same result."""
    return _TICK_JSON.decode(data)


def _ok(sample: AnySample | None) -> bool:
    return sample is not None and sample.status.state is SourceState.OK


def derive_node_rates(prev: NodeTick | None, cur: NodeTick) -> NodeRates:
    """Rates for ``cur`` from an earlier reading of the same node (None for the first).

    ``prev`` normally holds the last *ok* sample of each source (see RateTracker),
    so a source that failed for a few ticks gets its rate over the whole gap,
    measured with the real timestamps, instead of none at all."""
    last = {} if prev is None else {k: getattr(prev, k) for k in SOURCE_KINDS}
    return _derive(last, cur)


def _derive(last: Mapping[str, AnySample], cur: NodeTick) -> NodeRates:
    """derive_node_rates with the previous samples by kind (missing or not ok: none)."""
    def prev(kind: str) -> Any:
        p = last.get(kind)
        return p if _ok(p) else None

    # each kind's rates record, just derived (no validation: Struct.trusted)
    return NodeRates.trusted(
        host=derive_host_rates(prev("host"), cur.host) if _ok(cur.host) else _NO_HOST,
        drbd=derive_drbd_rates(prev("drbd"), cur.drbd) if _ok(cur.drbd) else _NO_DRBD,
        mysql=derive_mysql_rates(prev("mysql"), cur.mysql) if _ok(cur.mysql) else _NO_MYSQL,
        redis=derive_redis_rates(prev("redis"), cur.redis) if _ok(cur.redis) else _NO_REDIS,
    )


_NO_HOST, _NO_DRBD, _NO_MYSQL, _NO_REDIS = (NO_RATES.host, NO_RATES.drbd, NO_RATES.mysql,
                                            NO_RATES.redis)


class RateTracker:
    """Remembers each node's last ok sample per source and attaches rates to
    new NodeTicks. The collector, the recorder and replay all use it, so a replayed
    tick gets exactly the rates the live one had."""

    def __init__(self) -> None:
        # by the node's given role: a node keeps it through a switchover, so its rates
        # stay its own when its role (``NodeTick.role``) changes
        self._last: dict[Role, dict[str, AnySample]] = {}
        self._names: dict[Role, str] = {}
        self._given: dict[Role, Role] = {}
        """Current role -> given role of the node that had it last."""

    def rates(self, node: NodeTick) -> NodeRates:
        """``node``'s rates; remembers its ok samples for the next call."""
        rates = _derive(self._last.get(node.given_role, {}), node)
        self.remember(node)
        return rates

    def remember(self, node: NodeTick) -> None:
        """Take ``node``'s ok samples as the base of the next rates (without deriving)."""
        self.remember_kinds(node, SOURCE_KINDS)

    def remember_kinds(self, node: NodeTick, kinds: Iterable[str]) -> None:
        given = node.given_role
        last = self._last.setdefault(given, {})
        for kind in kinds:
            sample = getattr(node, kind)
            if _ok(sample) or kind not in last:
                last[kind] = sample
        self._names[given] = node.name
        self._given[node.role] = given

    def baseline(self, role: Role) -> NodeTick | None:
        """What the next rates of the node now in ``role`` will be derived from, as one
        NodeTick (each source's last ok sample): the rate baseline a recording's key
        frame stores."""
        given = self._given.get(role, role)
        last = self._last.get(given)
        if last is None:
            return None
        return NodeTick.model_validate({"role": role, "name": self._names[given],
                                        "given": given, **last})

    def attach(self, node: NodeTick) -> NodeTick:
        """``node`` with its ``rates`` filled in."""
        return node.model_copy(update={"rates": self.rates(node)})
