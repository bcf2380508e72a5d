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

The title names the source, the state and the error text; ``down_s`` is how long it
has been in that state (from the status's since-time). Opens after 2 s (and two
ticks), so a single slow answer does not page anyone.

Next step depends on the state: for unreachable, is the server running and listening
(``ss -ltnp``), is a firewall in the way; for timeout, is it hung (``SHOW
PROCESSLIST`` from a local client, ``redis-cli --latency``), swapping, or stopped
(SIGSTOP, a debugger); for auth, the error names the missing grant or user.
"""

from __future__ import annotations

from pydantic import Field

from replmon.check import (
    SOURCE_KINDS,
    Check,
    Explains,
    Observation,
    Seconds,
    Severity,
    SourceState,
    Thresholds,
    Window,
    numbers,
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


class Limits(Thresholds):
    open_after: Seconds = Field(default=2.0, ge=0)
    """Seconds (s) the condition must hold, tick after tick, before the finding opens
    (2 s: one slow answer does not page anyone)."""


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    last = w.last
    for role in ("primary", "replica"):
        node = w.node(role)
        for kind in SOURCE_KINDS:  # node.statuses() without building its dict
            st = getattr(node, kind).status
            if st.state in (SourceState.OK, SourceState.ABSENT):
                continue
            serious = st.state in (SourceState.UNREACHABLE, SourceState.TIMEOUT,
                                   SourceState.AUTH)
            # the primary's service: that service's own primary (Redis under Sentinel
            # may have failed over while MySQL stayed)
            critical = serious and kind in ("mysql", "redis") \
                and last.service_role(node, kind) == "primary"
            down_s = last.wall - st.since if st.since is not None else None
            out.append(Observation(
                key=kind, node=role,
                severity=Severity.CRITICAL if critical else Severity.WARNING,
                title=f"{LABEL[kind]} {st.state.value}: {st.error or 'no detail'}",
                numbers=numbers(state=st.state.value, down_s=down_s),
                cause=st.hint or f"replmon cannot read {role} {node.name}'s {LABEL[kind]}",
                next_step=NEXT.get(st.state, ""),
            ))
    st = last.sentinel.status if last.sentinel is not None else None
    if st is not None and st.state not in (SourceState.OK, SourceState.ABSENT):
        out.append(Observation(  # the pair's own Sentinel: its view and events are lost
            key="sentinel", node="pair", severity=Severity.WARNING,
            title=f"Sentinel {st.state.value}: {st.error or 'no detail'}",
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
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="source_health", title="Source health", needs=("host", "drbd", "mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=1.0, explains=EXPLAINS)
