"""What a recording's reader met of damage, said once each: the byte offset, the ticks it
costs (``Recording.problems``). Damage never raises past opening a file."""

from __future__ import annotations

import logging

from replmon.session.format import KIND_END, FrameError

log = logging.getLogger("replmon.session.recording")


class DamageReport:
    """The problems of one file (``name``), in the order met."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []
        """What was damaged, each with its byte offset and tick range; empty when intact."""
        self._reported: set[int] = set()
        """Byte offsets whose damage is already in ``problems``."""
        self.head_said = False
        """Whether ``problems`` already says that the first ticks are lost."""

    def add(self, msg: str) -> None:
        """Note damage (once per message; logged at INFO: the commands print
        ``problems`` themselves)."""
        if msg not in self.problems:
            log.info("%s", msg)
            self.problems.append(msg)

    def at(self, e: FrameError, where: str) -> None:
        """Damage at ``e.offset`` (said once per offset); ``where``: what it costs."""
        if e.offset in self._reported:
            return
        self._reported.add(e.offset)
        self.add(f"{self.name}: byte {e.offset}: {e.reason} ({where})")

    def said_at(self, offset: int) -> None:
        """Damage at ``offset`` is said in another way (a damaged header)."""
        self._reported.add(offset)


def lost_tail(buf: bytes, n: int, offset: int) -> str:
    """What damage at ``offset`` of ``buf`` with no intact chunk after it costs (``n``: the
    index of the tick after the last intact one)."""
    if buf[offset:offset + 1] == KIND_END and len(buf) - offset < 4096:
        return "the end frame is damaged: no tick lost, the clean close is not proven"
    return (f"the readable recording ends here: ticks from {n} on are missing, if any "
            "were written (recorder killed mid-write, or the file was truncated or "
            "damaged)")


def lost_between(n: int, nxt: int) -> str:
    """What damage costs in a chunk after tick ``n - 1`` when the next chunk starts at
    ``nxt``."""
    if nxt <= n:
        return "no tick lost: the damage is after the chunk's last tick"
    return f"ticks {n} to {nxt - 1} lost"
