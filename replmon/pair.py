"""The pair view: what both nodes say at a window's last tick, worked out once and read
by every check of the tick.

Several checks need the same facts about the pair at a window's last tick: each node's
newest binary log reading (taken every ``positions_every`` seconds, so one or two ticks
back), the replica's channel that follows the primary, how far apart the two nodes'
clocks are. ``Window.pair`` is this view. It is made the first time a check asks for it,
and each fact is worked out when first read and kept: the engine hands every check with
the same window length the same Window, so the checks of a tick share what one of them
worked out. A plain ``Window(ticks)`` gives the same view (a pure function of the window).

The view is read-only, as the window is: its facts are properties without setters,
their values the tick's own records and tuples.

``PairView.lag`` is the replica's true lag (``MeasuredLag``), the one home of it: the
collector attaches it to every tick (``Tick.lag``: the screen, /metrics, recordings), the
pair_lag check judges it, ``check``'s perfdata print it, and a replay works it out again
from the recorded ticks. Its sources, best first (``replmon.model.lag``): pt-heartbeat's
table read on the replica every tick, the servers' commit timestamps, both corrected by
the nodes' clock offset (``CLOCK_WINDOW_S``); else pair_lag's history: the age of the
oldest reading of the primary's position in the window the replica has not executed (0
when caught up; a lower bound until a reading it has executed is in the window).

A MariaDB replica's own ``mysql.gtid_slave_pos`` inserts (``gtid_slave_pos_inserts``) are
here too: stmt_vs_rows leaves them out and the screen says how many it left out.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

from replmon.model import gtid
from replmon.model.base import SourceState
from replmon.model.lag import LagFacts, MeasuredLag
from replmon.model.mysql import BinlogStatus, MysqlSample, ReplicaChannel, version_tuple
from replmon.model.parts import DroppedPart
from replmon.model.tick import NodeTick, Role, Tick

LAG_WINDOW_S = 300.0
"""Seconds of ticks the lag is measured over (pair_lag's window): a longer lag reads
"at least 300 s" (``MeasuredLag.at_least_s``)."""

CLOCK_WINDOW_S = 30.0
"""Seconds of clock readings the offset between the nodes is picked from (clock_skew's
window)."""

_OK = SourceState.OK
_UNREAD: Any = object()
"""A fact not worked out yet."""


def redis_clock(node: NodeTick) -> tuple[float, float] | None:
    """(the node's clock minus replmon's, bound) from this tick's Redis INFO (6.2+:
    ``server_time_usec``): replmon's clock is known before the request and the request's
    time after it, so the node answered within half of it (the bound)."""
    r = node.redis
    if r.status.state is _OK and (clock := r.server_time) is not None:
        half = r.elapsed_ms / 2000.0
        return clock - (r.wall + half), half
    return None


def node_clock(node: NodeTick) -> tuple[float, float] | None:
    """As ``redis_clock``, from this tick's Redis INFO or MySQL clock reading
    (``BinlogStatus.server_time``, every ``positions_every`` seconds), the tighter one."""
    out = redis_clock(node)
    m = node.mysql
    if m.status.state is _OK and (b := m.binlog) is not None and b.server_time is not None \
            and b.sent_wall is not None and b.elapsed_ms is not None:
        half = b.elapsed_ms / 2000.0
        if out is None or half < out[1]:
            out = b.server_time - (b.sent_wall + half), half
    return out


def lag_clock(node: NodeTick) -> tuple[float, float] | None:
    """As ``node_clock``, or the replica's per-tick clock reading (``LagFacts``), the
    tighter."""
    out = node_clock(node)
    m = node.mysql
    f = m.lag_facts
    if m.status.state is _OK and f is not None and f.server_time is not None \
            and f.sent_wall is not None and f.elapsed_ms is not None:
        half = f.elapsed_ms / 2000.0
        if out is None or half < out[1]:
            out = f.server_time - (f.sent_wall + half), half
    return out


def server_words(m: MysqlSample) -> str:
    """"MariaDB 10.11", "MySQL 9.7": the server as a user names it."""
    major, minor, _ = version_tuple(m.version)
    return f"{'MariaDB' if m.flavour == 'mariadb' else 'MySQL'} {major}.{minor}"


def _fmt(x: float) -> str:
    return f"{x:.1f}" if abs(x) < 100 else f"{x:.0f}"


def _caught_up(ch: ReplicaChannel) -> bool:
    """The applier has executed everything the receiver has (GTIDs, else positions)."""
    if ch.gtid_retrieved and ch.gtid_executed:
        n = gtid.behind(ch.gtid_retrieved, ch.gtid_executed)
        if n is not None:
            return n == 0
    return ch.applier_backlog_bytes == 0


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _file_key(name: str) -> tuple[str, int]:
    """binlog.000012 -> ("binlog", 12): binlog files compare by their number."""
    m = _NUMBERED.match(name)
    return (m[1], int(m[2])) if m else (name, 0)


def covered(p: BinlogStatus, ch: ReplicaChannel) -> bool | None:
    """Has the replica executed everything the primary had at reading ``p``? By GTID when
    both sides have GTIDs, else by binlog file and position; None: not comparable."""
    if p.gtid_executed and ch.gtid_executed:
        n = gtid.behind(p.gtid_executed, ch.gtid_executed)
        if n is not None:
            return n == 0
    if p.file and ch.relay_source_log_file and p.position is not None \
            and ch.exec_source_log_pos is not None:
        pf, ef = _file_key(p.file), _file_key(ch.relay_source_log_file)
        if pf[0] == ef[0]:
            return (ef[1], ch.exec_source_log_pos) >= (pf[1], p.position)
    return None


def gtid_slave_pos(node: NodeTick) -> str:
    """A MariaDB replica's Gtid_Slave_Pos (the same on every connection); "" elsewhere
    (recordings older than ``gtid_executed_server_wide`` are told by the flavour)."""
    maria = node.mysql.flavour == "mariadb"
    for ch in node.mysql.replication:
        if ch.gtid_executed_server_wide or (maria and ch.gtid_executed):
            return ch.gtid_executed
    return ""


def gtid_slave_pos_inserts(node: NodeTick, prev: NodeTick) -> float | None:
    """Rows per second a MariaDB replica (``node``, its previous tick ``prev``) inserted
    into mysql.gtid_slave_pos over the last interval: one per transaction it applied, the
    growth of Gtid_Slave_Pos between the two readings. None when the node counts rows
    with InnoDB's counters (MySQL) or applies nothing by GTID, when either reading is
    missing, or when the domains changed in between (a new domain's whole sequence is not
    this second's)."""
    r = node.rates.mysql
    if r.row_counters != "handler" or not r.dt_s or prev.mysql.status.state is not _OK:
        return None
    now, before = gtid_slave_pos(node), gtid_slave_pos(prev)
    if not now or not before:
        return None
    try:
        if gtid.maria_domains(now).keys() != gtid.maria_domains(before).keys():
            return None
    except ValueError:
        return None
    applied = gtid.behind(now, before)
    return None if applied is None else applied / r.dt_s


class BinlogMarks:
    """Where each node's newest binlog reading is in a sliding window of ticks (what
    ``PairView`` would otherwise look back for, through every tick of the window for a
    node that never reads one), kept up as ticks are added: the engine's windows
    (``replmon.windows``) and the true lag's tracker (``replmon.truelag``), whose older
    ticks hold their MySQL samples as bytes."""

    __slots__ = ("added", "at")

    def __init__(self) -> None:
        self.added = 0
        """Ticks added since the windows were (re)filled."""
        self.at: dict[str, tuple[BinlogStatus, int]] = {}
        """Role -> its newest reading and the count of ticks added before its tick."""

    def add(self, tick: Tick) -> None:
        for role in ("primary", "replica"):
            m = getattr(tick, role).mysql
            if type(m) is DroppedPart:  # a re-run of checks that do not read MySQL
                continue
            if m.binlog is not None and m.status.state is _OK:
                self.at[role] = (m.binlog, self.added)
        self.added += 1

    def refill(self, ticks: Sequence[Tick]) -> None:
        self.added, self.at = 0, {}
        for t in ticks:
            self.add(t)

    def newest(self, size: int) -> dict[str, tuple[BinlogStatus | None, int]]:
        """Each role's newest reading and its index in a window of the last ``size``
        ticks ((None, -1): none there)."""
        out: dict[str, tuple[BinlogStatus | None, int]] = {}
        for role in ("primary", "replica"):
            found = self.at.get(role)
            i = -1 if found is None else size - (self.added - found[1])
            out[role] = (None, -1) if found is None or i < 0 else (found[0], i)
        return out


class PairView:
    """Facts about both nodes at the last tick of a window, each worked out when first
    read (``Window.pair``)."""

    __slots__ = ("_binlogs", "_channel", "_channels", "_clock", "_clocks_of", "_lag",
                 "_primary", "_replica", "_ticks")
    _ticks: Sequence[Tick]
    _primary: tuple[BinlogStatus | None, int]
    _replica: tuple[BinlogStatus | None, int]
    _binlogs: tuple[BinlogStatus, BinlogStatus] | None
    _channels: tuple[ReplicaChannel, ...]
    _channel: ReplicaChannel | None
    _clock: tuple[float, float] | None
    _lag: MeasuredLag | None

    def __init__(self, ticks: Sequence[Tick],
                 newest: dict[str, tuple[BinlogStatus | None, int]] | None = None,
                 clocks: Callable[[Role], Sequence[tuple[float, float] | None]] | None = None
                 ) -> None:
        """``newest``: each role's newest binlog reading and its index in ``ticks``, when
        the caller kept track of them (``BinlogMarks``);
        else each is found by looking back through the ticks, all of them for a node
        that never reads one (a replica without log_bin: ~37 us a tick at 300 ticks).
        ``clocks``: a role's ``lag_clock`` of every tick, when the caller keeps them (the
        engine's series columns); else worked out from the ticks."""
        self._ticks = ticks
        self._clocks_of = clocks
        self._binlogs = self._channels = self._channel = self._clock = self._lag = _UNREAD
        self._primary = self._replica = _UNREAD
        if newest is not None:
            self._primary, self._replica = newest["primary"], newest["replica"]

    def _newest(self, role: Role) -> tuple[BinlogStatus | None, int]:
        """(``role``'s newest binlog reading, its tick's index); (None, -1): none."""
        i = len(self._ticks)
        for t in reversed(self._ticks):
            i -= 1
            m = getattr(t, role).mysql
            if m.binlog is not None and m.status.state is _OK:
                return m.binlog, i
        return None, -1

    @property
    def primary_binlog(self) -> BinlogStatus | None:
        """The primary's newest binary log reading in the window (its position, GTIDs,
        server_id and clock, from a tick whose MySQL sample is ok: every
        ``positions_every`` seconds); None when the window has none."""
        found = self._primary
        if found is _UNREAD:
            found = self._primary = self._newest("primary")
        return found[0]

    @property
    def primary_binlog_at(self) -> int:
        """Index in the window's ``ticks`` of ``primary_binlog``'s tick (``ticks[i].wall``
        is when it was read); -1 when there is none."""
        found = self._primary
        if found is _UNREAD:
            found = self._primary = self._newest("primary")
        return found[1]

    @property
    def replica_binlog(self) -> BinlogStatus | None:
        """As ``primary_binlog``, the replica's."""
        found = self._replica
        if found is _UNREAD:
            found = self._replica = self._newest("replica")
        return found[0]

    @property
    def replica_binlog_at(self) -> int:
        """As ``primary_binlog_at``, the replica's."""
        found = self._replica
        if found is _UNREAD:
            found = self._replica = self._newest("replica")
        return found[1]

    @property
    def binlogs(self) -> tuple[BinlogStatus, BinlogStatus] | None:
        """(primary's, replica's) readings of the newest tick in which both nodes read
        their binary log: the two sides of one moment (both read in the same tick,
        the period aligned to the wall clock). None when the window has no such tick, or
        when either node's MySQL sample of that tick is not ok."""
        found = self._binlogs
        if found is _UNREAD:
            found = None
            for t in reversed(self._ticks):
                pm, rm = t.primary.mysql, t.replica.mysql
                if pm.binlog is not None and rm.binlog is not None:
                    if pm.status.state is _OK and rm.status.state is _OK:
                        found = (pm.binlog, rm.binlog)
                    break
            self._binlogs = found
        return found

    @property
    def channels(self) -> tuple[ReplicaChannel, ...]:
        """The replica's replication channels at the last tick (SHOW REPLICA STATUS rows,
        a multi-source replica's every source), group replication's left out; () when
        its MySQL sample is not ok."""
        found = self._channels
        if found is _UNREAD:
            m = self._ticks[-1].replica.mysql
            every = m.replication
            if m.status.state is not _OK:
                found = ()
            elif len(every) == 1 and not every[0].group_replication:
                found = (every[0],)  # the usual replica
            else:
                found = tuple([c for c in every if not c.group_replication])
            self._channels = found
        return found

    @property
    def channel(self) -> ReplicaChannel | None:
        """The replica's channel from the primary, of ``channels``: the only one, or the one
        whose source server_id is the primary's (by its newest reading); None without."""
        found = self._channel
        if found is _UNREAD:
            chans = self.channels
            if len(chans) == 1:  # the usual replica: one channel
                found = chans[0]
            else:
                newest = self.primary_binlog if chans else None
                sid = newest.server_id if newest is not None else None
                found = None if sid is None else \
                    next((c for c in chans if c.source_server_id == sid), None)
            self._channel = found
        return found

    @property
    def lag(self) -> MeasuredLag | None:
        """The replica's true lag at the last tick from the best source that knows it, or
        why none does; None when the replica's MySQL is not configured."""
        found = self._lag
        if found is _UNREAD:
            found = self._lag = self._measure()
        return found

    @property
    def tick_lag(self) -> MeasuredLag | None:
        """The last tick's true lag as the collector measured it (``Tick.lag``: ``lag`` over
        the 300 s before that tick, once a tick; what the screen shows and a recording
        keeps), else ``lag`` worked out from these ticks (a recording made before ticks
        carried it)."""
        carried = self._ticks[-1].lag
        return self.lag if carried is None else carried

    @property
    def behind(self) -> tuple[int | None, int | None]:
        """(GTIDs of the primary's newest reading the replica lacks, bytes of its binlog
        not executed: same file only); None each when not comparable."""
        newest, ch = self.primary_binlog, self.channel
        if newest is None or ch is None:
            return None, None
        trx = nbytes = None
        if newest.gtid_executed and ch.gtid_executed:
            trx = gtid.behind(newest.gtid_executed, ch.gtid_executed)
        if newest.position is not None and ch.exec_source_log_pos is not None \
                and newest.file == ch.relay_source_log_file:
            nbytes = max(0, newest.position - ch.exec_source_log_pos)
        return trx, nbytes

    def _measure(self) -> MeasuredLag | None:
        rm = self._ticks[-1].replica.mysql
        if rm.status.state is SourceState.ABSENT:
            return None
        # no validation (Struct.trusted), once a tick in the collector and in each check's
        # window that asks: texts, a LagSource literal, and floats (round() of the
        # records' float fields: clocks, walls, the interval, the facts' timestamps)
        if rm.status.state is not _OK:
            return MeasuredLag.trusted(
                detail=f"the replica's MySQL cannot be read ({rm.status.state})")
        ch = self.channel
        if ch is None:
            return MeasuredLag.trusted(
                detail="the replica has no replication channel from the primary")
        facts, notes = rm.lag_facts, cast("list[str]", [])
        found = facts and (self._heartbeat(ch, facts, notes) or self._server(ch, rm, facts, notes))
        found = found or self._history(ch, rm, facts, notes)
        if "detail" in found:  # a tick's lag lives 300 s in the windows; its words
            found["detail"] = sys.intern(found["detail"])  # repeat (mysql_values.py)
        return MeasuredLag.trusted(channel=ch.name, **found)

    def _offset(self) -> tuple[float, float] | None:
        """(primary's clock minus the replica's, bound): each node's newest reading among
        its tightest of the last CLOCK_WINDOW_S (``lag_clock``; as clock_skew picks)."""
        ticks = self._ticks
        since, n = ticks[-1].wall - CLOCK_WINDOW_S, 0
        for t in reversed(ticks):
            if t.wall < since:
                break
            n += 1
        picked = []
        for role in ("primary", "replica"):
            col = self._clocks_of(role)[-n:] if self._clocks_of is not None else \
                [lag_clock(getattr(t, role)) for t in ticks[-n:]]
            seen = [c for c in reversed(col) if c is not None]
            if not seen:
                return None
            tight = 2 * min(b for _, b in seen) + 0.001
            picked.append(next(x for x in seen if x[1] <= tight))
        (p, pb), (r, rb) = picked
        return p - r, pb + rb

    def _now(self, facts: LagFacts, notes: list[str]) -> dict[str, Any] | None:
        """The replica's clock now in the primary's time ("at"), its bound, the offset's
        fields ("clock") and words; None without a clock reading."""
        if facts.server_time is None:
            return None
        half = (facts.elapsed_ms or 0.0) / 2000.0
        off = self._offset()
        if off is None:
            notes.append("the clocks are not compared yet (taken as equal)")
            return {"at": facts.server_time, "bound": half, "clock": {},
                    "words": "clocks taken as equal (not compared yet)"}
        return {"at": facts.server_time + off[0], "bound": half + off[1],
                "clock": {"clock_offset_s": round(off[0], 4), "clock_bound_s": round(off[1], 4)},
                "words": f"corrected by the clock offset {off[0]:+.3f} s (+/- {off[1]:.3f} s) "
                         "replmon measures between the nodes"}

    def _heartbeat(self, ch: ReplicaChannel, facts: LagFacts, notes: list[str]
                   ) -> dict[str, Any] | None:
        table = facts.table
        if table is None:
            return None
        if facts.heartbeat_error:
            notes.append(facts.heartbeat_error)
            return None
        newest = self.primary_binlog
        sid = ch.source_server_id or (newest.server_id if newest is not None else None)
        ts = facts.heartbeat.get(sid) if sid is not None else None
        if ts is None:
            notes.append(f"heartbeat table {table} has no row of the primary (server_id "
                         f"{sid if sid is not None else 'unknown'}): is pt-heartbeat "
                         "--update running on it?")
            return None
        now = self._now(facts, notes)
        if now is None:
            return None
        return {"seconds": round(max(0.0, now["at"] - ts), 3), "bound_s": round(now["bound"], 3),
                "source": "heartbeat", **now["clock"],
                "detail": (f"pt-heartbeat's row in {table} (server_id {sid}), {now['words']}; "
                           "its age includes pt-heartbeat's --interval")}

    def _server(self, ch: ReplicaChannel, rm: MysqlSample, facts: LagFacts, notes: list[str]
                ) -> dict[str, Any] | None:
        if rm.flavour == "mysql":
            times = next((a for a in facts.applier if a.channel == ch.name), None)
            if times is None:
                return None
            what, resolution = "performance_schema's original commit timestamps", 0.0
            applying, applied = times.applying_commit, times.applied_commit
        elif version_tuple(rm.version) >= (11, 6, 0) and facts.tz_offset_s is not None:
            what, resolution = "Slave_last_event_time", 1.0  # (whole seconds)
            applying, applied = None, (None if ch.replica_event_time is None
                                       else ch.replica_event_time - facts.tz_offset_s)
        else:
            return None
        if applying is None and applied is None and not _caught_up(ch):
            return None
        now = self._now(facts, notes)
        if now is None:
            return None
        if applying is not None:
            lag, how = now["at"] - applying, "the age of the transaction being applied"
        elif _caught_up(ch):
            lag, how = 0.0, "caught up with what it received"
        else:
            lag, how = now["at"] - cast(float, applied), "the age of the newest transaction applied"
        return {"seconds": round(max(0.0, lag), 3), "bound_s": round(now["bound"] + resolution, 3),
                "source": "server", **now["clock"],
                "detail": f"{what}: {how}, {now['words']}"}

    def _history(self, ch: ReplicaChannel, rm: MysqlSample, facts: LagFacts | None,
                 notes: list[str]) -> dict[str, Any]:
        """The age of the oldest reading of the primary's position in the window the replica
        has not executed (pair_lag's history): 0 when it has executed the newest; a lower
        bound while even the window's oldest is not executed."""
        v = version_tuple(rm.version)
        table = "a readable" if facts is not None and facts.table else "a"
        who = f"{server_words(rm)} without {table} heartbeat table" + (
            "" if v < ((11, 6, 0) if rm.flavour == "mariadb" else (8, 0, 0))
            else " or commit timestamps")
        tail = ("; " + "; ".join(notes)) if notes else ""
        ticks, i = self._ticks, self.primary_binlog_at
        now = ticks[-1].wall
        if i < 0:
            return {"detail": (f"{who}: measurable after 2 s of history (no reading of the "
                               f"primary's position yet){tail}")}
        newest_wall = ticks[i].wall
        ok = covered(cast(BinlogStatus, self.primary_binlog), ch)
        if ok is None:
            return {"detail": f"{who}: the two nodes' positions are not comparable{tail}"}
        if ok:
            return {"seconds": 0.0, "bound_s": round(now - newest_wall + ticks[-1].interval, 3),
                    "source": "history",
                    "detail": f"pair_lag's history: the replica has executed the primary's "
                              f"newest position (read {_fmt(now - newest_wall)} s ago){tail}"}
        # the oldest reading the replica lacks: walk back while readings are not covered
        lacking, executed = newest_wall, None
        for j in range(i - 1, -1, -1):
            t = ticks[j]
            pm = t.primary.mysql
            if pm.binlog is not None and pm.status.state is _OK:
                c = covered(pm.binlog, ch)
                if c is None or c:
                    executed = t.wall
                    break
                lacking = t.wall
        lag = now - lacking
        if executed is None:
            return {"at_least_s": round(lag, 1),
                    "detail": (f"{who}: at least {_fmt(lag)} s behind, measurable after more "
                               f"than {_fmt(lag)} s of history ({_fmt(now - ticks[0].wall)} "
                               f"s so far){tail}")}
        return {"seconds": round(lag, 3), "bound_s": round(lacking - executed, 3),
                "source": "history",
                "detail": f"pair_lag's history: the oldest position of the primary not "
                          f"executed was read {_fmt(lag)} s ago{tail}"}
    def _clocks(self) -> tuple[float, float] | None:
        found = self._clock
        if found is _UNREAD:
            last = self._ticks[-1]
            p, r = node_clock(last.primary), node_clock(last.replica)
            found = self._clock = None if p is None or r is None else \
                (p[0] - r[0], p[1] + r[1])
        return found

    @property
    def clock_offset_s(self) -> float | None:
        """Seconds the primary's clock is ahead of the replica's (negative: behind) at the
        last tick, from each node's tighter reading (``node_clock``: Redis INFO or MySQL's
        clock); None unless both nodes have one."""
        found = self._clocks()
        return None if found is None else found[0]

    @property
    def clock_bound_s(self) -> float | None:
        """Seconds ``clock_offset_s`` may be off by (half of each request's time)."""
        found = self._clocks()
        return None if found is None else found[1]

    @property
    def mysql_ok(self) -> bool:
        """Both nodes' MySQL samples of the last tick are ok: the two can be compared."""
        last = self._ticks[-1]
        return last.primary.mysql.status.state is _OK and last.replica.mysql.status.state is _OK

    @property
    def redis_ok(self) -> bool:
        """Both nodes' Redis samples of the last tick are ok."""
        last = self._ticks[-1]
        return last.primary.redis.status.state is _OK and last.replica.redis.status.state is _OK
