"""The live screen's defects a tester saw in the lab demos (#54): at 80x24 a row that
flipped between disk and swap tick to tick, the nodes' names cut in the header, values
split from their units or cut, a drift row split in two; numbers that disagreed (a total
below its parts, more threads running than connected, two lag figures, GTIDs read at
different instants compared as if at one); MySQL-only numbers "unknown" on MariaDB.

Pure functions on the lab's real ticks (tests/fixtures/ticks), printed as a terminal
would: no app started (the screens that use them are walked in test_layout.py)."""

from __future__ import annotations

import io
import re

from rich.console import Console, RenderableType
from rich.text import Text
from tickdata import lab_ticks

from replmon.model.findings import Finding, Severity
from replmon.model.lag import MeasuredLag
from replmon.model.mysql import BinlogStatus, ProcessRow, channel_fields_lacking
from replmon.model.tick import NodeTick, Tick
from replmon.tui import fitting, header, render
from replmon.tui.detail import host_detail, side_by_side
from replmon.tui.findings_list import closed_words
from replmon.tui.processlist import Snapshot, node_table
from replmon.tui.screens import Numbers, drift_table, finding_numbers
from replmon.tui.wrap import UNIT, wrap_text

TICKS = lab_ticks()
HALF = 38
"""Cells of a node's column at 80x24."""


def printed(renderable: RenderableType, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text().splitlines()


def split_units(lines: list[str]) -> list[str]:
    """A number at a line's end whose unit starts the next line ("after 62" / "s:",
    "(full 501" / "us/s)")."""
    return [f"{a.strip()!r} / {b.strip()!r}" for a, b in zip(lines, lines[1:], strict=False)
            if re.search(r"\d$", a.rstrip()) and re.match(rf"\s*{UNIT}(?![\w/])", b)]


def _host(n: NodeTick, **rates: object) -> NodeTick:
    h = n.rates.host.model_copy(update=rates)
    return n.model_copy(update={"rates": n.rates.model_copy(update={"host": h})})


def _under_mem(nodes: list[NodeTick], rows: int) -> str:
    """The sub-label of the host line under "mem" in the left column once both columns
    are shed to ``rows`` lines (as the app does: ``render.kept_lines``)."""
    texts = [{"host": fitting.fit(render.host_text(n), HALF, "host")} for n in nodes]
    col = fitting.shed(texts, rows, render.kept_lines(*nodes))[0]["host"].plain.split("\n")
    return col[2].split()[0] if len(col) > 2 else ""


def test_the_row_under_mem_holds_tick_after_tick() -> None:
    """A blip of major faults on a host without swap no longer pins the swap line (it
    was red: the row under "mem" read swap one tick, disk the next); a host with swap
    keeps its swap line whether it pages or not."""
    p, r = TICKS[-1].primary, TICKS[-1].replica
    no_swap = [[_host(n, swap_total_bytes=0, major_faults_per_s=mf) for n in (p, r)]
               for mf in (0.0, 3.0, 0.0, 19.0)]
    assert {_under_mem(nodes, 3) for nodes in no_swap} == {"disk"}
    swap = [[_host(n, swap_total_bytes=1 << 30, swap_used_bytes=1 << 20,
                   major_faults_per_s=mf) for n in (p, r)] for mf in (0.0, 3.0, 0.0)]
    assert {_under_mem(nodes, 3) for nodes in swap} == {"swap"}


def _finding(t: Tick, check: str, node: str, severity: Severity, title: str) -> Finding:
    return Finding(check=check, key="", node=node, severity=severity, title=title,
                   since_seq=1, since_wall=t.wall, last_seq=2, worst=severity)


def test_the_header_keeps_both_names_and_the_panels_lag() -> None:
    """At 80 columns with a second finding open, both node names stay whole (the data's
    age goes first: it was "lab-prima… =sql BROKEN=> lab-repli…"); the header's lag is
    the replica panel's true lag, with its rounding (it said 10s, the panel 9.0s)."""
    t = TICKS[-1]
    stopped = t.replica.mysql.model_copy(update={"replication": [
        t.replica.mysql.replication[0].model_copy(update={"sql_running": False})]})
    broken = t.model_copy(update={"replica": t.replica.model_copy(update={"mysql": stopped})})
    two = [_finding(t, "mysql_replication", "replica", Severity.CRITICAL, "SQL thread stopped"),
           _finding(t, "pair_lag", "replica", Severity.WARNING, "replica 16 s behind")]
    line = header.header_text(broken, two, age_s=0.1, width=80).plain
    assert len(line) <= 80 and "…" not in line, line
    assert all(n in line for n in (t.primary.name, t.replica.name, "mysql_replication")), line

    sbm = t.replica.mysql.replication[0].model_copy(update={"seconds_behind": 10})
    lagging = t.model_copy(update={
        "lag": MeasuredLag(seconds=9.04, bound_s=0.5),
        "replica": t.replica.model_copy(update={"mysql": t.replica.mysql.model_copy(
            update={"replication": [sbm]})})})
    line = header.header_text(lagging, [], age_s=0.1, width=160).plain
    panel = render.mysql_text(lagging.replica, lagging.primary, lag=lagging.lag).plain
    assert "=sql 9.0s=>" in line and "true lag 9.0s" in panel, (line, panel)


def test_values_stay_with_their_units_and_whole() -> None:
    """A number is never split from its unit: a closed finding's "after 62 s:" in the
    findings list, the host detail's "(full 501 us/s)" at 80 columns; a processlist's
    long state goes on under its column, not at the screen's first column; a finding's
    source_uuid is whole in its view at 80 columns."""
    t = TICKS[-1]
    f = _finding(t, "mysql_replication", "replica", Severity.CRITICAL,
                 "SQL thread stopped (last_sql_errno 0)")
    f = f.model_copy(update={"state": "closed", "closed_wall": t.wall + 62})
    what = Text(f"lab-replica mysql_replication: {closed_words(f)}")
    for room in range(30, 60):  # the findings list's title column at 80 columns
        assert not split_units([x.plain for x in wrap_text(what, room)]), room
    psi = _host(t.primary, psi_cpu_some_us_per_s=12000.0, psi_memory_some_us_per_s=9000.0,
                psi_memory_full_us_per_s=501.0, psi_io_some_us_per_s=88000.0,
                psi_io_full_us_per_s=40100.0)
    for width in range(60, 81):
        assert not split_units(printed(host_detail(psi), width)), width

    state = "Waiting for the replica SQL thread to free enough relay log space"
    snap = Snapshot("lab-replica", t.wall, [ProcessRow(
        id=9, time_s=44.0, user="system user", command="Slave_IO", state=state)])
    lines = printed(node_table("replica", snap, ref=t.wall, now=t.wall, asked=False,
                               width=80), 74)
    body = lines[2:]  # under the heading and the columns' names
    assert " ".join(" ".join(body).split()).count(state) == 1, lines
    assert all(line.startswith("  ") for line in body), lines

    uuid = "3e11fa47-71ca-11e1-9e33-c80aa94202fc"
    long = f.model_copy(update={"numbers": {"lag_when_receiver_lost_source_s": 3.0,
                                            "source_uuid": uuid}})
    for width in (64, 66, 70, 100):
        assert uuid in "\n".join(printed(Numbers(finding_numbers(long)), width)), width


def test_a_drift_setting_is_one_row_at_80_columns() -> None:
    """client-output-buffer-limit replica: its name on one line beside its value (it
    wrapped, its second line a row with no value)."""
    t = TICKS[-1]
    limit = t.primary.redis.model_copy(update={"replica_buffer_limit": (256 << 20, 64 << 20, 60)})
    tick = t.model_copy(update={
        "primary": t.primary.model_copy(update={"redis": limit}),
        "replica": t.replica.model_copy(update={"redis": limit})})
    for width, box in ((80, 74), (160, 154)):
        lines = printed(drift_table(tick, [], width), box)
        row = [line for line in lines if "client-output-buffer-limit" in line]
        assert len(row) == 1 and "client-output-buffer-limit replica" in row[0] \
            and "256 MiB" in row[0], (width, lines)
        assert not any(line.strip() == "replica" for line in lines), (width, lines)


def test_numbers_that_agree() -> None:
    """The replica's clients' statements are not written as the total of the kinds it
    applies (5/s: update 268/s); threads running and connected are not written as a part
    of a whole (3 running, 1 connected); its channel says how far apart from the
    primary's binary-log reading it was read (GTIDs of two instants)."""
    t = TICKS[-1]
    assert t.replica.mysql.gauges["Threads_running"] > t.replica.mysql.gauges[
        "Threads_connected"]  # the lab's replica: its replication threads run
    sent = t.replica.mysql.wall - 0.25
    binlog = BinlogStatus(file="binlog.000002", position=1234, gtid_executed="0-1-900",
                          sent_wall=sent, elapsed_ms=1.0)
    text = "\n".join(printed(side_by_side(t, "mysql", width=100, binlogs={  # one above
        t.primary.name: (binlog, 0.0)}), 300))  # the other, a row a line
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r"^\s*(statements|by kind|connections|running|read)\s+(.*?)\s*$", text, re.M)}
    assert "select" not in rows["statements"] and "from clients" in rows["statements"], rows
    assert "Com_*" in rows["by kind"] and "applier" in rows["by kind"], rows
    assert not re.search(r"\d+ running, \d+ connected", text), text
    assert "clients" in rows["connections"] and "server's own" in rows["running"], rows
    assert f"0.250 s after {t.primary.name}'s binary log" in text, text
    overview = render.mysql_text(t.replica, t.primary).plain
    assert "run/conn" not in overview and re.search(r"conn \d+ run \d+", overview), overview


def test_a_mariadb_finding_lists_no_mysql_only_number() -> None:
    """A MariaDB replica's finding leaves out what only MySQL reports (source_uuid, the
    error timestamps, the workers') instead of "unknown"; "unknown" stays for a number the
    server has that did not arrive, and a MySQL replica's view keeps its own."""
    t = TICKS[-1]
    numbers = {"io_running": "Yes", "sql_running": False, "source_uuid": None,
               "last_io_error_time": None, "last_sql_error_time": None,
               "retried_transactions": None, "worker_errno": None, "failed_gtid": None,
               "applying_age_s": None, "applied_latency_s": None,
               "relay_log_space_bytes": None}
    f = _finding(t, "mysql_replication", "replica", Severity.CRITICAL, "SQL thread stopped")
    f = f.model_copy(update={"numbers": numbers})
    maria = dict(finding_numbers(f, channel_fields_lacking("mariadb")))
    assert set(maria) == {"io_running", "sql_running", "retried_transactions",
                          "relay_log_space_bytes"}, maria
    assert maria["relay_log_space_bytes"] == "unknown" and maria["sql_running"] == "No"
    mysql = dict(finding_numbers(f, channel_fields_lacking("mysql")))
    assert "source_uuid" in mysql and "retried_transactions" not in mysql, mysql
