"""The overview's node columns: a ``NodePanel`` per node, its groups (``Section``: host,
drbd, mysql, redis, each shown in place, ok or not; enter opens a group's detail) and
its sparklines."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Sparkline, Static

from replmon.model.nic_roles import nic_roles
from replmon.model.sentinel import SentinelSample
from replmon.model.tick import NodeTick, Role, Tick
from replmon.output.plain import human
from replmon.tui import fitting, header, render
from replmon.units import tick_clock

SPARKS = (("qps", "stmt"), ("ops", "rds"))
"""Sparklines under each node: (history key, label); the last 5 minutes, with the
highest value shown on the right (the y scale: the tallest bar)."""


@runtime_checkable
class OpensDetail(Protocol):
    """An app that opens a group's detail (``ReplmonApp.action_detail``)."""

    def action_detail(self, group: str) -> None: ...


class Section(Static, can_focus=True):
    """One group of a node's column (host, drbd, mysql, redis); enter opens its detail."""

    BINDINGS = [Binding("enter", "open", "Detail")]

    def __init__(self, kind: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.kind = kind

    def action_open(self) -> None:
        app = self.app
        if isinstance(app, OpensDetail):
            app.action_detail(self.kind)


class NodePanel(VerticalScroll):
    """One node: host, DRBD, MySQL, Redis, each shown in place, ok or not. ``role`` is
    the column's: the role the node in it was given (``NodeTick.given``); its title says
    the node's name and its role now."""

    SECTIONS = ("host", "drbd", "mysql", "redis")

    def __init__(self, role: Role) -> None:
        super().__init__(id=role, classes="node")
        self.role = role
        self.border_title = role

    def compose(self) -> ComposeResult:
        for kind in self.SECTIONS:
            yield Section(kind, id=f"{self.role}-{kind}", classes=f"section {kind}")
        for key, label in SPARKS:
            with Horizontal(classes="spark"):
                yield Static(label, classes="spark-label")
                yield Sparkline([], id=f"{self.role}-{key}")
                yield Static("", id=f"{self.role}-{key}-max", classes="spark-max")

    def texts(self, node: NodeTick, other: NodeTick | None, now: float | None,
              gtid_rows_per_s: float | None = None,
              sentinel: SentinelSample | None = None, tick: Tick | None = None
              ) -> dict[str, Text]:
        """Each group's lines for ``node``, broken to this column's width; ``other``:
        the other node of the same tick (values that differ are marked);
        ``gtid_rows_per_s``: see render.mysql_text; ``sentinel``: the tick's Sentinel
        sample (a line under Redis: render.sentinel_text); ``tick``: the tick, for the
        true lag of the node that is MySQL's replica (``Tick.lag``) and the offset lag of
        the one that is Redis's (``Tick.redis_lag``): each service has its own."""
        lag = tick.lag if tick is not None and \
            tick.service_role(node, "mysql") == "replica" else None
        redis_lag = tick.redis_lag if tick is not None and \
            tick.service_role(node, "redis") == "replica" else None

        roles = nic_roles(tick, node) if tick is not None else {}

        def host(n: NodeTick, o: NodeTick | None) -> Text:
            return render.host_text(n, o, nics=roles)

        def mysql(n: NodeTick, o: NodeTick | None) -> Text:
            return render.mysql_text(n, o, gtid_rows_per_s=gtid_rows_per_s, lag=lag)

        def redis(n: NodeTick, o: NodeTick | None) -> Text:
            return render.redis_text(n, o, lag=redis_lag)

        renderers: dict[str, Callable[[NodeTick, NodeTick | None], Text]] = {
            "host": host, "drbd": render.drbd_text, "mysql": mysql,
            "redis": redis}
        width = self.scrollable_content_region.width
        out = {kind: renderers[kind](node, other) if st.ok else render.status_text(kind, st, now)
               for kind, st in node.statuses().items()}
        if sentinel is not None:
            out["redis"] = out["redis"] + render.sentinel_text(sentinel, node.name, now)
        return {kind: fitting.fit(text, width, kind) for kind, text in out.items()}

    def show(self, node: NodeTick, texts: dict[str, Text], lines: dict[str, int],
             history: dict[str, deque[float]], since: float | None = None,
             services: str = "") -> None:
        """``texts`` from ``texts()``, each padded to ``lines`` (the taller of the two
        nodes' same group, so both columns stay aligned group by group); ``since``: when
        the roles last changed (``Roles.since``), said after the role; ``services``:
        its roles in the services where they are not its role in the pair ("redis
        replica"), said after its name."""
        title = f"{node.role} {node.name}"
        room = self.outer_size.width - 6  # the border's corners and the spaces
        if services:  # at 80 columns in the header's words: "· rds replica"
            full = f" · {services}"
            title += full if len(title) + len(full) <= room or room <= 0 else \
                " · " + header.short_services(services)
        if since is not None:
            # "since" goes first when the panel is narrow: the time must stay whole (at
            # 80 columns "replica lab-primary since 13:47:…" lost its seconds)
            when = tick_clock(since)
            title += f" since {when}" if len(title) + 7 + len(when) <= room or room <= 0 \
                else f" {when}"
        self.border_title = title
        for kind, st in node.statuses().items():
            w = self.query_one(f"#{self.role}-{kind}", Static)
            fitting.put(w, fitting.pad_lines(texts[kind], lines.get(kind, 0)))
            w.set_class(not st.ok and st.state.value != "absent", "down")
            w.set_class(st.state.value == "absent", "absent")
        for key, _ in SPARKS:
            data = list(history[key])
            top = max(data, default=0.0)
            # all zero: no bars (Sparkline draws equal values as full ones)
            self.query_one(f"#{self.role}-{key}", Sparkline).data = data if top > 0 else []
            fitting.put(self.query_one(f"#{self.role}-{key}-max", Static),
                       f"max {human(top).strip()}/s" if data else "")
