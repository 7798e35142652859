"""The plaintext baselines for `tools`: a socat listener each way and an rsync daemon, on the server's side.

They run where the embedded servers run (inside the emulated link's namespace when there is one) and serve the
same tmpfs directory the SSH tools copy to and from, so "SSH rate / plaintext rate" compares like with like.
Every process dies with sshbench (setpriv --pdeathsig) and is recorded in the lease until stopped.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import require_binary
from sshbench.targets.helpers import processes
from sshbench.targets.link.netns import EmulatedLink
from sshbench.targets.servers.base import LocalServer
from sshbench.targets.servers.ports import free_port

MODULE = "sshbench"


@dataclass(frozen=True)
class Listening:
    """Where the baselines listen."""

    address: str
    tcp_up: int  # socat writing what arrives into the directory's inbox/file
    tcp_down: int  # socat sending the directory's outbox/file
    rsyncd: int  # the rsync daemon, serving the directory as module MODULE
    module: str = MODULE


BLOCK = 2**20  # socat's read/write size: its 8 KiB default made the "ceiling" slower than scp over SSH


def _rsyncd_config(remote: Path, folder: Path) -> Path:
    """Write the daemon's configuration into `folder`: one writable module over the server's directory, as this
    user. Only root names the user (a daemon started by root would switch to `nobody`); a normal user's daemon runs
    as that user already, and `uid =`/`gid =` lines make it fail (`@ERROR: setgroups failed`)."""
    config = folder / "rsyncd.conf"
    who = f"  uid = {os.getuid()}\n  gid = {os.getgid()}\n" if os.geteuid() == 0 else ""
    config.write_text(f"[{MODULE}]\n  path = {remote}\n  read only = false\n  use chroot = false\n{who}")
    return config


def _argvs(socat: str, rsync: str, plain: Listening, remote: Path, private: Path) -> list[list[str]]:
    """Return the baselines' command lines: socat listening for uploads and for downloads, and the rsync daemon."""
    address = plain.address
    return [
        [
            socat,
            "-u",
            "-b",
            str(BLOCK),
            f"TCP-LISTEN:{plain.tcp_up},bind={address},reuseaddr,fork",
            f"CREATE:{remote}/inbox/file",
        ],
        [
            socat,
            "-U",
            "-b",
            str(BLOCK),
            f"TCP-LISTEN:{plain.tcp_down},bind={address},reuseaddr,fork",
            f"OPEN:{remote}/outbox/file",
        ],
        [
            rsync,
            "--daemon",
            "--no-detach",
            f"--config={_rsyncd_config(remote, private)}",
            f"--port={plain.rsyncd}",
            f"--address={address}",
        ],
    ]


@contextlib.contextmanager
def plain_servers(
    remote: Path, link: EmulatedLink | None, server: LocalServer | None, private: Path
) -> Iterator[Listening]:
    """Run the baselines for the block, counted and limited like the embedded server (its CPU cgroup and quota),
    their configuration in the private directory `private`; yield where they listen."""
    socat, rsync = require_binary("socat", "socat"), require_binary("rsync", "rsync")
    address = link.server_address if link else "127.0.0.1"
    ports = [free_port() for _ in range(3)] if link is None else [5301, 5302, 5303]  # own namespace: all free
    plain = Listening(address, ports[0], ports[1], ports[2])
    (remote / "inbox").mkdir(mode=0o700, exist_ok=True)
    argvs = _argvs(socat, rsync, plain, remote, private)

    def started(proc: subprocess.Popen[bytes]) -> None:
        """Count and limit a baseline like the server (its cgroups and quota). The rsync daemon also runs on the
        server's CPU when it is pinned, like the server's own processes; the socat listeners keep sshbench's CPU (the
        client's): with them on the server's CPU, two of three loopback `tools` runs had plain TCP uploads well
        below SSH (a failed baseline), with them here none of three did (docs/BENCHMARKS.md)."""
        if server is None:
            return
        for group in (server.group, server.quota):
            if group is not None:
                with contextlib.suppress(OSError):
                    group.add(proc.pid)
        argv = proc.args if isinstance(proc.args, list) else []
        if server.pid is not None and "--daemon" in argv:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(proc.pid, os.sched_getaffinity(server.pid))
        server.helpers.add(proc.pid)  # idle between copies: not a connection the server is serving

    failure = SshbenchError(
        f"the plaintext baselines (socat, an rsync daemon) did not start on {address}",
        place="sshbench tools",
        fix=f"check that socat and rsync are installed ({hints.install('socat rsync')})",
        code=ExitCode.SERVER_START,
    )
    with processes.serving(argvs, link, address, ports, failure, started):
        yield plain
