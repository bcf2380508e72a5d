"""Modal screens: help, and one finding's numbers, cause and next step."""

from __future__ import annotations

import time

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from replmon.model.findings import Finding
from replmon.tui.render import SEV_STYLE

HELP = """\
[b]replmon[/b]: primary | replica, side by side, one update per tick.

[b]keys[/b]
  q        quit                    p      pause the screen (checks keep running)
  tab      next panel              f      findings list
  enter    details of the selected finding (numbers, likely cause, next step)
  ?        this help               escape close this window

[b]host[/b]   cpu % user/system/idle/iowait; mem = available %, load = 1-min load;
       swap = swap used, in/out = swap pages/s, mf = major faults/s (red when paging);
       disk r/w bytes/s, await ms, busiest disk util %; net rx/tx bytes/s, busiest NIC %
[b]drbd[/b]   resource, role, connection, peer role, disk/peer disk; oos = out of sync,
       pend/unack = peer requests pending / not acknowledged, ap = application sectors
[b]mysql[/b]  stmt/s = client statements/s, i/u/d/s = INSERT/UPDATE/DELETE/SELECT per s;
       rows/s i/u/d/r = rows changed/read per s (Innodb_rows_* or Handler_*); bp = buffer
       pool hit %; thd = threads running/connected; rtt = round trip of SELECT 1;
       repl ro = read_only, io/sql threads, lag = Seconds_Behind_Master
[b]redis[/b]  ops/s, hit %, cli = clients, rtt of PING; memory against maxmemory; role, link,
       replication offset lag in bytes
[b]≠[/b]      the two nodes disagree where they should not: rows written per s more than
       2x apart (a replica not applying, writes that do not replicate)
stmt/rds sparklines: the last 5 minutes of statements/s and Redis ops/s, tallest = max

A source that cannot be read shows its state (UNREACHABLE, TIMEOUT, AUTH...) and error
in place of its numbers. The header turns red with STALE when no tick came for 3 intervals.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(HELP)

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)


class FindingScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close")]

    def __init__(self, finding: Finding) -> None:
        super().__init__()
        self.finding = finding

    def compose(self) -> ComposeResult:
        f = self.finding
        head = Text()
        head.append(f" {f.severity.label.upper()} ", style=SEV_STYLE[f.severity])
        head.append(f" {f.node}  {f.check}", style="bold")
        head.append(f"  since {time.strftime('%H:%M:%S', time.localtime(f.since_wall))}"
                    f" (tick {f.since_seq})\n\n", style="dim")
        head.append(f.headline + "\n", style="bold")
        nums = Table.grid(padding=(0, 2))
        for k, v in f.numbers.items():
            nums.add_row(Text(k, style="dim"), Text(str(v), style="bold"))
        tail = Text()
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

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)
