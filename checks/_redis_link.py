"""redis_replication's findings on the replica's link to the master, a key for each
condition (a finding keeps its worst and its story, so one key for several conditions
read as a rename): the replica's Redis unreadable (``link/unreadable``), the link down
and why (``link/down``), a full sync running, loading or stalled (``link/sync``), the
replica a master (``link/master``), the replica not in the master's list or following
another server (``link/elsewhere``); ``link`` names at most one of them at a time.
The module docstring of checks/redis_replication.py says what each means to a user.

Not a check: the plug-in loader skips the ``_`` modules of this package. Only
checks/redis_replication.py imports it.
"""

from __future__ import annotations

from replmon.check import (
    NodeTick,
    Number,
    Observation,
    RedisReplica,
    RedisSample,
    Severity,
    SourceState,
    fmt,
    fmt_bytes,
    numbers,
    source_ok,
)

SYNCING = ("wait_bgsave", "send_bulk")
"""A master's state of a replica it sends a full sync to."""


def our_entry(master: RedisSample, replica: RedisSample | None) -> RedisReplica | None:
    """The master's slaveN line for our replica: the only one, or the one whose offset
    is nearest the replica's own offset."""
    if not master.replicas:
        return None
    if len(master.replicas) == 1 or replica is None or replica.repl_offset is None:
        return master.replicas[0]
    own = replica.repl_offset
    return min(master.replicas, key=lambda e: abs((e.offset or 0) - own))


def _link_numbers(master: str, rs: RedisSample) -> dict[str, Number]:
    """The numbers of a link finding (built only when there is one)."""
    return numbers(master=master, link_status=rs.link_status,
                   link_down_since_s=rs.link_down_since_seconds,
                   last_io_seconds_ago=rs.last_io_seconds_ago,
                   sync_read_bytes=rs.sync_read_bytes, sync_total_bytes=rs.sync_total_bytes,
                   sync_pct=rs.sync_perc, sync_last_io_seconds_ago=rs.sync_last_io_seconds_ago,
                   failover_state=rs.failover_state)


def _seconds_or(v: int | None, unknown: str, known: str) -> str:
    """``known`` with the seconds filled in, or ``unknown`` where Redis printed -1."""
    return unknown if v is None else known.format(fmt(v))


def link(p: NodeTick, r: NodeTick, last_wall: float, sync_stalled_after: float, *,
         sentinel_busy: str = "") -> Observation | None:
    """The replica's link (``sync_stalled_after``: the check's threshold of that name,
    which sets only the severity); ``sentinel_busy``: a Sentinel failover settling
    (``failover_busy``), whose old master, back, is a master until Sentinel makes it a
    replica: part of the roles event, not a replica that stopped replicating."""
    st = r.redis.status
    if st.state is SourceState.ABSENT:
        return None
    if st.state is not SourceState.OK:
        down_s = last_wall - st.since if st.since is not None else None
        return Observation.trusted(
            key="link/unreadable", node="replica", severity=Severity.CRITICAL,
            title=(f"replica Redis {st.state.value} for {fmt(down_s, 1)} s: cannot see its "
                   f"replication ({st.error or 'no detail'})"),
            numbers=numbers(state=st.state.value, down_s=down_s, error=st.error),
            cause=st.hint or "the replica's Redis is down, hung, or refuses the password.",
            next_step="On the replica: redis-cli PING, then INFO replication; its redis.log.")
    rs = r.redis
    master_ok = source_ok(p, "redis")
    if rs.role == "master" and sentinel_busy:
        return None
    if rs.role == "master":
        swapped = master_ok and p.redis.role == "replica"
        cause = ("REPLICAOF NO ONE was run (a failover or by hand), or it started without "
                 "replicaof in its config.")
        step = ("If the primary is still the master: REPLICAOF <primary> <port> on the "
                "replica (expect a full resync: it throws its own data away).")
        if swapped:
            cause = ("Redis failed over and the rest of the pair did not: the replica's "
                     "Redis was promoted (Sentinel, REPLICAOF NO ONE) and the primary's now "
                     f"follows {p.redis.master_host}:{p.redis.master_port}, while "
                     "MySQL or DRBD still has the other node as the primary (see the roles "
                     "finding).")
            step = ("Finish the switchover on the other layers, or turn Redis back "
                    "(REPLICAOF on the promoted node) after finding who promoted it "
                    "(Sentinel's log).")
        return Observation.trusted(
            key="link/master", node="replica", severity=Severity.WARNING,
            title=(f"replica's Redis is a master ({fmt(rs.connected_replicas)} replicas "
                   f"of its own): not replicating"),
            numbers=numbers(role="master", connected_replicas=rs.connected_replicas,
                            primary_role=p.redis.role if master_ok else None),
            cause=cause, next_step=step)
    if rs.role != "replica":
        return None
    master = f"{rs.master_host}:{rs.master_port}"
    pr = p.redis
    waiting = [e.state for e in pr.replicas if e.state in SYNCING] if master_ok else []
    if rs.sync_in_progress or (rs.link_status == "down" and waiting):
        total = rs.sync_total_bytes
        if rs.sync_in_progress and rs.sync_read_bytes is not None:
            of = (f" of {fmt_bytes(total)} ({fmt(rs.sync_perc, 1)} %)" if total
                  else " (total unknown: diskless sync)")
            got = f"{fmt_bytes(rs.sync_read_bytes)}{of} received"
        else:
            got = f"master in {(waiting or ['sync'])[0]}"
        loading = bool(rs.loading) or bool(
            rs.sync_in_progress and total and total > 0 and rs.sync_read_bytes is not None
            and rs.sync_read_bytes >= total)
        if loading:  # every byte is in: no byte to wait for, never "stalled"
            return Observation.trusted(
                key="link/sync", node="replica", severity=Severity.WARNING,
                title=f"full sync from {master} in progress: {got}, loading it",
                numbers=_link_numbers(master, rs),
                cause="the replica received the whole data set (RDB) and is loading it into "
                      "memory; until it is loaded it answers most commands with LOADING.",
                next_step="Let it finish: a large data set takes a while to load; if the "
                          "load restarts again and again, the replica's redis.log says why "
                          "(memory, a corrupt RDB).")
        quiet = rs.sync_last_io_seconds_ago if rs.sync_in_progress else None
        if quiet is not None and quiet >= sync_stalled_after:
            return Observation.trusted(
                key="link/sync", node="replica", severity=Severity.CRITICAL,
                title=f"full sync from {master} stalled: no data for {fmt(quiet)} s, {got}",
                numbers=_link_numbers(master, rs),
                cause="the master stopped sending the RDB (a fork or disk stall on the master, "
                      "a saturated link) or the replica cannot read it; Redis drops the sync "
                      "after repl-timeout and starts a new full sync, which can loop.",
                next_step="Look at the master's latest_fork_usec, disk and network, and both "
                          "redis.logs; a loop of full syncs needs a larger "
                          "client-output-buffer-limit replica or repl-timeout.")
        return Observation.trusted(
            key="link/sync", node="replica", severity=Severity.WARNING,
            title=f"full sync from {master} in progress: {got}",
            numbers=_link_numbers(master, rs),
            cause=("the replica (re)connected and could not continue from the master's "
                   "backlog: it receives the whole data set (RDB) and then loads it"
                   + ("; the master is still producing the RDB (a fork for BGSAVE, or "
                      "repl-diskless-sync-delay before a diskless sync)."
                      if waiting and "wait_bgsave" in waiting else ".")),
            next_step="Let it finish; see the full_resync finding on the primary for the cost, "
                      "and why the link dropped in the replica's redis.log.")
    if rs.link_status == "down":
        if rs.link_down_since_seconds is None:  # Redis printed -1: never up since start
            cause = ("the link has not come up once since the replica started: it cannot "
                     "reach or log in to the master (master_host/master_port, masterauth/"
                     "masteruser, the master's bind or protected-mode, a firewall), or "
                     "every full sync so far failed.")
        else:
            cause = (f"the link was up and broke {fmt(rs.link_down_since_seconds)} s ago: the "
                     "master dropped the replica (repl-timeout, client-output-buffer-limit "
                     "replica) or the network failed; the replica retries every second and "
                     "continues from the master's backlog if it still holds what it missed.")
        if not master_ok:
            cause = (f"the master's Redis does not answer replmon either "
                     f"({p.redis.status.state.value}): it is down or hung.")
        return Observation.trusted(
            key="link/down", node="replica", severity=Severity.CRITICAL,
            title=(f"replica link to {master} down "
                   + _seconds_or(rs.link_down_since_seconds,
                                 "since the replica started (never up)", "for {} s")
                   + " (" + _seconds_or(rs.last_io_seconds_ago, "no I/O from the master",
                                        "last I/O {} s ago") + ")"),
            numbers=_link_numbers(master, rs), cause=cause,
            next_step="Read the replica's redis.log; check master_host/port and masterauth "
                      "against the primary; is the master up and reachable from the replica?")
    if rs.link_status != "up" or not master_ok or pr.role != "master":
        return None
    listed = bool(pr.replicas) or bool(pr.connected_replicas)
    other = bool(pr.master_replid and rs.master_replid and pr.master_replid != rs.master_replid)
    if listed and not other:
        return None
    return Observation.trusted(
        key="link/elsewhere", node="pair", severity=Severity.WARNING,
        title=(f"replica says it follows {master} (link up) but the primary lists "
               f"{fmt(pr.connected_replicas or 0)} replicas"
               + (", replication ids differ" if other else "")),
        numbers=numbers(master=master, primary_replicas=pr.connected_replicas or 0,
                        replid_differs=other),
        cause="the replica follows another Redis than the primary replmon watches (wrong "
              "address, an old master after a failover).",
        next_step="Compare master_host:master_port on the replica with the primary's address "
                  "and run_id/master_replid on both.")
