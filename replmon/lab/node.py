"""One node of the lab (replmon.lab): a MySQL/MariaDB server and a Redis server on
loopback, their processes, and the helpers that start them (free ports, binaries).

A node knows its lab (``node.lab``) for the lab's secrets, server versions and roles;
the lab itself, which starts two nodes and sets up replication between them, is
replmon.lab.Lab.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pymysql
import redis
from pydantic import SecretStr

from replmon.endpoints import MysqlEndpoint, RedisEndpoint
from replmon.errors import LabError
from replmon.lab.servers import Root, ServerVersion


class Lab(Protocol):
    """What a node reads of its lab (replmon.lab.Lab is one): its secrets, server
    versions and roots, and which node is the MySQL primary now. A protocol, so this
    module does not import the lab that imports it."""

    started: bool
    dir: Path
    mysql_server: ServerVersion | None
    redis_server: ServerVersion
    mysql_root: Root
    redis_root: Root
    mysql_home: Path
    redis_home: Path
    redis_password: str
    monitor_user: str
    monitor_password: str

    def mysql_template(self) -> Path: ...

    def mysql_version(self) -> ServerVersion: ...

    @property
    def mysql_primary(self) -> LabNode: ...

    @property
    def mysql_replica(self) -> LabNode: ...

MARIADBD_CANDIDATES = ("mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld")
INSTALL_DB_CANDIDATES = ("mariadb-install-db", "mysql_install_db")
REDIS_CANDIDATES = ("redis-server", "/usr/bin/redis-server")


def free_port() -> int:
    """A TCP port on 127.0.0.1 where nothing listens right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PortTaken(LabError):
    """A server could not bind its port: another process took it after free_port()."""


def find_binary(candidates: tuple[str, ...], package: str) -> str:
    for c in candidates:
        path = shutil.which(c)
        if path:
            return path
    raise LabError(
        f"{candidates[0]} not found: install Debian's {package} package "
        f"(apt-get install -y {package})"
    )


def unmount(path: Path) -> None:
    """Unmount ``path`` if something is mounted there (lazily: a server may still hold
    a file open in it): a fault's tmpfs (replmon.lab.refusals.disk_full)."""
    if os.path.ismount(path):
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True,
                       timeout=10)


def kill_processes(procs: list[subprocess.Popen[bytes] | None], timeout: float = 10.0) -> None:
    """SIGKILL every process still running, then reap them all (a paused one too)."""
    live = [p for p in procs if p is not None and p.poll() is None]
    for p in live:
        with contextlib.suppress(ProcessLookupError):
            p.kill()
    for p in live:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout)


def stop_process(proc: subprocess.Popen[bytes] | None, timeout: float = 15.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGCONT)  # a paused server cannot handle SIGTERM
        proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)



class LabNode:
    """One node of the lab: a MariaDB server and a Redis server."""

    def __init__(self, lab: Lab, name: str, server_id: int) -> None:
        self.lab = lab
        self.name = name
        self.server_id = server_id
        self.host = "127.0.0.1"
        """Where the monitor, the tests and the write load reach its servers."""
        self.bind = "127.0.0.1"
        """Where its servers listen."""
        self.repl_host = "127.0.0.1"
        """Where its replicas reach it (the two-host lab: its replication link)."""
        self.extra_mysql_args: list[str] = []
        self.extra_redis_args: list[str] = []
        """Server options of this node beyond the lab's own (the two-host lab's timeouts)."""
        self.dir = lab.dir / name
        self.mysql_port = free_port()
        self.redis_port = free_port()
        self.mysql_proc: subprocess.Popen[bytes] | None = None
        self.redis_proc: subprocess.Popen[bytes] | None = None
        self._redis_args: list[str] = []

    @property
    def mysql_dir(self) -> Path:
        """This node's MySQL files (datadir, socket, error log) on this machine; inside
        the server's chroot when it runs in one."""
        return self.lab.mysql_home / self.name

    @property
    def datadir(self) -> Path:
        return self.mysql_dir / "mysql"

    @property
    def mysql_socket(self) -> str:
        return str(self.mysql_dir / "mysql.sock")

    def argv(self, argv: list[str]) -> list[str]:
        """The command line that runs ``argv`` on this node: as it is on this machine (the
        two-host lab runs it in the node's namespace: replmon.lab.hosts)."""
        return argv

    # --- endpoints for replmon's sources ---------------------------------
    def mysql_endpoint(self, user: str | None = None, password: str | None = None) -> MysqlEndpoint:
        """TCP endpoint of this node's MariaDB; the lab's monitoring account by default."""
        return MysqlEndpoint(
            host=self.host,
            port=self.mysql_port,
            user=user or self.lab.monitor_user,
            password=SecretStr(password if password is not None else self.lab.monitor_password),
            connect_timeout=1.0,
            read_timeout=2.0,
        )

    def redis_endpoint(self, password: str | None = None) -> RedisEndpoint:
        return RedisEndpoint(
            host=self.host,
            port=self.redis_port,
            password=SecretStr(password if password is not None else self.lab.redis_password),
            connect_timeout=1.0,
            read_timeout=2.0,
        )

    # --- test helpers ------------------------------------------------------
    def root_connection(self, **kw: Any) -> pymysql.connections.Connection[Any]:
        """A root connection over the unix socket (autocommit, no TLS), for tests and
        scenarios that must hold a session open (a lock, a slow statement)."""
        return pymysql.connect(unix_socket=self.mysql_socket, user="root", autocommit=True,
                               connect_timeout=5, ssl_disabled=True, **kw)

    @contextlib.contextmanager
    def running(self, query: str) -> Iterator[int]:
        """``query`` running as root in a thread of its own for the block (a long
        statement for the processlist); yields its connection id and KILLs it after."""
        conn = self.root_connection()
        ident = int(conn.thread_id())  # type: ignore[no-untyped-call]

        def run() -> None:
            with contextlib.suppress(pymysql.err.MySQLError), conn.cursor() as cur:
                cur.execute(query)
                cur.fetchall()

        thread = threading.Thread(target=run, daemon=True, name="lab-running")
        thread.start()
        try:
            time.sleep(0.3)  # on the server by now
            yield ident
        finally:
            self.sql(f"KILL {ident}")
            thread.join(5)
            conn.close()

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        """Run one statement as root over the unix socket (autocommit)."""
        conn = self.root_connection()
        try:
            with conn.cursor() as cur:
                cur.execute(query, args or None)
                return list(cur.fetchall())
        finally:
            conn.close()

    def redis(self) -> redis.Redis:
        """A sync, authenticated client for test setup and load."""
        return redis.Redis(
            host=self.host, port=self.redis_port, password=self.lab.redis_password,
            socket_timeout=5, decode_responses=True,
        )

    # --- MySQL/MariaDB process ---------------------------------------------
    @property
    def mysql_tmp(self) -> Path:
        """The server's own tmpdir: MariaDB removes every '#sql*' file of its tmpdir at
        start, so servers sharing /tmp delete each other's temporary tables (a parallel
        test worker's mariadb-install-db failed that way)."""
        return self.mysql_dir / "tmp"

    def install_mysql(self) -> None:
        self.mysql_tmp.mkdir(parents=True, exist_ok=True)
        if self.lab.mysql_version().product == "mysql":
            # A datadir initialised once per chroot, copied: 1-2 s instead of ~5 s a node.
            shutil.copytree(self.lab.mysql_template(), self.datadir, symlinks=True)
            (self.datadir / "auto.cnf").unlink(missing_ok=True)  # its own server_uuid
            return
        root = self.lab.mysql_root
        install = ("/usr/bin/mariadb-install-db" if root.dir is not None
                   else find_binary(INSTALL_DB_CANDIDATES, "mariadb-server"))
        res = subprocess.run(
            root.argv([install, "--no-defaults", f"--datadir={root.inside(self.datadir)}",
                       f"--tmpdir={root.inside(self.mysql_tmp)}",
                       f"--user={_user()}", "--auth-root-authentication-method=socket",
                       "--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=16M"]),
            capture_output=True, timeout=120, check=False,
        )
        if res.returncode != 0:
            raise LabError(f"mariadb-install-db failed for {self.name}: "
                           f"{res.stderr.decode(errors='replace')[-2000:]}")

    def start_mysql(self) -> None:
        """Start the server; at the lab's first start a port that another process took
        between free_port() and the bind (parallel test workers) is replaced."""
        for attempt in range(3):
            try:
                return self._start_mysql()
            except PortTaken:
                if self.lab.started or attempt == 2:
                    raise
                self.mysql_port = free_port()

    def _start_mysql(self) -> None:
        root, product = self.lab.mysql_root, self.lab.mysql_version().product
        inside = root.inside
        common = [
            f"--datadir={inside(self.datadir)}", f"--socket={inside(self.mysql_socket)}",
            f"--tmpdir={inside(self.mysql_tmp)}",
            f"--port={self.mysql_port}", f"--bind-address={self.bind}",
            f"--pid-file={inside(self.mysql_dir / 'mysql.pid')}",
            f"--log-error={inside(self.mysql_dir / 'mysql.err')}",
            f"--server-id={self.server_id}", "--log-bin=binlog", "--skip-name-resolve",
            "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=2",
            "--sync-binlog=0", "--max-connections=300",
        ]
        if product == "mysql":
            args = [
                "/usr/sbin/mysqld", "--no-defaults", "--user=root", *common,
                "--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--skip-replica-start",
                "--relay-log=relay", "--mysqlx=OFF", "--innodb-redo-log-capacity=16M",
                "--secure-file-priv=NULL", "--performance-schema=ON",
            ]
        else:
            mariadbd = root.binary or find_binary(MARIADBD_CANDIDATES, "mariadb-server")
            args = [
                mariadbd, "--no-defaults", f"--user={_user()}", *common,
                "--binlog-format=ROW", "--log-slave-updates", "--innodb-log-file-size=16M",
                "--performance-schema=OFF", "--gtid-domain-id=0", "--skip-slave-start",
            ]
        args += self.extra_mysql_args
        if self is not self.lab.mysql_primary:
            args.append("--read-only")  # survives restart_mysql(), as in production
        self.mysql_proc = subprocess.Popen(
            self.argv(root.argv(args)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._wait_mysql()

    def _wait_mysql(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.mysql_proc is not None and self.mysql_proc.poll() is not None:
                if "already in use" in self._mysql_log_tail():
                    raise PortTaken(f"{self.name}: MySQL port {self.mysql_port} taken")
                raise LabError(f"{self.lab.mysql_version().name} ({self.name}) exited at start:"
                               f"\n{self._mysql_log_tail()}")
            if _accepts(self.mysql_socket):
                try:
                    self.sql("SELECT 1")
                    return
                except pymysql.err.OperationalError:
                    pass
            time.sleep(0.1)
        raise LabError(f"{self.lab.mysql_version().name} ({self.name}) not ready in "
                       f"{timeout:.0f} s:\n"
                       f"{self._mysql_log_tail()}")

    def _mysql_log_tail(self) -> str:
        try:
            err = (self.mysql_dir / "mysql.err").read_text(errors="replace")
            return "\n".join(err.splitlines()[-15:])
        except OSError:
            return "(no error log)"

    @property
    def spill_dir(self) -> Path:
        """Where a fault mounts a small filesystem of this node (lab.refusals.disk_full)."""
        return self.mysql_dir / "full"

    def stop_mysql(self) -> None:
        stop_process(self.mysql_proc)
        self.mysql_proc = None

    def kill_mysql(self) -> None:
        """SIGKILL the MySQL server, as a crash or a power cut would end it."""
        proc, self.mysql_proc = self.mysql_proc, None
        if proc is not None:
            proc.kill()
            proc.wait(10)

    def restart_mysql(self) -> None:
        self.stop_mysql()
        self.start_mysql()
        if self is self.lab.mysql_replica:
            self.sql("START REPLICA")  # MariaDB >= 10.5 says it too

    def pause_mysql(self) -> None:
        """SIGSTOP mariadbd: a hung server (connections accepted by the kernel, no answers)."""
        assert self.mysql_proc is not None
        os.kill(self.mysql_proc.pid, signal.SIGSTOP)

    def resume_mysql(self) -> None:
        assert self.mysql_proc is not None
        os.kill(self.mysql_proc.pid, signal.SIGCONT)

    # --- Redis process -----------------------------------------------------
    def start_redis(self, replica_of: LabNode | None = None) -> None:
        """Start redis-server; a port taken at the lab's first start is replaced."""
        for attempt in range(3):
            try:
                return self._start_redis(replica_of)
            except PortTaken:
                if self.lab.started or attempt == 2:
                    raise
                self.redis_port = free_port()
                self._redis_args = []

    @property
    def redis_dir(self) -> Path:
        """This node's Redis files (its log) on this machine; in the server's chroot when
        it runs in one."""
        return self.lab.redis_home / self.name

    def _start_redis(self, replica_of: LabNode | None = None) -> None:
        root = self.lab.redis_root
        server = root.binary or find_binary(REDIS_CANDIDATES, "redis-server")
        self.redis_dir.mkdir(parents=True, exist_ok=True)
        log = self.redis_dir / "redis.log"
        if not self._redis_args:
            self._redis_args = [
                server, "--port", str(self.redis_port), "--bind", self.bind,
                "--save", "", "--appendonly", "no", "--dir", root.inside(self.redis_dir),
                "--logfile", root.inside(log), "--daemonize", "no",
                "--requirepass", self.lab.redis_password, "--masterauth", self.lab.redis_password,
                "--repl-ping-replica-period", "1",
                # a replica's first full sync at once, not after Redis's default 5 s wait
                # for more replicas to share it (every lab start waited those 5 s)
                "--repl-diskless-sync-delay", "0", *self.extra_redis_args,
            ]
            if replica_of is not None:
                self._redis_args += ["--replicaof", replica_of.repl_host,
                                     str(replica_of.redis_port)]
        self.redis_proc = subprocess.Popen(
            self.argv(root.argv(self._redis_args)), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.redis_proc.poll() is not None:
                with contextlib.suppress(OSError):
                    if "already in use" in log.read_text(errors="replace"):
                        raise PortTaken(f"{self.name}: Redis port {self.redis_port} taken")
                raise LabError(f"{self.lab.redis_server.name} ({self.name}) exited at start; "
                               f"see {log}")
            try:
                with self.redis() as r:
                    r.ping()
                return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        raise LabError(f"redis-server ({self.name}) not ready in 20 s")

    def stop_redis(self) -> None:
        stop_process(self.redis_proc)
        self.redis_proc = None

    def kill_redis(self) -> None:
        """SIGKILL the Redis server, as a crash or a power cut would end it."""
        proc, self.redis_proc = self.redis_proc, None
        if proc is not None:
            proc.kill()
            proc.wait(10)

    def pause_redis(self) -> None:
        assert self.redis_proc is not None
        os.kill(self.redis_proc.pid, signal.SIGSTOP)

    def resume_redis(self) -> None:
        assert self.redis_proc is not None
        os.kill(self.redis_proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        self.stop_redis()
        self.stop_mysql()
        unmount(self.spill_dir)  # a fault's tmpfs, left by a run killed during it


def _accepts(unix_path: str) -> bool:
    """True when something accepts connections on the unix socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(unix_path)
        except OSError:
            return False
        return True


def _user() -> str:
    """mariadbd refuses to run as root unless told to; the lab runs as whoever we are."""
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name

