"""Partition: what neither node can say alone. Are db163 and db162 cut from each other,
is one of them cut from this monitor only, or is it down (or hung)?

Reads, over its window, whether each node answers here (any of its host, MySQL or
Redis sources ok), and what each node says about the other: the primary's Redis INFO
(its replica's line: ``slaveN:...,lag=S``, seconds since the replica's last REPLCONF
ACK, which a replica sends every second), the replica's Redis link
(``master_link_status``, ``master_last_io_seconds_ago``) and the replica's MySQL IO
thread (running, its errno, what it has read of the primary's binlog). Each service is
judged in its own direction (``Tick.oriented``).

- **Partition** (critical, node "pair"): both nodes answer here, and between them
  nothing flows: the primary has had no ACK from its replica for ``no_ack_s`` (3 s) or
  has dropped it, and the replica's link is down or silent; or the replica's IO thread
  fails to connect with a network error (2003, 2013) while the primary's MySQL answers
  here. Not when either layer still streams (a fresh ACK, a replica IO thread whose
  read position moves): then that layer's own check says what is wrong with the other.
  The roles do not change: the primary takes writes on its own, the replica keeps what
  it had; it is not a failover, and promoting the replica now loses every write since
  the cut. Next step: the path between the nodes (ping the replica's replication
  address from the primary, its NIC and switch port, a firewall between them).
- **The monitor's path** (warning, the node that does not answer): the node has not
  answered here for ``no_ack_s``, yet the other node still streams with it (the
  primary's Redis has its ACKs, less than ``no_ack_s`` old; or, for an unreachable
  primary, the replica's Redis link is up and fresh, or its IO thread's read position
  moves). Replication is fine; replmon is blind to that node. Next step: the path from
  here (this machine's route, the node's monitoring NIC, a firewall); no failover.
- **Down or hung** (critical): the node has not answered here for ``no_ack_s`` and the
  other node lost it too (the primary's Redis has no ACK from it, or the replica's link
  is down). How the connections from here fail tells which: every one accepted and then
  silent (timeouts, a lost connection) is a **hung** node (SIGSTOP, a kernel or disk
  stall, swapping); connections refused or unanswered (no route, connect timed out) is
  a node **down** or cut from both. A replica down leaves the primary alone (still the
  writer, nothing to fail over); a primary down is the moment to decide on a failover.
- **Neither node answers here** (warning, "pair"): this machine's own network, most
  likely; nothing can be said of replication.

Needs Redis on the pair for the primary's view of its replica (replmon does not read the
primary's binlog dump threads): a MySQL-only pair gets the partition from the IO thread's
errno (after ``slave_net_timeout``), and no monitor-path or down verdict.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pydantic import Field

from replmon.check import (
    Check,
    Explains,
    Failure,
    Gate,
    NodeTick,
    Observation,
    ReplicaChannel,
    Seconds,
    Severity,
    SourceState,
    Thresholds,
    Tick,
    Window,
    failure,
    fmt,
    numbers,
    source_ok,
)

NET_ERRNOS = frozenset({2003, 2005, 2013})
"""The IO thread's client errors that mean the network: can't connect, unknown host,
lost connection."""
_CONNECT = re.compile(r"can't connect|connect to host|connecting to|no route|"
                      r"network is unreachable|refused|errno (?:101|111|113)\b", re.IGNORECASE)
"""A connection from here that failed before it was accepted (versus accepted and then
silent: a hung node)."""
KINDS = ("host", "mysql", "redis")


class Limits(Thresholds):
    no_ack_s: Seconds = Field(default=3.0, gt=0)
    """Seconds (s) without an ACK from the Redis replica (it sends one a second), or
    without an answer here, after which a node is taken to have lost the other, or to
    be unreachable from here."""
    open_after: Seconds = Field(default=1.0, ge=0)
    """Seconds (s) before the finding opens (the judgement already waits ``no_ack_s``)."""


def _answers(n: NodeTick) -> bool | None:
    """True: a source of ``n`` was read; False: every configured one failed; None: none
    configured."""
    seen = False
    for kind in KINDS:
        st = getattr(n, kind).status.state
        if st is SourceState.OK:
            return True
        seen = seen or st is not SourceState.ABSENT
    return False if seen else None


def _silent_for(w: Window, name: str) -> tuple[float, bool]:
    """(seconds node ``name`` has answered nothing here, up to the last tick; whether any
    connection from here failed before it was accepted in that time)."""
    start, connect = None, False
    for t in reversed(list(w)):
        n = t.primary if t.primary.name == name else t.replica
        if _answers(n) is not False:
            break
        start = t.wall
        connect = connect or any(_CONNECT.search(getattr(n, k).status.error or "")
                                 for k in KINDS)
    return (w.last.wall - start if start is not None else 0.0), connect


def _acks(p: NodeTick, t: Limits) -> tuple[bool | None, int | None]:
    """The primary's Redis about its replica: (True: an ACK less than ``no_ack_s`` old,
    False: none, None: not read or not a master; the freshest ACK's age in seconds)."""
    r = p.redis
    if not source_ok(p, "redis") or r.role != "master":
        return None, None
    ages = [x.lag_s if x.lag_s is not None else 0 for x in r.replicas if x.state == "online"]
    if not ages:
        return False, None
    return min(ages) < t.no_ack_s, min(ages)


def _redis_link(r: NodeTick, t: Limits) -> bool | None:
    """The replica's Redis: True: link up and heard from in under ``no_ack_s``
    (or idle); False: down or silent; None: not read or not a replica."""
    s = r.redis
    if not source_ok(r, "redis") or s.role != "replica" or s.link_status is None:
        return None
    if s.link_status != "up":
        return False
    return s.last_io_seconds_ago is None or s.last_io_seconds_ago < t.no_ack_s


def _channel(t: Tick) -> ReplicaChannel | None:
    r = t.replica
    if not source_ok(r, "mysql") or not r.mysql.replication:
        return None
    return r.mysql.replication[0]


def _io_moves(w: Window, t: Limits) -> bool:
    """The replica's IO thread read something from the primary in the last ``no_ack_s``
    (its read position or its heartbeat count moved)."""
    n = w.span(t.no_ack_s) + 1
    seen = set()
    for tk in w.tail(n):
        ch = _channel(tk.oriented("mysql"))
        if ch is None or ch.io_running != "Yes":
            return False
        seen.add((ch.source_log_file, ch.read_source_log_pos, ch.received_heartbeats))
    return len(seen) > 1


def _io_cut(ch: ReplicaChannel | None) -> bool:
    return ch is not None and ch.io_running != "Yes" and ch.last_io_errno in NET_ERRNOS


def _writes(p: NodeTick, r: NodeTick) -> str:
    """The write path as the servers say it, for a cause's last words."""
    pro = p.mysql.variables.get("read_only") if source_ok(p, "mysql") else None
    rro = r.mysql.variables.get("read_only") if source_ok(r, "mysql") else None
    said = [f"{p.name} read_only={pro}" if pro else "",
            f"{r.name} read_only={rro}" if rro else "",
            f"{r.name}'s Redis role {r.redis.role}" if source_ok(r, "redis") else ""]
    said = [s for s in said if s]
    return f" ({', '.join(said)})" if said else ""


def _partition(w: Window, t: Limits) -> Observation | None:
    last = w.last
    rp, rr = last.oriented("redis").nodes
    acks, age = _acks(rp, t)
    link = _redis_link(rr, t)
    mp, mr = last.oriented("mysql").nodes
    ch = _channel(last.oriented("mysql"))
    if not (_answers(last.primary) and _answers(last.replica)):
        return None  # a node that does not answer here: _unreachable's
    streams = acks is True or link is True or _io_moves(w, t)
    redis_cut = acks is False and link is False
    mysql_cut = _io_cut(ch) and source_ok(mp, "mysql")
    if streams or not (redis_cut or mysql_cut):
        return None
    said = []
    if redis_cut:
        said.append(f"Redis: {rp.name} has had no ACK from its replica for {fmt(age)} s"
                    if age is not None else f"Redis: {rp.name} lists no replica")
        said[-1] += (f", {rr.name}'s link down" if rr.redis.link_status != "up" else
                     f", {rr.name} has heard nothing for "
                     f"{fmt(rr.redis.last_io_seconds_ago)} s")
    if ch is not None and ch.io_running != "Yes":
        said.append(f"MySQL: IO thread {ch.io_running}"
                    + (f", errno {ch.last_io_errno}" if ch.last_io_errno else ""))
    return Observation.trusted(
        key="partition", node="pair", severity=Severity.CRITICAL,
        title=(f"{mp.name} and {mr.name} cannot reach each other; both reachable from "
               f"here ({'; '.join(said)})"),
        numbers=numbers(redis_ack_age_s=age, redis_link=rr.redis.link_status,
                        mysql_io=ch.io_running if ch else None,
                        mysql_io_errno=ch.last_io_errno if ch else None,
                        primary_read_only=mp.mysql.variables.get("read_only"),
                        replica_read_only=mr.mysql.variables.get("read_only")),
        cause=(f"a partition between the nodes: both answer this monitor, but nothing "
               f"flows between them (their replication link, a switch, a firewall or a "
               f"route between them). The roles stand: {mp.name} still takes the writes "
               f"alone and {mr.name} keeps what it had{_writes(mp, mr)}; this is not a "
               f"failover, and promoting {mr.name} now would lose every write since the "
               f"cut."),
        next_step=(f"From {mp.name}, reach {mr.name}'s replication address (ping, nc -vz "
                   f"HOST 3306/6379); look at the replication NIC on both (ip -s link: "
                   f"carrier, errors), the switch port, firewall rules between them. "
                   f"Replication resumes on its own once they reach each other."))


_NOT_THE_PATH = frozenset({Failure.DNS, Failure.AUTH})
"""Failures that say nothing of the path to a node (its name, its credentials): the
node is neither partitioned nor down; source_health names them."""


def _unreachable(w: Window, t: Limits, role: str) -> Observation | None:
    last = w.last
    node = w.node(role)  # type: ignore[arg-type]
    if _answers(node) is not False:
        return None
    if any(failure(getattr(node, k).status) in _NOT_THE_PATH for k in KINDS):
        return None  # a name that does not resolve, a login refused: source_health's
    down_s, connect = _silent_for(w, node.name)
    if down_s < t.no_ack_s:
        return None  # not long enough for the other node's view to say anything
    if role == "replica":
        rp, _ = last.oriented("redis").nodes
        other = rp if rp.name != node.name else w.node("primary")
        acks, age = _acks(other, t)
        seen = acks
        evidence = (f"{other.name}'s Redis had its last ACK {fmt(age)} s ago"
                    if age is not None else f"{other.name}'s Redis lists no replica")
    else:
        other = w.node("replica")
        link = _redis_link(last.oriented("redis").replica, t)
        seen = True if (link or _io_moves(w, t)) else link
        rs = other.redis
        evidence = (f"{other.name}'s Redis link {rs.link_status}, last heard "
                    f"{fmt(rs.last_io_seconds_ago)} s ago" if link is not None
                    else f"{other.name}'s IO thread reads on")
    if seen is None or not source_ok(other, "redis") and not source_ok(other, "mysql"):
        return None
    how = ("connections from here get no answer" if connect else
           "connections from here are accepted, then nothing comes back")
    nums = numbers(silent_s=down_s, connect_failed=connect, other=other.name)
    if seen:
        return Observation.trusted(
            key="monitor_path", node=role, severity=Severity.WARNING,
            title=(f"{node.name} unreachable from here for {fmt(down_s)} s; {other.name} "
                   f"still streams with it ({evidence})"),
            numbers=nums,
            cause=(f"the monitor's own path to {node.name}: {how}, yet {other.name} still "
                   f"replicates with it. Replication goes on; replmon cannot see "
                   f"{node.name} (its monitoring NIC, a route or firewall between here "
                   f"and it). Nothing failed over, and nothing needs to."),
            next_step=(f"From this machine: ping {node.name}, nc -vz it on 22/3306/6379, "
                       f"ip route get its address; from {other.name}, ssh to {node.name} "
                       f"and look at its monitoring NIC (ip -s link). Do not fail over."))
    hung = not connect
    state = "hung" if hung else "down"
    if role == "replica":
        roles = (f"{other.name} stays the primary and takes the writes alone: nothing to "
                 f"fail over; the replica needs a resync check once back.")
    else:
        roles = (f"{other.name} is still a replica (not promoted): decide on a failover "
                 f"if {node.name} does not come back; it has what it received.")
    return Observation.trusted(
        key=state, node=role, severity=Severity.CRITICAL,
        title=(f"{node.name} {state}: not answering here for {fmt(down_s)} s, and "
               f"{other.name} lost it too ({evidence})"),
        numbers=nums,
        cause=((f"{node.name} accepts connections but answers nothing, here and to "
                f"{other.name}: its processes stopped (SIGSTOP, a debugger), a kernel or "
                f"disk stall, heavy swapping. " if hung else
                f"neither this monitor nor {other.name} reaches {node.name}: the host is "
                f"down, or cut from both. ") + roles),
        next_step=(f"On {node.name}'s console: ps -eo stat,comm (T = stopped), dmesg "
                    f"for hung tasks, vmstat for swapping; kill -CONT a stopped process."
                    if hung else
                    f"{node.name}'s console or IPMI: is it powered, is its network up? "
                    f"From {other.name}: ping it."))


def _blind(w: Window, t: Limits) -> Observation | None:
    p, r = w.node("primary"), w.node("replica")
    if _answers(p) is not False or _answers(r) is not False:
        return None
    down_s = min(_silent_for(w, p.name)[0], _silent_for(w, r.name)[0])
    if down_s < t.no_ack_s:
        return None
    return Observation.trusted(
        key="monitor", node="pair", severity=Severity.WARNING,
        title=f"neither {p.name} nor {r.name} answers here for {fmt(down_s)} s",
        numbers=numbers(silent_s=down_s),
        cause=("both nodes at once: most likely this machine's own network (its NIC, "
               "route, DNS) or a firewall in front of both; nothing can be said of "
               "replication from here."),
        next_step="From this machine: ip route, ping both nodes; from another machine: "
                  "are they up?")


def evaluate(w: Window, t: Limits) -> list[Observation]:
    blind = _blind(w, t)
    if blind is not None:
        return [blind]
    found = [_partition(w, t), _unreachable(w, t, "replica"), _unreachable(w, t, "primary")]
    return [o for o in found if o is not None]


EXPLAINS: tuple[Explains, ...] = (
    Explains("mysql_replication", "either",
             "the nodes cannot reach each other: the IO thread cannot connect",
             cause_key="partition"),
    Explains("redis_replication", "either",
             "the nodes cannot reach each other: the replica's link is down",
             cause_key="partition"),
    Explains("pair_lag", "either", "nothing reaches the replica: it falls behind",
             cause_key="partition"),
    Explains("source_health", "same",
             "the node is unreachable from here, or down or hung: its sources fail",
             cause_key="[!p]*"),
    Explains("mysql_replication", "either",
             "a node unreachable from here, down or hung: its replication cannot be read",
             cause_key="[!p]*"),
    Explains("redis_replication", "either",
             "a node unreachable from here, down or hung: its replication cannot be read",
             cause_key="[!p]*"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


NEVER = 1e9
"""A gauge's "never": no replica listed, a link down (seconds, larger than any limit)."""


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    answering: float
    """1: each node answers here at the last tick (a source read, or none configured);
    0: one of them answers nothing."""
    mysql_cut: float
    """1: the replica's IO thread stopped on a network errno while the primary's MySQL
    answers here (a partition whatever the limits); 0 otherwise."""
    ack_age_s: float | None
    """The primary's Redis: its online replica's freshest ACK, seconds old (NEVER: none
    listed); None: not read, or not a master."""
    link_age_s: float | None
    """The replica's Redis: seconds since it last heard its master (0: idle; NEVER: the
    link down); None: not read, not a replica, no link."""


def measure(w: Window) -> Gauges:
    last = w.last
    rp, rr = last.oriented("redis").nodes
    mp, _ = last.oriented("mysql").nodes
    ack: float | None = None
    if source_ok(rp, "redis") and rp.redis.role == "master":
        ages = [x.lag_s if x.lag_s is not None else 0 for x in rp.redis.replicas
                if x.state == "online"]
        ack = float(min(ages)) if ages else NEVER
    link: float | None = None
    s = rr.redis
    if source_ok(rr, "redis") and s.role == "replica" and s.link_status is not None:
        link = (NEVER if s.link_status != "up" else
                float(s.last_io_seconds_ago) if s.last_io_seconds_ago is not None else 0.0)
    answering = _answers(last.primary) is not False and _answers(last.replica) is not False
    cut = _io_cut(_channel(last.oriented("mysql"))) and source_ok(mp, "mysql")
    return Gauges(float(answering), float(cut), ack, link)


def quiet(g: Gauges, t: Limits) -> bool:
    """Both nodes answer here (nothing for ``_unreachable`` or ``_blind``), the replica's
    IO thread is not cut, and Redis is not cut both ways at ``no_ack_s`` (a fresh ACK or
    a fresh link, or a side not read): ``_partition`` finds nothing."""
    redis_cut = (g.ack_age_s is not None and g.ack_age_s >= t.no_ack_s
                 and g.link_age_s is not None and g.link_age_s >= t.no_ack_s)
    return g.answering == 1 and g.mysql_cut == 0 and not redis_cut


CHECK = Check(id="partition", title="Partition", needs=("host", "mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=30.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
