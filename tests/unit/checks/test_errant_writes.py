"""errant_writes on binlog readings as the servers print them: MariaDB 10.11
gtid_binlog_state captured on the lab (before and after one INSERT on the replica), MySQL
gtid_executed sets as the manual prints them."""

from __future__ import annotations

from replmon.checks.errant_writes import CHECK

from replmon.model.findings import Severity
from replmon.model.mysql import BinlogStatus, MysqlSample
from replmon.model.tick import Tick
from replmon.testing.scenarios.pair import replica_written
from replmon.testing.synth import node, observe, series

P_UUID = "8e349184-bc14-11e3-8d4c-0800272864ba"
R_UUID = "8e3648e4-bc14-11e3-8d4c-0800272864ba"


def readings(p: BinlogStatus, r: BinlogStatus, n: int = 4, every: int = 2) -> list[Tick]:
    return series((node("primary", mysql=MysqlSample(binlog=p if i % every == 0 else None)),
                   node("replica", mysql=MysqlSample(binlog=r if i % every == 0 else None)))
                  for i in range(n))


def maria(state: str, server_id: int) -> BinlogStatus:
    return BinlogStatus(file="binlog.000001", position=4, gtid_executed=state.split(",")[0],
                        gtid_binlog_state=state, server_id=server_id)


def mysql(gtids: str, uuid: str) -> BinlogStatus:
    return BinlogStatus(gtid_executed=gtids, server_uuid=uuid, server_id=1)


def test_mariadb_write_on_the_replica() -> None:
    (o,) = observe(CHECK, readings(maria("0-1-5281", 1), maria("0-1-5281,0-2-5282", 2), 3))
    assert (o.node, o.key, o.severity) == ("replica", "gtid", Severity.WARNING)
    assert o.title == ("errant transactions on the replica: 0-2-5282 in its binlog, written on "
                       "the replica itself (server_id 2), not from the primary (server_id 1)")


def test_mariadb_the_primarys_own_gtids_read_a_moment_later_are_not_errant() -> None:
    # the replica read after the primary wrote 0-1-5282 and applied it: not errant
    assert observe(CHECK, readings(maria("0-1-5281", 1), maria("0-1-5282", 2))) == []


def test_mariadb_history_both_sides_share_is_not_errant() -> None:
    """After a failover the old replica's GTIDs are in both states."""
    both = "0-1-9000,0-2-4000"
    assert observe(CHECK, readings(maria(both, 1), maria(both, 2))) == []
    (o,) = observe(CHECK, readings(maria("0-1-9000", 1), maria("0-1-9000,0-3-12", 2)))
    assert "from a server that is not the primary" in o.title


def test_mysql_errant_set_count_and_first() -> None:
    p = mysql(f"{P_UUID}:1-30", P_UUID)
    r = mysql(f"{P_UUID}:1-31,\n{R_UUID}:1-7", R_UUID)  # 31: applied after the primary's read
    (o,) = observe(CHECK, readings(p, r))
    assert o.title == (f"7 errant transactions on the replica, not from the primary: first "
                       f"{R_UUID}:1")
    assert o.numbers["count"] == 7 and o.numbers["errant_gtids"] == f"{R_UUID}:1-7"


def test_mysql_subset_is_quiet_and_garbage_is_quiet() -> None:
    p = mysql(f"{P_UUID}:1-30", P_UUID)
    assert observe(CHECK, readings(p, mysql(f"{P_UUID}:1-29", R_UUID))) == []
    assert observe(CHECK, readings(p, mysql("garbled:1-x", R_UUID))) == []


def test_no_readings_in_the_window_is_quiet() -> None:
    ts = readings(maria("0-1-1", 1), maria("0-1-1,0-2-2", 2), n=40, every=100)
    assert observe(CHECK, ts[1:]) == []


def test_the_seed_opens() -> None:
    ts, onset = replica_written()
    assert observe(CHECK, ts[:onset]) == []
    assert observe(CHECK, ts) != []


def test_a_multi_source_replicas_other_sources_are_not_errant() -> None:
    """GTIDs that came through another channel (its Source_UUID / source server_id) are
    not writes on the replica; one of the replica's own still is."""
    from replmon.checks.errant_writes import errant_maria, errant_mysql

    p_uuid, r_uuid, s2 = ("3e11fa47-71ca-11e1-9e33-c80aa9429562",
                          "4a8b1c2d-71ca-11e1-9e33-c80aa9429562",
                          "5c9d2e3f-71ca-11e1-9e33-c80aa9429562")
    p = BinlogStatus(gtid_executed=f"{p_uuid}:1-100", server_uuid=p_uuid)
    r = BinlogStatus(gtid_executed=f"{p_uuid}:1-100,\n{s2}:1-3", server_uuid=r_uuid)
    assert errant_mysql(p, r, frozenset({s2})) == {}
    assert errant_mysql(p, r) != {}  # without the channel's uuid: errant
    r_own = BinlogStatus(gtid_executed=f"{p_uuid}:1-100,{s2}:1-3,{r_uuid}:1",
                         server_uuid=r_uuid)
    assert list(errant_mysql(p, r_own, frozenset({s2}))) == [r_uuid]
    pm = BinlogStatus(gtid_binlog_state="0-1-100", server_id=1)
    rm = BinlogStatus(gtid_binlog_state="0-1-100,1-3-7,0-2-5", server_id=2)
    assert errant_maria(pm, rm, frozenset({3})) == ["0-2-5"]
    assert sorted(errant_maria(pm, rm)) == ["0-2-5", "1-3-7"]
