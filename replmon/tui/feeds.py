"""The ticks coming in to the screen. The feeds: the live collector, or a fixed list
(snapshots); a recording's feed lives with the session reader; the tests push theirs
one by one (tests/tui/feed.py). The screen as a pipeline reader (``Poster``) and the
messages it posts, and what the screen keeps of every tick (``TickMemory``), also of
ticks whose message a newer one replaced."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import Protocol

from textual.message import Message

from replmon.collector import Collector
from replmon.engine import Update
from replmon.model.findings import Finding
from replmon.model.mysql import BinlogStatus
from replmon.model.tick import Tick
from replmon.pair import gtid_slave_pos_inserts  # what stmt_vs_rows leaves out, shown
from replmon.pipeline import BaseReader
from replmon.tui.graphs import Point, points
from replmon.tui.processlist import Snapshot, Snapshots

HISTORY = 300
"""Ticks of sparkline history kept per node (5 minutes at 1 Hz); bounded."""


async def live(collector: Collector) -> AsyncIterator[Tick]:
    """Every tick of an opened collector, until the app stops."""
    async for tick in collector.ticks(None):
        yield tick


async def from_list(ticks: Iterable[Tick]) -> AsyncIterator[Tick]:
    """A fixed sequence, as fast as the app takes it; then the feed ends."""
    for tick in ticks:
        yield tick


class TickReceived(Message):
    def __init__(self, tick: Tick, findings: list[Finding]) -> None:
        super().__init__()
        self.tick = tick
        self.findings = findings

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TickReceived)


class FeedEnded(Message):
    pass


class ShowsTicks(Protocol):
    def show_tick(self, tick: Tick, findings: list[Finding]) -> None: ...


class Poster(BaseReader):
    """The screen as a pipeline reader: inline, it only posts a message."""

    name = "screen"
    inline = True

    def __init__(self, app: ShowsTicks) -> None:
        self.app = app

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        self.app.show_tick(tick, update.open if update is not None else [])


class TickMemory:
    """What the screen keeps of every tick the feed gives (also ticks whose message was
    folded): sparkline and graph points, processlists, binary-log readings, the rows a
    MariaDB replica wrote to mysql.gtid_slave_pos."""

    def __init__(self) -> None:
        self.ticks_seen = 0
        """Ticks the worker took from the feed (the engine saw each one)."""
        self.history: dict[str, dict[str, deque[float]]] = {
            role: {"qps": deque(maxlen=HISTORY), "ops": deque(maxlen=HISTORY)}
            for role in ("primary", "replica")}
        """Sparkline data, appended for every tick."""
        self.processlists: Snapshots = {"primary": None, "replica": None}
        """Each node's newest processlist (read while the w view is open, and after a
        finding opens when recording)."""
        self.last_seen: Tick | None = None
        self.gtid_rows: dict[float, float] = {}
        """Per tick (by wall time): rows/s a MariaDB replica wrote to mysql.gtid_slave_pos
        (checks/stmt_vs_rows.py's count: the growth of Gtid_Slave_Pos since the tick
        before), said under its rows/s."""
        self.graph_history: deque[Point] = deque(maxlen=HISTORY)
        """Every chart's values of the last HISTORY ticks (the graph view, key g)."""
        self.binlog_readings: dict[str, tuple[BinlogStatus, float]] = {}
        """Each node's newest binary-log reading and its tick's wall time (read every 2 s,
        not in every tick: the mysql group's detail shows the newest, with its age)."""

    def remember(self, tick: Tick) -> None:
        """Every tick's sparkline and graph points and processlists."""
        self.graph_history.append(points(tick))
        self.remember_binlogs(tick)
        for node in tick.nodes:
            if (snap := Snapshot.of(node, tick.wall)) is not None:
                self.processlists[node.given_role] = snap
            h = self.history[node.given_role]  # its column's, through a switchover
            h["qps"].append(node.rates.mysql.qps or 0.0)
            h["ops"].append(node.rates.redis.ops_per_s or 0.0)
        self.ticks_seen += 1
        prev, self.last_seen = self.last_seen, tick
        if prev is not None and 0 < tick.wall - prev.wall <= 1.5 * tick.interval \
                and prev.replica.name == tick.replica.name:  # (not across a switchover)
            g = gtid_slave_pos_inserts(tick.replica, prev.replica)
            if g is not None:
                self.gtid_rows[tick.wall] = g
                while len(self.gtid_rows) > 8:  # only the ticks waiting to be shown
                    del self.gtid_rows[next(iter(self.gtid_rows))]

    def remember_binlogs(self, tick: Tick) -> None:
        """Keep each node's binary-log reading of this tick, if it has one."""
        for node in tick.nodes:
            if node.mysql.status.ok and node.mysql.binlog is not None:
                self.binlog_readings[node.name] = (node.mysql.binlog, tick.wall)

    def binlogs(self, tick: Tick) -> dict[str, tuple[BinlogStatus, float]]:
        """Each node's newest binary-log reading up to ``tick`` and its age then."""
        return {name: (b, tick.wall - wall) for name, (b, wall) in self.binlog_readings.items()
                if wall <= tick.wall}

    def restart(self) -> None:
        """After a jump in a replay: the sparklines restart there."""
        for h in self.history.values():
            for series in h.values():
                series.clear()
