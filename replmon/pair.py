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

``PairView.lag`` is the replica's lag measured from both sides (``LagMeasure``): the
pair_lag check judges it and ``check``'s perfdata print it, from this one home. A MariaDB
replica's own ``mysql.gtid_slave_pos`` inserts (``gtid_slave_pos_inserts``) are here too:
stmt_vs_rows leaves them out and the screen says how many it left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replmon.model import gtid
from replmon.model.base import SourceState
from replmon.model.mysql import BinlogStatus, ReplicaChannel
from replmon.model.tick import NodeTick, Role, Tick

LAG_WINDOW_S = 300.0
"""Seconds of ticks the lag is measured over (pair_lag's window): a longer lag reads
"at least 300 s" (``LagMeasure.open``)."""

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


def _file_key(name: str) -> tuple[str, int]:
    """binlog.000012 -> ("binlog", 12): binlog files compare by their number."""
    m = re.match(r"^(.*?)(\d+)$", name)
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


@dataclass(slots=True)
class LagMeasure:
    """The lag of the replica's channel from the primary, measured from both sides at the
    window's last tick (``PairView.lag``)."""

    channel: ReplicaChannel
    newest: BinlogStatus
    """The primary's newest reading."""
    newest_wall: float
    """Its tick's wall time."""
    transactions: int | None = None
    """GTIDs of the primary's newest reading the replica lacks."""
    bytes: int | None = None
    """Bytes of the primary's binlog not executed (same file only)."""
    lag_s: float | None = None
    """Seconds: the age of the oldest primary reading the replica has not executed
    (0 when it has executed the newest); None when not comparable."""
    open: bool = False
    """True when even the oldest reading in the window is not executed: ``lag_s`` is
    a lower bound."""
    hb_lag_s: float | None = None
    """Seconds by the heartbeat table (primary's ts minus the replica's copy)."""


def _heartbeat_lag(p: BinlogStatus, r: BinlogStatus | None) -> float | None:
    """The primary's own heartbeat ts minus the replica's copy of that row, both read in
    the same tick; None without both."""
    if r is None:
        return None
    mine = p.heartbeat.get(p.server_id) if p.server_id is not None else None
    theirs = r.heartbeat.get(p.server_id) if p.server_id is not None else None
    return None if mine is None or theirs is None else max(0.0, mine - theirs)


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


class PairView:
    """Facts about both nodes at the last tick of a window, each worked out when first
    read (``Window.pair``)."""

    __slots__ = ("_binlogs", "_channel", "_channels", "_clock", "_lag", "_primary",
                 "_replica", "_ticks")
    _ticks: Sequence[Tick]
    _primary: tuple[BinlogStatus | None, int]
    _replica: tuple[BinlogStatus | None, int]
    _binlogs: tuple[BinlogStatus, BinlogStatus] | None
    _channels: tuple[ReplicaChannel, ...]
    _channel: ReplicaChannel | None
    _clock: tuple[float, float] | None
    _lag: LagMeasure | None

    def __init__(self, ticks: Sequence[Tick],
                 newest: dict[str, tuple[BinlogStatus | None, int]] | None = None) -> None:
        """``newest``: each role's newest binlog reading and its index in ``ticks``, when
        the caller kept track of them (the engine's windows: ``windows.BinlogMarks``);
        else each is found by looking back through the ticks, all of them for a node
        that never reads one (a replica without log_bin: ~37 us a tick at 300 ticks)."""
        self._ticks = ticks
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
    def lag(self) -> LagMeasure | None:
        """The replica's lag behind the primary at the last tick, measured from both sides
        (``LagMeasure``); None when the primary has no binlog reading in the window or the
        replica no channel from it."""
        found = self._lag
        if found is _UNREAD:
            found = self._lag = self._measure()
        return found

    def _measure(self) -> LagMeasure | None:
        newest, ch = self.primary_binlog, self.channel
        if newest is None or ch is None:
            return None
        ticks, i = self._ticks, self.primary_binlog_at
        wall = ticks[i].wall
        transactions = nbytes = hb_lag = None
        if newest.gtid_executed and ch.gtid_executed:
            transactions = gtid.behind(newest.gtid_executed, ch.gtid_executed)
        if newest.position is not None and ch.exec_source_log_pos is not None \
                and newest.file == ch.relay_source_log_file:
            nbytes = max(0, newest.position - ch.exec_source_log_pos)
        if newest.heartbeat:
            hb_lag = _heartbeat_lag(newest, ticks[i].replica.mysql.binlog)
        ok = transactions == 0 if transactions is not None else covered(newest, ch)
        if ok is None or ok:
            return LagMeasure(ch, newest, wall, transactions, nbytes,
                              None if ok is None else 0.0, hb_lag_s=hb_lag)
        # the oldest reading the replica lacks: walk back while readings are not covered
        # (straight off the ticks: the usual walk is one reading, two ticks back)
        lacking_wall = wall
        j = i - 1
        while j >= 0:
            pm = ticks[j].primary.mysql
            p = pm.binlog if pm.status.state is _OK else None
            if p is not None:
                c = covered(p, ch)
                if c is None or c:
                    break
                lacking_wall = ticks[j].wall
            j -= 1
        return LagMeasure(ch, newest, wall, transactions, nbytes,
                          ticks[-1].wall - lacking_wall, j < 0, hb_lag)

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
