"""The SSH runner: a remote node's /proc, /sys and commands over ONE persistent
connection, with nothing installed on the node.

It runs the system OpenSSH client, so ~/.ssh/config, the agent, ProxyJump and
known_hosts work as the user set them up, always with ``BatchMode=yes``: a
node that would prompt (unknown host key, no usable key) is an error with a
hint, never a prompt.

Protocol. ``ssh -T <node> sh`` starts a POSIX shell on the node that reads
commands from our stdin. Each round trip writes one script (every pending
request: the host source's files, /proc/drbd, drbdsetup...) and reads the
framed reply, item by item::

    <token> <i> B\\n <content> \\n<token> <i> E <status>\\n [<stderr> \\n<token> <i> R\\n]

``token`` is random per connection, so no content can fake a marker; status is
0, N (no such file / program) or the exit status (its stderr follows, up to R).
Requests that arrive while the sources of one tick start are merged into one
round trip, and each caller is answered as soon as its own items have arrived.
The round trip's files come first, written to a temp file on the node and sent in
one piece (a few reads here instead of a loop turn per printf and cat: 1.2 instead
of 1.8 ms of replmon's CPU per node-tick, bench/bench_ssh.py); its commands follow,
streamed, so a hung one delays nothing but its own answer.

Failures. ssh exiting or the connection dropping (EOF) fails every waiting
request with SourceError "unreachable" carrying ssh's own message; the next
requests fail at once until the reconnect delay (1, 2, 4 ... 30 s) has passed,
then a new connection is made. Host key trouble and refused keys are state
"auth" with a hint. Remote commands run under ``timeout`` (when the node has
it), so a hung drbdsetup cannot hold the channel for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from replmon.errors import SourceError
from replmon.sources.base import reach_hint
from replmon.sources.drbd import DrbdSource
from replmon.sources.host import HostSource

BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Delays before reconnect attempts after consecutive failures."""
STREAM_LIMIT = 16 * 2**20
"""Largest single reply item (a /proc/stat of a big machine is ~100 KB)."""
DEFAULT_OPTIONS = ("ServerAliveInterval=5", "ServerAliveCountMax=3", "ConnectTimeout=10")
"""Applied after the user's own -o options, so those (and BatchMode) win."""


@dataclass
class _Item:
    kind: str  # "F" (file) or "C" (command)
    argv: tuple[str, ...]
    fut: asyncio.Future[tuple[str, bytes, bytes]] = field(repr=False)


class SshRunner:
    """Runner for one remote node over a persistent ``ssh`` connection."""

    def __init__(
        self,
        host: str,
        *,
        user: str | None = None,
        port: int | None = None,
        options: Sequence[str] = (),
        config_file: str | None = None,
        ssh: str = "ssh",
        command_timeout: float = 10.0,
    ) -> None:
        self.host = host
        self.user = user
        self.port = port
        self.options = tuple(options)
        self.config_file = config_file
        self.ssh = ssh
        self.command_timeout = command_timeout
        self.connects = 0
        self.client_addr: str | None = None
        """This machine's address as the node sees the connection (the first field of the
        node's $SSH_CONNECTION): the monitor's address, whose route on the node is the
        monitoring NIC (``replmon.model.nic_roles``); None until connected, or when
        the node's shell does not say."""
        """ssh processes started so far (1 for a session without drops)."""
        self._proc: asyncio.subprocess.Process | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._err_task: asyncio.Task[None] | None = None
        self._stderr = bytearray()
        self._token = b""
        self._pending: list[_Item] = []
        self._wakeup = asyncio.Event()
        self._failures = 0
        self._retry_at = 0.0
        self._last_error: SourceError | None = None

    def __repr__(self) -> str:
        return f"SshRunner({self.destination!r})"

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def argv(self) -> list[str]:
        """The ssh command line (without the remote command)."""
        out = [self.ssh, "-T", "-o", "BatchMode=yes"]
        if self.config_file:
            out += ["-F", self.config_file]
        for opt in (*self.options, *DEFAULT_OPTIONS):
            out += ["-o", opt]
        if self.port:
            out += ["-p", str(self.port)]
        if self.user:
            out += ["-l", self.user]
        return [*out, "--", self.host, "sh"]

    # --- Runner protocol -----------------------------------------------------

    async def read_files(self, paths: Sequence[str]) -> dict[str, str | None]:
        items = self._submit([("F", (p,)) for p in paths])
        out: dict[str, str | None] = {}
        for path, item in zip(paths, items, strict=True):
            status, data, err = await item.fut
            if status == "N":
                out[path] = None
            elif status != "0":
                raise self._read_error(path, status, err)
            else:
                out[path] = data.decode(errors="replace")
        return out

    def _read_error(self, path: str, status: str, err: bytes) -> SourceError:
        """Like LocalRunner's OSError mapping: EINVAL on a /sys speed file lands here."""
        msg = err.decode(errors="replace").strip().removeprefix("cat: ") or f"cat exit {status}"
        return SourceError(f"cannot read {path} on {self.host}: {msg}", state="error")

    async def read_file(self, path: str) -> str:
        text = (await self.read_files([path]))[path]
        if text is None:
            raise FileNotFoundError(path)
        return text

    async def run(self, argv: Sequence[str]) -> str:
        (item,) = self._submit([("C", tuple(argv))])
        status, data, err = await item.fut
        if status == "N":
            raise FileNotFoundError(argv[0])
        if status == "124" and self._has_timeout:
            raise TimeoutError(
                f"{' '.join(argv)} on {self.host}: killed after {self.command_timeout:g} s"
            )
        if status != "0":
            msg = err.decode(errors="replace").strip() or f"exit status {status}"
            raise SourceError(f"{' '.join(argv)}: {msg}", state="error")
        return data.decode(errors="replace")

    # --- connection ------------------------------------------------------------

    def start(self) -> None:
        """Start connecting now (returns at once; the first reply waits for it)."""
        if self._pump_task is None and time.monotonic() >= self._retry_at:
            self._pump_task = asyncio.ensure_future(self._pump())

    async def close(self) -> None:
        """End the connection; safe to call twice. A later request reconnects."""
        self._fail_pending(SourceError(f"ssh {self.destination}: closed", state="unreachable"))
        await self._teardown()

    def _submit(self, requests: list[tuple[str, tuple[str, ...]]]) -> list[_Item]:
        loop = asyncio.get_running_loop()
        if self._pump_task is None:
            if time.monotonic() < self._retry_at and self._last_error is not None:
                left = self._retry_at - time.monotonic()
                e = self._last_error
                raise SourceError(f"{e} (reconnecting in {left:.0f} s)", state=e.state,
                                  hint=e.hint)
            self._pump_task = asyncio.ensure_future(self._pump())
        items = [_Item(k, a, loop.create_future()) for k, a in requests]
        self._pending.extend(items)
        loop.call_soon(self._wakeup.set)  # one loop turn: let the tick's other sources join
        return items

    async def _pump(self) -> None:
        try:
            await self._connect()
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                batch, self._pending = self._pending, []
                # Files first, as one block: the node writes their frames to a file and
                # sends it with one `cat`, so they arrive in a few reads instead of ~40 (a
                # printf, a cat, a printf per file, each its own ssh packet and its own
                # turn of replmon's event loop). Commands follow, streamed: one that hangs
                # (drbdsetup) holds back only its own answer, never the files read in the
                # same round trip.
                batch.sort(key=lambda it: it.kind != "F")
                if batch:
                    await self._exchange(batch)
                    self._failures = 0
        except (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError) as e:
            err = await self._dead(e)
            proc, err_task = self._proc, self._err_task
            self._proc = self._err_task = self._pump_task = None
            self._fail_pending(err)
            await _reap(proc, err_task)

    async def _connect(self) -> None:
        self._token = secrets.token_hex(12).encode()
        self._stderr.clear()
        self.connects += 1
        self._proc = await asyncio.create_subprocess_exec(
            *self.argv(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=STREAM_LIMIT, start_new_session=True,
        )
        self._err_task = asyncio.ensure_future(self._drain_stderr(self._proc))
        ct = f"{self.command_timeout:g}"
        prelude = (
            "LC_ALL=C; export LC_ALL; PATH=\"$PATH:/usr/sbin:/sbin\"; export PATH\n"
            "E=$(mktemp 2>/dev/null) || E=/tmp/.replmon-err.$$\n"
            "O=$(mktemp 2>/dev/null) || O=/tmp/.replmon-out.$$; trap 'rm -f \"$E\" \"$O\"' EXIT\n"
            f"TO=; command -v timeout >/dev/null 2>&1 && TO='timeout -k 1 {ct}'\n"
            f"printf '%s HELLO %s|%s\\n' {self._token.decode()} \"${{TO:+t}}\" "
            "\"$SSH_CONNECTION\"\n"
        )
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.write(prelude.encode())
        await self._proc.stdin.drain()
        hello = self._token + b" HELLO"
        while True:  # skip anything a login script printed
            line = await self._proc.stdout.readline()
            if not line:
                raise EOFError("connection closed before the remote shell answered")
            if line.startswith(hello):
                to, _, conn = line[len(hello):].strip().partition(b"|")
                self._has_timeout = to.strip() == b"t"
                words = conn.decode(errors="replace").split()
                self.client_addr = words[0] if words else None
                return

    _has_timeout = False

    def _script(self, batch: list[_Item]) -> bytes:
        """The shell script of one round trip (files before commands, see _pump): the
        files' frames written to a temp file and sent in one piece, then the commands',
        streamed."""
        tok = self._token.decode()
        lines = []
        files = sum(it.kind == "F" for it in batch)
        for i, it in enumerate(batch):
            q = " ".join(shlex.quote(a) for a in it.argv)
            if it.kind == "F":
                body = f"if [ -e {q} ]; then cat -- {q} 2>\"$E\"; s=$?; else s=N; fi"
            else:
                body = (f"if command -v {shlex.quote(it.argv[0])} >/dev/null 2>&1; then "
                        f"$TO {q} </dev/null 2>\"$E\"; s=$?; else s=N; fi")
            lines.append(
                f"printf '{tok} {i} B\\n'; {body}; printf '\\n{tok} {i} E %s\\n' \"$s\"; "
                f"case $s in 0|N) ;; *) cat \"$E\"; printf '\\n{tok} {i} R\\n';; esac"
            )
        if files:
            lines[:files] = ["{", *lines[:files], '} >"$O"; cat "$O"']
        return ("\n".join(lines) + "\n").encode()

    async def _exchange(self, batch: list[_Item]) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stdin is not None
        assert proc.stdout is not None
        out = proc.stdout
        try:
            proc.stdin.write(self._script(batch))
            await proc.stdin.drain()
            for i, it in enumerate(batch):
                head = self._token + b" %d " % i
                line = await out.readuntil(b"\n")
                if line != head + b"B\n":
                    raise ValueError(f"unexpected reply from the remote shell: {line[:80]!r}")
                data = (await out.readuntil(b"\n" + head + b"E "))[: -len(head) - 3]
                status = (await out.readuntil(b"\n"))[:-1].decode()
                err = b""
                if status not in ("0", "N"):
                    err = (await out.readuntil(b"\n" + head + b"R\n"))[: -len(head) - 3]
                if not it.fut.done():
                    it.fut.set_result((status, data, err))
        except BaseException as e:
            self._pending[:0] = batch  # answered by _fail_pending
            if isinstance(e, asyncio.IncompleteReadError | ConnectionError | BrokenPipeError):
                raise EOFError(str(e)) from e
            raise

    async def _dead(self, cause: BaseException) -> SourceError:
        """The connection is gone: build the error from ssh's stderr, plan the retry."""
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 2.0)
        if self._err_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._err_task), 1.0)
        text = self._stderr.decode(errors="replace").strip()
        delay = BACKOFF_S[min(self._failures, len(BACKOFF_S) - 1)]
        self._failures += 1
        self._retry_at = time.monotonic() + delay
        err = classify(self.destination, text, cause)
        self._last_error = err
        return err

    def _fail_pending(self, err: SourceError) -> None:
        pending, self._pending = self._pending, []
        for it in pending:
            if not it.fut.done():
                it.fut.set_exception(err)
                it.fut.exception()  # an abandoned request must not warn "never retrieved"

    async def _teardown(self) -> None:
        pump, proc, err_task = self._pump_task, self._proc, self._err_task
        self._pump_task = self._proc = self._err_task = None
        if pump is not None and not pump.done():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        await _reap(proc, err_task)
        self._fail_pending(SourceError(f"ssh {self.destination}: closed", state="unreachable"))

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(4096):
            self._stderr += chunk
            del self._stderr[:-8192]


async def _reap(proc: asyncio.subprocess.Process | None,
                err_task: asyncio.Task[None] | None) -> None:
    """End an ssh process (EOF on its stdin first, then SIGKILL) and its stderr reader."""
    if proc is not None:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if err_task is not None:
        with contextlib.suppress(TimeoutError, asyncio.CancelledError, OSError):
            await asyncio.wait_for(err_task, 1.0)


def classify(dest: str, stderr: str, cause: BaseException | None = None) -> SourceError:
    """A SourceError with state and hint for what ssh printed when it gave up."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("@@@")]
    detail = "; ".join(lines[-3:]) or str(cause or "") or "connection closed"
    msg = f"ssh {dest}: {detail}"
    host = dest.rsplit("@", 1)[-1]
    if "HOST IDENTIFICATION HAS CHANGED" in stderr:
        return SourceError(msg, state="auth", hint=(
            f"the host key of {host} changed: if that is expected (reinstall), remove the old "
            f"key with `ssh-keygen -R {host}` and connect once by hand with `ssh {dest}`"))
    if "Host key verification failed" in stderr:
        return SourceError(msg, state="auth", hint=(
            f"the host key of {host} is not known: replmon never prompts, so connect once by "
            f"hand (`ssh {dest}`) to check and accept it, or add it with "
            f"`ssh-keyscan -H {host} >> ~/.ssh/known_hosts` after verifying the fingerprint"))
    if "Permission denied" in stderr:
        return SourceError(msg, state="auth", hint=(
            "ssh runs with BatchMode=yes and cannot ask for a password: load a key into "
            f"ssh-agent or set IdentityFile in ~/.ssh/config; test with "
            f"`ssh -o BatchMode=yes {dest} true`"))
    test = (f"host and DRBD metrics come over ssh; check `ssh -o BatchMode=yes {dest} true` "
            "works from this machine (or set [<node>.ssh] mode = \"off\")")
    why = reach_hint(detail, host, None)
    return SourceError(msg, state="unreachable", hint=f"{why}; {test}" if why else test)


class _ClosesRunner:
    """Mixin for a source that owns a share of an SshRunner: connect on open,
    disconnect on close (the runner is shared by the node's host and DRBD sources;
    closing twice is harmless)."""

    runner: Any

    async def open(self) -> None:
        await super().open()  # type: ignore[misc]
        self.runner.start()

    async def close(self) -> None:
        await super().close()  # type: ignore[misc]
        await self.runner.close()


class SshHostSource(_ClosesRunner, HostSource):
    """HostSource over an SshRunner."""


class SshDrbdSource(_ClosesRunner, DrbdSource):
    """DrbdSource over an SshRunner."""
