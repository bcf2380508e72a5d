"""The two-host lab: the lab's pair (replmon.lab.Lab) with each node a host of its own.

``TwoHostLab`` is a ``Lab`` whose nodes, ``lab-db163`` (the primary as started) and
``lab-db162``, each run in a network namespace of their own (replmon.lab.netns) under
their own hostname: its MariaDB/MySQL on 3306, its Redis on 6379 and an sshd on 22, all
listening on the node's addresses only. replmon, the tests and the write load reach a
node over its monitoring link (``node.host``); MySQL and Redis replicate over the
replication link between the two nodes (``node.repl_host``); replmon reads each node's
host metrics over ssh (a throwaway key, an ssh_config of the lab's own), so each node's
NIC counters are its own namespace's.

The hostname is the namespace's own for each process the lab starts there (``unshare
--uts`` before the server starts: ``HostNet.argv``), so ``@@hostname``, the shell that
replmon's ssh runner starts and ``/proc/sys/kernel/hostname`` over ssh all say
``lab-db163``; the machine's own hostname is untouched.

Replication notices a cut link in seconds, not the servers' defaults (a minute): the
replica's ``slave_net_timeout`` (MySQL: ``replica_net_timeout``) and Redis's
``repl-timeout`` are ``NET_TIMEOUT_S`` here.

Root only (``ip netns``). Everything is removed on ``stop()`` and by the reaper after a
SIGKILL of the lab's process (replmon.lab.netns.Reaper).

    with TwoHostLab() as lab, WriteLoad(lab):
        lab.net.counters(lab.replica.net, "eth1")  # the replica's replication NIC
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from replmon.errors import LabError
from replmon.lab.netns import MONITOR_DEV, REPLICATION_DEV, HostNet, Network, Reaper, State
from replmon.lab.node import LabNode, kill_processes
from replmon.lab.pair import Lab
from replmon.lab.servers import DEFAULT_MYSQL, DEFAULT_REDIS

HOSTNAMES = ("lab-db163", "lab-db162")
"""The nodes' hostnames: the primary as started, the replica."""
NET_TIMEOUT_S = 5
"""Seconds without a byte from the primary before a replica reconnects (MySQL, Redis)."""
SSHD = "/usr/sbin/sshd"


class HostNode(LabNode):
    """A node of the two-host lab: its servers run in its namespace (``net``)."""

    def __init__(self, lab: Any, name: str, server_id: int) -> None:
        super().__init__(lab, name, server_id)
        self._net: HostNet | None = None
        self.sshd_proc: subprocess.Popen[bytes] | None = None

    @property
    def net(self) -> HostNet:
        """Its namespace, addresses and hostname (LabError before the lab started)."""
        if self._net is None:
            raise LabError(f"{self.name}: the two-host lab has not started")
        return self._net

    @property
    def hostname(self) -> str:
        return self.net.hostname

    def place(self, net: HostNet, *, oracle_mysql: bool) -> None:
        """Put this node in ``net``: its addresses, the servers' standard ports (the
        namespace's own), the replication timeouts."""
        self._net = net
        self.host, self.repl_host, self.bind = net.monitor_addr, net.repl_addr, "0.0.0.0"
        self.mysql_port, self.redis_port = 3306, 6379
        timeout = "replica" if oracle_mysql else "slave"
        self.extra_mysql_args = [f"--{timeout}-net-timeout={NET_TIMEOUT_S}"]
        self.extra_redis_args = ["--repl-timeout", str(NET_TIMEOUT_S)]

    def argv(self, argv: list[str]) -> list[str]:
        return self.net.argv(argv)

    def start_sshd(self, config: Path, log: Path) -> None:
        with log.open("ab") as out:
            self.sshd_proc = subprocess.Popen(self.argv([SSHD, "-D", "-e", "-f", str(config)]),
                                              stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.sshd_proc.poll() is not None:
                raise LabError(f"sshd ({self.hostname}) exited: "
                               f"{log.read_text(errors='replace')[-1500:]}")
            with contextlib.suppress(OSError), \
                    socket.create_connection((self.host, 22), timeout=0.2):
                return
            time.sleep(0.02)
        raise LabError(f"sshd ({self.hostname}) not listening on {self.host}:22 in 10 s")

    def stop(self) -> None:
        kill_processes([self.sshd_proc])
        self.sshd_proc = None
        super().stop()


class TwoHostLab(Lab):
    """The lab's pair on two hosts (network namespaces); see the module's docstring.
    ``net`` is its network (the faults between the nodes use it: replmon.lab.links)."""

    node_names = ("db163", "db162")
    primary: HostNode
    replica: HostNode

    def __init__(self, base_dir: str | Path | None = None, *, keep: bool = False,
                 mysql: str | None = DEFAULT_MYSQL, redis: str = DEFAULT_REDIS) -> None:
        super().__init__(base_dir, keep=keep, mysql=mysql, redis=redis)
        fd, path = tempfile.mkstemp(prefix="replmon-lab-net-", suffix=".json")
        os.close(fd)
        self.state_path = Path(path)
        """What the reaper removes (outside ``dir``: the lab removes ``dir`` first)."""
        self.state = State(dirs=[str(self.dir)] if self._own_dir and not keep else [])
        self.net = Network(HOSTNAMES, self.state, self.state_path)
        self.reaper = Reaper(self.state_path)

    def node(self, name: str, server_id: int) -> HostNode:
        return HostNode(self, name, server_id=server_id)

    @property
    def nodes(self) -> tuple[HostNode, HostNode]:
        return (self.primary, self.replica)

    @property
    def ssh_config(self) -> Path:
        """The ssh_config replmon reads the nodes' host metrics with (``ssh -F``)."""
        return self.dir / "ssh" / "ssh_config"

    def _start(self) -> None:
        if os.geteuid() != 0:
            raise LabError("the two-host lab makes network namespaces (ip netns): run it "
                           "as root, or use the one-host lab (without --lab-hosts)")
        self.state.save(self.state_path)
        self.reaper.start()
        self.net.make()
        for node, net in zip(self.nodes, self.net.hosts, strict=True):
            node.place(net, oracle_mysql=self.is_mysql)
        self._start_sshds()
        super()._start()
        homes = {str(self.mysql_home), str(self.redis_home)} - set(self.state.dirs)
        if self._own_dir and not self.keep and homes - {str(self.dir)}:
            self.state.dirs += sorted(homes - {str(self.dir)})  # a chroot's temp dirs
            self.state.save(self.state_path)

    def _start_sshds(self) -> None:
        """An sshd on each node, a user key they both take, the client's ssh_config."""
        d = self.dir / "ssh"
        d.mkdir(parents=True, exist_ok=True)
        user_key = _keygen(d / "id_ed25519")
        (d / "authorized_keys").write_text(user_key)
        known = []
        for node in self.nodes:
            host_key = _keygen(d / f"host_{node.name}")
            known.append(f"{node.host} {' '.join(host_key.split()[:2])}\n")
            config = d / f"sshd_{node.name}"
            config.write_text(
                f"Port 22\nListenAddress 0.0.0.0\nHostKey {d / f'host_{node.name}'}\n"
                f"PidFile {d / f'sshd_{node.name}.pid'}\n"
                f"AuthorizedKeysFile {d / 'authorized_keys'}\nUsePAM no\nStrictModes no\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                "PermitRootLogin prohibit-password\nMaxStartups 100\n")
        (d / "known_hosts").write_text("".join(known))
        self.ssh_config.write_text(
            f"Host *\n  IdentityFile {d / 'id_ed25519'}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {d / 'known_hosts'}\n  GlobalKnownHostsFile /dev/null\n"
            "  StrictHostKeyChecking yes\n  Port 22\n  User root\n  LogLevel ERROR\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
        for node in self.nodes:
            node.start_sshd(d / f"sshd_{node.name}", d / f"sshd_{node.name}.log")

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            self.reaper.stop()

    def settings(self, interval: float = 1.0, *, mysql: bool = True) -> dict[str, Any]:
        """Lab.settings, with each node's host metrics read over ssh in its namespace."""
        data = super().settings(interval, mysql=mysql)
        for role in ("primary", "replica"):
            data[role]["ssh"] = {"mode": "ssh", "config_file": str(self.ssh_config)}
        return data

    def describe(self) -> str:
        """One line: each node's hostname, namespace and addresses."""
        return "; ".join(f"{n.hostname} (netns {n.net.ns}, monitoring {n.host} on "
                         f"{MONITOR_DEV} from {n.net.root_dev}, replication {n.repl_host} on "
                         f"{REPLICATION_DEV})" for n in self.nodes)


def _keygen(path: Path) -> str:
    """A fresh ed25519 key at ``path``; its public line."""
    path.unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "replmon-lab",
                    "-f", str(path)], check=True, capture_output=True, timeout=30)
    return path.with_suffix(".pub").read_text()
