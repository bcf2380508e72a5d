"""Modal screens: help, and one finding's numbers, cause and next step."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from replmon.model.findings import STORY_LAST, Finding
from replmon.model.tick import NodeTick, Tick
from replmon.tui.detail import GROUPS, Reading, side_by_side
from replmon.tui.header import columns
from replmon.tui.render import DIFF_STYLE, SEV_STYLE
from replmon.tui.wrap import Wrapped, wrap_text
from replmon.units import fmt_number, fmt_setting, tick_clock

HELP = """\
[b]replmon[/b]: primary | replica, side by side, one update per tick.
Each node keeps its column (the one given as the primary on the
left): its title says its role now, with "since" the time of a
switchover; the header's arrows point from primary to replica.

[b]keys[/b]
  q      quit (from any view)     p       pause the screen
  tab    next panel               f       findings list
  ?      this help                escape  back (close any view)
  enter  details of the selected finding (numbers, likely cause,
         next step); on a group (tab to it): that group in full
         for both nodes, as of the tick shown (it follows each
         tick; tab: next group)
  d      the two nodes' settings side by side (config drift)
  g      graphs (G in a replay): both nodes overlaid per metric,
         clock time axis, findings' onsets marked and named under
         each chart; in a replay a cursor at the tick shown (it
         follows ← → and play), n/N move it to a finding
  w      who is doing it: the longest-running statements on both
         nodes (MySQL processlist, read every 3 s while open; in a
         replay the lists stored near the tick shown: a recording
         keeps them from the tick after a finding opens)
  replay space play/pause, n / N next/previous finding, ← → one
         tick, g go to a time or tick (03:12:00, +90s, #1234: #1
         is the first), + / - faster / slower

[b]host[/b]   cpu % user/system/idle/iowait, st = steal (a VM's, when
       any); mem = available %, load = 1-min load; swap = swap
       used, in/out = swap pages/s, mf = major faults/s (red when
       paging to swap; yellow on a host without swap: file pages
       read back); disk r/w bytes/s, await ms, busiest disk's
       util %; net rx/tx bytes/s, busiest NIC % of its capacity
       (a shaper's rate, tbf or cake, when below its speed); or,
       told by the node's routes, repl = the NIC to the replica's
       source address (replication), mon = the NIC to the address
       replmon's ssh comes from, else other = the busiest other
       NIC: each rx/tx bytes/s, % of its capacity, its name. A host
       with swap keeps its swap line on a short screen (without
       swap, it is the first to go)
[b]drbd[/b]   resource, role, connection, peer role, disk/peer disk;
       oos = out of sync, pend/unack = peer requests pending / not
       acknowledged, ap = application sectors
[b]mysql[/b]  stmt/s: cli = statements from clients (Questions);
       i/u/d/s = INSERT/UPDATE/DELETE/SELECT statements (Com_*),
       on a replica with those its applier replays (statement-
       based events); rows/s i/u/d/r = rows changed/read
       (Innodb_rows_* or Handler_*), on a replica with its
       applier's; a MariaDB replica's Handler_* include its
       mysql.gtid_slave_pos rows: "incl." says how many; bp =
       buffer pool hit %; rtt = round trip of a COM_PING; conn =
       clients connected (Threads_connected); run = threads
       running (Threads_running: the server's own count too, so
       a replica's run can be above its conn); ro = read_only,
       io/sql threads, lag = Seconds_Behind_*; true lag = the
       replica's lag measured on both nodes (the header's =sql=>)
[b]redis[/b]  op/s, keyspace hit %, rtt of PING, cli = clients; memory
       against maxmemory; role, replicas or link, replication
       offset lag in bytes; with --sentinel, what Sentinel says of
       the node: master (ep = config epoch, q = quorum/Sentinels
       known), S_DOWN/O_DOWN, a failover's state, or replica
[b]≠[/b]      the two nodes disagree where they should not: rows
       written per s more than 2x apart (a replica not applying,
       writes that do not replicate)
stmt/rds sparklines: the last 5 minutes of statements/s and Redis
ops/s, tallest = max

[b]findings[/b]: the open ones, worst first, each cause with its
consequences under it (└); then, dimmed, those closed in the last
10 minutes: "closed 14:05:12 after 42 s". A title's numbers are
this tick's while its condition holds; once it no longer does, the
title says "as of" the last tick it held.

[b]at 80x24[/b] (under 32 rows): no sparklines, no header row over
the findings, no group absent on both nodes. While the findings
need the rows, lines of figures give way, least important first:
incl., swap, net, bp, disk, redis mem, host mem, rows/s (never one
with a value in red). A line too long for its column loses its
last figures. enter on a group shows it all.

A source that cannot be read shows its state (UNREACHABLE,
TIMEOUT, AUTH...) and error in place of its numbers. The header
turns red with STALE when no tick came for 3 intervals.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "dismiss", "Back"), Binding("q", "app.quit", "Quit"),
                Binding("question_mark", "dismiss", "Back", show=False)]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(HELP)
        yield Footer()  # its keys at the bottom (the overview's are not the ones here)

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)


def story_lines(f: Finding) -> list[str]:
    """A finding's story, a line a step: "15:55:36 CRIT IO thread Connecting ...", then
    each change, "(2 more changes)" where some were left out, "15:56:40 closed"."""
    out = []
    gap = len(f.story) - 1 - STORY_LAST
    for i, s in enumerate(f.story):
        if i == gap + 1 and f.story_dropped and i > 0:
            out.append(f"         ({f.story_dropped} more changes)")
        out.append(f"{tick_clock(s.wall)} {s.severity.label[:4].upper():4} {s.title}")
    if f.state == "closed" and f.closed_wall is not None:
        out.append(f"{tick_clock(f.closed_wall)} closed")
    return out


def replay_since(f: Finding) -> str:
    """When a finding holds from, in a replay: "since" is when its condition began, as
    every other view says it (the list, check, report), and the tick named is one that
    shows it open (its story's first step; the hysteresis' ticks before it show
    nothing): "since 16:12:52 (open from tick #32, 16:12:53)". A recording made before
    stories were kept knows the condition's start only."""
    since = tick_clock(f.since_wall)
    if not f.story:
        return f"since {since} (tick #{f.since_seq + 1})"
    first = f.story[0]
    if first.wall <= f.since_wall:
        return f"since {since} (tick #{first.seq + 1})"
    return f"since {since} (open from tick #{first.seq + 1}, {tick_clock(first.wall)})"


def finding_numbers(f: Finding, lacking: frozenset[str] = frozenset()
                    ) -> list[tuple[str, str]]:
    """A finding's numbers as its view writes them (bytes by the unit in the name, as
    every view: ``fmt_number``), less those its node's server never has (``lacking``)
    that did not arrive: "unknown" only for what the server has."""
    return [(k, fmt_number(k, v)) for k, v in f.numbers.items()
            if not (v is None and k in lacking)]


class Numbers:
    """A finding's numbers, a name and its value a line; a value that does not fit beside
    its name goes on the next line under it, whole (a source_uuid is never cut), or
    wrapped between its words."""

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        names = max((len(k) for k, _ in self.rows), default=0) + 2
        out = []
        for k, v in self.rows:
            line = Text(k.ljust(names), style="dim")
            if names + len(v) <= width:
                line.append(v, style="bold")
            else:
                line = Text(k, style="dim")
                for part in wrap_text(Text(v, style="bold"), max(1, width - 4)):
                    line.append("\n    ")
                    line.append_text(part)
            out.append(line)
        yield Text("\n").join(out)


class FindingScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "dismiss", "Back"), Binding("q", "app.quit", "Quit"),
                Binding("enter", "dismiss", "Back", show=False)]

    def __init__(self, finding: Finding, nodes: dict[str, str] | None = None,
                 lacking: frozenset[str] = frozenset()) -> None:
        """``nodes``: role -> name, for a finding that carries no name (``Finding.where``);
        ``lacking``: numbers its node's server never has (a MariaDB replica has no
        source_uuid: ``channel_fields_lacking``), left out when unknown; "unknown" stays
        for a number the server has but that did not arrive."""
        super().__init__()
        self.finding = finding
        self.nodes = nodes
        self.lacking = lacking

    def compose(self) -> ComposeResult:
        f = self.finding
        head = Text()
        level = f.worst if f.state == "closed" else f.severity  # a closed one: its worst
        head.append(f" {level.label.upper()} ", style=SEV_STYLE[level])
        head.append(f" {f.where(self.nodes)}  {f.check}", style="bold")
        if getattr(self.app, "TICKS_NUMBERED", False):  # a replay: where in the recording
            since = replay_since(f)
        else:  # live: a tick's number since replmon started says nothing; how long does
            end = f.closed_wall if f.closed_wall is not None else f.last_wall
            held = "" if end is None else f", for {max(0.0, end - f.since_wall):.0f} s"
            since = f"since {tick_clock(f.since_wall)}{held}"
        head.append(f"  {since}\n\n", style="dim")
        head.append(f.headline + "\n", style="bold")
        if f.worst_words:  # it was worse than it is now: say so before its numbers now
            head.append(f"\n{f.worst_words}\n", style=SEV_STYLE[f.worst])
        nums = Numbers(finding_numbers(f, self.lacking))
        tail = Text()
        if f.told:  # how it opened, each change of severity or words, when it closed
            tail.append("\nstory\n", style="bold underline")
            for line in story_lines(f):
                tail.append(line + "\n")
        if f.cause:
            tail.append("\nlikely cause\n", style="bold underline")
            tail.append(f.cause + "\n")
        if f.next_step:
            tail.append("\nnext step\n", style="bold underline")
            tail.append(f.next_step + "\n")
        with VerticalScroll(id="finding"):
            yield Static(head)
            yield Static(nums)
            yield Static(tail)
        yield Footer()  # its keys at the bottom (the overview's are not the ones here)

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)


DRIFT_ROWS: tuple[tuple[str, str, Callable[[NodeTick], object]], ...] = (
    # (group, setting, how to read it); "differ" settings must NOT be equal
    ("mysql", "version", lambda n: n.mysql.version or None),
    ("mysql", "server_id", lambda n: n.mysql.variables.get("server_id")),
    ("mysql", "read_only", lambda n: n.mysql.variables.get("read_only")),
    ("mysql", "auto_increment_increment",
     lambda n: n.mysql.variables.get("auto_increment_increment")),
    ("mysql", "auto_increment_offset", lambda n: n.mysql.variables.get("auto_increment_offset")),
    ("mysql", "binlog_format", lambda n: n.mysql.variables.get("binlog_format")),
    ("mysql", "log_bin", lambda n: n.mysql.variables.get("log_bin")),
    ("mysql", "sync_binlog", lambda n: n.mysql.variables.get("sync_binlog")),
    ("mysql", "innodb_flush_log_at_trx_commit",
     lambda n: n.mysql.variables.get("innodb_flush_log_at_trx_commit")),
    ("mysql", "gtid_mode", lambda n: n.mysql.variables.get("gtid_mode")),
    ("mysql", "gtid_strict_mode", lambda n: n.mysql.variables.get("gtid_strict_mode")),
    ("mysql", "max_connections", lambda n: n.mysql.variables.get("max_connections")),
    ("mysql", "innodb_buffer_pool_size",
     lambda n: n.mysql.variables.get("innodb_buffer_pool_size")),
    # config_drift's key is the MySQL 8.0.26+ name; a node may report the older one
    *(("mysql", name, lambda n, names=names: next(
        (n.mysql.variables[v] for v in names if v in n.mysql.variables), None))
      for name, names in (
          ("lower_case_table_names", ("lower_case_table_names",)),
          ("sql_mode", ("sql_mode",)),
          ("log_replica_updates", ("log_replica_updates", "log_slave_updates")),
          ("enforce_gtid_consistency", ("enforce_gtid_consistency",)),
          ("binlog_row_image", ("binlog_row_image",)),
          ("collation_server", ("collation_server",)),
          ("time_zone", ("time_zone",)),
          ("transaction_isolation", ("transaction_isolation", "tx_isolation")),
          ("max_allowed_packet", ("max_allowed_packet",)),
          ("replica_max_allowed_packet",
           ("replica_max_allowed_packet", "slave_max_allowed_packet")),
          ("replica_parallel_workers", ("replica_parallel_workers", "slave_parallel_threads",
                                        "slave_parallel_workers")),
          ("replica_preserve_commit_order",
           ("replica_preserve_commit_order", "slave_preserve_commit_order")))),
    ("redis", "redis version", lambda n: n.redis.product),
    ("redis", "maxmemory", lambda n: n.redis.maxmemory),
    ("redis", "maxmemory-policy", lambda n: n.redis.maxmemory_policy),
    ("redis", "min-replicas-to-write",
     lambda n: n.redis.min_replicas),
    ("redis", "appendonly",
     lambda n: None if n.redis.aof_enabled is None else ("yes" if n.redis.aof_enabled else "no")),
    ("redis", "repl-backlog-size", lambda n: n.redis.repl_backlog_size),
    ("redis", "client-output-buffer-limit replica",
     lambda n: n.redis.replica_buffer_limit or None),
)
"""The rows of the drift view, named as config_drift names its findings' keys so an open
finding lands on its row (a test keeps the two in step: the view is presentation, the
check plug-in the judgement, and the product reaches check modules only through
replmon.plugins)."""
MUST_DIFFER = {"server_id", "read_only"}
"""Settings a pair needs different on its two nodes (read_only: ON on the replica)."""


DRIFT_SIDE_BY_SIDE = 120
"""Columns from which the drift view puts each node's value in a column of its own (~34
cells each); narrower, a setting's two values sit one above the other beside its name
(one line when they agree), so a value keeps ~36 cells (a MariaDB version whole)."""


def drift_rows(tick: Tick) -> list[tuple[str, object, object]]:
    """(setting, left node's value, right node's value) of each setting either node has."""
    left, right = columns(tick)  # each node in its column of the overview
    rows = []
    for group, name, get in DRIFT_ROWS:
        a, b = (get(left) if left.statuses()[group].ok else None,
                get(right) if right.statuses()[group].ok else None)
        if a is not None or b is not None:
            rows.append((name, a, b))
    return rows


def _value(name: str, v: object) -> str:
    return "-" if v is None else fmt_setting(name, v)


def drift_table(tick: Tick, findings: list[Finding], width: int = DRIFT_SIDE_BY_SIDE
                ) -> Table:
    """The settings side by side; a "≠" where they disagree and should not (or agree and
    should not), a finding's severity where config_drift (or two_primaries) has one open.
    Values wrap between words and after commas only (``Wrapped``)."""
    open_keys = {f.key: f for f in findings if f.check == "config_drift"}
    writable = any(f.check == "two_primaries" for f in findings)
    wide = width >= DRIFT_SIDE_BY_SIDE
    table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
    table.add_column("", no_wrap=True, min_width=6 if wide else 4)  # the mark, a finding
    # the names whole (innodb_flush_log_at_trx_commit), or wrapped at their space
    # the names whole on one line ("client-output-buffer-limit replica" split over two
    # left a row with no value)
    table.add_column("setting", min_width=max(len(name) for _, name, _ in DRIFT_ROWS),
                     no_wrap=True)
    left, right = columns(tick)
    tags = [node.role[0].upper() for node in (left, right)]
    if wide:
        for node in (left, right):
            table.add_column(f"{node.role} {node.name}")
    else:
        table.add_column(f"{tags[0]} / {tags[1]}")
    for name, a, b in drift_rows(tick):
        same = a == b
        bad = (a is not None and b is not None
               and (same if name in MUST_DIFFER else not same))
        f = open_keys.get(name)
        if name == "read_only" and writable:
            bad = True
        mark = Text("≠", style=DIFF_STYLE) if bad else Text("")
        sev = Text(f"{f.severity.label[:4].upper()}", style=SEV_STYLE[f.severity]) \
            if f is not None else Text("")
        head = Text.assemble(mark, " ", sev) if wide else Text("\n").join(
            [t for t in (mark, sev) if t.plain])
        label = Wrapped(name, style="bold" if bad else "")
        va, vb = _value(name, a), _value(name, b)
        if wide:
            table.add_row(head, label, Wrapped(va), Wrapped(vb))
            continue
        both = Table.grid(padding=(0, 1))
        both.add_column(style="dim", no_wrap=True)
        both.add_column()
        for tag, v in ([("", va)] if same else [(tags[0], va), (tags[1], vb)]):
            both.add_row(tag, Wrapped(v))
        table.add_row(head, label, both)
    return table


class FollowsTicks:
    """A view the app hands every tick it shows, live and in a replay (``ReplmonApp.
    follow``), so it never goes stale: a group's detail, the drift, a replay's graphs."""

    def tick_shown(self, tick: Tick, findings: list[Finding]) -> None:
        raise NotImplementedError


class TickView(FollowsTicks):
    """A view drawn from the one tick shown, under its "as of" (a group's detail, the
    drift): redrawn with every tick, on mount and on a resize."""

    tick: Tick
    findings: list[Finding]

    def tick_shown(self, tick: Tick, findings: list[Finding]) -> None:
        self.tick, self.findings = tick, findings
        self.show()

    def show(self) -> None:
        """Draw the view from ``self.tick`` (also on mount and on a resize)."""
        raise NotImplementedError

    def on_mount(self) -> None:
        self.show()

    def on_resize(self) -> None:
        self.show()


def as_of(app: object, tick: Tick) -> str:
    """"as of 14:03:12" (and, in a replay, which tick of the recording): the app's words
    for the tick a view shows (``ReplmonApp.as_of``)."""
    said = getattr(app, "as_of", None)
    return said(tick) if callable(said) else f"as of {tick_clock(tick.wall)}"


class DriftScreen(TickView, ModalScreen[None]):
    """Settings of both nodes side by side (key d): the drift config_drift judges."""

    BINDINGS = [Binding("escape", "dismiss", "Back"), Binding("q", "app.quit", "Quit"),
                Binding("d", "dismiss", "Back", show=False)]

    def __init__(self, tick: Tick, findings: list[Finding]) -> None:
        super().__init__()
        self.tick, self.findings = tick, findings

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="drift"):
            yield Static(id="drift-head")
            yield Static(id="drift-body")
        yield Footer()  # its keys at the bottom (the overview's are not the ones here)

    def show(self) -> None:
        left, right = columns(self.tick)
        head = Text(f"settings {as_of(self.app, self.tick)}\n", style="bold")
        if self.app.size.width < DRIFT_SIDE_BY_SIDE:
            head.append(", ".join(f"{n.role[0].upper()} = {n.role} {n.name}"
                                   for n in (left, right)), style="bold")
            head.append(" (one value: both)\n", style="dim")
        head.append("≠ = differ where they must agree (server_id, read_only: the other way "
                    "round); a finding's severity where one is open\n", style="dim")
        self.query_one("#drift-head", Static).update(head)
        self.query_one("#drift-body", Static).update(
            drift_table(self.tick, self.findings, self.app.size.width))

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)


class DetailScreen(TickView, Screen[None]):
    """One group in full for both nodes (enter on a group of the overview), as of the tick
    shown, redrawn with every tick; tab moves to the next group, escape goes back."""

    BINDINGS = [Binding("escape", "dismiss", "Back"), Binding("q", "app.quit", "Quit"),
                Binding("tab", "next_group(1)", "Next group"),
                Binding("shift+tab", "next_group(-1)", "Previous group", show=False)]

    def __init__(self, tick: Tick, group: str,
                 binlogs: Callable[[Tick], dict[str, Reading]] | None = None) -> None:
        """``binlogs(tick)``: each node's newest binary-log reading and its age then."""
        super().__init__()
        self.tick, self.group, self.binlogs = tick, group, binlogs
        self.findings: list[Finding] = []

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(id="detail-head")
            yield Static(id="detail-body")
        yield Footer()  # a full screen of its own: its keys at the bottom

    def show(self) -> None:
        self.query_one("#detail-head", Static).update(Text(
            f"{self.group} in full, {as_of(self.app, self.tick)} (tab: next group)",
            style="dim"))
        self.query_one("#detail-body", Static).update(side_by_side(
            self.tick, self.group, width=self.app.size.width,
            binlogs=self.binlogs(self.tick) if self.binlogs else None))

    def action_next_group(self, step: int) -> None:
        self.group = GROUPS[(GROUPS.index(self.group) + step) % len(GROUPS)]
        self.show()

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)
