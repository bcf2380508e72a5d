"""The replica's true lag: what a replica reads every tick to know it (``LagFacts``) and the
one measured lag a tick carries (``MeasuredLag``, ``Tick.lag``).

True lag is the age of the replica's data: how long ago the primary committed what the
replica has applied last, while something newer is not applied yet (0 when nothing is
missing). pt-heartbeat measures it with a row the primary rewrites every interval; the
servers themselves know it from the commit timestamps they replicate (Oracle MySQL 8.0+
performance_schema, MariaDB 11.6+ SHOW REPLICA STATUS); replmon's pair_lag measures it
from its own history of both nodes' positions. ``PairView.lag`` (replmon.pair) picks the
best of them every tick, from the first one.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal

from replmon.model.base import Struct, struct

LagSource = Literal["heartbeat", "server", "history"]
"""Where a measured lag comes from: pt-heartbeat's table read on the replica ("heartbeat"),
the servers' own commit timestamps ("server": MySQL performance_schema, MariaDB 11.6+
Master_last_event_time/Slave_last_event_time), pair_lag's history of both nodes' positions
("history")."""

LAG_SOURCE_WORDS: dict[str, str] = {
    "heartbeat": "heartbeat table",
    "server": "server commit timestamps",
    "history": "pair_lag history",
}
"""How each source is named in text (the screen, the check's title)."""


@struct
class ApplierTimes(Struct):
    """One channel's commit timestamps as Oracle MySQL 8.0+ performance_schema keeps them
    (``replication_applier_status_by_worker``): epoch seconds of the *source's* clock
    (ORIGINAL_COMMIT_TIMESTAMP is set where the transaction was first committed)."""

    channel: str = ""
    """The channel's name ("" = the default one)."""
    applying_commit: float | None = None
    """Epoch seconds: the original commit of the oldest transaction a worker is applying
    now; None when no worker is busy."""
    applied_commit: float | None = None
    """Epoch seconds: the original commit of the newest transaction applied (any worker);
    None when none was applied since the applier started."""


@struct
class LagFacts(Struct):
    """What a replica reads every tick to know its true lag (only a server with a
    replication channel reads it): its clock, pt-heartbeat's rows when a table is set, and
    on Oracle MySQL 8.0+ the applier's commit timestamps. MariaDB 11.6+'s event times come
    with SHOW REPLICA STATUS (``ReplicaChannel.replica_event_time``)."""

    server_time: float | None = None
    """The replica's clock, epoch seconds (``UNIX_TIMESTAMP(NOW(6))``), when it answered."""
    tz_offset_s: float | None = None
    """Seconds the session's time zone is ahead of UTC (``NOW() - UTC_TIMESTAMP()``): how
    the server's naive date-times (MariaDB's event times) become epoch seconds."""
    sent_wall: float | None = None
    """replmon's clock (epoch seconds) when it sent the clock query."""
    elapsed_ms: float | None = None
    """Milliseconds the clock query took: the clock was read within it."""
    heartbeat: dict[int, float] = field(default_factory=dict)
    """pt-heartbeat's rows on this replica: the writer's server_id -> its ts as epoch
    seconds (``UNIX_TIMESTAMP(ts)``: the ts read in the server's time zone, as pt-heartbeat
    writes it without --utc; with --utc the server must run in UTC)."""
    heartbeat_error: str | None = None
    """Why the heartbeat table could not be read (missing table or privilege): one line."""
    applier: list[ApplierTimes] = field(default_factory=list)
    """Oracle MySQL 8.0+: each channel's commit timestamps; empty elsewhere."""
    applier_error: str | None = None
    """Why performance_schema's applier timestamps could not be read."""
    heartbeat_table: str | None = None
    """The heartbeat table read (db.table; None: none configured, or a recording older
    than this field)."""

    @property
    def table(self) -> str | None:
        """The heartbeat table read ("the heartbeat table" when a recording did not name
        it); None when none is configured."""
        if self.heartbeat_table:
            return self.heartbeat_table
        return "the heartbeat table" if self.heartbeat or self.heartbeat_error else None


@struct
class MeasuredLag(Struct):
    """The replica's true lag at this tick, from the best source that knows it."""

    seconds: float | None = None
    """Seconds the replica's data is behind the primary's; None when no source knows
    (``reason`` says why), or when only a lower bound is known (``at_least``)."""
    bound_s: float | None = None
    """Seconds: ``seconds`` is right to within this (clock offset, reading resolution)."""
    source: LagSource | None = None
    """Which source measured it (None: unknown)."""
    at_least_s: float | None = None
    """When the lag is unknown but pair_lag's history proves a lower bound: seconds."""
    channel: str = ""
    """The replica's channel from the primary ("" = the default one)."""
    clock_offset_s: float | None = None
    """Seconds the primary's clock is ahead of the replica's, as replmon measured it
    (applied to the heartbeat and commit timestamps); None when not measured."""
    clock_bound_s: float | None = None
    """Seconds: the clock offset is right to within this."""
    detail: str = ""
    """How it was measured, or why it is unknown, in words for the user."""

    @property
    def source_words(self) -> str:
        """The source as text ("heartbeat table", ...); "" when unknown."""
        return LAG_SOURCE_WORDS.get(self.source or "", "")


@struct
class RedisLagEstimate(Struct):
    """The Redis replica's offset lag in bytes, also as seconds at the primary's current
    write rate: an estimate (the rate changes; a stopped link grows the bytes only while
    the primary writes)."""

    bytes: int
    """Bytes: the primary's master_repl_offset minus the replica's offset."""
    rate_bytes_per_s: float | None = None
    """Bytes per second the primary's replication stream grows (its master_repl_offset)."""
    seconds: float | None = None
    """Estimated seconds behind: ``bytes / rate_bytes_per_s`` (0 when no byte is
    missing); None when the primary writes nothing now (no rate to divide by)."""


def lag_summary(lag: MeasuredLag | None) -> str:
    """The replica's measured lag in a few words for a title or a line: "replica 20.1 s
    behind (+/- 0.1 s, heartbeat table)", "replica lag unknown: <why>"; "" without."""
    if lag is None:
        return ""
    if lag.seconds is not None:
        bound = f"+/- {lag.bound_s:.1f} s, " if lag.bound_s is not None else ""
        return f"replica {lag.seconds:.1f} s behind ({bound}{lag.source_words})"
    return f"replica lag unknown: {lag.detail}"  # (a lower bound is in the detail)
