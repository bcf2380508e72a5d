"""Every shipped session (sample_sessions/*.rmrec), re-checked with today's checks, says
its sizes one way (replmon.units): IEC bytes in every finding's title, cause, next step
and detail number, in the drift view and on the screen's panels and group details; never
an SI byte unit (kB, MB, GB), never a raw byte count over 9,999 without its unit, never
two forms in one text ("1,024 KiB" and "1 MiB", "16.0 GiB", "64MiB" in a title)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from replmon.model.findings import Finding
from replmon.model.tick import Tick
from replmon.session.recording import open_recording
from replmon.session.rerun import Rerun
from replmon.units import (
    BYTE_SETTINGS,
    IEC_UNITS,
    byte_key,
    fmt_bytes,
    fmt_bytes_exact,
    fmt_number,
    fmt_setting,
)

FOLDER = Path(__file__).resolve().parents[2] / "sample_sessions"
SESSIONS = sorted(FOLDER.glob("*.rmrec"))

SI_BYTES = re.compile(r"\d\s?(?:[kKMGTP]B|[kMGT]b/s)(?:/s)?(?![A-Za-z])")
"""648kB, 1.6 MB/s, 12 GB, 100 Mb/s (bits are Mbit/s: a "b" is too easily a "B")."""
IEC = re.compile(r"(?<![\w.,])(-?\d[\d,]*(?:\.\d+)?)( ?)(B|KiB|MiB|GiB|TiB|PiB)(/s)?(?!\w)")
EXACT = re.compile(r"(-?\d[\d.]* (?:KiB|MiB|GiB|TiB|PiB)) \((-?\d[\d,]*) B\)")
"""A short form with its exact count after it: "2.3 MiB (2,445,828 B)"."""
BARE = re.compile(r"(?<![\w.:/#-])\d{5,}(?![\w.:/-])")
"""Digits without separators, five or more: a value dumped raw (replmon's counts have
thousands separators; positions, ports and GTIDs are glued to their file or host)."""
NOT_BYTES = ("_pos", "_offset", "_per_s", "_s", "_ms", "_pct", "_per_min", "_per_connection",
             "transactions_behind")
"""Name endings of numbers that are not bytes (units in the names: Observation.numbers;
latency_bound's statements per second per connection, pair_lag's GTIDs behind)."""


def size_problems(text: str, *, form: str | None = None) -> list[str]:
    """What is wrong with the sizes in ``text``: an SI byte unit, a size that is not
    what ``fmt_bytes`` writes for its value, a spaced and a compact size together (or
    the other form than ``form``: "spaced", "compact")."""
    bad = [f"SI unit {m.group(0)!r}" for m in SI_BYTES.finditer(text)]
    for m in EXACT.finditer(text):
        count = int(m.group(2).replace(",", ""))
        if fmt_bytes_exact(count) != m.group(0):
            bad.append(f"{m.group(0)!r} is not how {count} bytes are written")
    forms = set()
    for m in IEC.finditer(EXACT.sub(lambda m: m.group(1), text)):
        number, space, unit, per = m.group(1, 2, 3, 4)
        value = float(number.replace(",", "")) * 1024 ** IEC_UNITS.index(unit)
        want = fmt_bytes(value, compact=not space, per=per or "")
        if m.group(0) != want:
            bad.append(f"{m.group(0)!r} where the rule writes {want!r}")
        forms.add("spaced" if space else "compact")
    if len(forms) > 1 or (form is not None and forms - {form}):
        bad.append(f"mixed forms {sorted(forms)}")
    return bad


@cache
def rerun(path: Path) -> tuple[list[Finding], list[Tick]]:
    """Every distinct finding today's checks report over the session (a title changes
    as its numbers do), and its first and last ticks."""
    seen: dict[tuple[object, ...], Finding] = {}
    with open_recording(path) as rec:
        for upd in Rerun(rec, entry_points=False):
            for f in [*upd.open, *upd.closed]:
                seen.setdefault((f.ident, f.title, tuple(f.numbers.items())), f)
        ticks = [rec.tick_at(0), rec.tick_at(len(rec) - 1)]
    return list(seen.values()), ticks


def text_of(r: RenderableType) -> str:
    out = io.StringIO()
    Console(file=out, width=400, color_system=None, legacy_windows=False).print(r)
    return out.getvalue()


def test_the_checker_catches_what_the_issue_showed() -> None:
    assert size_problems("2.3 MiB (2,445,828 B) then 64 MiB and 633 KiB/s") == []
    assert size_problems("633KiB/s 1.6MiB 64MiB", form="compact") == []
    assert size_problems("net 648kB/s") and size_problems("eth0 sends 12.6 MB/s")
    assert size_problems("repl-backlog-size 1,024 KiB")     # 1 MiB
    assert size_problems("of the host's 16.0 GiB RAM")      # 16 GiB
    assert size_problems("2,229.1 KiB of binlog")           # 2.2 MiB
    assert size_problems("64MiB in a title", form="spaced")
    assert size_problems("1 MiB and 64MiB")
    assert size_problems("100 Mb/s")
    assert size_problems("2.2 MiB (2,445,828 B)")           # not that count's short form
    assert BARE.findall("repl-backlog-size differs: primary 16384, replica 1048576")
    assert not BARE.findall("at binlog.000001:2,064,716 from 127.0.0.1:40263, 0-1-599")


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem for p in SESSIONS])
def test_every_finding_says_its_sizes_one_way(path: Path) -> None:
    findings, _ = rerun(path)
    bad = []
    for f in findings:
        for part, text in (("title", f.headline), ("cause", f.cause), ("next", f.next_step)):
            bad += [f"{f.check} {part}: {p}: {text}"
                    for p in size_problems(text, form="spaced")]
        bad += [f"{f.check} title: raw {n}: {f.title}" for n in BARE.findall(f.title)]
        for k, v in f.numbers.items():  # as the finding's detail shows them
            shown = fmt_number(k, v)
            bad += [f"{f.check} {k}={shown}: {p}" for p in size_problems(shown, form="spaced")]
            if not isinstance(v, int | float) or isinstance(v, bool):
                continue
            if byte_key(k) and not re.search(r"[KMGTP]?i?B\b", shown):
                bad.append(f"{f.check} {k}={shown}: bytes without a unit")
            if not byte_key(k) and abs(v) > 9_999 and not k.endswith(NOT_BYTES):
                bad.append(f"{f.check} {k}={shown}: over 9,999 with no unit in its name")
    assert bad == []
    assert findings or path.stem == "healthy_steady_load"


def views(tick: Tick, findings: list[Finding]) -> Iterator[tuple[str, str, str]]:
    """(view, form, text) of what the screen shows of ``tick``: each node's panels, each
    group's detail (compact sizes), the drift view (spaced, as the titles)."""
    from replmon.tui import render
    from replmon.tui.detail import GROUPS, side_by_side
    from replmon.tui.screens import drift_table

    for node, other in ((tick.primary, tick.replica), (tick.replica, tick.primary)):
        for kind, draw in (("host", render.host_text), ("drbd", render.drbd_text),
                           ("mysql", render.mysql_text), ("redis", render.redis_text)):
            if getattr(node, kind).status.ok:
                yield f"{node.role} {kind} panel", "compact", draw(node, other).plain
    for group in GROUPS:
        yield f"{group} detail", "compact", text_of(side_by_side(tick, group))
    yield "drift view", "spaced", text_of(drift_table(tick, findings))


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem for p in SESSIONS])
def test_the_screen_says_sizes_the_same_way(path: Path) -> None:
    from replmon.tui.screens import drift_table

    findings, ticks = rerun(path)
    bad = []
    for tick in ticks:
        for view, form, text in views(tick, findings):
            for line in text.splitlines():
                bad += [f"{view}: {p}: {line.strip()}"
                        for p in size_problems(line, form=form)]
        drift = text_of(drift_table(tick, findings))
        for name in BYTE_SETTINGS:  # a byte setting's row never shows raw bytes
            row = next((ln for ln in drift.splitlines() if f" {name} " in ln), None)
            if row is not None:
                bad += [f"drift {name}: raw {n}" for n in BARE.findall(row)]
    assert bad == []


def test_the_drift_views_byte_settings_are_the_titles_values() -> None:
    """A setting that drifts reads the same in the drift view and in the finding."""
    from replmon.tui.screens import DRIFT_ROWS

    findings, ticks = rerun(FOLDER / "redis_link_down_full_resync.rmrec")
    (f,) = [f for f in findings if f.check == "config_drift" and f.key == "repl-backlog-size"]
    get = next(get for _, name, get in DRIFT_ROWS if name == "repl-backlog-size")
    shown = [fmt_setting("repl-backlog-size", get(n)) for n in ticks[-1].nodes]
    assert shown == ["16 KiB", "1 MiB"]
    assert f.title == "repl-backlog-size differs: primary 16 KiB, replica 1 MiB"
