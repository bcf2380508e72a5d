"""The lab: a throwaway replicated pair on this machine, for tests and the demo.

``Lab`` starts, on 127.0.0.1 and free ports, in a temp dir:

* MariaDB primary + replica with GTID replication (``mariadb-install-db``,
  ``mariadbd``; binlog_format=ROW), a ``lab`` database, a replication account,
  a monitoring account with the grants a monitor needs and an application account
  (the write load's);
* Redis master + replica (``redis-server``), both password-protected;

(``Lab(mysql=None)``: the Redis pair alone, for the tests of a Redis version that need
no MySQL beside it) and tears everything down on ``stop()`` / context exit, also after a failed
test. Binaries come from Debian's mariadb-server and redis-server packages;
when one is missing, ``Lab.start()`` raises LabError saying which.

    with Lab() as lab:
        lab.primary.sql("INSERT INTO lab.t (v) VALUES (1)")
        lab.wait_replica_caught_up()

Its nodes are replmon.lab.node.LabNode; its write load is replmon.lab.load.WriteLoad.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from replmon.errors import LabError
from replmon.lab.node import LabNode, free_port, kill_processes
from replmon.lab.servers import (
    DEFAULT_MYSQL,
    DEFAULT_REDIS,
    HOST,
    Root,
    ServerVersion,
    locked,
    mysql_server,
    prepare,
    redis_server,
)

Layer = Literal["mysql", "redis"]
LAYERS: tuple[Layer, ...] = ("mysql", "redis")


class Lab:
    """A MariaDB + Redis primary/replica pair on loopback, in a temp dir.

    ``primary`` and ``replica`` are the nodes as started (their names, dirs and the
    ``lab-primary``/``lab-replica`` of ``settings()`` never change). Which one is the
    primary now, per layer, is ``mysql_primary``/``redis_primary`` (and
    ``mysql_replica``/``redis_replica``): the primary at start, the other node after a
    switchover or failover (replmon.lab.switch), which calls ``set_primary``.
    """

    monitor_user = "replmon"
    repl_user = "repl"
    app_user = "app"
    """The write load's account: DML on the lab database, no admin privileges, so
    read_only=ON stops it as it stops an application."""

    def __init__(self, base_dir: str | Path | None = None, *, keep: bool = False,
                 mysql: str | None = DEFAULT_MYSQL, redis: str = DEFAULT_REDIS) -> None:
        self.mysql_server: ServerVersion | None = (mysql_server(mysql) if mysql is not None
                                                   else None)
        """None: a lab without MySQL (no server started, none in ``settings()``)."""
        self.redis_server: ServerVersion = redis_server(redis)
        self._own_dir = base_dir is None
        self.dir = (Path(tempfile.mkdtemp(prefix="replmon-lab-")) if base_dir is None
                    else Path(base_dir))
        self.keep = keep
        self.mysql_root: Root = HOST
        """Where the MySQL server runs (a chroot for the versions this machine lacks)."""
        self.mysql_home: Path = self.dir
        """The nodes' MySQL files: ``dir`` on this machine, a dir in the chroot otherwise."""
        self.redis_root: Root = HOST
        self.redis_home: Path = self.dir
        """The nodes' Redis files, as ``mysql_home``."""
        # Fresh random secrets per lab: they must never show up in replmon's output.
        self.monitor_password = "mon-" + os.urandom(6).hex()
        self.repl_password = "repl-" + os.urandom(6).hex()
        self.redis_password = "red-" + os.urandom(6).hex()
        self.app_password = "app-" + os.urandom(6).hex()
        self.primary = self.node(self.node_names[0], server_id=1)
        self.replica = self.node(self.node_names[1], server_id=2)
        self._primaries: dict[Layer, LabNode] = dict.fromkeys(LAYERS, self.primary)
        self._followers: list[Callable[[Layer, LabNode], None]] = []
        self.started = False
        self.sentinel: Any = None
        """The Redis Sentinel watching this lab while a demo runs one
        (replmon.lab.sentinel.LabSentinel), else None."""

    node_names = ("primary", "replica")
    """The nodes' names (their dirs; ``lab-<name>`` in ``settings()``)."""

    def node(self, name: str, server_id: int) -> LabNode:
        """One of the lab's two nodes, made as the lab starts (a hook: the two-host lab's
        nodes run in namespaces of their own, replmon.lab.hosts)."""
        return LabNode(self, name, server_id=server_id)

    # --- roles -------------------------------------------------------------------
    @property
    def nodes(self) -> tuple[LabNode, LabNode]:
        """(primary, replica): the nodes as started."""
        return (self.primary, self.replica)

    def index(self, node: LabNode) -> int:
        """0 for the node started as primary, 1 for the other."""
        return self.nodes.index(node)

    def other(self, node: LabNode) -> LabNode:
        return self.replica if node is self.primary else self.primary

    def primary_of(self, layer: Layer) -> LabNode:
        """The node that is the primary (MySQL) or master (Redis) of ``layer`` now."""
        return self._primaries[layer]

    @property
    def mysql_primary(self) -> LabNode:
        """The node whose MySQL is the writable primary now."""
        return self._primaries["mysql"]

    @property
    def mysql_replica(self) -> LabNode:
        """The node whose MySQL replicates from ``mysql_primary`` now."""
        return self.other(self._primaries["mysql"])

    @property
    def redis_primary(self) -> LabNode:
        """The node whose Redis is the master now."""
        return self._primaries["redis"]

    @property
    def redis_replica(self) -> LabNode:
        return self.other(self._primaries["redis"])

    @property
    def switched(self) -> bool:
        """True when some layer's primary is not the node started as primary."""
        return any(n is not self.primary for n in self._primaries.values())

    def set_primary(self, layer: Layer, node: LabNode) -> None:
        """Record that ``node`` is now ``layer``'s primary (the switchover functions call
        it the moment the node takes writes) and tell the followers (write loads)."""
        self._primaries[layer] = node
        for follow in list(self._followers):
            follow(layer, node)

    def follow(self, callback: Callable[[Layer, LabNode], None]) -> None:
        """Call ``callback(layer, node)`` whenever a layer's primary changes."""
        self._followers.append(callback)

    def unfollow(self, callback: Callable[[Layer, LabNode], None]) -> None:
        with contextlib.suppress(ValueError):
            self._followers.remove(callback)

    @staticmethod
    def free_port() -> int:
        return free_port()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.started = True

    @property
    def has_mysql(self) -> bool:
        """The lab runs a MySQL/MariaDB pair (not ``Lab(mysql=None)``)."""
        return self.mysql_server is not None

    def mysql_version(self) -> ServerVersion:
        """The MySQL server of the lab; LabError for a lab without MySQL."""
        if self.mysql_server is None:
            raise LabError("this lab runs no MySQL (Lab(mysql=None))")
        return self.mysql_server

    @property
    def is_mysql(self) -> bool:
        """Oracle MySQL (not MariaDB): its GTIDs, its words, performance_schema."""
        return self.mysql_server is not None and self.mysql_server.product == "mysql"

    def mysql_template(self) -> Path:
        """An Oracle MySQL datadir initialised once in the chroot (``--initialize-insecure``:
        root@localhost without a password, reached over the socket only), for nodes to copy."""
        root = self.mysql_root
        template = root.outside(f"/var/lib/replmon-{self.mysql_version().name}-template")
        if (template / ".replmon-ready").exists():
            return template
        with locked(template.parent / f"{template.name}.lock"):
            if (template / ".replmon-ready").exists():
                return template
            shutil.rmtree(template, ignore_errors=True)
            res = subprocess.run(
                root.argv(["/usr/sbin/mysqld", "--no-defaults", "--initialize-insecure",
                           "--user=root", f"--datadir={root.inside(template)}",
                           "--innodb-redo-log-capacity=16M", "--log-error-verbosity=1"]),
                capture_output=True, timeout=300, check=False)
            if res.returncode != 0:
                raise LabError(f"mysqld --initialize-insecure failed: "
                               f"{(res.stdout + res.stderr).decode(errors='replace')[-2000:]}")
            (template / ".replmon-ready").touch()
        return template

    def _start(self) -> None:
        p, r = self.primary, self.replica
        for layer in LAYERS:
            self._primaries[layer] = p
        self.redis_root = prepare(self.redis_server)
        if self.redis_root.dir is not None:
            self.redis_home = Path(tempfile.mkdtemp(prefix="replmon-lab-",
                                                    dir=self.redis_root.tmp()))
        if self.mysql_server is not None:
            self._start_mysql_pair(self.mysql_server)
        p.start_redis()
        r.start_redis(replica_of=p)
        self._check_redis_version(p)
        if self.mysql_server is not None:
            self.wait_replica_caught_up(timeout=30)
        self._wait_redis_link(timeout=30)

    def _start_mysql_pair(self, server: ServerVersion) -> None:
        """Both MySQL servers, their accounts and schema, the replica replicating."""
        p, r = self.primary, self.replica
        self.mysql_root = prepare(server)
        if self.mysql_root.dir is not None:
            self.mysql_home = Path(tempfile.mkdtemp(prefix="replmon-lab-",
                                                    dir=self.mysql_root.tmp()))
        with ThreadPoolExecutor(2, thread_name_prefix="lab-install") as pool:
            # both at once: each mariadb-install-db waits ~2 s mostly on its own fsyncs
            for done in [pool.submit(p.install_mysql), pool.submit(r.install_mysql)]:
                done.result()
        p.start_mysql()
        r.start_mysql()
        self._check_version(p)
        grants: tuple[str, ...]
        if self.is_mysql:
            # MySQL's defaults: accounts made the default way (caching_sha2_password),
            # replication over its RSA key exchange (no TLS on loopback).
            grants = (f"GRANT PROCESS, REPLICATION CLIENT ON *.* TO '{self.monitor_user}'@'%'",
                      f"GRANT SELECT ON performance_schema.* TO '{self.monitor_user}'@'%'")
        else:
            grants = (f"GRANT PROCESS, BINLOG MONITOR, SLAVE MONITOR ON *.* "
                      f"TO '{self.monitor_user}'@'%'",)
        for stmt in (
            f"CREATE USER '{self.repl_user}'@'%' IDENTIFIED BY '{self.repl_password}'",
            f"GRANT REPLICATION SLAVE ON *.* TO '{self.repl_user}'@'%'",
            f"CREATE USER '{self.monitor_user}'@'%' IDENTIFIED BY '{self.monitor_password}'",
            *grants,
            f"CREATE USER '{self.app_user}'@'%' IDENTIFIED BY '{self.app_password}'",
            "CREATE DATABASE lab",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON lab.* TO '{self.app_user}'@'%'",
            "CREATE TABLE lab.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT NOT NULL DEFAULT 0,"
            " c CHAR(60) NOT NULL DEFAULT '') ENGINE=InnoDB",
        ):
            p.sql(stmt)
        # The replica starts from an empty GTID position and replays the
        # primary's whole binlog, accounts and schema included.
        if self.is_mysql:
            r.sql(
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST=%s, SOURCE_PORT=%s,"
                " SOURCE_USER=%s, SOURCE_PASSWORD=%s, SOURCE_AUTO_POSITION=1,"
                " SOURCE_CONNECT_RETRY=1, GET_SOURCE_PUBLIC_KEY=1",
                p.repl_host, p.mysql_port, self.repl_user, self.repl_password,
            )
        else:
            r.sql(
                "CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER=%s,"
                " MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
                p.repl_host, p.mysql_port, self.repl_user, self.repl_password,
            )
        r.sql("SET GLOBAL read_only=ON")
        r.sql("START REPLICA")

    def _check_version(self, node: LabNode) -> None:
        """The server is the version asked for (a Debian suite moves on)."""
        version = str(node.sql("SELECT VERSION()")[0][0])
        server = self.mysql_version()
        if not version.startswith(server.version_prefix):
            raise LabError(f"{server.name}: the server says {version}; its Debian "
                           f"suite ({server.suite or 'this machine'}) has moved on")

    def _check_redis_version(self, node: LabNode) -> None:
        with node.redis() as rc:
            info = rc.info("server")
        version = str(info.get("valkey_version") or info.get("redis_version") or "")
        server = self.redis_server
        if not version.startswith(server.version_prefix):
            source = server.wheel or server.suite or "this machine"
            raise LabError(f"{server.name}: the server says {version}; its source ({source}) "
                           "has moved on")

    def stop(self) -> None:
        """Stop every server and remove the lab's files. A throwaway lab's servers are
        killed at once, all together: their data is deleted next, and a clean shutdown
        cost Oracle MySQL 9.7's primary 10.9 s (the replica 1.2 s) at every test run's
        end and every demo's quit. A kept lab (``keep``) shuts down cleanly."""
        throwaway = self._own_dir and not self.keep
        if throwaway:
            procs = [p for node in (self.replica, self.primary)
                     for p in (node.redis_proc, node.mysql_proc)]
            kill_processes(procs)
            for node in (self.replica, self.primary):
                node.redis_proc = node.mysql_proc = None
        for node in (self.replica, self.primary):
            node.stop()
        if throwaway:
            shutil.rmtree(self.dir, ignore_errors=True)
            for home in {self.mysql_home, self.redis_home} - {self.dir}:
                shutil.rmtree(home, ignore_errors=True)
        self.started = False

    def settings(self, interval: float = 1.0, *, mysql: bool = True) -> dict[str, Any]:
        """Config keys (for config.build_config) that point replmon at this lab, with the
        monitor account's password (never printed: it is a SecretStr once validated).
        MySQL is switched off (``enabled = false``: its source "absent") when ``mysql`` is
        False or the lab runs none."""
        data: dict[str, Any] = {"interval": interval}
        for role, node in zip(("primary", "replica"), self.nodes, strict=True):
            data[role] = {
                "host": node.host, "name": f"lab-{node.name}",
                "mysql": ({"port": node.mysql_port, "user": self.monitor_user,
                           "password": self.monitor_password}
                          if mysql and self.has_mysql else {"enabled": False}),
                "redis": {"port": node.redis_port, "password": self.redis_password},
            }
        return data

    def wait_replica_caught_up(self, timeout: float = 10.0) -> None:
        """Wait until the MySQL replica's SQL thread has applied the current primary's
        GTID position (the current roles: ``mysql_primary``, ``mysql_replica``); at once
        on a lab without MySQL."""
        if not self.has_mysql:
            return
        primary, replica = self.mysql_primary, self.mysql_replica
        if self.is_mysql:
            pos = primary.sql("SELECT @@GLOBAL.gtid_executed")[0][0]
            wait = "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)"
        else:
            pos = primary.sql("SELECT @@gtid_binlog_pos")[0][0]
            wait = "SELECT MASTER_GTID_WAIT(%s, %s)"
        if not pos:
            return
        res = replica.sql(wait, pos, timeout)
        if res[0][0] != 0:
            status = replica.sql("SHOW REPLICA STATUS")
            raise LabError(f"{replica.name} did not reach {pos} in {timeout} s: {status}")

    def _wait_redis_link(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self.redis_replica.redis() as rc:
            while time.monotonic() < deadline:
                info = rc.info("replication")
                if (info.get("master_link_status") == "up"
                        and info.get("master_port") == self.redis_primary.redis_port):
                    return
                time.sleep(0.05)
        raise LabError("Redis replica link did not come up")
