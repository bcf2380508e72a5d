"""KernelPing (replmon/sources/kernel_ping.py) against a tiny PONG server on loopback: the
socket stays registered with the loop from one ping to the next and no longer once
closed; a server gone between pings makes the next ping fail (None) and the one after
reconnect, as when each ping registered the socket for itself."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading

from replmon.sources.kernel_ping import KernelPing


class PongServer:
    """Answers each PING with +PONG; ``drop()`` closes the connections it has."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        while True:
            try:
                data = conn.recv(64)
            except OSError:
                return
            if not data:
                return
            for _ in range(data.count(b"PING")):
                conn.sendall(b"+PONG\r\n")

    def close(self) -> None:
        """Close the listener and every connection: none is left to the collector."""
        self.drop()
        self.listener.close()

    def drop(self) -> None:
        for c in self.conns:
            with contextlib.suppress(OSError):  # the peer went first
                c.shutdown(socket.SHUT_RDWR)
            c.close()
        self.conns.clear()


def registered(loop: asyncio.AbstractEventLoop, ping: KernelPing) -> bool:
    sock = ping._sock
    if sock is None:
        return False
    key = loop._selector.get_map().get(sock.fileno())  # type: ignore[attr-defined]
    return key is not None


async def test_pings_keep_the_socket_registered_and_a_dropped_server_fails_one() -> None:
    server = PongServer()
    loop = asyncio.get_running_loop()
    ping = KernelPing(port=server.port, timeout=1.0)
    try:
        for _ in range(3):
            rtt = await ping.rtt_ms()
            assert rtt is not None and rtt >= 0
            assert registered(loop, ping)
        server.drop()
        await asyncio.sleep(0.05)  # the EOF lands between pings: the socket is let go
        assert await ping.rtt_ms() is None  # the ping on the closed connection fails
        assert ping._sock is None and ping._watching is None
        assert await ping.rtt_ms() is not None  # reconnected
        assert registered(loop, ping)
    finally:
        fd = ping._sock.fileno() if ping._sock is not None else -1
        ping.close()
        server.close()
    assert ping._watching is None
    assert fd not in loop._selector.get_map()  # type: ignore[attr-defined]
