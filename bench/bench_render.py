"""Timer and byte-for-byte oracle of the /metrics text (``render_pair`` and ``exposition``
in replmon/fleet/metrics.py); run by hand while optimising them.

    .venv/bin/python bench/bench_render.py [--repeat 7] [--pairs 200] [--dump FILE]
    cmp /tmp/render_before.txt FILE     # an optimisation must keep this silent

The ticks are every tick of every ``sample_sessions/*.rmrec``, fed once through a fresh
engine (``build_engine(entry_points=False)``, as tests/unit/test_fleet.py does); the
(tick, update) pairs are kept and replayed into ``PairState.on_tick`` as serve's pipeline
does, for each opt-in variant: the default (no group) and ``groups_of(("all",))``.

Timing (the cyclic GC is collected before and off during each timed pass; best of
``--repeat`` passes, ``time.perf_counter``), in µs per pair-tick:

- ``render_pair``: one pair's per-tick text, once after each tick;
- ``exposition 1``: the page of that one pair, after each tick (includes the scrape-time
  families and replmon's own, which a one-pair page pays in full);
- ``exposition N``: the page of a fleet of ``--pairs`` pairs (each recording's last tick,
  under ``--pairs / 8`` names, one of them needing escapes), divided by N: a scrape's
  cost per pair as serve pays it; ``_live`` of that page alone likewise.

``--dump FILE`` writes, for each variant, the one-pair page after every tick of every
recording (a pair named after the recording, and a second pass under a name that needs
escaping), then the N-pair fleet page, each under a ``### variant what`` line. The
scrape-time ages read the clock: the dump runs with ``time.time`` and
``time.monotonic`` frozen, so two runs of the same code give byte-identical files.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO
from unittest import mock

from replmon.engine import Update, build_engine
from replmon.fleet import metrics
from replmon.fleet.metrics import exposition, groups_of, render_pair
from replmon.fleet.state import PairState
from replmon.model.incidents import Causality, causality
from replmon.model.tick import Tick
from replmon.session import open_recording

ROOT = Path(__file__).resolve().parent.parent
VARIANTS: dict[str, frozenset[str]] = {"default": frozenset(), "all": groups_of(("all",))}
ODD = 'odd "pair"\\\nname'
"""A pair name whose label value needs every escape of the text format."""

Replay = list[tuple[Tick, Update | None]]


def load() -> tuple[dict[str, Replay], Causality]:
    """Every recording's ticks with the engine's update for each (one engine a file)."""
    out: dict[str, Replay] = {}
    links: Causality = {}
    for path in sorted((ROOT / "sample_sessions").glob("*.rmrec")):
        with open_recording(path) as rec:
            ticks = list(rec.ticks())
        eng = build_engine(entry_points=False)
        links = causality(eng.checks)
        out[path.stem] = [(t, eng.feed(t)) for t in ticks]
    return out, links


def fleet(replays: dict[str, Replay], links: Causality, groups: frozenset[str],
          pairs: int) -> list[PairState]:
    """``pairs`` states, each fed its recording's last tick (rendered as serve does)."""
    names = sorted(replays)
    states = []
    for i in range(pairs):
        stem = names[i % len(names)]
        t, u = replays[stem][-1]
        name = ODD if i == 0 else f"{stem}-{i:03d}"
        s = PairState(name, t.interval, render=partial(render_pair, groups=groups), links=links)
        s.on_tick(t, u)
        states.append(s)
    return states


@contextmanager
def frozen_clock() -> Iterator[None]:
    with mock.patch("time.time", return_value=1_800_000_000.25), \
            mock.patch("time.monotonic", return_value=123_456.5):
        yield


def dump(out: IO[str], replays: dict[str, Replay], links: Causality, pairs: int) -> None:
    with frozen_clock():
        for variant, groups in VARIANTS.items():
            for stem, replay in replays.items():
                for name in (stem, ODD):
                    s = PairState(name, replay[0][0].interval,
                                  render=partial(render_pair, groups=groups), links=links)
                    for i, (t, u) in enumerate(replay):
                        s.on_tick(t, u)
                        out.write(f"### {variant} {stem} {name!r} tick {i}\n")
                        out.write(exposition([s]).decode())
            out.write(f"### {variant} fleet of {pairs}\n")
            out.write(exposition(fleet(replays, links, groups, pairs)).decode())


def best(repeat: int, run: Callable[[], dict[str, float]]) -> dict[str, float]:
    """Each figure's minimum over ``repeat`` runs (GC collected before, off during)."""
    got: dict[str, float] = {}
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            one = run()
        finally:
            gc.enable()
        for k, v in one.items():
            got[k] = min(v, got.get(k, v))
    return got


def per_tick(replays: dict[str, Replay], links: Causality,
             groups: frozenset[str]) -> dict[str, float]:
    """µs per pair-tick of render_pair and of the one-pair page, over every recording."""
    clock = time.perf_counter
    render = expo = 0.0
    n = 0
    for stem, replay in replays.items():
        s = PairState(stem, replay[0][0].interval, links=links)  # rendered here, timed
        for t, u in replay:
            s.on_tick(t, u)
            t0 = clock()
            s.blocks = render_pair(s, groups)
            t1 = clock()
            exposition([s])
            t2 = clock()
            render += t1 - t0
            expo += t2 - t1
            n += 1
    return {"render_pair": render / n * 1e6, "exposition 1": expo / n * 1e6}


def scrape(states: list[PairState]) -> dict[str, float]:
    """µs per pair of the fleet page, and of its scrape-time part (``_live``)."""
    clock = time.perf_counter
    t0 = clock()
    exposition(states)
    t1 = clock()
    metrics._live(states, [])
    t2 = clock()
    return {"exposition N": (t1 - t0) / len(states) * 1e6,
            "_live N": (t2 - t1) / len(states) * 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--dump", metavar="FILE", help="write every page (the oracle) and stop")
    args = ap.parse_args()
    replays, links = load()
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as out:
            dump(out, replays, links, args.pairs)
        print(f"wrote {args.dump}")
        return 0
    ticks = sum(map(len, replays.values()))
    print(f"{ticks} ticks from {len(replays)} recordings, best of {args.repeat}, "
          f"µs per pair-tick")
    for variant, groups in VARIANTS.items():
        got = best(args.repeat, partial(per_tick, replays, links, groups))
        states = fleet(replays, links, groups, args.pairs)
        got |= best(args.repeat, partial(scrape, states))
        print(f"{variant:>8}: " + "  ".join(f"{k} {v:7.1f}" for k, v in got.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
