"""Fixed ticks for the TUI tests: real ticks sampled from the lab once
(tests/fixtures/ticks/lab_pair.jsonl, made with `replmon sample --lab --json`),
so the screens are deterministic and show real numbers."""

from __future__ import annotations

from pathlib import Path

from replmon.model.base import SourceState, SourceStatus
from replmon.model.mysql import MysqlSample
from replmon.model.tick import Tick

FIXTURE = Path(__file__).parent.parent / "fixtures" / "ticks" / "lab_pair.jsonl"


def lab_ticks() -> list[Tick]:
    return [Tick.model_validate_json(line) for line in FIXTURE.read_text().splitlines()]


def with_replica_mysql_down(tick: Tick, since: float) -> Tick:
    down = MysqlSample(status=SourceStatus(
        state=SourceState.UNREACHABLE, since=since,
        error="(2003) Can't connect to MySQL server on '127.0.0.1' ([Errno 111] refused)"),
        wall=tick.wall, mono=tick.mono)
    replica = tick.replica.model_copy(update={"mysql": down})
    return tick.model_copy(update={"replica": replica})


def with_processlists(tick: Tick) -> Tick:
    """``tick`` with both nodes' processlists as the lab's MariaDB printed them during a
    test run (tests/live/test_mysql_source.py): on the primary the write load and a long
    report query, on the replica its applier threads and a reader holding a lock."""
    from replmon.model.mysql import ProcessRow

    lists = {
        "primary": [
            ProcessRow(id=41, time_s=73.412, user="report", host="127.0.0.1:51822", db="lab",
                       command="Query", state="Sending data",
                       info="SELECT c.region, SUM(o.total) FROM lab.orders o JOIN lab.customers"
                            " c ON c.id = o.customer_id GROUP BY c.region"),
            ProcessRow(id=57, time_s=0.004, user="root", host="localhost", db=None,
                       command="Query", state="Updating",
                       info="UPDATE lab.t SET v = v + 1 WHERE id = 812"),
        ],
        "replica": [
            ProcessRow(id=6, time_s=95.281, user="system user", host="", db=None,
                       command="Slave_IO", state="Waiting for master to send event"),
            ProcessRow(id=12, time_s=40.5, user="backup", host="127.0.0.1:40112", db=None,
                       command="Query", state="Waiting for global read lock",
                       info="FLUSH TABLES WITH READ LOCK"),
            ProcessRow(id=8, time_s=31.02, user="system user", host="", db="lab",
                       command="Slave_SQL", state="Waiting for table metadata lock",
                       info="ALTER TABLE lab.t ADD COLUMN note varchar(64)"),
        ],
    }
    return tick.model_copy(update={
        role: getattr(tick, role).model_copy(update={"mysql": getattr(tick, role).mysql
                                                     .model_copy(update={"processlist": rows})})
        for role, rows in lists.items()})
