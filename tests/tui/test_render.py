"""The overview's wording on real lab ticks: every group named, a unit on every number,
the cross-node mark only where the two nodes should agree and do not, the header naming
the worst finding."""

from __future__ import annotations

import re
from pathlib import Path

from tickdata import lab_ticks

from replmon.model.findings import Finding, Severity
from replmon.model.tick import NodeTick
from replmon.tui import render

TICKS = lab_ticks()


def _rows(n: NodeTick, **rates: float) -> NodeTick:
    m = n.rates.mysql.model_copy(update=rates)
    return n.model_copy(update={"rates": n.rates.model_copy(update={"mysql": m})})


def test_every_group_is_named_on_both_sides() -> None:
    t = TICKS[-1]
    for node in t.nodes:
        text = "\n".join(str(f(node, None)) for f in (
            render.host_text, render.drbd_text, render.mysql_text, render.redis_text)
            if node.statuses()[f.__name__.removesuffix("_text")].ok)
        starts = [line[:6].strip() for line in text.splitlines() if line[:6].strip()]
        assert {"host", "mysql", "redis"} <= set(starts), text


def test_numbers_carry_units() -> None:
    host = str(render.host_text(TICKS[-1].primary))
    # every rate of bytes says B/s (IEC: KiB/s, MiB/s, as every view), the disk's await
    # ms, percentages %
    assert re.search(r"r [\d.]+(?:[KMGT]i)?B/s w [\d.]+(?:[KMGT]i)?B/s [\d.]+ms \d+%", host), host
    assert re.search(r"rx [\d.]+(?:[KMGT]i)?B/s tx [\d.]+(?:[KMGT]i)?B/s", host), host
    assert not re.search(r"\d[kMG]B", host), host  # never SI bytes
    for line in host.splitlines():  # no bare "key number" pair without a unit or group
        assert not re.search(r"\b(rx|tx|r|w) \d+(\.\d+)? ", line), line


def test_rows_mark_only_where_they_should_agree() -> None:
    t = TICKS[-1]
    p, r = t.primary, t.replica
    assert t.replica.rates.mysql.row_counters == "handler"
    # MariaDB's Handler counters: a replica's gtid_slave_pos inserts and deletes are not a
    # difference; its updates are compared
    assert not render.rows_differ(p, r)
    slow = _rows(r, rows_updated_per_s=1.0)
    assert render.rows_differ(p, slow)
    assert "≠" in str(render.mysql_text(p, slow)) and "≠" in str(render.mysql_text(slow, p))
    assert "≠" not in str(render.mysql_text(p, r))


def test_header_names_the_pair_and_the_worst_finding() -> None:
    t = TICKS[-1]
    f = Finding(check="stmt_vs_rows", key="update", node="primary",
                severity=Severity.WARNING, title="UPDATE 356/s but handler rows 179/s",
                since_seq=1, since_wall=t.wall, last_seq=2, worst=Severity.WARNING)
    text = str(render.header_text(t, [f, f], age_s=0.5))
    assert text.startswith(f" {t.primary.name} ") and t.replica.name in text
    assert "WARNING  stmt_vs_rows on primary +1 more" in text


def test_header_names_an_info_in_view_beside_ok() -> None:
    """A switchover's event (info) stays in the header while it is in view (#40)."""
    t = TICKS[-1]
    f = Finding(check="roles", key=t.primary.name, node="pair", severity=Severity.INFO,
                title=f"{t.primary.name} is now the primary", since_seq=1,
                since_wall=t.wall, last_seq=2, worst=Severity.INFO)
    assert " OK  roles on pair " in render.header_text(t, [f], age_s=0.5).plain
    assert " OK  roles@pair " in render.header_text(t, [f], age_s=0.5, width=70).plain
    assert " OK  roles " in render.header_text(t, [f], age_s=0.5, width=60).plain
    assert " OK   " in render.header_text(t, [], age_s=0.5).plain


def test_fit_breaks_between_words_never_inside_a_value() -> None:
    t = render.host_text(TICKS[-1].primary)
    narrow = render.fit(t, 30).plain.splitlines()
    assert all(len(line) <= 30 for line in narrow), narrow
    assert " ".join(narrow).split() == t.plain.split()  # the same words, in order
    assert render.fit(t, 200).plain == t.plain  # wide enough: untouched


def test_detail_of_every_group_for_both_nodes_with_units() -> None:
    from rich.console import Console

    from replmon.tui.detail import GROUPS, side_by_side

    t = TICKS[-1]
    for group in GROUPS:
        console = Console(width=160, record=True)
        console.print(side_by_side(t, group))
        text = console.export_text()
        assert f"{group}: primary {t.primary.name}" in text
        assert f"{group}: replica {t.replica.name}" in text
        if group == "host":
            assert re.search(r"\d+(\.\d+)?(?:[KMGT]i)?B/s", text) and "ms" in text
        if group == "redis":
            assert "replica buffer" in text or "backlog" in text
            assert re.search(r"offset\s+[\d,]+", text), text
    # a source that is not ok shows its state in place of its numbers
    from tickdata import with_replica_mysql_down

    console = Console(width=160, record=True)
    console.print(side_by_side(with_replica_mysql_down(t, t.wall), "mysql"))
    assert "UNREACHABLE: (2003) Can't connect" in console.export_text()


def test_drbd_detail_from_seed_000s_session() -> None:
    """Seed 000 (reconstructed from the field notes' /proc/drbd): the primary in
    WFConnection with out-of-sync growing, every volume and peer spelled out."""
    from pathlib import Path

    from rich.console import Console

    from replmon.session.recording import open_recording
    from replmon.tui.detail import side_by_side

    path = Path(__file__).resolve().parents[2] / "sample_sessions" / \
        "seed000_drbd_peer_disconnect.rmrec"
    with open_recording(path) as rec:
        t = rec.tick_at(len(rec) - 1)
    console = Console(width=160, record=True)
    console.print(side_by_side(t, "drbd"))
    text = console.export_text()
    assert "WFConnection" in text and "out of sync" in text and "volume 0" in text, text


def test_the_drift_view_has_a_row_for_every_setting_config_drift_judges() -> None:
    """The view's rows are named as the check's finding keys, so an open finding lands
    on its row (this caught "client-output-buffer-limit" vs "... replica")."""
    from replmon.checks.config_drift import MUST_AGREE, REDIS

    from replmon.tui.screens import DRIFT_ROWS

    rows = {name for _, name, _ in DRIFT_ROWS}
    judged = {name for name, _, _ in MUST_AGREE} | {name for name, _, _, _ in REDIS}
    assert judged | {"server_id", "auto_increment_offset"} <= rows, judged - rows


def test_a_mariadb_replicas_own_gtid_slave_pos_rows_are_said_under_its_rows() -> None:
    """#31 item 9: the replica's Handler rows (i 330 d 320 beside the primary's i 30 d 0)
    include one mysql.gtid_slave_pos insert per applied transaction and the batched
    deletes: the screen says how many under the rows, so nobody reads them as
    divergence; without a count (MySQL, the first tick) no line."""
    from replmon.session.recording import open_recording
    from replmon.tui.app import ReplmonApp

    path = Path(__file__).parents[2] / "sample_sessions" / "healthy_steady_load.rmrec"
    with open_recording(path) as rec:
        ticks = [rec.tick_at(i) for i in range(5)]
    app = ReplmonApp(None)
    for t in ticks:
        app.remember(t)
    assert set(app.gtid_rows) == {t.wall for t in ticks[1:]}
    g = app.gtid_rows[ticks[-1].wall]
    assert 250 < g < 350, g  # the lab applies ~300 transactions/s
    r = ticks[-1].replica
    text = render.mysql_text(r, ticks[-1].primary, gtid_rows_per_s=g).plain
    assert f"incl. gtid_slave_pos i/d {g:.0f}/s" in text, text
    assert "gtid_slave_pos" not in render.mysql_text(r, ticks[-1].primary).plain


def _with_variables(n: NodeTick, **variables: str) -> NodeTick:
    m = n.mysql.model_copy(update={"variables": {**n.mysql.variables, **variables}})
    return n.model_copy(update={"mysql": m})


def test_drift_values_are_never_broken_inside_a_word_at_80_or_160_columns() -> None:
    """MariaDB 10.11's defaults (its sql_mode, latin1_swedish_ci, REPEATABLE-READ) against
    a replica set up otherwise: every value whole on its line, the sql_mode broken after
    its commas only and, at 160 columns, in at most two lines (it has the room)."""
    from rich.console import Console
    from test_layout import WORD, broken_words

    from replmon.tui.screens import drift_table

    sql_mode = ("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,"
                "NO_ENGINE_SUBSTITUTION")
    t = TICKS[-1]
    p = _with_variables(t.primary, sql_mode=sql_mode, collation_server="latin1_swedish_ci",
                        transaction_isolation="REPEATABLE-READ")
    r = _with_variables(t.replica, sql_mode="STRICT_TRANS_TABLES",
                        collation_server="utf8mb4_general_ci",
                        transaction_isolation="READ-COMMITTED")
    tick = t.model_copy(update={"primary": p, "replica": r})
    words = set(WORD.findall(" ".join([sql_mode, t.primary.mysql.version or ""])))
    words |= {"latin1_swedish_ci", "utf8mb4_general_ci", "REPEATABLE-READ", "READ-COMMITTED"}
    for width, box in ((80, 74), (160, 154)):  # the terminal, the drift box's inside
        console = Console(width=box, record=True)
        console.print(drift_table(tick, [], width))
        lines = console.export_text().splitlines()
        assert not broken_words(lines, words), (width, broken_words(lines, words))
        text = "\n".join(lines)
        for whole in ("latin1_swedish_ci", "REPEATABLE-READ", "READ-COMMITTED",
                      t.primary.mysql.version or "", *sql_mode.split(",")):
            assert whole in text, (width, whole, text)
        mode_lines = [line for line in lines if "NO_" in line or "STRICT_TRANS_TABLES," in line]
        assert len(mode_lines) <= (2 if width == 160 else 4), (width, mode_lines)
