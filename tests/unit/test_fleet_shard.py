"""replmon serve --shard K/N: every pair served once, by its name alone, few moves when
the fleet gains a shard."""

from __future__ import annotations

import random

import pytest

from replmon.fleet.shard import Shard, parse_shard, shard_of

PAIRS = [f"shop-{i:03d}" for i in range(200)] + ["billing", "search", "ünïcode-pair"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_every_pair_belongs_to_exactly_one_shard(n: int) -> None:
    shards = [Shard(k, n) for k in range(1, n + 1)]
    for p in PAIRS:
        assert sum(s.owns(p) for s in shards) == 1, p
    sizes = [sum(s.owns(p) for p in PAIRS) for s in shards]
    assert min(sizes) >= len(PAIRS) / n * 0.6, sizes  # roughly even (203 names)


def test_the_shard_depends_on_the_name_alone() -> None:
    before = {p: shard_of(p, 4) for p in PAIRS}
    shuffled = PAIRS[:]
    random.Random(7).shuffle(shuffled)
    assert {p: shard_of(p, 4) for p in shuffled[:50]} == {p: before[p] for p in shuffled[:50]}
    # fixed values: the same on every host and Python version (hash() of a str is
    # salted per process; two shards disagreeing would serve a pair twice or never)
    names = ("billing", "search", "shop-000", "shop-001", "shop-002")
    assert [shard_of(p, 3) for p in names] == [3, 3, 2, 2, 1]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_a_new_shard_takes_its_share_and_nothing_else_moves(n: int) -> None:
    moved = [p for p in PAIRS if shard_of(p, n) != shard_of(p, n + 1)]
    assert all(shard_of(p, n + 1) == n + 1 for p in moved)  # only to the new shard
    share = len(PAIRS) / (n + 1)
    assert 0.5 * share <= len(moved) <= 1.5 * share, (len(moved), share)
    modulo = sum(1 for p in PAIRS if hash(p) % n != hash(p) % (n + 1))
    assert n == 1 or len(moved) < modulo  # what hash % N would have moved


def test_parse_shard() -> None:
    assert parse_shard("2/3") == Shard(2, 3) and str(parse_shard(" 1 / 2 ")) == "1/2"
    for bad in ("0/2", "3/2", "2", "a/b", "1/0", ""):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)
