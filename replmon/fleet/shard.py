"""Which shard serves a pair: ``replmon serve --shard K/N`` runs the same fleet file on
N processes (or hosts), each serving the pairs whose shard is K.

Rendezvous hashing (highest random weight): every pair scores every shard 1..N with a
hash of (pair name, shard number) and belongs to the shard that scores highest. So:
- a pair belongs to exactly one shard, decided by its name alone (not its place in the
  file, not the other pairs): stable when the file is reordered or pairs come and go;
- going from N to N+1 shards moves only the pairs the new shard wins, about 1/(N+1) of
  them (the fewest any assignment can move), and each moves to the new shard; a plain
  ``hash % N`` would move about N/(N+1) of them.

The hash is BLAKE2b of the UTF-8 name and the shard number: the same on every host and
Python version (``hash()`` of a str is salted per process).

Layering: standard library only.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, pair: str) -> bool:
        return shard_of(pair, self.count) == self.index


def parse_shard(text: str) -> Shard:
    """"2/3" -> Shard(2, 3); ValueError with the rule otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise ValueError(f"--shard {text!r}: expected K/N, e.g. 1/2 (shard K of N)")
    k, n = int(m[1]), int(m[2])
    if not 1 <= k <= n:
        raise ValueError(f"--shard {text}: K must be 1..N (shards are numbered from 1)")
    return Shard(k, n)


def _score(pair: str, shard: int) -> int:
    digest = hashlib.blake2b(f"{pair}\0{shard}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def shard_of(pair: str, count: int) -> int:
    """The shard (1..count) that serves ``pair``."""
    if count < 1:
        raise ValueError("a fleet has at least one shard")
    return max(range(1, count + 1), key=lambda k: _score(pair, k))
