"""Recording sessions to a file and reading them back (format: docs/recording.md).

    async with Recorder("pair.rmrec", meta_for(config)) as rec:
        rec.write(tick, engine.feed(tick))

    rec = open_recording("pair.rmrec")
    rec.tick_at(rec.seek(wall)), rec.problems, rerun_checks(rec)

The names are imported from their modules when first asked for (``__getattr__``), not
with the package: the live screen and ``record`` write through ``recorder`` and never
load the reading side (``recording``, ``rerun`` and what they import: ``cursor``,
``damage``, ``decoding``, ``frames``, ``reuse``), ~0.6 MB of the screen's RSS (#56).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replmon.session.format import FORMAT_VERSION, NodeInfo, RecordingMeta, meta_for
    from replmon.session.recorder import Recorder, RecordingWriter
    from replmon.session.recording import Recording, open_recording
    from replmon.session.rerun import Rerun, rerun_checks

_WHERE = {"FORMAT_VERSION": "format", "NodeInfo": "format", "RecordingMeta": "format",
          "meta_for": "format", "Recorder": "recorder", "RecordingWriter": "recorder",
          "Recording": "recording", "open_recording": "recording", "Rerun": "rerun",
          "rerun_checks": "rerun"}

__all__ = [
    "FORMAT_VERSION", "NodeInfo", "Recorder", "Recording", "RecordingMeta", "RecordingWriter",
    "Rerun", "meta_for", "open_recording", "rerun_checks",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
