"""Memory of an embedded server per process role, and of the ssh client: idle, in a session, in a transfer.

A snapshot reads each process's VSZ, RSS and PSS (psutil: /proc/PID/status and smaps_rollup) and sums
them per role. PSS splits shared pages (libc, libcrypto) between the processes that map them, so it is
the fair "what does one more connection cost" figure; RSS counts shared pages in full. The peak memory
of each transfer sample is watched separately (costs.PeakWatcher).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil

from sshbench.measure.costs import ServerView
from sshbench.records import MemoryRecord
from sshbench.ssh.destination import Target

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


def snapshot(server: ServerView, state: str, client_pid: int | None = None) -> list[MemoryRecord]:
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


def _has_command(server: ServerView) -> bool:
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


def measure_states(ssh: str, server: ServerView, target: Target) -> tuple[list[MemoryRecord], list[str]]:
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
