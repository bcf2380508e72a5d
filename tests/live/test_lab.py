"""The lab itself: a real replicated pair that tests can rely on."""

from __future__ import annotations

import time

import pytest

from replmon.lab import Lab

pytestmark = pytest.mark.live


def test_mysql_replication_carries_writes(lab: Lab) -> None:
    # Values no write load ever produces (the session's lab is shared by every test).
    a, b = -41_000_001, -41_000_002
    lab.primary.sql("INSERT INTO lab.t (v) VALUES (%s), (%s)", a, b)
    lab.wait_replica_caught_up()
    rows = lab.replica.sql("SELECT v FROM lab.t WHERE v IN (%s, %s) ORDER BY v", a, b)
    assert rows == [(b,), (a,)]
    status = lab.replica.sql("SELECT @@read_only, @@server_id")[0]
    assert status == (1, 2)


def test_redis_replica_follows_master(lab: Lab) -> None:
    with lab.primary.redis() as m, lab.replica.redis() as r:
        m.set("lab:test", "x")
        deadline = time.monotonic() + 5
        while r.get("lab:test") != "x" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert r.get("lab:test") == "x"
        assert r.info("replication")["role"] == "slave"


def test_lab_teardown_leaves_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lab = Lab(tmp_path / "lab")
    lab.start()
    pids = [p.pid for n in (lab.primary, lab.replica) for p in (n.mysql_proc, n.redis_proc) if p]
    assert len(pids) == 4
    lab.stop()
    import os

    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        pytest.fail(f"process {pid} still running after Lab.stop()")
