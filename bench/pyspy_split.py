"""Split a py-spy profile of ``replmon serve`` into the parts of a pair-tick (run by hand
on the output of ``bench/bench_serve.py --pyspy DIR``; needs ``--format raw``).

    .venv/bin/python bench/pyspy_split.py DIR/now-200.txt --pairs 200 --seconds 60 \
        [--interval 5] [--rate 200] [--top 25]

Only samples of a running thread count (a stack ending in a socket read, a select, a
sleep or a lock wait is idle). Each sample goes to the first part whose marker is on
its stack (the order of PARTS), and ms per pair-tick = samples / rate / pair-ticks.
"""

from __future__ import annotations

import argparse
import collections

IDLE = ("readinto (socket.py", "select (selectors.py", "wait (threading.py",
        "_worker (concurrent/futures/thread.py:81)", "sleep", "accept (socket.py",
        "serve_forever (socketserver.py:233)", "recv_into", "_wait_for_tstate_lock",
        "select (select", "poll (selectors.py", "get (queue.py", "run_forever", "<idle>",
        "SharedWriter._run (")  # its leaf is its wait in SimpleQueue.get (a C call)
PARTS = (  # name, markers (any on the stack)
    ("metrics formatting (render_pair)", ("render_pair",)),
    ("HTTP scrape: live families", ("generate_latest", "_live (replmon/fleet/metrics.py")),
    ("HTTP scrape: join of cached text", ("exposition (replmon/fleet/metrics.py",)),
    ("HTTP scrape: wsgi, socket write", ("App.__call__", "WSGIRequestHandler",
                                         "ServerHandler", "_SilentHandler")),
    ("recording", ("Recorder", "replmon/session/")),
    ("engine and checks", ("replmon/engine.py", "checks/", "replmon/check.py",
                           "replmon/windows.py")),
    ("rate derivation", ("RateTracker", "replmon/model/rates.py",
                         "replmon/model/host_rates.py")),
    ("MySQL: parsing", ("mysql_parse", "mysql_replica_parse", "mysql_binlog_parse",
                        "mysql_processlist_parse", "mysql_values")),
    ("MySQL: client protocol (pymysql)", ("MysqlSource",)),
    ("Redis: parsing", ("redis_parse",)),
    ("Redis: client", ("RedisSource", "redis_info")),
    ("host /proc: read and parse", ("replmon/sources/host", "kernel_ping", "HostSource")),
    ("building the tick (pydantic models)", ("model_validate", "model_copy",
                                             "collector.py", "sources/base.py")),
    ("pipeline", ("replmon/pipeline.py",)),
    ("GC", ("<gc>",)),
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--top", type=int, default=0, help="also the N hottest leaf frames")
    args = ap.parse_args()
    parts: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    with open(args.profile) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            if any(m in frames[-1] for m in IDLE):
                continue
            count = int(n)
            for name, markers in PARTS:
                if any(m in stack for m in markers):
                    parts[name] += count
                    break
            else:
                parts["other (event loop, asyncio, threads)"] += count
            leaves[frames[-1]] += count
    pair_ticks = args.pairs * args.seconds / args.interval
    total = sum(parts.values())
    print(f"{'part':48} {'ms/pair-tick':>12} {'%':>6}")
    for name, c in parts.most_common():
        print(f"{name:48} {c / args.rate * 1000 / pair_ticks:12.2f} {c / total * 100:6.1f}")
    print(f"{'total (busy samples)':48} {total / args.rate * 1000 / pair_ticks:12.2f}")
    for leaf, c in leaves.most_common(args.top):
        print(f"{c:7d} {leaf}")


if __name__ == "__main__":
    main()
