"""The kernel as a witness of each sample: a sampler wrapped so that its transfer's sockets are watched
(`tcpinfo.Watcher`) while it runs, and the summary stored with the sample."""

from __future__ import annotations

import dataclasses
import os
import sys
import weakref
from collections.abc import Iterator

import psutil

from sshbench.measure.scheduler import Sampler
from sshbench.measure.tcpinfo import Kept, Watcher
from sshbench.model import Kind, Scenario
from sshbench.samples import Sample
from sshbench.ssh.hooks import at_exit, at_steady, spawned, ticking


def our_processes() -> Iterator[int]:
    """Return the PIDs of every process this one started, and their children (ssh clients, embedded servers)."""
    try:
        return iter([p.pid for p in psutil.Process().children(recursive=True)])
    except psutil.Error:
        return iter(())


def netns_of(pid: int | None) -> str | None:
    """Return /proc/PID/ns/net when that process lives in another network namespace than this one, else None."""
    if pid is None:
        return None
    try:
        theirs = os.stat(f"/proc/{pid}/ns/net")
        mine = os.stat("/proc/self/ns/net")
    except OSError:
        return None
    return None if (theirs.st_ino, theirs.st_dev) == (mine.st_ino, mine.st_dev) else f"/proc/{pid}/ns/net"


def witnessed(take: Sampler, port: int, server_pid: int | None, server_local: bool) -> Sampler:
    """Return `take` with the kernel's evidence of each transfer's sockets (throughput and copies; not connections
    or warm-ups); where sock_diag cannot be read (not Linux, a namespace we may not enter) samples go without it."""

    kept = Kept()  # one sock_diag socket per namespace for every sample, closed with the sampler
    netns = netns_of(server_pid)

    def sample(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample while its sockets are watched."""
        if warmup or sc.kind is Kind.LATENCY or not sys.platform.startswith("linux"):
            return take(sc, rnd, warmup)
        try:
            watcher = Watcher(port, our_processes, netns, server_local, adopting=True, kept=kept)
        except OSError:
            return take(sc, rnd, warmup)
        with watcher, spawned(watcher.adopt), at_steady(watcher.steady), ticking(watcher.tick), at_exit(watcher.ended):
            taken = take(sc, rnd, warmup)
        evidence = watcher.evidence()
        return dataclasses.replace(taken, tcp={**(taken.tcp or {}), **evidence}) if len(evidence) > 1 else taken

    weakref.finalize(sample, kept.close)
    return sample
