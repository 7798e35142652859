"""Helper processes beside the embedded servers (the link check's socat pair, the `tools` baselines): started to
die with sshbench, inside the link's namespace when there is one, recorded in the lease, stopped by PID."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from sshbench import leases
from sshbench.errors import SshbenchError
from sshbench.targets.servers.base import dies_with_parent

if TYPE_CHECKING:
    from sshbench.targets.link.netns import EmulatedLink

START_TIMEOUT = 10.0


def spawn(argv: list[str], link: EmulatedLink | None = None) -> subprocess.Popen[bytes]:
    """Start a helper (in the link's namespace, if any) that dies with sshbench, recorded in the lease."""
    wrapped = dies_with_parent(argv)  # innermost, as for servers
    proc = subprocess.Popen(
        link.wrap(wrapped) if link else wrapped,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    leases.keeper().process(proc.pid)
    return proc


def stop(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """Terminate helpers by PID, reap them, and drop them from the lease."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=3)
        leases.keeper().forget(pid=p.pid)


def listening(address: str, ports: Sequence[int], procs: Sequence[subprocess.Popen[bytes]]) -> bool:
    """Wait until every port accepts a connection (closed at once); False if a helper died or time ran out."""
    deadline = time.monotonic() + START_TIMEOUT
    pending = list(ports)
    while pending and time.monotonic() < deadline:
        try:
            socket.create_connection((address, pending[0]), timeout=1).close()
            pending.pop(0)
        except OSError:
            if any(p.poll() is not None for p in procs):
                return False
            time.sleep(0.05)
    return not pending and all(p.poll() is None for p in procs)


@contextlib.contextmanager
def serving(
    argvs: Sequence[list[str]],
    link: EmulatedLink | None,
    address: str,
    ports: Sequence[int],
    failure: SshbenchError,
    started: Callable[[subprocess.Popen[bytes]], None] = lambda proc: None,
) -> Iterator[None]:
    """Run listening helpers for the block (each handed to `started` as it starts); raise `failure` unless every
    port accepts connections in time; stop them all afterwards."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for argv in argvs:
            procs.append(proc := spawn(argv, link))
            started(proc)
        if not listening(address, ports, procs):
            raise failure
        yield
    finally:
        stop(procs)
