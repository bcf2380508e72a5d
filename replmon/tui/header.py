"""The header line: both nodes' names and roles, each service's replication between
them, the worst finding and the data's age; and the columns' order (a node keeps its
column through a switchover)."""

from __future__ import annotations

from rich.text import Text

from replmon.model.base import SourceState
from replmon.model.findings import Finding, Severity
from replmon.model.tick import NodeTick, Tick
from replmon.tui.render import SEV_STYLE, lag_figure


def header_text(tick: Tick | None, findings: list[Finding], *, age_s: float | None,
                paused: bool = False, source: str = "live", width: int | None = None) -> Text:
    """The pair at a glance: names and roles, replication, worst finding, data age; in
    ``width`` cells: shorter words first ("CRIT", "0.4s"), then the less important text
    left out (the data's age while it is fresh, the "+1" of more findings), and only then
    shorter names: the nodes' names win over all but the worst finding's check, never
    cut."""
    if tick is None:
        return Text(" waiting for the first tick...", style="dim")
    out = Text()
    longest = max(len(tick.primary.name), len(tick.replica.name))
    for short, node, less, names in (
            (False, True, 0, None), (True, True, 0, None), (True, False, 0, None),
            (True, False, 1, None), (True, False, 2, None),
            *((True, False, 2, n) for n in range(longest - 1, 3, -1))):
        out = _header(tick, findings, age_s, paused, source, short=short, node=node,
                      names=names, less=less)
        if source == "replay":  # its own end follows: no blank age slot before it
            out.rstrip()
        if width is None or out.cell_len <= width:
            break
    return out


def _name(name: str, limit: int | None) -> str:
    return name if limit is None or len(name) <= limit else name[:limit - 1] + "…"


def service_roles_note(tick: Tick, node: NodeTick) -> str:
    """``node``'s roles in the services where they are not its role in the pair: "redis
    replica" for the MySQL primary whose Redis Sentinel failed over ("" when none)."""
    roles = tick.roles
    if roles is None:
        return ""
    have = [lr.layer for lr in roles.layers if lr.flipped is not None]
    return ", ".join(f"{svc} {role}" for svc in have
                     if (role := tick.service_role(node, svc)) != node.role)


SHORT_SERVICES = {"mysql": "sql", "redis": "rds", "drbd": "drbd"}
"""The services as the header's arrows name them (=sql=>, <=rds=)."""


def short_services(note: str) -> str:
    """``service_roles_note`` in the header's words: "redis replica" -> "rds replica"."""
    return ", ".join(" ".join([SHORT_SERVICES.get(w[0], w[0]), *w[1:]])
                     for part in note.split(", ") if (w := part.split()))


def columns(tick: Tick) -> tuple[NodeTick, NodeTick]:
    """The tick's nodes as the overview places them: the node given as the primary on
    the left, whatever its role now (a recording from before roles were observed has no
    ``given``: its role), so a node keeps its column through a switchover."""
    p, r = tick.primary, tick.replica
    return (r, p) if p.given_role == "replica" else (p, r)


def _header(tick: Tick, findings: list[Finding], age_s: float | None, paused: bool,
            source: str, *, short: bool, node: bool = True, names: int | None = None,
            less: int = 0) -> Text:
    """``less``: 1 without the data's age while it is fresh (STALE, PAUSED stay), 2 also
    without the count of more findings."""
    t = Text()
    left, right = columns(tick)
    left_given = left.given_role
    back = False  # the service's primary is in the right column: its arrow points left

    def arrow(label: str, style: str) -> None:
        t.append(f"<={label}= " if back else f"={label}=> ", style=style)

    def service(name: str) -> tuple[NodeTick, NodeTick]:
        """The service's primary and replica (each service has its own), and which
        way its arrow points."""
        nonlocal back
        p_, r_ = tick.oriented(name).nodes
        back = p_.given_role != left_given
        return p_, r_

    t.append(f" {_name(left.name, names)} ", style="bold reverse")
    t.append(" ")
    p, r = service("mysql")
    ch = r.mysql.replication[0] if r.mysql.status.ok and r.mysql.replication else None
    if r.mysql.status.state not in (SourceState.OK, SourceState.ABSENT):
        arrow("sql ?", "bold red")
    if ch is not None:
        healthy = ch.io_running == "Yes" and ch.sql_running
        # the true lag as the replica's panel says it (one figure in both places), else
        # what the server says
        lag = lag_figure(tick.lag) or (
            "NULL" if ch.seconds_behind is None else f"{ch.seconds_behind}s")
        arrow(f"sql {lag}" if healthy else "sql BROKEN", "green" if healthy else "bold red")
    p, r = service("drbd")
    if p.drbd.status.ok and p.drbd.resources:
        conns = [c for res in p.drbd.resources for c in res.connections]
        # DRBD 8 users read WFConnection/SyncSource: show the raw cs where there is one.
        shown = {c.cs or c.connection_state or "?" for c in conns}
        connected = all(c.connection_state == "Connected" for c in conns)
        if connected and shown <= {"Connected"}:
            arrow("drbd", "green")
        else:
            arrow(f"drbd {'/'.join(sorted(shown))}",
                  "bold yellow" if connected else "bold red")
    p, r = service("redis")
    if r.redis.status.ok and r.redis.role == "replica":
        up = r.redis.link_status == "up"
        arrow("rds" if up else "rds DOWN", "green" if up else "bold red")
    elif r.redis.status.state not in (SourceState.OK, SourceState.ABSENT):
        arrow("rds ?", "bold red")
    t.append(f" {_name(right.name, names)} ", style="bold reverse")
    t.append(" ")
    # ``findings`` as the table lists them: the worst incident's root first, which can
    # be milder than its consequences (a config difference under a full resync)
    worst = findings[0] if findings else None
    sev = max((f.severity for f in findings), default=Severity.INFO)
    if worst is not None and sev > Severity.INFO:
        n = sum(f.severity > Severity.INFO for f in findings)
        label = sev.label.upper()
        t.append(f" {label[:4] if short else label} ", style=SEV_STYLE[sev])
        n += worst.severity <= Severity.INFO  # the root itself when it is an info
    else:
        # nothing above info; an info in view is named all the same (a switchover's
        # event stays in the header while it is in view: #40)
        n = len(findings)
        t.append(" OK ", style="bold black on green")
    if worst is not None:
        t.append(f" {worst.check}", style="bold")
        more = (f" +{n - 1}" if short else f" +{n - 1} more") if n > 1 and less < 2 else ""
        where = (f"@{worst.node}" if short else f" on {worst.node}") if node else ""
        t.append(where + more + " ",
                 style="dim")
    t.append(" " if short else "  ")
    if paused:
        t.append(" PAUSED ", style="bold black on yellow")
    elif age_s is not None and age_s > 3 * tick.interval:
        t.append(f" STALE {age_s:.0f}s ", style="bold white on red")
    elif age_s is not None and not less:
        t.append(f"{age_s:.1f}s" if short else f"{source} {age_s:.1f}s ago", style="dim")
    if tick.late and not less:
        t.append(" late", style="yellow")
    return t
