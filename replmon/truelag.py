"""The lag the collector attaches to every tick: the MySQL replica's true lag
(``Tick.lag``: ``PairView.lag`` over the last ``LAG_WINDOW_S`` of ticks, as pair_lag's
window holds them) and the Redis replica's offset lag as seconds (``Tick.redis_lag``).

Pure and deterministic (times come from the ticks): a recording carries both, and a
replay works the MySQL lag out again from the recorded ticks (``PairView.lag``).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from replmon.check import span_ticks
from replmon.model.base import SourceState
from replmon.model.lag import MeasuredLag, RedisLagEstimate
from replmon.model.mysql import MysqlSample
from replmon.model.packed import PackedPart
from replmon.model.parts import dropped, kept_parts, thin
from replmon.model.tick import NodeTick, Role, Tick
from replmon.pair import LAG_WINDOW_S, BinlogMarks, PairView, lag_clock

REDIS_RATE_S = 10.0
"""Seconds over which the Redis primary's write rate is taken."""

_OK = SourceState.OK
_MYSQL = kept_parts(("mysql",))
"""What the lag reads of a kept tick: its MySQL samples (the ticks are kept with these
only). Its other input, each node's clock reading (``lag_clock``: MySQL's, or Redis INFO's),
is worked out once per tick as the tick comes and kept beside it (``LagTracker._clocks``),
so a kept tick needs no Redis sample: thinning copied both nodes' RedisSamples (69 fields
each) every tick only to drop their counters."""

_NO_MYSQL = dropped("mysql")
_NO_READING = MysqlSample()
"""What a kept tick's primary stands for once older than the last when it holds no usable
binlog reading (``positions_every``: one tick in two): one sample for all of them, with
no reading (the history steps over it as over the tick's own)."""


def _older(tick: Tick) -> Tick:
    """What the lag reads of a kept tick once it is no longer the last: its wall, and the
    primary's binlog reading (pair_lag's history) as bytes: a sample of its status and
    reading only (``PackedPart``, decoded when the history walks back to it), or
    ``_NO_READING``; the replica's is dropped (the lag reads the replica's channel at the
    last tick only).

    A kept tick lives 300 s; its MySQL samples as records were ~70 small objects, and
    what lives that long decides how much memory the process holds once that first
    span has turned over (docs/benchmarks.md, #56)."""
    p, r = tick.primary, tick.replica
    m = p.mysql
    reading: Any = _NO_READING
    if m.binlog is not None and m.status.state is _OK:
        reading = PackedPart(MysqlSample.trusted(status=m.status, binlog=m.binlog))
    primary: NodeTick = NodeTick._replace(p, {"mysql": reading})
    replica: NodeTick = NodeTick._replace(r, {"mysql": _NO_MYSQL})
    out: Tick = Tick._replace(tick, {"primary": primary, "replica": replica})
    return out


class LagTracker:
    """Keeps the ticks the lags need (the last ``LAG_WINDOW_S`` as MySQL sees them, the
    Redis master's offsets) and measures each tick's."""

    def __init__(self) -> None:
        self._ticks: list[Tick] = []
        """The last LAG_WINDOW_S of ticks: the last with both nodes' MySQL samples, older
        ones as ``_older`` keeps them."""
        self._marks = BinlogMarks()
        """Where each node's newest binlog reading is in ``_ticks`` (the ticks' own samples
        are bytes once older than the last)."""
        self._clocks: dict[Role, list[tuple[float, float] | None]] = {
            "primary": [], "replica": []}
        """Each role's ``lag_clock`` of each kept tick, in step with ``_ticks`` (what
        ``PairView`` would work out from the ticks' MySQL and Redis samples, and the
        engine's windows keep as a series column: read once per tick, not ~30 times)."""
        self._pair: tuple[str, str] | None = None
        """The MySQL primary and replica, by the roles they were given."""
        self._redis_master: str | None = None
        self._redis: deque[tuple[float, int]] = deque()

    def measure(self, tick: Tick) -> MeasuredLag | None:
        """The MySQL replica's true lag at ``tick`` (as MySQL sees it:
        ``Tick.oriented("mysql")``); None when the replica's MySQL is not configured."""
        pair = (tick.primary.given_role, tick.replica.given_role)
        ticks, clocks = self._ticks, self._clocks
        if pair != self._pair:  # the first tick, or a switchover: the ticks before were
            self._pair = pair  # the other direction's (the engine's window starts anew too)
            ticks.clear()
            self._marks.refill(())
            for col in clocks.values():
                col.clear()
        if ticks:
            ticks[-1] = _older(ticks[-1])
        ticks.append(thin(tick, _MYSQL))
        self._marks.add(tick)
        for role, col in clocks.items():
            col.append(lag_clock(getattr(tick, role)))  # the whole tick's: Redis too
        if len(ticks) > span_ticks(LAG_WINDOW_S, tick.interval):
            del ticks[0]
            for col in clocks.values():
                del col[0]
        return PairView(ticks, self._marks.newest(len(ticks)), clocks.__getitem__).lag

    def redis(self, tick: Tick) -> RedisLagEstimate | None:
        """The Redis replica's offset lag, and as seconds at the primary's write rate over
        the last REDIS_RATE_S (``tick`` as Redis sees it: ``Tick.oriented("redis")``)."""
        master = tick.primary.given_role
        if master != self._redis_master:
            self._redis_master = master
            self._redis.clear()
        q = self._redis
        p, r = tick.primary.redis, tick.replica.redis
        if p.status.state is _OK and p.master_repl_offset is not None:
            q.append((tick.mono, p.master_repl_offset))
        while q and q[0][0] < tick.mono - REDIS_RATE_S:
            q.popleft()
        if p.status.state is not _OK or r.status.state is not _OK or r.role != "replica" \
                or p.master_repl_offset is None or r.repl_offset is None:
            return None
        nbytes = max(0, p.master_repl_offset - r.repl_offset)
        rate = None
        if len(q) >= 2 and q[-1][0] > q[0][0]:
            rate = max(0.0, (q[-1][1] - q[0][1]) / (q[-1][0] - q[0][0]))
        seconds = 0.0 if nbytes == 0 else (nbytes / rate if rate else None)
        # no validation (Struct.trusted): an int (two int offsets), floats or None
        return RedisLagEstimate.trusted(bytes=nbytes, rate_bytes_per_s=rate,
                                        seconds=None if seconds is None else round(seconds, 2))
