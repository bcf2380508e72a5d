"""TUI benchmark on the lab (run by hand; figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_tui.py [--seconds 600] [--size 160x50] [--view graphs]
    .venv/bin/python bench/bench_tui.py --open [--day-file /tmp/day.rmrec]

Starts the lab and a write load in this process, then the real `replmon` TUI in a
tmux session (a real terminal) pointed at the lab at 1 Hz with all sources, and
samples the TUI process's CPU and RSS every 10 s (``--view graphs`` presses g first:
the graph view open). Targets (#12): the overview <= 6 % of one core, the graph view
<= 12 %, RSS <= 100 MB and flat after the first 5 minutes (slope of RSS over the
second half, MB per minute, ~0).

``--open`` times, in this process on a 160x50 virtual screen (Textual's pilot), how
long each view takes to open after its key (graphs, a drill-down, drift, processlist;
target <= 150 ms) with 300 real lab ticks behind it: from the key to the end of the
first screen refresh that shows the whole view (the frame written to the terminal;
the pilot's press returns later, once the app has been idle a while), and how long the graph view of
a replay of a 24 h recording (86,400 ticks at 1 s, made once from the lab's ticks and
kept in ``--day-file``) takes to open (target <= 1 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from replmon.lab import Lab
from replmon.lab.load import WriteLoad


def config_toml(lab: Lab) -> str:
    lines = ["interval = 1.0"]
    for node in (lab.primary, lab.replica):
        lines += [f"[{node.name}]", f'host = "{node.host}"', f'name = "lab-{node.name}"',
                  f"[{node.name}.mysql]", f"port = {node.mysql_port}",
                  f'user = "{lab.monitor_user}"', 'password_env = "BENCH_MYSQL_PASSWORD"',
                  f"[{node.name}.redis]", f"port = {node.redis_port}",
                  'password_env = "BENCH_REDIS_PASSWORD"']
    return "\n".join(lines) + "\n"


def tmux(server: str, *args: str, check: bool = True,
         env: dict[str, str] | None = None) -> str:
    """``tmux args`` on a tmux server of its own (its socket in the temp dir), its output. A session
    takes its environment from its server's, made when the server started: on the
    default, shared server, a bench's screen would get the first bench's passwords and
    PYTHONPATH (and another user's session this bench's)."""
    sock = Path(tempfile.gettempdir()) / f"{server}.tmux"
    out = subprocess.run(["tmux", "-S", str(sock), "-f", "/dev/null", *args], check=check,
                         env=env, capture_output=True, text=True).stdout
    if args[:1] == ("kill-server",):
        sock.unlink(missing_ok=True)  # (tmux leaves it)
    return out


def start_in_tmux(server: str, size: tuple[str, str], command: str, env: dict[str, str],
                  needle: str) -> psutil.Process:
    """``command`` in a new session (``main``) of a new tmux server ``server``, in a
    terminal of ``size``; its process whose command line holds ``needle``. Stop it with
    ``tmux(server, "kill-server", check=False)``."""
    if shutil.which("tmux") is None:
        sys.exit("needs tmux (apt-get install tmux)")
    tmux(server, "new-session", "-d", "-s", "main", "-x", size[0], "-y", size[1], command,
         env=env)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pane = psutil.Process(int(tmux(server, "list-panes", "-t", "main", "-F",
                                       "#{pane_pid}").split()[0]))
        for proc in [pane, *pane.children(recursive=True)]:
            if needle in " ".join(proc.cmdline()):
                return proc
        time.sleep(0.2)
    raise RuntimeError(f"{needle!r} did not start in tmux server {server}")


def slope_mb_per_min(points: list[tuple[float, float]]) -> float:
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points) or 1.0
    return sum((t - mx) * (v - my) for t, v in points) / var * 60


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--size", default="160x50")
    ap.add_argument("--view", choices=("overview", "graphs"), default="overview")
    ap.add_argument("--open", action="store_true", help="time opening the views instead")
    ap.add_argument("--day-file", default="/tmp/replmon-bench-day.rmrec")
    args = ap.parse_args()
    if args.open:
        import asyncio

        from replmon.session.recording import open_recording

        t0 = time.perf_counter()
        day = day_recording(Path(args.day_file))
        rec = open_recording(day)
        print(f"24 h recording: {len(rec):,} ticks, {day.stat().st_size / 2**20:.0f} MB, "
              f"opened in {(time.perf_counter() - t0) * 1000:.0f} ms (made once)")
        asyncio.run(open_times(lab_ticks(300), rec))
        return
    cols, rows = args.size.split("x")
    replmon = str(Path(sys.executable).parent / "replmon")
    with Lab() as lab, WriteLoad(lab, rate=300), tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(config_toml(lab))
        env = {**os.environ, "BENCH_MYSQL_PASSWORD": lab.monitor_password,
               "BENCH_REDIS_PASSWORD": lab.redis_password, "TERM": "xterm-256color"}
        server = f"replmon-bench-{os.getpid()}"
        try:
            proc = start_in_tmux(server, (cols, rows), f"{replmon} --config {cfg}", env,
                                 "replmon")
            time.sleep(3)
            if args.view == "graphs":
                tmux(server, "send-keys", "-t", "main", "g")
                time.sleep(1)
            t0 = time.monotonic()
            c0 = sum(proc.cpu_times()[:2])
            rss: list[tuple[float, float]] = []
            while time.monotonic() - t0 < args.seconds:
                time.sleep(10)
                rss.append((time.monotonic() - t0, proc.memory_info().rss / 2**20))
            cpu = (sum(proc.cpu_times()[:2]) - c0) / (time.monotonic() - t0) * 100
            screen = tmux(server, "capture-pane", "-p", "-t", "main", check=False)
        finally:
            tmux(server, "kill-server", check=False)
    half = rss[len(rss) // 2:]
    target = 12 if args.view == "graphs" else 6
    print(f"TUI {args.view} at {args.size}, 1 Hz, {args.seconds} s: CPU {cpu:.1f} % of one "
          f"core [target <= {target}]; RSS start {rss[0][1]:.0f} MB, max "
          f"{max(v for _, v in rss):.0f} MB [target <= 100]; RSS slope over the second half "
          f"{slope_mb_per_min(half):+.2f} MB/min")
    print("last screen:\n" + screen)


DAY = 86_400
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ticks" / "lab_pair.jsonl"


def day_recording(path: Path) -> Path:
    """A 24 h recording at 1 s from the lab's real ticks (made once, ~1 min)."""
    from replmon.engine import build_engine
    from replmon.session.format import meta_for
    from replmon.session.recorder import RecordingWriter
    from replmon.testing.real_ticks import loop_ticks

    if path.exists():
        return path
    real = real_ticks()
    engine = build_engine(entry_points=False)
    tmp = path.with_suffix(".part")
    with RecordingWriter(tmp, meta_for(interval=1.0)) as w:
        for t in loop_ticks(real, DAY, rates=True):
            w.write(t, engine.feed(t))
    tmp.rename(path)
    return path


def real_ticks() -> list[Any]:
    """The lab's real ticks (tests/fixtures/ticks/lab_pair.jsonl)."""
    from replmon.model.tick import Tick

    return [Tick.model_validate_json(x) for x in FIXTURE.read_text().splitlines()]


def lab_ticks(n: int) -> list[Any]:
    """``n`` ticks looped from the lab's real ones, rates attached."""
    from replmon.testing.real_ticks import loop_ticks

    return list(loop_ticks(real_ticks(), n, rates=True))


async def open_times(ticks: list[Any], rec: Any) -> None:
    from textual.screen import Screen

    from replmon.engine import build_engine
    from replmon.tui.app import ReplmonApp
    from replmon.tui.feeds import from_list
    from replmon.tui.graph_view import GraphScreen
    from replmon.tui.replay import ReplayApp

    painted: list[tuple[float, type[Screen[Any]]]] = []
    """perf_counter at the end of each screen refresh (a frame written to the terminal)
    that left the screen complete: every refresh of a screen but the graph view's, and
    the graph view's once every chart in view is built."""
    refresh = Screen._compositor_refresh

    def timed_refresh(self: Any) -> None:
        refresh(self)
        if self is self.app.screen and (not isinstance(self, GraphScreen) or self.in_view_built):
            painted.append((time.perf_counter(), type(self)))

    Screen._compositor_refresh = timed_refresh  # type: ignore[method-assign]

    async def timed(pilot: Any, key: str, kind: type[Screen[Any]], focus: str | None = None
                    ) -> tuple[float, float]:
        """(ms from the key to the first frame of the complete view, ms until the pilot's
        press returned: it waits for the app to be idle, ~60 ms more)."""
        if focus:
            pilot.app.query_one(focus).focus()
            await pilot.pause()
        painted.clear()
        t0 = time.perf_counter()
        await pilot.press(key)
        while not isinstance(pilot.app.screen, kind):
            await pilot.pause()
        pressed = (time.perf_counter() - t0) * 1000
        while not (frames := [t for t, screen in painted if issubclass(screen, kind)]):
            await pilot.pause()
        done = (frames[0] - t0) * 1000
        await pilot.press("escape")
        await pilot.pause()
        return done, pressed

    from replmon.tui.processlist import ProcesslistScreen
    from replmon.tui.screens import DetailScreen, DriftScreen

    app = ReplmonApp(from_list(ticks), build_engine(entry_points=False))
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.feed_ended:
            await pilot.pause()
        for name, key, kind, focus in (("graphs", "g", GraphScreen, None),
                                       ("drill-down mysql", "enter", DetailScreen,
                                        "#replica-mysql"),
                                       ("drift", "d", DriftScreen, None),
                                       ("processlist", "w", ProcesslistScreen, None)):
            runs = [await timed(pilot, key, kind, focus) for _ in range(7)]
            done = sorted(r[0] for r in runs)
            pressed = sorted(r[1] for r in runs)
            print(f"open {name:18} key -> view painted: median {done[3]:6.1f} ms, max "
                  f"{done[-1]:6.1f} ms [target <= 150]; the pilot's press returned: "
                  f"median {pressed[3]:.0f} ms")
    replay = ReplayApp(rec, lambda: build_engine(entry_points=False), start_paused=True)
    async with replay.run_test(size=(160, 50)) as pilot:
        t0 = time.perf_counter()
        replay._goto(DAY // 2)
        await pilot.pause()
        ms, _ = await timed(pilot, "G", GraphScreen)
        while replay._overview is None:
            await pilot.pause()
        ready = time.perf_counter() - t0
        again, _ = await timed(pilot, "G", GraphScreen)
        print(f"24 h replay: graphs open at once {ms:.0f} ms (the 10 minutes around the "
              f"cursor); the whole day's points read in the background {ready:.1f} s after "
              f"the replay opened; graphs open with them {again:.0f} ms [target <= 1000]")


if __name__ == "__main__":
    main()
