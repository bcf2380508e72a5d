"""The lab's write load (replmon.lab): a spawned process writing to the lab's primary
MySQL and Redis master at a rate, for the demo and the tests that need counters to move.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import TYPE_CHECKING, Any

import pymysql

from replmon.errors import LabError
from replmon.sources.resp import encode

if TYPE_CHECKING:
    from replmon.lab.pair import Lab


WINDOW_S = 600
"""Seconds of per-second counts the load keeps (achieved_rate's longest ``last``)."""
ERROR_BYTES = 240
"""Room for the last error's text."""
BACKOFF_S = 0.2
"""Seconds a store that failed is left alone before the next try."""
MIN_SLEEP_S = 0.01
"""The shortest sleep between two steps: above ~100 statements/s, steps that are due
within it run at once, a few together, then one sleep (each wake-up cost ~46 µs of CPU,
measured; at 300/s one per step was 1.4 % of a core)."""
CATCH_UP_S = 0.05
"""How far behind its schedule the load catches up (steps back to back); further
behind (a stalled server, a paused process) it starts its schedule again from now,
without a burst."""


class WriteLoad:
    """A background write load on the lab's current primary: random-id UPDATEs and some
    INSERTs on ``table`` (lab.t), plus Redis SET/GET, at roughly ``rate`` statements/s.
    Used by the demo and by tests that need counters to move. ``mysql=False`` writes
    only Redis (a Redis scenario's load: the MySQL servers' share of the CPU saved).

        with WriteLoad(lab, rate=200) as load:
            ...
            assert load.achieved_rate(last=5) > 180 and load.errors < 10

    It writes as the lab's application account (``lab.app_user``, over TCP), not as
    root: read_only=ON stops it as it stops an application (MariaDB's root has READ_ONLY
    ADMIN and would write through), which a switchover relies on. It follows the lab's
    roles: when a switchover (replmon.lab.switch) or a failover changes
    ``lab.mysql_primary`` or ``lab.redis_primary``, the load reconnects to the new one,
    also while it runs; statements that fail meanwhile are counted in ``errors``.

    ``table`` is created like lab.t when missing and filled with ``rows`` rows (with
    the server's auto_increment_increment at that moment); UPDATE ids are drawn from
    1..``id_max`` (default ``rows``). Seed 004's situation: SET GLOBAL
    auto_increment_increment=2, a new table, id_max=2 x rows: half the UPDATEs miss.
    """

    def __init__(self, lab: Lab, *, rate: float = 200.0, rows: int = 1000,
                 table: str = "lab.t", id_max: int | None = None,
                 redis: bool = True, mysql: bool = True) -> None:
        from replmon.forking import context

        self.lab = lab
        self.rate = rate
        self.rows = rows
        self.table = table
        self.id_max = id_max or rows
        self.redis = redis
        self.mysql = mysql
        if not (mysql or redis):
            raise ValueError("WriteLoad: mysql=False and redis=False write nothing")
        # A separate process, not a thread: the load must not share a GIL with the
        # replmon under test, or its round-trip times and CPU figures would include the
        # load's own work (measured: Redis PING 5-16 ms on loopback with a thread). Forked
        # from the fork server with this module imported (replmon.forking): a spawned
        # process cost ~0.2 s of CPU to start (a fresh interpreter importing pymysql and
        # redis), a fork a few ms.
        ctx = context()
        # Flags, not a multiprocessing.Event: Event.set() waits for every process
        # waiting on it to wake, forever for one that died waiting (the load killed by
        # the terminal's SIGHUP: replmon --lab then hung in its teardown, lab left running)
        self._shared = _Shared(
            stop=ctx.Value("b", 0, lock=False),
            mysql_to=ctx.Value("b", lab.index(lab.mysql_primary), lock=False),
            redis_to=ctx.Value("b", lab.index(lab.redis_primary), lock=False),
            count=ctx.Value("q", 0, lock=False),
            errors=ctx.Value("q", 0, lock=False),
            t0=ctx.Value("d", 0.0, lock=False),
            second=ctx.Value("q", 0, lock=False),
            per_second=ctx.Array("q", WINDOW_S, lock=False),
            last_error=ctx.Array("c", ERROR_BYTES, lock=False),
        )
        nodes = [(n.host, n.mysql_port, n.redis_port) for n in lab.nodes]
        self._proc = ctx.Process(
            target=_write_load, name="lab-write-load", daemon=True,
            args=(nodes, lab.app_user, lab.app_password, lab.redis_password, self.table,
                  self.id_max, self.rate, self.mysql, self.redis, self._shared, os.getpid()),
        )

    # --- what it achieved -------------------------------------------------------
    @property
    def statements(self) -> int:
        """Statements sent so far (one a step: an UPDATE or INSERT, with its Redis
        SET and GET when ``redis``), failed ones included."""
        return int(self._shared.count.value)

    @property
    def errors(self) -> int:
        """Statements that failed (MySQL or Redis refused, or could not be reached)."""
        return int(self._shared.errors.value)

    @property
    def last_error(self) -> str:
        """The last failure's text ("" when none)."""
        return bytes(self._shared.last_error[:]).split(b"\0", 1)[0].decode(errors="replace")

    @property
    def elapsed_s(self) -> float:
        """Seconds since the load's first statement (0 before it started)."""
        t0 = float(self._shared.t0.value)
        return time.monotonic() - t0 if t0 else 0.0

    def achieved_rate(self, last: float | None = None) -> float:
        """Statements/s that succeeded: since the start, or over the ``last`` whole
        seconds (at most WINDOW_S; the second running now is not counted)."""
        elapsed = self.elapsed_s
        if elapsed <= 0:
            return 0.0
        if last is None:
            return (self.statements - self.errors) / elapsed
        now = int(elapsed)
        n = max(1, min(int(last), now, WINDOW_S - 1))
        counts, written = self._shared.per_second, int(self._shared.second.value)
        # Seconds the process has not reached yet (it is stalled) count 0, not the
        # ring's stale slot.
        return float(sum(counts[s % WINDOW_S] for s in range(now - n, now)
                         if s <= written)) / n

    def per_second(self, last: float) -> list[int]:
        """Statements that succeeded in each of the ``last`` whole seconds (at most
        WINDOW_S - 1; the second running now is not counted), oldest first."""
        now = int(self.elapsed_s)
        n = max(0, min(int(last), now, WINDOW_S - 1))
        counts, written = self._shared.per_second, int(self._shared.second.value)
        return [int(counts[s % WINDOW_S]) if s <= written else 0 for s in range(now - n, now)]

    def rate_reached(self, seconds: float, *, within: float = 0.1) -> bool:
        """The target rate, within ``within`` (a fraction), reached over the last
        ``seconds``."""
        return self.achieved_rate(last=seconds) >= self.rate * (1 - within)

    def summary(self, last: float | None = None) -> str:
        """One line for a test's messages: target, achieved, errors, the last one."""
        got = self.achieved_rate(last)
        span = f"last {last:g} s" if last else f"{self.elapsed_s:.1f} s"
        text = (f"write load {self.rate:g}/s: {got:.0f}/s over {span}, {self.statements} "
                f"sent, {self.errors} failed")
        return text + (f" (last: {self.last_error})" if self.last_error else "")

    # --- running ----------------------------------------------------------------
    def __enter__(self) -> WriteLoad:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _follow(self, layer: str, node: Any) -> None:
        """The lab's roles changed: write to ``node`` for ``layer`` from now on."""
        target = self._shared.mysql_to if layer == "mysql" else self._shared.redis_to
        target.value = self.lab.index(node)

    def start(self) -> None:
        p = self.lab.mysql_primary
        if self.mysql and self.table != "lab.t":
            p.sql(f"CREATE TABLE IF NOT EXISTS {self.table} LIKE lab.t")
        have = p.sql(f"SELECT COUNT(*) FROM {self.table}")[0][0] if self.mysql else self.rows
        if have < self.rows:
            values = ",".join(["(0)"] * (self.rows - have))
            p.sql(f"INSERT INTO {self.table} (v) VALUES {values}")
        self.lab.follow(self._follow)
        self._follow("mysql", self.lab.mysql_primary)  # a switch since __init__
        self._follow("redis", self.lab.redis_primary)
        self._proc.start()
        # Starting takes a moment (~0.5 s when the fork server starts first, importing):
        # return once the load is actually running, so "the load started" is a moment
        # tests can count ticks from.
        deadline = time.monotonic() + 15
        while self.statements < 5:
            if not self._proc.is_alive() or time.monotonic() > deadline:
                self.lab.unfollow(self._follow)
                raise LabError(f"the write load did not start (exit code "
                               f"{self._proc.exitcode}; {self.last_error or 'no error'})")
            time.sleep(0.01)

    def stop(self) -> None:
        self.lab.unfollow(self._follow)
        self._shared.stop.value = 1
        if self._proc.pid is None:  # never started
            return
        self._proc.join(5)
        if self._proc.is_alive():  # blocked on a lock a test holds (FTWRL): end it
            self._proc.terminate()
            self._proc.join(5)


class _Shared:
    """The values the load's process shares with its WriteLoad (lock-free: one writer
    each, read by the other side)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    stop: Any
    mysql_to: Any
    """Index into the lab's nodes (0 primary, 1 replica) of the MySQL primary."""
    redis_to: Any
    count: Any
    errors: Any
    t0: Any
    """time.monotonic() at the first statement (one clock for every process)."""
    second: Any
    """The second since t0 that per_second counts now."""
    per_second: Any
    """Statements that succeeded in each second since t0, in a ring of WINDOW_S."""
    last_error: Any


def _orphaned_exit(owner: int) -> None:
    """End this process (at once, whatever its main thread waits on) when ``owner`` is
    gone, or a zombie (killed, its parent not told yet); looked at every 0.5 s."""
    while True:
        time.sleep(0.5)
        try:
            with open(f"/proc/{owner}/stat") as f:
                state = f.read().rpartition(")")[2].split()[0]
        except OSError:
            os._exit(0)
        if state == "Z":
            os._exit(0)


def _write_load(nodes: list[tuple[str, int, int]], user: str, password: str,
                redis_password: str, table: str, id_max: int, rate: float, use_mysql: bool,
                use_redis: bool, sh: _Shared, owner: int) -> None:
    """WriteLoad's process: random-id UPDATEs, every 10th an INSERT, plus Redis SET/GET,
    on the nodes ``sh.mysql_to`` and ``sh.redis_to`` name (reconnecting when they
    change). It ends, too, once ``owner``, the process that started it, is gone: killed by
    SIGKILL, that one raises no stop flag, the fork server the load was forked from lives
    on as long as the load does (the load holds the server's liveness pipe), and a
    statement to a server whose host vanished (the two-host lab's namespaces, removed by
    its reaper) waits forever for an answer."""
    import random
    import threading

    threading.Thread(target=_orphaned_exit, args=(owner,), daemon=True,
                     name="lab-load-owner").start()

    def connect(at: int) -> pymysql.connections.Connection[Any]:
        host, port, _ = nodes[at]
        return pymysql.connect(host=host, port=port, user=user, password=password,
                               autocommit=True, ssl_disabled=True, connect_timeout=2)

    def redis_client(at: int) -> _RedisPipe:
        host, _, port = nodes[at]
        return _RedisPipe(host, port, redis_password)

    def wait(seconds: float) -> None:
        """Sleep ``seconds``, or less once the stop flag is up."""
        end = time.monotonic() + seconds
        while not sh.stop.value and (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 0.05))

    def note(e: BaseException) -> None:
        sh.errors.value += 1
        text = f"{type(e).__name__}: {e}".encode(errors="replace")[:ERROR_BYTES - 1]
        sh.last_error[:len(text) + 1] = text + b"\0"

    mysql_at, redis_at = int(sh.mysql_to.value), int(sh.redis_to.value)
    mysql_retry = redis_retry = 0.0
    """When each store is tried again after an error (monotonic s)."""
    conn: pymysql.connections.Connection[Any] | None = None
    rc = redis_client(redis_at)
    period = 1.0 / rate
    t0 = time.monotonic()
    sh.t0.value = t0
    second = 0
    next_t = t0
    n = 0
    try:
        while not sh.stop.value:
            if sh.mysql_to.value != mysql_at:  # a switchover: write to the new primary
                mysql_at = int(sh.mysql_to.value)
                with contextlib.suppress(pymysql.err.Error, OSError):
                    if conn is not None:
                        conn.close()
                conn = None
                mysql_retry = 0.0  # the new primary at once
            if sh.redis_to.value != redis_at:
                redis_at = int(sh.redis_to.value)
                rc.close()
                rc = redis_client(redis_at)
                redis_retry = 0.0
            i = random.randint(1, id_max)
            failed = False
            now = time.monotonic()
            # MySQL and Redis each on their own: one down (a Redis master killed for a
            # Sentinel failover) does not hold up the other's writes, as in an
            # application whose two stores fail apart
            if use_mysql and now >= mysql_retry:
                try:
                    if conn is None:
                        conn = connect(mysql_at)
                    with conn.cursor() as cur:
                        if n % 10 == 9:
                            cur.execute(f"INSERT INTO {table} (v) VALUES (%s)", (i,))
                        else:
                            cur.execute(f"UPDATE {table} SET v = v + 1 WHERE id = %s", (i,))
                except (pymysql.err.Error, OSError) as e:
                    # read_only during a switchover, a server restarted or paused by a
                    # test: count it, back off (less once told to write elsewhere)
                    failed = True
                    note(e)
                    with contextlib.suppress(pymysql.err.Error, OSError):
                        if conn is not None:
                            conn.close()
                    conn = None
                    mysql_retry = now + BACKOFF_S
            if use_redis and now >= redis_retry:
                try:
                    rc.set_get(f"lab:k{i}", str(i), f"lab:k{i % 97}")
                except (RedisReplyError, OSError) as e:
                    failed = True
                    note(e)
                    redis_retry = now + BACKOFF_S
            ok = not failed and (not use_mysql or now >= mysql_retry) and \
                (not use_redis or now >= redis_retry)
            now = time.monotonic()
            while int(now - t0) > second:  # a new second: clear its slot in the ring
                second += 1
                sh.per_second[second % WINDOW_S] = 0
                sh.second.value = second
            if ok:
                sh.per_second[second % WINDOW_S] += 1
            n += 1
            sh.count.value = n
            next_t += period
            delay = next_t - now
            if delay >= MIN_SLEEP_S:
                wait(delay)
            elif delay < -CATCH_UP_S:
                next_t = now
    finally:
        with contextlib.suppress(pymysql.err.Error, OSError):
            if conn is not None:
                conn.close()
        rc.close()


class RedisReplyError(Exception):
    """The server's error reply to a write (NOREPLICAS, OOM, MISCONF ...): its own line."""


class _RedisPipe:
    """The load's Redis client: one connection, a step's SET and GET sent together and
    both replies read, one round trip (redis-py's two commands cost ~140 µs of CPU a
    step, measured; the load is here to move the servers' counters, not to exercise a
    client). An error reply raises RedisReplyError and keeps the connection; a broken,
    refused or silent one (5 s) raises OSError and is opened again on the next step."""

    def __init__(self, host: str, port: int, password: str | None) -> None:
        self.addr, self.password = (host, port), password
        self._sock: socket.socket | None = None
        self._file: Any = None

    def _connect(self) -> None:
        sock = socket.create_connection(self.addr, timeout=2)
        sock.settimeout(5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock, self._file = sock, sock.makefile("rb")
        if self.password:
            sock.sendall(encode(("AUTH", self.password)))
            if (err := self._reply()) is not None:
                self.close()
                raise err

    def _reply(self) -> RedisReplyError | None:
        """Read one reply; its error, if it is one."""
        line = self._file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("Redis closed the connection")
        kind, body = line[:1], line[1:-2]
        if kind == b"$" and (n := int(body)) >= 0:
            if len(self._file.read(n + 2)) != n + 2:
                raise ConnectionError("Redis closed the connection")
        elif kind == b"-":
            return RedisReplyError(body.decode(errors="replace"))
        return None

    def set_get(self, key: str, value: str, other: str) -> None:
        """SET ``key`` ``value`` and GET ``other``; the first error reply raised."""
        try:
            if self._sock is None:
                self._connect()
            assert self._sock is not None
            self._sock.sendall(encode(("SET", key, value)) + encode(("GET", other)))
            errors = [self._reply(), self._reply()]
        except OSError:
            self.close()
            raise
        except ValueError as e:  # a length that is not a number: not a Redis reply
            self.close()
            raise ConnectionError(f"not a Redis reply: {e}") from e
        for err in errors:
            if err is not None:
                raise err

    def close(self) -> None:
        for part in (self._file, self._sock):
            if part is not None:
                with contextlib.suppress(OSError):
                    part.close()
        self._sock = self._file = None
