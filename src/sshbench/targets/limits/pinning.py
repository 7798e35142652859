"""CPU pinning: the ssh client on one CPU, the embedded server's processes on another.

On a small machine client and server otherwise compete for the same cores and the scheduler's
placement changes from one sample to the next; pinning them apart behaves more like two hosts and
cuts sample-to-sample noise (aes128-gcm CV down 6.5 -> 1.9 %, up 19.7 -> 10.7 % on the 2-core
development machine: benchmarks/bench_ramp_pinning.py, docs/measuring.md). The server's
processes inherit its affinity when they fork.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence

import psutil

from sshbench.environment import Pinning
from sshbench.targets.servers.base import LocalServer


def apply(want: bool, servers: Sequence[LocalServer]) -> Pinning | None:
    """Pin this process (so every ssh client it starts) and the embedded servers apart, when asked.

    Return what the run records: the CPUs used, why pinning was not applied, or None when not asked.
    """
    if not want:
        return None
    if not servers:
        return Pinning(note="not applied: the server is remote")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return Pinning(note="not applied: fewer than 2 CPUs available")
    client, server = cpus[0], cpus[1]
    for s in servers:
        _pin(s, server)
    os.sched_setaffinity(0, {client})
    return Pinning(client_cpu=client, server_cpu=server)


def _pin(server: LocalServer, cpu: int) -> None:
    """Put every thread of the server's processes on one CPU (a thread's affinity is its own: the Go server's
    runtime threads exist before it is pinned; threads and processes started later inherit it)."""
    for proc in server.processes():
        try:
            tids = [t.id for t in proc.threads()]
        except psutil.Error:
            continue
        for tid in tids:
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(tid, {cpu})


def join(pinned: Pinning | None, server: LocalServer) -> None:
    """Put a server started after the others (a widened or configured one) on the servers' CPU, when they are
    pinned."""
    if pinned is not None and pinned.server_cpu is not None:
        _pin(server, pinned.server_cpu)
