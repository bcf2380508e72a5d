"""Drill-down: one group (host, drbd, mysql, redis) in full for both nodes side by side,
as rich tables built from a tick (pure functions, tested without an app). Every number
carries its unit; a node whose source is not ok shows its status instead."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from replmon.model.mysql import BinlogStatus
from replmon.model.tick import NodeTick, Tick
from replmon.tui.header import columns
from replmon.tui.render import GROUP_STYLE
from replmon.tui.render import with_unit as _n
from replmon.tui.wrap import Wrapped
from replmon.units import fmt_link_speed, tick_clock

GROUPS = ("host", "drbd", "mysql", "redis")
Reading = tuple[BinlogStatus, float]
"""A node's binary-log reading and its age (s) at the tick shown."""
SIDE_BY_SIDE = 150
"""Columns from which the two nodes sit side by side (~72 each: a disk table's eight
columns whole); narrower, one node above the other, each with the full width."""


def _kv(rows: list[tuple[str, str]]) -> Table:
    """Labels and values; a value wraps between its words (and after commas: a GTID set)
    under itself, never inside a word (``Wrapped``)."""
    t = Table.grid(padding=(0, 1))
    t.add_column(style="dim", no_wrap=True)
    t.add_column()
    for k, v in rows:
        t.add_row(k, Wrapped(v))
    return t


def _title(text: str) -> Text:
    return Text(text, style="bold underline")


def host_detail(n: NodeTick) -> RenderableType:
    r, s = n.rates.host, n.host
    parts: list[RenderableType] = [_kv([
        ("cpu", f"{_n(r.cpu_usr_pct, '%')} user, {_n(r.cpu_sys_pct, '%')} system, "
                f"{_n(r.cpu_iowait_pct, '%')} iowait, {_n(r.cpu_steal_pct, '%')} steal, "
                f"{_n(r.cpu_idle_pct, '%')} idle of {_n(r.ncpu)} CPUs"),
        ("load", "-" if r.load1 is None else f"{r.load1:.2f} (1 min)"),
        ("memory", f"{_n(r.mem_available_pct, '%')} available of "
                   f"{_n(s.mem.total if s.mem else None, 'B')}"),
        ("swap", f"{_n(r.swap_used_bytes, 'B')} used; in {_n(r.swap_in_pages_per_s, ' pg/s')}, "
                 f"out {_n(r.swap_out_pages_per_s, ' pg/s')}; major faults "
                 f"{_n(r.major_faults_per_s, '/s')}"),
        ("pressure", f"cpu {_n(r.psi_cpu_some_us_per_s, ' us/s')}, memory "
                     f"{_n(r.psi_memory_some_us_per_s, ' us/s')} (full "
                     f"{_n(r.psi_memory_full_us_per_s, ' us/s')}), io "
                     f"{_n(r.psi_io_some_us_per_s, ' us/s')} (full "
                     f"{_n(r.psi_io_full_us_per_s, ' us/s')}) stalled (PSI some)"),
    ])]
    disks = Table(box=None, padding=(0, 1), header_style="dim")
    for col in ("disk", "read", "write", "r/s", "w/s", "await", "util", "queue"):
        disks.add_column(col, justify="right" if col != "disk" else "left", no_wrap=True)
    for name, d in sorted(r.disks.items()):
        disks.add_row(name, _n(d.read_bytes_per_s, "B/s"), _n(d.write_bytes_per_s, "B/s"),
                      _n(d.read_iops, "/s"), _n(d.write_iops, "/s"),
                      "-" if d.await_ms is None else f"{d.await_ms:.1f}ms",
                      _n(d.util_pct, "%"), "-" if d.queue is None else f"{d.queue:.1f}")
    nics = Table(box=None, padding=(0, 1), header_style="dim")
    for col in ("nic", "rx", "tx", "speed", "util", "err+drop"):
        nics.add_column(col, justify="right" if col != "nic" else "left", no_wrap=True)
    for name, c in sorted(r.nics.items()):
        errs = (c.errors_per_s or 0) + (c.drops_per_s or 0)
        nics.add_row(name, _n(c.recv_bytes_per_s, "B/s"), _n(c.send_bytes_per_s, "B/s"),
                     "-" if not c.speed_mbps else fmt_link_speed(c.speed_mbps, compact=True),
                     _n(c.util_pct, "%"), _n(errs, "/s"))
    parts += [Text(""), disks, Text(""), nics]
    if s.peer:
        parts.append(Text(f"\nlink to {s.peer}: TCP connect "
                          f"{'-' if s.peer_rtt_ms is None else f'{s.peer_rtt_ms:.2f} ms'}"))
    return Group(*parts)


def drbd_detail(n: NodeTick) -> RenderableType:
    d = n.drbd
    if not d.resources:
        return Text("no DRBD resources", style="dim")
    parts: list[RenderableType] = [Text(f"DRBD {d.version or '?'} ({d.flavour or '?'})",
                                        style="dim")]
    for res in d.resources:
        flags = []
        if res.suspended:
            flags.append("SUSPENDED " + ",".join(res.suspend_reasons))
        parts.append(_title(f"{res.name}: {res.role or '?'}"
                            + (f"  {' '.join(flags)}" if flags else "")))
        for dev in res.devices:
            parts.append(_kv([(f"volume {dev.volume}",
                               f"minor {dev.minor}, disk {dev.disk_state or '?'}"
                               + (", quorum LOST" if dev.quorum is False else "")
                               + (f", blocked {dev.blocked}" if dev.blocked else "")
                               + f", pending lower {_n(dev.lower_pending)} upper "
                               f"{_n(dev.upper_pending)}")]))
        for c in res.connections:
            state = c.cs or c.connection_state or "?"
            cflags = [f for f, on in (("congested", c.congested),) if on]
            if c.io_flags:
                cflags.append(f"io flags {c.io_flags}")
            parts.append(_kv([(f"peer {c.peer}",
                               f"{state}, peer {c.peer_role or '?'}, protocol "
                               f"{c.protocol or '?'}, in flight "
                               f"{_n((c.ap_in_flight_sectors or 0) * 512, 'B')}"
                               + (f" ({', '.join(cflags)})" if cflags else ""))]))
            for pd in c.peer_devices:
                resync = ""
                if pd.resync is not None and pd.resync.percent_done is not None:
                    speed = pd.resync.speed_kib_s
                    resync = (f", resync {pd.resync.percent_done:.1f}% "
                              f"{_n(speed and speed * 1024, 'B/s')}")
                parts.append(_kv([(f"  volume {pd.volume}",
                                   f"{pd.replication_state or '?'}, peer disk "
                                   f"{pd.peer_disk_state or '?'}, out of sync "
                                   f"{_n((pd.out_of_sync_kib or 0) * 1024, 'B')}, pending "
                                   f"{_n(pd.pending)}, unacked {_n(pd.unacked)}{resync}")]))
    return Group(*parts)


def mysql_detail(n: NodeTick, binlog: Reading | None = None,
                 source: tuple[str, Reading] | None = None) -> RenderableType:
    """``binlog``: the node's newest binary-log reading and its age at the tick shown
    (the source reads it every 2 s, so half the ticks carry none of their own);
    ``source``: the other node's name and reading, that a channel's GTIDs are read
    against (not at the same instant: the channel's rows say how far apart)."""
    m, r = n.mysql, n.rates.mysql
    g, v = m.gauges, m.variables
    page = 16384
    parts: list[RenderableType] = [_kv([
        ("server", f"{m.version} (up {_n(m.uptime_s, ' s')}); server_id "
                   f"{v.get('server_id', '-')}, read_only {v.get('read_only', '-')}"),
        ("round trip", "-" if m.rtt_ms is None else f"{m.rtt_ms:.2f} ms (COM_PING)"),
        # Questions counts clients' statements only, Com_* also those a replica's applier
        # replays: two rows, not a total and its parts (a replica: 5/s, update 268/s)
        ("statements", f"{_n(r.qps, '/s')} from clients (Questions)"),
        ("by kind", f"select {_n(r.com_select_per_s, '/s')}, insert "
                    f"{_n(r.com_insert_per_s, '/s')}, update {_n(r.com_update_per_s, '/s')}, "
                    f"delete {_n(r.com_delete_per_s, '/s')} (Com_*: clients' and what "
                    "the applier replays)"),
        (f"rows ({r.row_counters or '?'})",
         f"inserted {_n(r.rows_inserted_per_s, '/s')}, updated {_n(r.rows_updated_per_s, '/s')}, "
         f"deleted {_n(r.rows_deleted_per_s, '/s')}, read {_n(r.rows_read_per_s, '/s')}; "
         f"{'-' if r.rows_updated_per_update is None else f'{r.rows_updated_per_update:.2f}'}"
         " rows per UPDATE"),
        ("handler", "write " + _n(r.counters.get("Handler_write"), "/s") + ", update "
                    + _n(r.counters.get("Handler_update"), "/s") + ", delete "
                    + _n(r.counters.get("Handler_delete"), "/s")),
        ("connections", f"{g.get('Threads_connected', '-')} of "
                        f"{v.get('max_connections', '-')} (Threads_connected: clients), "
                        f"{g.get('Threads_cached', '-')} threads cached"),
        ("running", f"{g.get('Threads_running', '-')} threads (Threads_running: the "
                    "server's own count too, replication threads, event scheduler)"),
        ("buffer pool", f"{_n(_pages(g, 'Innodb_buffer_pool_pages_total', page), 'B')} "
                        f"({_n(_pages(g, 'Innodb_buffer_pool_pages_free', page), 'B')} free, "
                        f"{_n(_pages(g, 'Innodb_buffer_pool_pages_dirty', page), 'B')} dirty); "
                        f"hit {'-' if r.bp_hit_pct is None else f'{r.bp_hit_pct:.2f}%'}"),
        ("semi-sync", _semi(n)),
    ])]
    b, age = binlog if binlog is not None else (m.binlog, 0.0)
    if b is not None or m.variables.get("log_bin"):
        parts.append(_title("\nbinary log (read every 2 s)"))
        parts.append(_kv(_binlog_rows(b, age)))
    if m.replication_error:
        parts.append(Text(f"\nreplication: {m.replication_error}", style="yellow"))
    for ch in m.replication:
        parts.append(_title(f"\nchannel {ch.name or '(default)'} from {ch.source_host}:"
                            f"{ch.source_port or '-'} (server_id {ch.source_server_id})"))
        rows = [
            ("threads", f"io {ch.io_running}, sql {'Yes' if ch.sql_running else 'No'}; "
                        f"{m.words.lag} "
                        f"{'NULL' if ch.seconds_behind is None else f'{ch.seconds_behind} s'}"),
            ("received", f"{ch.source_log_file}:{_pos(ch.read_source_log_pos)}"),
            ("executed", f"{ch.relay_source_log_file}:{_pos(ch.exec_source_log_pos)}"
                         + ("" if ch.applier_backlog_bytes is None
                            else f" ({_n(ch.applier_backlog_bytes, 'B')} waiting)")),
            ("gtid received", ch.gtid_retrieved or "-"),
            ("gtid executed", ch.gtid_executed or "-"),
            ("relay logs", _n(ch.relay_log_space, "B")),
            ("io state", ch.io_state or "-"),
            ("sql state", ch.sql_state or "-"),
        ]
        if source is not None:
            rows.append(_read_apart(m.wall, *source))
        if ch.sql_delay:
            rows.append(("delay", f"{ch.sql_delay} s configured, "
                                  f"{_n(ch.sql_remaining_delay, ' s')} remaining"))
        if ch.last_io_errno:
            rows.append(("io error", f"{ch.last_io_errno} {ch.last_io_error} "
                                     f"{ch.last_io_error_time}"))
        if ch.last_sql_errno:
            rows.append(("sql error", f"{ch.last_sql_errno} {ch.last_sql_error} "
                                      f"{ch.last_sql_error_time}"))
        if ch.worker_errno:
            rows.append(("worker error", f"worker {ch.worker_id}: {ch.worker_errno} at "
                                         f"{ch.worker_error_time} on {ch.failed_gtid}: "
                                         f"{ch.worker_error}"))
        if ch.applied_latency_s is not None or ch.applying_age_s:
            rows.append(("applier", f"oldest in apply committed "
                                    f"{_n(ch.applying_age_s, ' s')} ago on the source; "
                                    f"newest applied {_n(ch.applied_latency_s, ' s')} after "
                                    "its commit there"))
        parts.append(_kv(rows))
    return Group(*parts)


def _binlog_rows(b: BinlogStatus | None, age_s: float) -> list[tuple[str, str]]:
    """The binary log's position, GTIDs and clock offset, as of a reading ``age_s`` old."""
    if b is None:
        return [("position", "no reading in the ticks seen so far")]
    rows = [
        ("position", "-" if not b.file else f"{b.file}:{_pos(b.position)}"),
        ("gtid", b.gtid_executed or "-"),
        ("binlog state", b.gtid_binlog_state or "-"),
        ("clock", "-" if b.server_time is None or b.sent_wall is None
         else f"{b.server_time - b.sent_wall - (b.elapsed_ms or 0) / 2000:+.3f} s from "
              "replmon's"),
        ("read", "in the tick shown" if age_s < 0.5 else f"{age_s:.0f} s before the tick shown"),
    ]
    return rows + ([("note", b.error)] if b.error else [])


def _read_apart(wall: float, name: str, reading: Reading) -> tuple[str, str]:
    """When a channel was read (at ``wall``) against ``name``'s binary-log reading: a
    replica read after its primary can show a GTID the primary's reading lacks."""
    b, _ = reading
    if b.sent_wall is None:
        return ("read", f"{name}'s binary-log reading has no time")
    d = wall - b.sent_wall
    if abs(d) < 0.0005:
        return ("read", f"with {name}'s binary log")
    return ("read", f"{abs(d):.3f} s {'after' if d > 0 else 'before'} {name}'s binary log: "
                    f"GTIDs {'newer' if d > 0 else 'older'} than its reading can show here")


def _pages(g: dict[str, int | float], name: str, page: int) -> float | None:
    v = g.get(name)
    return None if v is None else float(v) * page


def _pos(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


def _semi(n: NodeTick) -> str:
    s = n.mysql.semi_sync
    if s.source_enabled is None and s.replica_enabled is None:
        return "not available"
    src = ("off" if not s.source_enabled else
           f"on, {'ACTIVE' if s.source_active else 'FELL BACK to async'}, "
           f"{_n(s.source_clients)} clients")
    rep = "off" if not s.replica_enabled else ("acking" if s.replica_active else "NOT acking")
    return f"as source {src}; as replica {rep}"


def redis_detail(n: NodeTick) -> RenderableType:
    s, r = n.redis, n.rates.redis
    rows = [
        ("server", f"{s.product} (up {_n(s.uptime_s, ' s')}), role {s.role or '?'}"),
        ("round trip", "-" if s.rtt_ms is None else f"{s.rtt_ms:.2f} ms (PING, kernel-timed)"),
        ("commands", f"{_n(r.ops_per_s, '/s')}; hits {_n(r.hits_per_s, '/s')} misses "
                     f"{_n(r.misses_per_s, '/s')} ({_n(r.hit_pct, '%')} hit)"),
        ("clients", f"{_n(s.connected_clients)} connected of {_n(s.maxclients)}, "
                    f"{_n(s.blocked_clients)} blocked"),
        ("memory", f"{_n(s.used_memory, 'B')} used, {_n(s.used_memory_rss, 'B')} rss, peak "
                   f"{_n(s.used_memory_peak, 'B')}; maxmemory "
                   f"{_n(s.maxmemory, 'B') if s.maxmemory else 'none'} "
                   f"({s.maxmemory_policy or '-'}); fragmentation "
                   f"{'-' if s.mem_fragmentation_ratio is None else s.mem_fragmentation_ratio}"),
        ("evictions", f"{_n(r.evicted_per_s, '/s')}; expired {_n(r.expired_per_s, '/s')}"),
        ("keys", f"{_n(s.keys)} ({_n(s.expires)} with a TTL)"),
        ("persistence", f"RDB last save {_ago(s.rdb_last_save_time)} "
                        f"({s.rdb_last_bgsave_status or '-'}, took "
                        f"{_n(s.rdb_last_bgsave_time_s, ' s')}), "
                        f"{_n(s.rdb_changes_since_last_save)} changes since; "
                        f"AOF {'on' if s.aof_enabled else 'off'}; last fork "
                        f"{_n(s.latest_fork_usec and s.latest_fork_usec / 1000, ' ms')}"),
        ("backlog", f"{_n(s.repl_backlog_size, 'B')} ({_n(s.repl_backlog_histlen, 'B')} held, "
                    f"from offset {_pos(s.repl_backlog_first_byte_offset)})"),
        ("syncs", f"full {_n(r.full_syncs)}, partial ok {_n(r.partial_syncs_ok)}, partial "
                  f"refused {_n(r.partial_syncs_err)} (since the last sample)"),
        ("replica buffer", "-" if s.replica_buffer_limit is None else
         "hard {} soft {} for {} s".format(_n(s.replica_buffer_limit[0], "B"),
                                          _n(s.replica_buffer_limit[1], "B"),
                                          s.replica_buffer_limit[2])),
    ]
    if s.role == "master":
        rows.append(("offset", f"{_pos(s.master_repl_offset)} (replid "
                               f"{(s.master_replid or '-')[:12]})"))
        for rep in s.replicas:
            lag = r.replica_lag_bytes.get(f"{rep.ip}:{rep.port}")
            rows.append((f"replica {rep.ip}:{rep.port}",
                         f"{rep.state}, offset {_pos(rep.offset)}, {_n(lag, 'B')} behind, "
                         f"ack {_n(rep.lag_s, ' s')} ago"))
    else:
        rows += [
            ("master", f"{s.master_host}:{s.master_port}, link {s.link_status or '?'}, last I/O "
                       f"{_n(s.last_io_seconds_ago, ' s')} ago"),
            ("offset", f"{_pos(s.repl_offset)}"),
            ("read only", "-" if s.replica_read_only is None
             else ("yes" if s.replica_read_only else "NO: writable")),
        ]
        if s.sync_in_progress:
            rows.append(("full sync", f"{_n(s.sync_perc, '%')} of {_n(s.sync_total_bytes, 'B')}, "
                                      f"last I/O {_n(s.sync_last_io_seconds_ago, ' s')} ago"))
    if s.config_error:
        rows.append(("note", s.config_error))
    return _kv(rows)


def _ago(epoch: int | None) -> str:
    if not epoch:
        return "never"
    return tick_clock(epoch)


DETAIL: dict[str, Callable[[NodeTick], RenderableType]] = {
    "host": host_detail, "drbd": drbd_detail, "mysql": mysql_detail, "redis": redis_detail}


def node_detail(node: NodeTick, group: str, binlogs: dict[str, Reading],
                source: NodeTick | None = None) -> RenderableType:
    """One node's ``group``, or its source's state and error when it could not be read;
    ``source``: the node its MySQL channel follows (the pair's other node)."""
    st = node.statuses()[group]
    if not st.ok:
        return Text(f"{st.state.value.upper()}: {st.error or ''}",
                    style="dim" if st.state.value == "absent" else "bold red")
    if group == "mysql":
        theirs = None if source is None else binlogs.get(source.name) or (
            None if source.mysql.binlog is None else (source.mysql.binlog, 0.0))
        return mysql_detail(node, binlogs.get(node.name),
                            None if source is None or theirs is None else (source.name, theirs))
    return DETAIL[group](node)


def side_by_side(tick: Tick, group: str, *, width: int = SIDE_BY_SIDE,
                 binlogs: dict[str, Reading] | None = None) -> RenderableType:
    """Both nodes' detail of ``group``, each node in its column of the overview
    (``header.columns``: it keeps it through a switchover), headed by its role now and its
    name: side by side from SIDE_BY_SIDE columns, else the left one above the other."""
    nodes = columns(tick)
    style = GROUP_STYLE.get(group, "bold")
    cells = [node_detail(node, group, binlogs or {}, other)
             for node, other in zip(nodes, nodes[::-1], strict=True)]
    heads = [f"{group}: {node.role} {node.name}" for node in nodes]
    if width < SIDE_BY_SIDE:
        return Group(Text(heads[0], style=style), cells[0], Text(""),
                     Text(heads[1], style=style), cells[1])
    t = Table(box=None, padding=(0, 2), expand=True, show_header=True, header_style=style)
    for head in heads:
        t.add_column(head, ratio=1)
    t.add_row(*cells)
    return t
