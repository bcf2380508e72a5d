"""Each command imports what it uses, not what another command does (#56: memory).

Every case runs one command's real path through ``replmon.cli.main`` in a fresh
interpreter and lists, at its end, the modules it imported that it must not have: the
screen (textual) in ``serve``, ``check``, ``report`` and ``record``; the Prometheus
client in all but ``serve``; cryptography's RSA (pymysql's, ~7 MB, for
caching_sha2_password without TLS only: replmon/sources/mysql_driver.py) in all of them;
asyncio and the config's models for ``--help``; the graph view's plotext in the screen
until its first g; redis-py (~7 MB: replmon/sources/resp.py talks to Redis and Sentinel)
in every command but the lab's; greenlet (~1 MB: the MySQL source on the loop) in
the screen and ``record``. bench/bench_memory.py measures what each
costs (docs/benchmarks.md#bench_memorypy-memory)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "sample_sessions" / "healthy_steady_load.rmrec"
RSA = "cryptography.hazmat.primitives"
SCREEN = ("textual", "plotext", "replmon.tui")
GRAPH_VIEW = ("textual_plotext", "plotext", "replmon.tui.graph_view")
"""The graph view's widget (~1 MB): imported on the first g, not with the screen."""
PROMETHEUS = ("prometheus_client", "replmon.fleet.serve", "replmon.fleet.metrics")
EMOJI = "rich._emoji_codes"
"""rich's emoji table (~0.6 MB): a DataTable's str column label is read as rich markup,
which replaces emoji codes; the screen's labels are Text (no markup, no table)."""
READING = ("replmon.session.recording", "replmon.session.rerun", "replmon.session.cursor",
           "replmon.session.reuse")
"""A recording's reading side (~0.6 MB): the screen and ``record`` only write one."""
GREENLET = "greenlet"
"""~1 MB (its extension links libstdc++): serve's MySQL sampling only, on the loop."""
# two nodes that refuse at once (the discard port): a live path runs, no server needed
NODES = ["--primary", "127.0.0.1", "--primary-mysql", "127.0.0.1:9", "--primary-redis",
         "127.0.0.1:9", "--replica", "127.0.0.2", "--replica-mysql", "127.0.0.2:9",
         "--replica-redis", "127.0.0.2:9", "--no-drbd", "--interval", "0.2"]

# the live commands' ends, made short: serve stops a second after it listens, the screen
# (headless, 160x50) a second after it starts
SERVE_BRIEFLY = """
import asyncio, replmon.fleet.serve as fs
real = fs.run_serve
async def run_serve(fleet, **kw):
    stop, ready = asyncio.Event(), asyncio.Event()
    async def later():
        await ready.wait(); await asyncio.sleep(1); stop.set()
    task = asyncio.create_task(later())
    return await real(fleet, stop=stop, ready=ready, **kw)
fs.run_serve = run_serve
"""
SCREEN_BRIEFLY = """
import replmon.output.term as term, replmon.tui.app as app
term.screen_ok = lambda stream: (True, "")
async def run_async(self, **kw):
    async with self.run_test(size=(160, 50)) as pilot:
        await pilot.pause(1)
app.ReplmonApp.run_async = run_async
"""

CASES = {
    "import": ("", None, ("asyncio", "ssl", "replmon.commands", "replmon.settings",
                          "replmon.config", *SCREEN, "rich", RSA)),
    "help": ("", ["--help"], ("asyncio", "ssl", "replmon.commands", "replmon.settings",
                              "replmon.config", *SCREEN, "rich", RSA)),
    "check --replay": ("", ["check", "--replay", str(SESSION)],
                       (*SCREEN, *PROMETHEUS, "pymysql", "redis", RSA)),
    "report": ("", ["report", str(SESSION)], (*SCREEN, *PROMETHEUS, "pymysql", "redis", RSA)),
    "record": ("", ["record", *NODES, "--count", "2", "-o", "{tmp}/r.rmrec"],
               (*SCREEN, "rich", *PROMETHEUS, RSA, "replmon.lab.demo", "redis", GREENLET,
                *READING)),
    "serve": (SERVE_BRIEFLY, ["serve", "--config", "{tmp}/fleet.toml"],
              (*SCREEN, "rich", RSA, "redis")),
    "screen": (SCREEN_BRIEFLY, [*NODES, "--record", "{tmp}/s.rmrec"],
               (*PROMETHEUS, RSA, "replmon.lab.demo", *GRAPH_VIEW, "redis", GREENLET, EMOJI,
                *READING)),
}
FLEET = """listen = "127.0.0.1:0"
interval = 0.2
[[pair]]
name = "gone"
[pair.primary]
host = "127.0.0.1"
mysql = { port = 9 }
[pair.replica]
host = "127.0.0.2"
mysql = { port = 9 }
"""


def imported_against_budget(case: str, tmp: Path) -> list[str]:
    """The modules the case's command imported of those it must not."""
    setup, argv, forbidden = CASES[case]
    (tmp / "fleet.toml").write_text(FLEET)
    code = "import sys\n" + setup + "\nimport replmon.cli\n"
    if argv is not None:
        args = [a.format(tmp=tmp) for a in argv]
        code += f"try:\n    replmon.cli.main({args!r})\nexcept SystemExit:\n    pass\n"
    code += (f"bad = {forbidden!r}\n"
             "print('imported:', *sorted(m for m in sys.modules if any(\n"
             "    m == b or m.startswith(b + '.') for b in bad)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp,
                         env={**os.environ, "XDG_STATE_HOME": str(tmp), "HOME": str(tmp)})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()[-1].split()[1:]  # after the command's own output


@pytest.mark.parametrize("case", list(CASES))
def test_a_command_imports_only_what_it_uses(case: str, tmp_path: Path) -> None:
    assert imported_against_budget(case, tmp_path) == []


def test_serve_samples_mysql_on_the_loop(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """serve, the one command that pays for greenlet, uses it: its MySQL sources sample
    on the loop (``build_collector(..., mysql_on_loop=True)``)."""
    setup, argv, _ = CASES["serve"]
    monkeypatch.setitem(CASES, "serve", (setup, argv, (GREENLET,)))
    assert GREENLET in imported_against_budget("serve", tmp_path)


def test_pymysql_encrypts_with_cryptography_imported_late() -> None:
    """caching_sha2_password's full login without TLS: pymysql's RSA step works through
    the stand-ins mysql_driver gives it (cryptography imported on that login only)."""
    code = """
import sys
import replmon.sources.mysql
assert not [m for m in sys.modules if m.startswith("cryptography.hazmat")], "imported early"
import pymysql._auth as auth
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                    serialization.PublicFormat.SubjectPublicKeyInfo)
salt = b"0123456789abcdefghij"
sent = auth.sha2_rsa_encrypt(b"secret", salt, pem)
oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(),
                    label=None)
assert key.decrypt(sent, oaep) == auth._xor_password(b"secret\\0", salt)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]
