"""The graph view's screen (key g live, G in a replay) and its chart widget: what imports
textual-plotext (and plotext, ~1 MB), imported on the view's first opening only
(``replmon.tui.graphs`` holds the points and the drawing, which the live screen uses
every tick: #56, memory).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from replmon.model.findings import Finding
from replmon.model.tick import Tick
from replmon.tui.graphs import CHARTS, Legend, Point, clock, draw, fit_title, legend_lines
from replmon.tui.screens import FollowsTicks
from replmon.units import tick_clock

# --- the screen ---------------------------------------------------------------------


class ChartPlot(PlotextPlot):
    """A PlotextPlot that builds its picture once per (data drawn, size, theme) and hands
    Textual finished lines (its line API): Textual renders a widget again on every layout
    pass, and would turn plotext's text, a colour change every few characters, into its
    own content model on each (~10 ms a chart, on top of plotext's ~20 ms build)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.version = 0
        """Bumped by whoever draws new data on ``plt``."""
        self._built: tuple[tuple[object, ...], list[Strip]] | None = None
        self.title = ""
        """The chart's whole title, on the first line (cut to fit, its unit kept)."""
        self.legend: Legend = []
        """What each line and marker is, drawn under the plot (not over its lines)."""

    @property
    def built(self) -> bool:
        """The picture was built (the chart was in view once since it was mounted)."""
        return self._built is not None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        key = (self.version, self.size, self.app.theme)
        if self._built is None or self._built[0] != key:
            # the title on a line of its own: plotext centres it on the plot, right of the
            # y labels, and drops it when it would pass the edge (a blank first line)
            self.plt.title(None)
            console = self.app.console
            legend = [Text(fit_title(self.title, width), style="bold"),
                      *legend_lines(self.legend, width)]
            height = max(3, self.size.height - len(legend))
            options = console.options.update_width(width)
            lines = console.render_lines(self._picture(width, height), options, pad=True)
            texts = [line for text in legend
                     for line in console.render_lines(text, options, pad=True)]
            lines = texts[:1] + lines[:height] + texts[1:]
            self._built = (key, [Strip(line, width) for line in lines])
        strips = self._built[1]
        return strips[y] if y < len(strips) else Strip.blank(width)

    def _picture(self, width: int, height: int) -> Text:
        """plotext's text for ``width`` x ``height`` cells, themed (PlotextPlot.render
        does this for the whole widget: the legend line is taken off here)."""
        self.plt.plotsize(width, height)
        self.plt._set_size(width, height)  # (as PlotextPlot.render does)
        self.plt.theme(self._get_plotext_theme_name(self.app.theme))
        return Text.from_ansi(self.plt.build())


GraphSource = Callable[[], tuple[Sequence[Point], float | None, Sequence[Finding]]]
"""What the screen draws: (history, cursor wall or None, findings whose onsets to mark)."""


LIVE_REDRAW_S = 5.0
"""Seconds between two redraws of the live graph view: the four charts in view at 160
columns cost ~100 ms to build, so redrawing them every second would take ~10 % of a core;
every 5 s it is ~2 %, and a 5-minute chart moves by under 2 % of its width."""


REPLAY_REDRAW_S = 0.5
"""Seconds at least between two redraws in a replay that plays (each tick shown moves
the cursor; at 64x that is many ticks a second, and a redraw reads ~600 ticks)."""


class GraphScreen(FollowsTicks, Screen[None]):
    """Every chart of CHARTS, scrolled; live it redraws every LIVE_REDRAW_S, in a replay
    with every tick shown (stepping, playing: at most every REPLAY_REDRAW_S) and n/N move
    the cursor to the next/previous finding (live, n/N are not offered). Its first frame
    holds the charts in view (4 at 160x50, ~100 ms of building); the others are built
    when scrolled to.
    Drawing them one per frame instead put the screen up sooner but the last chart in
    view later: a frame's wait between each."""

    BINDINGS = [Binding("escape", "dismiss", "Back"), Binding("q", "app.quit", "Quit"),
                Binding("g", "dismiss", "Back", show=False),
                Binding("n", "finding(1)", "Next finding"),
                Binding("N", "finding(-1)", "Prev finding", key_display="N")]

    def __init__(self, source: GraphSource, *, live: bool,
                 move: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self.source, self.live, self.move = source, live, move
        self.drawn = 0
        """Redraws done (tests and the bench read it)."""
        self._last_drawn = 0.0
        self._due = False
        """A redraw is scheduled (a replay's ticks came faster than REPLAY_REDRAW_S)."""

    def compose(self) -> ComposeResult:
        yield Static(id="graphs-head")
        with VerticalScroll(id="graphs"):
            for i, _ in enumerate(CHARTS):
                yield ChartPlot(id=f"chart-{i}", classes="chart")
        yield Footer()  # a full screen of its own: its keys at the bottom

    def on_mount(self) -> None:
        self.redraw()
        if self.live:
            self.set_interval(LIVE_REDRAW_S, self.redraw)

    @property
    def in_view_built(self) -> bool:
        """Every chart in view has its picture built (what the user waits for)."""
        return all(c.built for c in self.query(ChartPlot)
                   if c.region.height and c.region.y < self.app.size.height)

    def redraw(self) -> None:
        history, cursor, onsets = self.source()
        self.query_one("#graphs-head", Static).update(self.head(history, cursor))
        for i, chart in enumerate(CHARTS):
            plot = self.query_one(f"#chart-{i}", ChartPlot)
            plot.title, plot.legend = draw(plot.plt, chart, history, cursor=cursor,
                                           onsets=onsets)
            plot.version += 1
            plot.refresh()
        self.drawn += 1
        self._last_drawn = time.monotonic()

    def head(self, history: Sequence[Point], cursor: float | None) -> Text:
        """The line over the charts: what they span and the tick they stand at (a chart
        without data shows no cursor)."""
        if not history:
            return Text("no ticks yet", style="dim")
        span = f"{clock(history[0][0])} to {clock(history[-1][0])}"
        if cursor is None:
            return Text(f"the last {len(history)} ticks, {span}; as of "
                        f"{clock(history[-1][0])}", style="bold")
        return Text(f"cursor at the tick shown, {tick_clock(cursor)}; the recording {span}",
                    style="bold")

    def tick_shown(self, tick: Tick, findings: list[Finding]) -> None:
        """A replay moved (a step, play, a jump): the cursor follows, at most every
        REPLAY_REDRAW_S. Live, the LIVE_REDRAW_S timer redraws."""
        if self.live or self._due:
            return
        self._due = True
        wait = self._last_drawn + REPLAY_REDRAW_S - time.monotonic()
        self.set_timer(max(0.01, wait), self._redraw_due)  # (0 s: Textual divides by it)

    def _redraw_due(self) -> None:
        self._due = False
        self.redraw()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """n/N only where they move something (a replay)."""
        return self.move is not None if action == "finding" else True

    def action_finding(self, direction: int) -> None:
        if self.move is not None:
            self.move(direction)
            self.redraw()

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)
