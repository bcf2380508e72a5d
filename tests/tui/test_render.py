"""The overview's wording on real lab ticks: every group named, a unit on every number,
the cross-node mark only where the two nodes should agree and do not, the header naming
the worst finding."""

from __future__ import annotations

import re
from pathlib import Path

from tickdata import lab_ticks

from replmon.model.findings import Finding, Severity
from replmon.model.tick import NodeTick
from replmon.tui import fitting, header, render

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
    assert re.search(r"r +[\d.]+(?:[KMGT]i)?B/s w +[\d.]+(?:[KMGT]i)?B/s [\d.]+ms \d+%", host), host
    assert re.search(r"rx +[\d.]+(?:[KMGT]i)?B/s tx +[\d.]+(?:[KMGT]i)?B/s", host), host
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
    text = str(header.header_text(t, [f, f], age_s=0.5))
    assert text.startswith(f" {t.primary.name} ") and t.replica.name in text
    assert "WARNING  stmt_vs_rows on primary +1 more" in text


def test_header_names_an_info_in_view_beside_ok() -> None:
    """A switchover's event (info) stays in the header while it is in view (#40)."""
    t = TICKS[-1]
    f = Finding(check="roles", key=t.primary.name, node="pair", severity=Severity.INFO,
                title=f"{t.primary.name} is now the primary", since_seq=1,
                since_wall=t.wall, last_seq=2, worst=Severity.INFO)
    assert " OK  roles on pair " in header.header_text(t, [f], age_s=0.5).plain
    assert " OK  roles@pair " in header.header_text(t, [f], age_s=0.5, width=70).plain
    assert " OK  roles " in header.header_text(t, [f], age_s=0.5, width=60).plain
    assert " OK   " in header.header_text(t, [], age_s=0.5).plain


def test_fit_breaks_between_words_never_inside_a_value() -> None:
    t = render.host_text(TICKS[-1].primary)
    narrow = fitting.fit(t, 30).plain.splitlines()
    assert all(len(line) <= 30 for line in narrow), narrow
    assert " ".join(narrow).split() == t.plain.split()  # the same words, in order
    assert fitting.fit(t, 200).plain == t.plain  # wide enough: untouched


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
        "drbd_peer_disconnected.rmrec"
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
    from replmon.tui.feeds import TickMemory

    path = Path(__file__).parents[2] / "sample_sessions" / "healthy_steady_load.rmrec"
    with open_recording(path) as rec:
        ticks = [rec.tick_at(i) for i in range(5)]
    memory = TickMemory()
    for t in ticks:
        memory.remember(t)
    assert set(memory.gtid_rows) == {t.wall for t in ticks[1:]}
    g = memory.gtid_rows[ticks[-1].wall]
    assert 250 < g < 350, g  # the lab applies ~300 transactions/s
    r = ticks[-1].replica
    text = render.mysql_text(r, ticks[-1].primary, gtid_rows_per_s=g).plain
    assert f"incl. gtid_slave_pos i/d {g:.0f}/s" in text, text
    assert "gtid_slave_pos" not in render.mysql_text(r, ticks[-1].primary).plain


def _host(n: NodeTick, **rates: object) -> NodeTick:
    h = n.rates.host.model_copy(update=rates)
    return n.model_copy(update={"rates": n.rates.model_copy(update={"host": h})})


def test_lines_of_figures_keep_their_height_whatever_the_values() -> None:
    """80x24 (38 cells a column): a line of figures loses its last fields, the most
    important first ones stay; its height never changes with the values (a rate growing
    by a character wrapped a line, a scrollbar appeared, both columns narrowed)."""
    width = 38
    heights: dict[str, set[int]] = {}
    sessions = Path(__file__).parents[2] / "sample_sessions"
    from replmon.session.recording import open_recording

    with open_recording(sessions / "replica_lag_growing.rmrec") as rec:
        nodes = [n for t in rec for n in t.nodes]
    big = _host(nodes[-1], cpu_steal_pct=31.0, disk_max_util_pct=100.0,
                cpu_usr_pct=100.0, cpu_sys_pct=100.0)
    for node in [*nodes, big]:
        for kind, draw in (("host", render.host_text), ("mysql", render.mysql_text),
                           ("redis", render.redis_text)):
            text = fitting.fit(draw(node), width, kind)
            assert all(len(line) <= width for line in text.plain.split("\n")), text.plain
            heights.setdefault(f"{node.role} {kind}", set()).add(len(text.plain.split("\n")))
    assert all(len(h) == 1 for h in heights.values()), heights
    cpu, _, _, disk, _ = fitting.fit(render.host_text(big), width, "host").plain.split("\n")
    # 31 % steal is red: it stays, the field before it (iowait) goes
    assert cpu.split()[2:4] == ["100%us", "100%sy"] and cpu.endswith("%id 31%st"), cpu
    assert disk.split()[:4] == ["disk", "r", "0B/s", "w"] and "100%" not in disk, disk


def test_a_short_screen_leaves_out_the_least_important_lines_of_both_columns() -> None:
    t = TICKS[-1]
    cols = [{"host": render.host_text(n), "mysql": render.mysql_text(n)} for n in t.nodes]
    full = sum(max(len(c[k].plain.split("\n")) for c in cols) for k in ("host", "mysql"))
    out = fitting.shed(cols, full - 2)
    for col in out:
        plain = "\n".join(t.plain for t in col.values())
        assert " swap " not in plain and " net " not in plain  # the first two to go
        assert " disk " in plain and "stmt/s" in plain
    assert fitting.shed(cols, full) == cols or all(
        a[k].plain == b[k].plain for a, b in zip(fitting.shed(cols, full), cols, strict=True)
        for k in a)  # room enough: nothing left out
    paging = [{"host": render.host_text(_host(n, swap_in_pages_per_s=40.0))} for n in t.nodes]
    assert all(" swap " in c["host"].plain for c in fitting.shed(paging, 1))  # red stays


def test_help_fits_80_columns_and_says_what_a_short_screen_leaves_out() -> None:
    """At 80 columns the help's box holds 68 cells a line (90% of 80, less its thick border
    and padding): a longer line wrapped, twice over with its hanging indent. It names the
    lines a short screen leaves out, in fitting.LOW_VALUE's order."""
    from rich.text import Text

    from replmon.tui.screens import HELP

    lines = [Text.from_markup(line) for line in HELP.splitlines()]
    assert max(line.cell_len for line in lines) <= 68, [
        line.plain for line in lines if line.cell_len > 68]
    text = " ".join(line.plain for line in lines)
    listed = text[text.index("least important first:"):]
    words = [f"{group} {sub}" if sub == "mem" else sub for group, sub in fitting.LOW_VALUE]
    at = [listed.find(w) for w in words]
    assert all(i >= 0 for i in at) and at == sorted(at), (words, listed)


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
