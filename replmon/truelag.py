"""The replica's true lag, every tick from the first one: ``LagTracker`` picks the best
source that knows it and names it (``Tick.lag``).

The sources, best first:

1. **heartbeat table** (``--heartbeat-table`` / ``heartbeat_table``): pt-heartbeat
   rewrites a row with the primary's clock every interval; the replica's copy is as old
   as its data. Read on the replica every tick with its clock (``LagFacts``): lag =
   the replica's clock + the clock offset replmon measures between the nodes - ts.
2. **server commit timestamps**: Oracle MySQL 8.0+ keeps each transaction's original
   commit time (performance_schema's applier tables); MariaDB 11.6+ prints the time of
   the newest event executed (Slave_last_event_time). Caught up with what it received:
   0; applying a transaction: its age; else the age of the newest one applied. Corrected
   by the same clock offset. They see what the replica received: a receiver that is
   behind (slow link) is pair_lag's to find.
3. **pair_lag's history**: the age of the oldest reading of the primary's position the
   replica has not executed (readings every ``positions_every`` s, kept ``HISTORY_S``):
   0 from the first reading when caught up; else exact once a reading it has executed
   is in the history, and only a lower bound before.

Pure and deterministic (times come from the ticks): the collector attaches it to every
tick, and a recording carries it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from replmon.model import gtid
from replmon.model.base import SourceState
from replmon.model.lag import LagFacts, MeasuredLag, RedisLagEstimate
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel, version_tuple
from replmon.model.tick import NodeTick, Tick
from replmon.pair import LAG_WINDOW_S, covered, node_clock

HISTORY_S = LAG_WINDOW_S
"""Seconds of the primary's position readings kept (pair_lag's window)."""
CLOCK_WINDOW_S = 30.0
"""Seconds of clock readings the offset is picked from (clock_skew's window)."""
REDIS_RATE_S = 10.0
"""Seconds over which the Redis primary's write rate is taken."""

_OK = SourceState.OK


def server_words(m: MysqlSample) -> str:
    """"MariaDB 10.11", "MySQL 9.7": the server as a user names it."""
    major, minor, _ = version_tuple(m.version)
    return f"{'MariaDB' if m.flavour == 'mariadb' else 'MySQL'} {major}.{minor}"


def _channel(replica: MysqlSample, primary: BinlogStatus | None) -> ReplicaChannel | None:
    """The replica's channel from the primary: the only one, or the one whose source
    server_id is the primary's."""
    chans = [c for c in replica.replication if not c.group_replication]
    if len(chans) == 1:
        return chans[0]
    sid = primary.server_id if primary is not None else None
    return next((c for c in chans if sid is not None and c.source_server_id == sid), None)


def _caught_up(ch: ReplicaChannel) -> bool:
    """The applier has executed everything the receiver has (GTIDs, else positions)."""
    if ch.gtid_retrieved and ch.gtid_executed:
        n = gtid.behind(ch.gtid_retrieved, ch.gtid_executed)
        if n is not None:
            return n == 0
    return ch.applier_backlog_bytes == 0


def _fmt(x: float) -> str:
    return f"{x:.1f}" if abs(x) < 100 else f"{x:.0f}"


class LagTracker:
    """Keeps what the true lag needs across ticks (the primary's position readings, both
    nodes' clock readings) and measures each tick's (``measure``)."""

    def __init__(self, heartbeat_table: str | None = None) -> None:
        self.heartbeat_table = heartbeat_table or None
        self._pair: tuple[str, str] | None = None
        """The MySQL primary and replica, by the roles they were given."""
        self._redis_master: str | None = None
        self._start_wall: float | None = None
        self._readings: deque[tuple[float, BinlogStatus]] = deque()
        self._clocks: dict[str, deque[tuple[float, float, float]]] = {}
        self._redis: deque[tuple[float, int]] = deque()

    # --- history ------------------------------------------------------------------

    def _remember(self, tick: Tick) -> None:
        """The primary's positions and both nodes' clocks (``tick`` as MySQL sees it)."""
        pair = (tick.primary.given_role, tick.replica.given_role)
        if pair != self._pair:  # the first tick, or a switchover: the history was the other
            self._pair, self._start_wall = pair, tick.wall  # direction's
            self._readings.clear()
        wall = tick.wall
        pm = tick.primary.mysql
        if pm.status.state is _OK and pm.binlog is not None:
            self._readings.append((wall, pm.binlog))
        while self._readings and self._readings[0][0] < wall - HISTORY_S:
            self._readings.popleft()
        for node in tick.nodes:
            found = _clock(node)
            q = self._clocks.setdefault(node.given_role, deque())
            if found is not None:
                q.append((wall, *found))
            while q and q[0][0] < wall - CLOCK_WINDOW_S:
                q.popleft()

    def _remember_redis(self, tick: Tick) -> None:
        """The Redis master's offsets (``tick`` as Redis sees it: its own primary)."""
        master = tick.primary.given_role
        if master != self._redis_master:
            self._redis_master = master
            self._redis.clear()
        pr = tick.primary.redis
        if pr.status.state is _OK and pr.master_repl_offset is not None:
            self._redis.append((tick.mono, pr.master_repl_offset))
        while self._redis and self._redis[0][0] < tick.mono - REDIS_RATE_S:
            self._redis.popleft()

    def _offset(self, tick: Tick) -> tuple[float, float] | None:
        """(primary's clock minus the replica's, bound): each node's newest reading among
        its tightest of the last CLOCK_WINDOW_S (as clock_skew picks)."""
        picked = []
        for node in tick.nodes:
            q = self._clocks.get(node.given_role)
            if not q:
                return None
            tight = 2 * min(b for _, _, b in q) + 0.001
            picked.append(next(x for x in reversed(q) if x[2] <= tight))
        (_, p, pb), (_, r, rb) = picked
        return p - r, pb + rb

    # --- the measure --------------------------------------------------------------

    def measure(self, tick: Tick) -> MeasuredLag | None:
        """The MySQL replica's true lag at ``tick`` (as MySQL sees it:
        ``Tick.oriented("mysql")``), remembering what later ticks need; None when the
        replica's MySQL is not configured."""
        self._remember(tick)
        rm = tick.replica.mysql
        if rm.status.state is SourceState.ABSENT:
            return None
        if rm.status.state is not _OK:
            return MeasuredLag(detail=f"the replica's MySQL cannot be read ({rm.status.state})")
        newest = self._readings[-1][1] if self._readings else None
        ch = _channel(rm, newest)
        if ch is None:
            return MeasuredLag(detail="the replica has no replication channel from the primary")
        offset = self._offset(tick)
        facts = rm.lag_facts
        base: dict[str, Any] = {"channel": ch.name,
                "clock_offset_s": None if offset is None else round(offset[0], 4),
                "clock_bound_s": None if offset is None else round(offset[1], 4)}
        notes: list[str] = []
        if facts is not None:
            hb = self._heartbeat(ch, newest, facts, offset, notes)
            if hb is not None:
                return MeasuredLag.model_validate({**base, **hb})
            sv = self._server(ch, rm, facts, offset, notes)
            if sv is not None:
                return MeasuredLag.model_validate({**base, **sv})
        return MeasuredLag.model_validate({**base, **self._history(tick, ch, rm, notes)})

    def _now(self, facts: LagFacts, offset: tuple[float, float] | None, notes: list[str]
             ) -> tuple[float, float] | None:
        """(the replica's clock now in the primary's time, bound); None without a clock."""
        if facts.server_time is None:
            return None
        half = (facts.elapsed_ms or 0.0) / 2000.0
        if offset is None:
            notes.append("the clocks are not compared yet (taken as equal)")
            return facts.server_time, half
        return facts.server_time + offset[0], half + offset[1]

    def _clock_words(self, offset: tuple[float, float] | None) -> str:
        if offset is None:
            return "clocks taken as equal (not compared yet)"
        return (f"corrected by the clock offset {offset[0]:+.3f} s (+/- {offset[1]:.3f} s) "
                "replmon measures between the nodes")

    def _heartbeat(self, ch: ReplicaChannel, newest: BinlogStatus | None, facts: LagFacts,
                   offset: tuple[float, float] | None, notes: list[str]
                   ) -> dict[str, Any] | None:
        if not self.heartbeat_table:
            return None
        if facts.heartbeat_error:
            notes.append(facts.heartbeat_error)
            return None
        sid = ch.source_server_id or (newest.server_id if newest is not None else None)
        ts = facts.heartbeat.get(sid) if sid is not None else None
        if ts is None:
            notes.append(f"heartbeat table {self.heartbeat_table} has no row of the primary "
                         f"(server_id {sid if sid is not None else 'unknown'}): is "
                         "pt-heartbeat --update running on it?")
            return None
        now = self._now(facts, offset, notes)
        if now is None:
            return None
        lag = max(0.0, now[0] - ts)
        return {"seconds": round(lag, 3), "bound_s": round(now[1], 3), "source": "heartbeat",
                "detail": (f"pt-heartbeat's row in {self.heartbeat_table} (server_id {sid}), "
                           f"{self._clock_words(offset)}; its age includes pt-heartbeat's "
                           "--interval")}

    def _server(self, ch: ReplicaChannel, rm: MysqlSample, facts: LagFacts,
                offset: tuple[float, float] | None, notes: list[str]) -> dict[str, Any] | None:
        now = self._now(facts, offset, notes)
        if now is None:
            return None
        if rm.flavour == "mysql":
            times = next((a for a in facts.applier if a.channel == ch.name), None)
            if times is None:
                return None
            what = "performance_schema's original commit timestamps"
            resolution = 0.0
            applying, applied = times.applying_commit, times.applied_commit
        elif version_tuple(rm.version) >= (11, 6, 0) and facts.tz_offset_s is not None:
            what = "Slave_last_event_time"
            resolution = 1.0  # the event times are whole seconds
            applying, applied = None, (None if ch.replica_event_time is None
                                       else ch.replica_event_time - facts.tz_offset_s)
        else:
            return None
        if applying is not None:
            lag, how = now[0] - applying, "the age of the transaction being applied"
        elif _caught_up(ch):
            lag, how = 0.0, "caught up with what it received"
        elif applied is not None:
            lag, how = now[0] - applied, "the age of the newest transaction applied"
        else:
            return None
        return {"seconds": round(max(0.0, lag), 3), "bound_s": round(now[1] + resolution, 3),
                "source": "server",
                "detail": f"{what}: {how}, {self._clock_words(offset)}"}

    def _history(self, tick: Tick, ch: ReplicaChannel, rm: MysqlSample, notes: list[str]
                 ) -> dict[str, Any]:
        why = [server_words(rm)]
        v = version_tuple(rm.version)
        table = "a readable heartbeat table" if self.heartbeat_table else "a heartbeat table"
        if v < ((11, 6, 0) if rm.flavour == "mariadb" else (8, 0, 0)):
            why.append(f"without {table}")
        else:
            why.append(f"without {table} or commit timestamps")
        who = " ".join(why)
        tail = ("; " + "; ".join(notes)) if notes else ""
        readings = self._readings
        if not readings:
            return {"detail": (f"{who}: measurable after {self._period():.0f} s of history "
                               f"(no reading of the primary's position yet){tail}")}
        now = tick.wall
        newest_wall, newest = readings[-1]
        ok = covered(newest, ch)
        if ok is None:
            return {"detail": f"{who}: the two nodes' positions are not comparable{tail}"}
        if ok:
            return {"seconds": 0.0, "bound_s": round(now - newest_wall + tick.interval, 3),
                    "source": "history",
                    "detail": f"pair_lag's history: the replica has executed the primary's "
                              f"newest position (read {_fmt(now - newest_wall)} s ago){tail}"}
        lacking = newest_wall
        executed_wall = None
        for wall, p in reversed(readings):
            c = covered(p, ch)
            if c is None or c:
                executed_wall = wall
                break
            lacking = wall
        lag = now - lacking
        if executed_wall is None:
            span = now - (self._start_wall or readings[0][0])
            return {"at_least_s": round(lag, 1),
                    "detail": (f"{who}: at least {_fmt(lag)} s behind, measurable after more "
                               f"than {_fmt(lag)} s of history ({_fmt(span)} s so far){tail}")}
        return {"seconds": round(lag, 3), "bound_s": round(lacking - executed_wall, 3),
                "source": "history",
                "detail": f"pair_lag's history: the oldest position of the primary not "
                          f"executed was read {_fmt(lag)} s ago{tail}"}

    def _period(self) -> float:
        r = self._readings
        return 2.0 if len(r) < 2 else max(1.0, r[-1][0] - r[-2][0])

    def redis(self, tick: Tick) -> RedisLagEstimate | None:
        """The Redis replica's offset lag, and as seconds at the primary's write rate over
        the last REDIS_RATE_S (``tick`` as Redis sees it: ``Tick.oriented("redis")``)."""
        self._remember_redis(tick)
        p, r = tick.primary.redis, tick.replica.redis
        if p.status.state is not _OK or r.status.state is not _OK or r.role != "replica" \
                or p.master_repl_offset is None or r.repl_offset is None:
            return None
        nbytes = max(0, p.master_repl_offset - r.repl_offset)
        rate = None
        q = self._redis
        if len(q) >= 2 and q[-1][0] > q[0][0]:
            rate = max(0.0, (q[-1][1] - q[0][1]) / (q[-1][0] - q[0][0]))
        seconds = 0.0 if nbytes == 0 else (nbytes / rate if rate else None)
        return RedisLagEstimate(bytes=nbytes, rate_bytes_per_s=rate,
                                seconds=None if seconds is None else round(seconds, 2))


def _clock(node: NodeTick) -> tuple[float, float] | None:
    """The node's clock minus replmon's (bound): node_clock, or the replica's per-tick
    clock reading (``LagFacts``), the tighter."""
    out = node_clock(node)
    m = node.mysql
    f = m.lag_facts
    if m.status.state is _OK and f is not None and f.server_time is not None \
            and f.sent_wall is not None and f.elapsed_ms is not None:
        half = f.elapsed_ms / 2000.0
        if out is None or half < out[1]:
            out = f.server_time - (f.sent_wall + half), half
    return out
