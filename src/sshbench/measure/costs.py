"""Costs of each sample: the embedded server's CPU seconds and the peak memory of client and server.

Measuring sees an embedded server only through `ServerView` (its processes, their roles, its CPU counter),
so nothing here depends on how servers are started. `metered` wraps any sampler: server CPU is the
server's cgroup reading after the connection's processes have exited minus the reading before (and what of it
was spent before the login's command was sent, read when ssh says it sent it: `server_cpu_setup`); during
transfers a light watcher reads, at `run_timed`'s own wake-ups, the peak RSS (VmHWM) of the ssh client and the
summed peaks of the server's per-connection processes (not the listener).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Callable
from typing import Protocol

import psutil

from sshbench.measure.scheduler import Sampler
from sshbench.model import Scenario
from sshbench.samples import Sample
from sshbench.ssh.hooks import at_mark, spawned, ticking
from sshbench.ssh.timed import SPARSE_PROBE


class ServerView(Protocol):
    """What measuring needs of an embedded server."""

    name: str

    @property
    def pid(self) -> int | None:
        """Return the listener's PID while it runs."""

    def processes(self) -> list[psutil.Process]:
        """Return the server's live processes."""

    def connection_processes(self) -> list[psutil.Process]:
        """Return the processes serving connections (everything but the listener)."""

    def connection_pids(self) -> frozenset[int]:
        """Return the PIDs of the processes serving connections (cheaper than `connection_processes`)."""

    def serving_pids(self) -> frozenset[int]:
        """Return the PIDs of the processes whose memory serves connections (the listener too where it serves them
        itself)."""

    def role(self, proc: psutil.Process) -> str:
        """Return the role of one of the server's processes (listener, session, command...)."""

    def cpu_seconds(self) -> float | None:
        """Return CPU seconds used by every server process so far (None when not counted)."""

    def wait_idle(self, timeout: float = ..., standing: frozenset[int] = ...) -> bool:
        """Wait until no connection is being served but those of the processes in `standing`; return True if so."""

    def cpu_counter(self) -> contextlib.AbstractContextManager[Callable[[], float | None]]:
        """Return a block in which a reader of `cpu_seconds` is cheap (its counter kept open)."""


def metered(take: Sampler, server: ServerView | None, watch_memory: bool) -> Sampler:
    """Add the embedded server's CPU seconds to each sample and, when watching memory, the peak client/server RSS
    to a row's first measured sample that reads both (and to warm-ups): a high-water mark is the same from one
    transfer of a row to the next, and each reading is taken from the measured pair (issue 40)."""
    peaked: set[str] = set()  # the scenarios a measured sample has read both peaks of
    standing: list[frozenset[int]] = []  # the connections served before the first sample (a master's), read once

    def sample(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample between two readings of the server's CPU counter (and a third when the login is done)."""
        watcher = PeakWatcher(server) if watch_memory and sc.key not in peaked else None
        taken = _costed(take, server, watcher, sc, rnd, warmup, standing)
        both = taken.client_rss is not None and (server is None or taken.server_rss is not None)
        if watcher is not None and not warmup and taken.ok and both:
            peaked.add(sc.key)
        return taken

    return sample


def _costed(
    take: Sampler,
    server: ServerView | None,
    watcher: PeakWatcher | None,
    sc: Scenario,
    rnd: int,
    warmup: bool,
    standing: list[frozenset[int]],
) -> Sample:
    """Take one sample with the server's CPU counted and, with a watcher, the peaks read. `standing` holds the
    connections that stay (read at the first sample: each sample waits for its own to end, so the next begins
    with the same; read again after a wait that timed out)."""
    if server is None:
        taken = _watched(take, sc, rnd, warmup, watcher)
        return dataclasses.replace(taken, client_rss=watcher.client_peak if watcher else None)
    with server.cpu_counter() as cpu:
        before = cpu()
        if not standing:
            standing.append(server.connection_pids())
        logged_in: list[float | None] = []
        with at_mark(lambda: logged_in.append(cpu())):
            taken = _watched(take, sc, rnd, warmup, watcher)
        if not server.wait_idle(standing=standing[0]):  # the sample's last processes exit: their CPU is counted
            standing.clear()  # too (a master connection's session, there before the first sample, stays)
        after = cpu()
    cpu_used = None if before is None or after is None else after - before
    setup = None if before is None or len(logged_in) != 1 or logged_in[0] is None else logged_in[0] - before
    return dataclasses.replace(
        taken,
        server_cpu=cpu_used,
        client_rss=watcher.client_peak if watcher else None,
        server_rss=watcher.server_peak if watcher else None,
        server_cpu_setup=setup,
    )


def _watched(take: Sampler, sc: Scenario, rnd: int, warmup: bool, watcher: PeakWatcher | None) -> Sample:
    """Take the sample, its peak memory watched when there is a watcher."""
    if watcher is None:
        return take(sc, rnd, warmup)
    with watcher, spawned(watcher.adopt), ticking(watcher.tick):
        return take(sc, rnd, warmup)


def _field(fd: int, field: bytes) -> int | None:
    """Return a size field of an open /proc/PID/status in bytes (None once the process is gone, or a zombie's)."""
    try:
        data = os.pread(fd, 8192, 0)
        at = data.index(field) + len(field)
        return int(data[at : data.index(b"\n", at)].split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def _own_children() -> list[int]:
    """Return the PIDs of processes started by this program's main thread (the ssh client)."""
    main = threading.main_thread().native_id
    try:
        with open(f"/proc/{os.getpid()}/task/{main}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


class PeakWatcher:
    """Read the peak RSS (VmHWM) of the ssh client and of the server's connection processes: at `run_timed`'s own
    wake-ups once the client it started (`adopt`) has logged in (`tick`: as the steady part begins, at the login's
    end too for a row's first transfer of a size, then with its sparse probes), or in a thread every `interval` for
    a process whose login's end is not said. A high-water mark only rises, so a later reading loses nothing but
    what the last moments add.

    The client's figure cannot come from wait4's ru_maxrss: a child forked from this Python process
    inherits the parent's high-water mark across exec. VmHWM belongs to the client's own address space.
    """

    def __init__(self, server: ServerView | None, interval: float = 0.1) -> None:
        self.server, self.interval = server, interval
        self.client_peak: int | None = None
        self.server_peak: int | None = None
        self.pid: int | None = None  # the client `run_timed` started
        self.files: dict[int, int] = {}  # PID -> its /proc/PID/status, held open for the sample
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None  # made only for a client whose login's end is not said

    def adopt(self, pid: int, marked: bool = False) -> None:
        """Watch this client (the first process `run_timed` starts); `marked`: its login's end will be said and
        `tick` reads from there, else the thread polls from now."""
        if self.pid is None:
            self.pid = pid
            if not marked:
                self._thread = threading.Thread(target=self._run, name="sshbench-rss", daemon=True)
                self._thread.start()

    def tick(self) -> float | None:
        """Read the peaks now and return the seconds to the next reading (None while the thread polls instead): at
        the login's end where a transfer may end before any other wake-up, else from where its steady part begins
        (the server's processes are gone as the client exits)."""
        if self._thread is not None or self._stop.is_set():
            return None
        self._poll()
        return SPARSE_PROBE

    def _peak(self, pid: int, field: bytes = b"VmHWM:") -> int | None:
        """Return a process's size field, its status file opened once and kept for the sample's other readings."""
        fd = self.files.get(pid)
        if fd is None:
            try:
                fd = self.files[pid] = os.open(f"/proc/{pid}/status", os.O_RDONLY)
            except OSError:
                return None
        return _field(fd, field)

    def _poll(self) -> None:
        """Read the peaks once (the listener's size now, where it serves: its peak is its lifetime's)."""
        for pid in [self.pid] if self.pid is not None else _own_children():
            peak = self._peak(pid)
            if peak is not None:
                self.client_peak = max(self.client_peak or 0, peak)
        if self.server is not None:
            listener = self.server.pid
            peaks = [self._peak(pid, b"VmRSS:" if pid == listener else b"VmHWM:") for pid in self.server.serving_pids()]
            known = [p for p in peaks if p is not None]
            if known:
                self.server_peak = max(self.server_peak or 0, sum(known))

    def _run(self) -> None:
        """Poll until stopped."""
        while not self._stop.wait(self.interval):
            self._poll()

    def __enter__(self) -> PeakWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for fd in self.files.values():
            os.close(fd)
