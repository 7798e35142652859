"""What `run_timed` reads of a running process besides its exit: its stderr as timestamped lines, its CPU so far
and its I/O counters (/proc), its CPU once it is reaped; the /dev/null it hands processes, the epoll it waits in,
and how it stops one."""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import subprocess
import threading


class LineSplitter:
    """Split a byte stream into lines, stamping each with the time its last chunk arrived."""

    def __init__(self) -> None:
        self.pending = b""
        self.lines: list[tuple[float, str]] = []

    def feed(self, t: float, chunk: bytes) -> None:
        """Add a chunk that arrived at time t."""
        self.pending += chunk
        *complete, self.pending = self.pending.split(b"\n")
        self.lines.extend((t, raw.decode("utf-8", "replace").rstrip("\r")) for raw in complete)

    def close(self, t: float) -> None:
        """Flush a last unterminated line."""
        if self.pending:
            self.lines.append((t, self.pending.decode("utf-8", "replace")))
            self.pending = b""


def read_waiting(fd: int, lines: LineSplitter, now: float, reads: int = 64) -> bool:
    """Feed `lines` what a non-blocking pipe holds (at most `reads` chunks), stamped `now`; return True at its end."""
    for _ in range(reads):
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        lines.feed(now, chunk)
    return False


def open_io(pid: int, name: str = "io") -> int | None:
    """Open /proc/PID/io (or another of its files, such as schedstat) once: reads are repeated with pread, and an
    open costs a path walk through /proc, many times a read; None when it is not readable."""
    try:
        return os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
    except OSError:
        return None


def cpu_so_far(fd: int | None) -> float | None:
    """Return the CPU seconds (user and system) a live process has run so far, from its /proc/PID/schedstat opened
    with `open_io` (ns)."""
    if fd is None:
        return None
    try:
        return int(os.pread(fd, 128, 0).split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def read_io(fd: int) -> tuple[int, int] | None:
    """Return (rchar, wchar): bytes the process has read and written so far through any file."""
    try:
        fields = os.pread(fd, 512, 0).split()
        return int(fields[1]), int(fields[3])  # "rchar: N wchar: N ..."
    except (OSError, IndexError, ValueError):
        return None


_POLLERS = threading.local()  # each thread's epoll, kept from one run to the next (a forked child makes its own)
os.register_at_fork(after_in_child=lambda: _POLLERS.__dict__.clear())


def poller() -> select.epoll:
    """Return this thread's epoll, made at its first `run_timed` and kept (each run leaves it empty)."""
    made: select.epoll | None = getattr(_POLLERS, "epoll", None)
    if made is None or made.closed:
        made = _POLLERS.epoll = select.epoll()
    return made


@functools.cache
def null_fd() -> int:
    """Return a descriptor of /dev/null kept open for this process's life (Popen's DEVNULL opens and closes one at
    every spawn, in the sample)."""
    return os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)


def reap(proc: subprocess.Popen[bytes]) -> tuple[float, float]:
    """Wait for the process and return its (user, system) CPU seconds (0, 0 if it was already reaped)."""
    cpu_user = cpu_system = 0.0
    if proc.returncode is None:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu_user, cpu_system = usage.ru_utime, usage.ru_stime
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return cpu_user, cpu_system


def kill(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process we started, by PID, and reap it."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(proc.pid, 0)
        proc.returncode = -signal.SIGKILL
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
