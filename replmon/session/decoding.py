"""A chunk's records made into ``Entry``s: each tick with its rates derived again (as the
collector did: all four source kinds, or only those a re-run reads) or as stored, and the
live engine's update recorded with it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from replmon.engine import Update
from replmon.model.drbd import derive_drbd_rates
from replmon.model.findings import Finding
from replmon.model.host_rates import derive_host_rates
from replmon.model.mysql_rates import derive_mysql_rates
from replmon.model.parts import rates_only, tick_from_json_thinned
from replmon.model.redis import derive_redis_rates
from replmon.model.tick import NO_RATES, NodeRates, NodeTick, RateTracker, Tick, tick_from_json


@dataclass
class Entry:
    index: int
    """Position of the tick in the recording (0 for the first)."""
    tick: Tick
    update: Update | None


def decode_update(seq: int, raw: dict[str, Any], wall: float = 0.0) -> Update:
    opened = set(raw.get("opened", []))
    open_ = [Finding.model_validate(f) for f in raw.get("open", [])]
    return Update(seq=seq, wall=wall, open=open_,
                  opened=[f for i, f in enumerate(open_) if i in opened],
                  closed=[Finding.model_validate(f) for f in raw.get("closed", [])])


_DERIVE: dict[str, Any] = {"host": derive_host_rates, "drbd": derive_drbd_rates,
                           "mysql": derive_mysql_rates, "redis": derive_redis_rates}
"""Source kind -> what derives its rates (as ``RateTracker`` does for all four)."""


class SomeRates(RateTracker):
    """A RateTracker that derives the rates of some source kinds only: a re-run of checks
    that name what they read (``Check.reads``) needs no other, and deriving a tick's host
    rates (every disk and NIC) costs more than decoding it. The others are DroppedParts
    (``replmon.model.parts``), so no check can read them."""

    def __init__(self, kinds: frozenset[str]) -> None:
        super().__init__()
        self.kinds = kinds

    def rates(self, node: NodeTick) -> NodeRates:
        last = self._last.get(node.given_role, {})
        values = {}
        for kind in self.kinds:
            cur, prev = getattr(node, kind), last.get(kind)
            values[kind] = (_DERIVE[kind](prev if prev is not None and prev.status.ok else None,
                                          cur) if cur.status.ok else getattr(NO_RATES, kind))
        self.remember(node)
        rates: NodeRates = rates_only(values)  # the others dropped: no check reads them
        return rates

    def remember(self, node: NodeTick) -> None:
        """Only the kinds it derives: the others may not have been decoded."""
        self.remember_kinds(node, self.kinds)


def decode_tick(index: int, record: bytes, tracker: RateTracker, update: bool = True,
                samples: frozenset[str] | None = None) -> Entry:
    """Tick ``index`` from its ``record`` (a tick frame's, decompressed), its rates from
    ``tracker`` unless stored; ``samples``: only those decoded (``tick_from_json_thinned``),
    else all; ``update``: with the recorded update, if any."""
    tick_json, _, extra_json = record.partition(b"\n")
    tick = (tick_from_json(tick_json) if samples is None
            else tick_from_json_thinned(tick_json, samples))
    extra: dict[str, Any] = json.loads(extra_json) if extra_json else {}
    stored = extra.get("r", {})
    nodes: dict[str, NodeTick] = {}
    for n in tick.nodes:
        if n.role in stored:  # the recorder's own: the tracker only takes the samples
            tracker.remember(n)
            rates = NodeRates.model_validate(stored[n.role])
        else:
            rates = tracker.rates(n)
        nodes[n.role] = n.model_copy(update={"rates": rates})
    tick = tick.model_copy(update=nodes)
    upd = (decode_update(tick.seq, extra["u"], tick.wall) if update and "u" in extra
           else None)
    return Entry(index, tick, upd)
