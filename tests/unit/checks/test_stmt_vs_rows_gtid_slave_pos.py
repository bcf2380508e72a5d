"""#31 item 9: a MariaDB replica's rows include its own mysql.gtid_slave_pos bookkeeping
(an insert per applied transaction, deletes in batches of gtid_cleanup_batch_size, 64).
The screen showed the replica's ``rows/s i 327 u 267 d 256`` beside the primary's
``i 30 u 266 d 0``: no check may read that as a problem, and stmt_vs_rows takes the
inserts out (the transactions applied: Gtid_Slave_Pos's growth between two readings).

The recording is the lab's (sample_sessions/healthy_steady_load.rmrec: MariaDB 10.11,
ROW binlog, 300 transactions/s: INSERT 30/s, UPDATE 270/s)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from replmon.checks.stmt_vs_rows import CHECK

from replmon.check import Window
from replmon.model.findings import Severity
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.mysql_rates import MysqlRates
from replmon.model.tick import NodeRates, NodeTick, Role, Tick
from replmon.pair import gtid_slave_pos_inserts
from replmon.plugins import discover
from replmon.session.recording import open_recording
from replmon.testing.synth import node, observe, run_check, tick

SESSIONS = Path(__file__).resolve().parents[3] / "sample_sessions"


def inserts(ticks: Sequence[Tick], role: Role) -> float | None:
    """gtid_slave_pos_inserts of ``role`` at the last of ``ticks``, as stmt_vs_rows asks
    it (None without a tick before: nothing to count from)."""
    if len(ticks) < 2:
        return None
    w = Window(ticks)
    return gtid_slave_pos_inserts(w.node(role), w.node(role, 1))


def mariadb(role: str, gtid_pos: str | None, *, ins: float, upd: float, dele: float,
            rows: tuple[float, float, float], family: str = "handler") -> NodeTick:
    """A MariaDB node; ``gtid_pos``: its Gtid_Slave_Pos when it is a replica."""
    chans = [] if gtid_pos is None else [ReplicaChannel(
        io_running="Yes", sql_running=True, seconds_behind=0, gtid_executed=gtid_pos,
        gtid_executed_server_wide=True)]
    sample = MysqlSample(flavour="mariadb", version="10.11.19-MariaDB", replication=chans,
                         variables={"auto_increment_increment": "1"})
    rates = MysqlRates(dt_s=1.0, row_counters=family, com_insert_per_s=ins,
                       com_update_per_s=upd, com_delete_per_s=dele,
                       rows_inserted_per_s=rows[0], rows_updated_per_s=rows[1],
                       rows_deleted_per_s=rows[2])
    return node(role, mysql=sample, rates=NodeRates(mysql=rates))  # type: ignore[arg-type]


PRIMARY = mariadb("primary", None, ins=30, upd=266, dele=0, rows=(30, 266, 0))


def screen_pair(applied: int = 297, **replica: object) -> list[Tick]:
    """The screen's numbers: the replica applied ``applied`` transactions in the second
    (Gtid_Slave_Pos 0-1-1000 -> 0-1-(1000 + applied))."""
    kw: dict[str, object] = {"ins": 30, "upd": 267, "dele": 0, "rows": (327, 267, 256)}
    kw.update(replica)
    before = mariadb("replica", "0-1-1000", **kw)  # type: ignore[arg-type]
    now = mariadb("replica", f"0-1-{1000 + applied}", **kw)  # type: ignore[arg-type]
    return [tick(0, primary=PRIMARY, replica=before), tick(1, primary=PRIMARY, replica=now)]


def test_the_screens_numbers_raise_no_finding_of_any_check() -> None:
    """i 327 u 267 d 256 on the replica, i 30 u 266 d 0 on the primary: every check of
    replmon on it (the row counters are read by stmt_vs_rows only)."""
    ticks = screen_pair()
    checks, _ = discover(entry_points=False)
    for c in checks:
        out = observe(c, ticks)
        assert [o for o in out if "row" in o.title.lower()] == [], (c.id, out)
    assert observe(CHECK, ticks) == []
    assert observe(CHECK, ticks, min_statements_per_s=20) == []  # inserts judged too


def test_the_inserts_are_the_transactions_applied() -> None:
    assert inserts(screen_pair(), "replica") == 297.0
    assert inserts(screen_pair(), "primary") is None  # no channel


@pytest.mark.parametrize("case", ["innodb", "first tick", "new domain", "garbled"])
def test_no_adjustment_without_a_sure_count(case: str) -> None:
    ticks = screen_pair()
    if case == "innodb":  # MySQL: InnoDB's counters have no system-table rows
        ticks = [tick(i, primary=PRIMARY, replica=mariadb(
            "replica", f"0-1-{1000 + 297 * i}", ins=30, upd=267, dele=0,
            rows=(327, 267, 256), family="innodb")) for i in range(2)]
    elif case == "first tick":
        ticks = ticks[1:]
    else:
        pos = "0-1-1297,1-2-5000000" if case == "new domain" else "0-1-x"
        ticks[1] = tick(1, primary=PRIMARY, replica=mariadb(
            "replica", pos, ins=30, upd=267, dele=0, rows=(327, 267, 256)))
    assert inserts(ticks, "replica") is None


def test_left_out_inserts_reveal_a_replica_whose_inserts_do_nothing() -> None:
    """A statement-based replica replaying INSERT IGNOREs that hit existing keys: 300/s,
    60 rows/s really inserted; its 300 gtid_slave_pos rows made it read 1.2 per
    statement. Without them: 0.2, critical, and the title says what was left out."""
    ticks = screen_pair(applied=300, ins=300, rows=(360, 267, 256))
    (o,) = observe(CHECK, ticks)
    assert (o.node, o.key, o.severity) == ("replica", "insert", Severity.CRITICAL)
    assert o.title == ("INSERT 300/s but handler rows 60/s (0.20 per statement; 300/s "
                       "gtid_slave_pos rows left out)")
    assert o.numbers["gtid_slave_pos_rows_per_s"] == 300.0


def test_more_transactions_than_inserted_rows_is_not_judged() -> None:
    """The counts do not fit one insert per transaction (a reading between the two
    queries): nothing is concluded."""
    assert observe(CHECK, screen_pair(applied=900, ins=300, rows=(360, 267, 256))) == []


def test_the_lab_recording_raises_nothing_and_the_counts_match() -> None:
    """Every tick of the recording: the replica's rows inserted less the transactions it
    applied (Gtid_Slave_Pos) are the INSERT row events it applied (its Com_insert),
    within 10 rows/s of the load's ~300 (SHOW STATUS and SHOW SLAVE STATUS are two queries
    a few ms apart, tens of ms on the loaded machine the session was recorded on); over
    the recording, the primary's rows inserted (within 1 %)."""
    with open_recording(SESSIONS / "healthy_steady_load.rmrec") as rec:
        ticks = [rec.tick_at(i) for i in range(len(rec))]
    net, primary = 0.0, 0.0
    for i in range(2, len(ticks)):
        own = inserts(ticks[i - 1:i + 1], "replica")
        r, p = ticks[i].replica.rates.mysql, ticks[i].primary.rates.mysql
        if (own is None or r.rows_inserted_per_s is None or r.com_insert_per_s is None
                or p.rows_inserted_per_s is None):
            continue
        assert 100 < own < 500, i  # the lab's load: 300 transactions/s (less on a busy machine)
        assert abs(r.rows_inserted_per_s - own - r.com_insert_per_s) < 10, i
        net += r.rows_inserted_per_s - own
        primary += p.rows_inserted_per_s
    assert primary > 4000 and abs(net - primary) / primary < 0.01
    open_now, opened = run_check(CHECK, ticks, min_statements_per_s=20)
    assert open_now == [] and opened == {}
