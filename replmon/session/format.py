"""The recording format, version 3: constants, the frame layout and the header.

A recording is ``MAGIC`` followed by frames (docs/recording.md has it byte by byte)::

    kind u8 | length u32 | index u64 | wall f64 | crc32 u32 | payload[length]

all little-endian; the CRC-32 covers the 21 header bytes before it and the
payload. Kinds: ``H`` the header frame (JSON), ``K`` a key frame (starts a chunk: a
fresh zlib stream holding the rate baseline), ``T`` a tick frame (the chunk's zlib
stream, sync-flushed, so it decompresses to exactly one record), ``O`` the observations
frame: the live engine's observations of one chunk (zlib JSON, after the chunk's last
tick), ``F`` the summary frame: what the report keeps of the chunk's ticks (zlib JSON,
after the observations frame: ``replmon.session.facts``), ``E`` the end frame (JSON).
Unknown kinds are skipped, so a later minor addition does not break this reader.

Version 2 repeats in every key frame what a reader needs to decode ticks (``KeyInfo``:
format, version, node names, interval), so a damaged header costs only what the
header alone holds (the config, server versions). Version 3 stores a chunk's first tick
record whole and each later one as its change from the one before
(``replmon.session.delta``): frames and layout as version 2. Versions 1 and 2 still read.

Nothing here executes data: payloads are JSON (validated by pydantic) or zlib
streams of JSON, every length is bounded, every frame is checksummed.
"""

from __future__ import annotations

import functools
import json
import struct
import typing
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from replmon import __version__
from replmon.errors import SessionError
from replmon.model.findings import Observation, Severity

FORMAT_NAME: Literal["replmon-recording"] = "replmon-recording"
FORMAT_VERSION = 3
"""Major version. A reader reads every version in SUPPORTED_VERSIONS and refuses others."""
SUPPORTED_VERSIONS = frozenset({1, 2, 3})
DELTA_VERSION = 3
"""From this version on, a chunk's tick records after its first are changes
(``replmon.session.delta``); the writer writes the version its RecordingMeta names (2: whole
records)."""
MAGIC = b"\x93RPLMON\n"
"""First 8 bytes of every recording."""
KEY_MARK = b"\xffRMKEY\xff\n"
"""First 8 payload bytes of every key frame: lets a reader find the last chunk from the end."""
NO_OFFSET = 0xFFFF_FFFF_FFFF_FFFF

HEADER = struct.Struct("<cIQdI")
"""kind, payload length, tick index, wall, crc32."""
HEADER_SIZE = HEADER.size  # 25
KEY_PREFIX = struct.Struct("<8sQ")
"""K payload prefix: KEY_MARK, byte offset of the previous key frame (NO_OFFSET for the first)."""
KEY_INFO = struct.Struct("<BI")
"""Version 2, after KEY_PREFIX: tag 0x02 (a zlib stream, which is what follows the prefix in
version 1, never starts with it), length of the KeyInfo JSON that follows."""
KEY_INFO_TAG = 2
MAX_KEY_INFO = 64 << 10

KIND_HEADER, KIND_KEY, KIND_TICK, KIND_END = b"H", b"K", b"T", b"E"
KIND_OBSERVATIONS = b"O"
"""The live engine's observations of one chunk (its observations frame)."""
KIND_SUMMARY = b"F"
"""What the report keeps of one chunk's ticks (its summary frame: ``session/facts.py``)."""
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
    """The self-describing header of one recording file (JSON in the header frame).
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
    window: tuple[float, float] | None = None
    """Set by ``replmon cut``: wall times of the first and last tick of the stretch that
    was cut out. The ticks before it are warm-up (the checks' window, so that they open
    the same findings there as in the whole file): ``check --replay`` and ``report`` count
    only the incidents that open inside it."""
    cut_from: str = ""
    """The file a ``replmon cut`` was taken from (its name)."""
    damaged: bool = False
    """True when the header frame could not be read and this was rebuilt from a key frame:
    config and server versions are then unknown."""

    @property
    def checks(self) -> dict[str, dict[str, Any]]:
        """[checks.*] settings of the recorded config (for re-running the checks)."""
        return dict((self.config or {}).get("checks") or {})


KEY_INFO_FIELDS = ("format", "version", "replmon_version", "interval", "started_wall",
                   "reconstructed", "findings_recorded", "part", "previous", "chunk_ticks",
                   "window", "cut_from")
"""RecordingMeta fields repeated in every key frame (plus the nodes' names and hosts)."""


def key_info(meta: RecordingMeta) -> bytes:
    """The KeyInfo JSON a key frame carries: enough of the header to decode and name ticks."""
    info = meta.model_dump(mode="json", include=set(KEY_INFO_FIELDS))
    for cut_only in ("window", "cut_from"):  # a cut's marks: no bytes in other files
        if not info[cut_only]:
            del info[cut_only]
    info["nodes"] = {role: {"name": n.name, "host": n.host} for role, n in meta.nodes.items()}
    return json.dumps(info, separators=(",", ":")).encode()


def pack_key_payload(prev: int, info: bytes, stream: bytes) -> bytes:
    """A version 2 K payload: mark, back pointer, KeyInfo, then the chunk's zlib stream."""
    return KEY_PREFIX.pack(KEY_MARK, prev) + KEY_INFO.pack(KEY_INFO_TAG, len(info)) + info + stream


def split_key_payload(payload: bytes) -> tuple[int, bytes | None, bytes]:
    """(back pointer, KeyInfo JSON or None for a version 1 key frame, zlib stream)."""
    _, prev = KEY_PREFIX.unpack_from(payload)
    at = KEY_PREFIX.size
    if len(payload) >= at + KEY_INFO.size and payload[at] == KEY_INFO_TAG:
        _, n = KEY_INFO.unpack_from(payload, at)
        start = at + KEY_INFO.size
        if n > MAX_KEY_INFO or start + n > len(payload):
            raise ValueError(f"key frame info length {n} is implausible")
        return prev, payload[start:start + n], payload[start + n:]
    return prev, None, payload[at:]


def meta_from_key(info: bytes) -> RecordingMeta:
    """A RecordingMeta rebuilt from a key frame's KeyInfo (header damaged or missing);
    SessionError as ``parse_meta``."""
    return parse_meta(info).model_copy(update={"damaged": True})


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


class UnreadableVersion(SessionError):
    """The header is intact but names a format or version this replmon does not read."""


def parse_meta(payload: bytes) -> RecordingMeta:
    """The header frame's JSON, with the version check. SessionError says what is wrong."""
    try:
        raw = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SessionError(f"recording header is not valid JSON: {e}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise UnreadableVersion("not a replmon recording (header names no replmon-recording "
                                "format)")
    version = raw.get("version")
    if not isinstance(version, int):
        raise UnreadableVersion(f"recording header has no valid version number: {version!r}")
    if version not in SUPPORTED_VERSIONS:
        newest = max(SUPPORTED_VERSIONS)
        if version > newest:
            raise UnreadableVersion(
                f"recording format version {version} is newer than this replmon "
                f"({__version__}) reads (versions {sorted(SUPPORTED_VERSIONS)}); it was written "
                f"by replmon {raw.get('replmon_version', '?')}: upgrade replmon to read it")
        raise UnreadableVersion(
            f"recording format version {version} is older than this replmon supports "
            f"(versions {sorted(SUPPORTED_VERSIONS)}); read it with replmon "
            f"{raw.get('replmon_version', 'of that time')}")
    try:
        return RecordingMeta.model_validate(raw)
    except Exception as e:  # pydantic ValidationError: say it as a SessionError
        raise SessionError(f"recording header is invalid: {e}") from None


# --- observations (observations frames) ------------------------------------------------------

Packed = tuple[str, str, str, int, str, dict[str, Any], str, str]
"""One observation as stored and as sent between processes: (check id, key, node,
severity, title, numbers, cause, next step). Pickling a pydantic model (and its IntEnum)
costs ~5 times a tuple's."""


def pack_seen(seen: list[tuple[str, Observation]]) -> list[Packed]:
    return [(cid, o.key, o.node, int(o.severity), o.title, o.numbers, o.cause, o.next_step)
            for cid, o in seen]


def unpack_seen(packed: Any) -> list[tuple[str, Observation]]:
    return [(cid, Observation(key=key, node=node, severity=Severity(sev), title=title,
                              numbers=numbers, cause=cause, next_step=next_step))
            for cid, key, node, sev, title, numbers, cause, next_step in packed]


class ChunkObservations(BaseModel):
    """An observations frame: what the live engine observed at each tick of one chunk, so that a
    re-run by the same checks (``checks_id``) need not decode the ticks nor run the
    checks. Only ticks where something was seen are listed."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    checks_id: str
    """``Engine.checks_id`` of the live engine."""
    first: int
    """Index of the chunk's first tick."""
    seq0: int
    """Seq of the chunk's first tick; the ticks' seqs run on without a gap (a chunk
    whose ticks skip a seq gets no observations frame)."""
    count: int
    interval: float
    """Every tick of the chunk has this interval (otherwise no observations frame)."""
    seen: dict[int, list[Packed]] = Field(default_factory=dict)
    """Offset in the chunk -> the observations at that tick."""
    gauges: dict[str, list[tuple[float | None, ...] | None]] = Field(default_factory=dict)
    """Gated check id -> its gauges at each tick of the chunk (``check.Gate``; None at a
    tick whose measure raised). Absent in files written before gates: a re-check then
    decodes every tick for the checks it observes again."""


M = TypeVar("M", bound=BaseModel)


def pack_zjson(model: BaseModel) -> bytes:
    """A frame payload of its own (O, F): the model's JSON in one zlib stream."""
    return zip_json(model.model_dump_json().encode())


def zip_json(data: bytes) -> bytes:
    """``pack_zjson`` of JSON already written (the recorder's O and F frames)."""
    return zlib.compress(data, 6)


def _unzip(payload: bytes, what: str) -> bytes:
    """A frame's one zlib stream, at most MAX_RECORD bytes unpacked (else ValueError)."""
    z = zlib.decompressobj()
    try:
        data = z.decompress(payload, MAX_RECORD)
    except zlib.error as e:
        raise ValueError(f"{what} do not decompress: {e}") from None
    if z.unconsumed_tail:
        raise ValueError(f"{what} larger than {MAX_RECORD} bytes")
    return data


def unpack_zjson(payload: bytes, cls: type[M], what: str,
                 skip: frozenset[str] = frozenset()) -> M:
    """``pack_zjson``'s model back; ValueError (zlib, JSON, types, size: at most
    MAX_RECORD bytes unpacked) when the payload is not one. ``skip``: fields (with a
    default) not read, left at their default: the JSON is still checked, more quickly
    (an observations frame without its gauges, a summary frame without its chart values)."""
    read: Callable[[bytes], M] = _json_reader(cls, skip)
    try:
        return read(_unzip(payload, what))
    except msgspec.DecodeError as e:  # ValidationError too
        raise ValueError(f"{what} do not read: {e}") from None


@functools.cache
def _json_reader(cls: type[M], skip: frozenset[str] = frozenset()) -> Callable[[bytes], M]:
    """``cls``'s JSON read by msgspec into a Struct of its fields (their types and
    defaults), then the model built from them unvalidated: the same type checks, the
    JSON of an observations frame of a peer down all chunk read in ~0.7 ms against
    pydantic's ~1.7 ms (a loaded machine, 2026-12-03), for the models of the frames read
    once a chunk in every re-run and report (ChunkObservations, ChunkFacts: plain fields,
    no validators; tests/unit/session/test_session_roundtrip.py holds it to pydantic's
    reading)."""
    hints = typing.get_type_hints(cls)
    fields: list[tuple[Any, ...]] = []
    for name, f in cls.model_fields.items():
        if name in skip:
            assert not f.is_required(), name
            continue
        if f.default_factory is not None:
            make = cast("Callable[[], Any]", f.default_factory)
            fields.append((name, hints[name], msgspec.field(default_factory=make)))
        elif f.is_required():
            fields.append((name, hints[name]))
        else:
            fields.append((name, hints[name], f.default))
    decode = msgspec.json.Decoder(msgspec.defstruct(f"{cls.__name__}JSON", fields,
                                                    kw_only=True)).decode
    names = tuple(n for n in cls.model_fields if n not in skip)

    def read(data: bytes) -> M:
        got = decode(data)
        return cls.model_construct(**{n: getattr(got, n) for n in names})
    return read


def pack_observations(obs: ChunkObservations) -> bytes:
    return pack_zjson(obs)


NO_GAUGES = frozenset({"gauges"})


def unpack_observations(payload: bytes, gauges: bool = True) -> ChunkObservations:
    """ValueError (zlib, JSON, types) when the payload is not one. Without ``gauges``,
    its ``gauges`` are left empty (a re-run with the recorded thresholds never reads
    them: a third of a peer-down chunk's JSON)."""
    return unpack_zjson(payload, ChunkObservations, "observations",
                        frozenset() if gauges else NO_GAUGES)
