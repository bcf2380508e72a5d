"""The check engine: hysteresis, broken checks as findings, settings validation, discovery."""

from __future__ import annotations

import pytest

from replmon.check import Check, Observation, Severity, Thresholds, Window
from replmon.engine import ENGINE_ID, Engine, build_engine, configure
from replmon.errors import ConfigError
from replmon.plugins import LoadFailure, discover
from replmon.testing.synth import tick


class Limits(Thresholds):
    level: float = 1.0


def flag_odd_keys(w: Window, t: Limits) -> list[Observation]:
    """Fires while the tick's seq is in the test's 'bad' set (encoded in the replica name)."""
    bad = w.last.replica.name.split(",")
    if str(w.last.seq) not in bad:
        return []
    sev = Severity.CRITICAL if w.last.seq >= 10 else Severity.WARNING
    return [Observation(node="replica", severity=sev, title=f"bad at {w.last.seq}",
                        numbers={"level": t.level})]


CHECK = Check(id="fake", title="Fake", needs=(), thresholds=Limits, evaluate=flag_odd_keys)


def feed(bad: set[int], n: int, interval: float = 1.0, **limits: object) -> Engine:
    from replmon.testing.synth import node

    eng = Engine([(CHECK, Limits.model_validate(limits))])
    names = ",".join(str(s) for s in sorted(bad)) or "none"
    for seq in range(n):
        eng.feed(tick(seq, replica=node("replica", name=names), interval=interval))
    return eng


def test_opens_after_n_consecutive_ticks_with_since_at_the_first() -> None:
    eng = feed({2, 3, 4}, 5)
    (f,) = eng.open_findings
    assert (f.since_seq, f.last_seq, f.check, f.node) == (2, 4, "fake", "replica")


def test_a_blip_shorter_than_open_after_never_opens() -> None:
    eng = feed({1, 2, 4, 5, 7}, 9)
    assert eng.open_findings == []
    assert list(eng.history) == []


def test_closes_only_after_m_clear_ticks_and_keeps_worst() -> None:
    eng = feed({8, 9, 10, 11}, 13, close_after=2)
    assert len(eng.open_findings) == 1  # cleared 12 only once
    eng = feed({8, 9, 10, 11}, 14, close_after=2)
    assert eng.open_findings == []
    (closed,) = eng.history
    assert closed.state == "closed" and closed.closed_seq == 13
    assert closed.worst is Severity.CRITICAL and closed.since_seq == 8


def test_a_gap_shorter_than_close_after_keeps_the_finding_open() -> None:
    eng = feed({1, 2, 3, 5, 6}, 7)
    (f,) = eng.open_findings
    assert f.since_seq == 1


@pytest.mark.parametrize(("interval", "short", "enough"), [
    (0.2, 14, 15),  # 2.8 s of a condition is a blip, 3 s is a state
    (1.0, 2, 3),    # today's behaviour at the default interval: 3 ticks
    (5.0, 1, 2),    # one 5 s sample is not a state: open_min_samples=2
])
def test_open_after_is_seconds_at_any_interval(interval: float, short: int,
                                               enough: int) -> None:
    start = 10
    eng = feed(set(range(start, start + short)), start + short + 1, interval)
    assert eng.open_findings == [] and list(eng.history) == []
    eng = feed(set(range(start, start + enough)), start + enough, interval)
    (f,) = eng.open_findings
    assert (f.since_seq, f.last_seq) == (start, start + enough - 1)


@pytest.mark.parametrize("interval", [0.2, 1.0, 5.0])
def test_close_after_is_seconds_at_any_interval(interval: float) -> None:
    bad = set(range(0, round(10 / interval)))  # 10 s of the condition
    clear_for = {0.2: 15, 1.0: 3, 5.0: 1}[interval]  # ticks that cover 3 s
    eng = feed(bad, len(bad) + clear_for - 1, interval)
    assert len(eng.open_findings) == 1
    eng = feed(bad, len(bad) + clear_for, interval)
    assert eng.open_findings == [] and len(eng.history) == 1


def test_a_finding_that_keeps_opening_is_one_flapping_finding_until_it_settles() -> None:
    from replmon.engine import FLAP_OPENS, FLAP_SETTLE_S

    # 4 s on, 6 s off, four times: opens at 2-4, 12-14, 22-24 (flapping from here)
    bad = {s for k in range(4) for s in range(10 * k, 10 * k + 4)}
    eng = feed(bad, 60)
    closed = list(eng.history)
    assert [f.flaps for f in closed] == [0] * (FLAP_OPENS - 1)  # the first two closed
    (f,) = eng.open_findings  # the third is flapping: open through the gaps
    assert f.flaps == FLAP_OPENS and f.since_seq == 20 and f.flap_span_s == 20.0
    assert f.last_seq == 33  # it held again at 30-33 without a new open
    settle = int(FLAP_SETTLE_S)
    eng = feed(bad, 34 + settle - 2)
    assert len(eng.open_findings) == 1  # clear for less than FLAP_SETTLE_S
    eng = feed(bad, 34 + settle)
    assert eng.open_findings == [] and eng.history[-1].flaps == FLAP_OPENS


@pytest.mark.check_raises
def test_a_check_that_raises_becomes_a_finding_and_others_still_run() -> None:
    def boom(w: Window, t: Thresholds) -> list[Observation]:
        raise ZeroDivisionError("division by zero")

    bad = Check(id="boom", title="Boom", needs=(), thresholds=Thresholds, evaluate=boom)
    eng = Engine([(bad, Thresholds()), (CHECK, Limits(open_after=0, open_min_samples=1))])
    from replmon.testing.synth import node

    upd = eng.feed(tick(0, replica=node("replica", name="0")))
    ids = {(f.check, f.key) for f in upd.open}
    assert ids == {(ENGINE_ID, "boom"), ("fake", "")}
    (e,) = [f for f in upd.open if f.check == ENGINE_ID]
    assert "ZeroDivisionError" in e.title and e.severity is Severity.WARNING


def test_a_check_that_failed_to_load_is_reported_every_tick() -> None:
    eng = Engine([], [LoadFailure("broken", "import failed: SyntaxError: x")])
    upd = eng.feed(tick(0))
    (f,) = upd.open
    assert f.check == ENGINE_ID and "broken did not load" in f.title


def test_settings_validate_ids_and_keys() -> None:
    with pytest.raises(ConfigError, match="unknown check"):
        configure([CHECK], {"nope": {}})
    with pytest.raises(ConfigError, match="checks.fake.levle"):
        configure([CHECK], {"fake": {"levle": 2}})
    ((_, th),) = configure([CHECK], {"fake": {"level": 2, "open_after": 1}})
    assert isinstance(th, Limits) and th.level == 2 and th.open_after == 1


def test_disabled_check_does_not_run() -> None:
    eng = Engine(configure([CHECK], {"fake": {"enabled": False, "open_after": 1}}))
    from replmon.testing.synth import node

    assert eng.feed(tick(0, replica=node("replica", name="0"))).open == []


def test_every_builtin_check_loads_with_a_doc_and_default_thresholds() -> None:
    checks, failures = discover(entry_points=False)
    assert failures == []
    ids = {c.id for c in checks}
    assert {"stmt_vs_rows", "source_health"} <= ids
    for c in checks:
        assert len(c.doc) > 200, f"{c.id}: the module docstring is the user documentation"
        c.thresholds()  # every threshold has a default
    eng = build_engine(entry_points=False)
    assert eng.feed(tick(0)).open == []  # an empty healthy tick opens nothing


def test_checks_id_covers_the_checks_private_helper_modules() -> None:
    """A helper module of checks/ (``_`` first: the loader skips it, no CHECK) holds code
    of a check's observations, so an edit to it must change ``checks_id``: a recording's
    stored observations stand in for a re-run only while that id matches."""
    from pathlib import Path

    import replmon.checks  # type: ignore[import-not-found,unused-ignore]

    from replmon.engine import _observing_sources

    folder = Path(replmon.checks.__file__).parent
    helpers = {str(p) for p in folder.glob("_*.py") if p.name != "__init__.py"}
    assert str(folder / "_mysql_replication_advice.py") in helpers
    assert helpers <= set(_observing_sources())
    checks, _ = discover(entry_points=False)
    assert not {c.id for c in checks} & {Path(h).stem for h in helpers}  # none is a check


def test_third_party_checks_come_from_the_entry_point_group(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys
    from pathlib import Path

    root = Path(str(tmp_path))
    (root / "acme_checks.py").write_text(
        '"""Acme: a third-party check."""\n'
        "from replmon.check import Check, Thresholds\n"
        "CHECK = Check(id='acme', title='Acme', needs=(), thresholds=Thresholds,\n"
        "              evaluate=lambda w, t: [])\n")
    (root / "acme_broken.py").write_text("raise ImportError('acme needs numpy 9')\n")
    dist = root / "acme_checks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[replmon.checks]\nacme = acme_checks\nbroken = acme_broken\n")
    monkeypatch.setattr(sys, "path", [str(root), *sys.path])
    checks, failures = discover()
    assert "acme" in {c.id for c in checks}
    assert [(f.name, "numpy 9" in f.error) for f in failures] == [("broken", True)]


def test_series_cache_changes_nothing_but_speed() -> None:
    """Every check observes the same with the engine's SeriesCache as without it, over
    real lab ticks looped into a longer session (and after seq restarts: a new feed)."""
    from pathlib import Path

    from replmon.model.tick import Tick
    from replmon.testing.real_ticks import loop_ticks
    from replmon.windows import EngineWindow, ReadOnlyList, SeriesCache

    path = Path(__file__).parent.parent / "fixtures" / "ticks" / "lab_pair.jsonl"
    real = [Tick.model_validate_json(line) for line in path.read_text().splitlines()]
    ticks = list(loop_ticks([t.model_dump(mode="json") for t in real], 90, rates=True))
    checks, _ = discover(entry_points=False)
    configured = configure(checks)
    cache = SeriesCache()
    for feed in (ticks, ticks[:30]):  # the second feed starts at seq 0 again
        cache.clear()
        for i in range(len(feed)):
            win = feed[max(0, i - 59): i + 1]
            for c, th in configured:  # windows of different lengths share the cache
                for w in (win, win[-int(c.window):]):
                    kept = EngineWindow(ReadOnlyList(w), cache)
                    assert c.evaluate(kept, th) == c.evaluate(Window(w), th), c.id
            cache.prune(feed[i].seq)
