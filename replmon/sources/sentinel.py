"""The Sentinel source: what a Redis Sentinel says about the pair's master, each tick.

Each sample is one ``SENTINEL MASTER <name>`` (its address, flags, quorum, other
Sentinels, config epoch, failover state) on a connection kept from tick to tick, under
the per-source timeout like every source (``Source.sample``): a Sentinel that is down
or hung is this source's state (unreachable, timeout, auth), never a delay of the tick.

Its failover events come on a second connection, subscribed (PSUBSCRIBE) to the event
channels by a background task that buffers what concerns this master (bounded) with
the time each arrived; each sample takes the buffered ones. The subscription is a
bonus, not the truth: when it is down (``events_error``) it reconnects every second,
and a change of master is still seen by the poll (its time is then the tick's).

The master's name: given (``--sentinel HOST:PORT/NAME``), or the master Sentinel
monitors at one of the pair's Redis addresses (``SENTINEL MASTERS``, once), or the
only one it monitors.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import deque
from collections.abc import Mapping
from typing import ClassVar

from replmon.endpoints import SentinelEndpoint
from replmon.errors import SourceError
from replmon.model.base import SourceState
from replmon.model.sentinel import SentinelEvent, SentinelSample, SentinelSwitch
from replmon.sources import sentinel_parse as sp
from replmon.sources.base import Source
from replmon.sources.redis_talk import RedisTalk
from replmon.sources.resp import RespConnection, RespError

log = logging.getLogger(__name__)

MAX_EVENTS = 64
"""Events buffered between two samples (a failover publishes about 15)."""
RESUBSCRIBE_S = 1.0


class SentinelSource(RedisTalk, Source[SentinelSample]):
    """Samples one Sentinel's view of the master at ``nodes``' Redis addresses."""

    kind: ClassVar[str] = "sentinel"
    sample_type = SentinelSample
    fresh_samples = True  # (a model_copy of build_sample's new record)
    acl_hint = ("the ACL user needs +sentinel|master +sentinel|masters +psubscribe "
                "(ACL SETUSER <user> on the Sentinel)")

    def __init__(self, endpoint: SentinelEndpoint, nodes: Mapping[tuple[str, int], str], *,
                 given: Mapping[tuple[str, int], str] | None = None,
                 timeout: float = 0.8) -> None:
        """``nodes``: the pair's Redis servers, (host, port) -> the node's name;
        ``given``: (host, port) -> the role that node was given (its identity)."""
        super().__init__(timeout=timeout)
        self.endpoint = endpoint
        self._given_nodes = dict(nodes)
        self._given_roles = dict(given or {})
        self._nodes = {f"{h}:{p}": n for (h, p), n in nodes.items()}
        self._roles = {f"{h}:{p}": r for (h, p), r in self._given_roles.items()}
        self._name = endpoint.master_name
        self._conn: RespConnection | None = None
        self._events: deque[SentinelEvent] = deque(maxlen=MAX_EVENTS)
        self._events_error: str | None = None
        self._listener: asyncio.Task[None] | None = None
        self._master = ""
        self._switch: SentinelSwitch | None = None

    def __repr__(self) -> str:
        return f"SentinelSource({self.endpoint.display()})"

    async def open(self) -> None:
        if self._conn is None:
            self._conn = self._new_connection()
            await self._resolve_nodes()

    async def close(self) -> None:
        await super().close()
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        conn, self._conn = self._conn, None
        await self._disconnect(conn)

    async def _resolve_nodes(self) -> None:
        """The pair's Redis hosts by their addresses too: Sentinel says ip:port."""
        loop = asyncio.get_running_loop()
        for (host, port), name in self._given_nodes.items():
            try:
                infos = await asyncio.wait_for(
                    loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=1.0)
            except (OSError, TimeoutError):
                continue
            for *_, addr in infos:
                self._nodes.setdefault(f"{addr[0]}:{port}", name)
                if (host, port) in self._given_roles:
                    self._roles.setdefault(f"{addr[0]}:{port}", self._given_roles[host, port])

    def _fail(self, wall: float, mono: float, state: SourceState, error: str,
              hint: str | None, elapsed_ms: float | None = None) -> SentinelSample:
        """A failed sample still says where Sentinel is and its last switch (a title
        that names it does not flicker while Sentinel is away)."""
        return super()._fail(wall, mono, state, error, hint, elapsed_ms).model_copy(
            update={"sentinel": self.endpoint.display(), "name": self._name or "",
                    "last_switch": self._switch})

    async def _fetch(self) -> SentinelSample:
        if self._conn is None:
            await self.open()
        conn = self._conn
        assert conn is not None
        name, reply = await self._first(conn, self._master_reply)
        self._name = name
        self._listen()
        sample = sp.build_sample(sp.fields(reply), self._nodes, self._roles)
        events = tuple(self._events)
        self._events.clear()
        self._note_switch(sample, events)
        return sample.model_copy(update={
            "sentinel": self.endpoint.display(), "events": events,
            "last_switch": self._switch, "events_error": self._events_error})

    async def _master_reply(self, conn: RespConnection) -> tuple[str, object]:
        """The master's name and Sentinel's SENTINEL MASTER reply for it."""
        name = self._name or await self._find_name(conn)
        return name, await self._command(conn, "SENTINEL", "MASTER", name)

    async def _find_name(self, conn: RespConnection) -> str:
        found = sp.masters(await self._command(conn, "SENTINEL", "MASTERS"))
        ours = [m.get("name", "") for m in found if sp.address(m) in self._nodes]
        if len(ours) == 1:
            return ours[0]
        if not ours and len(found) == 1:
            return found[0].get("name", "")
        names = ", ".join(sorted(m.get("name", "?") for m in found)) or "none"
        raise SourceError(
            f"{self.endpoint.display()}: Sentinel monitors {len(found)} master(s) ({names}), "
            f"{'several' if ours else 'none'} at the pair's Redis addresses",
            hint="name the master: --sentinel HOST:PORT/NAME (or master_name in [sentinel])")

    def _note_switch(self, sample: SentinelSample, events: tuple[SentinelEvent, ...]) -> None:
        """Keep the last change of master: from its +switch-master (its own time), or
        from the address the poll shows (the events were missed: the tick's time)."""
        for ev in events:
            moved = sp.switch_of(ev)
            if moved is not None:
                self._switch = SentinelSwitch(
                    wall=ev.wall, old=moved[0], new=moved[1], old_node=self._nodes.get(
                        moved[0], ""), new_node=self._nodes.get(moved[1], ""))
        sw = self._switch
        if self._master and sample.master != self._master and (
                sw is None or sw.new != sample.master):
            sw = SentinelSwitch(wall=time.time(), old=self._master, new=sample.master,
                                old_node=self._nodes.get(self._master, ""),
                                new_node=sample.master_node)
        if sw is not None and sw.new == sample.master and sw.epoch != sample.config_epoch:
            sw = sw.model_copy(update={"epoch": sample.config_epoch})
        self._switch = sw
        self._master = sample.master

    def _listen(self) -> None:
        """Start the subscription (again, should it have ended on a bug: said, logged)."""
        done = self._listener
        if done is not None and done.done():
            if not done.cancelled() and done.exception() is not None:
                e = done.exception()
                log.error("Sentinel event subscription failed", exc_info=e)
                self._events_error = f"event subscription failed: {type(e).__name__}: {e}"
            done = None
        if done is None:
            self._listener = asyncio.ensure_future(self._subscribe_forever())

    async def _subscribe_forever(self) -> None:
        """Buffer this master's events; reconnect after a failure (the poll goes on)."""
        ep = self.endpoint
        name = self._name or ""
        while True:
            conn = RespConnection(
                host=ep.host, port=ep.port, path=ep.socket or None, username=ep.username,
                password=ep.password.get_secret_value() if ep.password else None,
                connect_timeout=ep.connect_timeout, read_timeout=ep.read_timeout)
            try:
                await conn.connect()
                await conn.send("PSUBSCRIBE", *sp.EVENT_PATTERNS)
                self._events_error = None
                while True:
                    # the confirmations (["psubscribe", pattern, count]) skipped; a
                    # message: ["pmessage", pattern, channel, data]
                    msg = await conn.read(None)
                    if not (isinstance(msg, list) and len(msg) == 4 and msg[0] == "pmessage"):
                        continue
                    ev = sp.event(str(msg[2]), str(msg[3]), name, time.time())
                    if ev is not None:
                        self._events.append(ev)
            except (RespError, OSError) as e:
                self._events_error = f"event subscription down: {self._clean(e)}"
            finally:
                await conn.disconnect()
            await asyncio.sleep(RESUBSCRIBE_S)
