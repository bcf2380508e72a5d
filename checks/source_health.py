"""Source health: a configured source that cannot be read is an alarm, not a gap.

Reads every source's status on both nodes (host, DRBD, MySQL, Redis), and the pair's
Redis Sentinel's when one is configured (``--sentinel``: a warning on the pair, as
Redis itself is still read). A source
that is switched off or that the node does not have (state "absent", e.g. no DRBD
module) is not a finding. Anything else that is not ok is:

- ``unreachable`` (refused, no route, file missing), ``timeout`` (no answer within
  the per-source timeout: a hung or overloaded server), ``auth`` (credentials or
  grants refused): critical for the primary's MySQL or Redis (the service is
  down or cannot be seen; each service's own primary), warning otherwise (the
  replica's own replication checks say what it means for replication, critical
  there);
- ``parse_error`` (garbled /proc/drbd or INFO) and ``error``: warning.

The title names the source, the state and the error text (without the retry
countdown, so the same failure reads the same tick after tick); ``down_s`` is how long
it has been in that state (from the status's since-time). Opens after 2 s (and two
ticks), so a single slow answer does not page anyone.

One cause, one finding: a node whose name does not resolve is one critical finding
(key ``dns``, "name X does not resolve (host metrics, DRBD, MySQL, Redis not
sampled)"), not one per source; the sources of a node that fail with the same error
(host metrics and DRBD share the node's ssh connection) are one finding under the
first one's key.

Next step depends on the class of the failure (replmon.model.failures): a name that
does not resolve, check the name, DNS and /etc/hosts; connection refused, is the
service running, on that port and listening on that address (``ss -ltnp``,
bind-address); no answer to the connection, a firewall or the route; for timeout, is it
hung (``SHOW PROCESSLIST`` from a local client, ``redis-cli --latency``), swapping, or
stopped (SIGSTOP, a debugger); for auth, the error names the missing grant or user.
"""

from __future__ import annotations

from pydantic import Field

from replmon.check import (
    SOURCE_KINDS,
    Check,
    Explains,
    Failure,
    NodeTick,
    Observation,
    Seconds,
    Severity,
    SourceState,
    SourceStatus,
    Thresholds,
    Window,
    failure,
    numbers,
    short_words,
    steady_error,
    unresolved_name,
)

LABEL = {"host": "host metrics", "drbd": "DRBD", "mysql": "MySQL", "redis": "Redis"}
NEXT = {
    SourceState.UNREACHABLE: "Is the server running and listening on that address "
                             "(ss -ltnp on the node)? A firewall or a wrong port?",
    SourceState.TIMEOUT: "The server accepted but did not answer in time: hung, swapping, "
                         "stopped (SIGSTOP) or overloaded. Try a local client on the node.",
    SourceState.AUTH: "Fix the monitoring account: the error names the user or the grant.",
    SourceState.PARSE_ERROR: "replmon could not read the output; the error shows where. "
                             "Report it with the raw output.",
    SourceState.ERROR: "See the error text (and replmon's log with -v).",
}
NEXT_BY_CAUSE = {
    Failure.DNS: "Check the name: a typo in the config or on the command line, DNS "
                 "(getent hosts NAME on this machine), /etc/hosts.",
    Failure.REFUSED: "Is the service running, on that port, and listening on that "
                     "address (ss -ltnp on the node; bind-address, bind)?",
    Failure.UNANSWERED: "Nothing answered the connection: a firewall dropping packets, a "
                        "wrong address or route, or the host down (ping it; nc -vz HOST "
                        "PORT from this machine).",
}
"""The next step by the class of the failure (replmon.model.failures), where it says
more than the state does."""
CAUSE_BY_CAUSE = {
    Failure.REFUSED: "the host answered, but nothing listens on that port: the service is "
                     "down, on another port, or listening on another address only.",
    Failure.UNANSWERED: "the connection got no answer at all: packets dropped on the way "
                        "(a firewall), a wrong address or route, or the host down.",
}
"""What a class of failure means, in place of the source's hint (which says the same
as the next step)."""


class Limits(Thresholds):
    open_after: Seconds = Field(default=2.0, ge=0)
    """Seconds (s) the condition must hold, tick after tick, before the finding opens
    (2 s: one slow answer does not page anyone)."""


Failed = tuple[str, SourceStatus]
"""A source that cannot be read: (its kind, its status)."""


def _labels(group: list[Failed]) -> str:
    return ", ".join(LABEL[kind] for kind, _ in group)


def _unresolved(role: str, group: list[Failed], down_s: float | None) -> Observation:
    """One finding for every source of a node whose name does not resolve."""
    names = sorted({unresolved_name(st) or "?" for _, st in group})
    return Observation.trusted(
        key="dns", node=role, severity=Severity.CRITICAL,
        title=(f"name {' and '.join(names)} does not resolve ({_labels(group)} not "
               "sampled)"),
        numbers=numbers(name=", ".join(names), sources=", ".join(k for k, _ in group),
                        down_s=down_s),
        cause="replmon cannot look up the node's address: a typo in the name, a name "
              "missing from DNS or /etc/hosts, or this machine's resolver down; nothing "
              "on the node is read.",
        next_step=NEXT_BY_CAUSE[Failure.DNS].replace("NAME", names[0]))


def _unreadable(last_wall: float, node: NodeTick, role: str, group: list[Failed],
                critical: bool) -> Observation:
    """One finding for the sources of a node that fail with the same error (host and
    DRBD share the node's ssh connection)."""
    kind, st = group[0]
    why = failure(st)
    down_s = last_wall - st.since if st.since is not None else None
    return Observation.trusted(
        key=kind, node=role,
        severity=Severity.CRITICAL if critical else Severity.WARNING,
        title=f"{_labels(group)} {st.state.value}: {short_words(st)}",
        numbers=numbers(state=st.state.value, down_s=down_s, error=steady_error(st.error),
                        sources=", ".join(k for k, _ in group) if len(group) > 1 else None),
        cause=(CAUSE_BY_CAUSE.get(why) if why is not None else None) or st.hint
        or f"replmon cannot read {role} {node.name}'s {_labels(group)}",
        next_step=(NEXT_BY_CAUSE.get(why, "") if why is not None else "")
        or NEXT.get(st.state, ""))


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    last = w.last
    for role in ("primary", "replica"):
        node = w.node(role)
        failed: list[Failed] = []
        for kind in SOURCE_KINDS:  # node.statuses() without building its dict
            st = getattr(node, kind).status
            if st.state not in (SourceState.OK, SourceState.ABSENT):
                failed.append((kind, st))
        if not failed:
            continue
        unresolved = [f for f in failed if failure(f[1]) is Failure.DNS]
        if unresolved:  # one cause for the whole node: one finding
            st = unresolved[0][1]
            out.append(_unresolved(role, unresolved,
                                   last.wall - st.since if st.since is not None else None))
        groups: dict[tuple[SourceState, str], list[Failed]] = {}
        for kind, st in failed:
            if (kind, st) not in unresolved:
                groups.setdefault((st.state, steady_error(st.error)), []).append((kind, st))
        for group in groups.values():
            serious = group[0][1].state in (SourceState.UNREACHABLE, SourceState.TIMEOUT,
                                            SourceState.AUTH)
            # the primary's service: that service's own primary (Redis under Sentinel
            # may have failed over while MySQL stayed)
            critical = serious and any(
                kind in ("mysql", "redis") and last.service_role(node, kind) == "primary"
                for kind, _ in group)
            out.append(_unreadable(last.wall, node, role, group, critical))
    st = last.sentinel.status if last.sentinel is not None else None
    if st is not None and st.state not in (SourceState.OK, SourceState.ABSENT):
        out.append(Observation.trusted(  # the pair's own Sentinel: its view and events are lost
            key="sentinel", node="pair", severity=Severity.WARNING,
            title=f"Sentinel {st.state.value}: {steady_error(st.error) or 'no detail'}",
            numbers=numbers(state=st.state.value,
                            down_s=last.wall - st.since if st.since is not None else None),
            cause=st.hint or "replmon cannot read the Redis Sentinel given with --sentinel "
                             "(its view of the master and its failover events)",
            next_step=NEXT.get(st.state, ""),
        ))
    return out


EXPLAINS: tuple[Explains, ...] = (
    Explains("mysql_replication", "other",
             "the primary's MySQL cannot be read: the replica's IO thread cannot reach it "
             "either",
             cause_key="mysql"),
    Explains("redis_replication", "other",
             "the master's Redis cannot be read: the replica's link is down too",
             cause_key="redis"),
    Explains("pair_lag", "either",
             "a node that cannot be read cannot be measured",
             cause_key="mysql"),
    Explains("mysql_replication", "other",
             "the primary's name does not resolve: a replica that follows it by that name "
             "cannot reach it either",
             cause_key="dns"),
    Explains("redis_replication", "other",
             "the master's name does not resolve: a replica that follows it by that name "
             "cannot reach it either",
             cause_key="dns"),
    Explains("pair_lag", "either",
             "a node whose name does not resolve cannot be measured",
             cause_key="dns"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="source_health", title="Source health", needs=("host", "drbd", "mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=1.0, explains=EXPLAINS)
