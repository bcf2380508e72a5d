"""CPU of one Redis sample: INFO text to RedisSample, the source's reader against
``build_redis_sample(parse_info(text))`` (the path before read_redis_info); run by hand.

    .venv/bin/python bench/bench_redis_info.py parse [--repeat 21]
    .venv/bin/python bench/bench_redis_info.py live [--rounds 12] [--server redis-server]

``parse``: every INFO capture of tests/fixtures/redis and tests/fixtures/real/redis
(checked equal first), both readers alternating, process CPU time (time.process_time: a
shared machine's waits left out) per text, GC collected and off in each pass; the median
and min over ``--repeat`` passes, and the per-pass ratios.

``live``: starts a master and a replica (``--server``, e.g. a lab wheel's valkey-server;
``--dir`` a temporary directory, no save) on free ports, samples both with RedisSource on
one event loop: 300 samples checked equal under both readers, then ``--rounds`` rounds of
300 samples per reader, alternating, CPU µs per sample (the whole sample: PING, INFO,
the kernel-timed PING, CONFIG GET when due, the parse). The servers are stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import replmon.sources.redis_info as redis_info
from replmon.endpoints import RedisEndpoint
from replmon.errors import ParseError
from replmon.model.redis import RedisSample
from replmon.sources.redis_info import RedisSource
from replmon.sources.redis_parse import build_redis_sample, parse_info, read_redis_info

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def old(text: str) -> RedisSample:
    return build_redis_sample(parse_info(text))


def report(what: str, a: list[float], b: list[float]) -> None:
    ratios = sorted(y / x for x, y in zip(a, b, strict=True))
    print(f"{what}: old median {statistics.median(a):.1f} new {statistics.median(b):.1f} "
          f"(x{statistics.median(b) / statistics.median(a):.2f}); min old {min(a):.1f} new "
          f"{min(b):.1f}; per-pass ratio {ratios[0]:.2f} / {statistics.median(ratios):.2f} / "
          f"{ratios[-1]:.2f} (min / median / max)")


def parse_bench(repeat: int) -> None:
    paths = sorted([*(FIXTURES / "redis").glob("*.txt"),
                    *(FIXTURES / "real" / "redis").glob("*.txt")])
    texts = [p.read_bytes().decode() for p in paths]
    samples = []
    for t in texts:  # the captures that read as a sample (others are refused by both)
        try:
            samples.append((t, old(t)))
        except ParseError:  # (the same error from both: tests/unit/test_redis_parse.py)
            continue
    texts = [t for t, s in samples if read_redis_info(t) == s]
    assert len(texts) == len(samples)

    def per(read: Callable[[str], RedisSample], n: int = 200) -> float:
        gc.collect()
        gc.disable()
        start = time.process_time()
        for _ in range(n):
            for t in texts:
                read(t)
        spent = time.process_time() - start
        gc.enable()
        return spent / n / len(texts) * 1e6

    a: list[float] = []
    b: list[float] = []
    for i in range(repeat):
        for read, out in ((old, a), (read_redis_info, b))[:: 1 if i % 2 else -1]:
            out.append(per(read))
    report(f"{len(texts)} INFO texts, CPU µs per text ({repeat} passes)", a, b)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def live_bench(rounds: int, server: str) -> None:
    exe = shutil.which(server) or server
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as tmp:
        master, replica = free_port(), free_port()
        base = [exe, "--dir", tmp, "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
        log = open(Path(tmp) / "servers.log", "wb")  # noqa: SIM115 (closed below)
        procs = [subprocess.Popen([*base, "--port", str(master)], stdout=log, stderr=log),
                 subprocess.Popen([*base, "--port", str(replica), "--replicaof", "127.0.0.1",
                                   str(master)], stdout=log, stderr=log)]
        try:
            time.sleep(2.0)
            asyncio.run(_live(master, replica, rounds))
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait()
            log.close()


async def _live(master: int, replica: int, rounds: int) -> None:
    sources = [RedisSource(RedisEndpoint(host="127.0.0.1", port=p)) for p in (master, replica)]
    for src in sources:
        await src.open()
    checked = 0

    def both(text: str) -> RedisSample:
        nonlocal checked
        sample = read_redis_info(text)
        assert sample == old(text)
        checked += 1
        return sample

    try:
        redis_info.read_redis_info = both
        for _ in range(150):
            for src in sources:
                sample = await src.sample()
                assert sample.status.ok, sample.status
        print(f"{checked} live INFO texts read the same by both readers")
        a: list[float] = []
        b: list[float] = []
        for i in range(rounds):
            for read, out in ((old, a), (read_redis_info, b))[:: 1 if i % 2 else -1]:
                redis_info.read_redis_info = read
                start = time.process_time()
                for _ in range(150):
                    for src in sources:
                        await src.sample()
                out.append((time.process_time() - start) / 300 * 1e6)
        report(f"RedisSource.sample(), CPU µs per sample ({rounds} rounds of 300)", a, b)
    finally:
        redis_info.read_redis_info = read_redis_info
        for src in sources:
            await src.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("parse", help="INFO text to RedisSample on the captures")
    p.add_argument("--repeat", type=int, default=21)
    lv = sub.add_parser("live", help="RedisSource.sample() against a real server pair")
    lv.add_argument("--rounds", type=int, default=12)
    lv.add_argument("--server", default="redis-server")
    args = ap.parse_args()
    if args.cmd == "parse":
        parse_bench(args.repeat)
    else:
        live_bench(args.rounds, args.server)


if __name__ == "__main__":
    sys.exit(main())
