"""``replmon serve`` in process, on the lab: pairs pointed at a hung server do not make
the lab pair's ticks late; every pair gets its own recording in record_dir; the plain
lines name each pair once per tick; a pair's recording cuts (``replmon cut``)."""

from __future__ import annotations

import asyncio
import io
import socket
from pathlib import Path
from typing import Any

import pytest
from cdp import blank_charts, html_in_chromium

from replmon.fleet.serve import run_serve
from replmon.lab import Lab
from replmon.model.base import SourceState
from replmon.output.html_report import html_report
from replmon.session.cut import cut
from replmon.session.recording import open_recording
from replmon.settings import build_fleet

pytestmark = pytest.mark.live

HUNG_PAIRS = 3


def node(lab: Lab, role: str) -> dict[str, object]:
    n = lab.settings()[role]
    return {"host": "127.0.0.1", "name": n["name"], "mysql": dict(n["mysql"]),
            "redis": dict(n["redis"]), "ssh": {"mode": "off"}}


def cut_the_middle(path: Path, ticks: list[Any]) -> None:
    """``replmon cut`` of a serve recording: its middle, after the warm-up (here the
    ticks from the start), is a recording of its own with the same ticks."""
    out = path.with_name("middle.rmrec")
    with open_recording(path) as rec:
        done = cut(rec, 2, len(rec) - 2, out)
    with open_recording(out) as piece:
        assert piece.problems == [] and list(piece.ticks()) == ticks[:-1]
        assert piece.meta.window == (ticks[2].wall, ticks[-2].wall) == done.window
        assert piece.meta.nodes == rec.meta.nodes and piece.meta.cut_from == path.name


async def test_hung_pairs_never_delay_the_lab_pair_and_each_pair_records(
    lab: Lab, tmp_path: Path,
) -> None:
    # A server that accepts TCP and never says a word: a hung mysqld/redis.
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(256)
    port = hole.getsockname()[1]
    hung = {"host": "127.0.0.1", "mysql": {"port": port, "user": "x"}, "redis": {"port": port},
            "ssh": {"mode": "off"}}
    fleet = build_fleet({
        "interval": 0.5, "record_dir": str(tmp_path / "rec"),
        "pair": [{"name": "lab", "primary": node(lab, "primary"),
                  "replica": node(lab, "replica")},
                 *({"name": f"hung{i}", "primary": hung, "replica": hung}
                   for i in range(HUNG_PAIRS))],
    }, listen="127.0.0.1:0")
    out = io.StringIO()
    stop = asyncio.Event()
    ready = asyncio.Event()
    task = asyncio.create_task(run_serve(fleet, plain=True, stop=stop, out=out, ready=ready))
    await asyncio.wait_for(ready.wait(), 10)

    def lines_of(name: str) -> list[str]:
        return [ln for ln in out.getvalue().splitlines() if ln.split()[1] == name]

    # 8 ticks of every pair (4 s at 0.5 s; a loaded machine may take longer to connect
    # the first time: each tick's start lag is judged from its recording below)
    names = ["lab", *(f"hung{i}" for i in range(HUNG_PAIRS))]
    for _ in range(60):  # at most 15 s
        if all(len(lines_of(n)) >= 8 for n in names):
            break
        await asyncio.sleep(0.25)
    stop.set()
    assert await asyncio.wait_for(task, 20) == 0
    hole.close()

    lines = out.getvalue().splitlines()
    lab_lines = lines_of("lab")
    assert len(lab_lines) >= 8, lines
    assert all(" OK " in ln for ln in lab_lines), lab_lines
    hung_lines = lines_of("hung0")
    assert hung_lines and "down: primary:mysql" in hung_lines[-1]

    for name in names:
        with open_recording(tmp_path / "rec" / f"{name}.rmrec") as rec:
            ticks = list(rec.ticks())
        assert len(ticks) >= 7 and rec.problems == [], (name, rec.problems)
        if name == "lab":
            cut_the_middle(tmp_path / "rec" / f"{name}.rmrec", ticks)
            assert all(not t.late and t.missed == 0 for t in ticks[1:]), \
                [(t.seq, t.late, t.missed, t.start_lag_ms) for t in ticks]
            assert max(t.start_lag_ms for t in ticks[1:]) < 100
            assert all(t.replica.mysql.status.ok for t in ticks)
        else:
            states = {t.primary.mysql.status.state for t in ticks[2:]}
            assert states <= {SourceState.TIMEOUT, SourceState.UNREACHABLE}, states
    html_of_serve_recordings(tmp_path, lab)


def html_of_serve_recordings(tmp_path: Path, lab: Lab) -> None:
    """``report --html`` of serve's recordings, in a browser: the lab pair's charts
    drawn; the hung pair's page says its servers could not be read."""
    pages = []
    for name in ("lab", "hung0"):
        with open_recording(tmp_path / "rec" / f"{name}.rmrec") as rec:
            pages.append(tmp_path / f"{name}.html")
            pages[-1].write_text(html_report(rec), encoding="utf-8")
    ok, hung = html_in_chromium(pages)
    assert ok.errors == [] and hung.errors == []
    assert ok.drawn == len(ok.boxes) > 0 and blank_charts(ok) == []
    assert "Incidents: none" in ok.text and "Incident 1" in hung.text
    assert lab.monitor_password not in pages[0].read_text()
