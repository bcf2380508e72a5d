"""The lab's write load (replmon.lab): a spawned process writing to the lab's primary
MySQL and Redis master at a rate, for the demo and the tests that need counters to move.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

import pymysql
import redis

from replmon.errors import LabError

if TYPE_CHECKING:
    from replmon.lab import Lab


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
