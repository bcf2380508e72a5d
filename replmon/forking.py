"""The fork server replmon's helper processes start from: the re-run's workers
(replmon.session.rerun) and the lab's write load (replmon.lab.load).

Both fork from multiprocessing's "forkserver" process, never from the process that
asks (it may run threads: the TUI, asyncio, logging), and that server imports their
modules once (its preload), so a new process costs a fork, not a fresh interpreter and
its imports (the write load: ~0.2 s of CPU each, measured). There is one server per
process and it reads its preload once, when it starts: whichever of the two starts it
preloads both.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

PRELOAD = ["replmon.session.rerun", "replmon.lab.load"]
"""Imported by the fork server as it starts (0.5 s of CPU once, measured)."""


def context() -> Any:
    """multiprocessing's "forkserver" context, with replmon's preload."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx
