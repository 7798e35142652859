"""Starting a process `run_timed` runs: one posix_spawn (the C library's vfork and exec), its stderr and, when asked,
its stdout on pipes, its stdin a file or /dev/null, every other inherited descriptor closed and SIGPIPE and SIGXFSZ
back at their defaults, as subprocess.Popen would leave it. Popen does the same with about 0.1 ms more of this
process's CPU a start on this kind of machine, and a transfer sample starts one (docs/BENCHMARKS.md, issue 40)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO


@dataclass
class Child:
    """A started process: its PID, the read ends of its stderr and (when captured) stdout pipes, its exit code once
    reaped (mutable: `run_timed` closes the pipes and records the code)."""

    pid: int
    stderr: int
    stdout: int | None = None
    returncode: int | None = None

    def close(self) -> None:
        """Close the pipes' read ends (once)."""
        for fd in (self.stderr, self.stdout):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.stderr, self.stdout = -1, None


def spawn(argv: Sequence[str], stdin: IO[bytes] | int, capture_stdout: bool, env: dict[str, str] | None) -> Child:
    """Start argv (its first word looked up on PATH when it has no slash); raise OSError when it cannot be run."""
    err_read, err_write = os.pipe()
    out_read, out_write = os.pipe() if capture_stdout else (None, None)
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
        _stdin(stdin),
        (os.POSIX_SPAWN_DUP2, out_write, 1) if out_write is not None else _devnull(1, os.O_WRONLY),
        (os.POSIX_SPAWN_DUP2, err_write, 2),
    ]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited()]
    run = os.posix_spawn if "/" in argv[0] else os.posix_spawnp
    try:
        pid = run(
            argv[0],
            list(argv),
            os.environ if env is None else env,
            file_actions=actions,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
    except BaseException:
        for fd in (err_read, out_read):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (err_write, out_write):
            if fd is not None:
                os.close(fd)
    return Child(pid, err_read, out_read)


def _stdin(stdin: IO[bytes] | int) -> tuple[int, ...] | tuple[int, int, str, int, int]:
    """Return the file action that gives the process its stdin: /dev/null, or a file's descriptor."""
    if stdin == subprocess.DEVNULL:
        return _devnull(0, os.O_RDONLY)
    fd = stdin if isinstance(stdin, int) else stdin.fileno()
    return (os.POSIX_SPAWN_DUP2, fd, 0)


def _devnull(fd: int, flags: int) -> tuple[int, int, str, int, int]:
    """Return the file action that opens /dev/null as descriptor `fd`."""
    return (os.POSIX_SPAWN_OPEN, fd, os.devnull, flags, 0)


def _inherited() -> list[int]:
    """Return this process's descriptors above stderr that a child would inherit (Python makes its own
    non-inheritable; one handed down by sshbench's own parent may not be)."""
    out: list[int] = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return out
    for name in names:
        fd = int(name)
        if fd > 2:
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
                if os.get_inheritable(fd):
                    out.append(fd)
    return out
