"""Recording sessions to a file and reading them back (format: docs/recording.md).

    async with Recorder("pair.rmrec", meta_for(config)) as rec:
        rec.write(tick, engine.feed(tick))

    rec = open_recording("pair.rmrec")
    rec.tick_at(rec.seek(wall)), rec.problems, rerun_checks(rec)
"""

from replmon.session.format import FORMAT_VERSION, NodeInfo, RecordingMeta, meta_for
from replmon.session.recorder import Recorder, RecordingWriter
from replmon.session.recording import Recording, open_recording
from replmon.session.rerun import Rerun, rerun_checks

__all__ = [
    "FORMAT_VERSION", "NodeInfo", "Recorder", "Recording", "RecordingMeta", "RecordingWriter",
    "Rerun", "meta_for", "open_recording", "rerun_checks",
]
