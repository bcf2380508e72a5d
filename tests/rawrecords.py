"""Every record of a recording as bytes, for audits of what a file holds ('no password
anywhere in this file'), through the reader's public frames (replmon.session.frames)."""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterator
from pathlib import Path

from replmon.session.format import KIND_OBSERVATIONS, KIND_SUMMARY, MAX_RECORD
from replmon.session.recording import open_recording


def raw_records(path: str | Path) -> Iterator[bytes]:
    """The bytes before the first chunk (the signature and the header frame), then every
    record of every chunk, decompressed where compressed."""
    with open_recording(path) as rec:
        yield Path(path).read_bytes()[:rec.chunks[0].offset] if rec.chunks else b""
        for ci in range(len(rec.chunks)):
            for fr, data in rec.records(ci):
                if fr.kind in (KIND_OBSERVATIONS, KIND_SUMMARY):  # zlib streams of their own
                    with contextlib.suppress(zlib.error):  # else as stored
                        data = zlib.decompressobj().decompress(data, MAX_RECORD)
                yield data
