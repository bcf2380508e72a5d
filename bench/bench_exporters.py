"""``replmon serve`` for N pairs beside the exporter stack it replaces, one Prometheus
scraping both (run by hand; figures go in docs/benchmarks.md, issue #56 item 5).

    .venv/bin/python bench/bench_exporters.py [--pairs 20] [--seconds 60] [--interval 5]
        [--scrape 5] [--tree DIR] [--node-args ARG ...]

In one run, against one lab (the lab pair's MariaDB and Redis, under bench_serve's light
write load), at the same time:

- replmon's side: ``replmon serve`` (a subprocess, as deployed, from ``--tree``) watching
  N pairs (bench_serve's fleet file: every pair at the lab's servers, pair000's replica
  at a hung server, a socket that accepts and never answers);
- the exporters' side, one of each kind per node as a fleet deploys them: 2N
  ``prometheus-mysqld-exporter``, 2N ``prometheus-redis-exporter`` and 2N
  ``prometheus-node-exporter`` (Debian's packages, their default collectors and flags;
  ``--node-args`` adds node_exporter flags), each node's pointed at the servers that node
  has in the fleet file (pair000's replica's at the same hung socket), on free loopback
  ports;
- one Prometheus (Debian's ``/usr/bin/prometheus``, a temp dir) scraping every target of
  both sides every ``--scrape`` seconds.

After one warm-up interval (every pair ticked, every target scraped once), for --seconds:
CPU of each side (user + system from /proc over the run, with what the children each
process reaped in the run used, % of one core), its RSS sum at
the end, and the samples per scrape Prometheus stored of each side's targets
(``scrape_samples_scraped``), the ratios replmon / exporters, Prometheus' own CPU, and
the 1-minute load average. Every process it starts is stopped at the end.

Note: N node_exporters on one machine all read that machine's /proc (a fleet's read
their own); their CPU is what each costs, read on the same kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from replmon.lab import Lab
from replmon.lab.load import WriteLoad

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serve import FROM_TREE, ROOT, _get, _prom_value, _wait, fleet_toml  # noqa: E402

EXPORTERS = ("prometheus-mysqld-exporter", "prometheus-redis-exporter",
             "prometheus-node-exporter")
"""Debian's packages (and binaries) of the exporters replmon serve replaces."""


def _cpu_s(procs: list[psutil.Process]) -> float:
    """User + system CPU seconds of ``procs`` and of the children each has reaped
    (/proc/PID/stat: serve's ``tc`` every 5 s; the exporters start none)."""
    total = 0.0
    for p in procs:
        t = p.cpu_times()
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _rss_mb(procs: list[psutil.Process]) -> float:
    return sum(p.memory_info().rss for p in procs) / 2**20


def _nodes(lab: Lab, n: int, hung: int) -> list[tuple[str, int, int]]:
    """(node name, MySQL port, Redis port) of every node of bench_serve's fleet file."""
    s = lab.settings()
    out = []
    for i in range(n):
        for role in ("primary", "replica"):
            m, r = s[role]["mysql"]["port"], s[role]["redis"]["port"]
            if i == 0 and role == "replica":
                m = r = hung
            out.append((f"{role}{i:03d}", m, r))
    return out


_TAKEN: set[int] = set()


def _port(lab: Lab) -> int:
    """A free port not handed out before in this run: ``free_port`` only says a port is
    free now, and 120 exporters asked in a row once got one twice (the second exited)."""
    while (port := lab.free_port()) in _TAKEN:
        pass
    _TAKEN.add(port)
    return port


def _exporter_cmds(lab: Lab, node: tuple[str, int, int], node_args: list[str]
                   ) -> list[tuple[str, list[str], dict[str, str], int]]:
    """(job, argv, extra env, port) of one node's three exporters."""
    _, mport, rport = node
    pm, pr, pn = _port(lab), _port(lab), _port(lab)
    dsn = f"{lab.monitor_user}:{lab.monitor_password}@(127.0.0.1:{mport})/"
    return [
        ("mysqld", ["prometheus-mysqld-exporter", f"--web.listen-address=127.0.0.1:{pm}"],
         {"DATA_SOURCE_NAME": dsn}, pm),
        ("redis", ["prometheus-redis-exporter", f"-web.listen-address=127.0.0.1:{pr}",
                   f"-redis.addr=redis://127.0.0.1:{rport}"],
         {"REDIS_PASSWORD": lab.redis_password}, pr),
        ("node", ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{pn}",
                  *node_args], {}, pn),
    ]


def run(lab: Lab, args: argparse.Namespace) -> dict[str, Any]:
    n, interval, tree = args.pairs, args.interval, str(Path(args.tree).resolve())
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(4096)
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "fleet.toml").write_text(fleet_toml(lab, n, interval, hole.getsockname()[1],
                                                   None))
        port, prom_port = _port(lab), _port(lab)
        jobs: dict[str, list[str]] = {"replmon": [f"127.0.0.1:{port}"], "mysqld": [],
                                      "redis": [], "node": []}
        cmds = []
        for node in _nodes(lab, n, hole.getsockname()[1]):
            for job, argv, env, p in _exporter_cmds(lab, node, args.node_args):
                jobs[job].append(f"127.0.0.1:{p}")
                cmds.append((argv, env))
        scrape = f"{args.scrape:g}s"
        (tmp / "prometheus.yml").write_text(json.dumps({
            "global": {"scrape_interval": scrape, "scrape_timeout": scrape,
                       "evaluation_interval": "5s"},
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets}]}
                               for job, targets in jobs.items()]}))
        env = dict(os.environ, LAB_MYSQL_PW=lab.monitor_password,
                   LAB_REDIS_PW=lab.redis_password, PYTHONPATH=tree)
        other = Path(tree) != ROOT
        if other and not (Path(tree) / "replmon" / "checks").exists():
            (Path(tree) / "replmon" / "checks").symlink_to("../checks")
        try:
            serve = subprocess.Popen(
                [sys.executable, *(["-c", FROM_TREE] if other else ["-m", "replmon"]),
                 "serve", "--config", str(tmp / "fleet.toml"), "--listen",
                 f"127.0.0.1:{port}"], env=env, cwd=tree, stderr=subprocess.DEVNULL)
            procs.append(serve)
            exporters = []
            for argv, extra in cmds:
                exe = shutil.which(argv[0])
                assert exe, f"{argv[0]} missing: apt-get install {argv[0]}"
                p = subprocess.Popen([exe, *argv[1:]], env=dict(os.environ, **extra),
                                     cwd=tmp, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                procs.append(p)
                exporters.append(p)
            prometheus = shutil.which("prometheus")
            assert prometheus, "prometheus missing: .ci/setup installs Debian's package"
            prom = subprocess.Popen([prometheus, f"--config.file={tmp / 'prometheus.yml'}",
                                     f"--storage.tsdb.path={tmp / 'tsdb'}",
                                     f"--web.listen-address=127.0.0.1:{prom_port}"],
                                    cwd=tmp, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            procs.append(prom)
            _wait(f"http://127.0.0.1:{prom_port}/-/ready")
            _wait(f"http://127.0.0.1:{port}/metrics", 120)
            end = time.monotonic() + 300
            while _get(f"http://127.0.0.1:{port}/metrics").count(b"replmon_ticks_total{") < n:
                if time.monotonic() > end:
                    raise RuntimeError("not every pair ticked within 300 s")
                time.sleep(1)
            time.sleep(max(interval, args.scrape) + 1)  # every target scraped once
            side = {"replmon": [psutil.Process(serve.pid)],
                    "exporters": [psutil.Process(p.pid) for p in exporters],
                    "prometheus": [psutil.Process(prom.pid)]}
            c0, t0, w0 = {k: _cpu_s(v) for k, v in side.items()}, time.monotonic(), time.time()
            while time.monotonic() - t0 < args.seconds:
                for p in procs:
                    if p.poll() is not None:
                        raise RuntimeError(f"{p.args[0]} ended (exit status {p.returncode})")
                time.sleep(1)
            c1, t1 = {k: _cpu_s(v) for k, v in side.items()}, time.monotonic()
            rss = {k: _rss_mb(v) for k, v in side.items()}
            load = os.getloadavg()
            rng = f"{max(1, int(time.time() - w0))}s"
            samples = {job: _prom_value(prom_port, f'sum(scrape_samples_scraped{{job="{job}"}})')
                       for job in jobs}
            up = {job: _prom_value(prom_port, f'sum(up{{job="{job}"}})') for job in jobs}
            scrape_p99 = {job: _prom_value(
                prom_port, f'max(quantile_over_time(0.99, scrape_duration_seconds'
                f'{{job="{job}"}}[{rng}]))') * 1000 for job in jobs}
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            hole.close()
    cpu = {k: (c1[k] - c0[k]) / (t1 - t0) * 100 for k in c1}
    exp_samples = samples["mysqld"] + samples["redis"] + samples["node"]
    return {"pairs": n, "seconds": t1 - t0, "cpu_pct": cpu, "rss_mb": rss,
            "samples": samples, "up": up, "scrape_p99_ms": scrape_p99,
            "exporter_procs": len(side["exporters"]),
            "exporter_samples": exp_samples, "load": load,
            "cpu_ratio": cpu["replmon"] / cpu["exporters"],
            "rss_ratio": rss["replmon"] / rss["exporters"],
            "samples_ratio": samples["replmon"] / exp_samples}


def report(r: dict[str, Any]) -> str:
    c, m, s, up = r["cpu_pct"], r["rss_mb"], r["samples"], r["up"]
    p99 = r["scrape_p99_ms"]
    exp = f"exporters ({r['exporter_procs']} processes)"
    return "\n".join([
        f"{r['pairs']} pairs, {r['seconds']:.0f} s, load average "
        f"{' '.join(f'{x:.2f}' for x in r['load'])}",
        f"{'side':<28} {'CPU %':>6} {'RSS MB':>7} {'samples':>8} {'up':>5} {'p99 ms':>7}",
        f"{'replmon serve (1 process)':<28} {c['replmon']:>6.1f} {m['replmon']:>7.0f} "
        f"{s['replmon']:>8.0f} {up['replmon']:>5.0f} {p99['replmon']:>7.1f}",
        f"{exp:<28} {c['exporters']:>6.1f} "
        f"{m['exporters']:>7.0f} {r['exporter_samples']:>8.0f} "
        f"{up['mysqld'] + up['redis'] + up['node']:>5.0f}",
        *(f"{'  ' + job + '_exporter':<28} {'':>6} {'':>7} {s[job]:>8.0f} {up[job]:>5.0f} "
          f"{p99[job]:>7.1f}" for job in ("mysqld", "redis", "node")),
        f"{'prometheus':<28} {c['prometheus']:>6.1f} {m['prometheus']:>7.0f}",
        f"replmon / exporters: CPU {r['cpu_ratio']:.3f}x, RSS {r['rss_ratio']:.3f}x, "
        f"samples per scrape {r['samples_ratio']:.3f}x",
    ])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--scrape", type=float, default=5.0,
                    help="Prometheus' scrape interval, s (its timeout too)")
    ap.add_argument("--tree", default=str(ROOT), help="run replmon serve from this tree")
    ap.add_argument("--node-args", nargs="*", default=[],
                    help="extra node_exporter flags (default: none, its defaults)")
    ap.add_argument("--json", help="append the result as a JSON line to this file")
    args = ap.parse_args()
    for exe in EXPORTERS:
        if shutil.which(exe) is None:
            sys.exit(f"{exe} missing: apt-get install {' '.join(EXPORTERS)}")
    with Lab() as lab, WriteLoad(lab, rate=200):
        r = run(lab, args)
    print(report(r), flush=True)
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
