"""Memory of an embedded server per process role, and of the ssh client: idle, in a session, in a transfer.

A snapshot reads each process's VSZ, RSS and PSS (psutil: /proc/PID/status and smaps_rollup) and sums
them per role. PSS splits shared pages (libc, libcrypto) between the processes that map them, so it is
the fair "what does one more connection cost" figure; RSS counts shared pages in full.

During throughput samples a light watcher reads, every 100 ms, the peak RSS (VmHWM) of the ssh client
and the summed peaks of the server's per-connection processes (not the listener).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil

from sshbench.embedded import LocalServer
from sshbench.model import MemoryRecord
from sshbench.target import Target

SETTLE = 0.3  # seconds to let a session or transfer reach its steady state before the snapshot
READY_TIMEOUT = 15.0
TRANSFER_COMMAND = "head -c 1099511627776 /dev/zero"  # 1 TiB: stopped by the client long before the end
SESSION_COMMAND = "cat"  # holds the session open until the client closes stdin


@dataclass(frozen=True)
class _Reading:
    """One process's memory."""

    vsz: int
    rss: int
    pss: int | None


def _read(proc: psutil.Process) -> _Reading | None:
    """Return a process's memory, or None if it is gone."""
    try:
        with proc.oneshot():
            info = proc.memory_info()
            pss: int | None = None
            with contextlib.suppress(psutil.AccessDenied, AttributeError):
                pss = int(proc.memory_full_info().pss)
            return _Reading(int(info.vms), int(info.rss), pss)
    except psutil.Error:
        return None


def snapshot(server: LocalServer, state: str, client_pid: int | None = None) -> list[MemoryRecord]:
    """Return the memory of each of the server's process roles (and of the client) right now."""
    sums: dict[str, list[_Reading]] = {}
    for proc in server.processes():
        reading = _read(proc)
        if reading is not None:
            sums.setdefault(server.role(proc), []).append(reading)
    if client_pid is not None:
        with contextlib.suppress(psutil.Error):
            reading = _read(psutil.Process(client_pid))
            if reading is not None:
                sums["client"] = [reading]
    records = []
    for role, readings in sums.items():
        pss = [r.pss for r in readings]
        records.append(
            MemoryRecord(
                server=server.name,
                state=state,
                role=role,
                processes=len(readings),
                vsz=sum(r.vsz for r in readings),
                rss=sum(r.rss for r in readings),
                pss=None if None in pss else sum(p for p in pss if p is not None),
            )
        )
    return records


def _wait_for(proc: subprocess.Popen[bytes], marker: str, timeout: float) -> bool:
    """Read ssh -v stderr until a line contains marker (True) or ssh exits / time runs out (False)."""
    assert proc.stderr is not None
    pending = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stderr, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(max(deadline - time.monotonic(), 0)):
                continue
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                return False
            pending += chunk
            if marker.encode() in pending:
                return True
            pending = pending[-4096:]
    return False


def _has_command(server: LocalServer) -> bool:
    """Return True once the session's command runs on the server."""
    return any(server.role(p) == "command" for p in server.connection_processes())


def _stop_client(proc: subprocess.Popen[bytes]) -> None:
    """End the ssh client we started (closing stdin first lets a `cat` session end cleanly)."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()


@contextlib.contextmanager
def _connection(ssh: str, target: Target, command: str) -> Iterator[subprocess.Popen[bytes] | None]:
    """Open one connection running a fixed command; yield the client once the command runs (or None)."""
    argv = target.argv(ssh, [], command)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield proc if _wait_for(proc, "Sending command:", READY_TIMEOUT) else None
    finally:
        if command == TRANSFER_COMMAND and proc.poll() is None:
            proc.terminate()
        _stop_client(proc)


def measure_states(ssh: str, server: LocalServer, target: Target) -> tuple[list[MemoryRecord], list[str]]:
    """Snapshot memory idle, with an open session, and during a download; return records and problems."""
    records = snapshot(server, "idle")
    problems = []
    for state, command in (("session", SESSION_COMMAND), ("transfer", TRANSFER_COMMAND)):
        with _connection(ssh, target, command) as client:
            deadline = time.monotonic() + READY_TIMEOUT
            while client is not None and not _has_command(server) and time.monotonic() < deadline:
                time.sleep(0.02)
            if client is None or not _has_command(server):
                problems.append(f"{server.name}: no {state} snapshot (the connection did not start its command)")
                continue
            time.sleep(SETTLE)
            records += snapshot(server, state, client.pid)
        server.wait_idle()
    return records, problems


def peak_rss(pid: int) -> int | None:
    """Return a process's peak resident set size so far (VmHWM, bytes), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
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
    """Poll, in a thread, the peak RSS (VmHWM) of the ssh client and of the server's connection processes.

    The client's figure cannot come from wait4's ru_maxrss: a child forked from this Python process
    inherits the parent's high-water mark across exec. VmHWM belongs to the client's own address space.
    """

    def __init__(self, server: LocalServer | None, interval: float = 0.1) -> None:
        self.server, self.interval = server, interval
        self.client_peak: int | None = None
        self.server_peak: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sshbench-rss", daemon=True)

    def _poll(self) -> None:
        """Read the peaks once."""
        for pid in _own_children():
            peak = peak_rss(pid)
            if peak is not None:
                self.client_peak = max(self.client_peak or 0, peak)
        if self.server is not None:
            peaks = [peak_rss(p.pid) for p in self.server.connection_processes()]
            known = [p for p in peaks if p is not None]
            if known:
                self.server_peak = max(self.server_peak or 0, sum(known))

    def _run(self) -> None:
        """Poll until stopped."""
        while not self._stop.wait(self.interval):
            self._poll()

    def __enter__(self) -> PeakWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
