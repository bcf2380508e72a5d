"""`replmon check` as a monitoring agent runs it (no terminal): one status line whatever
the width, perfdata in the Monitoring Plugins format, long output without box drawing.

The perfdata is read back with a parser written from the guidelines' grammar
(https://www.monitoring-plugins.org/doc/guidelines.html#AEN201) and checked against the
guidelines' own examples, and each value is formatted the way the ``nagiosplugin``
package (a plugin library used by many Icinga plugins) formats the same numbers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nagiosplugin
import pytest

from replmon.model.findings import Finding, Severity
from replmon.output.nagios import CheckRun, status_line
from replmon.output.perfdata import Perf, pair_perf
from replmon.session.recording import open_recording

SESSIONS = Path(__file__).resolve().parents[2] / "sample_sessions"

# 'label'=value[UOM];[warn];[crit];[min];[max]  (label quoted when it has spaces or =;
# value "U" when it could not be determined)
_ITEM = re.compile(r"""
    (?P<label>'(?:[^']|'')+'|[^'=\s]+)=
    (?P<value>U|-?[0-9.]+(?:[eE][-+]?[0-9]+)?)(?P<uom>s|ms|us|%|B|KB|MB|TB|c)?
    (?:;(?P<warn>[^;\s]*))?(?:;(?P<crit>[^;\s]*))?(?:;(?P<min>[^;\s]*))?(?:;(?P<max>[^;\s]*))?
    (?=\s|$)""", re.X)


def parse_perfdata(text: str) -> dict[str, dict[str, str | None]]:
    """Every item of a perfdata string; a token that does not fit the grammar fails."""
    out: dict[str, dict[str, str | None]] = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _ITEM.match(text, pos)
        assert m, f"not perfdata at {pos}: {text[pos:pos + 40]!r}"
        d = m.groupdict()
        label = d.pop("label") or ""
        if label.startswith("'"):
            label = label[1:-1].replace("''", "'")
        out[label] = d
        pos = m.end()
        while pos < len(text) and text[pos] == " ":
            pos += 1
    return out


def test_the_parser_reads_the_guidelines_examples() -> None:
    got = parse_perfdata("time=0.002722s;;;0.000000 size=604B;;;0 'disk /var'=91%;80;90;0;100"
                         " lag=U;30;300;0")
    assert got["time"]["value"] == "0.002722" and got["time"]["uom"] == "s"
    assert got["lag"]["value"] == "U" and got["lag"]["crit"] == "300"
    assert got["size"]["min"] == "0" and got["disk /var"]["crit"] == "90"
    with pytest.raises(AssertionError):
        parse_perfdata("time is 3s")


@pytest.mark.parametrize("args", [
    ("replica_mysql_lag", 12, "s", 30, 300, 0, None),
    ("primary_redis_mem_used", 91.5, "%", 90, 98, 0, 100),
    ("replica_redis_offset_lag", 1048576, "B", None, None, 0, None),
    ("primary_mysql_qps", 302.1, "", None, None, 0, None),
    ("critical", 0, "", None, None, None, None),
    ("odd label", 1, "", None, None, None, None),
])
def test_each_value_is_written_as_nagiosplugin_writes_it(args: tuple) -> None:  # type: ignore[type-arg]
    label, value, uom, warn, crit, lo, hi = args
    ours = str(Perf(label, value, uom, warn, crit, lo, hi))
    theirs = str(nagiosplugin.Performance(label, value, uom, *[
        "" if v is None else v for v in (warn, crit, lo, hi)]))
    assert ours == theirs


def _finding(sev: Severity, title: str) -> Finding:
    return Finding(check="x", node="replica", severity=sev, title=title,  # type: ignore[arg-type]
                   since_seq=1, since_wall=1.0, last_seq=2, worst=sev)


def test_two_warnings_say_one_more() -> None:
    """#13: it said "(+2 warning)" after naming one of two warnings."""
    run = CheckRun(open=[_finding(Severity.WARNING, "lag 45 s"), _finding(Severity.WARNING, "b")],
                   cleared=[], ticks=3, span_s=2, nodes={"replica": "db162"})
    assert "lag 45 s (+1 warning) |" in status_line(run)
    run.open.append(_finding(Severity.INFO, "i"))
    assert "(+1 warning, +1 info) |" in status_line(run)


def test_a_pipe_in_a_title_cannot_start_the_perfdata() -> None:
    run = CheckRun(open=[_finding(Severity.CRITICAL, "a | b\nc")], cleared=[], ticks=3,
                   span_s=2, nodes={})
    line = status_line(run)
    assert line.count("|") == 1 and "\n" not in line


def test_perfdata_holds_the_replicas_lag_with_the_checks_limits() -> None:
    with open_recording(SESSIONS / "replica_lag_growing.rmrec") as rec:
        last = rec.tick_at(len(rec) - 1)
    lag = last.replica.mysql.replication[0].seconds_behind
    assert lag is not None and lag > 30
    from replmon.engine import build_engine

    items = {p.label: p for p in pair_perf(last, build_engine().limits)}
    assert items["replica_mysql_lag"] == Perf("replica_mysql_lag", lag, "s", 30.0, 300.0, 0)
    assert items["replica_mysql_sql_running"].value == 1
    assert "primary_mysql_lag" not in items  # the primary replicates from nobody


def _check(session: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replmon", "check", "--replay", str(SESSIONS / session)],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize("columns", ["40", "100"])
def test_the_status_line_is_one_line_at_any_width(columns: str) -> None:
    p = _check("replica_sql_stopped.rmrec", COLUMNS=columns)
    assert p.returncode == 2, p.stderr
    first, *rest = p.stdout.splitlines()
    assert first.startswith("REPLMON CRITICAL - incident on replica lab-replica: SQL thread "
                            "stopped")  # its root, then the lag that follows from it
    status, perf = first.split(" | ")
    items = parse_perfdata(perf)
    assert items["replica_mysql_sql_running"]["value"] == "0"
    assert items["replica_mysql_io_running"]["value"] == "1"
    # NULL while the SQL thread is down: U, the label stays (#31 item 10)
    assert items["replica_mysql_lag"]["value"] == "U"
    assert items["critical"]["value"] == "1"
    assert rest[0] == "incidents open:" and "findings open:" in rest  # plain, not a table
    assert not any(ch in p.stdout for ch in "┏━│└╭")


def test_drbd_and_redis_figures_reach_the_perfdata() -> None:
    with open_recording(SESSIONS / "drbd_peer_disconnected.rmrec") as rec:
        drbd = rec.tick_at(len(rec) - 1).primary.drbd
    kib = sum(pd.out_of_sync_kib or 0 for r in drbd.resources for c in r.connections
              for pd in c.peer_devices)
    assert kib > 60_000  # the seed's 65,724 KiB and growing
    first = _check("drbd_peer_disconnected.rmrec").stdout.splitlines()[0]
    oos = parse_perfdata(first.split(" | ")[1])["primary_drbd_out_of_sync"]
    assert oos["uom"] == "B" and int(str(oos["value"])) == kib * 1024
    first = _check("redis_maxmemory_evictions.rmrec").stdout.splitlines()[0]
    mem = parse_perfdata(first.split(" | ")[1])["primary_redis_mem_used"]
    assert mem["uom"] == "%" and float(str(mem["value"])) >= 98 and mem["crit"] == "98"
