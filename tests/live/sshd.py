"""A throwaway OpenSSH server on loopback for the SSH runner's live tests.

``Sshd(dir)`` writes host and user keys (ssh-keygen), an sshd_config and a
client ssh_config into ``dir``, starts ``/usr/sbin/sshd -D -e`` as the current
user on a free 127.0.0.1 port and stops it on exit. The client side never
touches ~/.ssh: pass ``client_options`` (``-F <dir>/ssh_config``) to the runner.

A missing sshd is an error, never a skip: .ci/setup installs openssh-server.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import psutil

SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "replmon-test",
                    "-f", str(path)], check=True)


def cpu_seconds(procs: Iterable[psutil.Process]) -> float:
    """CPU seconds (user + system, reaped children included) of ``procs``, those that
    still exist."""
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


class Sshd:
    def __init__(self, directory: Path, extra_config: str = "") -> None:
        """``extra_config``: sshd_config lines added to the test server's own."""
        if not os.access(SSHD, os.X_OK):
            raise RuntimeError(f"{SSHD} is missing: install openssh-server (.ci/setup does)")
        self.dir = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.host_key = directory / "host_ed25519"
        self.user_key = directory / "id_ed25519"
        self.known_hosts = directory / "known_hosts"
        self.ssh_config = directory / "ssh_config"
        self.log = directory / "sshd.log"
        _keygen(self.host_key)
        _keygen(self.user_key)
        shutil.copy(self.user_key.with_suffix(".pub"), directory / "authorized_keys")
        pub = self.host_key.with_suffix(".pub").read_text().split()
        self.known_line = f"[127.0.0.1]:{self.port} {pub[0]} {pub[1]}\n"
        (directory / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.host_key}\n"
            f"PidFile {directory / 'sshd.pid'}\nAuthorizedKeysFile {directory}/authorized_keys\n"
            "UsePAM no\nStrictModes no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            "PermitRootLogin prohibit-password\nLogLevel VERBOSE\nMaxStartups 100\n"
            + extra_config
        )
        self.trust()

    def trust(self, known: bool = True) -> None:
        """Write the client config; with ``known=False`` the host key is not in
        known_hosts (an unknown host)."""
        self.known_hosts.write_text(self.known_line if known else "")
        self.ssh_config.write_text(
            "Host *\n"
            f"  IdentityFile {self.user_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.known_hosts}\n  GlobalKnownHostsFile /dev/null\n"
            f"  Port {self.port}\n  User {_user()}\n"
            "  LogLevel ERROR\n"
        )

    @property
    def client_options(self) -> list[str]:
        """Extra ssh arguments for the runner (config file only; no ~/.ssh)."""
        return ["-F", str(self.ssh_config)]

    def start(self) -> None:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")],
                stdout=log, stderr=log,
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", self.port), timeout=0.2
            ):
                return
            time.sleep(0.02)
        raise RuntimeError(f"sshd did not listen on {self.port}: {self.log.read_text()[-2000:]}")

    def sessions(self) -> list[psutil.Process]:
        """The per-connection sshd processes (children of the listener)."""
        if self.proc is None:
            return []
        return psutil.Process(self.proc.pid).children()

    def cpu_seconds(self) -> float:
        """CPU seconds of the open connections' server side and everything they ran
        (the remote shell, its reaped commands): what the node pays for replmon."""
        if self.proc is None:
            return 0.0
        return cpu_seconds(psutil.Process(self.proc.pid).children(recursive=True))

    def drop_sessions(self) -> int:
        """Kill every open connection's server side (as a network drop or a
        reboot of the node would end it); the listener stays up."""
        victims = self.sessions()
        for p in victims:
            for c in [*p.children(recursive=True), p]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    c.kill()
        psutil.wait_procs(victims, timeout=5)
        return len(victims)

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(psutil.NoSuchProcess):
            for c in psutil.Process(self.proc.pid).children(recursive=True):
                with contextlib.suppress(psutil.NoSuchProcess):
                    c.kill()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> Sshd:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _user() -> str:
    import getpass

    return getpass.getuser()
