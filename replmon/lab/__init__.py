"""The lab: a throwaway replicated pair on this machine (MySQL/MariaDB and Redis, primary
and replica, on loopback in a temp dir), for the tests, the demo and the benches.

- ``pair``: ``Lab``, the pair and its roles now (``from replmon.lab import Lab``);
- ``node``: one node's servers (``LabNode``), ``servers``: the server versions and where
  they come from (this machine, Debian chroots, PyPI wheels);
- ``load``: the write load (``WriteLoad``);
- ``faults``: every fault the lab can be given and the waits for it to heal;
- ``switch``, ``sentinel``: planned switchovers, a failover, a Redis Sentinel;
- ``demo``: ``replmon --lab`` and its ``--scenario`` demos.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replmon.lab.pair import LAYERS, Lab, Layer

__all__ = ["LAYERS", "Lab", "Layer"]


def __getattr__(name: str) -> Any:
    """``Lab`` and its layers, imported when first asked for: ``replmon --help`` reads
    ``lab.servers`` (the versions it offers), which must not load the lab's servers'
    clients and models (0.3 s of every command's start)."""
    if name in __all__:
        from replmon.lab import pair

        return getattr(pair, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
