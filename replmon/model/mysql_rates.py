"""MySQL rates: two ``MysqlSample`` readings -> ``MysqlRates``, and the errors clients got.

``derive_mysql_rates(prev, cur)`` turns two samples into per-second rates over the real
(monotonic) time between them. A restart (Uptime went down) or a FLUSH STATUS
(Uptime_since_flush_status went down) gives no rates at all for that tick and says why
in ``reset``; a single counter that went down gives None.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from replmon.model.base import Struct, struct
from replmon.model.mysql import MysqlSample, RowFamily
from replmon.model.rates import counter_delta, counter_rate, counter_rates, ratio


@struct
class MysqlRates(Struct):
    """What changed between two MysqlSamples, per second of real elapsed time.

    Every rate is None when it cannot be trusted: no previous sample, a failed
    sample, time did not advance, a restart or FLUSH STATUS in between
    (``reset``), or that counter went down."""

    dt_s: float | None = None
    """Seconds between the two readings (monotonic clock); None without a usable pair."""
    reset: Literal["restart", "flush"] | None = None
    """"restart": Uptime went down (or the server version changed). "flush": Uptime_since_
    flush_status went down (FLUSH STATUS). Either way every rate of this tick is None."""
    counters: dict[str, float | None] = field(default_factory=dict)
    """Per-second rate of every counter in the current sample's ``counters``, by name."""
    row_counters: RowFamily | None = None
    """The row family the rows_*_per_s rates come from (see MysqlSample.row_counters)."""
    errors_by_code_per_s: dict[str, float] = field(default_factory=dict)
    """Errors raised to clients per second by error number (Δerror_counts, MySQL 8.0+):
    {"1290": 12.0}; only the numbers that grew in the interval."""
    rows_inserted_per_s: float | None = None
    """Rows inserted per second."""
    rows_updated_per_s: float | None = None
    """Rows changed by updates per second."""
    rows_deleted_per_s: float | None = None
    """Rows deleted per second."""
    rows_read_per_s: float | None = None
    """Rows read per second."""
    qps: float | None = None
    """Client statements per second (ΔQuestions; COM_PING is not counted)."""
    com_select_per_s: float | None = None
    """SELECT statements per second (orzdba "sel")."""
    com_insert_per_s: float | None = None
    """INSERT statements per second (orzdba "ins")."""
    com_update_per_s: float | None = None
    """UPDATE statements per second, single-table (orzdba "upd")."""
    com_delete_per_s: float | None = None
    """DELETE statements per second, single-table (orzdba "del")."""
    iud_per_s: float | None = None
    """INSERT+UPDATE+DELETE statements per second (orzdba "-TPS- iud": write
    statements, not commits)."""
    rows_updated_per_update: float | None = None
    """ΔRows updated / ΔCom_update over the interval (row family of row_counters):
    below 1 = UPDATEs that change nothing, above 1 = multi-row UPDATEs. None when no
    UPDATE ran. Compare to a learned baseline, not to 1 (mysql_redis.md §2.3)."""
    bp_read_requests_per_s: float | None = None
    """InnoDB logical reads per second (orzdba "lor")."""
    bp_hit_pct: float | None = None
    """Buffer-pool hit percent over the interval: (Δread_requests − Δreads) /
    Δread_requests × 100 (orzdba "hit"). None when there were no read requests."""


_STATEMENT_RATES: dict[str, str] = {
    "qps": "Questions",
    "com_select_per_s": "Com_select",
    "com_insert_per_s": "Com_insert",
    "com_update_per_s": "Com_update",
    "com_delete_per_s": "Com_delete",
}


def reset_kind(prev: MysqlSample, cur: MysqlSample) -> Literal["restart", "flush"] | None:
    """Why counters of ``cur`` cannot be compared with ``prev``, if they cannot."""
    if prev.version and cur.version and prev.version != cur.version:
        return "restart"
    if prev.uptime_s is not None and cur.uptime_s is not None and cur.uptime_s < prev.uptime_s:
        return "restart"
    pf, cf = prev.uptime_since_flush_s, cur.uptime_since_flush_s
    if pf is not None and cf is not None and cf < pf:
        return "flush"
    return None


NO_SUMMARY_ERRORS = {"1040": "Connection_errors_max_connections",
                     "aborted connects": "Aborted_connects"}
"""Where a server has no error summary (MariaDB, MySQL before 8.0, performance_schema
off): the errors clients got that its status counters count, by the name shown."""


def client_errors_total(m: MysqlSample) -> int | None:
    """Errors the server raised to clients since it started (a counter): MySQL 8.0+'s
    error summary, else the NO_SUMMARY_ERRORS counters; None when it counts neither."""
    if m.error_counts:
        return sum(m.error_counts.values())
    parts = [m.counters.get(n) for n in NO_SUMMARY_ERRORS.values()]
    return None if all(v is None for v in parts) else sum(int(v or 0) for v in parts)


def client_errors_per_s(m: MysqlSample, r: MysqlRates) -> dict[str, float]:
    """Errors clients got per second, by error number, the ones that grew: MySQL 8.0+'s
    error summary, and the connections refused at max_connections as "1040" (counted
    before a session exists, so where the summary lacks it); without a summary, the
    NO_SUMMARY_ERRORS counters. The screen's errors line, the report's chart."""
    out = dict(r.errors_by_code_per_s)
    names = NO_SUMMARY_ERRORS if not m.error_counts else {"1040": NO_SUMMARY_ERRORS["1040"]}
    for kind, counter in names.items():
        v = r.counters.get(counter)
        if v and kind not in out:
            out[kind] = v
    return out


def derive_mysql_rates(prev: MysqlSample | None, cur: MysqlSample) -> MysqlRates:
    """Rates between two consecutive samples of the same server (pure function).

    Divides by the real monotonic time between the readings. No rates (all
    None) without a usable previous sample, when time did not advance, or after
    a restart/FLUSH STATUS (``reset`` says which)."""
    if not cur.status.ok or prev is None or not prev.status.ok:
        return MysqlRates.trusted()
    dt = cur.mono - prev.mono
    if dt <= 0:
        return MysqlRates.trusted()
    reset = reset_kind(prev, cur)
    if reset is not None:
        return MysqlRates.trusted(dt_s=dt, reset=reset)

    pc, cc = prev.counters, cur.counters
    values: dict[str, Any] = {
        "dt_s": dt,
        # every counter of every tick of a replay passes here: counter_rate inlined; a
        # counter that did not move is the one 0.0 (half of them: kept 60 ticks whole)
        "counters": {n: None if (p := pc.get(n)) is None or v < p
                     else (v - p) / dt if v != p else 0.0 for n, v in cc.items()},
    }
    statements = {
        out: counter_rate(pc.get(name), cc.get(name), dt) for out, name in _STATEMENT_RATES.items()
    }
    values.update(statements)
    writes = [statements[k] for k in ("com_insert_per_s", "com_update_per_s", "com_delete_per_s")]
    values["iud_per_s"] = None if None in writes else sum(w for w in writes if w is not None)

    if prev.row_counters is not None and prev.row_counters == cur.row_counters:
        values["row_counters"] = cur.row_counters
        for field in ("rows_inserted", "rows_updated", "rows_deleted", "rows_read"):
            values[f"{field}_per_s"] = counter_rate(getattr(prev, field), getattr(cur, field), dt)
        d_rows = counter_delta(prev.rows_updated, cur.rows_updated)
        d_upd = counter_delta(pc.get("Com_update"), cc.get("Com_update"))
        values["rows_updated_per_update"] = ratio(d_rows, d_upd)

    req_name, miss_name = "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads"
    values["bp_read_requests_per_s"] = counter_rate(pc.get(req_name), cc.get(req_name), dt)
    d_req = counter_delta(pc.get(req_name), cc.get(req_name))
    d_miss = counter_delta(pc.get(miss_name), cc.get(miss_name))
    if d_req and d_miss is not None:
        values["bp_hit_pct"] = max(0.0, (d_req - d_miss) / d_req * 100.0)
    values["errors_by_code_per_s"] = counter_rates(prev.error_counts, cur.error_counts, dt)
    return MysqlRates.trusted(**values)
