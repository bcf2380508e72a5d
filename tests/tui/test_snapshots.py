"""Screens rendered from a fixed sequence of real lab ticks, compared with the
committed SVG snapshots (pytest-textual-snapshot). Update after an intended
change with `pytest tests/tui --snapshot-update` and look at the new SVGs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from tickdata import lab_ticks, with_replica_mysql_down

from replmon.engine import build_engine
from replmon.session.recording import open_recording
from replmon.tui.app import ReplmonApp
from replmon.tui.feeds import from_list

TICKS = lab_ticks()


def app_for(ticks: list) -> ReplmonApp:  # type: ignore[type-arg]
    last = ticks[-1].wall
    return ReplmonApp(from_list(ticks), build_engine(entry_points=False),
                      clock=lambda: last + 0.4)


async def until_fed(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, ReplmonApp)
    for _ in range(500):
        await pilot.pause()
        if app.feed_ended and app.ticks_shown:
            break
    app.feed_ended = False  # show "live", as during a session
    app._refresh_header()
    await pilot.pause()


@pytest.mark.parametrize("size", [(160, 50), (100, 30), (80, 24)])
def test_healthy_pair(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    assert snap_compare(app_for(TICKS), terminal_size=size, run_before=until_fed)


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
def test_replica_mysql_unreachable(snap_compare: Callable[..., bool],
                                   size: tuple[int, int]) -> None:
    ticks = TICKS[:3] + [with_replica_mysql_down(t, TICKS[3].wall) for t in TICKS[3:]]
    assert snap_compare(app_for(ticks), terminal_size=size, run_before=until_fed)


def then(*keys: str, focus: str | None = None) -> Callable[[Pilot[None]], object]:
    """run_before: feed the ticks, focus ``focus`` (a group of the overview), press keys."""

    async def run(pilot: Pilot[None]) -> None:
        await until_fed(pilot)
        if focus is not None:
            pilot.app.query_one(focus).focus()
        for key in keys:
            await pilot.press(key)
        for _ in range(5):
            await pilot.pause()
        from replmon.tui.graph_view import GraphScreen

        for _ in range(100):  # the graph view's charts in view built
            screen = pilot.app.screen
            if not isinstance(screen, GraphScreen) or screen.in_view_built:
                break
            await pilot.pause()

    return run


VIEWS = {
    "graphs": then("g"),
    "drilldown_mysql": then("enter", focus="#replica-mysql"),
    "drift": then("d"),
    "processlist": then("w"),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
def test_views(snap_compare: Callable[..., bool], view: str, size: tuple[int, int]) -> None:
    """Each view of the on-call screen from the lab's ticks (the processlist from the
    rows the lab's MariaDB printed, tickdata.with_processlists)."""
    from tickdata import with_processlists

    ticks = TICKS[:-1] + [with_processlists(TICKS[-1])] if view == "processlist" else TICKS
    assert snap_compare(app_for(ticks), terminal_size=size, run_before=VIEWS[view])


AUTO_INC = Path(__file__).parents[2] / "sample_sessions" / "auto_increment_updates_miss.rmrec"


def auto_inc_ticks() -> list:  # type: ignore[type-arg]
    """The auto_increment incident (recorded on the lab) up to two ticks after its first
    finding opened, as the live screen would have been fed them."""
    rec = open_recording(AUTO_INC)
    first = rec.recorded_openings()[0]
    return [rec.tick_at(i) for i in range(first + 3)]


@pytest.mark.parametrize("keys", [(), ("d",)], ids=["overview", "drift"])
@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
def test_auto_increment_updates_miss(snap_compare: Callable[..., bool], keys: tuple[str, ...],
                 size: tuple[int, int]) -> None:
    """The auto_increment incident at its first findings: the overview (rows written marked apart,
    the finding named in the header) and the drift view, where auto_increment_increment
    differs."""
    assert snap_compare(app_for(auto_inc_ticks()), terminal_size=size, run_before=then(*keys))
