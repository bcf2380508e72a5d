"""Pure readers of what a Redis Sentinel answers: ``SENTINEL MASTER(S)`` replies (a flat
list of field, value pairs in RESP2, a map in RESP3) and the messages it publishes on
its event channels. No I/O: the Sentinel source (``sentinel.py``) feeds them."""

from __future__ import annotations

from collections.abc import Mapping

from replmon.errors import ParseError
from replmon.model.sentinel import SentinelEvent, SentinelSample

EVENT_PATTERNS = ("+*", "-*")
"""What the source subscribes to (PSUBSCRIBE): every event channel (they start with +
or -), not Sentinel's own ``__sentinel__:hello`` gossip."""

QUIET = frozenset({"+slave", "+sentinel", "+new-epoch", "+vote-for-leader",
                   "-dup-sentinel", "+sentinel-address-switch"})
"""Discovery and voting chatter: not kept (a failover is told by the other events)."""


def fields(reply: object) -> dict[str, str]:
    """One instance's fields: ``[k1, v1, k2, v2, ...]`` or a map."""
    if isinstance(reply, Mapping):
        return {str(k): str(v) for k, v in reply.items()}
    if isinstance(reply, list | tuple) and len(reply) % 2 == 0:
        return {str(reply[i]): str(reply[i + 1]) for i in range(0, len(reply), 2)}
    raise ParseError(f"Sentinel answered {type(reply).__name__}, not a list of fields")


def masters(reply: object) -> list[dict[str, str]]:
    """``SENTINEL MASTERS``: each monitored master's fields."""
    if not isinstance(reply, list | tuple):
        raise ParseError(f"SENTINEL MASTERS answered {type(reply).__name__}, not a list")
    return [fields(r) for r in reply]


def address(f: Mapping[str, str]) -> str:
    return f"{f.get('ip', '')}:{f.get('port', '')}"


def _int(f: Mapping[str, str], key: str) -> int | None:
    v = f.get(key, "")
    return int(v) if v.lstrip("-").isdigit() else None


def build_sample(f: Mapping[str, str], nodes: Mapping[str, str],
                 given: Mapping[str, str] | None = None) -> SentinelSample:
    """The sample's payload from ``SENTINEL MASTER``'s fields; ``nodes``: host:port ->
    the pair's node name (the pair's Redis servers, by every address they go by);
    ``given``: host:port -> the role that node was given."""
    if "ip" not in f or "port" not in f:
        raise ParseError("SENTINEL MASTER: no ip and port in the reply")
    master = address(f)
    state = f.get("failover-state", "")
    return SentinelSample(
        name=f.get("name", ""), master=master, master_node=nodes.get(master, ""),
        flags=tuple(x for x in f.get("flags", "").split(",") if x),
        quorum=_int(f, "quorum"), other_sentinels=_int(f, "num-other-sentinels"),
        replicas=_int(f, "num-slaves"), config_epoch=_int(f, "config-epoch"),
        failover_state="" if state in ("none", "") else state.removeprefix("failover_state_"),
        master_given=(given or {}).get(master, ""),
        role_reported_s=_seconds(f, "role-reported-time"),
        failover_timeout_s=_seconds(f, "failover-timeout"))


def _seconds(f: Mapping[str, str], key: str) -> float | None:
    """A field in milliseconds, as seconds."""
    ms = _int(f, key)
    return None if ms is None or ms < 0 else ms / 1000.0


def event(channel: str, text: str, name: str, wall: float) -> SentinelEvent | None:
    """A published event about master ``name`` (None: another master's, or chatter).
    Sentinel's messages name the master first (``+switch-master lab ...``), as the
    instance itself (``master lab 127.0.0.1 6380``) or after an ``@`` (``slave
    127.0.0.1:6381 127.0.0.1 6381 @ lab 127.0.0.1 6380``)."""
    if channel in QUIET:
        return None
    words = text.split()
    about = (words[:1] == [name] or words[:2] == ["master", name]
             or ("@" in words and words[words.index("@") + 1:][:1] == [name]))
    return SentinelEvent(wall=wall, kind=channel, text=text) if about else None


def switch_of(ev: SentinelEvent) -> tuple[str, str] | None:
    """(old, new) host:port of a ``+switch-master`` (``name oldip oldport newip newport``)."""
    words = ev.text.split()
    if ev.kind != "+switch-master" or len(words) != 5:
        return None
    return f"{words[1]}:{words[2]}", f"{words[3]}:{words[4]}"
