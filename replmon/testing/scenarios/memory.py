"""Seed 002 in its own numbers, and Redis at maxmemory / a global read lock on the lab.

Seed 002 (Redis master without persistence + replica with it, 16 GB hosts, 50
clients inserting while the data set grows from 70 M to 95 M keys) is rebuilt
step by step: each data-set step of the write-up becomes ``PER_STEP`` ticks with
that step's averages. What the seed gives: inserts/s, CPU (% of one core), Redis
memory (% of RAM), page faults/s, disk reads and writes (kB/s) per node. What is
derived or estimated, and why:

- swap-in pages/s = disk reads / 4 kB (no read on either node before the ceiling:
  the reads past it are swap-ins); swap-out pages/s = the master's disk writes / 4 kB
  (it had no persistence; an upper bound), 0 on the replica (its writes are RDB dumps);
- MemAvailable % = 100 - Redis % - 12 (kernel, other processes, unreclaimable
  cache): the write-up gives Redis's own share, not MemAvailable; swapping needs
  MemAvailable near 0, and this puts it at 3 % at the ceiling;
- past the ceiling used_memory keeps growing (inserts go on at 6.8k/s) while RSS
  stays at the seed's 84.87 %: RSS below used_memory, i.e. swapped out;
- maxmemory 0, noeviction and total_system_memory as a modern Redis reports them
  (the seed's 2.6.5 printed none of them).

Swapping cannot be produced on the lab (a shared machine): seeds only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from replmon.lab.faults import (  # the lab's faults live in the product (the demo)
    redis_at_maxmemory,
)
from replmon.model.findings import Severity
from replmon.model.host import DiskRates, HostRates, HostSample, MemInfo
from replmon.model.mysql import MysqlSample
from replmon.model.redis import RedisRates, RedisReplica, RedisSample
from replmon.model.tick import NodeRates, NodeTick, Role, Tick
from replmon.testing.scenarios import LabScenario, SeedScenario, nothing
from replmon.testing.synth import node, series, status

RAM = 16 << 30
"""Bytes: the seed's 16 GB hosts."""
PER_STEP = 3
"""Ticks per data-set step of the write-up."""
KB = 1024

# Seed 002, insert test: one entry per data-set step (70 M .. 95 M keys). Master,
# then replica: CPU % of one core, Redis % of RAM, page faults/s, disk read kB/s,
# disk write kB/s. Inserts/s are the master's; the replica applies the same writes.
STEPS = (7.0, 7.5, 8.0, 8.5, 9.0, 9.5)
INSERTS = (74794.32, 74471.25, 74460.16, 73540.23, 73583.52, 6777.64)
MASTER = (
    (86.71, 68.11, 0.0, 0.0, 0.82), (95.20, 72.16, 0.0, 0.0, 0.73),
    (92.46, 76.42, 0.0, 0.0, 0.64), (93.90, 80.56, 0.0, 0.0, 0.83),
    (93.85, 84.78, 0.0, 0.0, 1.06), (10.18, 84.87, 81.06, 1986.25, 0.57),
)
REPLICA = (
    (21.93, 68.09, 0.0, 0.0, 518.44), (31.47, 72.11, 0.0, 0.0, 2317.03),
    (26.53, 76.45, 0.0, 0.0, 1437.87), (29.78, 80.52, 0.0, 0.0, 255.83),
    (29.01, 84.79, 0.0, 0.0, 667.09), (0.99, 75.52, 2.40, 75.99, 0.62),
)
CEILING = 5
"""Index in STEPS of the first step past the memory ceiling."""


def _host(cpu: float, mem_pct: float, faults: float, read_kb: float, swap_out_kb: float,
          rates: bool) -> tuple[HostSample, HostRates]:
    avail_pct = max(1.0, 100.0 - mem_pct - 12.0)
    avail = int(RAM * avail_pct / 100)
    sample = HostSample(ncpu=8, mem=MemInfo(total=RAM, available=avail))
    gauges: dict[str, Any] = dict(ncpu=8, mem_total_bytes=RAM, mem_available_bytes=avail,
                                  mem_available_pct=avail_pct)
    if not rates:
        return sample, HostRates(**gauges)
    usr = cpu / 8  # % of one core -> % of the 8-core host
    return sample, HostRates(
        dt_s=1.0, cpu_usr_pct=usr, cpu_idle_pct=100.0 - usr,
        swap_in_pages_per_s=read_kb / 4, swap_out_pages_per_s=swap_out_kb / 4,
        major_faults_per_s=faults, disk_total=DiskRates(read_bytes_per_s=read_kb * KB),
        **gauges,
    )


def _node(role: Role, n: int, i: int, first: bool) -> NodeTick:
    """One node in tick ``n`` of step ``STEPS[i]`` (``first``: the tick without rates)."""
    cpu, mem, faults, rd, wr = (MASTER if role == "primary" else REPLICA)[i]
    name = "redis42" if role == "primary" else "redis45"
    host, hrates = _host(cpu, mem, faults, rd, wr if role == "primary" else 0.0,
                         rates=not first)
    offset = 10_000_000 + n * 3_000_000  # ~40 bytes of replication stream per SET
    rss = int(RAM * mem / 100)
    common: dict[str, Any] = dict(
        run_id=f"{name}-run", uptime_s=86_400 + n, used_memory=int(RAM * 0.87)
        if i >= CEILING else rss, used_memory_rss=rss, maxmemory=0,
        maxmemory_policy="noeviction", total_system_memory=RAM,
        keys=int(STEPS[i] * 10_000_000),
    )
    lag: dict[str, int | None] = {}
    if role == "primary":
        rs = RedisSample(role="master", connected_clients=51, connected_replicas=1,
                         replicas=[RedisReplica(ip="192.168.0.45", port=6379, state="online",
                                                offset=offset, lag_s=0)],
                         master_repl_offset=offset, **common)
        lag = {"192.168.0.45:6379": 0}
    else:
        rs = RedisSample(role="replica", connected_clients=2, master_host="192.168.0.42",
                         master_port=6379, link_status="up", last_io_seconds_ago=0,
                         repl_offset=offset, master_repl_offset=offset, **common)
    rr = (RedisRates(replica_lag_bytes=lag) if first else
          RedisRates(dt_s=1.0, ops_per_s=INSERTS[i], evicted_per_s=0.0, expired_per_s=0.0,
                     full_syncs=0, replica_lag_bytes=lag))
    return node(role, name, host=host, redis=rs,
                mysql=MysqlSample(status=status("absent", "no MySQL on this host")),
                rates=NodeRates(host=hrates, redis=rr))


def seed_002(steps: Sequence[int]) -> tuple[list[Tick], int]:
    """Ticks for the STEPS indexes ``steps``, PER_STEP each, after one tick without
    rates; onset = the first tick past the ceiling (-1 when the steps stop before it)."""
    plan = [(steps[0], True)] + [(i, False) for i in steps for _ in range(PER_STEP)]
    onset = next((n for n, (i, first) in enumerate(plan) if i >= CEILING and not first), -1)
    pairs = [(_node("primary", n, i, first), _node("replica", n, i, first))
             for n, (i, first) in enumerate(plan)]
    return series(pairs), onset


def _before_ceiling() -> tuple[list[Tick], int]:
    ticks, _ = seed_002(range(CEILING))
    return ticks, 1 + 3 * PER_STEP  # first tick of step 8.5: Redis at 80.6 % of RAM


SEEDS = [
    SeedScenario("seed 002: no maxmemory, Redis reaches 80 % of RAM", "memory_ceiling",
                 _before_ceiling),
    # The no-maxmemory warning above opens before the ceiling (and Outcome.ticks_to_flag
    # counts from the first finding >= warning): raised here so the first memory_ceiling
    # finding is the one about the ceiling itself.
    SeedScenario("Redis past the memory ceiling, swapping, inserts 73.5k -> 6.8k/s",
                 "memory_ceiling", lambda: seed_002(range(CEILING + 1)),
                 min_severity=Severity.CRITICAL,
                 settings={"memory_ceiling": {"system_memory_warning_pct": 90.0}}),
    SeedScenario("seed 002: Redis inserts 73.5k -> 6.8k/s with 51 clients connected",
                 "throughput_collapse", lambda: seed_002(range(CEILING + 1)),
                 min_severity=Severity.CRITICAL),
    SeedScenario("seed 002: 70-80 M keys, below the ceiling", "",
                 lambda: seed_002(range(3))),
]


# --- the lab -----------------------------------------------------------------------

@contextlib.contextmanager
def global_read_lock(lab: Any) -> Iterator[None]:
    """FLUSH TABLES WITH READ LOCK held on its own root connection on the primary (as
    a backup tool does): every write blocks, the writer stays connected."""
    conn = lab.primary.root_connection()
    try:
        with conn.cursor() as cur:
            cur.execute("FLUSH TABLES WITH READ LOCK")
        yield
    finally:
        try:
            with conn.cursor() as cur:
                cur.execute("UNLOCK TABLES")
        finally:
            conn.close()  # closing the session releases the lock in any case
        lab.wait_replica_caught_up()


LAB = [
    LabScenario("Redis at maxmemory, allkeys-lru, evicting", "memory_ceiling",
                induce=redis_at_maxmemory, load={"rate": 200}, healthy_ticks=3, ticks=12),
    # The baseline needs loaded ticks: tick 0 has no rates, ticks 1-5 make it.
    LabScenario("FLUSH TABLES WITH READ LOCK on the primary under load",
                "throughput_collapse", induce=global_read_lock, load={"rate": 300},
                healthy_ticks=6, ticks=12),
    LabScenario("healthy write load", "", induce=nothing, load={"rate": 300},
                healthy_ticks=6, ticks=8),
]
