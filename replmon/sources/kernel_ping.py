"""A Redis PING whose round trip the kernel times, not the event loop.

replmon samples every source of both nodes concurrently on one asyncio loop, and the
screen draws on the same loop. A PING timed with ``perf_counter`` around ``await
read_response()`` includes every millisecond the loop spent elsewhere before resuming
the coroutine: a loopback Redis read 8-10 ms under the lab's load, which is replmon's
own scheduling, not the server.

So the round trip is measured on a second, tiny connection whose socket has
``SO_TIMESTAMPNS`` on: the kernel stamps each arriving segment with the wall clock
(CLOCK_REALTIME) when it lands, whatever the loop does. RTT = the reply's kernel stamp
minus the wall clock just before the send (a non-blocking send goes out at once).
Where the stamp is missing (not Linux, a unix socket that gives none) the time the
callback ran is used instead, which is what replmon measured before, and
``KernelPing.stamped`` says which.

The connection speaks just enough RESP: AUTH (with the source's credentials) on
connect, then ``PING`` per sample. Any failure closes it; the next sample reconnects
once; the caller falls back to its own (loop-timed) measurement meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import sys
import time

SO_TIMESTAMPNS = 35
"""Linux's SO_TIMESTAMPNS (asm-generic/socket.h); Python's socket module lacks it."""
PING = b"*1\r\n$4\r\nPING\r\n"


def _resp(*args: str) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        b = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class KernelPing:
    """One extra connection to a Redis server for kernel-timed PINGs."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 6379, path: str | None = None,
                 username: str | None = None, password: str | None = None,
                 timeout: float = 2.0) -> None:
        self._where: tuple[str, int] | str = path if path else (host, port)
        self._auth = ((username, password) if username else (password,)) if password else None
        self._timeout = timeout
        self._sock: socket.socket | None = None
        self.stamped = False
        """True when the last round trip came from a kernel timestamp."""
        self._watching: tuple[asyncio.AbstractEventLoop, socket.socket, int] | None = None
        """The loop the socket is registered with as a reader (``_readable``), the socket
        and its fd: kept from one ping to the next."""
        self._done: asyncio.Future[tuple[bytes, float | None, float]] | None = None
        """The pending ping's reply (None between pings)."""

    def close(self) -> None:
        self._unwatch()  # before the socket closes: its fd's number may come back
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def _connect(self) -> socket.socket:
        """Blocking connect and AUTH (run in a thread); the socket is left non-blocking."""
        if isinstance(self._where, str):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self._timeout)
            sock.connect(self._where)
        else:
            sock = socket.create_connection(self._where, timeout=self._timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if sys.platform == "linux":
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            if self._auth is not None:
                sock.sendall(_resp("AUTH", *(a or "" for a in self._auth)))
                reply = sock.recv(256)
                if not reply.startswith(b"+OK"):
                    raise OSError("AUTH refused")  # never echo the reply: it is the server's
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock

    async def rtt_ms(self) -> float | None:
        """Milliseconds of one PING round trip, or None when it could not be measured
        (no connection, an error reply, a timeout): the caller keeps its own figure."""
        loop = asyncio.get_running_loop()
        try:
            if self._sock is None:
                self._sock = await asyncio.to_thread(self._connect)
            async with asyncio.timeout(self._timeout):  # (no task of its own, as wait_for's)
                return await self._ping(loop, self._sock)
        except (OSError, TimeoutError, ValueError):
            self.close()
            return None

    async def _ping(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> float | None:
        # The socket stays registered with the loop between pings while they succeed (a
        # registration and its removal, two epoll_ctl calls and a handle, were each
        # ping's); a failed ping ends it, as does readiness between pings (_readable).
        done: asyncio.Future[tuple[bytes, float | None, float]] = loop.create_future()
        self._done = done
        try:
            if self._watching is None or self._watching[0] is not loop \
                    or self._watching[1] is not sock:
                self._unwatch()
                fd = sock.fileno()
                loop.add_reader(fd, self._readable)
                self._watching = (loop, sock, fd)
            sent = time.time()
            sock.send(PING)
            data, stamp, ran = await done
        except BaseException:
            self._unwatch()
            raise
        finally:
            self._done = None
        if not data.startswith(b"+PONG"):
            raise ValueError("not a PONG")
        self.stamped = stamp is not None
        return max(0.0, ((stamp if stamp is not None else ran) - sent) * 1000.0)

    def _readable(self) -> None:
        """The reply of the pending ping, read when it lands (with the kernel's stamp)."""
        done, watching = self._done, self._watching
        if done is None or watching is None:
            # readable between pings (a late byte, EOF): not read here, and not watched
            # until the next ping, which reads it as it would have read it unwatched
            self._unwatch()
            return
        sock = watching[1]
        try:
            data, anc, _flags, _addr = sock.recvmsg(64, 256)
        except BlockingIOError:
            return
        except OSError as e:
            if not done.done():
                done.set_exception(e)
            return
        stamp = None
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                sec, nsec = struct.unpack("qq", cdata[:16])
                stamp = sec + nsec / 1e9
        if not done.done():
            done.set_result((data, stamp, time.time()))

    def _unwatch(self) -> None:
        watching, self._watching = self._watching, None
        if watching is not None:
            with contextlib.suppress(OSError, RuntimeError, ValueError):
                watching[0].remove_reader(watching[2])
