"""#31 item 10: the perfdata keeps the replica's lag when it matters. With the SQL thread
stopped, Seconds_Behind_Master is NULL: ``replica_mysql_lag=U`` (the guidelines' "could
not be determined", https://www.monitoring-plugins.org/doc/guidelines.html#AEN201), not a
missing label; and the lag replmon measures from both nodes (pair_lag: seconds,
transactions and bytes behind) is there beside it. The label set is the same on a
healthy pair, so PNP4Nagios or Grafana keep their series.

The ticks are the lab's real MariaDB 10.11 recordings (sample_sessions/): a replica whose
SQL thread was stopped at tick 30 under 300 transactions/s, and a healthy pair under the
same load, with the primary's own binlog readings every 2 ticks (pair_lag's
``positions_every``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_check_plugin_output import parse_perfdata

from replmon.engine import build_engine
from replmon.model.base import SourceState
from replmon.model.mysql import MysqlSample
from replmon.model.tick import Tick
from replmon.output.nagios import CheckSummary, status_line
from replmon.output.perfdata import Perf, pair_perf
from replmon.session.recording import open_recording
from replmon.testing.synth import status

SESSIONS = Path(__file__).resolve().parents[2] / "sample_sessions"
MEASURED = ("replica_mysql_lag_measured", "replica_mysql_trx_behind",
            "replica_mysql_bytes_behind")


def recording(name: str) -> list[Tick]:
    with open_recording(SESSIONS / name) as rec:
        return [rec.tick_at(i) for i in range(len(rec))]


def check_run(ticks: list[Tick]) -> dict[str, dict[str, str | None]]:
    """What ``replmon check`` prints after the ``|`` for a run over ``ticks``."""
    summary = CheckSummary()
    for t in ticks:
        summary.on_tick(t, None)
    run = summary.result(ticks=len(ticks), limits=build_engine().limits)
    return parse_perfdata(status_line(run).split(" | ")[1])


STOPPED = recording("replica_sql_stopped.rmrec")
HEALTHY = recording("healthy_steady_load.rmrec")


def test_sql_thread_stopped_the_lag_is_u_and_the_measured_lag_is_there() -> None:
    last = STOPPED[-1].replica.mysql.replication[0]
    assert last.seconds_behind is None and not last.sql_running  # the facts of the case
    items = check_run(STOPPED)
    assert items["replica_mysql_lag"] == {"value": "U", "uom": None, "warn": "30",
                                          "crit": "300", "min": "0", "max": None}
    assert items["replica_mysql_sql_running"]["value"] == "0"
    # stopped at tick 30 (0-1-5420 executed): the reading of tick 30 (0-1-5510) is the
    # oldest the replica lacks, 119 s before the last tick
    lag = items["replica_mysql_lag_measured"]
    assert (lag["value"], lag["uom"], lag["warn"], lag["crit"]) == ("119", "s", "10", "120")
    newest = STOPPED[-2].primary.mysql.binlog  # tick 148's reading: 0-1-21520
    assert newest is not None and newest.position is not None
    assert items["replica_mysql_trx_behind"]["value"] == str(21520 - 5420)
    assert items["replica_mysql_trx_behind"]["uom"] is None  # a plain number
    assert items["replica_mysql_bytes_behind"] == {
        "value": str(newest.position - 1293442), "uom": "B", "warn": "", "crit": "",
        "min": "0", "max": None}


def test_a_healthy_pair_has_the_same_labels_with_numbers() -> None:
    stopped, healthy = check_run(STOPPED), check_run(HEALTHY)
    assert list(healthy) == list(stopped)
    assert healthy["replica_mysql_lag"]["value"] == "0"
    for label in MEASURED:
        assert healthy[label]["value"] != "U", label
    assert int(str(healthy["replica_mysql_lag_measured"]["value"])) <= 2  # readings 2 s apart
    assert int(str(healthy["replica_mysql_trx_behind"]["value"])) < 300  # under 1 s of writes


def test_every_run_of_a_pair_gives_the_same_label_set() -> None:
    """Runs of 10 ticks (``replmon check``'s default --duration) along both recordings:
    one label set, whatever the replica was doing."""
    sets = {tuple(check_run(ts[i:i + 10])) for ts in (STOPPED, HEALTHY)
            for i in range(0, len(ts) - 10, 7)}
    assert len(sets) == 1


def test_behind_since_before_the_run_is_u_seconds_with_exact_transactions() -> None:
    """A 10-tick run 100 s after the stop, of ticks without the collector's lag (a
    recording made before ticks carried it; a live ``check`` has 10 ticks of its own):
    every reading in it is unexecuted, so the lag is only known to be over 10 s; a lower
    bound would graph a false 10 s plateau. The transactions and bytes behind are
    exact. The same ticks as recorded, each with the lag measured over the 300 s before
    it: that lag, as the screen showed it."""
    items = check_run([t.model_copy(update={"lag": None}) for t in STOPPED[-10:]])
    assert items["replica_mysql_lag_measured"]["value"] == "U"
    assert int(str(items["replica_mysql_trx_behind"]["value"])) > 15_000
    assert int(str(items["replica_mysql_bytes_behind"]["value"])) > 3_500_000
    recorded = STOPPED[-1].lag
    assert recorded is not None and recorded.seconds is not None
    items = check_run(STOPPED[-10:])
    assert items["replica_mysql_lag_measured"]["value"] == f"{recorded.seconds:.0f}" == "119"


def test_an_unreadable_replica_keeps_its_labels_as_u() -> None:
    """The replica's MySQL stops answering in the last tick: its labels stay, U."""
    t = STOPPED[-1]
    down = t.replica.model_copy(update={"mysql": MysqlSample(
        status=status("unreachable", "connection refused"))})
    ticks = [*STOPPED[-20:-1], t.model_copy(update={"replica": down})]
    items = check_run(ticks)
    assert list(items) == list(check_run(STOPPED[-20:]))
    for label in ("replica_mysql_qps", "replica_mysql_lag", "replica_mysql_io_running",
                  "replica_mysql_sql_running", *MEASURED):
        assert items[label]["value"] == "U", label
    # never read in the run at all: the labels of a replica's default channel
    assert list(check_run([ticks[-1]])) == list(items)


def test_u_is_written_without_a_unit_and_keeps_the_other_fields() -> None:
    assert str(Perf("replica_mysql_lag", None, "s", 30, 300, 0)) == "replica_mysql_lag=U;30;300;0"
    assert str(Perf("x", None)) == "x=U"


@pytest.mark.parametrize("state", [SourceState.ABSENT])
def test_a_source_that_is_not_configured_gives_no_label(state: SourceState) -> None:
    t = HEALTHY[-1]
    gone = t.replica.model_copy(update={"mysql": MysqlSample(status=status(state.value))})
    labels = [p.label for p in pair_perf(t.model_copy(update={"replica": gone}))]
    assert not any(label.startswith("replica_mysql") for label in labels)
