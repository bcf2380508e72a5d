"""Reading a file the user names: ``--config FILE`` (a pair's config or serve's fleet
file) and ~/.my.cnf. One place turns every way such a file can be wrong into ONE
ConfigError line that names the file and says what is wrong with it, never a traceback
and never a hang:

    replmon: fleet.toml: no such file
    replmon: fleet.toml: is a directory
    replmon: fleet.toml: is not a regular file (a FIFO)
    replmon: fleet.toml: too large (50.0 MiB; a config file is under 1 MiB)
    replmon: fleet.toml: not UTF-8 text (byte 0xff at offset 12, line 2)
    replmon: fleet.toml: not valid TOML: Expected '=' after a key ... (at line 3, column 5)
    replmon: fleet.toml: nested too deep (over 32 levels of arrays or tables; ...)

The type of the file is checked (stat) before it is opened, and it is opened with
O_NONBLOCK and checked again (fstat), so a FIFO, a device or a socket is refused without
blocking; at most MAX_BYTES + 1 bytes are ever read.

Layering: the bottom floor, beside replmon.units: it imports only the standard library
and replmon.errors. replmon.settings (the --config file, a pair's or a fleet's) and
replmon.resolve (``read_mycnf``) read through it, and a recording that cannot be opened
is said in its words (``os_problem``: replmon.session.frames); nothing here knows what the keys
mean (``empty`` is the caller's hint of what the file should hold).
"""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from replmon.errors import ConfigError

MAX_BYTES = 1 << 20
"""A config file is under 1 MiB (a fleet of 1,000 pairs is ~100 KiB); past it the file
is refused from its size, without being read."""
MAX_DEPTH = 32
"""Levels of tables and arrays inside each other; a config needs about four."""


def shown(path: str | Path) -> str:
    """The path as the user gave it; quoted when it is empty or holds a newline or a
    control character, so the error stays one line and says something."""
    text = str(path)
    return text if text and text.isprintable() else repr(text)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "a special file"


def _check_type(mode: int, size: int) -> str | None:
    """What is wrong with a file of this stat, or None."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    if not stat.S_ISREG(mode):
        return f"is not a regular file ({_kind(mode)})"
    if size > MAX_BYTES:
        return f"too large ({size / 2**20:.1f} MiB; a config file is under 1 MiB)"
    return None


def _user() -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(os.geteuid()).pw_name}"
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


def os_problem(path: str | Path, e: OSError) -> str:
    """An OSError of stat or open, as the few words after the file's name (any file the
    user names: a config, a recording)."""
    if e.errno == errno.ENOENT:
        if os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                return "no such file (a symlink to nowhere)"
            return f"no such file (a symlink to {target!r}, which does not exist)"
        return "no such file"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied (replmon runs as {_user()})"
    if e.errno == errno.ENOTDIR:
        return "no such file (a part of its path is not a directory)"
    if e.errno == errno.ELOOP:
        return "a loop of symlinks"
    return f"cannot read it: {e.strerror or e}"


def _folder(path: str | Path) -> str:
    return shown(os.path.dirname(os.path.abspath(path)) if not os.path.dirname(path)
                 else os.path.dirname(path))


def write_problem(path: str | Path, e: OSError) -> str:
    """An OSError of creating a file the user named (a recording, a report), as the few
    words after the file's name."""
    if e.errno == errno.ENOENT:
        return f"no such directory {_folder(path)}"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied (replmon runs as {_user()})"
    if e.errno == errno.EEXIST:
        return "exists: choose another file (never overwritten)"
    if e.errno == errno.EISDIR:
        return "is a directory"
    if e.errno == errno.ENOTDIR:
        return f"no such directory {_folder(path)} (a part of it is not a directory)"
    return f"cannot write it: {e.strerror or e}"


def output_problem(path: str | Path) -> str | None:
    """What stops a file being created at ``path`` later (a recording opens its file on
    the first tick, after the servers were reached): a folder missing or not writable;
    None when it can be tried."""
    folder = os.path.dirname(path) or "."
    if not os.path.exists(folder):
        return f"no such directory {_folder(path)}"
    if not os.path.isdir(folder):
        return f"no such directory {_folder(path)} (a part of it is not a directory)"
    if os.path.isdir(path):
        return "is a directory"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"permission denied (replmon runs as {_user()}: {_folder(path)} is not writable)"
    return None


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes: a regular file under MAX_BYTES, or ConfigError in one line."""
    where = shown(path)
    try:
        st = os.stat(path)  # the type first: opening a FIFO or a tape device has effects
    except OSError as e:
        raise ConfigError(f"{where}: {os_problem(path, e)}") from None
    except ValueError:  # a NUL byte in the name
        raise ConfigError(f"{where}: not a file name (it holds a NUL byte)") from None
    wrong = _check_type(st.st_mode, st.st_size)
    if wrong:
        raise ConfigError(f"{where}: {wrong}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise ConfigError(f"{where}: {os_problem(path, e)}") from None
    try:
        st = os.fstat(fd)  # what was opened, should the name have changed since
        wrong = _check_type(st.st_mode, st.st_size)
        if wrong:
            raise ConfigError(f"{where}: {wrong}")
        chunks: list[bytes] = []
        got = 0
        while got <= MAX_BYTES:  # /proc files say size 0: the cap holds while reading too
            chunk = os.read(fd, MAX_BYTES + 1 - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > MAX_BYTES:
            raise ConfigError(f"{where}: too large (over 1 MiB; a config file is under 1 MiB)")
        return b"".join(chunks)
    except OSError as e:
        raise ConfigError(f"{where}: cannot read it: {e.strerror or e}") from None
    finally:
        os.close(fd)


def decode(data: bytes, where: str) -> str:
    """UTF-8 text (a UTF-8 byte order mark is dropped), or ConfigError in one line."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError(f"{where}: UTF-16 text, not UTF-8 (save it as UTF-8)")
    data = data.removeprefix(b"\xef\xbb\xbf")
    nul = data.find(b"\0")
    if nul >= 0:
        raise ConfigError(f"{where}: binary, not text (a NUL byte at offset {nul})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{where}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                          f"{e.start}, line {line})") from None


def read_text(path: str | Path) -> str:
    """The file as UTF-8 text, or ConfigError in one line naming it."""
    return decode(read_bytes(path), shown(path))


def _depth(value: Any) -> int:
    """How deep tables and arrays nest in a parsed document (iterative: no recursion)."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d + 1)
            if deepest > MAX_DEPTH:
                break
            stack.extend((x, d + 1) for x in v)
    return deepest


def read_toml(path: str | Path, *, empty: str) -> dict[str, Any]:
    """The TOML file parsed, or ConfigError in one line naming it. ``empty``: what the
    file should hold, said when it holds nothing (e.g. "no [[pair]] tables")."""
    where = shown(path)
    text = read_text(path)
    too_deep = (f"{where}: nested too deep (over {MAX_DEPTH} levels of arrays or tables; "
                "a config needs a few)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(too_deep) from None
    if _depth(data) > MAX_DEPTH:
        raise ConfigError(too_deep)
    if not data:
        what = "empty" if not text.strip() else "no settings in it, only comments"
        raise ConfigError(f"{where}: {what}: {empty}")
    return data
