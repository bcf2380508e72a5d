"""Building blocks shared by every sample model: the frozen record base and the
source status that replaces exceptions inside a tick."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    """Immutable, strict record. Every sample, status and tick derives from it."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class SourceState(StrEnum):
    """What happened when a source tried to sample its node."""

    OK = "ok"
    """Fresh data in this sample."""
    UNREACHABLE = "unreachable"
    """Connection refused, host unknown, network down, or a file/command missing on a node
    that should have it."""
    AUTH = "auth"
    """Credentials refused (wrong password, unknown user, missing privilege to connect)."""
    TIMEOUT = "timeout"
    """The source did not answer within its per-source timeout (a hung server)."""
    ABSENT = "absent"
    """The node does not have this source at all (no DRBD on this host) or it is switched off."""
    PARSE_ERROR = "parse_error"
    """The source answered, but with text replmon could not read (garbled /proc/drbd, INFO)."""
    ERROR = "error"
    """Any other failure; the error text says what."""


class SourceStatus(Record):
    """Outcome of one sampling attempt."""

    state: SourceState = SourceState.OK
    error: str | None = None
    """Error text for anything but ok; never contains a password."""
    hint: str | None = None
    """What the user can do about it (e.g. the GRANT that is missing)."""
    since: float | None = None
    """Wall-clock time (epoch seconds) at which the source entered this state."""

    @property
    def ok(self) -> bool:
        return self.state is SourceState.OK


class SampleBase(Record):
    """Fields every source sample carries. Payload fields of a sample are
    empty/None unless ``status.state`` is ok (or, for partial data, documented per field)."""

    status: SourceStatus = Field(default_factory=SourceStatus)
    wall: float = 0.0
    """Epoch seconds when the reading was taken."""
    mono: float = 0.0
    """time.monotonic() seconds when the reading was taken; rates divide by differences of this."""
    elapsed_ms: float = 0.0
    """How long the fetch took, milliseconds."""
