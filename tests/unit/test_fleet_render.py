"""When a pair's /metrics text is formatted (fleet/state.py): at a tick when a scrape is due
before the pair's next tick, otherwise at the first scrape that asks for it; the page is
the same bytes either way (recorded ticks, every group)."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest

from replmon.engine import build_engine
from replmon.fleet import http
from replmon.fleet import state as pair_state
from replmon.fleet.metrics import exposition, groups_of, render_pair
from replmon.fleet.state import Blocks, PairState, ScrapeClock
from replmon.session.recording import open_recording

ROOT = Path(__file__).resolve().parent.parent.parent
ALL = groups_of(["all"])


class Counted:
    """render_pair, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, s: PairState) -> Blocks:
        self.calls += 1
        return render_pair(s, ALL)


def _ticks(name: str) -> list[tuple[object, object]]:
    with open_recording(ROOT / "sample_sessions" / name) as rec:
        ticks = list(rec.ticks())
    eng = build_engine(entry_points=False)
    return [(t, eng.feed(t)) for t in ticks]


def _page(states: list[PairState]) -> list[str]:
    """The page without the lines that read the clock (ages)."""
    return [x for x in exposition(states).decode().splitlines() if "_age_seconds" not in x]


def _clock(monkeypatch: pytest.MonkeyPatch, *ago: float) -> ScrapeClock:
    """A fresh scrape clock that saw scrapes ``ago`` seconds before now, as serve's."""
    clock = ScrapeClock()
    now = time.monotonic()
    for a in ago:
        clock.seen(now - a)
    monkeypatch.setattr(pair_state, "SCRAPES", clock)
    return clock


@pytest.mark.parametrize("name", ["planned_switchover.rmrec", "replica_sql_stopped.rmrec",
                                  "drbd_peer_disconnected.rmrec"])
def test_ticks_no_scrape_sees_are_not_formatted_and_the_page_is_the_same(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scraped every 60 s with a 1 s interval: the ticks format nothing, each scrape
    formats the pairs that ticked since the last (once), and its page is the page of the
    pair formatted at every tick, through a switchover (node labels swap), a stopped
    thread and a lost DRBD peer."""
    _clock(monkeypatch, 120.0, 60.0, 0.5)  # the next scrape is due in ~59.5 s
    fmt = Counted()
    lazy = PairState("p", 1.0, render=fmt, links=None)
    eager = PairState("p", 1.0)  # formatted here, at every tick, as before
    replay = _ticks(name)
    for i, (t, u) in enumerate(replay):
        lazy.on_tick(t, u)  # type: ignore[arg-type]
        eager.on_tick(t, u)  # type: ignore[arg-type]
        eager.blocks = render_pair(eager, ALL)
        if i % 7 == 3 or i == len(replay) - 1:
            before = fmt.calls
            assert _page([lazy]) == _page([eager])
            assert fmt.calls == before + 1  # formatted by the scrape, once
            assert _page([lazy]) == _page([eager]) and fmt.calls == before + 1
    assert fmt.calls < len(replay) / 5


def test_a_tick_formats_its_text_when_a_scrape_is_due_before_the_next(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A scrape due within the pair's interval: the tick formats the text (off the
    scrape's path) and the scrape only joins it."""
    _clock(monkeypatch, 10.0, 5.5, 1.0)  # every ~4.5 s: the next is due in ~3.5 s
    fmt = Counted()
    s = PairState("p", 5.0, render=fmt)
    (t, u), *_ = _ticks("healthy_steady_load.rmrec")
    s.on_tick(t, u)  # type: ignore[arg-type]
    assert fmt.calls == 1
    exposition([s])
    assert fmt.calls == 1


def test_the_scrape_clock_expects_the_next_scrape_from_the_last_ones() -> None:
    clock = ScrapeClock()
    assert clock.due_within(5.0, 0.0)  # never scraped: every tick formats
    for at in (0.0, 15.0, 30.0):
        clock.seen(at)
    # Scraped every 15 s, ticking every 5 s: one tick in three formats (the last before
    # the scrape at 45 s, with a quarter interval of slack for the ticks' jitter).
    assert [at for at in (31.0, 36.0, 41.0) if clock.due_within(5.0, at)] == [41.0]
    assert [at for at in (34.0, 39.0, 44.0) if clock.due_within(5.0, at)] == [39.0, 44.0]
    assert clock.due_within(5.0, 45.5)  # late: may come any moment
    assert not clock.due_within(5.0, 53.5)  # missed one: the next turn is at 60
    assert clock.due_within(5.0, 30.0 + 4 * 15.0 + 1)  # stopped: every tick formats
    clock.seen(31.0)  # a scrape by hand: the shorter spacing counts
    assert clock.due_within(5.0, 33.0)
    clock.seen(45.0)
    assert clock.due_within(5.0, 47.0)
    clock.seen(60.0)  # two scrapes later it no longer does
    assert not clock.due_within(5.0, 62.0) and clock.due_within(5.0, 69.0)


def test_a_formatting_that_fails_keeps_the_last_text(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture
                                                      ) -> None:
    _clock(monkeypatch, 120.0, 60.0, 0.5)
    replay = _ticks("healthy_steady_load.rmrec")
    fail = False

    def render(s: PairState) -> Blocks:
        if fail:
            raise ValueError("boom")
        return render_pair(s)

    s = PairState("p", 1.0, render=render)
    s.on_tick(*replay[0])  # type: ignore[arg-type]
    _page([s])
    first = s.blocks
    fail = True
    s.on_tick(*replay[1])  # type: ignore[arg-type]
    _page([s])  # the page is written, with the last text, and the error logged
    assert s.blocks is first and "formatting its metrics failed" in caplog.text
    fail = False
    s.on_tick(*replay[2])  # type: ignore[arg-type]
    _page([s])
    assert s.blocks != first


def test_serve_notes_each_scrape(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _clock(monkeypatch)
    monkeypatch.setattr(http, "SCRAPES", clock)
    server = http.Server(http.App([]), "127.0.0.1:0")
    try:
        for _ in range(3):
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics",
                                        timeout=10) as r:
                r.read()
    finally:
        server.close()
    assert clock.last is not None and len(clock.gaps) == 2



def test_a_block_used_again_only_while_its_text_is_the_same() -> None:
    """render_pair keeps each scalar family's block and uses it again while each node's
    label values and value text are the same: 0.0 and -0.0 are equal numbers but not
    the same text, and a switchover swaps the node labels."""
    (t, _), *_ = _ticks("healthy_steady_load.rmrec")

    def with_load(tick: object, v: float, swap: bool = False) -> object:
        p, r = tick.primary, tick.replica  # type: ignore[attr-defined]
        p = p.model_copy(update={"host": p.host.model_copy(update={"load1": v})})
        if swap:
            p = p.model_copy(update={"role": "replica"})
            r = r.model_copy(update={"role": "primary"})
        return tick.model_copy(update={"primary": p, "replica": r})  # type: ignore[attr-defined]

    s = PairState("p", 1.0)
    seen = []
    for v, swap in ((0.0, False), (-0.0, False), (0.0, False), (0.0, True), (2.5, True)):
        s.on_tick(with_load(t, v, swap), None)  # type: ignore[arg-type]
        s.blocks = render_pair(s)
        seen.append(s.blocks["replmon_node_load1"][1].decode().splitlines())
    host = t.primary.name
    assert [x for x in seen[0] if host in x] == [
        f'replmon_node_load1{{host="{host}",node="primary",pair="p"}} 0.0']
    assert f'replmon_node_load1{{host="{host}",node="primary",pair="p"}} -0.0' in seen[1]
    assert seen[2] == seen[0]
    assert f'replmon_node_load1{{host="{host}",node="replica",pair="p"}} 0.0' in seen[3]
    assert f'replmon_node_load1{{host="{host}",node="replica",pair="p"}} 2.5' in seen[4]
