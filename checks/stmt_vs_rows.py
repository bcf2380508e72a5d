"""Statements vs rows: UPDATE/DELETE/INSERT statements that change far fewer rows.

Reads, per node, the statement rates (Com_update, Com_delete, Com_insert) and the
row rates (Innodb_rows_* on MySQL, Handler_* on MariaDB, which has no
Innodb_rows_updated) over the last interval. Under load, a single-row UPDATE
changes one row; when rows changed per statement falls well below 1, many
statements found no row (or set a column to the value it had), returned at once,
and the statement rate (TPS/QPS) overstates the work done.

Field notes: two identical hosts under sysbench update_index; host A showed 47,240
UPDATE/s but 23,489 rows updated/s (0.50 rows per statement) because
auto_increment_increment=2 left every other id empty; host B, 31,653 vs 31,522,
is healthy. When the node's auto_increment_increment is above 1 the finding
says so.

A replica applying ROW events is judged the same way: MariaDB counts applied
row events in Com_update, MySQL 8 leaves Com_* near 0 there, so the rate gate
keeps it quiet.

A MariaDB replica's Handler counters also count its own bookkeeping: every
transaction it applies inserts a row into ``mysql.gtid_slave_pos``, and old rows
are deleted in batches (``gtid_cleanup_batch_size``, 64). At 300 transactions/s
the lab's replica shows rows inserted 330/s beside the primary's 30/s, and rows
deleted 256 or 320/s beside 0. Those rows never mean divergence, and they only add
rows (they could hide a finding, never raise one). The inserts are taken out: the
transactions applied over the interval are the growth of ``Gtid_Slave_Pos`` (its
sequence numbers, per domain) between the two readings; the batched deletes cannot
be placed in a given second and are left in.

Thresholds: ``min_statements_per_s`` (100) gates "under load";
``max_rows_per_statement`` (0.8) is the ratio below which it fires;
``critical_rows_per_statement`` (0.3) makes it critical.
"""

from __future__ import annotations

from math import inf

from replmon.check import (
    GATE_LEVELS,
    Check,
    Explains,
    Gate,
    LevelGauges,
    Observation,
    Role,
    Severity,
    Thresholds,
    Window,
    fmt,
    gtid_slave_pos_inserts,
    numbers,
    quiet_by_level,
    round_down,
    round_up,
    source_ok,
)

KINDS = (
    # key, statement rate, row rate, verb
    ("update", "com_update_per_s", "rows_updated_per_s", "UPDATE"),
    ("delete", "com_delete_per_s", "rows_deleted_per_s", "DELETE"),
    ("insert", "com_insert_per_s", "rows_inserted_per_s", "INSERT"),
)


class Limits(Thresholds):
    min_statements_per_s: float = 100.0
    """Statements/s of a kind below which its ratio is not judged (too few to matter)."""
    max_rows_per_statement: float = 0.8
    """Rows changed per statement below which the finding fires (warning)."""
    critical_rows_per_statement: float = 0.3
    """Below this, critical: most statements do nothing."""


def _rows(w: Window, role: Role, key: str, rows: float) -> tuple[float, float | None] | None:
    """(rows/s of kind ``key`` that count, the rows/s of its own gtid_slave_pos inserts
    taken out of them: a MariaDB replica's inserts only, else None); None when it
    inserted more into gtid_slave_pos than in all (not what it seems: not judged)."""
    own = gtid_slave_pos_inserts(w.node(role), w.node(role, 1)) \
        if key == "insert" and len(w) >= 2 else None
    if own:
        if own > rows:  # more transactions than inserted rows: not what it seems
            return None
        rows -= own
    return rows, own


LEVELS = GATE_LEVELS
"""Statements/s above which the gate gives the lowest rows per statement (one gauge
each): a kind that is nearly idle (a few statements/s, 0 rows in that second) has a low
ratio that min_statements_per_s keeps out, so the lowest ratio of all kinds alone would
keep the gate loud wherever one is."""


def measure(w: Window) -> LevelGauges:
    """The highest statement rate of a kind judged by its ratio (``top``), then for each
    of LEVELS the lowest rows per statement of a kind with at least that many
    statements/s (``lowest_from_*``). Kinds at 0
    statements/s are left out (``quiet`` is never True where they count); the highest
    rate counts a kind below LEVELS[0] whose gtid_slave_pos rows would leave it out."""
    top = 0.0
    level1, level2, level3 = LEVELS
    low1 = low2 = low3 = inf  # none yet
    for role in ("primary", "replica"):
        node = w.node(role)
        if not source_ok(node, "mysql"):
            continue
        r = node.rates.mysql
        for key, stmt_field, row_field, _ in KINDS:
            stmts: float | None = getattr(r, stmt_field)
            rows: float | None = getattr(r, row_field)
            if stmts is None or rows is None or not stmts > 0:
                continue
            if stmts > top:  # before _rows: a kind it leaves out only makes top larger
                top = stmts
            if stmts < LEVELS[0]:
                continue  # in no level: its ratio (and its gtid_slave_pos rows) unused
            counted = _rows(w, role, key, rows)
            if counted is None:
                continue
            per = counted[0] / stmts
            if per < low1:  # stmts >= level1 here
                low1 = per
            if stmts >= level2 and per < low2:
                low2 = per
            if stmts >= level3 and per < low3:
                low3 = per
    return LevelGauges(round_up(top),
                       *_down_each([None if v == inf else v for v in (low1, low2, low3)]))


def _down_each(values: list[float | None]) -> list[float | None]:
    """``round_down`` of each value, once for a run of equal ones: the levels' lowest
    ratios are often one kind's, and ``round_down`` costs ~0.5 us a call."""
    out: list[float | None] = []
    last = got = None
    for v in values:
        if v is not None and v != last:
            last, got = v, round_down(v)
        out.append(None if v is None else got)
    return out


def quiet(g: LevelGauges, t: Limits) -> bool:
    """A kind is reported only when it runs at least ``min_statements_per_s`` and its
    rows per statement are below ``max_rows_per_statement`` (``critical_rows_per_statement``
    sets the severity alone). Quiet when no kind runs that fast (the highest rate below
    it), or when the lowest ratio among the kinds at the highest of LEVELS not above
    ``min_statements_per_s`` is at least ``max_rows_per_statement``: every kind judged
    is among them. Never quiet for a ``min_statements_per_s`` below 1 that the highest
    rate reaches (kinds at 0/s are left out of the gauges: they are judged only when it
    is 0 or less, and then the highest rate, at least 0, is not below it), nor for a NaN
    limit."""
    return quiet_by_level(g, t.min_statements_per_s, t.max_rows_per_statement)


def evaluate(w: Window, t: Limits) -> list[Observation]:
    out: list[Observation] = []
    for role in ("primary", "replica"):
        node = w.node(role)
        if not source_ok(node, "mysql"):
            continue
        r = node.rates.mysql
        family = r.row_counters or "rows"
        for key, stmt_field, row_field, verb in KINDS:
            stmts: float | None = getattr(r, stmt_field)
            rows: float | None = getattr(r, row_field)
            if stmts is None or rows is None or stmts < t.min_statements_per_s:
                continue
            counted = _rows(w, role, key, rows)
            if counted is None:
                continue
            rows, own = counted
            per = rows / stmts
            if per >= t.max_rows_per_statement:
                continue
            inc = node.mysql.variables.get("auto_increment_increment")
            missed_pct = max(0.0, 100.0 * (1 - per))
            cause = (f"~{missed_pct:.0f} % of {verb}s changed no row: they matched no row "
                     f"or set values already there, and returned at once")
            if inc and inc.isdigit() and int(inc) > 1 and key != "insert":
                cause += (f"; auto_increment_increment={inc} leaves {int(inc) - 1} of every "
                          f"{inc} ids empty, so random-id {verb}s miss")
            cause += ". The statement rate (TPS) is inflated."
            out.append(Observation.trusted(
                key=key, node=role,
                severity=(Severity.CRITICAL if per < t.critical_rows_per_statement
                          else Severity.WARNING),
                title=(f"{verb} {fmt(stmts)}/s but {family} rows {fmt(rows)}/s "
                       f"({per:.2f} per statement"
                       + (f"; {fmt(own)}/s gtid_slave_pos rows left out"
                          if own and key == "insert" else "") + ")"),
                numbers=numbers(statements_per_s=stmts, rows_per_s=rows,
                                rows_per_statement=per, row_counters=family,
                                gtid_slave_pos_rows_per_s=own if key == "insert" else None,
                                auto_increment_increment=int(inc) if inc and inc.isdigit()
                                else None),
                cause=cause,
                next_step=(f"Check the ids the workload uses against the table (SELECT "
                           f"MIN(id), MAX(id), COUNT(*)); compare auto_increment_increment "
                           f"and _offset on both nodes; judge throughput by rows, not "
                           f"{verb}/s."),
            ))
    return out


EXPLAINS: tuple[Explains, ...] = ()
"""It explains no other finding: it is a consequence or stands alone."""


CHECK = Check(id="stmt_vs_rows", title="Statements vs rows", needs=("mysql",),
              thresholds=Limits, evaluate=evaluate, window=60.0, explains=EXPLAINS,
              gate=Gate(measure, quiet, gauges=LevelGauges), service="mysql")
"""60 s: only the previous tick is read (its Gtid_Slave_Pos); a window other checks share."""
