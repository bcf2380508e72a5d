"""partition on ticks built from the numbers the two-host lab gave under each fault
(tests/live/test_twohost_checks_live.py): the primary's Redis ACK ages, the replica's
link and IO thread, which node's sources fail and how. And the shaper a NIC's root qdisc
sets (tc -j qdisc show, as this machine's tc prints it) as link_saturation's capacity."""

from __future__ import annotations

from replmon.checks.link_saturation import CHECK as LINK
from replmon.checks.partition import CHECK

from replmon.model.findings import Severity
from replmon.model.host import HostRates, HostSample, NicRates
from replmon.model.mysql import MysqlSample, ReplicaChannel
from replmon.model.redis import RedisReplica, RedisSample
from replmon.model.tick import NodeRates
from replmon.sources.host_parse import parse_qdiscs
from replmon.testing.synth import node, observe, series, status

OK = status("ok")
TIMEOUT = status("timeout", "no answer within 0.40 s")
NO_ROUTE = status("unreachable", "10.0.0.6:6379: Error 113 connecting to 10.0.0.6:6379. "
                                 "No route to host.")


def primary(ack_age: int | None) -> object:
    reps = [] if ack_age is None else [RedisReplica(ip="10.64.0.10", port=6379,
                                                    state="online", offset=1, lag_s=ack_age)]
    return node("primary", "db163", host=HostSample(status=OK),
                mysql=MysqlSample(status=OK, variables={"read_only": "OFF"}),
                redis=RedisSample(status=OK, role="master", replicas=reps))


def replica(link: str | None = "up", io: str = "Yes", errno: int = 0, lio: int = 0,
            failed: object = None) -> object:
    if failed is not None:
        return node("replica", "db162", host=HostSample(status=failed),
                    mysql=MysqlSample(status=failed), redis=RedisSample(status=failed))
    ch = ReplicaChannel(io_running=io, sql_running=True, last_io_errno=errno)
    return node("replica", "db162", host=HostSample(status=OK),
                mysql=MysqlSample(status=OK, variables={"read_only": "ON"},
                                  replication=[ch]),
                redis=RedisSample(status=OK, role="replica", link_status=link,
                                  last_io_seconds_ago=lio))


def seen(pairs: list[tuple[object, object]]) -> list:
    return observe(CHECK, series(pairs, interval=0.5))  # type: ignore[arg-type]


def test_healthy_is_quiet() -> None:
    assert seen([(primary(0), replica())] * 10) == []


def test_the_nodes_cut_from_each_other_is_a_partition_not_a_failover() -> None:
    (o,) = seen([(primary(0), replica())] * 4
                + [(primary(4), replica("down", "Connecting", 2003))] * 4)
    assert (o.key, o.node, o.severity) == ("partition", "pair", Severity.CRITICAL)
    assert o.title.startswith("db163 and db162 cannot reach each other; both reachable "
                              "from here (Redis: db163 has had no ACK from its replica "
                              "for 4 s, db162's link down; MySQL: IO thread Connecting, "
                              "errno 2003)")
    assert "not a failover" in o.cause and "db163 read_only=OFF" in o.cause
    # an ACK still fresh: Redis streams, the IO thread's trouble is MySQL's own
    assert seen([(primary(1), replica("up", "Connecting", 2003))] * 8) == []


def test_unreachable_from_here_while_the_primary_streams_is_the_monitors_path() -> None:
    pairs = [(primary(0), replica(failed=NO_ROUTE))] * 8  # 3.5 s silent at 0.5 s
    (o,) = seen(pairs)
    assert (o.key, o.node, o.severity) == ("monitor_path", "replica", Severity.WARNING)
    assert o.title == ("db162 unreachable from here for 4 s; db163 still streams with it "
                       "(db163's Redis had its last ACK 0 s ago)")
    # not before no_ack_s: a frozen node's last ACKs are still fresh then
    assert seen(pairs[:5]) == []


def test_silent_here_and_lost_by_the_primary_is_hung_or_down() -> None:
    (o,) = seen([(primary(None), replica(failed=TIMEOUT))] * 8)
    assert (o.key, o.severity) == ("hung", Severity.CRITICAL)
    assert o.title.startswith("db162 hung: not answering here for 4 s, and db163 lost it")
    assert "stays the primary" in o.cause
    (o,) = seen([(primary(6), replica(failed=NO_ROUTE))] * 8)
    assert o.key == "down" and "neither this monitor nor db163 reaches db162" in o.cause


TBF = ('[{"kind":"noqueue","handle":"0:","dev":"lo","root":true,"options":{}},'
       '{"kind":"tbf","handle":"8045:","dev":"eth1","root":true,"refcnt":3,'
       '"options":{"rate":16000,"burst":16384,"lat":100000}}]')


def test_a_root_tbf_is_the_links_capacity() -> None:
    assert parse_qdiscs(TBF) == {"eth1": ("tbf", 128.0)}
    assert parse_qdiscs("garbled") == {}

    def sends(**nic: object) -> list:
        rates = NodeRates(host=HostRates(nics={"eth1": NicRates(
            send_bytes_per_s=16_400, recv_bytes_per_s=900, speed_mbps=10000, **nic)}))
        p = node("primary", host=HostSample(status=OK), rates=rates)
        return series([(p, node("replica"))] * 2)

    (o,) = observe(LINK, sends(shaped_kbit=128.0, shaper="tbf"))
    assert o.node == "primary" and o.key == "eth1"
    assert o.title == "eth1 sends 16 KiB/s = 102 % of 128 kbit/s (tbf)"
    assert o.numbers["shaped_kbit_s"] == 128 and o.severity is Severity.CRITICAL
    assert "tc -s qdisc show dev eth1" in o.next_step
    assert observe(LINK, sends()) == []  # the veth's 10000 Mbit/s alone: 0 %
