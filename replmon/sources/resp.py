"""A Redis connection of replmon's own: RESP2 over asyncio streams, what the Redis and
Sentinel sources say to a server and nothing more.

The sources send a handful of commands (PING, INFO, CONFIG GET, CLIENT LIST, SENTINEL,
PSUBSCRIBE) on one connection each, with AUTH on connect: redis-py did it, and its
package costs ~10 MB of memory in every process that imports any of it (its
``__init__`` and the asyncio connection's own imports pull in every command mixin, the
cluster, sentinel, cache and observability modules), about a tenth of the live screen's
(#56). What is used of it is this file: TCP or unix socket, AUTH (``AUTH user pass``,
``AUTH pass`` before Redis 6), one command and its reply, replies decoded as UTF-8 with
odd bytes replaced, no pipelining, no RESP3, no TLS (replmon's Redis endpoints have
none).

Failures are exceptions of four kinds, worded as redis-py worded them (the texts the
sources pass on, and ``replmon.model.failures`` reads: "Error 111 connecting to
HOST:PORT. Connection refused.", "Timeout connecting to server"):

- ``RespConnectionError``: no connection, or it broke (refused, reset, closed);
- ``RespTimeoutError``: no connection within the connect timeout, or no reply within the
  read timeout (the connection is then closed: a late reply would answer the next
  command);
- ``ReplyError``: the server answered with an error reply; ``code`` is its first word
  (NOAUTH, WRONGPASS, NOPERM, LOADING, ERR, ...), the message the rest, as redis-py
  shows it ("Authentication required.");
- ``RespError`` itself: a reply that is not RESP (not a Redis server).

Any failure while a command is on the wire (a timeout, a cancellation) closes the
connection: what is left in the stream is never read as the next command's reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

RespReply = str | int | list["RespReply"] | None
"""A decoded reply: a simple or bulk string, an integer, an array, nil."""

_CODES = frozenset({"ERR", "WRONGPASS", "NOAUTH", "NOPERM", "LOADING", "MASTERDOWN", "BUSY",
                    "READONLY", "OOM", "WRONGTYPE", "NOSCRIPT", "EXECABORT", "MOVED",
                    "ASK", "TRYAGAIN", "CLUSTERDOWN", "CROSSSLOT", "MISCONF", "NOREPLICAS"})
"""Error codes taken off the message, as redis-py did (others stay in it)."""


class RespError(Exception):
    """A failure talking to the server (the base of the others: a reply that is not
    RESP)."""


class RespConnectionError(RespError):
    """No connection, or it broke."""


class RespTimeoutError(RespError):
    """No connection within the connect timeout, or no reply within the read timeout."""


class ReplyError(RespError):
    """The server's error reply: ``code`` (its first word, upper case) and the message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def error_reply(line: str) -> ReplyError | RespConnectionError:
    """The exception for the error reply ``line`` (without its "-"); the server at
    maxclients is a refused connection (the reply comes instead of the session)."""
    code, _, rest = line.partition(" ")
    if code not in _CODES:
        return ReplyError(code if code.isupper() else "", line)
    if code == "ERR" and rest.startswith("max number of clients reached"):
        return RespConnectionError(rest)
    return ReplyError(code, rest)


def encode(args: tuple[str, ...]) -> bytes:
    """One command as a RESP array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class RespConnection:
    """One connection to a Redis server (or Sentinel) at ``host``:``port`` or the unix
    socket ``path``; ``connect`` opens it and authenticates, ``command`` sends one
    command and reads its reply."""

    def __init__(self, *, host: str | None = None, port: int = 6379, path: str | None = None,
                 username: str | None = None, password: str | None = None,
                 connect_timeout: float = 2.0, read_timeout: float | None = 5.0) -> None:
        self.host, self.port, self.path = host or "127.0.0.1", port, path
        self.username, self.password = username, password
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    def __repr__(self) -> str:
        return f"RespConnection({self.where})"

    @property
    def where(self) -> str:
        return self.path if self.path else f"{self.host}:{self.port}"

    @property
    def is_connected(self) -> bool:
        return self._writer is not None

    async def connect(self) -> None:
        """Open the connection (when it is not) and AUTH when there is a password. An
        auth failure raises the server's ReplyError, the connection closed."""
        if self._writer is not None:
            return
        try:
            if self.path:
                opened = asyncio.open_unix_connection(self.path)
            else:
                opened = asyncio.open_connection(self.host, self.port)
            reader, writer = await asyncio.wait_for(opened, self.connect_timeout)
        except TimeoutError:
            raise RespTimeoutError("Timeout connecting to server") from None
        except OSError as e:
            raise RespConnectionError(self._connect_error(e)) from None
        self._reader, self._writer = reader, writer
        if not self.path:
            sock = writer.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if self.password is not None:
                await self._auth()
        except BaseException:
            await self.disconnect()
            raise

    async def _auth(self) -> None:
        assert self.password is not None
        if self.username:
            try:
                reply = await self.command("AUTH", self.username, self.password)
            except ReplyError as e:
                if "wrong number of arguments" not in str(e).lower():
                    raise
                reply = await self.command("AUTH", self.password)  # before Redis 6: no users
        else:
            reply = await self.command("AUTH", self.password)
        if reply != "OK":
            raise ReplyError("", f"AUTH answered {reply!r}, not OK")

    def _connect_error(self, e: OSError) -> str:
        """redis-py's words: "Error 111 connecting to 127.0.0.1:6379. Connection refused."."""
        if e.errno is None and not e.strerror:
            return f"Error {e} connecting to {self.where}."
        return f"Error {e.errno} connecting to {self.where}. {e.strerror}."

    async def disconnect(self) -> None:
        """Close the connection without waiting on the peer (a hung server)."""
        self._drop()

    def _drop(self) -> None:
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            with contextlib.suppress(OSError, RuntimeError):
                writer.transport.abort()

    async def command(self, *args: str) -> RespReply:
        """Send one command and read its reply (an error reply raises ReplyError)."""
        await self.send(*args)
        return await self.read(self.read_timeout)

    async def send(self, *args: str) -> None:
        await self.send_many(args)

    async def send_many(self, *commands: tuple[str, ...]) -> None:
        """Several commands in one write (their replies are read in order with ``read``:
        a caller that stops early must read the rest or disconnect)."""
        writer = self._writer
        if writer is None:
            raise RespConnectionError(f"Not connected to {self.where}.")
        try:
            writer.write(b"".join(map(encode, commands)))
            await writer.drain()
        except OSError as e:
            self._drop()
            raise RespConnectionError(f"Error {e.errno} while writing to {self.where}. "
                                      f"{e.strerror}.") from None
        except BaseException:
            self._drop()
            raise

    async def read(self, within: float | None) -> RespReply:
        """The next reply, within ``within`` seconds (None: however long it takes, a
        subscription's next message)."""
        reader = self._reader
        if reader is None:
            raise RespConnectionError(f"Not connected to {self.where}.")
        try:
            if within is None:
                return await self._reply(reader)
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for wraps the read in a
            # task of its own, two more turns of the event loop per command
            async with asyncio.timeout(within):
                return await self._reply(reader)
        except ReplyError:
            raise  # (the reply was read whole: the stream is where it should be)
        except TimeoutError:
            self._drop()
            raise RespTimeoutError(f"Timeout reading from {self.where}") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            self._drop()
            raise RespConnectionError("Connection closed by server.") from None
        except OSError as e:
            self._drop()
            raise RespConnectionError(f"Error while reading from {self.where} : "
                                      f"{e.strerror or e}") from None
        except (ValueError, asyncio.LimitOverrunError):  # not RESP: no Redis server
            self._drop()
            raise RespError(f"Protocol Error: not a Redis reply from {self.where}") from None
        except BaseException:
            self._drop()
            raise

    async def _line(self, reader: asyncio.StreamReader) -> bytes:
        line = await reader.readuntil(b"\r\n")
        return line[:-2]

    async def _reply(self, reader: asyncio.StreamReader) -> RespReply:
        line = await self._line(reader)
        if not line:
            raise RespError(f"Protocol error: empty line from {self.where}")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode(errors="replace")
        if kind == b"-":
            raise error_reply(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = await reader.readexactly(n + 2)
            return data[:-2].decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [await self._reply_item(reader) for _ in range(n)]
        self._drop()
        raise RespError(f"Protocol Error: {line[:40]!r}")

    async def _reply_item(self, reader: asyncio.StreamReader) -> RespReply:
        """An element of an array: an error reply inside one is its text (EXEC's)."""
        try:
            return await self._reply(reader)
        except ReplyError as e:
            return f"{e.code} {e}".strip()
