"""What each panel says, as rich Text: pure functions of a NodeTick (and findings).

Kept apart from the widgets so the wording is tested without an app, and so the
lines are short enough for half of an 80-column terminal (38 characters): the
numbers DBAs read first (dstat/orzdba order) come first on each line.
"""

from __future__ import annotations

from rich.text import Text

from replmon.model.base import SourceState, SourceStatus
from replmon.model.findings import Finding, Severity
from replmon.model.tick import NodeTick, Tick
from replmon.output.plain import human

SEV_STYLE = {Severity.CRITICAL: "bold white on red", Severity.WARNING: "bold black on yellow",
             Severity.INFO: "cyan"}
STATE_STYLE = {SourceState.ABSENT: "dim", SourceState.OK: "green"}


def _label(t: Text, label: str) -> None:
    t.append(f"{label:<4} ", style="bold dim")


def _kv(t: Text, key: str, value: str, style: str = "bold") -> None:
    if key:
        t.append(f"{key} ", style="dim")
    t.append(value, style=style)
    t.append(" ")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}%"


def status_text(kind: str, st: SourceStatus, now: float | None) -> Text:
    """A source that is not ok, in place of its numbers: state, since, error, hint."""
    t = Text()
    _label(t, kind)
    if st.state is SourceState.ABSENT:  # expected (no DRBD here, switched off): one dim line
        why = (st.error or "not configured").split(":")[0]
        t.append(why if len(why) <= 32 else why[:31] + "…", style="dim")
        return t
    style = "bold red"
    t.append(st.state.value.upper(), style=style)
    if st.since is not None and now is not None:
        t.append(f" for {human(max(0.0, now - st.since), 4).strip()}s", style=style)
    if st.error:
        t.append(f"\n     {st.error}", style="red")
    if st.hint:
        t.append(f"\n     hint: {st.hint}", style="yellow")
    return t


def host_text(n: NodeTick) -> Text:
    r = n.rates.host
    t = Text()
    _label(t, "cpu")
    _kv(t, "us", _pct(r.cpu_usr_pct))
    _kv(t, "sy", _pct(r.cpu_sys_pct))
    _kv(t, "id", _pct(r.cpu_idle_pct))
    wa = r.cpu_iowait_pct
    _kv(t, "wa", _pct(wa), "bold red" if wa is not None and wa >= 20 else "bold")
    _kv(t, "ld", "-" if r.load1 is None else f"{r.load1:.1f}")
    t.append("\n")
    _label(t, "mem")
    av = r.mem_available_pct
    _kv(t, "av", _pct(av), "bold red" if av is not None and av < 10 else "bold")
    _kv(t, "swp", human(r.swap_used_bytes, 4).strip())
    si, so = r.swap_in_pages_per_s, r.swap_out_pages_per_s
    paging = any(v is not None and v > 0 for v in (si, so, r.major_faults_per_s))
    style = "bold red" if paging else "bold"
    _kv(t, "si", human(si, 3).strip(), style)
    _kv(t, "so", human(so, 3).strip(), style)
    _kv(t, "mf", human(r.major_faults_per_s, 3).strip(), style)
    t.append("\n")
    d = r.disk_total
    _label(t, "dsk")
    _kv(t, "r", human(d.read_bytes_per_s).strip())
    _kv(t, "w", human(d.write_bytes_per_s).strip())
    _kv(t, "aw", "-" if d.await_ms is None else f"{d.await_ms:.1f}ms")
    _kv(t, "ut", _pct(r.disk_max_util_pct))
    t.append("\n")
    net = r.net_total
    _label(t, "net")
    _kv(t, "rx", human(net.recv_bytes_per_s).strip())
    _kv(t, "tx", human(net.send_bytes_per_s).strip())
    nics = [nic for name, nic in r.nics.items() if name != "lo" and nic.util_pct is not None]
    busiest = max(nics, key=lambda nic: nic.util_pct or 0.0, default=None)
    if busiest is not None and busiest.speed_mbps:
        u = busiest.util_pct or 0.0
        _kv(t, "link", f"{u:.0f}% of {busiest.speed_mbps}M", "bold red" if u >= 85 else "bold")
    return t


def drbd_text(n: NodeTick) -> Text:
    t = Text()
    if not n.drbd.resources:
        _label(t, "drbd")
        t.append("no resources configured", style="dim")
        return t
    for i, res in enumerate(n.drbd.resources):
        if i:
            t.append("\n")
        _label(t, "drbd")
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
                t.append("\n     ")
                _kv(t, "oos", f"{human(oos * 1024, 4).strip()}B", "bold red" if oos else "bold")
                _kv(t, "pe", str(pd.pending if pd.pending is not None else "-"))
                _kv(t, "ua", str(pd.unacked if pd.unacked is not None else "-"))
                _kv(t, "ap", str(c.ap_in_flight_sectors if c.ap_in_flight_sectors is not None
                                 else "-"))
                if pd.resync is not None and pd.resync.percent_done is not None:
                    eta = pd.resync.eta_s
                    t.append(f"\n     sync {pd.resync.percent_done:.1f}% "
                             f"eta {'-' if eta is None else f'{eta // 60}m{eta % 60:02d}s'}",
                             style="yellow")
    return t


def mysql_text(n: NodeTick) -> Text:
    m, r = n.mysql, n.rates.mysql
    t = Text()
    _label(t, "qps")
    t.append(human(r.qps).strip(), style="bold")
    t.append("  ")
    for key, v in (("i", r.com_insert_per_s), ("u", r.com_update_per_s),
                   ("d", r.com_delete_per_s), ("s", r.com_select_per_s)):
        _kv(t, key, human(v).strip())
    t.append("\n")
    _label(t, "rows")
    for key, v in (("i", r.rows_inserted_per_s), ("u", r.rows_updated_per_s),
                   ("d", r.rows_deleted_per_s), ("r", r.rows_read_per_s)):
        _kv(t, key, human(v).strip())
    t.append("\n")
    _label(t, "bp")
    _kv(t, "hit", "-" if r.bp_hit_pct is None else f"{r.bp_hit_pct:.1f}%")
    g = m.gauges
    _kv(t, "thr", f"{g.get('Threads_running', '-')}/{g.get('Threads_connected', '-')}")
    _kv(t, "rtt", "-" if m.rtt_ms is None else f"{m.rtt_ms:.1f}ms")
    t.append("\n")
    _label(t, "repl")
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
            t.append("\n     ")
        io_ok, sql_ok = ch.io_running == "Yes", ch.sql_running
        _kv(t, "io", ch.io_running, "bold green" if io_ok else "bold red")
        _kv(t, "sql", "Yes" if sql_ok else "No", "bold green" if sql_ok else "bold red")
        lag = ch.seconds_behind
        _kv(t, "lag", "NULL" if lag is None else f"{lag}s",
            "bold red" if lag is None or lag >= 30 else "bold")
        err = ch.last_sql_error or ch.last_io_error
        if err:
            t.append(f"\n     {err[:200]}", style="red")
    return t


def redis_text(n: NodeTick) -> Text:
    s, r = n.redis, n.rates.redis
    t = Text()
    _label(t, "ops")
    t.append(human(r.ops_per_s).strip(), style="bold")
    t.append("  ")
    _kv(t, "hit", _pct(r.hit_pct))
    _kv(t, "cli", str(s.connected_clients if s.connected_clients is not None else "-"))
    _kv(t, "rtt", "-" if s.rtt_ms is None else f"{s.rtt_ms:.1f}ms")
    t.append("\n")
    _label(t, "mem")
    used = s.used_memory
    if s.maxmemory:
        frac = (used or 0) / s.maxmemory * 100
        _kv(t, "", f"{human(used).strip()}B of {human(s.maxmemory).strip()}B = {frac:.0f}%",
            "bold red" if frac >= 90 else "bold")
    else:
        _kv(t, "", f"{human(used).strip()}B, no maxmemory")
    if r.evicted_per_s:
        _kv(t, "evict", f"{human(r.evicted_per_s).strip()}/s", "bold red")
    t.append("\n")
    _label(t, "role")
    t.append(f"{s.role or '?'} ", style="bold")
    if s.role == "replica":
        up = s.link_status == "up"
        _kv(t, "link", s.link_status or "?", "bold green" if up else "bold red")
        if s.sync_in_progress:
            t.append("SYNCING ", style="bold yellow")
        lag = r.replica_lag_bytes
        if lag:
            _kv(t, "lag", f"{human(max(v or 0 for v in lag.values())).strip()}B")
    else:
        _kv(t, "replicas", str(s.connected_replicas if s.connected_replicas is not None else "-"))
        worst = max((v for v in r.replica_lag_bytes.values() if v is not None), default=None)
        if worst is not None:
            _kv(t, "lag", f"{human(worst).strip()}B", "bold red" if worst > 1 << 20 else "bold")
    return t


def finding_line(f: Finding) -> Text:
    t = Text()
    t.append(f" {f.severity.label[:4].upper()} ", style=SEV_STYLE[f.severity])
    t.append(f" {f.node} ", style="bold")
    t.append(f.headline)
    return t


def header_text(tick: Tick | None, findings: list[Finding], *, age_s: float | None,
                paused: bool = False, source: str = "live") -> Text:
    """The pair at a glance: names and roles, replication, worst finding, data age."""
    t = Text()
    if tick is None:
        t.append(" waiting for the first tick...", style="dim")
        return t
    p, r = tick.primary, tick.replica
    t.append(f" {p.name} ", style="bold reverse")
    t.append(" primary  ", style="dim")
    ch = r.mysql.replication[0] if r.mysql.status.ok and r.mysql.replication else None
    if r.mysql.status.state not in (SourceState.OK, SourceState.ABSENT):
        t.append("=sql ?=> ", style="bold red")
    if ch is not None:
        healthy = ch.io_running == "Yes" and ch.sql_running
        lag = "NULL" if ch.seconds_behind is None else f"{ch.seconds_behind}s"
        t.append(f"=sql {lag}=> " if healthy else "=sql BROKEN=> ",
                 style="green" if healthy else "bold red")
    if p.drbd.status.ok and p.drbd.resources:
        conns = [c for res in p.drbd.resources for c in res.connections]
        # DRBD 8 users read WFConnection/SyncSource: show the raw cs where there is one.
        shown = {c.cs or c.connection_state or "?" for c in conns}
        connected = all(c.connection_state == "Connected" for c in conns)
        if connected and shown <= {"Connected"}:
            t.append("=drbd=> ", style="green")
        else:
            t.append(f"=drbd {'/'.join(sorted(shown))}=> ",
                     style="bold yellow" if connected else "bold red")
    if r.redis.status.ok and r.redis.role == "replica":
        up = r.redis.link_status == "up"
        t.append("=rds=> " if up else "=rds DOWN=> ", style="green" if up else "bold red")
    elif r.redis.status.state not in (SourceState.OK, SourceState.ABSENT):
        t.append("=rds ?=> ", style="bold red")
    t.append(f" {r.name} ", style="bold reverse")
    t.append(" replica ", style="dim")
    worst = findings[0] if findings else None
    if worst is not None and worst.severity > Severity.INFO:
        n = sum(f.severity > Severity.INFO for f in findings)
        t.append(f" {worst.severity.label.upper()} ", style=SEV_STYLE[worst.severity])
        t.append(f" {n} finding{'s' if n != 1 else ''} ", style="bold")
    else:
        t.append(" OK ", style="bold black on green")
    t.append("  ")
    if paused:
        t.append(" PAUSED ", style="bold black on yellow")
    elif age_s is not None and age_s > 3 * tick.interval:
        t.append(f" STALE {age_s:.0f}s ", style="bold white on red")
    elif age_s is not None:
        t.append(f"{source} {age_s:.1f}s ago", style="dim")
    if tick.late:
        t.append(" late", style="yellow")
    return t
