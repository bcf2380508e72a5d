"""The transport seam. Sources read files and run commands through a runner:
LocalRunner on this machine, CannedRunner in tests (real outputs captured from
real systems), an SSH runner for remote nodes (a later issue). Parsers never
know where the text came from."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import Protocol

from replmon.errors import SourceError


class Runner(Protocol):
    async def read_file(self, path: str) -> str:
        """Text of ``path``. Raises FileNotFoundError if it does not exist,
        SourceError for any other failure."""
        ...

    async def run(self, argv: Sequence[str]) -> str:
        """stdout of the command. Raises FileNotFoundError if the program does
        not exist, SourceError if it exits non-zero (with its stderr)."""
        ...

    async def read_files(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Several files in one go (one round trip on a remote runner); a
        missing file maps to None."""
        ...


async def read_each(runner: Runner, paths: Sequence[str]) -> dict[str, str | None]:
    """read_files built from read_file, for runners where each read is cheap."""
    out: dict[str, str | None] = {}
    for p in paths:
        try:
            out[p] = await runner.read_file(p)
        except FileNotFoundError:
            out[p] = None
    return out


def read_text(path: str) -> str:
    """A small file's text (UTF-8, bad bytes replaced) with two system calls and no file
    object: a fleet of local nodes reads ten /proc files per node per tick."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    text = b"".join(chunks).decode(errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


_KEPT: dict[str, int] = {}
"""/proc path -> a descriptor kept open on it, for the files read every tick."""
_KEPT_PID = os.getpid()


def read_proc_text(path: str) -> str:
    """read_text of a /proc file through a descriptor kept open for the process and read
    with pread from offset 0: procfs makes the text afresh at each read from 0, and the
    open and close (the path walk) were ~45 % of the system time of reading a host
    sample's eleven files (139 -> 77 µs of CPU a node-tick on this VM). Only /proc:
    its files are never replaced by others of the same name, as a regular file can be.
    A child forked with them opens its own (two processes reading one description could
    interleave). A kept descriptor that fails is closed and the file read as before."""
    global _KEPT_PID
    if os.getpid() != _KEPT_PID:
        _KEPT.clear()
        _KEPT_PID = os.getpid()
    fd = _KEPT.get(path)
    if fd is None:
        fd = _KEPT[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        offset = 0
        while chunk := os.pread(fd, 1 << 16, offset):
            chunks.append(chunk)
            offset += len(chunk)
    except OSError:
        del _KEPT[path]
        with contextlib.suppress(OSError):
            os.close(fd)
        return read_text(path)
    text = b"".join(chunks).decode(errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class LocalRunner:
    """This machine. /proc reads are small and never block on disk, so they run
    on the event loop; commands run as asyncio subprocesses."""

    async def read_file(self, path: str) -> str:
        try:
            return read_text(path)
        except FileNotFoundError:
            raise
        except OSError as e:
            raise SourceError(f"cannot read {path}: {e.strerror or e}", state="error") from e

    async def run(self, argv: Sequence[str]) -> str:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:
            proc.kill()
            await proc.wait()
            raise
        if proc.returncode != 0:
            msg = err.decode(errors="replace").strip() or f"exit status {proc.returncode}"
            raise SourceError(f"{' '.join(argv)}: {msg}", state="error")
        return out.decode(errors="replace")

    async def read_files(self, paths: Sequence[str]) -> dict[str, str | None]:
        """read_each without a coroutine per file (a host sample reads eleven), /proc's
        through kept descriptors (read_proc_text)."""
        out: dict[str, str | None] = {}
        for p in paths:
            try:
                out[p] = read_proc_text(p) if p.startswith("/proc/") else read_text(p)
            except FileNotFoundError:
                out[p] = None
            except OSError as e:
                raise SourceError(f"cannot read {p}: {e.strerror or e}", state="error") from e
        return out


class CannedRunner:
    """Serves fixed text: for parser and source tests on captured real outputs.
    A missing path or command behaves as on a machine that lacks it."""

    def __init__(
        self,
        files: Mapping[str, str] | None = None,
        commands: Mapping[tuple[str, ...], str] | None = None,
    ) -> None:
        self.files = dict(files or {})
        self.commands = dict(commands or {})

    async def read_file(self, path: str) -> str:
        try:
            return self.files[path]
        except KeyError:
            raise FileNotFoundError(path) from None

    async def run(self, argv: Sequence[str]) -> str:
        try:
            return self.commands[tuple(argv)]
        except KeyError:
            raise FileNotFoundError(argv[0]) from None

    async def read_files(self, paths: Sequence[str]) -> dict[str, str | None]:
        return await read_each(self, paths)
