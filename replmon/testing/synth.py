"""Ticks built from numbers instead of servers.

For check tests on synthetic windows, for sessions reconstructed from the seeds'
published figures (DRBD, swapping: things the lab cannot produce), and for
benchmarks that need 86,400 ticks. Everything here goes through the real
models, so a synthetic tick is indistinguishable in shape from a live one.

    t = tick(5, primary=node("primary", mysql=MysqlSample(...),
                             rates=NodeRates(mysql=MysqlRates(com_update_per_s=47240.0, ...))))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replmon.check import Check, Thresholds, Window, span_ticks
from replmon.model.base import SourceState, SourceStatus
from replmon.model.drbd import DrbdSample
from replmon.model.findings import Finding, Observation
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.redis import RedisSample
from replmon.model.roles import LAYERS, Group
from replmon.model.tick import NodeTick, Role, Tick
from replmon.roles import Orienter

LAYER_GROUPS: tuple[Group, ...] = (LAYERS,)
"""Every service moving together (the default without a Sentinel)."""

T0 = 1_700_000_000.0
"""Wall time of tick 0 in synthetic sessions (2023-11-14 22:13:20 UTC)."""


def status(state: str, error: str | None = None, since: float | None = None) -> SourceStatus:
    """SourceStatus from a state word: status("unreachable", "connection refused")."""
    return SourceStatus(state=SourceState(state), error=error, since=since)


def node(role: Role, name: str | None = None, **parts: Any) -> NodeTick:
    """A NodeTick; parts are host=, drbd=, mysql=, redis= samples and rates=.
    DRBD defaults to absent (as on the lab); everything else to an ok, empty sample."""
    parts.setdefault("drbd", DrbdSample(status=status("absent", "no DRBD on this host")))
    return NodeTick(role=role, name=name or ("db163" if role == "primary" else "db162"), **parts)


def tick(seq: int, *, primary: NodeTick | None = None, replica: NodeTick | None = None,
         interval: float = 1.0, t0: float = T0) -> Tick:
    """Tick ``seq`` at t0 + seq x interval, on schedule."""
    return Tick(seq=seq, interval=interval, wall=t0 + seq * interval, mono=seq * interval,
                due_mono=seq * interval, slot=seq,
                primary=primary or node("primary"), replica=replica or node("replica"))


def series(pairs: Iterable[tuple[NodeTick, NodeTick]], *, interval: float = 1.0,
           start: int = 0) -> list[Tick]:
    """Ticks from (primary, replica) pairs, numbered from ``start``."""
    return [tick(start + i, primary=p, replica=r, interval=interval)
            for i, (p, r) in enumerate(pairs)]


def directed(mysql: str | None, redis: str | None, *, primary: str = "db163",
             replica: str = "db162") -> tuple[NodeTick, NodeTick]:
    """The two nodes as given (``--primary``, ``--replica``), each layer replicating
    from the node it names: ``mysql="db162"``: db163's channel reads from db162 (by
    server_id) and db163 is read_only; ``redis="db162"``: db162 the master, db163 its
    replica (one replication id). None: that layer has no direction (MySQL: no channel
    either way, both read_only; Redis: both masters). For ``oriented``."""
    sid = {primary: 1, replica: 2}

    def my(name: str) -> MysqlSample:
        other = replica if name == primary else primary
        follows = mysql is not None and mysql == other
        return MysqlSample(
            status=status("ok"), flavour="mariadb",
            variables={"server_id": str(sid[name]),
                       "read_only": "OFF" if mysql == name else "ON"},
            replication=[ReplicaChannel(io_running="Yes", sql_running=True,
                                        source_host=other, source_port=3306,
                                        source_server_id=sid[other])] if follows else [])

    def rd(name: str) -> RedisSample:
        if redis is None or redis == name:
            return RedisSample(status=status("ok"), role="master", master_replid="r1")
        return RedisSample(status=status("ok"), role="replica", master_replid="r1",
                           master_host=redis, master_port=6379)

    return (node("primary", primary, mysql=my(primary), redis=rd(primary), given="primary"),
            node("replica", replica, mysql=my(replica), redis=rd(replica), given="replica"))


def oriented(pairs: Iterable[tuple[NodeTick, NodeTick]], *, interval: float = 1.0,
             start: int = 0, groups: Sequence[Group] = LAYER_GROUPS) -> list[Tick]:
    """Ticks from the nodes as given (``directed``), oriented as the collector does it
    (replmon.roles.Orienter, with ``groups``: the services that move together): the
    tick's primary is the node the servers say, and ``Tick.roles`` says how and since
    when."""
    orienter = Orienter(groups)
    out = []
    for i, (a, b) in enumerate(pairs):
        t = tick(start + i, interval=interval)
        p, r, roles = orienter.orient(a, b, t.wall)
        out.append(t.model_copy(update={"primary": p, "replica": r, "roles": roles}))
    return out


def observe(check: Check[Any], ticks: Sequence[Tick], **limits: Any) -> list[Observation]:
    """What ``check`` observes on the window ending at the last tick."""
    th: Thresholds = check.thresholds.model_validate(limits)
    ticks = list(ticks)
    n = span_ticks(check.window, ticks[-1].interval)  # the engine's span of the window
    return check.evaluate(Window(ticks[-n:]), th)


@dataclass
class GateTally:
    """A gate against its check's ``evaluate`` (``judge_gate``), counted over windows and
    thresholds: where it was quiet though ``evaluate`` saw something (``hidden``: must
    stay empty), how often it was quiet, how often ``evaluate`` found nothing
    (``silent``) and something (``seen``)."""

    hidden: list[str] = field(default_factory=list)
    quiet: int = 0
    silent: int = 0
    seen: int = 0


def judge_gate(check: Check[Any], w: Window, limits: Iterable[Thresholds], tally: GateTally,
               where: str = "") -> None:
    """``check``'s gate on ``w`` against ``evaluate`` with each of ``limits``, into
    ``tally``; ``where`` names the window in a hidden observation's line."""
    gate = check.gate
    assert gate is not None, f"{check.id} has no gate"
    g = gate.measure(w)
    for th in limits:
        found = check.evaluate(w, th)
        tally.seen += bool(found)
        tally.silent += not found
        if gate.quiet(g, th):
            tally.quiet += 1
            if found:
                tally.hidden.append(f"{where or f'tick {w.last.seq}'} {th.model_dump()} "
                                    f"gauges {g}: {found[0].title}")


def gate_hides(check: Check[Any], ticks: Iterable[Tick], limits: Iterable[Mapping[str, Any]]
               ) -> tuple[list[str], int]:
    """Where ``check``'s gate is quiet with some of ``limits`` (each a ``[checks.<id>]``
    table) though ``evaluate`` sees something there, on the windows an engine feeding
    ``ticks`` hands the check; and how many (window, limits) pairs saw something. What
    tests/unit/test_gates.py asks of every gate on the shipped inputs, for a test's own
    ticks (a state those inputs lack)."""
    from dataclasses import replace

    from replmon.engine import Engine

    ths = [check.thresholds.model_validate(x) for x in limits]
    tally = GateTally()

    def probe(w: Window, _t: Thresholds) -> list[Observation]:
        judge_gate(check, w, ths, tally)
        return []

    eng = Engine([(replace(check, evaluate=probe, gate=None), check.thresholds())])
    for t in ticks:
        eng.observe(t)
    return tally.hidden, tally.seen


def run_check(check: Check[Any], ticks: Iterable[Tick], **limits: Any
              ) -> tuple[list[Finding], dict[int, list[Finding]]]:
    """Feed ``ticks`` through an engine holding only ``check``.
    Returns (findings open at the end, {seq: findings opened at that tick})."""
    from replmon.engine import Engine

    th = check.thresholds.model_validate(limits)
    eng = Engine([(check, th)])
    opened: dict[int, list[Finding]] = {}
    last: list[Finding] = []
    for t in ticks:
        upd = eng.feed(t)
        if upd.opened:
            opened[t.seq] = upd.opened
        last = upd.open
    return last, opened
