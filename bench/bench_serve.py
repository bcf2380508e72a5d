"""``replmon serve`` cost by fleet size, as deployed and as Prometheus sees it (run by hand;
figures go in docs/benchmarks.md).

    .venv/bin/python bench/bench_serve.py [--pairs 50 200] [--seconds 60] [--interval 5]
        [--scrape 5] [--self-scrape 1] [--record] [--tree NAME=DIR ...] [--pyspy DIR]
        [--timeline 60]

For each source tree (``--tree before=/tmp/before after=.``: ``replmon serve`` run from
that tree, so the code before and after a change is measured in one run against one
lab) and each fleet size N: ``replmon serve`` (a subprocess, as deployed) watches N
pairs pointed at the lab's MariaDB and Redis (many pairs per server), one of them at a
hung server (a socket that accepts and never answers). A real Prometheus (Debian's
``/usr/bin/prometheus``, a temp dir, loopback, free ports) scrapes it every ``--scrape``
seconds, and this process scrapes /metrics every ``--self-scrape`` seconds too (0: not).
After one warm-up interval, for --seconds:

- CPU of the serve process (user + system, psutil), as % of one core, and per pair-tick
  ("ms/pt": as if every pair ticked every interval; "ms/tk": per tick done, the pairs'
  ``replmon_ticks_total`` over the run, "ticks": a loaded machine skips ticks, and a
  skipped tick costs nothing);
  its system share ("sys %"), and the CPU of the processes it started and reaped ("kids
  %": commands it runs on the node, which the CPU % leaves out);
- its RSS at the end (and every ``--timeline`` seconds: CPU and RSS over time);
- Prometheus' own ``scrape_duration_seconds`` of the replmon job over the run (p50,
  p99, max, via ``quantile_over_time`` on its HTTP API) and ``scrape_samples_scraped``;
- the in-process scrape: p50/p99 latency and page size;
- with ``--record`` (every pair records to a temp record_dir): tick start lag (how late
  each tick started against its schedule) of every pair but the hung one, read from
  their recordings: p99 and max;
- the machine's 1-minute load average at the end (other work on the machine skews
  every figure: compare trees measured in the same run);
- with ``--ssh``: every node's host and DRBD are read over ssh (its own connection, through
  a test sshd on loopback; DRBD from a real DRBD 8.4 /proc/drbd): the ssh connections
  serve holds, the CPU of its ssh clients and of the nodes' side (sshd sessions and the
  commands they run), besides serve's own;
- with ``--static-twin``: Prometheus also scrapes a static copy of the page (taken after
  the warm-up, served by this process as it is): its own share of a scrape, p50 and p99;
- with ``--pyspy DIR`` (py-spy on PATH or in /tmp/pyspy/bin): a py-spy profile of the
  serve process over the run, DIR/<tree>-<N>.txt (raw collapsed stacks).

Targets (issue #33), 5 s interval, one process on a 2-core machine: 200 pairs <= 25 % of
one core (<= 6 ms per pair-tick), Prometheus' scrape p99 <= 100 ms at 200 pairs and <= 50
ms at 50, RSS <= 400 MB at 200 pairs once the windows are full (>= 10 min), tick start lag
p99 <= 100 ms while scraped every second.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil

from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.session.recording import open_recording

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live"))
from sshd import Sshd, cpu_seconds  # noqa: E402  (the live tests' sshd, for --ssh)

ROOT = Path(__file__).resolve().parent.parent


FROM_TREE = ("import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path "
             "if 'editable' not in repr(f).lower()]; "
             "runpy.run_module('replmon', run_name='__main__', alter_sys=True)")
"""``python -m replmon`` from another tree on PYTHONPATH: without the editable install's
finder, which would map ``replmon.checks`` to this checkout's checks/ whatever the tree
(the checks of the tree measured must be its own: the bench links its replmon/checks to
its checks/)."""


DRBD8 = ROOT / "tests" / "fixtures" / "drbd" / "s10_8411_syncsource_synced.txt"
"""A real DRBD 8.4 /proc/drbd, read over ssh as each node's DRBD with ``--ssh``."""


def fleet_toml(lab: Lab, n: int, interval: float, hung_port: int, rec: Path | None,
               ssh_config: Path | None = None) -> str:
    s = lab.settings()
    out = [f'interval = {interval}']
    if rec is not None:
        out.append(f'record_dir = "{rec}"')
    out += ["[defaults]",
            f'mysql = {{ user = "{lab.monitor_user}", password_env = "LAB_MYSQL_PW" }}',
            'redis = { password_env = "LAB_REDIS_PW" }']
    if ssh_config is None:
        out.append('ssh = { mode = "local" }')
    else:  # every node's host and DRBD read over its own ssh connection
        out += [f'ssh = {{ mode = "ssh", config_file = "{ssh_config}" }}',
                f'drbd = {{ proc_path = "{DRBD8}" }}']
    for i in range(n):
        out += ["[[pair]]", f'name = "pair{i:03d}"']
        for role in ("primary", "replica"):
            m, r = s[role]["mysql"]["port"], s[role]["redis"]["port"]
            if i == 0 and role == "replica":
                m = r = hung_port
            out += [f"[pair.{role}]", 'host = "127.0.0.1"', f'name = "{role}{i:03d}"',
                    f"mysql = {{ port = {m} }}", f"redis = {{ port = {r} }}"]
    return "\n".join(out) + "\n"


def _get(url: str, timeout: float = 10) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return bytes(r.read())


def _wait(url: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while True:
        try:
            _get(url, 2)
            return
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


def _ticks_done(port: int) -> float:
    """The pairs' ticks so far (the sum of replmon_ticks_total on /metrics)."""
    total = 0.0
    for line in _get(f"http://127.0.0.1:{port}/metrics").split(b"\n"):
        if line.startswith(b"replmon_ticks_total{"):
            total += float(line.rsplit(b" ", 1)[1])
    return total


def _prom_value(port: int, expr: str) -> float:
    q = urllib.parse.urlencode({"query": expr})
    doc = json.loads(_get(f"http://127.0.0.1:{port}/api/v1/query?{q}"))
    res = doc["data"]["result"]
    return float(res[0]["value"][1]) if res else float("nan")


class _Twin(ThreadingHTTPServer):
    """A static twin of /metrics for ``--static-twin``: the page replmon served after its
    warm-up, sent as it is, so that Prometheus' scrape of it is Prometheus' own share
    (reading and storing the same samples) of a scrape of replmon."""

    def __init__(self) -> None:
        self.page = b""
        twin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(twin.page)))
                self.end_headers()
                self.wfile.write(twin.page)

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.daemon_threads = True
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        super().__exit__(*exc)


def _ssh_cpu(ps: psutil.Process, sshd: Sshd | None) -> tuple[int, float, float]:
    """(ssh clients alive under serve, their CPU seconds, CPU seconds of the sshd sessions
    and the commands they run: the nodes' side)."""
    if sshd is None or sshd.proc is None:
        return 0, 0.0, 0.0
    clients = [p for p in ps.children(recursive=True) if p.name() == "ssh"]
    return len(clients), cpu_seconds(clients), sshd.cpu_seconds()


def run(lab: Lab, tree: str, n: int, args: argparse.Namespace,
        label: str) -> dict[str, Any]:
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(1024)
    interval, seconds = args.interval, args.seconds
    with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
        tmp = Path(d)
        rec = tmp / "rec" if args.record else None
        sshd = None
        twin = stack.enter_context(_Twin()) if args.static_twin else None
        if args.ssh:
            (tmp / "sshd").mkdir()
            sshd = stack.enter_context(Sshd(tmp / "sshd"))
        (tmp / "fleet.toml").write_text(fleet_toml(lab, n, interval, hole.getsockname()[1],
                                                   rec, sshd.ssh_config if sshd else None))
        port, prom_port = lab.free_port(), lab.free_port()
        scrape = f"{args.scrape:g}s"
        (tmp / "prometheus.yml").write_text(json.dumps({
            "global": {"scrape_interval": scrape, "scrape_timeout": scrape,
                       "evaluation_interval": "5s"},
            "scrape_configs": [{"job_name": "replmon", "static_configs": [
                {"targets": [f"127.0.0.1:{port}"]}]}]
            + ([{"job_name": "static", "static_configs": [
                {"targets": [f"127.0.0.1:{twin.server_address[1]}"]}]}] if twin else [])}))
        env = dict(os.environ, LAB_MYSQL_PW=lab.monitor_password,
                   LAB_REDIS_PW=lab.redis_password, PYTHONPATH=tree)
        other = Path(tree).resolve() != ROOT
        if other and not (Path(tree) / "replmon" / "checks").exists():
            (Path(tree) / "replmon" / "checks").symlink_to("../checks")
        run = ["-c", FROM_TREE] if other else ["-m", "replmon"]
        proc = subprocess.Popen([sys.executable, *run, "serve", "--config",
                                 str(tmp / "fleet.toml"), "--listen", f"127.0.0.1:{port}"],
                                env=env, cwd=tree, stderr=subprocess.DEVNULL)
        prometheus = shutil.which("prometheus")
        assert prometheus, "prometheus missing: .ci/setup installs Debian's package"
        prom = subprocess.Popen([prometheus, f"--config.file={tmp / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={tmp / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{prom_port}"],
                                cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        spy = None
        try:
            ps = psutil.Process(proc.pid)
            _wait(f"http://127.0.0.1:{prom_port}/-/ready")
            _wait(f"http://127.0.0.1:{port}/metrics", 120)
            end = time.monotonic() + 300  # every pair started (200 take a while) and ticked
            while _get(f"http://127.0.0.1:{port}/metrics").count(b"replmon_ticks_total{") < n:
                if time.monotonic() > end:
                    raise RuntimeError("not every pair ticked within 300 s")
                time.sleep(1)
            time.sleep(interval)
            if twin is not None:
                twin.page = _get(f"http://127.0.0.1:{port}/metrics")
            if args.pyspy:
                exe = (shutil.which("py-spy")
                       or shutil.which("py-spy", path=str(Path(sys.executable).parent))
                       or "/tmp/pyspy/bin/py-spy")
                out = Path(args.pyspy) / f"{label}-{n}.txt"
                out.parent.mkdir(parents=True, exist_ok=True)
                spy = subprocess.Popen([exe, "record", "--pid", str(proc.pid), "--gil",
                                        "--nonblocking", "--format", "raw", "--rate", "200",
                                        "--duration", str(int(seconds)), "--output", str(out)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=dict(os.environ, PYTHONPATH=""))
            ssh0 = _ssh_cpu(ps, sshd)
            ticks0 = _ticks_done(port)
            c0, t0 = ps.cpu_times(), time.monotonic()
            prom_t0 = time.time()
            start_wall = time.time()
            scrapes: list[float] = []
            size = 0
            mark_c, mark_t = c0, t0
            timeline: list[tuple[float, float, float]] = []
            while time.monotonic() - t0 < seconds:
                s0 = time.perf_counter()
                if proc.poll() is not None:
                    raise RuntimeError(f"replmon serve ended (exit status {proc.returncode})")
                if args.self_scrape:
                    size = len(_get(f"http://127.0.0.1:{port}/metrics"))
                    scrapes.append((time.perf_counter() - s0) * 1000)
                if args.timeline and time.monotonic() - mark_t >= args.timeline:
                    c, t = ps.cpu_times(), time.monotonic()
                    timeline.append((t - t0, (c.user + c.system - mark_c.user - mark_c.system)
                                     / (t - mark_t) * 100, ps.memory_info().rss / 2**20))
                    print(f"  {label} {n} pairs t={t - t0:5.0f} s CPU {timeline[-1][1]:5.1f} % "
                          f"RSS {timeline[-1][2]:5.0f} MB", flush=True)
                    mark_c, mark_t = c, t
                time.sleep(max(0.0, (args.self_scrape or 1.0) - (time.perf_counter() - s0)))
            c1, t1 = ps.cpu_times(), time.monotonic()
            ticks1 = _ticks_done(port)
            ssh1 = _ssh_cpu(ps, sshd)
            rss = ps.memory_info().rss
            rng = f"{max(1, int(time.time() - prom_t0))}s"
            sel = 'scrape_duration_seconds{job="replmon"}'
            prom_res = {
                "prom_p50_ms": _prom_value(prom_port, f"quantile_over_time(0.5, {sel}[{rng}])")
                * 1000,
                "prom_p99_ms": _prom_value(prom_port, f"quantile_over_time(0.99, {sel}[{rng}])")
                * 1000,
                "prom_max_ms": _prom_value(prom_port, f"max_over_time({sel}[{rng}])") * 1000,
                "prom_scrapes": _prom_value(prom_port, f"count_over_time({sel}[{rng}])"),
                "samples": _prom_value(prom_port, 'scrape_samples_scraped{job="replmon"}'),
            }
            if twin is not None:
                sel = 'scrape_duration_seconds{job="static"}'
                prom_res |= {f"static_{q}_ms": _prom_value(
                    prom_port, f"quantile_over_time({v}, {sel}[{rng}])") * 1000
                    for q, v in (("p50", 0.5), ("p99", 0.99))}
        finally:
            if spy is not None:
                spy.wait(seconds + 60)
            proc.terminate()
            prom.terminate()
            proc.wait(30)
            prom.wait(30)
        hole.close()
        lags: list[float] = []
        if rec is not None:
            for i in range(1, n):
                with open_recording(rec / f"pair{i:03d}.rmrec") as r:
                    lags += [t.start_lag_ms for t in r.ticks() if t.wall >= start_wall]
    cpu = (c1.user + c1.system - c0.user - c0.system) / (t1 - t0) * 100
    sys_pct = (c1.system - c0.system) / (t1 - t0) * 100
    child = (c1.children_user + c1.children_system - c0.children_user
             - c0.children_system) / (t1 - t0) * 100
    scrapes.sort()
    lags.sort()
    nan = float("nan")
    return {"tree": label, "pairs": n, "seconds": t1 - t0, "cpu_pct": cpu,
            "ms_per_pair_tick": cpu / 100 * interval * 1000 / n,
            "pair_ticks": ticks1 - ticks0,
            "ms_per_done_tick": (c1.user + c1.system - c0.user - c0.system) * 1000
            / max(1.0, ticks1 - ticks0),
            "sys_pct": sys_pct, "child_pct": child,
            "ssh_conns": ssh1[0], "ssh_client_pct": (ssh1[1] - ssh0[1]) / (t1 - t0) * 100,
            "ssh_node_pct": (ssh1[2] - ssh0[2]) / (t1 - t0) * 100,
            "rss_mb": rss / 2**20,
            "scrape_p50_ms": statistics.median(scrapes) if scrapes else nan,
            "scrape_p99_ms": scrapes[min(len(scrapes) - 1, int(0.99 * len(scrapes)))]
            if scrapes else nan,
            "page_kb": size / 1024,
            "lag_p99_ms": lags[int(0.99 * (len(lags) - 1))] if lags else nan,
            "lag_max_ms": lags[-1] if lags else nan, "ticks": len(lags),
            "timeline": timeline, "load1": os.getloadavg()[0], **prom_res}


HEAD = (f"{'tree':>7} {'pairs':>5} {'s':>5} {'CPU %':>6} {'sys %':>5} {'kids %':>6} "
        f"{'ms/pt':>6} {'ticks':>6} {'ms/tk':>6} {'RSS MB':>6} "
        f"{'prom p50':>8} {'p99':>6} {'max':>6} {'samples':>8} {'self p50':>8} {'p99':>6} "
        f"{'page KB':>7} {'lag p99':>7} {'max':>6} {'load':>5}")


def line(r: dict[str, Any]) -> str:
    return (f"{r['tree']:>7} {r['pairs']:>5} {r['seconds']:>5.0f} {r['cpu_pct']:>6.1f} "
            f"{r['sys_pct']:>5.1f} {r['child_pct']:>6.1f} {r['ms_per_pair_tick']:>6.2f} "
            f"{r['pair_ticks']:>6.0f} {r['ms_per_done_tick']:>6.2f} {r['rss_mb']:>6.0f} "
            f"{r['prom_p50_ms']:>8.1f} "
            f"{r['prom_p99_ms']:>6.1f} {r['prom_max_ms']:>6.1f} {r['samples']:>8.0f} "
            f"{r['scrape_p50_ms']:>8.1f} {r['scrape_p99_ms']:>6.1f} {r['page_kb']:>7.0f} "
            f"{r['lag_p99_ms']:>7.1f} {r['lag_max_ms']:>6.1f} {r['load1']:>5.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--scrape", type=float, default=5.0,
                    help="Prometheus' scrape interval, s (its timeout too)")
    ap.add_argument("--self-scrape", type=float, default=1.0,
                    help="this process scrapes /metrics every so many s (0: not)")
    ap.add_argument("--ssh", action="store_true",
                    help="read every node's host and DRBD (a DRBD 8.4 fixture) over ssh, "
                         "through a test sshd on loopback (tests/live/sshd.py)")
    ap.add_argument("--static-twin", action="store_true",
                    help="Prometheus also scrapes a static copy of the page (its own share "
                         "of a scrape)")
    ap.add_argument("--record", action="store_true",
                    help="every pair records (tick start lag is read from the recordings)")
    ap.add_argument("--tree", nargs="+", action="extend", default=None,
                    help="NAME=DIR: run replmon serve from each source tree in turn "
                         "(--tree A=DIR B=DIR, or --tree given again; default: this tree)")
    ap.add_argument("--pyspy", help="write a py-spy profile of each run into this dir")
    ap.add_argument("--timeline", type=float, default=0,
                    help="print CPU and RSS every so many s (0: not)")
    ap.add_argument("--json", help="append each result as a JSON line to this file")
    args = ap.parse_args()
    trees = [t.split("=", 1) for t in args.tree or [f"now={ROOT}"]]
    print(HEAD, flush=True)
    with Lab() as lab, WriteLoad(lab, rate=200):
        for n in args.pairs:
            for label, tree in trees:
                r = run(lab, str(Path(tree).resolve()), n, args, label)
                print(line(r), flush=True)
                if args.static_twin:
                    print(f"{'':>7} Prometheus scraping a static copy of the page: p50 "
                          f"{r['static_p50_ms']:.1f} ms, p99 {r['static_p99_ms']:.1f} ms",
                          flush=True)
                if args.ssh:
                    print(f"{'':>7} ssh: {r['ssh_conns']} connections held by serve; ssh "
                          f"clients {r['ssh_client_pct']:.1f} % of a core, the nodes' sshd "
                          f"sessions and commands {r['ssh_node_pct']:.1f} %", flush=True)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
