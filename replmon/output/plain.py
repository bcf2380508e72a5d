"""Plain text output: one row per node per tick, orzdba/dstat style.

For narrow ssh sessions and for piping into files. Each row starts with the
time (HH:MM:SS) and the node; then one fixed-width group per source kind. A
source that is not ok prints its state word (unreachable, auth, timeout, ...)
across its group instead of numbers, so a gap in the data is never silent.
Groups whose source is absent on both nodes in the first tick are left out,
which keeps a pair without DRBD within 100 columns. The header is printed
again every ``header_every`` rows.

Columns (per second unless noted):
  host:  usr sys idl wai (CPU %), si so (swap pages in/out), mf (major faults),
         recv send (bytes, all NICs but lo)
  drbd:  cs (connection state of the first peer, short), ds (local/peer disk), oos
         (bytes out of sync)
  mysql: ins upd del sel (statements), rupd (rows updated), lag (s), io/sql (Y/N)
  redis: ops, mem (% of maxmemory, or used bytes without one), link (replica) or
         replica count (master)

Bytes are IEC, as on every view (``replmon.units``), with the unit's first letter in these
narrow columns as ``ls -h`` writes them: 633K = 633 KiB, 1.6M = 1.6 MiB, 64M = 64 MiB.
Counts keep SI's k and M (12k statements/s). The time is the tick's (``tick_clock``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from replmon.engine import Update
from replmon.model.base import SourceState
from replmon.model.findings import Finding
from replmon.model.tick import NodeTick, Tick
from replmon.pipeline import BaseReader
from replmon.units import fmt_bytes_cell, tick_clock

log = logging.getLogger(__name__)


def human(v: float | None, width: int = 5) -> str:
    """A count or its rate in ``width`` characters, SI: 950, 12.3k, 4.5M, 1.2G; '-' when
    unknown. Not for bytes: ``replmon.units.fmt_bytes_cell`` (IEC, as every view)."""
    if v is None:
        return "-".rjust(width)
    a = abs(v)
    for unit, scale in (("", 1.0), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)):
        s = v / scale
        if a < scale * 1000 or unit == "T":
            text = f"{s:.0f}{unit}" if (scale == 1.0 or abs(s) >= 10) else f"{s:.1f}{unit}"
            if len(text) > width and "." in text:
                text = f"{s:.0f}{unit}"
            return text.rjust(width)
    return "?".rjust(width)  # pragma: no cover - loop always returns


def pct(v: float | None, width: int = 3) -> str:
    return "-".rjust(width) if v is None else f"{v:.0f}".rjust(width)


@dataclass(frozen=True)
class Group:
    kind: str
    title: str
    header: str
    render: Callable[[NodeTick], str]

    @property
    def width(self) -> int:
        return len(self.header)


def _host(n: NodeTick) -> str:
    r = n.rates.host
    net = r.net_total
    return " ".join([
        pct(r.cpu_usr_pct), pct(r.cpu_sys_pct), pct(r.cpu_idle_pct), pct(r.cpu_iowait_pct),
        human(r.swap_in_pages_per_s, 4), human(r.swap_out_pages_per_s, 4),
        human(r.major_faults_per_s, 4),
        fmt_bytes_cell(net.recv_bytes_per_s), fmt_bytes_cell(net.send_bytes_per_s),
    ])


_CS_SHORT = {
    "Connected": "Conn", "Established": "Conn", "WFConnection": "WFC", "StandAlone": "StAl",
    "Connecting": "Cing", "Disconnecting": "Disc", "Unconnected": "Unco", "SyncSource": "SyncS",
    "SyncTarget": "SyncT", "NetworkFailure": "NetF", "BrokenPipe": "Brkn", "Timeout": "Tmo",
    "ProtocolError": "Perr", "TearDown": "Tear", "WFReportParams": "WFRP",
    "PausedSyncS": "PSyS", "PausedSyncT": "PSyT", "VerifyS": "VerS", "VerifyT": "VerT",
}
_DS_SHORT = {
    "UpToDate": "U", "Outdated": "O", "Inconsistent": "I", "DUnknown": "?", "Diskless": "D",
    "Consistent": "C", "Negotiating": "N", "Attaching": "A", "Detaching": "d", "Failed": "F",
}


def _drbd(n: NodeTick) -> str:
    s = n.drbd
    conns = [(r, c) for r in s.resources for c in r.connections]
    devs = [d for r in s.resources for d in r.devices]
    if not s.resources:
        return "none".ljust(14)
    cs = "-"
    peer_ds = "?"
    oos = 0
    if conns:
        r, c = conns[0]
        state = c.cs or c.connection_state or "?"
        pds = c.peer_devices[0] if c.peer_devices else None
        if pds is not None and pds.replication_state and pds.replication_state != "Established":
            state = pds.replication_state
        cs = _CS_SHORT.get(state, state[:5])
        if pds is not None:
            peer_ds = _DS_SHORT.get(pds.peer_disk_state or "", "?")
        oos = sum(pd.out_of_sync_kib or 0 for _, cc in conns for pd in cc.peer_devices)
    local = _DS_SHORT.get(devs[0].disk_state or "", "?") if devs else "?"
    return f"{cs:>5} {local}/{peer_ds} {fmt_bytes_cell(oos * 1024, 4)}"


def _yn(v: bool | None) -> str:
    return "-" if v is None else ("Y" if v else "N")


def _mysql(n: NodeTick) -> str:
    r = n.rates.mysql
    m = n.mysql
    lag = "    -"
    io_sql = " - "
    if m.replication:
        ch = m.replication[0]
        lag = human(ch.seconds_behind, 5) if ch.seconds_behind is not None else "NULL".rjust(5)
        io = {"Yes": "Y", "No": "N"}.get(ch.io_running, "c")  # c = Connecting
        io_sql = f"{io}/{_yn(ch.sql_running)}"
    return " ".join([
        human(r.com_insert_per_s), human(r.com_update_per_s), human(r.com_delete_per_s),
        human(r.com_select_per_s), human(r.rows_updated_per_s), lag, io_sql,
    ])


def _redis(n: NodeTick) -> str:
    s = n.redis
    r = n.rates.redis
    if s.maxmemory:
        mem = f"{100 * (s.used_memory or 0) / s.maxmemory:.0f}%".rjust(5)
    else:
        mem = fmt_bytes_cell(s.used_memory)
    if s.role == "replica":
        link = (s.link_status or "?")[:4]
    else:
        link = f"r={s.connected_replicas if s.connected_replicas is not None else '?'}"
    return f"{human(r.ops_per_s, 6)} {mem} {link:>4}"


GROUPS = (
    Group("host", "host", "usr sys idl wai   si   so   mf  recv  send", _host),
    Group("drbd", "drbd", "   cs ds   oos", _drbd),
    Group("mysql", "mysql", "  ins   upd   del   sel  rupd   lag i/s", _mysql),
    Group("redis", "redis", "   ops   mem link", _redis),
)


NAME_MAX = 16
"""Widest node name column; longer names are shortened by ``short_names``."""


def short_names(names: list[str], width: int) -> list[str]:
    """Node names cut to ``width`` so that they still tell the nodes apart: a domain both
    share goes first (db163.example.com, db162.example.com -> db163, db162); then, if
    the starts differ within ``width``, the start is kept ("~" marks the cut), else the
    distinguishing end (db-prod-eu-west-163 -> ~eu-west-163)."""
    parts = [n.split(".") for n in names]
    common = 0
    while (all(len(p) > common + 1 for p in parts)
           and len({p[-1 - common] for p in parts}) == 1):
        common += 1
    numeric = all(x.isdigit() for p in parts for x in p)  # IPv4: no domain to drop
    if common and not numeric and any(len(n) > width for n in names) and len(set(names)) > 1:
        names = [".".join(p[:-common]) for p in parts]
    out = []
    for n in names:
        if len(n) <= width:
            out.append(n)
        elif len({m[: width - 1] for m in names}) == len(set(names)):
            out.append(n[: width - 1] + "~")
        else:
            out.append("~" + n[-(width - 1):])
    return out


class PlainWriter:
    """Writes ticks as aligned text rows to ``out``."""

    def __init__(self, out: TextIO, *, header_every: int = 20, name_width: int | None = None,
                 localtime: Callable[[float], time.struct_time] = time.localtime) -> None:
        self.out = out
        self.header_every = header_every
        self.name_width = name_width or 8
        self._fixed_width = name_width is not None
        self._names: dict[str, str] = {}
        """node name -> the name as shown (``short_names``); by name, not role: a node
        keeps its name when the roles change hands."""
        self._localtime = localtime
        self._groups: tuple[Group, ...] | None = None
        self._rows = 0

    def _choose_groups(self, tick: Tick) -> tuple[Group, ...]:
        chosen = tuple(
            g for g in GROUPS
            if any(getattr(n, g.kind).status.state is not SourceState.ABSENT for n in tick.nodes)
        )
        return chosen or GROUPS

    def header(self) -> str:
        assert self._groups is not None
        lead = "time".ljust(10) + " " + "node".ljust(self.name_width + 2)
        top = " " * len(lead) + "|".join(
            f"-{g.title}".ljust(g.width + 1, "-") + "-" for g in self._groups)
        cols = lead + "|".join(f" {g.header} " for g in self._groups)
        return top.rstrip("-") + "\n" + cols.rstrip()

    def row(self, tick: Tick, node: NodeTick) -> str:
        assert self._groups is not None
        hhmmss = tick_clock(tick.wall, self._localtime)
        mark = "*" if tick.late else " "
        name = self._names.get(node.name, node.name)[: self.name_width].ljust(self.name_width)
        lead = f"{hhmmss}{mark} {node.role[0].upper()} {name}"
        cells = []
        for g in self._groups:
            st = getattr(node, g.kind).status
            if st.state is SourceState.OK:
                text = g.render(node)
            else:
                text = str(st.state.value).center(g.width)
            cells.append(f" {text[: g.width].ljust(g.width)} ")
        return (lead + " " + "|".join(cells)).rstrip()

    def write(self, tick: Tick) -> None:
        if self._groups is None:
            self._groups = self._choose_groups(tick)
            names = [n.name for n in tick.nodes]
            if not self._fixed_width:
                self.name_width = max(4, min(NAME_MAX, max(len(n) for n in names)))
            self._names = dict(zip(names, short_names(names, self.name_width), strict=True))
        if self._rows % self.header_every == 0:
            self.out.write(self.header() + "\n")
        for node in tick.nodes:
            self.out.write(self.row(tick, node) + "\n")
        self._rows += 2


def finding_row(tick: Tick, f: Finding, what: str,
                localtime: Callable[[float], time.struct_time] = time.localtime) -> str:
    """A finding as one line between the rows: '15:02:31 ! CRITICAL replica ...'. An
    opening says the finding's since-time, as the findings table, its detail and the
    report do (the rows above it show the tick it opened in); a closing its tick's."""
    hhmmss = tick_clock(f.since_wall if what == "open" else tick.wall, localtime)
    mark = "!" if what == "open" else "="
    sev = (f.severity if what == "open" else f.worst).label.upper()  # a closing: its worst
    title = f.story_text() if what != "open" and f.told else f.headline
    return f"{hhmmss}{mark} {sev:<8} {f.node:<7} {f.check}: {title} [{what}]"


class PlainReader(BaseReader):
    """The pipeline's text-row reader (``--plain``): rows per tick, a line per finding
    opened or closed. Threaded: a stalled terminal or pipe never delays sampling."""

    name = "plain"

    def __init__(self, out: TextIO, *, inline: bool = False) -> None:
        self.out = out
        self.writer = PlainWriter(out)
        self.inline = inline
        """True over a recording: every tick written, the reader sets the pace."""

    def on_drop(self, n: int) -> None:
        self.out.write(f"# {n} tick(s) not written: this output fell behind\n")

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        try:
            self.writer.write(tick)
            if update is not None:
                for f in update.opened:
                    self.out.write(finding_row(tick, f, "open") + "\n")
                for f in update.closed:
                    self.out.write(finding_row(tick, f, "closed") + "\n")
            self.out.flush()
        except BrokenPipeError:
            _quiet(self.out)
            raise


def _quiet(out: TextIO) -> None:
    """After a broken pipe: point ``out`` at /dev/null, so the interpreter's flush at exit
    does not print a second error (Python's documented SIGPIPE advice)."""
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, out.fileno())
        os.close(fd)
    except (OSError, ValueError):  # not a real file (a StringIO in tests)
        pass


class JsonLinesReader(BaseReader):
    """``sample --json``: one JSON object per tick."""

    name = "json"

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def on_drop(self, n: int) -> None:
        log.warning("%d tick(s) not written: the JSON output fell behind", n)

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        try:
            self.out.write(tick.model_dump_json() + "\n")
            self.out.flush()
        except BrokenPipeError:
            _quiet(self.out)
            raise


class FindingLog(BaseReader):
    """Findings opened/closed to the log (``record``, a daemon's journal)."""

    name = "finding-log"
    inline = True

    def on_tick(self, tick: Tick, update: Update | None) -> None:
        if update is None:
            return
        for f in update.opened:
            log.warning("finding opened: %s %s %s: %s", f.severity.label, f.node, f.check,
                        f.title)
        for f in update.closed:
            log.info("finding closed: %s %s: %s", f.node, f.check,
                     f.story_text() if f.told else f.headline)
