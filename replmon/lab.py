"""The lab: a throwaway replicated pair on this machine, for tests and the demo.

``Lab`` starts, on 127.0.0.1 and free ports, in a temp dir:

* MariaDB primary + replica with GTID replication (``mariadb-install-db``,
  ``mariadbd``; binlog_format=ROW), a ``lab`` database, a replication account
  and a monitoring account with the grants a monitor needs;
* Redis master + replica (``redis-server``), both password-protected;

and tears everything down on ``stop()`` / context exit, also after a failed
test. Binaries come from Debian's mariadb-server and redis-server packages;
when one is missing, ``Lab.start()`` raises LabError saying which.

    with Lab() as lab:
        lab.primary.sql("INSERT INTO lab.t (v) VALUES (1)")
        lab.wait_replica_caught_up()
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pymysql
import redis
from pydantic import SecretStr

from replmon.endpoints import MysqlEndpoint, RedisEndpoint
from replmon.errors import LabError
from replmon.labservers import (
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


def _stop_process(proc: subprocess.Popen[bytes] | None, timeout: float = 15.0) -> None:
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
        if self.lab.mysql_server.product == "mysql":
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
        root, product = self.lab.mysql_root, self.lab.mysql_server.product
        inside = root.inside
        common = [
            f"--datadir={inside(self.datadir)}", f"--socket={inside(self.mysql_socket)}",
            f"--tmpdir={inside(self.mysql_tmp)}",
            f"--port={self.mysql_port}", "--bind-address=127.0.0.1",
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
        if self.name == "replica":
            args.append("--read-only")  # survives restart_mysql(), as in production
        self.mysql_proc = subprocess.Popen(
            root.argv(args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._wait_mysql()

    def _wait_mysql(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.mysql_proc is not None and self.mysql_proc.poll() is not None:
                if "already in use" in self._mysql_log_tail():
                    raise PortTaken(f"{self.name}: MySQL port {self.mysql_port} taken")
                raise LabError(f"{self.lab.mysql_server.name} ({self.name}) exited at start:"
                               f"\n{self._mysql_log_tail()}")
            if _accepts(self.mysql_socket):
                try:
                    self.sql("SELECT 1")
                    return
                except pymysql.err.OperationalError:
                    pass
            time.sleep(0.1)
        raise LabError(f"{self.lab.mysql_server.name} ({self.name}) not ready in "
                       f"{timeout:.0f} s:\n"
                       f"{self._mysql_log_tail()}")

    def _mysql_log_tail(self) -> str:
        try:
            err = (self.mysql_dir / "mysql.err").read_text(errors="replace")
            return "\n".join(err.splitlines()[-15:])
        except OSError:
            return "(no error log)"

    def stop_mysql(self) -> None:
        _stop_process(self.mysql_proc)
        self.mysql_proc = None

    def restart_mysql(self) -> None:
        self.stop_mysql()
        self.start_mysql()
        if self is self.lab.replica:
            self.sql("START REPLICA")  # MariaDB >= 10.5 says it too

    def pause_mysql(self) -> None:
        """SIGSTOP mariadbd: a hung server (connections accepted by the kernel, no answers)."""
        assert self.mysql_proc is not None
        os.kill(self.mysql_proc.pid, signal.SIGSTOP)

    def resume_mysql(self) -> None:
        assert self.mysql_proc is not None
        os.kill(self.mysql_proc.pid, signal.SIGCONT)

    # --- Redis process -----------------------------------------------------
    def start_redis(self, replica_of: int | None = None) -> None:
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

    def _start_redis(self, replica_of: int | None = None) -> None:
        root = self.lab.redis_root
        server = root.binary or find_binary(REDIS_CANDIDATES, "redis-server")
        self.redis_dir.mkdir(parents=True, exist_ok=True)
        log = self.redis_dir / "redis.log"
        if not self._redis_args:
            self._redis_args = [
                server, "--port", str(self.redis_port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", root.inside(self.redis_dir),
                "--logfile", root.inside(log), "--daemonize", "no",
                "--requirepass", self.lab.redis_password, "--masterauth", self.lab.redis_password,
                "--repl-ping-replica-period", "1",
            ]
            if replica_of is not None:
                self._redis_args += ["--replicaof", "127.0.0.1", str(replica_of)]
        self.redis_proc = subprocess.Popen(
            root.argv(self._redis_args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
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
        _stop_process(self.redis_proc)
        self.redis_proc = None

    def pause_redis(self) -> None:
        assert self.redis_proc is not None
        os.kill(self.redis_proc.pid, signal.SIGSTOP)

    def resume_redis(self) -> None:
        assert self.redis_proc is not None
        os.kill(self.redis_proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        self.stop_redis()
        self.stop_mysql()


class Lab:
    """A MariaDB + Redis primary/replica pair on loopback, in a temp dir."""

    monitor_user = "replmon"
    repl_user = "repl"

    def __init__(self, base_dir: str | Path | None = None, *, keep: bool = False,
                 mysql: str = DEFAULT_MYSQL, redis: str = DEFAULT_REDIS) -> None:
        self.mysql_server: ServerVersion = mysql_server(mysql)
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
        self.primary = LabNode(self, "primary", server_id=1)
        self.replica = LabNode(self, "replica", server_id=2)
        self.started = False

    @staticmethod
    def free_port() -> int:
        return free_port()

    def __enter__(self) -> Lab:
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
    def is_mysql(self) -> bool:
        """Oracle MySQL (not MariaDB): its GTIDs, its words, performance_schema."""
        return self.mysql_server.product == "mysql"

    def mysql_template(self) -> Path:
        """An Oracle MySQL datadir initialised once in the chroot (``--initialize-insecure``:
        root@localhost without a password, reached over the socket only), for nodes to copy."""
        root = self.mysql_root
        template = root.outside(f"/var/lib/replmon-{self.mysql_server.name}-template")
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
        self.mysql_root = prepare(self.mysql_server)
        self.redis_root = prepare(self.redis_server)
        if self.mysql_root.dir is not None:
            self.mysql_home = Path(tempfile.mkdtemp(prefix="replmon-lab-",
                                                    dir=self.mysql_root.tmp()))
        if self.redis_root.dir is not None:
            self.redis_home = Path(tempfile.mkdtemp(prefix="replmon-lab-",
                                                    dir=self.redis_root.tmp()))
        p.install_mysql()
        r.install_mysql()
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
            "CREATE DATABASE lab",
            "CREATE TABLE lab.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT NOT NULL DEFAULT 0,"
            " c CHAR(60) NOT NULL DEFAULT '') ENGINE=InnoDB",
        ):
            p.sql(stmt)
        # The replica starts from an empty GTID position and replays the
        # primary's whole binlog, accounts and schema included.
        if self.is_mysql:
            r.sql(
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%s,"
                " SOURCE_USER=%s, SOURCE_PASSWORD=%s, SOURCE_AUTO_POSITION=1,"
                " SOURCE_CONNECT_RETRY=1, GET_SOURCE_PUBLIC_KEY=1",
                p.mysql_port, self.repl_user, self.repl_password,
            )
        else:
            r.sql(
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER=%s,"
                " MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
                p.mysql_port, self.repl_user, self.repl_password,
            )
        r.sql("SET GLOBAL read_only=ON")
        r.sql("START REPLICA")
        p.start_redis()
        r.start_redis(replica_of=p.redis_port)
        self._check_redis_version(p)
        self.wait_replica_caught_up(timeout=30)
        self._wait_redis_link(timeout=30)

    def _check_version(self, node: LabNode) -> None:
        """The server is the version asked for (a Debian suite moves on)."""
        version = str(node.sql("SELECT VERSION()")[0][0])
        if not version.startswith(self.mysql_server.version_prefix):
            raise LabError(f"{self.mysql_server.name}: the server says {version}; its Debian "
                           f"suite ({self.mysql_server.suite or 'this machine'}) has moved on")

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
        for node in (self.replica, self.primary):
            node.stop()
        if self._own_dir and not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
            for home in {self.mysql_home, self.redis_home} - {self.dir}:
                shutil.rmtree(home, ignore_errors=True)
        self.started = False

    def settings(self, interval: float = 1.0) -> dict[str, Any]:
        """Config keys (for config.build_config) that point replmon at this lab, with the
        monitor account's password (never printed: it is a SecretStr once validated)."""
        data: dict[str, Any] = {"interval": interval}
        for node in (self.primary, self.replica):
            data[node.name] = {
                "host": node.host, "name": f"lab-{node.name}",
                "mysql": {"port": node.mysql_port, "user": self.monitor_user,
                          "password": self.monitor_password},
                "redis": {"port": node.redis_port, "password": self.redis_password},
            }
        return data

    def wait_replica_caught_up(self, timeout: float = 10.0) -> None:
        """Wait until the replica's SQL thread has applied the primary's current GTID position."""
        if self.is_mysql:
            pos = self.primary.sql("SELECT @@GLOBAL.gtid_executed")[0][0]
            wait = "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)"
        else:
            pos = self.primary.sql("SELECT @@gtid_binlog_pos")[0][0]
            wait = "SELECT MASTER_GTID_WAIT(%s, %s)"
        if not pos:
            return
        res = self.replica.sql(wait, pos, timeout)
        if res[0][0] != 0:
            status = self.replica.sql("SHOW REPLICA STATUS")
            raise LabError(f"replica did not reach {pos} in {timeout} s: {status}")

    def _wait_redis_link(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self.replica.redis() as rc:
            while time.monotonic() < deadline:
                info = rc.info("replication")
                if info.get("master_link_status") == "up":
                    return
                time.sleep(0.05)
        raise LabError("Redis replica link did not come up")


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


class WriteLoad:
    """A background write load on the lab's primary: random-id UPDATEs and some
    INSERTs on ``table`` (lab.t), plus Redis SET/GET, at roughly ``rate`` statements/s.
    Used by the demo and by tests that need counters to move.

        with WriteLoad(lab, rate=200):
            ...

    ``table`` is created like lab.t when missing and filled with ``rows`` rows (with
    the server's auto_increment_increment at that moment); UPDATE ids are drawn from
    1..``id_max`` (default ``rows``). Seed 004's situation: SET GLOBAL
    auto_increment_increment=2, a new table, id_max=2 x rows: half the UPDATEs miss.
    """

    def __init__(self, lab: Lab, *, rate: float = 200.0, rows: int = 1000,
                 table: str = "lab.t", id_max: int | None = None,
                 redis: bool = True) -> None:
        import multiprocessing

        self.lab = lab
        self.rate = rate
        self.rows = rows
        self.table = table
        self.id_max = id_max or rows
        self.redis = redis
        # A separate (spawned) process, not a thread: the load must not share a GIL with
        # the replmon under test, or its round-trip times and CPU figures would include
        # the load's own work (measured: Redis PING 5-16 ms on loopback with a thread).
        ctx = multiprocessing.get_context("spawn")
        # A flag, not a multiprocessing.Event: Event.set() waits for every process
        # waiting on it to wake, forever for one that died waiting (the load killed by
        # the terminal's SIGHUP: replmon --lab then hung in its teardown, lab left running)
        self._stop = ctx.Value("b", 0, lock=False)
        self._count = ctx.Value("q", 0)
        p = lab.primary
        self._proc = ctx.Process(
            target=_write_load, name="lab-write-load", daemon=True,
            args=(p.mysql_socket, p.host, p.redis_port, lab.redis_password, self.table,
                  self.id_max, self.rate, self.redis, self._stop, self._count),
        )

    @property
    def statements(self) -> int:
        """Statements sent so far."""
        return int(self._count.value)

    def __enter__(self) -> WriteLoad:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        p = self.lab.primary
        if self.table != "lab.t":
            p.sql(f"CREATE TABLE IF NOT EXISTS {self.table} LIKE lab.t")
        have = p.sql(f"SELECT COUNT(*) FROM {self.table}")[0][0]
        if have < self.rows:
            values = ",".join(["(0)"] * (self.rows - have))
            p.sql(f"INSERT INTO {self.table} (v) VALUES {values}")
        self._proc.start()
        # Spawning takes ~0.5 s (imports): return once the load is actually running,
        # so "the load started" is a moment tests can count ticks from.
        deadline = time.monotonic() + 15
        while self.statements < 5:
            if not self._proc.is_alive() or time.monotonic() > deadline:
                raise LabError(f"the write load did not start (exit code {self._proc.exitcode})")
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.value = 1
        self._proc.join(5)
        if self._proc.is_alive():  # blocked on a lock a test holds (FTWRL): end it
            self._proc.terminate()
            self._proc.join(5)


def _write_load(socket: str, host: str, redis_port: int, redis_password: str, table: str,
                id_max: int, rate: float, use_redis: bool, stop: Any, count: Any) -> None:
    """WriteLoad's process: random-id UPDATEs, every 10th an INSERT, plus Redis SET/GET."""
    import random

    def connect() -> pymysql.connections.Connection[Any]:
        return pymysql.connect(unix_socket=socket, user="root", autocommit=True,
                               ssl_disabled=True, connect_timeout=2)

    conn = connect()
    rc = redis.Redis(host=host, port=redis_port, password=redis_password, socket_timeout=5)
    period = 1.0 / rate
    next_t = time.monotonic()
    n = 0
    def wait(seconds: float) -> None:
        """Sleep ``seconds``, or less once the stop flag is up."""
        end = time.monotonic() + seconds
        while not stop.value and (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 0.05))

    try:
        while not stop.value:
            i = random.randint(1, id_max)
            try:
                with conn.cursor() as cur:
                    if n % 10 == 9:
                        cur.execute(f"INSERT INTO {table} (v) VALUES (%s)", (i,))
                    else:
                        cur.execute(f"UPDATE {table} SET v = v + 1 WHERE id = %s", (i,))
                if use_redis:
                    rc.set(f"lab:k{i}", i)
                    rc.get(f"lab:k{i % 97}")
            except (pymysql.err.Error, redis.exceptions.RedisError, OSError):
                # The server may be restarted or paused by a test: back off, reconnect.
                wait(0.2)
                with contextlib.suppress(pymysql.err.Error, OSError):
                    conn.close()
                with contextlib.suppress(pymysql.err.Error, OSError):
                    conn = connect()
            n += 1
            count.value = n
            next_t += period
            delay = next_t - time.monotonic()
            if delay > 0:
                wait(delay)
            else:
                next_t = time.monotonic()
    finally:
        conn.close()
        rc.close()
