"""``Rerun.changes`` (the ticks where findings may change; a run of steady ticks applied
once, at its end) gives, at every tick it gives, the Update that applying every tick
gives there, and leaves the engine as applying every tick leaves it: on a recording
whose DRBD peer flaps and stays down across chunks (warning, then critical), with the
recorded thresholds (stored observations), with other ones (drbd_peer restated), and
observing every tick again; and ``report`` made from the summary frames with it is the
report made tick by tick, page included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sessiondata import LIVE_TICKS, SHARES_LIVE, dump

import replmon.output.report as report_module
from replmon.output.html_report import html_report
from replmon.session import open_recording
from replmon.session.rerun import Rerun

TICKS = LIVE_TICKS
"""``live``'s length (sessiondata.LIVE_TICKS: 25 chunks of 30, stored observations usable
in the last 15, the DRBD peer down from tick 540 to 700 inside them: the steady stretch
``changes`` leaves out)."""

SETTINGS: dict[str, dict[str, dict[str, Any]] | None] = {
    "recorded": None,
    "drbd_peer restated": {"drbd_peer": {"disconnected_critical_s": 20.0}},
    "pair_lag observed again": {"pair_lag": {"lag_after": "2s"}},
}


@pytest.fixture(scope="module")
def live(flap_live: Path) -> Path:
    """conftest's ``flap_live``, test_stored_observations' ``live`` too."""
    return flap_live


def _both(path: Path, settings: dict[str, Any] | None, stored: bool,
          every_tick: tuple[list[tuple[int, Any]], list[Any]] | None = None
          ) -> tuple[list[tuple[int, Any]], list[tuple[int, Any]], list[Any]]:
    """(every tick's (index, Update dump), ``changes``' (index, Update dump), the two
    engines' open findings and history at the end). ``every_tick``: the first and the
    first engine's end, made already (conftest's ``live_observed``)."""
    with open_recording(path) as rec:
        if every_tick is None:
            every = Rerun(rec, settings, entry_points=False, stored=stored)
            full = [(i, dump(u)) for i, u in every.indexed()]
            ends = [[f.model_dump() for f in every.engine.open_findings],
                    [f.model_dump() for f in every.engine.history]]
        else:
            full, ends = every_tick[0], list(every_tick[1])
        sparse = Rerun(rec, settings, entry_points=False, stored=stored)
        given = [(i, dump(u)) for i, u in sparse.changes()]
        ends += [[f.model_dump() for f in sparse.engine.open_findings],
                 [f.model_dump() for f in sparse.engine.history]]
        assert sparse.ticks_read == len(full)
    return full, given, ends


pytestmark = SHARES_LIVE  # with test_stored_observations': one worker records ``live``

CASES = [(which, True, 3) for which in SETTINGS] + [
    ("recorded", stored, flap) for stored in (True, False) for flap in (3, 10**9)
    if (stored, flap) != (True, 3)]
"""Each setting from the stored observations (what a re-check with them changed reads:
the recorded ones, drbd_peer restated, pair_lag observed again), with flap detection
(the engine's default); on the recorded thresholds also observing every tick again
(~14 s of CPU a case: the other settings' observed-again runs differ only in the
thresholds, not in what ``changes`` reads) and without flap detection (findings open
and close instead of staying open flapping)."""


@pytest.mark.parametrize(("which", "stored", "flap_opens"), CASES, ids=[
    f"{'stored' if s else 'observed-again'}-{w}-{'flap' if f == 3 else 'no-flap'}-detection"
    for w, s, f in CASES])
def test_changes_are_the_updates_of_every_tick(
        live: Path, live_observed: tuple[list[tuple[int, Any]], list[Any]], which: str,
        stored: bool, flap_opens: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import replmon.engine

    monkeypatch.setattr(replmon.engine, "FLAP_OPENS", flap_opens)
    # observed again without flap detection, every tick: test_stored_observations' too
    made = live_observed if (which, stored, flap_opens) == ("recorded", False, 10**9) else None
    full, given, ends = _both(live, SETTINGS[which], stored, made)
    at = dict(full)
    assert len(full) == TICKS
    assert all(at[i] == u for i, u in given)  # each Update given is that tick's
    assert [i for i, _ in given] == sorted({i for i, _ in given})
    assert given[-1][0] == full[-1][0]  # the last tick is always given
    assert ends[0] == ends[2] and ends[1] == ends[3]  # the engine ends the same
    # every tick where something opened or closed, or the open findings' severity or
    # wording changed, is given
    wanted = {i for k, (i, u) in enumerate(full)
              if u[3] or u[4] or k == 0 or _said(u) != _said(full[k - 1][1])}
    assert wanted <= {i for i, _ in given}
    assert len(given) < len(full) - 100  # steady ticks are left out (the down stretch)


def _said(u: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    from replmon.model.findings import wording

    return [(f["check"], f["node"], f["key"], f["severity"], wording(f["title"]))
            for f in u[2]]


def test_the_first_tick_of_a_window_is_given(live: Path) -> None:
    with open_recording(live) as rec:
        assert len(rec) == TICKS
        for k in (1, 600, 650, TICKS - 1):
            wall = rec.tick_at(k).wall  # (a whole re-run read each tick's for these four)
            got = [u.wall for _, u in Rerun(rec, entry_points=False).changes(wall - 0.01)]
            assert wall in got


def _report_tick_by_tick(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple[Any, str]:
    with monkeypatch.context() as mp:
        mp.setattr(report_module, "_from_chunks", lambda *a, **k: None)
        with open_recording(path) as rec:
            return report_module.report(rec), html_report(rec)


def test_report_from_the_changes_is_the_report_tick_by_tick(
        live: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replmon.engine

    monkeypatch.setattr(replmon.engine, "FLAP_OPENS", 10**9)  # findings open and close
    calls: list[int] = []
    real = report_module._from_chunks

    def counted(*a: Any, **k: Any) -> Any:
        got = real(*a, **k)
        calls.append(got is not None)
        return got

    with monkeypatch.context() as mp:
        mp.setattr(report_module, "_from_chunks", counted)
        with open_recording(live) as rec:
            fast, page = report_module.report(rec), html_report(rec)
    assert calls == [True, True]  # both took the summary frames' path
    slow, slow_page = _report_tick_by_tick(monkeypatch, live)
    assert fast["ticks"] == TICKS and fast["findings_rerun"] and fast["incidents"]
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)
    assert page == slow_page
