"""The graph view's y axes and colours, apart from the drawing (graphs.py): round ticks
labelled with their unit ("12.5k/s", "13s", "512KiB", "50%"), from 0 for the
quantities the charts show (a rate, a lag, a size, a percentage is never below 0), and
one RGB colour per series that the chart's lines and the legend under it both use (a
terminal's named colours are themed: plotext's "orange+" is ANSI 11, which Textual's
theme drew yellow beside a legend in rich's "dark_orange")."""

from __future__ import annotations

import math

RGB = tuple[int, int, int]

COLOR_RGB: dict[str, RGB] = {
    "blue+": (66, 133, 244), "green+": (52, 199, 89), "orange+": (255, 149, 0),
    "magenta+": (214, 92, 214), "cyan+": (64, 200, 224), "red+": (235, 64, 52),
    "red": (230, 40, 40), "orange": (255, 170, 0), "white": (240, 240, 240)}
"""The colour each of the graph view's colour names is drawn in, as RGB: the series'
("blue+", ...), a critical onset's ("red"), a warning's ("orange"), the cursor's."""


def plot_color(name: str) -> RGB:
    """What plotext is given to draw in the colour ``name``."""
    return COLOR_RGB[name]


def rich_color(name: str) -> str:
    """The legend's style for what is drawn in the colour ``name`` (the same RGB)."""
    return "rgb({},{},{})".format(*COLOR_RGB[name])


Y_TICKS = 4
"""Intervals on a y axis at most (5 labels in a 14-row chart)."""
SI = (("", 1.0), ("k", 1e3), ("M", 1e6), ("G", 1e9))
IEC = (("B", 1.0), ("KiB", 1024.0), ("MiB", 1024.0**2), ("GiB", 1024.0**3),
       ("TiB", 1024.0**4))
BYTE_SCALE = {"B": 1.0, "B/s": 1.0, "KiB": 1024.0}
"""Bytes per unit of a chart whose values are bytes (DRBD's out-of-sync is KiB)."""


def _step(span: float) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) that covers ``span`` in at
    most Y_TICKS intervals."""
    raw = span / Y_TICKS
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))


def _decimals(step: float) -> int:
    """Decimals that tell apart ticks ``step`` apart (2.5 -> 1, 0.25 -> 2, 5 -> 0)."""
    d = 0
    while d < 4 and abs(step * 10**d - round(step * 10**d)) > 1e-6:
        d += 1
    return d


def y_axis(values: list[float], unit: str) -> tuple[float, float, list[float], list[str]]:
    """(bottom, top, ticks, their labels) of a y axis for ``values`` in ``unit`` (the
    chart's: "/s", "s", "%", "ms", "B", "B/s", "KiB"): from 0 (lower only for a value
    below 0) to the first round tick at or over the highest value; a flat 0 gets 0 to 1
    of its unit."""
    scale = BYTE_SCALE.get(unit)
    byte = scale is not None
    vals = [v * (scale or 1.0) for v in values] or [0.0]
    hi, lo = max(vals), min(min(vals), 0.0)
    # the unit the labels count in: k/M for counts, KiB/MiB for bytes (a round step in it)
    units = IEC if byte else SI if unit in ("/s", "") else (("", 1.0),)
    top = max(abs(hi), abs(lo))
    name, div = next(((n, d) for n, d in reversed(units) if top >= d), units[0])
    span = (hi - lo) / div
    step = _step(span) if span > 0 else 1.0
    bottom = math.floor(lo / div / step) * step
    ceil = math.ceil(hi / div / step - 1e-9) * step
    ceil = max(ceil, bottom + step)
    n = round((ceil - bottom) / step)
    ticks = [0.0 if abs(t) < step / 2 else t for t in (bottom + step * k for k in range(n + 1))]
    d = _decimals(step)
    per = ("/s" if unit == "B/s" else "") if byte else unit
    labels = [f"{t:.{d}f}{name}{per}" if t else f"0{units[0][0]}{per}" for t in ticks]
    mult = div / (scale or 1.0)  # back to the chart's own values
    return bottom * mult, ceil * mult, [t * mult for t in ticks], labels
