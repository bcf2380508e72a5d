"""The same screen on a recording: pause, step, speed, jump to a time, jump to
the next/previous finding, and a position bar.

Checks re-run with today's check code as the replay advances. After a jump, the
engine is rebuilt and warmed on the ticks just before the new position (the
longest check window), so findings at the new position are what a live engine
would show; a finding that opened before that warm-up shows its since-time from
within it. The findings the live engine recorded at capture time are shown too
("rec" in the findings list).

n / N jump to where a finding opened: where the live engine opened one (read from
the recording), or where today's checks open one (a re-run over the whole
recording, in a background thread driving worker processes: ~30 s for a day on
two cores; until it is done, n / N use the recorded ones).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import sys
from collections.abc import Callable, Iterable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input, Label, Static
from textual.worker import get_current_worker

from replmon.engine import Engine, Update
from replmon.errors import SessionError
from replmon.model.findings import Finding
from replmon.model.incidents import Causality, IncidentTracker, causality
from replmon.model.tick import Tick
from replmon.session.cursor import ReplayCursor, Step, parse_jump
from replmon.session.recording import Recording
from replmon.tui import fitting, header, replay_bar
from replmon.tui.app import ReplmonApp
from replmon.tui.feeds import TickReceived
from replmon.tui.graphs import Point, points
from replmon.tui.processlist import Snapshot, Snapshots
from replmon.units import tick_clock

SPEEDS = (1, 2, 4, 8, 16, 32, 64)
STEP = Binding.Group("Step", compact=True)


class JumpScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="jump"):
            yield Label("jump to (HH:MM:SS, +90s, -5m, or a tick number #1234):")
            yield Input(id="jump-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReplayApp(ReplmonApp, inherit_bindings=False):
    TICKS_NUMBERED = True
    """A finding's detail says at which tick of the recording it began (the status bar
    counts ticks the same way)."""
    # its own list, in the order of the footer: what a first look needs first (80
    # columns show about eight)
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        # space: Play while paused, Pause while playing (check_action shows the one that
        # applies); p toggles too
        Binding("space", "play", "Play", priority=True, key_display="␣"),
        Binding("space", "pause", "Pause", priority=True, key_display="␣"),
        Binding("p", "play_pause", "Play/Pause", show=False, priority=True),
        Binding("n", "finding(1)", "Next"),  # finding: said in ? (80 columns)
        Binding("N", "finding(-1)", "Prev finding", key_display="N", show=False),  # in ?
        # one "← → Step" in the footer: "Back" is escape's (close a view)
        Binding("right", "step(1)", "Step", priority=True, group=STEP),
        Binding("left", "step(-1)", "Step back", priority=True, group=STEP),
        Binding("d", "drift", "Drift"),
        Binding("G", "graphs", "Graphs", key_display="G"),
        Binding("w", "processlist", "Who"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("g", "jump", "Go to"),
        Binding("plus,equals_sign", "speed(1)", "Fast", key_display="+"),
        Binding("minus", "speed(-1)", "Slow", key_display="-"),
        Binding("f", "focus_findings", "Findings", show=False),
        Binding("tab", "focus_next", "Next panel", show=False),
        Binding("enter", "open_finding", "Finding", show=False),
    ]

    def __init__(self, recording: Recording, engine_factory: Callable[[], Engine], *,
                 play: bool = False,
                 rerun: Callable[[Callable[[], bool]], Iterable[tuple[int, Update]]] | None
                 = None, start: int = 0) -> None:
        """The replay opens paused on tick index ``start`` (the first by default; ``play``:
        playing from it, as `replmon replay --play`). ``rerun(should_stop)``: today's
        checks over the whole recording, as (tick index, Update) (e.g. ``rerun_file(path,
        should_stop=should_stop)``), stopping early when ``should_stop()``; called in a
        thread, for n / N."""
        # "for N s" on a failed source is as of the tick shown, not of today's clock
        super().__init__(None, None, source="replay",
                         clock=lambda: self.tick.wall if self.tick is not None else 0.0)
        self.recording = recording
        self.cursor = ReplayCursor(recording, engine_factory)
        self.incidents = IncidentTracker(self.causality())
        """Position and engine (session/cursor.py); this screen only drives it."""
        self.speed = 1
        self._playing = play
        self._landed: int | None = None
        """Where n / N last stopped (n at the first tick counts an opening there once)."""
        self._select: set[tuple[str, str, str]] = set()
        """Findings (check, node, key) that opened where n / N stopped: the findings list's
        cursor goes to the first of them once that tick is on screen."""
        self._wake = asyncio.Event()
        self._rerun = rerun
        self._start = start
        self._recorded_marks: list[int] | None = None
        """Tick indexes where the live engine opened a finding (for n / N)."""
        self._rerun_marks: list[int] | None = None
        """Tick indexes where today's checks open a finding (None until the re-run ends)."""
        self._overview: dict[int, Point] | None = None
        """The graphs' points spread over the whole recording (read in the background when
        the replay opens; until then the graphs show the ticks around the cursor)."""
        self._onsets: list[Finding] = []
        """Every finding the live engine opened in the recording (for the graphs; read with
        the marks, in the background, when the replay opens)."""
        self._near: dict[int, Point | None] = {}
        """The graphs' points of the ticks read around the cursor, by tick index (None: a
        damaged tick): a redraw after a step reads only the ticks it had not."""

    def compose(self) -> ComposeResult:
        for w in super().compose():
            if isinstance(w, Footer):
                yield Static(id="position")
            yield w

    def on_mount(self) -> None:
        # (Textual also runs ReplmonApp.on_mount: handlers are called along the MRO.)
        # The position bar takes a row: at 80x24 the findings list gives it up.
        self.main_widget("#findings", Widget).styles.min_height = 4
        self.marks_worker = self.run_worker(self._find_marks, thread=True, group="marks")
        """Finds where findings open (n / N); done when it is done."""
        if self._start > 0:  # replay --at: the checks run up to it, as g would
            self._goto(self._start)
        elif self.pos < 0:  # paused on the first tick until space
            self._show(self.cursor.step())

    def _find_marks(self) -> None:
        """Thread: the graphs' points over the whole recording (~1 s for a day), where
        findings open, recorded (seconds) then re-run (longer)."""
        from replmon.session.recording import open_recording

        with open_recording(self.recording.path) as rec:  # its own reader: thread-safe
            overview = {e.index: points(e.tick) for e in rec.overview(self.OVERVIEW_POINTS)}
            if len(rec):
                with contextlib.suppress(SessionError):  # the axis ends where the recording does
                    overview[len(rec) - 1] = points(rec.tick_at(len(rec) - 1))
            self.call_from_thread(self._overview_read, overview)
            onsets = rec.recorded_onsets()
        self.call_from_thread(setattr, self, "_onsets", [f for _, fs in onsets for f in fs])
        self.call_from_thread(setattr, self, "_recorded_marks", [i for i, _ in onsets])
        if self._rerun is None:
            return
        worker = get_current_worker()
        # the app closing cancels this worker: the re-run stops (and ends its processes)
        marks = [i for i, upd in self._rerun(lambda: worker.is_cancelled) if upd.opened]
        if not worker.is_cancelled:
            self.call_from_thread(setattr, self, "_rerun_marks", marks)

    # -- the feed -------------------------------------------------------------

    @property
    def playing(self) -> bool:
        return self._playing

    @playing.setter
    def playing(self, value: bool) -> None:
        if value == self._playing:
            return  # (a step sets it every time: each refresh rebuilt the footer's keys)
        self._playing = value
        self.refresh_bindings()  # the footer's space: Play or Pause

    @property
    def pos(self) -> int:
        """Index of the tick on screen (-1 before the first)."""
        return self.cursor.pos

    async def drive(self) -> None:
        """Play: one step per recorded interval / speed, until paused or at the end."""
        while True:
            if self.playing and not self.cursor.at_end:
                self._show(self.cursor.step())
                interval = self.recording.meta.interval or 1.0
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), interval / self.speed)
            else:
                if self.playing:  # reached the end
                    self.playing = False
                    self._refresh_header()
                    self._refresh_position()
                self._wake.clear()
                await self._wake.wait()

    def _show(self, step: Step | None) -> None:
        if step is not None:
            self.show_tick(step.tick, step.findings)

    def _goto(self, i: int) -> Step:
        """Jump: the cursor rebuilds and warms its engine; the sparklines restart there."""
        self.memory.restart()
        step = self.cursor.seek(i)
        self.incidents = IncidentTracker(self.causality())  # rebuilt from the findings there
        with contextlib.suppress(SessionError, IndexError):  # the tick before, for rates
            self.memory.last_seen = self.recording.tick_at(i - 1) if i > 0 else None
        self._binlogs_before(i)
        self._show(step)
        self._wake.set()
        return step

    def closed_history(self) -> list[Finding]:
        """The findings the replay's engine closed (since it was last rebuilt: a jump warms
        it on the ticks before the new position)."""
        cursor = getattr(self, "cursor", None)
        return list(cursor.engine.history) if cursor is not None else []

    BINLOG_BACK = 5
    """Ticks before a jump's target searched for the nodes' binary-log readings (read
    every 2 s: one of the last few ticks has each node's)."""

    def _binlogs_before(self, i: int) -> None:
        """After a jump: each node's newest binary-log reading from the ticks just before
        ``i`` (the mysql group's detail shows the newest, with its age), none from elsewhere."""
        self.memory.binlog_readings.clear()
        for k in range(max(0, i - self.BINLOG_BACK), i):
            with contextlib.suppress(SessionError):
                self.memory.remember_binlogs(self.recording.tick_at(k))

    def as_of(self, tick: Tick) -> str:
        """"as of 16:09:48, tick #4 of 151": the clock and the place in the recording, as
        the status bar counts ticks (the first is #1, as g takes "#4")."""
        return f"as of {tick_clock(tick.wall)}, tick #{self.pos + 1} of {len(self.recording)}"

    def causality(self) -> Causality:
        """The declarations of the checks the replay runs (the recording's settings)."""
        cursor = getattr(self, "cursor", None)  # (None while the base class starts)
        return causality(cursor.engine.checks) if cursor is not None else {}

    # -- display -----------------------------------------------------------------

    def on_tick_received(self, msg: TickReceived) -> None:
        super().on_tick_received(msg)
        # Textual calls each class's handler along the MRO: without this, ReplmonApp's ran
        # again after this one (the tick's panels, findings list and open view drawn twice)
        msg.prevent_default()
        self._refresh_position()
        if self._select and self._mounted():
            wanted, self._select = self._select, set()
            for row, f in enumerate(self.findings):  # the list's rows, in this order
                if (f.check.removesuffix(" (rec)"), f.node, f.key) in wanted:
                    self.main_widget("#findings", DataTable).move_cursor(row=row)
                    break

    def _refresh_position(self) -> None:
        """▶/⏸, speed, a bar of the place in the recording, the date and clock of the tick
        shown, its number (the first is #1, as g takes it) and the file's name."""
        if not self._mounted():
            return
        wall = self.recording.tick_at(self.pos).wall if self.pos >= 0 else None
        fitting.put(self.main_widget("#position", Static), replay_bar.position_line(
            self.playing, self.speed, self.pos, len(self.recording), wall,
            self.recording.path.stem, self.size.width or 80), layout=False)

    def _refresh_header(self) -> None:
        """The live header's pair and worst finding, then what says it is a replay:
        "REPLAY", paused or playing, the file and the recorded date and time of the tick
        shown (a live screen's "PAUSED" or age would pass it for a live one); the file's
        name and the date give way before the pair's names (80 columns)."""
        if not self._mounted():
            return
        width = self.size.width
        listed = [f for f, _ in self.ordered(self.findings)]
        wall = self.tick.wall if self.tick is not None else None
        tails = replay_bar.header_tails(self.playing, self.recording.path.name, wall)
        whole = header.header_text(self.tick, listed, age_s=None, source="replay").cell_len
        tail = next((t for t in tails if whole + t.cell_len <= width), tails[-1])
        line = header.header_text(self.tick, listed, age_s=None, source="replay",
                                  width=width - tail.cell_len)
        line.append_text(tail)
        fitting.put(self.main_widget("#header", Static), line, layout=False)

    # -- actions -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "play":  # space plays while paused...
            return not self.playing
        if action == "pause":  # ...and pauses while playing
            return self.playing
        return super().check_action(action, parameters)

    def action_play(self) -> None:
        self._set_playing(True)

    def action_pause(self) -> None:
        self._set_playing(False)

    def action_play_pause(self) -> None:
        self._set_playing(not self.playing)

    def _set_playing(self, playing: bool) -> None:
        self.playing = playing
        self.paused = False  # the base app's freeze is not used in replay
        self._wake.set()
        self._refresh_header()
        self._refresh_position()

    def action_step(self, delta: int) -> None:
        self.playing = False
        if delta > 0 and not self.cursor.at_end:
            self._show(self.cursor.step())
        elif delta < 0 and self.pos > 0:
            self._goto(self.pos - 1)
        self._refresh_header()

    def action_speed(self, delta: int) -> None:
        k = SPEEDS.index(self.speed) + delta
        self.speed = SPEEDS[max(0, min(k, len(SPEEDS) - 1))]
        self._wake.set()
        self._refresh_position()

    def _finding_marks(self) -> list[int] | None:
        """Where findings open (recorded and, once the re-run is done, re-run); None while
        not even the recorded ones are read."""
        if self._recorded_marks is None:
            return None
        return sorted(set(self._recorded_marks) | set(self._rerun_marks or ()))

    async def on_event(self, event: events.Event) -> None:
        """A key dismisses the toasts shown before it (one it raises itself stays)."""
        if isinstance(event, events.Key) and len(self._notifications):
            self.clear_notifications()
        await super().on_event(event)

    TOAST_S = 3.0
    """Seconds a toast stays at most (the next key takes it away sooner)."""

    def action_finding(self, direction: int) -> None:
        marks = self._finding_marks()
        if marks is None:
            self.notify("still reading the recording for findings", timeout=self.TOAST_S)
            return
        if direction > 0:
            # the next tick after the one shown where one opens; at the first tick, an
            # opening there counts too, unless n already stopped there
            after = self.pos if self.pos > 0 or self._landed == 0 else -1
            k = bisect.bisect_right(marks, after)
            target = marks[k] if k < len(marks) else None
        else:
            k = bisect.bisect_left(marks, self.pos) - 1
            target = marks[k] if k >= 0 else None
        if target is None:
            self.say(self._no_finding(direction, marks))
            return
        self.playing = False
        step = self._goto(target)
        self._landed = step.index
        # the findings that opened there (today's checks, and the live engine's as recorded):
        # the first gets the findings list's cursor, so that enter opens it
        opened = {f.ident for f in step.update.opened}
        with contextlib.suppress(SessionError):
            recorded = self.recording.update_at(step.index)
            opened |= {f.ident for f in recorded.opened} if recorded is not None else set()
        self._select = opened

    def _no_finding(self, direction: int, marks: list[int]) -> str:
        """What n / N say where no finding opens further on (or earlier): on the findings
        panel's border, where it stays (a toast went under the status bar in 2 s)."""
        where = "after" if direction > 0 else "before"
        text = f"{'n' if direction > 0 else 'N'}: no finding opens {where} tick #{self.pos + 1}"
        if marks:
            k = marks[-1] if direction > 0 else marks[0]
            text += f" (the {'last' if direction > 0 else 'first'} opens at #{k + 1})"
        if self._rerun is not None and self._rerun_marks is None:
            text += "; today's checks are still re-running over the recording"
        return text

    GRAPH_SPAN = 300
    """Ticks drawn at full resolution on each side of the one shown in the graph view."""
    OVERVIEW_POINTS = 400
    """Ticks spread over the whole recording that give the graphs its shape (a chart is at
    most a few hundred braille dots wide)."""

    def graph_source(self) -> tuple[list[Point], float | None, list[Finding]]:
        """The whole recording (OVERVIEW_POINTS ticks spread over it) with every tick of the
        GRAPH_SPAN on each side of the one shown, the cursor at it, and the onsets of the
        findings the live engine opened anywhere in it (the overview and the onsets once
        the background reads are done: ~1 and ~2 s for a day)."""
        rec, n = self.recording, len(self.recording)
        if n == 0:
            return [], None, []
        pos = max(self.pos, 0)
        lo, hi = max(0, pos - self.GRAPH_SPAN), min(n, pos + self.GRAPH_SPAN + 1)
        if len(self._near) > 4 * (2 * self.GRAPH_SPAN + 1):  # (far from the cursor now)
            self._near = {i: p for i, p in self._near.items() if lo <= i < hi}
        near: dict[int, Point] = {}
        for i in range(lo, hi):
            if i not in self._near:
                try:
                    self._near[i] = points(rec.entry(i).tick)
                except SessionError:
                    self._near[i] = None  # a damaged stretch: a gap in the lines
            if (p := self._near[i]) is not None:
                near[i] = p
        far = self._overview or {}  # read in the background when the replay opened
        merged = {**{i: p for i, p in far.items() if not lo <= i < hi}, **near}
        history = [merged[i] for i in sorted(merged)]
        return history, rec.tick_at(pos).wall, list(self._onsets)

    def _overview_read(self, overview: dict[int, Point]) -> None:
        """The background read of the whole recording's points is done: an open graph
        view redraws with them."""
        self._overview = overview
        view = sys.modules.get("replmon.tui.graph_view")  # (not imported: no view open)
        if view is not None and isinstance(self.screen, view.GraphScreen):
            self.screen.redraw()

    def action_graphs(self) -> None:
        from replmon.tui.graph_view import GraphScreen  # (textual-plotext: on the first G)

        self.push_screen(GraphScreen(self.graph_source, live=False, move=self.action_finding))

    PROCESSLIST_BACK = 600
    """Ticks before the one shown searched for a stored processlist."""
    PROCESSLIST_AHEAD = 5
    """Ticks after it: a live session captures the lists in the tick after a finding
    opens, and n / N stop on the opening tick."""

    def processlist_source(self) -> tuple[Snapshots, float | None]:
        """Each node's stored processlist nearest the tick shown (the first after it within
        PROCESSLIST_AHEAD ticks, else the last before it), and that tick's wall time."""
        rec, n = self.recording, len(self.recording)
        out: Snapshots = {"primary": None, "replica": None}
        if n == 0:
            return out, None
        pos = max(self.pos, 0)
        order = [*range(pos, min(n, pos + self.PROCESSLIST_AHEAD + 1)),
                 *range(pos - 1, max(-1, pos - self.PROCESSLIST_BACK - 1), -1)]
        for i in order:
            try:
                tick = rec.tick_at(i)
            except SessionError:
                continue
            for node in tick.nodes:
                if out[node.given_role] is None:
                    out[node.given_role] = Snapshot.of(node, tick.wall)
            if all(out.values()):
                break
        return out, rec.tick_at(pos).wall

    def action_jump(self) -> None:
        def done(text: str | None) -> None:
            if not text or not len(self.recording):
                return
            first = self.recording.tick_at(0).wall
            current = self.recording.tick_at(max(self.pos, 0)).wall
            target = parse_jump(text, first, current, len(self.recording))
            if target is None:
                self.notify(f"cannot read {text!r}: try 03:12:00, +90s or #1234",
                            severity="error", timeout=self.TOAST_S)
                return
            kind, value = target
            self.playing = False
            self._goto(int(value) if kind == "index" else self.recording.seek(value))

        self.push_screen(JumpScreen(), done)

    @property
    def finding_list(self) -> list[Finding]:
        return self.findings
