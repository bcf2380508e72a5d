"""Talking to a Redis server (or a Sentinel) over one connection, failures as states.

``RedisTalk`` is what RedisSource and SentinelSource share: the connection built for
one attempt per sample (``Retry(NoBackoff(), 0)``, no health-check PING, no ``CLIENT
SETINFO``, RESP2), the connect with AUTH, one command and its reply, and the mapping
of every redis-py failure to a SourceError with a state: refused/unreachable/connect
timeout -> "unreachable"; wrong or missing password, ACL refusal -> "auth"; a read
timeout on an established connection -> "timeout". Error texts are built here from
redis-py's message with the password scrubbed in case a server ever echoes it; the
connection object is never formatted into any text.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

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
from replmon.errors import SourceError
from replmon.sources.base import reach_hint

AUTH_HINT = (
    "check the Redis password (requirepass / ACL user) given to replmon; "
    "it must match the server's"
)
NOAUTH_HINT = "the server requires a password and none is configured for this node"
ACL_HINT = "the ACL user needs +ping +info (ACL SETUSER <user> +ping +info)"


T = TypeVar("T")


class ErrorReply(SourceError):
    """The server answered a command with an error reply (not an auth error)."""


class RedisTalk:
    """Connection and command helpers for a source with an ``endpoint``."""

    endpoint: RedisEndpoint
    acl_hint: str = ACL_HINT

    async def _disconnect(self, conn: AbstractConnection | None) -> None:
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
                f"{where}: not authorised: {self._clean(e)}", state="auth", hint=self.acl_hint
            ) from None
        except RedisTimeoutError:
            raise SourceError(
                f"{where}: no connection within {self.endpoint.connect_timeout:g} s",
                state="unreachable",
                hint=reach_hint("no connection within", self.endpoint.host or "", None),
            ) from None
        except RedisConnectionError as e:
            raise self._connection_error(e) from None
        except RedisError as e:  # an odd AUTH reply, or not Redis at all (InvalidResponse)
            raise SourceError(
                f"{where}: connect failed: {self._clean(e)}",
                hint="is a Redis server listening on this address?",
            ) from None

    async def _first(self, conn: AbstractConnection,
                     call: Callable[[AbstractConnection], Awaitable[T]]) -> T:
        """``call`` on the connection kept from the last sample, connected when it is
        not. A kept connection the server dropped since (restart, idle timeout) is
        connected once more and ``call`` tried again: this sample's one attempt."""
        reused = conn.is_connected
        if not reused:
            await self._connect(conn)
        try:
            return await call(conn)
        except SourceError as e:
            if not (reused and e.state == "unreachable"):
                raise
            await conn.disconnect(nowait=True)
            await self._connect(conn)
            return await call(conn)

    async def _ping(self, conn: AbstractConnection) -> float:
        """Milliseconds for one PING round trip. An error reply (LOADING, MASTERDOWN)
        is still a round trip; only auth and transport errors end the sample."""
        start = time.perf_counter()
        with contextlib.suppress(ErrorReply):
            await self._command(conn, "PING")
        return (time.perf_counter() - start) * 1000.0

    async def _command(self, conn: AbstractConnection, *args: str) -> object:
        """Send one command, read its reply, map failures to SourceError.
        A non-auth error reply raises ErrorReply (state "error")."""
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
                f"{where}: {args[0]} refused: {self._clean(e)}", state="auth", hint=self.acl_hint
            ) from None
        except BusyLoadingError as e:
            raise ErrorReply(f"{where}: {self._clean(e)}") from None
        except RedisTimeoutError:
            raise SourceError(
                f"{where}: no reply to {args[0]} within {self.endpoint.read_timeout:g} s",
                state="timeout",
            ) from None
        except RedisConnectionError as e:
            raise self._connection_error(e) from None
        except ResponseError as e:
            raise ErrorReply(f"{where}: {args[0]}: {self._clean(e)}") from None
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
        return SourceError(f"{where}: {text}", state="unreachable",
                           hint=reach_hint(text, self.endpoint.host or "", None))

    def _clean(self, e: BaseException) -> str:
        """redis-py's message for ``e`` with the password (if any) blanked out."""
        text = str(e) or type(e).__name__
        pw = self.endpoint.password.get_secret_value() if self.endpoint.password else ""
        return text.replace(pw, "**********") if pw else text
