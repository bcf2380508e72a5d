"""Fixed ticks for the TUI tests: real ticks sampled from the lab once
(tests/fixtures/ticks/lab_pair.jsonl, made with `replmon sample --lab --json`),
so the screens are deterministic and show real numbers."""

from __future__ import annotations

from pathlib import Path

from replmon.model.base import SourceState, SourceStatus
from replmon.model.mysql import MysqlSample
from replmon.model.tick import NodeTick, Tick

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


GIVEN_PRIMARY, GIVEN_REPLICA = "db163", "db162"
"""The pair of switchover_ticks as the command line gives it (issue #40's lab)."""


def switchover_ticks(before: int = 5, after: int = 5, stopped: int = 0) -> list[Tick]:
    """Ticks of a planned switchover, oriented as the collector does it
    (``replmon.roles.Orienter``): db163 (given as the primary) replicates to db162 for
    ``before`` ticks; then db162 is promoted (one tick: Redis moved, neither MySQL
    channel set), and for ``after`` ticks db163 replicates from db162 (its channel's
    ``source_server_id`` is db162's). One tick per second from synth.T0 (22:13:20 UTC):
    the primary changes at 22:13:25. In the last ``stopped`` ticks db163's applier has
    stopped (a finding on db163, now the replica)."""
    from replmon.model.mysql import ReplicaChannel
    from replmon.model.redis import RedisReplica, RedisSample
    from replmon.roles import Orienter
    from replmon.testing.synth import T0, node, status

    sid = {GIVEN_PRIMARY: 163, GIVEN_REPLICA: 162}

    def mysql(name: str, follows: str | None, applying: bool = True) -> MysqlSample:
        channels = [] if follows is None else [ReplicaChannel(
            io_running="Yes", sql_running=applying, seconds_behind=0 if applying else None,
            source_host="10.0.0.1", source_port=3306, source_server_id=sid[follows])]
        return MysqlSample(status=status("ok"), flavour="mariadb", replication=channels,
                           variables={"server_id": str(sid[name]),
                                      "read_only": "ON" if follows else "OFF"})

    def redis(role: str) -> RedisSample:
        if role == "master":
            return RedisSample(status=status("ok"), role="master", master_replid="r1",
                               repl_offset=1000, connected_replicas=1, replicas=[
                                   RedisReplica(ip="10.0.0.2", port=6379, state="online",
                                                offset=1000, lag_s=0)])
        return RedisSample(status=status("ok"), role="replica", master_replid="r1",
                           repl_offset=1000, link_status="up", master_host="10.0.0.1",
                           master_port=6379)

    def pair(follows: str | None, followed: str | None, a_redis: str, b_redis: str,
             applying: bool = True) -> tuple[NodeTick, NodeTick]:
        """(given primary, given replica); ``follows`` / ``followed``: whom each reads from."""
        return (node("primary", GIVEN_PRIMARY, mysql=mysql(GIVEN_PRIMARY, follows, applying),
                     redis=redis(a_redis), given="primary"),
                node("replica", GIVEN_REPLICA, mysql=mysql(GIVEN_REPLICA, followed),
                     redis=redis(b_redis), given="replica"))

    states = ([pair(None, GIVEN_PRIMARY, "master", "replica")] * before
              + [pair(None, None, "replica", "master")]
              + [pair(GIVEN_REPLICA, None, "replica", "master")] * (after - stopped)
              + [pair(GIVEN_REPLICA, None, "replica", "master", applying=False)] * stopped)
    orienter = Orienter()
    out = []
    for i, (a, b) in enumerate(states):
        wall = T0 + i
        p, r, roles = orienter.orient(a, b, wall)
        out.append(Tick(seq=i, interval=1.0, wall=wall, mono=float(i), due_mono=float(i),
                        slot=i, primary=p, replica=r, roles=roles))
    return out
