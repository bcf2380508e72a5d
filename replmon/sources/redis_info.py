"""The Redis source: one timed PING and one INFO per sample.

The round trip shown (``rtt_ms``) is a second PING on a small connection of its own,
timed by the kernel's receive timestamp (``kernel_ping``), so replmon's event loop
being busy elsewhere does not show as Redis latency; the first PING still decides
whether the server answers. That connection counts in the server's connected_clients.

How it talks to Redis
---------------------
One ``redis.asyncio.Connection`` per source (no pool: the Source base never
runs two fetches at once), created in ``open()`` and (re)connected lazily by
``_fetch()``. We use the connection directly (``send_command`` +
``read_response``) rather than ``redis.asyncio.Redis.execute_command``
because the client runs redis-py's INFO parse callback even with
``decode_responses=True`` and returns a dict with guessed types; the raw
bulk string goes to our own parser (``redis_parse``).

One sample costs at most one connection attempt (a connection kept from the
previous sample that the server has closed is replaced once): it is built with
``Retry(NoBackoff(), 0)``, no health-check PING and no ``CLIENT SETINFO``, so a
dead server is not hammered. The default INFO sections are enough (``INFO
everything`` adds per-command stats we do not read).

Failures become SourceError with a state (the base turns it into the sample's
status): refused/unreachable/connect timeout -> "unreachable"; wrong or
missing password, ACL refusal -> "auth"; a read timeout on an established
connection -> "timeout". Error texts are built by us from redis-py's message,
with the password scrubbed in case a server ever echoes it; the connection
object is never formatted into any text.
"""

from __future__ import annotations

import contextlib
import time
from typing import ClassVar

from redis.asyncio.connection import AbstractConnection, Connection, UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    AuthenticationError,
    AuthenticationWrongNumberOfArgsError,
    AuthorizationError,
    BusyLoadingError,
    NoPermissionError,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from replmon.endpoints import RedisEndpoint
from replmon.errors import ParseError, SourceError
from replmon.model.redis import RedisSample
from replmon.sources.base import Source
from replmon.sources.kernel_ping import KernelPing
from replmon.sources.redis_parse import (
    build_redis_sample,
    parse_buffer_limit,
    parse_info,
    parse_min_replicas,
)

AUTH_HINT = (
    "check the Redis password (requirepass / ACL user) given to replmon; "
    "it must match the server's"
)
NOAUTH_HINT = "the server requires a password and none is configured for this node"
ACL_HINT = "the ACL user needs +ping +info (ACL SETUSER <user> +ping +info)"


class _ErrorReply(SourceError):
    """The server answered a command with an error reply (not an auth error)."""


_Config = tuple[tuple[int, int, int] | None, tuple[int, int] | None, str | None]

CONFIG_PARAMS = ("client-output-buffer-limit", "min-replicas-to-write", "min-replicas-max-lag")
"""Asked in one CONFIG GET; Redis before 7.0 takes one parameter: the first only there."""


def _takes_many(sample: RedisSample) -> bool:
    """CONFIG GET with several parameters: Redis 7.0+ and every Valkey."""
    if sample.server == "valkey":
        return True
    try:
        return int((sample.version or "0").split(".")[0]) >= 7
    except ValueError:
        return False


class RedisSource(Source[RedisSample]):
    """Samples one Redis server: PING round trip, then INFO (default sections)."""

    kind: ClassVar[str] = "redis"
    sample_type = RedisSample

    def __init__(self, endpoint: RedisEndpoint, *, timeout: float = 0.8,
                 config_every: float = 60.0) -> None:
        super().__init__(timeout=timeout)
        self.endpoint = endpoint
        self._conn: AbstractConnection | None = None
        self.config_every = config_every
        ep = endpoint
        self._kernel_ping = KernelPing(
            host=ep.host, port=ep.port, path=ep.socket, username=ep.username,
            password=ep.password.get_secret_value() if ep.password is not None else None,
            timeout=min(ep.read_timeout, max(timeout, 0.2)))
        """The round trip, timed by the kernel on a second connection (kernel_ping)."""
        self._config: _Config = (None, None, None)
        """(replica buffer limit, min-replicas, why not read) as of the last CONFIG GET."""
        self._config_mono: float | None = None

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
        if conn is not None:
            with contextlib.suppress(RedisError, OSError):
                await conn.disconnect(nowait=True)  # never wait on a hung peer

    def _new_connection(self) -> AbstractConnection:
        ep = self.endpoint
        password = ep.password.get_secret_value() if ep.password is not None else None
        if ep.socket:
            return UnixDomainSocketConnection(
                path=ep.socket,
                username=ep.username,
                password=password,
                socket_timeout=ep.read_timeout,
                socket_connect_timeout=ep.connect_timeout,
                retry=Retry(NoBackoff(), 0),
                decode_responses=True,
                encoding_errors="replace",
                driver_info=None,
                protocol=2,
            )
        return Connection(
            host=ep.host,
            port=ep.port,
            username=ep.username,
            password=password,
            socket_timeout=ep.read_timeout,  # a hung server: the read gives up after this
            socket_connect_timeout=ep.connect_timeout,
            retry=Retry(NoBackoff(), 0),  # one attempt per sample, never a retry loop
            decode_responses=True,
            encoding_errors="replace",  # INFO holds paths; never fail on odd bytes
            driver_info=None,  # no CLIENT SETINFO round trip on connect
            protocol=2,  # RESP2: every Redis version speaks it (HELLO needs 6.0+)
        )

    async def _fetch(self) -> RedisSample:
        if self._conn is None:
            await self.open()
        conn = self._conn
        assert conn is not None
        reused = conn.is_connected
        if not reused:
            await self._connect(conn)
        try:
            rtt_ms = await self._ping(conn)
        except SourceError as e:
            if not (reused and e.state == "unreachable"):
                raise
            # The server dropped the connection we kept from the last sample
            # (restart, idle timeout): this sample's one connection attempt.
            await conn.disconnect(nowait=True)
            await self._connect(conn)
            rtt_ms = await self._ping(conn)
        text = await self._command(conn, "INFO")
        if not isinstance(text, str):
            raise ParseError(f"INFO returned {type(text).__name__}, not text")
        sample = build_redis_sample(parse_info(text))
        kernel = await self._kernel_ping.rtt_ms()  # the loop's delays left out
        if kernel is not None:
            rtt_ms = kernel
        now = time.monotonic()
        if self._config_mono is None or now - self._config_mono >= self.config_every \
                or not reused:
            self._config_mono = now
            self._config = await self._config_get(conn, _takes_many(sample))
        limit, min_replicas, error = self._config
        return sample.model_copy(update={"rtt_ms": rtt_ms, "replica_buffer_limit": limit,
                                         "min_replicas": min_replicas, "config_error": error})

    async def _config_get(self, conn: AbstractConnection, many: bool) -> _Config:
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
            return None, None, str(e)
        except SourceError as e:
            if e.state != "auth":  # NOPERM: this command only
                raise
            return None, None, f"{e} (ACL: +config|get)"
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
        return limit, min_replicas, "; ".join(errors) or None

    async def _connect(self, conn: AbstractConnection) -> None:
        """TCP/unix connect and AUTH. Every failure here means we never got a session."""
        where = self.endpoint.display()
        try:
            await conn.connect()  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
        except (AuthenticationError, AuthenticationWrongNumberOfArgsError) as e:
            raise SourceError(
                f"{where}: authentication failed: {self._clean(e)}", state="auth", hint=AUTH_HINT
            ) from None
        except AuthorizationError as e:
            raise SourceError(
                f"{where}: not authorised: {self._clean(e)}", state="auth", hint=ACL_HINT
            ) from None
        except RedisTimeoutError:
            raise SourceError(
                f"{where}: no connection within {self.endpoint.connect_timeout:g} s",
                state="unreachable",
                hint="is the host up and the port open (firewall)?",
            ) from None
        except RedisConnectionError as e:
            raise self._connection_error(e) from None
        except RedisError as e:  # an odd AUTH reply, or not Redis at all (InvalidResponse)
            raise SourceError(
                f"{where}: connect failed: {self._clean(e)}",
                hint="is a Redis server listening on this address?",
            ) from None

    async def _ping(self, conn: AbstractConnection) -> float:
        """Milliseconds for one PING round trip. An error reply (LOADING, MASTERDOWN)
        is still a round trip; only auth and transport errors end the sample."""
        start = time.perf_counter()
        with contextlib.suppress(_ErrorReply):
            await self._command(conn, "PING")
        return (time.perf_counter() - start) * 1000.0

    async def _command(self, conn: AbstractConnection, *args: str) -> object:
        """Send one command, read its reply, map failures to SourceError.
        A non-auth error reply raises _ErrorReply (state "error")."""
        where = self.endpoint.display()
        try:
            await conn.send_command(*args, check_health=False)
            return await conn.read_response()
        except AuthenticationError as e:  # NOAUTH: the server wants a password we did not send
            hint = AUTH_HINT if self.endpoint.password is not None else NOAUTH_HINT
            raise SourceError(
                f"{where}: {args[0]} refused: {self._clean(e)}", state="auth", hint=hint
            ) from None
        except NoPermissionError as e:
            raise SourceError(
                f"{where}: {args[0]} refused: {self._clean(e)}", state="auth", hint=ACL_HINT
            ) from None
        except BusyLoadingError as e:
            raise _ErrorReply(f"{where}: {self._clean(e)}") from None
        except RedisTimeoutError:
            raise SourceError(
                f"{where}: no reply to {args[0]} within {self.endpoint.read_timeout:g} s",
                state="timeout",
            ) from None
        except RedisConnectionError as e:
            raise self._connection_error(e) from None
        except ResponseError as e:
            raise _ErrorReply(f"{where}: {args[0]}: {self._clean(e)}") from None
        except RedisError as e:  # protocol garbage (InvalidResponse) and the like
            await conn.disconnect(nowait=True)
            raise SourceError(
                f"{where}: {args[0]}: {self._clean(e)}",
                hint="is a Redis server listening on this address?",
            ) from None

    def _connection_error(self, e: RedisConnectionError) -> SourceError:
        where, text = self.endpoint.display(), self._clean(e)
        if "max number of clients" in text:
            return SourceError(
                f"{where}: server refused the connection: {text}",
                hint="the server is at maxclients; look for a connection leak",
            )
        return SourceError(f"{where}: {text}", state="unreachable")

    def _clean(self, e: BaseException) -> str:
        """redis-py's message for ``e`` with the password (if any) blanked out."""
        text = str(e) or type(e).__name__
        pw = self.endpoint.password.get_secret_value() if self.endpoint.password else ""
        return text.replace(pw, "**********") if pw else text
