"""The recording format, version 1: constants, the frame layout and the header.

A recording is ``MAGIC`` followed by frames (docs/recording.md has it byte by byte)::

    kind u8 | length u32 | index u64 | wall f64 | crc32 u32 | payload[length]

all little-endian; the CRC-32 covers the 21 header bytes before it and the
payload. Kinds: ``H`` header (JSON), ``K`` key frame (starts a chunk: a fresh
zlib stream holding the rate baseline), ``T`` tick (the chunk's zlib stream,
sync-flushed, so it decompresses to exactly one record), ``E`` end (JSON).
Unknown kinds are skipped, so a later minor addition does not break this reader.

Nothing here executes data: payloads are JSON (validated by pydantic) or zlib
streams of JSON, every length is bounded, every frame is checksummed.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from replmon import __version__
from replmon.errors import SessionError

FORMAT_NAME: Literal["replmon-recording"] = "replmon-recording"
FORMAT_VERSION = 1
"""Major version. A reader reads every version in SUPPORTED_VERSIONS and refuses others."""
SUPPORTED_VERSIONS = frozenset({1})
MAGIC = b"\x93RPLMON\n"
"""First 8 bytes of every recording."""
KEY_MARK = b"\xffRMKEY\xff\n"
"""First 8 payload bytes of every K frame: lets a reader find the last chunk from the end."""
NO_OFFSET = 0xFFFF_FFFF_FFFF_FFFF

HEADER = struct.Struct("<cIQdI")
"""kind, payload length, tick index, wall, crc32."""
HEADER_SIZE = HEADER.size  # 25
KEY_PREFIX = struct.Struct("<8sQ")
"""K payload prefix: KEY_MARK, byte offset of the previous K frame (NO_OFFSET for the first)."""

KIND_HEADER, KIND_KEY, KIND_TICK, KIND_END = b"H", b"K", b"T", b"E"
MAX_FRAME = 64 << 20
"""Largest payload a reader accepts (a header or a tick is a few KB)."""
MAX_RECORD = 16 << 20
"""Largest decompressed record a reader accepts (guards against zlib bombs)."""
SECRET_MASK = "**********"


def crc_of(head21: bytes, payload: bytes) -> int:
    return zlib.crc32(payload, zlib.crc32(head21))


def pack_frame(kind: bytes, payload: bytes, index: int = 0, wall: float = 0.0) -> bytes:
    """One frame, ready to write in a single call."""
    head = HEADER.pack(kind, len(payload), index, wall, 0)[:21]
    return head + struct.pack("<I", crc_of(head, payload)) + payload


@dataclass(frozen=True)
class Frame:
    offset: int
    kind: bytes
    index: int
    wall: float
    payload: bytes

    @property
    def end(self) -> int:
        return self.offset + HEADER_SIZE + len(self.payload)


class FrameError(Exception):
    """A frame that cannot be read at ``offset`` (internal; surfaces as SessionError/problems)."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"byte {offset}: {reason}")
        self.offset = offset
        self.reason = reason


def read_frame(buf: Any, offset: int) -> Frame:
    """The frame at ``offset`` of ``buf`` (bytes or mmap), checked; FrameError if not intact."""
    size = len(buf)
    if offset + HEADER_SIZE > size:
        raise FrameError(offset, f"truncated frame header ({size - offset} of {HEADER_SIZE} bytes)")
    kind, length, index, wall, crc = HEADER.unpack_from(buf, offset)
    if length > MAX_FRAME:
        raise FrameError(offset, f"frame length {length} is implausible (corrupted header)")
    start = offset + HEADER_SIZE
    if start + length > size:
        raise FrameError(offset, f"truncated frame: {size - start} of {length} payload bytes")
    payload = bytes(buf[start:start + length])
    if crc_of(bytes(buf[offset:offset + 21]), payload) != crc:
        raise FrameError(offset, "checksum mismatch (corrupted bytes)")
    return Frame(offset, kind, index, wall, payload)


# --- header --------------------------------------------------------------------

class NodeInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = ""
    host: str = ""
    mysql_version: str = ""
    redis_version: str = ""
    drbd_version: str = ""


class RecordingMeta(BaseModel):
    """The self-describing header of one recording file (JSON in the H frame).
    Unknown keys are ignored, so a newer minor revision still reads."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    format: Literal["replmon-recording"] = FORMAT_NAME
    version: int = FORMAT_VERSION
    replmon_version: str = __version__
    interval: float = 1.0
    """Configured seconds between ticks."""
    started_wall: float | None = None
    """Wall time (epoch s) of the first tick in this file."""
    nodes: dict[str, NodeInfo] = Field(default_factory=dict)
    """"primary"/"replica" -> names, hosts and server versions from the first ok samples."""
    config: dict[str, Any] | None = None
    """The Config as JSON with every secret replaced by '**********'."""
    findings_recorded: bool = True
    """Whether the live engine's findings were written beside the ticks."""
    reconstructed: bool = False
    """True when the ticks were rebuilt from published figures, not captured live."""
    note: str = ""
    part: int = 0
    """Number of this file in a rotated series (0 = not rotated)."""
    previous: str | None = None
    """File name of the previous part of a rotated series."""
    chunk_ticks: int = 60

    @property
    def checks(self) -> dict[str, dict[str, Any]]:
        """[checks.*] settings of the recorded config (for re-running the checks)."""
        return dict((self.config or {}).get("checks") or {})


def scrub(value: Any) -> Any:
    """A JSON value with every password-like entry masked (belt and braces: SecretStr
    already dumps as the mask)."""
    if isinstance(value, dict):
        return {k: (SECRET_MASK if _secret_key(k) and v not in (None, SECRET_MASK) else scrub(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def _secret_key(key: str) -> bool:
    k = key.lower()
    return ("password" in k or "secret" in k or k in ("auth", "token")) and not k.endswith("_env")


def meta_for(config: Any = None, *, interval: float | None = None, **fields: Any) -> RecordingMeta:
    """Header for a recording of ``config`` (a replmon.config.Config), secrets masked."""
    data: dict[str, Any] = dict(fields)
    if config is not None:
        dumped = scrub(config.model_dump(mode="json"))
        data.setdefault("config", dumped)
        data.setdefault("interval", config.interval)
        data.setdefault("nodes", {
            role: NodeInfo(name=dumped[role].get("name") or dumped[role]["host"],
                           host=dumped[role]["host"])
            for role in ("primary", "replica")})
    if interval is not None:
        data["interval"] = interval
    return RecordingMeta.model_validate(data)


def parse_meta(payload: bytes) -> RecordingMeta:
    """The H frame's JSON, with the version check. SessionError says what is wrong."""
    import json

    try:
        raw = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SessionError(f"recording header is not valid JSON: {e}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise SessionError("not a replmon recording (header names no replmon-recording format)")
    version = raw.get("version")
    if not isinstance(version, int):
        raise SessionError(f"recording header has no valid version number: {version!r}")
    if version not in SUPPORTED_VERSIONS:
        newest = max(SUPPORTED_VERSIONS)
        if version > newest:
            raise SessionError(
                f"recording format version {version} is newer than this replmon "
                f"({__version__}) reads (versions {sorted(SUPPORTED_VERSIONS)}); it was written "
                f"by replmon {raw.get('replmon_version', '?')}: upgrade replmon to read it")
        raise SessionError(
            f"recording format version {version} is older than this replmon supports "
            f"(versions {sorted(SUPPORTED_VERSIONS)}); read it with replmon "
            f"{raw.get('replmon_version', 'of that time')}")
    try:
        return RecordingMeta.model_validate(raw)
    except Exception as e:  # pydantic ValidationError: say it as a SessionError
        raise SessionError(f"recording header is invalid: {e}") from None
