"""Reading DRBD state: pure functions, no I/O, testable on captured output.

* ``drbd_flavour(proc_text)``: "8" or "9" from line 1 of /proc/drbd (``version: 8.4.6 ...``).
* ``parse_proc_drbd(text)``: a DRBD 8.x /proc/drbd -> DrbdSample (flavour "8").
* ``parse_drbdsetup_json(text)``: ``drbdsetup status --json`` (DRBD 9) -> DrbdSample
  (flavour "9").

Both return a sample with the default (ok) status and zero timestamps; ``DrbdSource``
stamps them. Formats, value sets and real samples are in reference/drbd.md §1 and §2.

/proc/drbd rules (drbd.md §1.8), which real copies need:
 * a minor starts at ``^\\s*<digits>:``; the lines after it (counters, progress) belong to
   it; indentation is optional (copies often lose it) and any Unicode space counts;
 * ``st:`` (8.0-8.2) or ``ro:``; 4, 5 or 6 I/O flags; no protocol on StandAlone;
   ``oos``/``ep``/``wo`` absent on 8.0; ``cs:Unconfigured`` has no counters line;
 * stray spaces after ``:`` or ``/`` ("ro:Primary/ Unknown") are closed up;
 * progress lines: ``sync'ed:``/``verified:`` (also ``synced:``), (left/total) in K or M,
   thousands separators (115,524 and 8.3.8's 1024,000), ``want:``, ``(stalled)`` or a
   ``stalled`` line, 8.3.8 ``queue_delay:``/``delay_probe:``, proc_details speeds
   ``(3s -- long-term)``; ``resync:``/``act_log:``/``sector pos:``/``blocked on activity
   log`` lines are ignored.

Errors: anything malformed (garbage, a minor whose counters do not parse, a missing
counters line, JSON of the wrong shape) raises ``replmon.errors.ParseError`` naming the
line or the JSON path; never another exception type.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from replmon.errors import ParseError
from replmon.model.drbd import (
    DrbdConnection,
    DrbdDevice,
    DrbdPeerDevice,
    DrbdResource,
    DrbdResync,
    DrbdSample,
    Flavour,
    Protocol,
)

_intern = sys.intern
"""The states, roles and flags a resource shows tick after tick are one string each, not
one per reading: the engine keeps each tick's DRBD sample 300 s (#56;
replmon/sources/mysql_values.py)."""

NO_PROGRESS_ETA = 987654321
"""``estimated-seconds-to-finish`` value drbdsetup prints when the resync makes no progress."""

PEER_8 = "peer"
"""Peer name used for the single 8.x connection."""

# 8.x cs -> DRBD 9 connection state; values not listed here (sync, verify, Ahead/Behind,
# StartingSync*, WFBitMap*, WFSyncUUID) mean the connection is up: "Connected".
_CS_CONNECTION = {
    "StandAlone": "StandAlone", "Disconnecting": "Disconnecting", "Unconnected": "Unconnected",
    "Timeout": "Timeout", "BrokenPipe": "BrokenPipe", "NetworkFailure": "NetworkFailure",
    "ProtocolError": "ProtocolError", "TearDown": "TearDown", "WFConnection": "Connecting",
    "WFReportParams": "Connecting", "Connected": "Connected", "Unconfigured": "StandAlone",
}
_REPLICATION = frozenset({
    "StartingSyncS", "StartingSyncT", "WFBitMapS", "WFBitMapT", "WFSyncUUID", "SyncSource",
    "SyncTarget", "VerifyS", "VerifyT", "PausedSyncS", "PausedSyncT", "Ahead", "Behind",
})
_RESYNC_STATES = frozenset({
    "SyncSource", "SyncTarget", "PausedSyncS", "PausedSyncT", "VerifyS", "VerifyT",
})
_PROTOCOLS: dict[str, Protocol] = {"A": "A", "B": "B", "C": "C"}
_WRITE_ORDERING = {"n": "none", "d": "drain", "f": "flush", "b": "barrier"}
_BLOCKED = {"-": "no", "n": "no", "b": "lower", "a": "lower", "d": "upper", "c": "upper"}
_COUNTERS = ("ns", "nr", "dw", "dr", "al", "bm", "lo", "pe", "ua", "ap")
"""Counter keys every 8.x counters line has (8.0 on); ep, wo and oos came later."""

_VERSION_RE = re.compile(r"version:\s*((\d{1,4})\.\d{1,4}\S*)")
_HEADER_RE = re.compile(
    r"(?:GIT-hash:|srcversion:|SVN Revision:|Transports\b|built-in\b|.*\bbuild by\b)")
"""Known forms of the lines between the version line and the first minor: a LINBIT
build's GIT-hash, an out-of-tree module's srcversion, ``built-in`` when DRBD is
compiled into the kernel (drbd_proc.c prints it where a module prints srcversion),
DRBD 9's Transports line."""
_MINOR_RE = re.compile(r"\s*(\d{1,9}):(.*)")
_CLOSE_UP_RE = re.compile(r"(?<=[:/])\s+(?=\S)")
_FLAGS_RE = re.compile(r"[rs][-a-z]{3,5}")
_KEY_VALUE_RE = re.compile(r"([A-Za-z_]+):(\S+)")
_INT_RE = re.compile(r"-?\d{1,20}")
_IGNORED_RE = re.compile(r"\s*(?:resync:|act_log:|blocked on activity log|\d+%\s+sector pos:)")
_PROGRESS_RE = re.compile(r"\s*(?:\[|finish:|stalled\b)")
_PERCENT_LABEL_RE = re.compile(r"sync'?ed:|verified:")
_N = r"(-?\d[\d,]{0,30})"
_PERCENT_RE = re.compile(r"(sync'?ed|verified):\s*(\d{1,3}(?:\.\d{1,6})?)\s*%")
_LEFT_TOTAL_RE = re.compile(r"\(\s*" + _N + r"\s*/\s*" + _N + r"\s*\)\s*([KM]?)")
"""(left/total) and the unit: M (MiB) when the total is above 4 GiB, K (KiB) otherwise;
a line with no letter is read as KiB rather than losing its numbers."""
_FINISH_RE = re.compile(r"finish:\s*(\d{1,9}):(\d{1,2}):(\d{1,2})")
_SPEED_RE = re.compile(r"speed:\s*" + _N + r"\s*\(([^)]*)\)")
_WANT_RE = re.compile(r"want:\s*" + _N)
_STALLED_RE = re.compile(r"\(stalled\)|^\s*stalled\s*$", re.MULTILINE)


# --- /proc/drbd --------------------------------------------------------------------


def proc_version(proc_text: str) -> tuple[str, int]:
    """(version, major) from the first non-blank line, e.g. ("8.4.6", 8)."""
    for line in proc_text.splitlines():
        if line.strip():
            m = _VERSION_RE.match(line.strip())
            if m is None:
                raise ParseError(f"/proc/drbd line 1: expected 'version: X.Y...', got {line!r:.80}")
            return m.group(1), int(m.group(2))
    raise ParseError("/proc/drbd is empty")


def drbd_flavour(proc_text: str) -> Flavour:
    """"8" for DRBD 8.x (read /proc/drbd itself), "9" for 9.x and later (ask drbdsetup)."""
    version, major = proc_version(proc_text)
    if major == 8:
        return "8"
    if major >= 9:
        return "9"
    raise ParseError(f"/proc/drbd line 1: DRBD {version} is not supported (8.x and 9.x are)")


@dataclass
class _MinorText:
    """The lines of one minor: its state line and the lines that follow it."""

    lineno: int
    minor: int
    state: str
    more: list[tuple[int, str]] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"/proc/drbd line {self.lineno} (minor {self.minor})"


def parse_proc_drbd(text: str) -> DrbdSample:
    """Every minor of a /proc/drbd text as a one-peer resource (see replmon.model.drbd)."""
    flavour = drbd_flavour(text)
    version, _ = proc_version(text)
    minors: list[_MinorText] = []
    notes: list[str] = []
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    for lineno, line in lines[1:]:  # lines[0] is the version line proc_version() checked
        m = _MINOR_RE.match(line)
        if m is not None:
            if any(x.minor == int(m.group(1)) for x in minors):
                raise ParseError(f"/proc/drbd line {lineno}: minor {m.group(1)} appears twice")
            minors.append(_MinorText(lineno, int(m.group(1)), m.group(2)))
        elif minors:
            minors[-1].more.append((lineno, line))
        elif line[:1].isspace():  # a minor's continuation with no minor: garbled
            raise ParseError(f"/proc/drbd line {lineno}: unexpected header line {line!r:.80}")
        elif not _HEADER_RE.match(line.strip()):  # a header form we do not know: a note
            notes.append(f"/proc/drbd line {lineno}: unknown header line "
                         f"{line.strip()!r:.80} (ignored)")
    return _sample(version=version, flavour=flavour, resources=[_resource_8(m) for m in minors],
                   notes=notes)


def _resource_8(m: _MinorText) -> DrbdResource:
    fields: dict[str, str] = {}
    protocol: Protocol | None = None
    flags: str | None = None
    for tok in _CLOSE_UP_RE.sub("", m.state).split():
        kv = _KEY_VALUE_RE.fullmatch(tok)
        if kv is not None:
            fields[kv.group(1)] = _intern(kv.group(2))
        elif tok in _PROTOCOLS:
            protocol = _PROTOCOLS[tok]
        elif _FLAGS_RE.fullmatch(tok):
            flags = _intern(tok)
        elif tok != "-":  # drbd-overview prints "-" for a missing protocol
            raise ParseError(f"{m.where}: unexpected token {tok!r:.40}")
    cs = fields.get("cs")
    if cs is None:
        raise ParseError(f"{m.where}: no cs: field")
    roles, disks = fields.get("ro", fields.get("st")), fields.get("ds")
    unconfigured = cs == "Unconfigured" and roles is None and disks is None and not m.more
    if unconfigured:  # StandAlone + Diskless + Secondary: only "N: cs:Unconfigured" is printed
        roles, disks = "Secondary/Unknown", "Diskless/DUnknown"
    elif roles is None or disks is None:
        raise ParseError(f"{m.where}: missing {'ro:' if roles is None else 'ds:'} field")
    role, peer_role = _pair(roles, "ro", m.where)
    disk, peer_disk = _pair(disks, "ds", m.where)
    counters, progress = ({}, "") if unconfigured else _continuation(m)

    def num(key: str) -> int | None:
        v = counters.get(key)
        return v if isinstance(v, int) else None

    wo = counters.get("wo")
    held = _flag_reasons(flags)
    c5 = flags[4] if flags is not None and len(flags) >= 5 else None
    up = cs in _REPLICATION
    peer_device = DrbdPeerDevice(
        volume=0, peer_disk_state=peer_disk,
        replication_state="Established" if cs == "Connected" else cs if up else (
            "Off" if cs in _CS_CONNECTION else None),
        sent_kib=num("ns"), received_kib=num("nr"), out_of_sync_kib=num("oos"),
        pending=num("pe"), unacked=num("ua"), epochs=num("ep"), resync_suspended=held,
        resync=_progress(progress, cs, held) if progress or cs in _RESYNC_STATES else None,
    )
    connection = DrbdConnection(
        peer=PEER_8, connection_state=_CS_CONNECTION.get(cs, "Connected" if up else None),
        cs=cs, peer_role=peer_role, protocol=protocol,
        congested=None if c5 is None else c5 in ("n", "a"), io_flags=flags,
        peer_devices=[peer_device],
    )
    device = DrbdDevice(
        volume=0, minor=m.minor, disk_state=disk, read_kib=num("dr"), written_kib=num("dw"),
        al_writes=num("al"), bm_writes=num("bm"), lower_pending=num("lo"),
        upper_pending=num("ap"),
        al_suspended=flags[5] == "s" if flags is not None and len(flags) >= 6 else None,
        blocked=None if c5 is None else _BLOCKED.get(c5),
    )
    return DrbdResource(
        name=str(m.minor), role=role, suspended=None if flags is None else flags[0] == "s",
        write_ordering=_WRITE_ORDERING.get(wo) if isinstance(wo, str) else None,
        devices=[device], connections=[connection],
    )


def _continuation(m: _MinorText) -> tuple[dict[str, int | str], str]:
    """The counters of one minor and its progress lines joined by newlines."""
    counters: dict[str, int | str] | None = None
    progress: list[str] = []
    for n, line in m.more:
        if line.strip().startswith("ns:"):
            if counters is not None:
                raise ParseError(f"/proc/drbd line {n} (minor {m.minor}): second counters line")
            counters = _counters(n, line, m.minor)
        elif _PROGRESS_RE.match(line) or _PERCENT_LABEL_RE.search(line):
            progress.append(line)
        elif not _IGNORED_RE.match(line):
            raise ParseError(f"/proc/drbd line {n} (minor {m.minor}): unexpected {line!r:.80}")
    if counters is None:
        raise ParseError(f"{m.where}: no counters line (ns: nr: dw: ...)")
    return counters, "\n".join(progress)


def _pair(value: str, key: str, where: str) -> tuple[str, str]:
    parts = value.split("/")
    if len(parts) != 2 or not all(parts):
        raise ParseError(f"{where}: {key}:{value[:40]} is not local/peer")
    return _intern(parts[0]), _intern(parts[1])


def _counters(lineno: int, line: str, minor: int) -> dict[str, int | str]:
    where = f"/proc/drbd line {lineno} (minor {minor} counters)"
    out: dict[str, int | str] = {}
    for tok in line.split():
        kv = _KEY_VALUE_RE.fullmatch(tok)
        if kv is None:
            raise ParseError(f"{where}: unreadable field {tok!r:.40}")
        key, value = kv.group(1), kv.group(2)
        if key == "wo":
            if value not in _WRITE_ORDERING:
                raise ParseError(f"{where}: wo:{value[:20]} is not one of b, f, d, n")
            out[key] = value
        elif _INT_RE.fullmatch(value):
            out[key] = int(value)
        else:
            raise ParseError(f"{where}: {key}:{value[:30]} is not an integer")
    missing = [k for k in _COUNTERS if k not in out]
    if missing:
        raise ParseError(f"{where}: missing {', '.join(missing)}")
    return out


def _flag_reasons(flags: str | None) -> list[str]:
    """Resync-pause reasons from I/O flags 2-4 (a: dependency, p: peer, u: user)."""
    if flags is None:
        return []
    marks = (("user", 3, "u"), ("peer", 2, "p"), ("dependency", 1, "a"))
    return [name for name, i, ch in marks if flags[i] == ch]


def _number(text: str) -> int:
    """An integer printed with optional thousands separators (115,524 or 1024,000)."""
    return int(text.replace(",", ""))


def _progress(text: str, cs: str, suspended: list[str]) -> DrbdResync:
    """The resync/verify progress lines of one minor (joined), see drbd.md §1.6."""
    pct = _PERCENT_RE.search(text)
    lt = _LEFT_TOTAL_RE.search(text)
    fin = _FINISH_RE.search(text)
    speed = _SPEED_RE.search(text)
    want = _WANT_RE.search(text)
    left = total = avg = None
    if lt is not None:
        unit = 1024 if lt.group(3) == "M" else 1
        left, total = _number(lt.group(1)) * unit, _number(lt.group(2)) * unit
    if speed is not None:
        inner = re.findall(r"-?\d[\d,]{0,30}", speed.group(2))
        avg = float(_number(inner[-1])) if inner else None
    return DrbdResync(
        verify=(pct is not None and pct.group(1) == "verified") or cs in ("VerifyS", "VerifyT"),
        percent_done=float(pct.group(2)) if pct else None,
        left_kib=left, total_kib=total,
        eta_s=int(fin.group(1)) * 3600 + int(fin.group(2)) * 60 + int(fin.group(3))
        if fin else None,
        speed_kib_s=float(_number(speed.group(1))) if speed else None,
        avg_speed_kib_s=avg,
        want_kib_s=float(_number(want.group(1))) if want else None,
        stalled=_STALLED_RE.search(text) is not None,
        suspended=list(suspended),
    )


# --- drbdsetup status --json ---------------------------------------------------------


class _Obj:
    """A JSON object read defensively: a missing key is None, a wrong type a ParseError
    naming the path (e.g. ``resources[0].devices[1].minor``)."""

    def __init__(self, raw: object, path: str) -> None:
        if not isinstance(raw, dict):
            raise ParseError(f"drbdsetup JSON {path}: expected an object, got {_kind(raw)}")
        self.raw: dict[str, Any] = raw
        self.path = path

    def _get(self, key: str, want: str, ok: Callable[[object], bool]) -> Any:
        v = self.raw.get(key)
        if v is not None and not ok(v):
            raise ParseError(f"drbdsetup JSON {self.path}.{key}: expected {want}, got {_kind(v)}")
        return v

    def int_(self, key: str) -> int | None:
        v: int | None = self._get(key, "an integer", _is_int)
        return v

    def float_(self, key: str) -> float | None:
        """A number as float; None when missing, not finite or beyond float range."""
        v: float | None = self._get(key, "a number", lambda x: _is_int(x) or type(x) is float)
        try:
            return None if v is None or not math.isfinite(v) else float(v)
        except OverflowError:  # an integer with hundreds of digits
            return None

    def str_(self, key: str) -> str | None:
        v: str | None = self._get(key, "a string", lambda x: isinstance(x, str))
        return None if v is None else _intern(v)

    def bool_(self, key: str) -> bool | None:
        v: bool | None = self._get(key, "true/false", lambda x: isinstance(x, bool))
        return v

    def list_(self, key: str) -> list[_Obj]:
        v: list[object] | None = self._get(key, "an array", lambda x: isinstance(x, list))
        return [_Obj(item, f"{self.path}.{key}[{i}]") for i, item in enumerate(v or [])]


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _kind(v: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(v), "a number")


_C_NON_FINITE = re.compile(r"([:\[,]\s*)-?(?:nan|inf)(?=\s*[,\]}])")
"""A bare nan/inf where a JSON value stands (never inside a string: it follows : [ ,)."""


def parse_drbdsetup_json(text: str, *, version: str | None = None) -> DrbdSample:
    """``drbdsetup status --json`` output -> DrbdSample. ``version`` (from /proc/drbd) is
    copied into the sample; an empty array means no resources."""
    try:
        raw = json.loads(text)
    except ValueError:
        # drbdsetup prints a 0/0 estimate with C's printf: a bare nan (or inf), which
        # JSON has no word for (seen while a resync starts): read it as unknown (null).
        try:
            raw = json.loads(_C_NON_FINITE.sub(r"\1null", text))
        except (ValueError, RecursionError) as e:
            raise ParseError(f"drbdsetup JSON is not valid JSON: {e}"[:200]) from None
    except RecursionError as e:
        raise ParseError(f"drbdsetup JSON is not valid JSON: {e}"[:200]) from None
    if not isinstance(raw, list):
        raise ParseError(f"drbdsetup JSON: expected an array of resources, got {_kind(raw)}")
    resources = [_resource(_Obj(r, f"[{i}]")) for i, r in enumerate(raw)]
    return _sample(version=version, flavour="9", resources=resources)


def _resource(r: _Obj) -> DrbdResource:
    name = r.str_("name")
    if not name:
        raise ParseError(f"drbdsetup JSON {r.path}: resource without a name")
    reasons = [k for k in ("user", "no-data", "fencing", "quorum") if r.bool_(f"suspended-{k}")]
    return DrbdResource(
        name=name, node_id=r.int_("node-id"), role=r.str_("role"),
        suspended=r.bool_("suspended"), suspend_reasons=reasons,
        write_ordering=r.str_("write-ordering"),
        devices=[_device(d) for d in r.list_("devices")],
        connections=[_connection(c, i) for i, c in enumerate(r.list_("connections"))],
    )


def _device(d: _Obj) -> DrbdDevice:
    return DrbdDevice(
        volume=d.int_("volume") or 0, minor=d.int_("minor"), disk_state=d.str_("disk-state"),
        client=d.bool_("client"), quorum=d.bool_("quorum"), size_kib=d.int_("size"),
        read_kib=d.int_("read"), written_kib=d.int_("written"),
        al_writes=d.int_("al-writes"), bm_writes=d.int_("bm-writes"),
        lower_pending=d.int_("lower-pending"), upper_pending=d.int_("upper-pending"),
    )


def _connection(c: _Obj, index: int) -> DrbdConnection:
    node_id = c.int_("peer-node-id")
    peer = c.str_("name") or (f"node-{node_id}" if node_id is not None else f"peer-{index}")
    return DrbdConnection(
        peer=peer, peer_node_id=node_id, connection_state=c.str_("connection-state"),
        peer_role=c.str_("peer-role"), congested=c.bool_("congested"),
        ap_in_flight_sectors=c.int_("ap-in-flight"),
        rs_in_flight_sectors=c.int_("rs-in-flight"),
        peer_devices=[_peer_device(p) for p in c.list_("peer_devices")],
    )


def _peer_device(p: _Obj) -> DrbdPeerDevice:
    held = p.str_("resync-suspended") or "no"
    suspended = [] if held == "no" else held.split(",")
    repl = p.str_("replication-state")
    oos = p.int_("out-of-sync")
    resync = None
    if p.bool_("has-sync-details") or p.raw.get("percent-resync-done") is not None or (
            repl in _RESYNC_STATES):
        verify = bool(p.bool_("has-online-verify-details")) or repl in ("VerifyS", "VerifyT")
        eta = p.int_("estimated-seconds-to-finish")
        rs_total = p.int_("rs-total")
        resync = DrbdResync(
            verify=verify, percent_done=p.float_("percent-resync-done"),
            left_kib=None if verify else oos,
            total_kib=rs_total // 2 if rs_total is not None else None,
            eta_s=None if eta == NO_PROGRESS_ETA else eta,
            speed_kib_s=_mib(p.float_("db1/dt1 [MiB/s]")),
            avg_speed_kib_s=_mib(p.float_("db/dt [MiB/s]")),
            want_kib_s=_mib(p.float_("want")),
            stalled=eta == NO_PROGRESS_ETA, suspended=suspended,
        )
    return DrbdPeerDevice(
        volume=p.int_("volume") or 0, replication_state=repl,
        peer_disk_state=p.str_("peer-disk-state"), peer_client=p.bool_("peer-client"),
        sent_kib=p.int_("sent"), received_kib=p.int_("received"), out_of_sync_kib=oos,
        pending=p.int_("pending"), unacked=p.int_("unacked"),
        percent_in_sync=p.float_("percent-in-sync"), resync_suspended=suspended, resync=resync,
    )


def _mib(v: float | None) -> float | None:
    return None if v is None else v * 1024


def _sample(*, version: str | None, flavour: Flavour, resources: list[DrbdResource],
            notes: list[str] | None = None) -> DrbdSample:
    try:
        return DrbdSample(version=version, flavour=flavour, resources=resources,
                          notes=notes or [])
    except ValidationError as e:  # pragma: no cover - the builders above pass typed values
        raise ParseError(f"DRBD state does not fit the model: {e}") from None
