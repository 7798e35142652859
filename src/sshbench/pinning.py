"""CPU pinning: the ssh client on one CPU, the embedded server's processes on another.

On a small machine client and server otherwise compete for the same cores and the scheduler's
placement changes from one sample to the next; pinning them apart behaves more like two hosts and
cuts sample-to-sample noise (on the 2-core development machine: aes128-gcm download CV 3-8 % free,
2-3 % pinned; see docs/BENCHMARKS.md). The server's processes inherit its affinity when they fork.
"""

from __future__ import annotations

import os
from typing import Any

from sshbench.embedded import LocalServer


def plan(want: bool, embedded: bool) -> tuple[int, int] | None:
    """Return (client CPU, server CPU) when pinning is wanted and possible."""
    cpus = sorted(os.sched_getaffinity(0))
    if not want or not embedded or len(cpus) < 2:
        return None
    return cpus[0], cpus[1]


def apply(cpus: tuple[int, int] | None, servers: list[LocalServer]) -> dict[str, Any] | None:
    """Pin this process (so every ssh client it starts) and the servers; return metadata for the run."""
    if cpus is None:
        return None
    client, server = cpus
    for s in servers:
        for proc in s.processes():
            os.sched_setaffinity(proc.pid, {server})
    os.sched_setaffinity(0, {client})
    return {"client_cpu": client, "server_cpu": server}


def describe(want: bool, embedded: bool) -> str | None:
    """Return why pinning was not applied, when it was asked for."""
    if not want:
        return None
    if not embedded:
        return "not applied: the server is remote"
    if len(os.sched_getaffinity(0)) < 2:
        return "not applied: fewer than 2 CPUs available"
    return None
