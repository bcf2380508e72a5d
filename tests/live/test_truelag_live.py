"""True lag from the first tick (issue 44), beside a real pt-heartbeat (percona-toolkit).

On three labs at once (MariaDB 10.11 with the heartbeat table given to replmon; MariaDB
11.8 and Oracle MySQL 9.7 without it: the servers' own commit timestamps), pt-heartbeat
--update writes the primary's row every 0.5 s (it is also the write load), and in three
situations, healthy, MASTER_DELAY=20 and the SQL thread stopped for 20 s more (>= 40 s),
``replmon check --duration 5`` must say the lag pt-heartbeat --check says on the replica,
within 2.5 s, naming the source. The three labs run their situations in threads: one
wait of ~20 s serves all three.

pt-heartbeat 3.2.1 (Debian's) runs SHOW MASTER STATUS when its table has the file and
position columns, which MySQL 8.4+ refuses: the table here has pt-heartbeat's two
required columns only (ts, server_id), as its documentation allows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from labpool import MYSQL97, LabPool, group

from replmon.lab import Lab

pytestmark = [pytest.mark.live, group(MYSQL97)]

PT = shutil.which("pt-heartbeat")
TABLE = "percona.heartbeat"


def _toml(lab: Lab) -> str:
    out = ["interval = 1.0"]
    for node in (lab.primary, lab.replica):
        out += [f"[{node.name}]", f'host = "{node.host}"', f'name = "lab-{node.name}"',
                f"[{node.name}.mysql]", f"port = {node.mysql_port}",
                f'user = "{lab.monitor_user}"', f'password = "{lab.monitor_password}"',
                f"[{node.name}.redis]", "enabled = false"]
    return "\n".join(out) + "\n"


def _is_mysql(lab: Lab) -> bool:
    return lab.is_mysql


def _replica_sql(lab: Lab, *statements: str) -> None:
    for s in statements:
        lab.mysql_replica.sql(s)


def _set_delay(lab: Lab, seconds: int) -> None:
    if _is_mysql(lab):
        _replica_sql(lab, "STOP REPLICA", f"CHANGE REPLICATION SOURCE TO SOURCE_DELAY={seconds}",
                     "START REPLICA")
    else:
        _replica_sql(lab, "STOP SLAVE", f"CHANGE MASTER TO MASTER_DELAY={seconds}",
                     "START SLAVE")


def _stop_sql(lab: Lab) -> None:
    _replica_sql(lab, "STOP REPLICA SQL_THREAD" if _is_mysql(lab) else "STOP SLAVE SQL_THREAD")


@contextmanager
def pt_heartbeat(lab: Lab) -> Iterator[int]:
    """pt-heartbeat --update on the primary every 0.5 s; yields the primary's server_id."""
    p = lab.mysql_primary
    p.sql("CREATE DATABASE IF NOT EXISTS percona")
    p.sql("CREATE TABLE IF NOT EXISTS percona.heartbeat "
          "(ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY)")
    p.sql(f"GRANT SELECT ON percona.* TO '{lab.monitor_user}'@'%'")
    sid = int(p.sql("SELECT @@server_id")[0][0])
    assert PT is not None
    proc = subprocess.Popen([PT, "--update", "--replace", "--interval", "0.5", "-D", "percona",
                             f"--socket={p.mysql_socket}", "-u", "root"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield sid
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        assert proc.returncode in (0, -15), err.decode()[-500:]


def pt_check(lab: Lab, sid: int) -> float:
    assert PT is not None
    out = subprocess.run([PT, "--check", "-D", "percona", "--master-server-id", str(sid),
                          f"--socket={lab.mysql_replica.mysql_socket}", "-u", "root"],
                         capture_output=True, text=True, timeout=30, check=True)
    return float(out.stdout.strip())


def replmon_check(config: Path, *extra: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "replmon", "check", "--config", str(config), "--no-host",
         "--no-drbd", "--duration", "5", "--format", "json", *extra],
        capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode in (0, 1, 2), out.stderr[-800:]
    return dict(json.loads(out.stdout))


def _perf(run: dict[str, Any], label: str) -> str:
    summary = str(run["summary"])
    field = next(f for f in summary.split("|", 1)[1].split() if f.startswith(label + "="))
    return field.split("=", 1)[1].split(";")[0]


def situations(lab: Lab, config: Path, heartbeat: bool, out: dict[str, Any]) -> None:
    """Healthy, delayed 20 s, then the SQL thread stopped 20 s more: (replmon, pt) each."""
    extra = ("--heartbeat-table", TABLE) if heartbeat else ()
    with pt_heartbeat(lab) as sid:
        try:
            time.sleep(2)
            for name in ("healthy", "delay", "stopped"):
                if name == "delay":
                    _set_delay(lab, 20)
                    time.sleep(21)
                elif name == "stopped":
                    _stop_sql(lab)
                    time.sleep(20)
                run = replmon_check(config, *extra)
                out[name] = (run, pt_check(lab, sid))
        finally:
            _set_delay(lab, 0)
    lab.wait_replica_caught_up(30)
    lab.mysql_primary.sql("DROP DATABASE IF EXISTS percona")


@pytest.mark.skipif(PT is None, reason="percona-toolkit is not installed (./.ci/setup)")
def test_check_says_what_pt_heartbeat_says(lab: Lab, lab_pool: LabPool,
                                           tmp_path: Path) -> None:
    want = {"mariadb-10.11": True, "mariadb-11.8": False, "mysql-9.7": False}
    labs: dict[str, tuple[Lab, bool]] = {}
    results: dict[str, dict[str, Any]] = {k: {} for k in want}
    errors: list[BaseException] = []

    def run(key: str) -> None:
        try:
            if key == "mariadb-10.11":
                the_lab = lab
            else:  # the pool's labs (the matrix shares them) start side by side, each its own
                the_lab = lab_pool.get(*(MYSQL97 if key == "mysql-9.7"
                                         else ("mariadb-11.8", "redis-8.0")))
            labs[key] = (the_lab, want[key])
            config = tmp_path / f"{key}.toml"
            config.write_text(_toml(the_lab))
            situations(the_lab, config, want[key], results[key])
        except BaseException as e:  # reported below, with the other labs' results
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in want]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    if errors:
        raise errors[0]
    seen = {k: {s: (r[0]["lag"], r[1]) for s, r in v.items()} for k, v in results.items()}
    for key, by_situation in seen.items():  # the figures, for -rP and the report
        for name, (lag, pt) in by_situation.items():
            print(f"{key:14} {name:8} replmon {lag and lag['seconds']} s "
                  f"({lag and lag['source']}, +/- {lag and lag['bound_s']} s)  "
                  f"pt-heartbeat {pt} s")
    for key, by_situation in results.items():
        source = "heartbeat" if labs[key][1] else "server"
        for name, (run, pt) in by_situation.items():
            lag = run["lag"]
            assert lag is not None and lag["source"] == source, (key, name, seen)
            assert abs(lag["seconds"] - pt) <= 2.5, (key, name, lag, pt)
            assert float(_perf(run, "replica_mysql_lag_measured").rstrip("s")) == \
                pytest.approx(lag["seconds"], abs=0.06)
            assert "behind (+/- " in run["summary"] and source in run["summary"].replace(
                "heartbeat table", "heartbeat").replace("server commit timestamps", "server")
            if name == "healthy":
                assert pt < 1.5 and lag["seconds"] < 2.0, (key, seen)
            elif name == "delay":
                assert 18.0 <= pt <= 23.0, (key, seen)
            else:
                assert pt >= 40.0, (key, seen)
