"""``replmon --lab``: the lab started for a run, and the fault demos played on it.

``lab_nodes`` starts the lab (a MariaDB + Redis primary/replica on loopback, replmon.lab)
with a write load and yields the config keys that point a run at it. With
``--scenario NAME`` one of ``DEMOS`` plays in a thread while the lab is watched: it
injects its fault (replmon.lab.faults) after ``DEMO_AFTER_S`` (20 s) and undoes it
``DEMO_HOLD_S`` (60 s) later, saying each step (``announce``: the log, and the screen
adds a toast), so a newcomer sees a finding open on live servers and close again.
``replmon --lab --scenario list`` prints the names.

The ``switchover`` demo is no fault: a planned switchover of MySQL and Redis under the
write load (replmon.lab.switch; the load follows the new primary), and the switch back.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from replmon.errors import LabError
from replmon.lab.faults import (
    auto_increment_on_primary,
    mysql_replica_writable,
    redis_at_maxmemory,
    redis_link_down,
    stop_thread,
    write_on_replica,
)
from replmon.lab.hosts import TwoHostLab
from replmon.lab.links import (
    SHAPED_KBIT,
    monitor_cut,
    node_cut_off,
    node_frozen,
    replication_link_cut,
    replication_link_shaped,
)
from replmon.lab.load import WriteLoad
from replmon.lab.pair import Lab, Layer
from replmon.lab.refusals import (
    disk_full,
    max_connections_reached,
    offline_mode,
    primary_read_only,
    redis_misconf,
    redis_no_master,
    redis_noreplicas,
    redis_oom,
)
from replmon.lab.servers import DEFAULT_MYSQL, DEFAULT_REDIS
from replmon.lab.switch import LayerSwitch, switch_back, switchover

log = logging.getLogger("replmon")

DEMO_AFTER_S = 20.0
"""Seconds of healthy pair before the demo injects its fault."""
DEMO_HOLD_S = 60.0
"""Seconds the fault lasts before the demo undoes it."""


@dataclass(frozen=True)
class Demo:
    name: str
    title: str
    check: str
    """The check whose finding opens (and closes when the fault is undone)."""
    fault: Callable[[Any], contextlib.AbstractContextManager[None]]
    words: Callable[[Any], str] | None = None
    """The title in the lab's own server's words (MySQL 9.x: STOP REPLICA), when they
    differ from ``title``'s."""
    injected: str = "injected"
    undone: str = "undone"
    closes: str = "{check}'s finding closes"
    """Said once undone (``{check}``: the check's id)."""
    sentinel: bool = False
    """The lab runs a Redis Sentinel (replmon.lab.sentinel) and replmon reads it."""
    hold_s: float | None = None
    """Seconds the fault is held before it is undone (None: DEMO_HOLD_S)."""
    hosts: bool = False
    """A fault between two hosts: it runs on the two-host lab (replmon.lab.hosts)."""

    def describe(self, lab: Any) -> str:
        """The title for ``lab``'s servers."""
        return self.title if self.words is None else self.words(lab)


SWITCHOVER_MARIADB = (
    "planned switchover: read_only=ON on the db primary, the replica caught up "
    "(MASTER_GTID_WAIT) and promoted (STOP REPLICA; RESET REPLICA ALL; read_only=OFF), "
    "the old primary CHANGE MASTER TO it (MariaDB's words); Redis: REPLICAOF NO ONE on the "
    "replica, REPLICAOF on the old master; writes follow the new primaries")
SWITCHOVER_MYSQL = (
    "planned switchover: super_read_only=ON on the db primary, the replica caught up "
    "(WAIT_FOR_EXECUTED_GTID_SET) and promoted (STOP REPLICA; RESET REPLICA ALL; "
    "read_only=OFF), the old primary CHANGE REPLICATION SOURCE TO it; Redis: REPLICAOF NO "
    "ONE on the replica, REPLICAOF on the old master; writes follow the new primaries")

READ_ONLY_MARIADB = ("SET GLOBAL read_only=ON on the db primary: the application's writes "
                     "refused (ERROR 1290)")
READ_ONLY_MYSQL = ("SET GLOBAL read_only=ON and super_read_only=ON on the db primary: the "
                   "application's writes refused (ERROR 1290)")


@contextlib.contextmanager
def switchover_and_back(lab: Any) -> Iterator[None]:
    """The switchover demo: MySQL and Redis switched over, switched back on exit, saying
    what changed when."""
    try:
        _say_switched(switchover(lab))
        yield
    finally:
        _say_switched(switch_back(lab))


@contextlib.contextmanager
def sentinel_failover_and_back(lab: Any) -> Iterator[None]:
    """The sentinel-failover demo: the Redis master killed, Sentinel promotes the
    replica and makes the old master, started again, its replica; MySQL stays. On exit,
    ``SENTINEL FAILOVER`` back (planned)."""
    from replmon.lab.sentinel import sentinel_failover, sentinel_switch

    sentinel = lab.sentinel
    try:
        sw = sentinel_failover(lab, sentinel, kill=True, stall_s=3.0)
        announce(f"demo sentinel-failover: lab-{sw.old}'s Redis killed; Sentinel promoted "
                 f"lab-{sw.new} {sw.promoted_wall - sw.fenced_wall:.1f} s after, and made "
                 f"lab-{sw.old} its replica once started again; MySQL stays")
        yield
    finally:
        if lab.redis_primary is not lab.primary:
            back = sentinel_switch(lab, sentinel)
            announce(f"demo sentinel-failover: SENTINEL FAILOVER back: lab-{back.new} is "
                     "the Redis master again")


def _say_switched(done: Mapping[Layer, LayerSwitch]) -> None:
    for layer, sw in done.items():
        announce(f"demo switchover: {layer}: lab-{sw.new} is now the primary (writes refused "
                 f"{sw.refused_s * 1000:.0f} ms; lab-{sw.old} replicating from it "
                 f"{sw.seconds:.2f} s after the fence)")


DEMOS: tuple[Demo, ...] = (
    Demo("sql-thread-stopped", "the replica's SQL thread stopped (STOP REPLICA SQL_THREAD)",
         "mysql_replication", lambda lab: stop_thread(lab, "SQL_THREAD")),
    Demo("io-thread-stopped", "the replica's IO thread stopped (STOP REPLICA IO_THREAD)",
         "mysql_replication", lambda lab: stop_thread(lab, "IO_THREAD")),
    Demo("auto-increment", "auto_increment_increment=2 on the primary only",
         "config_drift", auto_increment_on_primary),
    Demo("replica-writable", "SET GLOBAL read_only=OFF on the replica", "two_primaries",
         mysql_replica_writable),
    Demo("errant-write", "read_only off on the replica and one INSERT there",
         "errant_writes", write_on_replica),
    Demo("redis-link-down", "the Redis replica pointed at a port where nothing listens",
         "redis_replication", redis_link_down),
    Demo("redis-maxmemory", "Redis at maxmemory with allkeys-lru, evicting",
         "memory_ceiling", redis_at_maxmemory),
    Demo("switchover", SWITCHOVER_MARIADB, "roles", switchover_and_back,
         words=lambda lab: SWITCHOVER_MYSQL if lab.is_mysql else SWITCHOVER_MARIADB,
         injected="switched over", undone="switched back",
         closes="{check} reports lab-primary as the primary again"),
    Demo("sentinel-failover", "a Redis Sentinel fails Redis over alone: the Redis master "
         "killed (SIGKILL), the replica promoted, the old master started again and made "
         "its replica; MySQL stays where it is", "roles", sentinel_failover_and_back,
         injected="failed over", undone="failed back (SENTINEL FAILOVER)",
         closes="{check} says Sentinel promoted lab-primary's Redis", sentinel=True),
    Demo("primary-read-only", READ_ONLY_MARIADB, "writes_refused", primary_read_only,
         words=lambda lab: READ_ONLY_MYSQL if lab.is_mysql else READ_ONLY_MARIADB),
    Demo("max-connections", "the db primary at max_connections, every connection taken: "
         "new connections refused (ERROR 1040 Too many connections)", "writes_refused",
         max_connections_reached),
    Demo("offline-mode", "SET GLOBAL offline_mode=ON on the db primary (MySQL): sessions "
         "without CONNECTION_ADMIN cut off and refused, replmon's too (ERROR 3032)",
         "writes_refused", offline_mode),
    Demo("disk-full", "an INSERT on the db primary stalled on a full disk (a MyISAM table on "
         "a full 256 KiB tmpfs, MariaDB): it waits \"for someone to free space\"; the "
         "server looks again once a minute after the space is freed", "writes_refused",
         disk_full, hold_s=20.0),  # (its next look: ~60 s after the INSERT began to wait)
    Demo("redis-noreplicas", "min-replicas-to-write 2 on the Redis master, which has one "
         "replica: writes refused (NOREPLICAS)", "writes_refused", redis_noreplicas),
    Demo("redis-no-master", "the Redis master made a replica of a port where nothing listens "
         "(demoted, no one promoted): both nodes replicas, writes refused (READONLY)",
         "writes_refused", redis_no_master),
    Demo("redis-oom", "maxmemory under used_memory with noeviction on the Redis master: "
         "writes refused (OOM)", "writes_refused", redis_oom),
    Demo("redis-misconf", "the Redis master's BGSAVE failed (its child killed) with "
         "stop-writes-on-bgsave-error yes: writes refused (MISCONF)", "writes_refused",
         redis_misconf),
    Demo("replication-link-cut", "the replication link between the two hosts down at both "
         "ends (ip link set eth1 down); both still answer the monitor", "partition",
         replication_link_cut, hosts=True),
    Demo("replication-link-saturated", f"the replication link shaped with tbf to "
         f"{SHAPED_KBIT} kbit/s, below what the writes make the primary send: the link "
         "saturates, the replica falls behind", "link_saturation", replication_link_shaped,
         hosts=True),
    Demo("monitor-cut", "the monitor cut from the replica (its monitoring link down at its "
         "end) while replication goes on", "partition", monitor_cut, hosts=True),
    Demo("node-cut-off", "the replica's host reached by no one: its monitoring link and the "
         "replication link down at once, as a host powered off looks", "partition",
         node_cut_off, hosts=True),
    Demo("node-frozen", "every process on the replica's host stopped (SIGSTOP), continued "
         "(SIGCONT) when undone", "partition", node_frozen, injected="frozen",
         undone="thawed", hosts=True),
)


def demo(name: str) -> Demo:
    """The demo called ``name``; LabError listing the names otherwise."""
    for d in DEMOS:
        if d.name == name:
            return d
    raise LabError(f"no scenario {name!r}; replmon --lab --scenario list shows them: "
                   + ", ".join(d.name for d in DEMOS))


ANNOUNCE: list[Callable[[str], None]] = []
"""Where the lab demo says what it does (stderr, the log; the TUI adds a toast)."""


def announce(text: str) -> None:
    log.warning("%s", text)
    for say in ANNOUNCE:
        with contextlib.suppress(Exception):  # a closing screen must not stop the demo
            say(text)


@contextlib.contextmanager
def lab_nodes(chosen: Demo | None = None, *, mysql: str = DEFAULT_MYSQL,
              redis: str = DEFAULT_REDIS, hosts: bool = False) -> Iterator[dict[str, Any]]:
    """Start the lab and a write load, yield config keys pointing at it, tear both down
    after. ``chosen``: a demo, run in a thread while the lab is watched. ``hosts``: the
    two-host lab (replmon.lab.hosts), which a demo between two hosts also chooses."""
    hosts = hosts or (chosen is not None and chosen.hosts)
    where = "on two hosts (network namespaces)" if hosts else "on loopback"
    print(f"starting the lab ({mysql} + {redis} primary/replica {where})...",
          file=sys.stderr)
    _hangup_interrupts()
    stopping: float | None = None
    lab_class = TwoHostLab if hosts else Lab
    try:
        with lab_class(mysql=mysql, redis=redis) as lab, WriteLoad(lab, rate=300), \
                _sentinel_beside(lab, chosen) as sentinel:
            nodes = lab.settings()
            del nodes["interval"]  # the command line's --interval, or the default
            if sentinel is not None:
                nodes["sentinel"] = {"host": sentinel.host, "port": sentinel.port}
            print(f"lab up in {lab.dir}: {mysql} {lab.primary.mysql_port}/"
                  f"{lab.replica.mysql_port}, {redis} {lab.primary.redis_port}/"
                  f"{lab.replica.redis_port}", file=sys.stderr)
            if isinstance(lab, TwoHostLab):
                print(f"hosts: {lab.describe()}", file=sys.stderr)
            try:
                with _demo_beside(lab, chosen):
                    yield nodes
            finally:
                # The screen is gone; stopping the load, the four servers and the temp
                # dir takes 1-3 s (MySQL 9.7 on 2 busy cores): silent, it looks hung.
                print("stopping the lab (write load, servers, temp dir)...",
                      file=sys.stderr, flush=True)
                stopping = time.monotonic()
    finally:
        if stopping is not None:  # (also after ^C or a hangup)
            print(f"lab stopped in {time.monotonic() - stopping:.1f} s", file=sys.stderr)


@contextlib.contextmanager
def _sentinel_beside(lab: Any, chosen: Demo | None) -> Iterator[Any]:
    """A Redis Sentinel watching the lab's master, when ``chosen`` needs one (else
    None); ``lab.sentinel`` is it meanwhile."""
    if chosen is None or not chosen.sentinel:
        yield None
        return
    from replmon.lab.sentinel import lab_sentinel

    with lab_sentinel(lab) as sentinel:
        lab.sentinel = sentinel
        try:
            yield sentinel
        finally:
            lab.sentinel = None


@contextlib.contextmanager
def _demo_beside(lab: Any, chosen: Demo | None) -> Iterator[None]:
    """Play ``chosen`` (if any) in a thread while the caller watches the lab; on exit,
    stop it, undoing its fault if it is on."""
    if chosen is None:
        yield
        return
    stop = threading.Event()
    runner = threading.Thread(target=run_demo, args=(lab, chosen, stop), daemon=True,
                              name="lab-demo")
    runner.start()
    try:
        yield
    finally:
        stop.set()
        runner.join(30)


def _hangup_interrupts() -> None:
    """SIGHUP (the ssh session or the terminal went away) and SIGTERM interrupt like ^C,
    so the lab's servers are stopped and its temp dir removed instead of left running."""
    import signal

    def interrupt(signum: int, _frame: object) -> None:
        for again in (signal.SIGHUP, signal.SIGTERM):  # a second signal must not cut
            signal.signal(again, signal.SIG_IGN)  # the teardown short (tmux sends more)
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGHUP, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
            signal.signal(sig, interrupt)


def run_demo(lab: Any, chosen: Demo, stop: threading.Event, *, after_s: float | None = None,
             hold_s: float | None = None) -> None:
    """Wait, inject ``chosen``'s fault, hold it, undo it; say each step."""
    after = DEMO_AFTER_S if after_s is None else after_s
    hold = hold_s if hold_s is not None else chosen.hold_s or DEMO_HOLD_S
    title = chosen.describe(lab)
    announce(f"demo {chosen.name} in {after:.0f} s: {title}; {chosen.check} should "
             "flag it")
    if stop.wait(after):
        return
    try:
        with chosen.fault(lab):
            announce(f"demo {chosen.name}: {chosen.injected}, {chosen.undone} in "
                     f"{hold:.0f} s ({title})")
            stop.wait(hold)
        if not stop.is_set():
            announce(f"demo {chosen.name}: {chosen.undone}; "
                     + chosen.closes.format(check=chosen.check))
    except Exception as e:  # noqa: BLE001 - the demo must not take the screen down
        announce(f"demo {chosen.name} failed: {type(e).__name__}: {e}")
