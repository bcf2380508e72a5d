"""Recording benchmark (run by hand; figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_recording.py [--ticks-from FILE.jsonl] [--rerun N]
        [--baseline GITREF] [--week] [--cache DIR [--recheck-only [--identity]]]

1. Real ticks: 60 ticks at 1 Hz from the lab under a write load (or JSON lines of
   ``replmon sample --json``), plus a parsed /proc/drbd fixture on both nodes, so
   all four sources are ok on both nodes.
2. Recorder CPU per tick on those ticks, rates as the collector attached them
   (encode + rate check + zlib + write). Target: <= 1 % of one core at 1 Hz.
3. A 24 h recording: 86,400 ticks looped from the real ones (counters keep
   counting, clocks advance). Bytes per tick; target <= 2 KB.
4. Open + seek + read one tick at 20 random times, clean file and the same file
   cut mid-frame (a kill -9 without end frame). Target <= 200 ms.
5. CPU per tick of decoding and of the checks in one process (--rerun N ticks), then
   the whole re-run as ``replmon check --replay`` does it: observing every tick again
   (what a re-run with other thresholds does, and what format 1 always did), and with
   the live engine's stored observations (format 2, same checks). Targets (#13): the
   stored re-run <= 0.33x of main's re-run of the same ticks; a week (--week, 604,800
   ticks) <= 2.5x of main's day.
6. --baseline GITREF: the same figures from that commit's own bench on the same ticks
   (a git worktree on the same interpreter), and the ratios.
7. --cache DIR keeps the built day (and week) file, named by the ticks and the checks'
   ``checks_id`` and what the summary frames hold (facts.py, series.py), for the next run.
   --recheck-only (with --cache): only ``check --replay`` with other thresholds
   (pair_lag's, disk_saturation's, drbd_peer's severity: restated, one limit of every
   check), ``report`` and ``report
   --html`` on the day (and the page of a 1 h file), with --baseline first that ref's
   code on the same files; --report-only leaves the re-checks out; --identity also
   compares two re-checks with observing every tick again; --week --stretch times a week
   made of the day's frames repeated (``stretch``). A baseline whose
   ``checks_id`` is not the file's (a git worktree: engine.checks_id hashes its sources
   in the order of their full paths) observes every tick again, and says so: to time
   another ref on its own stored observations, run this script with PYTHONPATH=<its
   tree> and another --cache (the day is then built by its code).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from replmon.engine import build_engine
from replmon.model.tick import Tick
from replmon.output.html_report import html_report
from replmon.output.report import report
from replmon.session import RecordingWriter, Rerun, meta_for, open_recording
from replmon.session.rerun import cpus
from replmon.sources.drbd_parse import parse_proc_drbd
from replmon.testing.real_ticks import loop_ticks, with_drbd

ROOT = Path(__file__).resolve().parent.parent
DAY = 86_400


def lab_ticks(count: int) -> list[Tick]:
    import asyncio

    from replmon.config import build_config
    from replmon.factory import build_collector
    from replmon.lab import Lab
    from replmon.lab.load import WriteLoad

    async def run(lab: Lab) -> list[Tick]:
        async with build_collector(build_config(lab.settings(1.0))) as c:
            return [t async for t in c.ticks(count)]

    with Lab() as lab, WriteLoad(lab, rate=300):
        return asyncio.run(run(lab))


def four_sources(ticks: list[Tick]) -> list[Tick]:
    fx = ROOT / "tests" / "fixtures" / "drbd"
    drbd = {"primary": parse_proc_drbd((fx / "seed_844_primary_wfconnection.txt")
                                       .read_text(encoding="utf-8")),
            "replica": parse_proc_drbd((fx / "s1_846_replica_connected.txt").read_text())}
    return list(loop_ticks(with_drbd(ticks, drbd), len(ticks), rates=True))


def recorder_cpu(ticks: list[Tick], tmp: Path) -> tuple[float, float]:
    """CPU of RecordingWriter.write per tick (what the recorder thread spends), ms,
    and bytes per tick, over 600 ticks whose rates came from a RateTracker."""
    path = tmp / "cpu.rmrec"
    seq = list(loop_ticks(ticks, 600, rates=True))
    c0 = time.process_time()
    with RecordingWriter(path, meta_for(interval=1.0)) as w:
        for t in seq:
            w.write(t)
    cpu = (time.process_time() - c0) / len(seq)
    return cpu * 1000, path.stat().st_size / len(seq)


def recorder_cpu_live(ticks: list[Tick], tmp: Path) -> float:
    """As recorder_cpu, each tick written with the live engine's update (its findings and,
    since format 2, its observations), the engine's own time not counted."""
    engine = build_engine()
    seq = [(t, engine.feed(t)) for t in loop_ticks(ticks, 600, rates=True)]
    c0 = time.process_time()
    with RecordingWriter(tmp / "cpu-live.rmrec", meta_for(interval=1.0)) as w:
        for t, upd in seq:
            w.write(t, upd)
    return (time.process_time() - c0) / len(seq) * 1000


def build_file(ticks: list[Tick], path: Path, count: int) -> float:
    """``count`` ticks looped from ``ticks``, written as a live session is: with the
    live engine's update for each."""
    t0 = time.perf_counter()
    engine = build_engine()
    with RecordingWriter(path, meta_for(interval=1.0, note="bench: looped from lab ticks")
                         ) as w:  # rates "auto", as the live recorder: none stored here
        for t in loop_ticks(ticks, count, rates=True):  # rates as the collector has them
            w.write(t, engine.feed(t))
    return time.perf_counter() - t0


def stretch(day: Path, out: Path, times: int) -> float:
    """A ``times``-long file made of ``day``'s frames repeated (a stand-in for a week that
    cannot be built by ``build_file`` in the time at hand: ~3 ms of CPU a tick, 30 min
    for a week on an idle core). Each copy's frames are the day's with their tick index,
    wall (frame headers) and the observations and summary frames' ``first``/``seq0``/
    ``seq`` moved on, and the key frames' back pointers relinked, so a reader sees one
    run of ``times`` x the day's ticks, gap-free: the same frames to read, the same stored
    observations and gauges a chunk, the same chunks to decode. What is not moved: the
    tick records inside the key and tick frames (their own seq and wall are the day's:
    a decoded tick of a later copy says the day's time) and the findings in the summary
    frames' events. Returns the seconds it took."""
    import json as _json

    from replmon.session.facts import pack_facts, unpack_facts
    from replmon.session.format import (
        KEY_PREFIX,
        KIND_END,
        KIND_HEADER,
        KIND_KEY,
        KIND_OBSERVATIONS,
        KIND_SUMMARY,
        MAGIC,
        NO_OFFSET,
        pack_frame,
        pack_observations,
        read_frame,
        unpack_observations,
    )

    t0 = time.perf_counter()
    buf = day.read_bytes()
    frames = []
    pos = len(MAGIC)
    while pos < len(buf):
        fr = read_frame(buf, pos)
        frames.append(fr)
        pos = fr.end
    head = [f for f in frames if f.kind == KIND_HEADER]
    body = [f for f in frames if f.kind not in (KIND_HEADER, KIND_END)]
    with open_recording(day) as rec:
        n = len(rec)
        first, last = rec.tick_at(0), rec.tick_at(n - 1)
    seqs, span = last.seq - first.seq + 1, last.wall - first.wall + first.interval
    prev_key = NO_OFFSET
    with open(out, "wb") as f:
        size = f.write(MAGIC + pack_frame(KIND_HEADER, head[0].payload, head[0].index,
                                          head[0].wall))
        for r in range(times):
            di, ds, dw = r * n, r * seqs, r * span
            for fr in body:
                payload = fr.payload
                if fr.kind == KIND_KEY:
                    payload = KEY_PREFIX.pack(*KEY_PREFIX.unpack_from(payload)[:1], prev_key) \
                        + payload[KEY_PREFIX.size:]
                    prev_key = size
                elif r and fr.kind == KIND_OBSERVATIONS:
                    o = unpack_observations(payload)
                    payload = pack_observations(o.model_copy(update={
                        "first": o.first + di, "seq0": o.seq0 + ds}))
                elif r and fr.kind == KIND_SUMMARY:
                    s = unpack_facts(payload)
                    payload = pack_facts(s.model_copy(update={
                        "first": s.first + di, "seq": [q + ds for q in s.seq]}))
                size += f.write(pack_frame(fr.kind, payload, fr.index + di, fr.wall + dw))
        end = {"ticks": n * times, "closed_wall": time.time(), "reason": "close", "next": None,
               "dropped": 0}
        f.write(pack_frame(KIND_END, _json.dumps(end).encode(), n * times, time.time()))
    return time.perf_counter() - t0


def html_report_s(path: Path) -> tuple[float, float]:
    """Wall seconds of ``replmon report --html`` on ``path`` (the report's pass and the
    page), and the page's size in MB."""
    with open_recording(path) as rec:
        t0 = time.perf_counter()
        page = html_report(rec)
        return time.perf_counter() - t0, len(page.encode()) / 1e6


def cached_file(ticks: list[Tick], tmp: Path, count: int, cache: str | None,
                name: str) -> tuple[Path, float | None]:
    """``build_file`` into ``tmp``, or a copy kept in ``cache`` from an earlier run of
    the same ticks and the same checks (``checks_id`` in the name: a change to the
    checks' code makes a new file, whose stored observations are today's; and a digest
    of what summary frames hold, ``facts.py`` and ``series.py``: a change there makes a new
    file too, whose summary frames are today's). Returns the path and the build's seconds
    (None: taken from the cache)."""
    if not cache:
        path = tmp / f"{name}.rmrec"
        return path, build_file(ticks, path, count)
    import hashlib

    key = hashlib.sha256("".join(t.model_dump_json() for t in ticks).encode()).hexdigest()[:12]
    import replmon.session.recorder as recorder

    session = Path(recorder.__file__).parent  # the code that writes the file
    facts = hashlib.sha256(b"".join((session / f).read_bytes() for f in ("facts.py", "series.py")
                                    if (session / f).exists())).hexdigest()[:8]
    kept = Path(cache) / f"{name}-{count}-{key}-{build_engine().checks_id}-{facts}.rmrec"
    if kept.exists():
        return kept, None
    kept.parent.mkdir(parents=True, exist_ok=True)
    part = kept.with_suffix(".part")
    build_s = build_file(ticks, part, count)
    part.rename(kept)
    return kept, build_s


def rerun_s(path: Path, *, stored: bool) -> tuple[float, int, int]:
    """Wall seconds of ``check --replay``'s re-run, ticks, worker processes."""
    with open_recording(path) as rec:
        run = Rerun(rec, stored=stored)
        t0 = time.perf_counter()
        count = sum(1 for _ in run)
        return time.perf_counter() - t0, count, run.workers


def rerun_digest(path: Path, *, stored: bool,
                 settings: dict[str, dict[str, object]] | None = None) -> str:
    """A digest of every Update of a re-run (seq, each open finding's identity, since,
    severity, title and numbers, what opened and closed), to show that the stored and
    the observed-again re-runs agree (untimed: a second run)."""
    import hashlib

    h = hashlib.sha256()
    with open_recording(path) as rec:
        for u in Rerun(rec, settings, stored=stored):
            h.update(repr((u.seq, [(f.ident, f.since_seq, int(f.severity), f.title,
                                    sorted(f.numbers.items())) for f in u.open],
                           [f.ident for f in u.opened], [f.ident for f in u.closed])).encode())
    return h.hexdigest()[:16]


ONE_CHECK: dict[str, dict[str, object]] = {"pair_lag": {"lag_after": "5s"},
                                          "disk_saturation": {"iowait_pct": 25.0},
                                          "drbd_peer": {"disconnected_critical_s": 5.0}}


def other_thresholds(which: str) -> dict[str, dict[str, object]]:
    """[checks.*] for a re-check: "pair_lag", "disk_saturation" or "drbd_peer" (one check's
    limit: one that names what it reads, one that reads whole ticks, one loud all day
    that restates its stored observations), or "all" (a limit of every
    check that has one, 10 % up: every check observed again)."""
    if which != "all":
        return {which: ONE_CHECK[which]}
    out: dict[str, dict[str, object]] = {}
    hysteresis = {"enabled", "open_after", "open_min_samples", "close_after"}
    for c, th in build_engine().checks:
        for name, value in th.model_dump().items():
            if name not in hysteresis and type(value) in (int, float) and value:
                out[c.id] = {name: value + 1 if type(value) is int else value * 1.1}
                break
    return out


def recheck(path: Path, hour: Path | None = None, rechecks: bool = True) -> None:
    """``check --replay`` with other thresholds (one check's, every check's; not with
    ``rechecks`` False), ``report`` and ``report --html``, timed on ``path`` (and the
    page's size for ``hour`` too); also run by ``--baseline`` on the same files with that
    ref's code (``--recheck FILE``)."""
    from replmon.output.report import report as build_report

    with open_recording(path) as rec:
        obs = next((o for ci in range(len(rec.chunks))
                    if (o := rec.chunk_observations(ci)[0]) is not None), None)
    if obs is None or obs.checks_id != build_engine().checks_id:
        print("note: this code's checks_id is not the file's (engine.checks_id hashes its "
              "sources in the order of their full paths: a tree laid out otherwise, as "
              "--baseline's, differs): every tick is observed again", flush=True)
    for which in ("pair_lag", "disk_saturation", "drbd_peer", "all") if rechecks else ():
        settings = other_thresholds(which)
        with open_recording(path) as rec:
            t0, c0 = time.perf_counter(), time.process_time()
            run = Rerun(rec, {**rec.meta.checks, **settings})
            # what ``check --replay`` reads: the ticks where findings may change (since
            # 2026-12-04; every tick's Update before)
            changes = getattr(run, "changes", None)
            count = sum(1 for _ in (changes() if changes is not None else run))
            print(f"re-check with other thresholds ({which}: {len(settings)} checks changed; "
                  f"{count} updates, {run.workers} workers): {time.perf_counter() - t0:.1f} s"
                  f" ({time.process_time() - c0:.1f} s CPU here)", flush=True)
    with open_recording(path) as rec:
        t0, c0 = time.perf_counter(), time.process_time()
        build_report(rec)
        print(f"report: {time.perf_counter() - t0:.1f} s ({time.process_time() - c0:.1f} s "
              "CPU here)", flush=True)
    c0 = time.process_time()
    html_s, html_mb = html_report_s(path)
    print(f"report --html: {html_s:.1f} s ({time.process_time() - c0:.1f} s CPU here), page "
          f"{html_mb:.2f} MB", flush=True)
    if hour is not None:
        html_s, html_mb = html_report_s(hour)
        print(f"report --html of a 1 h file: {html_s:.1f} s, page {html_mb:.2f} MB "
              "(target <= 2 MB)", flush=True)


def recheck_baseline(ref: str, path: Path, hour: Path | None = None,
                     rechecks: bool = True) -> None:
    """``recheck`` on ``path`` with ``ref``'s code (this script, run in its tree)."""
    import subprocess

    more = ([] if hour is None else ["--hour", str(hour)]) + ([] if rechecks
                                                              else ["--report-only"])
    with worktree(ref) as tree:
        env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--recheck",
                              str(path), *more], env=env, check=True, capture_output=True,
                             text=True, cwd=tree).stdout
    for line in out.splitlines():
        print(f"  {ref}: {line}", flush=True)


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """``ref``'s tree in a temporary git worktree, importable as ``replmon`` with
    PYTHONPATH=<tree>: its checks/ is linked in as replmon/checks, or the editable
    install of this tree would hand it today's checks."""
    import subprocess

    with tempfile.TemporaryDirectory() as d:
        tree = Path(d) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref],
                       check=True, capture_output=True)
        try:
            (tree / "replmon" / "checks").symlink_to(tree / "checks")
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False, capture_output=True)


def baseline(ref: str, ticks: list[Tick], tmp: Path, rerun: int,
             source: str | None = None) -> dict[str, float]:
    """Run ``ref``'s own bench on the same ticks (``source``, the JSON lines they came
    from: an older model may refuse fields this one writes); its figures by name."""
    import re
    import subprocess

    with worktree(ref) as tree:
        src = Path(source).resolve() if source else tmp / "ticks.jsonl"
        if not source:
            src.write_text("".join(t.model_dump_json() + "\n" for t in ticks))
        env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
        out = subprocess.run([sys.executable, str(tree / "bench" / "bench_recording.py"),
                              "--ticks-from", str(src), "--rerun", str(rerun)], env=env,
                             check=True, capture_output=True, text=True,
                             cwd=tree).stdout  # its worker processes import from ''/cwd
    for line in out.splitlines():
        print(f"  {ref}: {line}")
    pats = {"recorder_ms": r"recorder CPU per tick: ([\d.]+) ms",
            "bpt": r"24 h file: \d+ ticks, [\d.]+ MB, (\d+) B/tick",
            "rerun_s": r"re-run of all checks over the 24 h file .*: ([\d.]+) s"}
    return {k: float(m.group(1)) for k, pat in pats.items() if (m := re.search(pat, out))}


def seek_ms(path: Path, walls: list[float]) -> list[float]:
    out = []
    for wall in walls:
        t0 = time.perf_counter()
        with open_recording(path) as rec:
            tick = rec.tick_at(rec.seek(wall))
        out.append((time.perf_counter() - t0) * 1000)
        assert tick.wall >= wall - 1e-6
    return out


def main() -> int:
    logging.basicConfig(level=logging.ERROR)  # the cut file's warning is printed below
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks-from", help="JSON lines of Ticks instead of sampling the lab")
    ap.add_argument("--rerun", type=int, default=DAY, help="ticks to re-run the checks over")
    ap.add_argument("--keep", help="copy the 24 h recording here")
    ap.add_argument("--baseline", help="also run this git ref's bench on the same ticks")
    ap.add_argument("--week", action="store_true", help="also build and re-run a week")
    ap.add_argument("--cache", help="keep the built 24 h and week files in this directory "
                    "and take them from there next time (same ticks, same checks)")
    ap.add_argument("--recheck", metavar="FILE", help="only time re-checks with other "
                    "thresholds and report on this recording (what --baseline runs)")
    ap.add_argument("--recheck-only", action="store_true", help="with --cache: the day, "
                    "then re-checks and report (before with --baseline, then after) only")
    ap.add_argument("--report-only", action="store_true", help="with --recheck-only or "
                    "--recheck: time report and report --html only (no re-check)")
    ap.add_argument("--hour", metavar="FILE", help="with --recheck: also the page of this "
                    "1 h recording")
    ap.add_argument("--stretch", action="store_true", help="with --recheck-only --week: the "
                    "week is the day's frames seven times over (stretch(): seconds, not the "
                    "hours build_file takes on a busy 2-core machine)")
    ap.add_argument("--identity", action="store_true", help="with --recheck-only: also "
                    "compare re-checks with observing every tick again (slow)")
    args = ap.parse_args()
    if args.recheck:
        recheck(Path(args.recheck), Path(args.hour) if args.hour else None,
                rechecks=not args.report_only)
        return 0
    if args.ticks_from:
        real = [Tick.model_validate_json(x) for x in Path(args.ticks_from).read_text().splitlines()]
    else:
        print("sampling 60 ticks at 1 Hz from the lab...", file=sys.stderr)
        real = lab_ticks(60)
    ticks = four_sources(real)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.recheck_only:
            day, build_s = cached_file(ticks, tmp, DAY, args.cache, "day")
            if build_s is not None:
                print(f"built {day} in {build_s:.0f} s", flush=True)
            hour, _ = cached_file(ticks, tmp, 3600, args.cache, "hour")
            if args.baseline:
                recheck_baseline(args.baseline, day, hour, rechecks=not args.report_only)
            print(f"this tree ({cpus()} cores), {day}:", flush=True)
            recheck(day, hour, rechecks=not args.report_only)
            if args.identity:
                for which in ("drbd_peer", "all"):
                    other = other_thresholds(which)
                    same = (rerun_digest(day, stored=True, settings=other)
                            == rerun_digest(day, stored=False, settings=other))
                    print(f"re-check ({which}) and observing every tick again give the same "
                          "findings at every tick: " + ("yes" if same else "NO"), flush=True)
            if args.week:
                if args.stretch:
                    week = Path(args.cache) / f"week-stretched-{day.stem}.rmrec"
                    if not week.exists():
                        print(f"stretched {day} to {week} in {stretch(day, week, 7):.0f} s",
                              flush=True)
                else:
                    week, _ = cached_file(ticks, tmp, 7 * DAY, args.cache, "week")
                print(f"this tree, the week {week}:", flush=True)
                recheck(week)
            return 0
        base = (baseline(args.baseline, real, tmp, args.rerun, args.ticks_from)
                if args.baseline else {})
        cpu_ms, short_bpt = recorder_cpu(ticks, tmp)
        print(f"recorder CPU per tick: {cpu_ms:.2f} ms = {cpu_ms / 10:.3f} % of one core at 1 Hz"
              f" ({short_bpt:.0f} B/tick on a 600-tick file)")
        live_ms = recorder_cpu_live(ticks, tmp)
        print(f"recorder CPU per tick with the live engine's updates: {live_ms:.2f} ms")
        day, build_s = cached_file(ticks, tmp, DAY, args.cache, "day")
        size = day.stat().st_size
        print(f"24 h file: {DAY} ticks, {size / 1e6:.1f} MB, {size / DAY:.0f} B/tick "
              + (f"(built in {build_s:.0f} s" if build_s is not None else f"(cached {day}")
              + ", the live engine's updates included)")
        with open_recording(day) as rec:
            w0, w1 = rec.tick_at(0).wall, rec.tick_at(DAY - 1).wall
        rnd = random.Random(1)
        walls = [rnd.uniform(w0, w1) for _ in range(20)]
        ms = seek_ms(day, walls)
        print(f"open + seek + tick_at (clean file): median {statistics.median(ms):.1f} ms, "
              f"max {max(ms):.1f} ms")
        cut = tmp / "cut.rmrec"
        cut.write_bytes(day.read_bytes()[:size - 700])  # no end frame, last frame cut
        ms = seek_ms(cut, walls)
        with open_recording(cut) as rec:
            problems = rec.problems
        print(f"open + seek + tick_at (killed, cut mid-frame): median "
              f"{statistics.median(ms):.1f} ms, max {max(ms):.1f} ms; problems: {problems}")
        with open_recording(day) as rec:
            n = min(args.rerun, len(rec))
            c0 = time.process_time()
            for _t, _ in zip(rec.ticks(), range(n), strict=False):
                pass
            dec_s = time.process_time() - c0
            engine = build_engine()
            c0 = time.process_time()
            for t, _ in zip(rec.ticks(), range(n), strict=False):
                engine.observe(t)
            obs_s = time.process_time() - c0 - dec_s
        print(f"one process, CPU over {n} ticks: decode {dec_s / n * 1e6:.0f} us/tick, "
              f"checks {obs_s / n * 1e6:.0f} us/tick ({len(engine.checks)} checks)")
        again_s, count, workers = rerun_s(day, stored=False)
        print(f"re-run of all checks over the 24 h file, observing every tick ({count} ticks, "
              f"{workers} worker processes on {cpus()} cores): {again_s:.1f} s")
        fast_s, count, workers = rerun_s(day, stored=True)
        print(f"re-run of all checks over the 24 h file, stored observations ({count} ticks, "
              f"{workers} worker processes): {fast_s:.1f} s")
        with open_recording(day) as rec:
            t0 = time.perf_counter()
            report(rec)
            print(f"replmon report of the 24 h file (decodes every tick for its peaks; the "
                  f"checks' observations stored): {time.perf_counter() - t0:.1f} s")
        html_s, html_mb = html_report_s(day)
        print(f"replmon report --html of the 24 h file (the same pass, with the charts' "
              f"points): {html_s:.1f} s, page {html_mb:.2f} MB")
        hour = tmp / "hour.rmrec"
        build_file(ticks, hour, 3600)
        html_s, html_mb = html_report_s(hour)
        print(f"replmon report --html of a 1 h file: {html_s:.1f} s, page {html_mb:.2f} MB "
              "(target <= 2 MB)")
        same = rerun_digest(day, stored=True) == rerun_digest(day, stored=False)
        print("stored and observed-again re-runs give the same findings at every tick: "
              + ("yes" if same else "NO"))
        if base.get("rerun_s"):
            print(f"ratios to {args.baseline}: re-run {fast_s / base['rerun_s']:.2f}x "
                  f"(target <= 0.33x); observing every tick {again_s / base['rerun_s']:.2f}x; "
                  f"bytes per tick {size / DAY / base.get('bpt', float('nan')):.2f}x; recorder "
                  f"CPU {cpu_ms / base.get('recorder_ms', float('nan')):.2f}x")
        if args.keep:
            shutil.copy(day, args.keep)
        if args.week:
            week, build_s = cached_file(ticks, tmp, 7 * DAY, args.cache, "week")
            print(f"week file: {7 * DAY} ticks, {week.stat().st_size / 1e6:.0f} MB "
                  + (f"(built in {build_s:.0f} s)" if build_s is not None else "(cached)"))
            week_s, count, workers = rerun_s(week, stored=True)
            ref = base.get("rerun_s")
            print(f"re-run of all checks over the week ({count} ticks, {workers} worker "
                  f"processes): {week_s:.1f} s" + (f" = {week_s / ref:.2f}x of {args.baseline}'s "
                                                     "day (target <= 2.5x)" if ref else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
