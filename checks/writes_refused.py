"""Writes refused: can the application write to the primary?

An on-call engineer is paged because the application cannot write far more often than
because a replica lags. This check judges the service the pair gives: the write path of
the node that is each service's primary now (roles follow the servers: MySQL's primary
for MySQL, Redis's for Redis, which may differ under Sentinel). Each finding is critical
and says, in the server's own words, what the application gets, the likely cause and
the next step:

- **MySQL/MariaDB read-only** (key "mysql:read_only"): ``read_only``,
  ``super_read_only`` (MySQL), ``innodb_read_only`` or ``offline_mode`` (MySQL) ON on
  the primary: every write fails with ERROR 1290 (or 1015/1036, 3032 for new sessions).
  These variables are read every tick; offline_mode also refuses replmon's own
  connection (ERROR 3032, unless its account has CONNECTION_ADMIN): that is this
  finding, not a monitor hiccup.
- **Out of connections** (key "mysql:connections"): ``Threads_connected`` at
  ``max_connections``, ``Connection_errors_max_connections`` rising, or replmon's own
  connection refused with ERROR 1040: new clients get "Too many connections" (the
  source_health finding of that 1040 is this one's consequence, not a monitor hiccup).
- **Writes stalled on a full disk** (key "mysql:disk_full"): sessions in the state
  "Waiting for someone to free space" on the primary: their writes hang, not fail, and
  the server looks for space again only once a minute (counted every tick).
- **Redis NOREPLICAS** (key "redis:noreplicas"): fewer good replicas
  (``min_slaves_good_slaves``) than ``min-replicas-to-write``.
- **Redis OOM** (key "redis:oom"): ``maxmemory`` reached with ``noeviction``.
- **Redis MISCONF** (key "redis:misconf"): the last BGSAVE failed with
  ``stop-writes-on-bgsave-error yes`` and save points set (or the last AOF write
  failed, AOF on).
- **Redis READONLY** (key "redis:readonly"): no node is a Redis master: both answer
  writes with READONLY.

Where the server counts what it refused (Redis ``INFO errorstats``, MySQL 8.0+'s
``events_errors_summary_global_by_error``, ``Connection_errors_max_connections``), the
numbers give the refusals per second now and how many since the refusal began.

A planned switchover sets ``read_only`` on the old primary before it promotes the
replica: a refusal is info while it is younger than ``fence_s`` (5 s), and while the
service's roles are changing (layers at odds, or a change less than ``switch_hold``
ago) until it outlasts ``switch_hold`` (30 s); then critical. It opens after 2 s, so
a switchover's fence of a few hundred milliseconds says nothing at all; a refusal
that stays is critical within 2 + 5 s.

What to do: the title says what refuses and why; the next step names the command
(``SET GLOBAL read_only=OFF`` on the node that should take writes, once no other node
does; ``SHOW PROCESSLIST`` for who holds the connections; ``INFO replication`` for the
replicas' lag; ``BGSAVE`` after freeing the disk; ``REPLICAOF NO ONE``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from pydantic import Field

from replmon.check import (
    Check,
    Explains,
    Gate,
    NodeTick,
    Observation,
    Seconds,
    Severity,
    Thresholds,
    Tick,
    Window,
    fmt,
    fmt_bytes,
    numbers,
    source_ok,
)


class Limits(Thresholds):
    open_after: Seconds = Field(default=2.0, ge=0)
    """Seconds (s) a refusal must be seen before the finding opens (2 s: a switchover's
    fence of a few hundred milliseconds is not news)."""
    fence_s: Seconds = Field(default=5.0, ge=0)
    """Seconds (s) a refusal is info before it is critical: a runbook switchover sets
    read_only on the old primary first and promotes the replica within seconds."""
    switch_hold: Seconds = Field(default=30.0, ge=0)
    """Seconds (s) a refusal stays info while the service's roles are changing (layers at
    odds, or a change less than this ago): part of that event until it outlasts it."""


MYSQL_READ_ONLY = {
    "read_only": ("ERROR 1290 (HY000): The {product} server is running with the "
                  "--read-only option so it cannot execute this statement"),
    "super_read_only": ("ERROR 1290 (HY000): The MySQL server is running with the "
                        "--super-read-only option so it cannot execute this statement"),
    "innodb_read_only": "ERROR 1015/1036: the InnoDB tables are read only",
    "offline_mode": ("ERROR 3032 (HY000): The server is currently in offline mode "
                     "(new sessions of users without CONNECTION_ADMIN)"),
}
"""The variables that refuse writes, with what a client gets."""

REFUSED_MYSQL_ERRORS = {"1290": "read-only", "1836": "read-only", "1015": "read-only",
                        "1036": "read-only", "3032": "offline mode",
                        "1040": "too many connections"}
"""MySQL error numbers (performance_schema's summary) that are a refused write."""


def _same(t: Tick, p: NodeTick) -> NodeTick:
    """The node of tick ``t`` that is ``p``."""
    return t.primary if t.primary.given_role == p.given_role else t.replica


def _on(node: NodeTick, name: str) -> bool:
    return node.mysql.variables.get(name, "").upper() in ("ON", "1")


OWN_REFUSALS = {"1040": "Too many connections", "3032": "The server is currently in offline mode"}
"""Errors by which the primary refuses replmon's own connection as it refuses the
application's: the same refusal, never only a monitor hiccup."""


def _refused_own(node: NodeTick, code: str) -> bool:
    error = node.mysql.status.error or ""
    return f"({code}" in error or OWN_REFUSALS[code] in error


def _rate(node: NodeTick, name: str) -> float | None:
    return node.rates.mysql.counters.get(name)


# --- what refuses, at one tick (oriented to the service) -------------------------------

Refusal = tuple[str, str]
"""(key, what refuses in words) at one tick."""


def _mysql(t: Tick) -> list[Refusal]:
    p = t.oriented("mysql").primary
    out: list[Refusal] = []
    if _refused_own(p, "1040"):
        out.append(("mysql:connections", "replmon's own connection was refused (ERROR 1040)"))
        return out
    if _refused_own(p, "3032"):
        out.append(("mysql:read_only", "offline_mode=ON: replmon's own connection was "
                                       "refused (ERROR 3032)"))
        return out
    if not source_ok(p, "mysql"):
        return out
    on = [name for name in MYSQL_READ_ONLY if _on(p, name)]
    if on:
        out.append(("mysql:read_only", ", ".join(f"{n}=ON" for n in on)))
    if p.mysql.space_waits:
        out.append(("mysql:disk_full", f"{p.mysql.space_waits} sessions waiting for disk "
                                       "space"))
    connected = p.mysql.gauges.get("Threads_connected")
    limit = p.mysql.variables.get("max_connections")
    refused = _rate(p, "Connection_errors_max_connections")
    full = connected is not None and limit is not None and limit.isdigit() \
        and connected >= int(limit)
    if full or (refused is not None and refused > 0):
        out.append(("mysql:connections", f"{fmt(connected)} of max_connections "
                                         f"{limit or '-'} connected"))
    return out


def _redis(t: Tick) -> list[Refusal]:
    o = t.oriented("redis")
    p, r = o.primary, o.replica
    if not source_ok(p, "redis"):
        return []
    s = p.redis
    out: list[Refusal] = []
    if s.role == "replica":
        if source_ok(r, "redis") and r.redis.role == "replica":
            out.append(("redis:readonly", "no Redis master: both nodes are replicas"))
        return out
    # the settings say so, or the clients' errors do (errorstats: a setting changed
    # since the last CONFIG GET, a server that does not give it)
    refused = p.rates.redis.errors_by_kind_per_s
    need = s.min_replicas[0] if s.min_replicas is not None else 0
    if (need > 0 and s.good_replicas is not None and s.good_replicas < need) \
            or refused.get("NOREPLICAS"):
        out.append(("redis:noreplicas", f"{fmt(s.good_replicas)} good replicas of "
                                        f"min-replicas-to-write {need or '?'}"))
    if (s.maxmemory and s.maxmemory_policy == "noeviction" and s.used_memory is not None
            and s.used_memory >= s.maxmemory) or refused.get("OOM"):
        out.append(("redis:oom", "used_memory at maxmemory with noeviction"))
    rdb = s.rdb_last_bgsave_status == "err" and s.stop_writes_on_bgsave_error is True \
        and bool((s.save_points or "").strip())
    aof = s.aof_enabled is True and s.aof_last_write_status == "err"
    if rdb or aof or refused.get("MISCONF"):
        out.append(("redis:misconf", "the last BGSAVE failed" if rdb
                    else "the last AOF write failed"))
    return out


def refusals(t: Tick) -> dict[str, str]:
    """What refuses writes at tick ``t``: {key: words}."""
    return dict(_mysql(t) + _redis(t))


# --- how long, and how many refused ----------------------------------------------------

def _blind(t: Tick, service: str) -> bool:
    """A node's sample of ``service`` failed at ``t`` (a timeout under load): whether it
    refused then is not known, so that tick neither ends a refusal nor begins one."""
    return not (source_ok(t.primary, service) and source_ok(t.replica, service))


def _began(w: Window, key: str) -> Tick:
    """The first tick of the refusal ``key`` still going on at the last tick (within the
    window), across ticks that could not judge it (``_blind``: one Redis INFO timed out
    at 0.5 s on a loaded machine, and the fence began again)."""
    service = key.split(":")[0]
    first = w.last
    for t in reversed(w.ticks[:-1]):
        if key in refusals(t):
            first = t
        elif not _blind(t, service):
            break
    return first


def _changing(w: Window, service: str, t: Limits) -> bool:
    """The service's roles are changing: its group's layers at odds (the services that
    move with it), or it changed less than ``switch_hold`` ago."""
    r = w.last.roles
    if r is None:
        return False
    r = r.resolved()
    lr = r.layer(service)
    if lr is None:
        return False
    odd = r.at_odds()
    if any(x in odd for g in r.group_layers() if lr in g for x in g):
        return True
    return lr.changed is not None and w.last.wall - lr.changed < t.switch_hold


def _counted(first: Tick, last: Tick, get: Callable[[Tick], int | None]) -> int | None:
    a, b = get(first), get(last)
    return None if a is None or b is None or b < a else b - a


# --- the words ---------------------------------------------------------------------

def _observe(w: Window, t: Limits, key: str, what: str) -> Observation:
    service = key.split(":")[0]
    last = w.last
    o = last.oriented(service)
    p = o.primary
    node = "primary" if last.primary.given_role == p.given_role else "replica"
    first = _began(w, key)
    lasted = last.wall - first.wall + last.interval  # (a tick stands for its interval,
    # as the engine's holds count them: two ticks at 1 s have held 2 s)
    changing = _changing(w, service, t)
    hold = t.switch_hold if changing else t.fence_s
    severity = Severity.INFO if lasted < hold else Severity.CRITICAL
    words, cause, step, extra = WORDS[key](w, first, p)
    during = (" (roles changing: part of that event)" if changing and severity is Severity.INFO
              else "")
    return Observation.trusted(
        key=key, node=node, given=p.given_role, severity=severity,
        title=f"{p.name} refuses writes: {words}{during}",
        numbers=numbers(refusing_s=round(lasted, 1), what=what, roles_changing=changing,
                        **extra),
        cause=cause, next_step=step)


Words = tuple[str, str, str, dict[str, object]]


def _errors(w: Window, first: Tick, p: NodeTick, kind: str, names: tuple[str, ...]
            ) -> dict[str, object]:
    """refused (since the refusal began) and refused_per_s (now) of the errors
    ``names``, where the server counts them (Redis; MySQL, not MariaDB)."""
    def total(t: Tick) -> int | None:
        n = _same(t, p)
        if not source_ok(n, kind) or (kind == "mysql" and n.mysql.flavour != "mysql"):
            return None
        counts = n.redis.error_counts if kind == "redis" else n.mysql.error_counts
        return sum(counts.get(x, 0) for x in names)
    now = _same(w.last, p)
    if kind == "redis":
        per_s: float | None = sum(now.rates.redis.errors_by_kind_per_s.get(x, 0.0)
                                  for x in names)
    elif now.mysql.flavour == "mysql":
        per_s = sum(now.rates.mysql.errors_by_code_per_s.get(x, 0.0) for x in names)
    else:
        per_s = None  # MariaDB counts no refused statements
    return {"refused": _counted(first, w.last, total),
            "refused_per_s": None if per_s is None else round(per_s, 1)}


def _read_only(w: Window, first: Tick, p: NodeTick) -> Words:
    own = _refused_own(p, "3032")  # replmon refused too: what it read before
    on = ["offline_mode"] if own else [n for n in MYSQL_READ_ONLY if _on(p, n)]
    product = "MariaDB" if p.mysql.flavour == "mariadb" else "MySQL"
    said = MYSQL_READ_ONLY[on[0]].format(product=product)
    extra = _errors(w, first, p, "mysql", ("1290", "1836", "1015", "1036", "3032"))
    n = extra["refused"]
    counted = f"; {n} statements refused since it began" if n is not None else ""
    also = " (replmon's own connection too)" if own else ""
    return (f"{', '.join(f'{x}=ON' for x in on)} on the primary: every write gets {said}"
            f"{also}{counted}",
            f"{', '.join(on)} is ON on the node that is the MySQL primary (its replica "
            "follows it): a failover or switchover that stopped half-way (the old primary "
            "fenced, no one promoted), a restart with read_only in my.cnf, or someone "
            "fencing it by hand",
            "If this node should take writes (no other node does: see the roles line), "
            f"SET GLOBAL {', '.join(f'{x}=OFF' for x in reversed(on))}; else finish the "
            "switchover (promote the other node and point the clients at it)",
            {"variables_on": ",".join(on), "own_connection_refused": own, **extra})


def _connections(w: Window, first: Tick, p: NodeTick) -> Words:
    connected = p.mysql.gauges.get("Threads_connected")
    limit = p.mysql.variables.get("max_connections")
    refused_s = _rate(p, "Connection_errors_max_connections")
    counter = "Connection_errors_max_connections"
    def count(t: Tick) -> int | None:  # noqa: E306
        v = _same(t, p).mysql.counters.get(counter)
        return None if v is None else int(v)
    refused = _counted(first, w.last, count)
    own = not source_ok(p, "mysql")
    if own:
        head = ("new connections get ERROR 1040 (HY000): Too many connections "
                "(replmon's own too)")
    else:
        per = f", {refused_s:.1f} refused/s" if refused_s else ""
        head = (f"{fmt(connected)} of max_connections {limit or '-'} connected{per}: new "
                "connections get ERROR 1040 (HY000): Too many connections")
    return (head + (f"; {refused} refused since it began" if refused else ""),
            "the server is at max_connections: a connection leak or a pool grown past "
            "it, sessions piling up behind a lock or a slow disk, or max_connections "
            "lowered",
            "SHOW PROCESSLIST (an account with CONNECTION_ADMIN/SUPER gets one extra "
            "connection): who holds the connections, idle or waiting on what; kill "
            "the idle ones or raise max_connections (SET GLOBAL) while the cause is found",
            {"connected": connected, "max_connections": limit, "refused_per_s":
             None if refused_s is None else round(refused_s, 1), "refused": refused,
             "own_connection_refused": own})


def _disk_full(w: Window, first: Tick, p: NodeTick) -> Words:
    n, longest = p.mysql.space_waits, p.mysql.space_wait_s
    sessions = "1 session" if n == 1 else f"{n} sessions"
    return (f"{sessions} stalled on a full disk for up to {longest} s (\"Waiting for someone "
            "to free space\"): writes hang, they do not fail",
            "a filesystem the server writes to is full: the datadir, the binary logs, the "
            "tmpdir or a table's DATA DIRECTORY (the error log says \"Disk is full "
            "writing ...\" with the file)",
            "df -h on the server's datadir, binlog and tmpdir; free space (PURGE BINARY "
            "LOGS on a primary whose replicas have them, old backups, logs); the server "
            "looks again once a minute, so writes resume up to 60 s after space is freed",
            {"sessions_waiting": n, "longest_wait_s": longest})


def _noreplicas(w: Window, first: Tick, p: NodeTick) -> Words:
    s = p.redis
    need, lag = s.min_replicas or (0, 0)
    extra = _errors(w, first, p, "redis", ("NOREPLICAS",))
    setting = (f"min-replicas-to-write {need} (lag ≤ {lag} s)" if need
               else "min-replicas-to-write")
    return (f"{fmt(s.good_replicas)} good replicas of {setting}: every write gets "
            "NOREPLICAS Not enough good replicas to write"
            + _said(extra),
            "the master counts fewer replicas connected with a lag within "
            "min-replicas-max-lag than min-replicas-to-write: a replica down, its link "
            "down or lagging, or the setting raised above the replicas there are",
            "INFO replication on the master (each slaveN's lag) and on the replica; bring "
            "the replica back, or CONFIG SET min-replicas-to-write to what the pair can "
            "meet", {"good_replicas": s.good_replicas, "min_replicas_to_write": need,
                     "min_replicas_max_lag_s": lag, **extra})


def _oom(w: Window, first: Tick, p: NodeTick) -> Words:
    s = p.redis
    extra = _errors(w, first, p, "redis", ("OOM",))
    return (f"used_memory {fmt_bytes(s.used_memory)} at maxmemory {fmt_bytes(s.maxmemory)} "
            "with noeviction: writes get OOM command not allowed when used memory > "
            "'maxmemory'" + _said(extra),
            "maxmemory is reached and the policy evicts nothing: the data set grew, keys "
            "without TTL piled up, or maxmemory was lowered",
            "INFO memory and a MEMORY USAGE / --bigkeys scan; free keys, raise maxmemory "
            "(CONFIG SET), or choose an eviction policy if this is a cache",
            {"used_memory": s.used_memory, "maxmemory": s.maxmemory, **extra})


def _misconf(w: Window, first: Tick, p: NodeTick) -> Words:
    s = p.redis
    extra = _errors(w, first, p, "redis", ("MISCONF",))
    if s.rdb_last_bgsave_status == "err":
        what = ("the last BGSAVE failed with stop-writes-on-bgsave-error yes (save "
                f"\"{s.save_points}\")")
    elif s.aof_last_write_status == "err":
        what = "the last AOF write failed"
    else:
        what = "the server answers MISCONF"
    product = "Valkey" if s.server == "valkey" else "Redis"
    return (f"{what}: writes get MISCONF {product} is configured to save RDB snapshots, "
            "but it's currently unable to persist to disk" + _said(extra),
            "the RDB child could not write (disk full or read-only, permissions, killed "
            "by the OOM killer) or the AOF could not be written; Redis refuses writes "
            "until a save succeeds",
            "Redis's log says why the save failed; free the disk or fix the directory, "
            "then BGSAVE (writes resume when it succeeds); CONFIG SET "
            "stop-writes-on-bgsave-error no only if losing the snapshot is acceptable",
            {"rdb_last_bgsave_status": s.rdb_last_bgsave_status,
             "aof_last_write_status": s.aof_last_write_status, **extra})


def _readonly(w: Window, first: Tick, p: NodeTick) -> Words:
    extra = _errors(w, first, p, "redis", ("READONLY",))
    return ("no Redis master, both nodes are replicas: writes get READONLY You can't write "
            "against a read only replica" + _said(extra),
            "a failover that demoted the master but promoted no one, or a REPLICAOF on the "
            "master by hand (or by a Sentinel that lost its quorum)",
            "ROLE on both nodes; promote the one that should take writes (REPLICAOF NO "
            "ONE, or SENTINEL FAILOVER) and point the other at it",
            extra)


def _said(extra: dict[str, object]) -> str:
    n, per_s = extra.get("refused"), extra.get("refused_per_s")
    rate = f", {per_s}/s now" if isinstance(per_s, float) and per_s > 0 else ""
    return f"; {n} refused since it began{rate}" if isinstance(n, int) and n > 0 else ""


WORDS: dict[str, Callable[[Window, Tick, NodeTick], Words]] = {
    "mysql:read_only": _read_only,
    "mysql:connections": _connections,
    "mysql:disk_full": _disk_full,
    "redis:noreplicas": _noreplicas,
    "redis:oom": _oom,
    "redis:misconf": _misconf,
    "redis:readonly": _readonly,
}


CARRY_S = 5.0
"""A refusal seen at a service's last judged tick is carried across the ticks that could
not judge that service (``_blind``: a sample timed out on a loaded machine) for this
long, worded as of that tick: a refusal not yet open keeps its hold (the engine forgets
an observation not yet open at the first tick without it, and the hold began again at
every timed-out INFO: a refusal never opened on a machine where one sample in four timed
out). Past it, the service's source_health finding says what is known."""


def _judged(w: Window) -> list[tuple[Window, str, str]]:
    """Each refusal at the last tick, with the window to word it from: the whole window;
    for a service the last tick could not judge (and which refuses nothing there), the
    refusals of its latest judged tick within ``CARRY_S``, with the window up to it."""
    now = refusals(w.last)
    out = [(w, key, what) for key, what in now.items()]
    ticks = w.ticks
    for service in ("mysql", "redis"):
        if not _blind(w.last, service) or any(k.startswith(service) for k in now):
            continue
        for i in range(len(ticks) - 2, -1, -1):
            t = ticks[i]
            if w.last.wall - t.wall > CARRY_S:
                break
            if not _blind(t, service):
                then = [(k, what) for k, what in refusals(t).items()
                        if k.startswith(service)]
                if then:
                    upto = Window(ticks[:i + 1])
                    out += [(upto, k, what) for k, what in then]
                break
    return out


def evaluate(w: Window, t: Limits) -> list[Observation]:
    return [_observe(upto, t, key, what) for upto, key, what in _judged(w)]


class Gauges(NamedTuple):
    """What ``quiet`` reads (``measure``, every tick; stored by position)."""

    refusing: float
    """What refuses writes at the last tick (``refusals``, and what ``_judged`` carries
    across a tick that could not judge it): how many."""


def measure(w: Window) -> Gauges:
    return Gauges(float(len(_judged(w))))


def quiet(g: Gauges, t: Limits) -> bool:
    """Nothing refuses at the last tick: ``evaluate`` reports each refusal there (or
    carried to it) and nothing else, whatever the thresholds (``fence_s`` and
    ``switch_hold`` only set the severity)."""
    return g.refusing == 0


EXPLAINS: tuple[Explains, ...] = (
    Explains("source_health", "same",
             "the server refuses new connections at max_connections: replmon's too",
             cause_key="mysql:connections", effect_key="mysql"),
    Explains("source_health", "same",
             "offline_mode refuses new sessions without CONNECTION_ADMIN: replmon's too",
             cause_key="mysql:read_only", effect_key="mysql"),
    Explains("throughput_collapse", "same",
             "the primary refuses the writes: the statement rate falls with them"),
    Explains("config_drift", "pair",
             "min-replicas-to-write set on the master only is what refuses the writes",
             cause_key="redis:noreplicas", effect_key="min-replicas-to-write"),
)
"""What this check's findings can explain (one incident under them): docs/checks.md."""


CHECK = Check(id="writes_refused", title="Writes refused", needs=("mysql", "redis"),
              thresholds=Limits, evaluate=evaluate, window=40.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=Gauges))
