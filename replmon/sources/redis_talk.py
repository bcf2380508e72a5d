"""Talking to a Redis server (or a Sentinel) over one connection, failures as states.

``RedisTalk`` is what RedisSource and SentinelSource share: the connection
(``replmon.sources.resp``: one attempt per sample, no health-check PING, no ``CLIENT
SETINFO``, RESP2), the connect with AUTH, one command and its reply, and the mapping
of every failure to a SourceError with a state: refused/unreachable/connect timeout ->
"unreachable"; wrong or missing password, ACL refusal -> "auth"; a read timeout on an
established connection -> "timeout". Error texts are built here from the connection's
message with the password scrubbed in case a server ever echoes it; the connection
object is never formatted into any text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from replmon.endpoints import RedisEndpoint
from replmon.errors import SourceError
from replmon.sources.base import reach_hint
from replmon.sources.resp import (
    ReplyError,
    RespConnection,
    RespConnectionError,
    RespError,
    RespReply,
    RespTimeoutError,
)

AUTH_HINT = (
    "check the Redis password (requirepass / ACL user) given to replmon; "
    "it must match the server's"
)
NOAUTH_HINT = "the server requires a password and none is configured for this node"
ACL_HINT = "the ACL user needs +ping +info (ACL SETUSER <user> +ping +info)"


T = TypeVar("T")

AUTH_CODES = frozenset({"WRONGPASS", "NOAUTH"})
"""Error replies that mean the password: wrong, or none sent where one is needed."""


class ErrorReply(SourceError):
    """The server answered a command with an error reply (not an auth error)."""


class RedisTalk:
    """Connection and command helpers for a source with an ``endpoint``."""

    endpoint: RedisEndpoint
    acl_hint: str = ACL_HINT

    async def _disconnect(self, conn: RespConnection | None) -> None:
        if conn is not None:
            await conn.disconnect()  # never waits on a hung peer

    def _new_connection(self) -> RespConnection:
        ep = self.endpoint
        return RespConnection(
            host=ep.host, port=ep.port, path=ep.socket or None, username=ep.username,
            password=ep.password.get_secret_value() if ep.password is not None else None,
            connect_timeout=ep.connect_timeout,
            read_timeout=ep.read_timeout)  # a hung server: the read gives up after this

    async def _connect(self, conn: RespConnection) -> None:
        """TCP/unix connect and AUTH. Every failure here means we never got a session."""
        where = self.endpoint.display()
        try:
            await conn.connect()
        except ReplyError as e:
            if e.code == "NOPERM":
                raise SourceError(
                    f"{where}: not authorised: {self._clean(e)}", state="auth",
                    hint=self.acl_hint) from None
            raise SourceError(  # AUTH refused: WRONGPASS, "invalid password", no password set
                f"{where}: authentication failed: {self._clean(e)}", state="auth",
                hint=AUTH_HINT) from None
        except RespTimeoutError:
            raise SourceError(
                f"{where}: no connection within {self.endpoint.connect_timeout:g} s",
                state="unreachable",
                hint=reach_hint("no connection within", self.endpoint.host or "", None),
            ) from None
        except RespConnectionError as e:
            raise self._connection_error(e) from None
        except RespError as e:  # not Redis at all (not RESP)
            raise SourceError(
                f"{where}: connect failed: {self._clean(e)}",
                hint="is a Redis server listening on this address?",
            ) from None

    async def _first(self, conn: RespConnection,
                     call: Callable[[RespConnection], Awaitable[T]]) -> T:
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
            await conn.disconnect()
            await self._connect(conn)
            return await call(conn)

    async def _command(self, conn: RespConnection, *args: str) -> RespReply:
        """Send one command, read its reply, map failures to SourceError.
        A non-auth error reply raises ErrorReply (state "error")."""
        return await self._talk(conn.command(*args), args)

    async def _talk(self, step: Awaitable[RespReply], args: tuple[str, ...]) -> RespReply:
        """``step`` (a send or a read on the connection, for the command ``args``) with
        its failures mapped as _command says."""
        where = self.endpoint.display()
        try:
            return await step
        except ReplyError as e:
            if e.code in AUTH_CODES:  # NOAUTH: the server wants a password we did not send
                hint = AUTH_HINT if self.endpoint.password is not None else NOAUTH_HINT
                raise SourceError(
                    f"{where}: {args[0]} refused: {self._clean(e)}", state="auth", hint=hint
                ) from None
            if e.code == "NOPERM":
                raise SourceError(
                    f"{where}: {args[0]} refused: {self._clean(e)}", state="auth",
                    hint=self.acl_hint) from None
            if e.code == "LOADING":
                raise ErrorReply(f"{where}: {self._clean(e)}") from None
            raise ErrorReply(f"{where}: {args[0]}: {self._clean(e)}") from None
        except RespTimeoutError:
            raise SourceError(
                f"{where}: no reply to {args[0]} within {self.endpoint.read_timeout:g} s",
                state="timeout",
            ) from None
        except RespConnectionError as e:
            raise self._connection_error(e) from None
        except RespError as e:  # protocol garbage (not RESP): the connection is closed
            raise SourceError(
                f"{where}: {args[0]}: {self._clean(e)}",
                hint="is a Redis server listening on this address?",
            ) from None

    def _connection_error(self, e: RespConnectionError) -> SourceError:
        where, text = self.endpoint.display(), self._clean(e)
        if "max number of clients" in text:
            return SourceError(
                f"{where}: server refused the connection: {text}",
                hint="the server is at maxclients; look for a connection leak",
            )
        return SourceError(f"{where}: {text}", state="unreachable",
                           hint=reach_hint(text, self.endpoint.host or "", None))

    def _clean(self, e: BaseException) -> str:
        """The message of ``e`` with the password (if any) blanked out."""
        text = str(e) or type(e).__name__
        pw = self.endpoint.password.get_secret_value() if self.endpoint.password else ""
        return text.replace(pw, "**********") if pw else text
