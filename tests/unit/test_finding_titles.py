"""One rule for every check's title (#41): while its condition holds, a finding's title is
the one of the tick shown (the engine takes each tick's); once the condition no longer
holds, the numbers in it are of the last tick it held, and its headline (the screen, check,
report) says so: "(as of 16:13:02, clear since 16:13:03)"."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.engine import build_engine
from replmon.session.recording import open_recording
from replmon.units import tick_clock

SESSIONS = Path(__file__).parents[2] / "sample_sessions"


@pytest.mark.parametrize(("name", "heals"), [
    ("replica_lag_growing", False),  # the lag grows by the second: a new title every tick
    ("redis_link_down_full_resync", True),  # findings clear and close
])
def test_a_title_is_of_the_tick_shown_or_says_as_of_when(name: str, heals: bool) -> None:
    titles: dict[tuple[str, str, str], set[str]] = {}
    cleared = closed = 0
    with open_recording(SESSIONS / f"{name}.rmrec") as rec:
        engine = build_engine(rec.meta.checks)
        for tick in rec:
            upd = engine.feed(tick)
            seen = {(c, o.name or o.node, o.key): o.title for c, o in upd.seen}
            for f in upd.open:
                now = seen.get((f.check, f.name or f.node, f.key))
                if now is not None:  # holds: this tick's title, nothing added
                    assert f.last_wall == tick.wall and f.clear_wall is None
                    assert f.title == now and f.headline == now
                    titles.setdefault(f.ident, set()).add(f.title)
                else:  # no longer holds: the headline says when its numbers are from
                    assert f.last_wall is not None and f.clear_wall is not None
                    assert f.last_wall < f.clear_wall <= tick.wall
                    assert f"(as of {tick_clock(f.last_wall)}, clear since " \
                        f"{tick_clock(f.clear_wall)})" in f.headline
                    cleared += 1
            for f in upd.closed:
                assert f.closed_wall == tick.wall and "(as of " in f.headline
                closed += 1
    if heals:
        assert cleared and closed, (cleared, closed)
    else:  # the values changed while open, and the titles followed them
        assert max(len(t) for t in titles.values()) > 5, titles
