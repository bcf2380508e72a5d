"""The DRBD source: this node's DRBD resources, normalised for 8.x and 9.

Per tick:
 1. read /proc/drbd through the runner (mode 0444: no root needed). Missing -> the node
    has no DRBD: SourceError state "absent".
 2. line 1 decides the reader (reference/drbd.md §0):
    * ``version: 8.*``: parse /proc/drbd itself (``drbd_parse.parse_proc_drbd``);
    * ``version: 9.*``: /proc/drbd holds only the version, so run ``drbdsetup status
      --json`` through the runner (``drbd_parse.parse_drbdsetup_json``). A missing
      drbdsetup is SourceError state "error" with a hint to install drbd-utils; a non-zero
      exit is already a SourceError from the runner.

Garbled text raises ParseError, which ``Source.sample()`` turns into status "parse_error".
Rates come later from two samples (``replmon.model.drbd.derive_drbd_rates``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import ClassVar

from replmon.errors import SourceError
from replmon.model.drbd import DrbdSample
from replmon.sources.base import Source
from replmon.sources.drbd_parse import (
    drbd_flavour,
    parse_drbdsetup_json,
    parse_proc_drbd,
    proc_version,
)
from replmon.sources.runner import Runner

log = logging.getLogger(__name__)

DRBDSETUP_JSON: tuple[str, ...] = ("drbdsetup", "status", "--json")
"""Default command for DRBD 9 state."""


class DrbdSource(Source[DrbdSample]):
    """Samples DRBD on one node through a runner.

    ``proc_path`` relocates /proc/drbd (a fixture, a container's host mount);
    ``drbdsetup_cmd`` is the argv run on DRBD 9 nodes (e.g. with ``sudo -n`` in front)."""

    kind: ClassVar[str] = "drbd"
    sample_type = DrbdSample
    fresh_samples = True  # (parse_proc_drbd/parse_drbdsetup_json: a new DrbdSample each call)

    def __init__(
        self,
        runner: Runner,
        *,
        proc_path: str = "/proc/drbd",
        drbdsetup_cmd: Sequence[str] = DRBDSETUP_JSON,
        timeout: float = 0.8,
    ) -> None:
        super().__init__(timeout=timeout)
        self.runner = runner
        self.proc_path = proc_path
        self.drbdsetup_cmd = tuple(drbdsetup_cmd)
        self._noted: set[str] = set()

    def __repr__(self) -> str:
        return f"DrbdSource(proc_path={self.proc_path!r}, drbdsetup_cmd={self.drbdsetup_cmd!r})"

    async def _fetch(self) -> DrbdSample:
        try:
            text = await self.runner.read_file(self.proc_path)
        except FileNotFoundError:
            raise SourceError(
                f"no DRBD on this host: {self.proc_path} not found",
                state="absent",
                hint="the drbd kernel module is not loaded (or DRBD is not installed)",
            ) from None
        if drbd_flavour(text) == "8":
            sample = parse_proc_drbd(text)
            for note in sample.notes:
                if note not in self._noted:  # once per source: it repeats every tick
                    self._noted.add(note)
                    log.info("%s: %s", self.runner, note)
            return sample
        version, _ = proc_version(text)
        return parse_drbdsetup_json(await self._drbdsetup(), version=version)

    async def _drbdsetup(self) -> str:
        cmd = self.drbdsetup_cmd
        try:
            return await self.runner.run(cmd)
        except FileNotFoundError:
            raise SourceError(
                f"DRBD 9 host but {cmd[0]} was not found",
                state="error",
                hint="install drbd-utils: DRBD 9 state comes from `drbdsetup status --json`",
            ) from None
        except SourceError as e:
            if e.hint is not None:
                raise
            raise SourceError(
                str(e),
                state=e.state,
                hint=f"`{' '.join(cmd)}` failed; on DRBD 9 it usually needs root "
                "(run replmon as root or allow the command in sudoers)",
            ) from e
