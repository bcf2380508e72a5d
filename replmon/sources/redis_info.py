"""The Redis source: one timed PING and one INFO per sample.

The round trip shown (``rtt_ms``) is a second PING on a small connection of its own,
timed by the kernel's receive timestamp (``kernel_ping``), so replmon's event loop
being busy elsewhere does not show as Redis latency; the first PING still decides
whether the server answers. That connection counts in the server's connected_clients.

How it talks to Redis
---------------------
One ``replmon.sources.resp.RespConnection`` per source (no pool: the Source base
never runs two fetches at once), created in ``open()`` and (re)connected lazily by
``_fetch()``; INFO's reply is the raw bulk string, which goes to our own parser
(``redis_parse``). (redis-py was used until #56: its package costs ~10 MB of memory.)

One sample costs at most one connection attempt (a connection kept from the
previous sample that the server has closed is replaced once); how a connection is
made and every failure mapped to a state is ``redis_talk`` (shared with the Sentinel
source).
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import ClassVar

from replmon.endpoints import RedisEndpoint
from replmon.errors import ParseError, SourceError
from replmon.model.base import fill_fresh
from replmon.model.redis import RedisSample
from replmon.sources.base import Source
from replmon.sources.kernel_ping import KernelPing
from replmon.sources.redis_parse import (
    parse_bgsave_guard,
    parse_buffer_limit,
    parse_master_link_age,
    parse_min_replicas,
    read_redis_info,
)
from replmon.sources.redis_talk import ErrorReply, RedisTalk
from replmon.sources.resp import RespConnection, RespError, RespReply

_ErrorReply = ErrorReply  # (the name the tests know)
log = logging.getLogger(__name__)


_Config = tuple[tuple[int, int, int] | None, tuple[int, int] | None,
                tuple[bool | None, str | None], str | None]

CONFIG_PARAMS = ("client-output-buffer-limit", "min-replicas-to-write", "min-replicas-max-lag",
                 "stop-writes-on-bgsave-error", "save")
"""Asked in one CONFIG GET; Redis before 7.0 takes one parameter: the first only there."""


def _takes_many(sample: RedisSample) -> bool:
    """CONFIG GET with several parameters: Redis 7.0+ and every Valkey."""
    if sample.server == "valkey":
        return True
    try:
        return int((sample.version or "0").split(".")[0]) >= 7
    except ValueError:
        return False


class RedisSource(RedisTalk, Source[RedisSample]):
    """Samples one Redis server: PING round trip, then INFO (default sections)."""

    kind: ClassVar[str] = "redis"
    sample_type = RedisSample
    fresh_samples = True  # (read_redis_info: a new RedisSample.trusted each call)

    def __init__(self, endpoint: RedisEndpoint, *, timeout: float = 0.8,
                 config_every: float = 60.0) -> None:
        super().__init__(timeout=timeout)
        self.endpoint = endpoint
        self._conn: RespConnection | None = None
        self.config_every = config_every
        ep = endpoint
        self._kernel_ping = KernelPing(
            host=ep.host, port=ep.port, path=ep.socket, username=ep.username,
            password=ep.password.get_secret_value() if ep.password is not None else None,
            timeout=min(ep.read_timeout, max(timeout, 0.2)))
        """The round trip, timed by the kernel on a second connection (kernel_ping)."""
        self._config: _Config = (None, None, (None, None), None)
        """(replica buffer limit, min-replicas, why not read) as of the last CONFIG GET."""
        self._config_mono: float | None = None
        self._guard: tuple[bool, str | None] | None = None
        """(no min_slaves_good_slaves, rdb_last_bgsave_status) at the last INFO: a change
        re-reads the config at once."""
        self._link: tuple[tuple[str | None, int | None], int | None, float] | None = None
        """(the master followed, its link's age when read (None: refused), monotonic
        time of that read)."""

    def __repr__(self) -> str:
        return f"RedisSource({self.endpoint.display()})"

    async def open(self) -> None:
        """Create the connection object; nothing is sent until the first sample."""
        if self._conn is None:
            self._conn = self._new_connection()

    async def close(self) -> None:
        await super().close()
        self._kernel_ping.close()
        conn, self._conn = self._conn, None
        await self._disconnect(conn)

    async def _fetch(self) -> RedisSample:
        if self._conn is None:
            await self.open()
        conn = self._conn
        assert conn is not None
        reused = conn.is_connected  # (a new session re-reads the config below)
        rtt_ms, text = await self._first(conn, self._ping_info)
        if not isinstance(text, str):
            raise ParseError(f"INFO returned {type(text).__name__}, not text")
        sample = read_redis_info(text)  # (the lines build_redis_sample reads only)
        kernel = await self._kernel_ping.rtt_ms()  # the loop's delays left out
        if kernel is not None:
            rtt_ms = kernel
        now = time.monotonic()
        # INFO says the write path's settings changed (min-replicas-to-write switched on
        # or off: min_slaves_good_slaves comes or goes; a BGSAVE failed or recovered):
        # their CONFIG now, not up to config_every (60 s) late
        guard = (sample.good_replicas is None, sample.rdb_last_bgsave_status)
        changed = self._guard is not None and guard != self._guard
        self._guard = guard
        if self._config_mono is None or now - self._config_mono >= self.config_every \
                or not reused or changed:
            self._config_mono = now
            self._config = await self._config_get(conn, _takes_many(sample))
        limit, min_replicas, (stop_writes, save), error = self._config
        # set on read_redis_info's new record, not copied (fill_fresh: it is this sample's alone)
        return fill_fresh(sample, {"rtt_ms": rtt_ms, "replica_buffer_limit": limit,
                                   "min_replicas": min_replicas, "config_error": error,
                                   "stop_writes_on_bgsave_error": stop_writes,
                                   "save_points": save,
                                   "master_link_age_s": await self._link_age(conn, sample)})

    async def _ping_info(self, conn: RespConnection) -> tuple[float, RespReply]:
        """PING and INFO sent in one write, one round trip: (milliseconds until PING's
        reply, INFO's reply). The round trip that the sample shows is the kernel's
        (kernel_ping); this one stands in only when that fails, and since the server
        answers both at once it includes INFO's making (~0.1 ms). An error reply to
        PING (LOADING, MASTERDOWN) is still a round trip; when PING's
        reply ends the sample (auth, a broken connection) INFO's is read off, or the
        connection dropped, so that the next command reads its own reply."""
        start = time.perf_counter()
        await self._talk(conn.send_many(("PING",), ("INFO",)), ("PING",))
        try:
            with contextlib.suppress(ErrorReply):
                await self._talk(conn.read(conn.read_timeout), ("PING",))
        except SourceError:  # an error reply (the connection kept) or a dropped connection
            if conn.is_connected:
                with contextlib.suppress(RespError):  # (a failed read drops the connection)
                    await conn.read(conn.read_timeout)
            raise
        rtt_ms = (time.perf_counter() - start) * 1000.0
        return rtt_ms, await self._talk(conn.read(conn.read_timeout), ("INFO",))

    async def _link_age(self, conn: RespConnection, sample: RedisSample) -> int | None:
        """Seconds a replica's link to its master has been open (CLIENT LIST TYPE master,
        read when the link is new and every ``config_every`` seconds, counted on in
        between); None on a master, a replica whose link is down, or when refused
        (noted once in the log: it only tells how long the roles have held)."""
        if sample.role != "replica" or sample.link_status != "up":
            self._link = None
            return None
        now = time.monotonic()
        link = (sample.master_host, sample.master_port)
        known = self._link
        if known is None or known[0] != link or now - known[2] >= self.config_every:
            try:
                age = parse_master_link_age(await self._command(conn, "CLIENT", "LIST",
                                                                "TYPE", "master"))
            except (_ErrorReply, ParseError) as e:
                log.info("%s: CLIENT LIST TYPE master: %s", self, e)
                age = None
            except SourceError as e:
                if e.state != "auth":  # NOPERM: this command only
                    raise
                age = None
            if age is None:
                self._link = (link, None, now)
                return None
            known = self._link = (link, age, now)
        if known[1] is None:
            return None
        return known[1] + int(now - known[2])

    async def _config_get(self, conn: RespConnection, many: bool) -> _Config:
        """One CONFIG GET: client-output-buffer-limit, and on servers that take several
        parameters (``many``) min-replicas-to-write and -max-lag with it. A refusal (ACL
        without +config|get, a renamed CONFIG) or an odd reply is noted, not a failed
        sample; a server that refuses the longer form is asked the short one."""
        params = CONFIG_PARAMS if many else CONFIG_PARAMS[:1]
        try:
            reply = await self._command(conn, "CONFIG", "GET", *params)
        except _ErrorReply as e:
            if many:  # says 7.0+ but takes one parameter (a Redis-compatible server)
                return await self._config_get(conn, False)
            return None, None, (None, None), str(e)
        except SourceError as e:
            if e.state != "auth":  # NOPERM: this command only
                raise
            return None, None, (None, None), f"{e} (ACL: +config|get)"
        errors: list[str] = []
        limit: tuple[int, int, int] | None = None
        min_replicas: tuple[int, int] | None = None
        try:
            limit = parse_buffer_limit(reply)
        except ParseError as e:
            errors.append(str(e))
        try:
            min_replicas = parse_min_replicas(reply)
        except ParseError as e:
            errors.append(str(e))
        guard: tuple[bool | None, str | None] = (None, None)
        try:
            guard = parse_bgsave_guard(reply)
        except ParseError as e:
            errors.append(str(e))
        return limit, min_replicas, guard, "; ".join(errors) or None
