"""What each panel says, as rich Text: pure functions of a NodeTick (and findings).

Kept apart from the widgets so the wording is tested without an app, and so the
lines are short enough for half of an 80-column terminal (38 characters): the
numbers DBAs read first (dstat/orzdba order) come first on each line. Fitting those
lines to a column and to the rows left is fitting.py's.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from replmon.model.base import SourceState, SourceStatus
from replmon.model.failures import short_words
from replmon.model.findings import Severity
from replmon.model.host import NicRates
from replmon.model.lag import MeasuredLag, RedisLagEstimate
from replmon.model.mysql_rates import client_errors_per_s
from replmon.model.sentinel import SentinelSample
from replmon.model.tick import NodeTick
from replmon.output.plain import human
from replmon.units import fmt_bytes, fmt_link_speed

SEV_STYLE = {Severity.CRITICAL: "bold white on red", Severity.WARNING: "bold black on yellow",
             Severity.INFO: "cyan"}


GROUP_STYLE = {"host": "bold cyan", "drbd": "bold magenta", "mysql": "bold blue",
               "redis": "bold red"}
GUTTER = 6
"""Characters of the left gutter holding the group's name on its first line."""


def _group(t: Text, group: str, sub: str = "") -> None:
    """Start a group's first line: its name in the gutter, then a sub-label."""
    t.append(f"{group:<{GUTTER}}", style=GROUP_STYLE.get(group, "bold"))
    if sub:
        t.append(f"{sub} ", style="dim")


def _line(t: Text, sub: str = "") -> None:
    """A further line of the same group: an empty gutter, then a sub-label."""
    t.append("\n" + " " * GUTTER)
    if sub:
        t.append(f"{sub} ", style="dim")


def _label(t: Text, label: str) -> None:
    """Compatibility for status lines: the group name in the gutter."""
    _group(t, label)


def _kv(t: Text, key: str, value: str, style: str = "bold", width: int = 0) -> None:
    """``key`` (dim) and ``value``; ``width``: the value right-aligned in that many cells,
    so a value growing by a character does not move the line's other fields (the overview
    stays still: ``fit`` then drops the same tail at the same width)."""
    if key:
        t.append(f"{key} ", style="dim")
    t.append(value.rjust(width), style=style)
    t.append(" ")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}%"


def with_unit(v: float | None, unit: str = "") -> str:
    """A number in a few characters with its unit; "-" when unknown. Counts and their
    rates keep SI's k and M (12300, "/s" -> "12k/s"); bytes ("B", "B/s") are IEC, as on
    every view: 648000, "B/s" -> "633KiB/s" (``replmon.units.fmt_bytes``). Every figure
    on the screens goes through here or _pct/_ms."""
    if unit in ("B", "B/s"):  # bytes: IEC, as every view (replmon.units)
        return fmt_bytes(v, compact=True, per=unit[1:])
    return "-" if v is None else f"{human(v).strip()}{unit}"


def _rate(v: float | None, unit: str = "/s") -> str:
    return with_unit(v, unit)


def _ms(v: float | None) -> str:
    """A round trip: 2 decimals under 1 ms (a loopback PING is ~0.05 ms, not "0.0ms")."""
    if v is None:
        return "-"
    return f"{v:.2f}ms" if v < 1 else f"{v:.1f}ms"


def _bytes(v: float | None) -> str:
    """Bytes, IEC in a few characters: 1677722 -> "1.6MiB" (``replmon.units``)."""
    return fmt_bytes(v, compact=True)


RATE_W = 8
"""Cells of a byte rate on the overview ("324KiB/s", "1.5MiB/s"): its fixed width."""
DIFF_STYLE = "bold black on yellow"


def _mark(t: Text, differs: bool) -> None:
    """A cross-node difference that matters: a "≠" before the value (same on both sides)."""
    if differs:
        t.append("≠", style=DIFF_STYLE)
        t.append(" ")


def status_text(kind: str, st: SourceStatus, now: float | None) -> Text:
    """A source that is not ok, in place of its numbers: state, since, and the failure in
    a few words (replmon.model.failures.short_words)."""
    t = Text()
    _group(t, kind)
    if st.state is SourceState.ABSENT:  # expected (no DRBD here, switched off): one dim line
        why = (st.error or "not configured").split(":")[0]
        t.append(why if len(why) <= 32 else why[:31] + "…", style="dim")
        return t
    style = "bold red"
    t.append(st.state.value.upper(), style=style)
    if st.since is not None and now is not None:
        t.append(f" for {human(max(0.0, now - st.since), 4).strip()} s", style=style)
    # one short line: what to do is the finding's (a whole ssh or resolver error and its
    # hint here filled the column, and the groups under it never showed)
    t.append(f"\n{' ' * GUTTER}{short_words(st)}", style="red")
    return t


def swap_in_use(n: NodeTick) -> bool:
    """The host has swap (a swap area, or pages moving in or out of one): its swap line
    stays on a short screen (``fitting.shed``'s ``keep``) and turns red when it pages; a
    host without swap gives the line up first. A rule that holds tick after tick: a row
    under "mem" that was swap one tick and disk the next (a blip of major faults turning
    the line red) could not be read."""
    r = n.rates.host
    return n.host.status.ok and (bool(r.swap_total_bytes) or any(
        v is not None and v > 0 for v in (r.swap_in_pages_per_s, r.swap_out_pages_per_s)))


def kept_lines(*nodes: NodeTick) -> frozenset[tuple[str, str]]:
    """The lines a short screen keeps in both columns whatever their values
    (``fitting.shed``'s ``keep``): the swap line where a node has swap."""
    return frozenset({("host", "swap")} if any(map(swap_in_use, nodes)) else ())


def host_text(n: NodeTick, other: NodeTick | None = None, *,
              nics: Mapping[str, str] | None = None) -> Text:
    """host: CPU (dstat's usr/sys/idle/wait), load, memory and paging, disks, NICs.
    ``nics``: the NICs of known role ("repl": the one that carries this node's
    replication, "mon": the one the monitor reaches it by; ``model.nic_roles``): then a
    line for each, and for the busiest other NIC ("other") when fewer than two, in place
    of the NICs' total, so a node's links are told apart."""
    r = n.rates.host
    t = Text()
    _group(t, "host", "cpu")
    _kv(t, "", f"{_pct(r.cpu_usr_pct)}us")
    _kv(t, "", f"{_pct(r.cpu_sys_pct)}sy")
    _kv(t, "", f"{_pct(r.cpu_idle_pct)}id")
    wa = r.cpu_iowait_pct
    _kv(t, "", f"{_pct(wa)}wa", "bold red" if wa is not None and wa >= 20 else "bold")
    st = r.cpu_steal_pct
    if st is not None and st >= 0.5:  # a VM's stolen time, when there is any
        _kv(t, "", f"{_pct(st)}st", "bold red" if st >= 10 else "bold")
    _line(t, "mem")
    av = r.mem_available_pct
    _kv(t, "", f"{_pct(av)} avail", "bold red" if av is not None and av < 10 else "bold")
    _kv(t, "load", "-" if r.load1 is None else f"{r.load1:.1f}")
    _line(t, "swap")
    si, so, mf = r.swap_in_pages_per_s, r.swap_out_pages_per_s, r.major_faults_per_s
    # red when paging to swap; major faults alone on a host without swap are file pages
    # read back (yellow): a blip of them must not pin the line (``swap_in_use``)
    paging = swap_in_use(n) and any(v is not None and v > 0 for v in (si, so, mf))
    style = "bold red" if paging else "bold"
    _kv(t, "", _bytes(r.swap_used_bytes))
    _kv(t, "in", human(si, 3).strip(), style)
    _kv(t, "out", _rate(so, " pg/s"), style)
    _kv(t, "mf", _rate(mf), style if paging or not mf else "bold yellow")
    d = r.disk_total
    _line(t, "disk")
    _kv(t, "r", _rate(d.read_bytes_per_s, "B/s"), width=RATE_W)
    _kv(t, "w", _rate(d.write_bytes_per_s, "B/s"), width=RATE_W)
    _kv(t, "", "-" if d.await_ms is None else f"{d.await_ms:.1f}ms", width=5)
    _kv(t, "", _pct(r.disk_max_util_pct))  # the busiest disk's utilisation
    known = [(role, name) for role, name in (nics or {}).items()
             if role in ("repl", "mon") and name in r.nics]
    if known:
        known.sort(key=lambda rn: rn[0] != "repl")  # the replication NIC first
        others = [(name, nic) for name, nic in r.nics.items()
                  if name != "lo" and name not in {nm for _, nm in known}]
        busiest = max(others, key=lambda kv: (kv[1].recv_bytes_per_s or 0.0)
                      + (kv[1].send_bytes_per_s or 0.0), default=None)
        for role, name in known:
            # the side that sends replication says what it sends first: on a narrow
            # column a red share of a full link stays, the smaller direction gives way
            _nic_line(t, role, name, r.nics[name], sends=role == "repl" and n.role == "primary")
        if busiest is not None and len(known) < 2:
            _nic_line(t, "other", *busiest)
        return t
    net = r.net_total
    _line(t, "net")
    _kv(t, "rx", _rate(net.recv_bytes_per_s, "B/s"), width=RATE_W)
    _kv(t, "tx", _rate(net.send_bytes_per_s, "B/s"), width=RATE_W)
    # the busiest NIC's share of what it can carry: a shaper's rate when lower than the
    # speed (it read "0% of 10Gbit/s" while tbf held the link full at 128 kbit/s)
    used = [(_nic_share(nic), cap) for name, nic in r.nics.items()
            if name != "lo" and (cap := nic_capacity_mbps(nic))]
    u, cap = max(used, default=(None, None))
    if u is not None and cap is not None:
        _kv(t, "", f"{u:.0f}% of {_capacity_words(cap)}",
            "bold red" if u >= 85 else "bold")
    return t


def _nic_share(nic: NicRates) -> float:
    """Percent of its capacity (``nic_capacity_mbps``) the busier direction uses (links
    are full duplex); 0 when the capacity is unknown."""
    cap = nic_capacity_mbps(nic)
    busier = max(nic.recv_bytes_per_s or 0.0, nic.send_bytes_per_s or 0.0)
    return busier * 8 / (cap * 1e6) * 100 if cap else 0.0


def _capacity_words(cap: float) -> str:
    """``cap`` Mbit/s as the overview writes it: "128kbit/s" under 1 Mbit/s (a shaper's
    rate as tc says it), else "10Gbit/s"."""
    return f"{cap * 1000:g}kbit/s" if cap < 1 else fmt_link_speed(cap, compact=True)


def nic_capacity_mbps(nic: NicRates) -> float | None:
    """Mbit/s the NIC can carry: its speed, or its root shaper's rate when lower (a veth
    reads 10000 Mbit/s whatever tbf holds it to); None when neither is known."""
    shaped = nic.shaped_kbit / 1000 if nic.shaped_kbit else None
    speed = float(nic.speed_mbps) if nic.speed_mbps and nic.speed_mbps > 0 else None
    if shaped is not None and speed is not None:
        return min(shaped, speed)
    return shaped if shaped is not None else speed


def _nic_line(t: Text, sub: str, name: str, nic: NicRates, sends: bool = False) -> None:
    """One NIC: "repl tx  16KiB/s rx 1.2KiB/s 98% of 128kbit/s eth1": received and sent
    (``sends``: sent first, the replication NIC of the node that sends replication), the
    busier direction's share of its capacity (red from 85 %: then it stays on a narrow
    column), the capacity, the NIC's name (the first to go on a narrow column)."""
    _line(t, sub)
    pairs = [("rx", nic.recv_bytes_per_s), ("tx", nic.send_bytes_per_s)]
    for key, v in pairs[::-1] if sends else pairs:
        _kv(t, key, _rate(v, "B/s"), width=RATE_W)
    cap = nic_capacity_mbps(nic)
    if cap:
        u = _nic_share(nic)
        _kv(t, "", f"{u:.0f}%", "bold red" if u >= 85 else "bold")
        _kv(t, "of", _capacity_words(cap))
    _kv(t, "", name)


def drbd_text(n: NodeTick, other: NodeTick | None = None) -> Text:
    t = Text()
    if not n.drbd.resources:
        _group(t, "drbd")
        t.append("no resources configured", style="dim")
        return t
    for i, res in enumerate(n.drbd.resources):
        if i:
            _line(t)
        else:
            _group(t, "drbd")
        t.append(f"{res.name} ", style="bold")
        t.append(f"{res.role or '?'} ")
        disk = res.devices[0].disk_state if res.devices else None
        for c in res.connections:
            pd = c.peer_devices[0] if c.peer_devices else None
            state = c.connection_state or c.cs or "?"
            if pd is not None and pd.replication_state not in (None, "Established", "Off"):
                state = pd.replication_state or state
            ok = state in ("Connected", "Established")
            t.append(f"{state} ", style="bold green" if ok else "bold red")
            t.append(f"{c.peer_role or '?'} ", style="dim")
            t.append(f"{disk or '?'}/{pd.peer_disk_state if pd else '?'}")
            if pd is not None:
                oos = pd.out_of_sync_kib or 0
                _line(t, "oos")
                t.append(_bytes(oos * 1024), style="bold red" if oos else "bold")
                t.append(" ")
                _kv(t, "pend", str(pd.pending if pd.pending is not None else "-"))
                _kv(t, "unack", str(pd.unacked if pd.unacked is not None else "-"))
                _kv(t, "ap", "-" if c.ap_in_flight_sectors is None
                    else f"{c.ap_in_flight_sectors}sect")
                if pd.resync is not None and pd.resync.percent_done is not None:
                    eta = pd.resync.eta_s
                    _line(t, "sync")
                    t.append(f"{pd.resync.percent_done:.1f}% "
                             f"eta {'-' if eta is None else f'{eta // 60}m{eta % 60:02d}s'}",
                             style="yellow")
    return t


def _written(n: NodeTick) -> float | None:
    """Rows both nodes of a pair write per second: inserted + updated + deleted from
    InnoDB's counters; from the Handler counters (MariaDB 10.11) the updates only, as a
    MariaDB replica also inserts and deletes a mysql.gtid_slave_pos row per transaction."""
    r = n.rates.mysql
    if r.row_counters == "handler":
        return r.rows_updated_per_s
    vals = (r.rows_inserted_per_s, r.rows_updated_per_s, r.rows_deleted_per_s)
    return None if any(v is None for v in vals) else sum(v or 0.0 for v in vals)


def rows_differ(a: NodeTick | None, b: NodeTick | None) -> bool:
    """The two nodes write rows at rates that differ by more than 2x (and 20 rows/s): a
    replica that stopped applying, or writes that do not replicate."""
    if a is None or b is None or not (a.mysql.status.ok and b.mysql.status.ok):
        return False
    x, y = _written(a), _written(b)
    if x is None or y is None:
        return False
    hi, lo = max(x, y), min(x, y)
    return hi - lo > 20 and hi > 2 * lo


def mysql_text(n: NodeTick, other: NodeTick | None = None, *,
               gtid_rows_per_s: float | None = None, lag: MeasuredLag | None = None) -> Text:
    """``gtid_rows_per_s``: rows a MariaDB replica writes per second to its own
    mysql.gtid_slave_pos (one insert per applied transaction, deletes in batches of 64
    that average the same): counted in its Handler rows, said under them."""
    m, r = n.mysql, n.rates.mysql
    t = Text()
    _group(t, "mysql", "stmt/s")
    # Questions counts clients' statements; Com_* also the ones a replica's applier
    # replays (statement-based events): a replica reads "cli 2 i 28 u 252"
    _kv(t, "cli", human(r.qps).strip())
    for key, v in (("i", r.com_insert_per_s), ("u", r.com_update_per_s),
                   ("d", r.com_delete_per_s), ("s", r.com_select_per_s)):
        _kv(t, key, human(v).strip())
    _line(t, "rows/s")
    _mark(t, rows_differ(n, other))
    for key, v in (("i", r.rows_inserted_per_s), ("u", r.rows_updated_per_s),
                   ("d", r.rows_deleted_per_s), ("r", r.rows_read_per_s)):
        _kv(t, key, human(v).strip())
    if gtid_rows_per_s:  # (none applied: no line, the rows say it)
        _line(t, "incl.")
        _kv(t, "gtid_slave_pos i/d", f"{human(gtid_rows_per_s).strip()}/s", "dim")
    _line(t, "bp")
    _kv(t, "", "-" if r.bp_hit_pct is None else f"{r.bp_hit_pct:.0f}%", width=4)
    _kv(t, "rtt", _ms(m.rtt_ms), width=6)
    g = m.gauges  # clients' connections, then threads running: the server's own count
    # in these (a MariaDB replica's two replication threads, MySQL's event scheduler), so
    # not a fraction ("3/1" read as 3 of 1)
    _kv(t, "conn", f"{g.get('Threads_connected', '-')}")
    _kv(t, "run", f"{g.get('Threads_running', '-')}")
    _line(t)
    ro = m.variables.get("read_only")
    if ro:
        _kv(t, "ro", ro.lower(), "bold" if ro == "ON" else "dim")
    if m.replication_error:
        t.append(m.replication_error, style="yellow")
    elif not m.replication:
        t.append("not a replica" if n.role == "primary" else "NO REPLICATION",
                 style="dim" if n.role == "primary" else "bold red")
    for i, ch in enumerate(m.replication):
        if i:
            _line(t)
        io_ok, sql_ok = ch.io_running == "Yes", ch.sql_running
        _kv(t, "io", ch.io_running, "bold green" if io_ok else "bold red")
        _kv(t, "sql", "Yes" if sql_ok else "No", "bold green" if sql_ok else "bold red")
        sbm = ch.seconds_behind
        _kv(t, "lag", "NULL" if sbm is None else f"{sbm}s",
            "bold red" if sbm is None or sbm >= 30 else "bold")
        err = ch.last_sql_error or ch.last_io_error
        if err:
            t.append(f"\n{' ' * GUTTER}{err[:200]}", style="red")
    if lag is not None and n.role == "replica" and m.replication:
        _true_lag(t, lag)
    _client_errors(t, client_errors_per_s(n.mysql, n.rates.mysql))
    return t


def _client_errors(t: Text, per_kind: dict[str, float]) -> None:
    """One line, only while clients get errors: "errors 12/s NOREPLICAS 12/s"."""
    if not per_kind:
        return
    _line(t, "errors")
    _kv(t, "", _rate(sum(per_kind.values())), "bold red")
    for kind, v in sorted(per_kind.items(), key=lambda kv: -kv[1]):
        _kv(t, kind, _rate(v))


def lag_figure(lag: MeasuredLag | None) -> str | None:
    """The replica's true lag (``Tick.lag``) as the panel and the header both write it:
    "9.0s", ">=30s" (a lower bound), None when unknown."""
    if lag is None:
        return None
    if lag.seconds is not None:
        return f"{lag.seconds:.1f}s"
    return None if lag.at_least_s is None else f">={lag.at_least_s:.0f}s"


def _true_lag(t: Text, lag: MeasuredLag) -> None:
    """The replica's true lag (``Tick.lag``): its value, bound and source, or why not."""
    _line(t, "true lag")
    figure = lag_figure(lag)
    if lag.seconds is not None:
        _kv(t, "", figure or "", "bold red" if lag.seconds >= 30 else "bold")
        bound = f"+/-{lag.bound_s:.1f}s " if lag.bound_s is not None else ""
        t.append(f"{bound}{lag.source_words}", style="dim")
    elif lag.at_least_s is not None:
        _kv(t, "", figure or "", "bold red" if lag.at_least_s >= 30 else "bold")
        t.append("pair_lag history too short", style="dim")
    else:
        t.append(f"unknown: {lag.detail[:120]}", style="yellow")


def redis_text(n: NodeTick, other: NodeTick | None = None, *,
               lag: RedisLagEstimate | None = None) -> Text:
    s, r = n.redis, n.rates.redis
    t = Text()
    _group(t, "redis")
    _kv(t, "", _rate(r.ops_per_s, " op/s"), width=9)
    _kv(t, "", f"{_pct(r.hit_pct)} hit", width=8)
    _kv(t, "rtt", _ms(s.rtt_ms), width=6)  # before cli: a longer rtt drops cli, not itself
    _kv(t, "", f"{s.connected_clients if s.connected_clients is not None else '-'} cli")
    _line(t, "mem")
    used = s.used_memory
    if s.maxmemory:
        frac = (used or 0) / s.maxmemory * 100
        _kv(t, "", f"{_bytes(used)} of {_bytes(s.maxmemory)} = {frac:.0f}%",
            "bold red" if frac >= 90 else "bold")
    else:
        _kv(t, "", f"{_bytes(used)}, no maxmemory")
    if r.evicted_per_s:
        _kv(t, "evict", _rate(r.evicted_per_s), "bold red")
    _line(t)
    t.append(f"{s.role or '?'} ", style="bold")
    if s.role == "replica":
        up = s.link_status == "up"
        _kv(t, "link", s.link_status or "?", "bold green" if up else "bold red")
        if s.sync_in_progress:
            t.append("SYNCING ", style="bold yellow")
        byte_lag = r.replica_lag_bytes
        if byte_lag:
            _kv(t, "lag", _bytes(max(v or 0 for v in byte_lag.values())))
        if lag is not None and lag.seconds is not None:
            _kv(t, "~", f"{lag.seconds:.1f}s est.", "dim")
    else:
        n_rep = s.connected_replicas
        _kv(t, "", f"{'-' if n_rep is None else n_rep} replica{'' if n_rep == 1 else 's'}")
        worst = max((v for v in r.replica_lag_bytes.values() if v is not None), default=None)
        if worst is not None:
            _kv(t, "lag", _bytes(worst), "bold red" if worst > 1 << 20 else "bold")
    _client_errors(t, r.errors_by_kind_per_s)
    return t


def sentinel_text(s: SentinelSample, name: str, now: float | None) -> Text:
    """One further line of a node's Redis group: what the pair's Sentinel says of this
    node (master, with epoch and quorum of the Sentinels known; down flags; a failover
    under way), or Sentinel's own state when it cannot be read."""
    t = Text()
    _line(t, "sentinel")
    if not s.status.ok:
        t.append(s.status.state.value.upper(), style="bold red")
        if s.status.since is not None and now is not None:
            t.append(f" for {human(max(0.0, now - s.status.since), 4).strip()} s",
                     style="bold red")
        return t
    if s.master_node != name:
        t.append("replica" if s.master_node else f"master is {s.master}", style="bold")
        return t
    _kv(t, "", "master")
    if s.config_epoch is not None:
        _kv(t, "ep", str(s.config_epoch))
    if s.quorum is not None and s.other_sentinels is not None:
        _kv(t, "q", f"{s.quorum}/{s.other_sentinels + 1}")
    if s.down:
        _kv(t, "", s.down.upper(), "bold red")
    if s.failover_state:
        _kv(t, "failover", s.failover_state, "bold yellow")
    return t
