"""The subprocess seam: run a real binary, timestamp its stderr lines as they arrive, account its CPU.

Python only reads ssh's short debug lines here; payload bytes never pass through it.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.counters import LineSplitter, cpu_so_far, open_io, read_io

Clock = Callable[[], float]
Hook = TypeVar("Hook")  # one of the calls `run_timed` makes (at a start, a mark, an exit)
STDOUT_CAP = 1 << 16  # upload verification output is one short line; keep at most this much
SPARSE_PROBE = 0.25  # seconds between I/O counter probes once a `dense` run has what a steady rate needs


@dataclass(frozen=True)
class Finished:
    """What a finished process did: exit code, timestamped stderr lines, a little stdout, CPU."""

    argv: tuple[str, ...]
    returncode: int
    started: float
    ended: float
    lines: tuple[tuple[float, str], ...]
    stdout: bytes
    cpu_user: float
    cpu_system: float
    timed_out: bool = False
    progress: tuple[tuple[float, int, int], ...] = ()  # (time, bytes read, bytes written) from /proc/PID/io
    stalled: float | None = None  # stopped after this many seconds in which its I/O counters did not move
    cpu_at_mark: float | None = None  # CPU seconds the process had used when its `mark` line arrived

    @property
    def wall(self) -> float:
        """Return seconds from spawn to exit."""
        return self.ended - self.started

    @property
    def texts(self) -> list[str]:
        """Return the stderr lines without their timestamps."""
        return [text for _, text in self.lines]


def require_binary(name: str, package: str) -> str:
    """Return the absolute path of a binary, or fail naming the package that provides it."""
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
    if path is None:
        raise SshbenchError(
            f"`{name}` was not found",
            place="PATH and /usr/sbin",
            fix=f"install it: {hints.install(package)}",
            code=ExitCode.MISSING_BINARY,
        )
    return os.path.abspath(path)


def ssh_client(path: str | None = None) -> str:
    """Return the OpenSSH client to run: the one given by path (`--ssh`), checked, else the system's `ssh`."""
    if path is None:
        return require_binary("ssh", "openssh-client")
    full = os.path.abspath(path)
    fix = "give the path of an OpenSSH `ssh` binary (or a script that runs one), e.g. /opt/openssh/usr/bin/ssh"
    try:
        said = run_quick([full, "-V"], timeout=10).stderr.strip() if os.path.isfile(full) else ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        said = str(exc)
    if not said.startswith("OpenSSH"):
        what = f"`{full} -V` printed {said.splitlines()[0][:120]!r}" if said else "it printed no OpenSSH version"
        raise SshbenchError(f"{path} is not an OpenSSH client: {what}", place="--ssh", fix=fix, code=ExitCode.USAGE)
    return full


def beside(ssh: str, name: str, package: str) -> str:
    """Return the program `name` of the same OpenSSH as `ssh` (scp, sftp, ssh-keygen beside it), or the system's
    when `ssh` is the system's own."""
    system = shutil.which("ssh") or shutil.which("ssh", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if system is not None and ssh == os.path.abspath(system):
        return require_binary(name, package)
    path = os.path.join(os.path.dirname(ssh), name)
    if not os.access(path, os.X_OK):
        raise SshbenchError(
            f"no `{name}` beside the ssh client {ssh}",
            place="--ssh",
            fix=f"put that OpenSSH's {name} at {path}, or leave out --ssh to use the system's",
            code=ExitCode.MISSING_BINARY,
        )
    return path


def run_quick(argv: Sequence[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """Run a short helper command (ssh -Q, ssh -G, ssh-keygen) and capture its text output."""
    return subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
    )


_placers: list[Callable[[int], None]] = []  # each gets the PID of every process `run_timed` starts, at once
_at_mark: list[Callable[[], None]] = []  # each is called when a `mark` line arrives (once per process)
_at_exit: list[Callable[[int], None]] = []  # each gets the PID of a process `run_timed` runs as its exit is seen
_spawned: list[Callable[[int, bool], None]] = []  # each gets a started process's PID and whether a mark will come


@contextlib.contextmanager
def _hooked(hooks: list[Hook], call: Hook) -> Iterator[None]:
    """Keep `call` among `hooks` for the block."""
    hooks.append(call)
    try:
        yield
    finally:
        hooks.remove(call)


def spawned(call: Callable[[int, bool], None]) -> contextlib.AbstractContextManager[None]:
    """Tell `call` of every process `run_timed` starts in the block: its PID, and whether `at_mark` calls will say
    when its login is done (a `mark` was given)."""
    return _hooked(_spawned, call)


def at_exit(call: Callable[[int], None]) -> contextlib.AbstractContextManager[None]:
    """Call `call` with the PID of every process `run_timed` runs in the block once it is gone: as its exit is seen
    (before it is reaped), or when it was killed (a deadline, a stall, an interruption)."""
    return _hooked(_at_exit, call)


def at_mark(call: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
    """Call `call` in the block whenever a process `run_timed` runs prints its `mark` line (e.g. to read a server's
    CPU counter at the moment a login is done and its command sent)."""
    return _hooked(_at_mark, call)


def placing(place: Callable[[int], None]) -> contextlib.AbstractContextManager[None]:
    """Hand every process `run_timed` starts in the block to `place` right after it starts (e.g. into a CPU-quota
    cgroup: its exec is the only work done outside it)."""
    return _hooked(_placers, place)


def run_timed(
    argv: Sequence[str],
    *,
    stdin: IO[bytes] | int = subprocess.DEVNULL,
    capture_stdout: bool = False,
    timeout: float = 600.0,
    env: dict[str, str] | None = None,
    clock: Clock = time.perf_counter,
    probe: float | None = None,
    arrived: Callable[[], int] | None = None,
    mark: str | None = None,
    stall: float | None = None,
    dense: tuple[int, int] | None = None,
) -> Finished:
    """Run argv to completion; stdout goes to /dev/null unless captured (a few bytes at most).

    probe: every `probe` seconds, and once at exit, read the process's I/O counters (/proc/PID/io rchar, wchar) so
    that a transfer's progress over time is known without touching its data; with `arrived`, record what it returns
    instead (e.g. the size of the file being received), as (time, bytes, 0). mark: when the first stderr line
    holding it arrives, the process's CPU so far is read (`Finished.cpu_at_mark`) and `at_mark` calls are made.
    stall (with probe): stop the process once its I/O counters have not moved for `stall` seconds (a transfer the
    server stopped answering, which would otherwise wait out the whole timeout); `Finished.stalled` says so.
    dense (with probe and mark): (column, bytes): no probes before the mark (the counters are read as its line
    arrives), every `probe` seconds until the column (1 rchar, 2 wchar) has moved that many bytes since, then every
    SPARSE_PROBE seconds: a steady rate needs dense probes only around its threshold, and each wake-up is CPU taken
    from the measured client.
    """
    started = clock()
    proc = subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=subprocess.PIPE if capture_stdout else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        for place in _placers:
            place(proc.pid)
        for tell in _spawned:
            tell(proc.pid, mark is not None)
        return _collect(proc, tuple(argv), started, timeout, clock, probe, arrived, mark, stall, dense)
    except BaseException:
        _kill(proc)
        raise


class _Watch:
    """Read a running process's stderr (timestamped lines), a little stdout and its I/O counters until it exits."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        clock: Clock,
        probe: float | None,
        arrived: Callable[[], int] | None,
        mark: str | None = None,
        stall: float | None = None,
        dense: tuple[int, int] | None = None,
    ) -> None:
        assert proc.stderr is not None
        self.proc, self.clock, self.probe, self.arrived, self.mark = proc, clock, probe, arrived, mark
        self.stall, self.stalled = stall, False
        self.dense, self.base = dense, 0  # (column, bytes): probes from the mark on, sparse once that many moved
        self.next_probe = math.inf if dense is not None and mark is not None else 0.0  # inf: from the mark on
        self.moved: tuple[float, tuple[int, int]] | None = None  # when the counters last changed, and to what
        self.cpu_at_mark: float | None = None
        self.lines, self.stdout = LineSplitter(), bytearray()
        self.progress: list[tuple[float, int, int]] = []
        self.ended: float | None = None  # the exit instant, from the pidfd
        self.told_gone = False  # the `at_exit` calls were made
        self.pidfd = os.pidfd_open(proc.pid)
        self.io_fd = open_io(proc.pid) if probe is not None and arrived is None else None
        self.sel = selectors.DefaultSelector()
        self.sel.register(proc.stderr.fileno(), selectors.EVENT_READ, "err")
        if proc.stdout is not None:
            self.sel.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
        self.sel.register(self.pidfd, selectors.EVENT_READ, "exit")

    def run(self, deadline: float) -> None:
        """Read until the process has exited and closed its pipes, or kill it at the deadline."""
        try:
            while len(self.sel.get_map()) > 0:
                remaining = deadline - self.clock()
                if remaining <= 0:
                    _kill(self.proc)
                    break
                if self.probe is not None and (self.io_fd is not None or self.arrived) and self.ended is None:
                    wait = self.next_probe - self.clock()
                    if wait <= 0:
                        self._read_counters()
                        if self._still():
                            _kill(self.proc)
                            self.stalled = True
                            break
                        wait = self._gap()
                        self.next_probe = self.clock() + wait
                    remaining = min(remaining, wait)
                for key, _ in self.sel.select(remaining):
                    self._handle(key.fd, key.data)
        finally:
            self._gone()  # killed, or interrupted: the process is gone (or going) all the same
            self.sel.close()
            os.close(self.pidfd)
            if self.io_fd is not None:
                os.close(self.io_fd)

    def _gone(self) -> None:
        """Tell the `at_exit` calls, once, that the process is gone."""
        if not self.told_gone:
            self.told_gone = True
            for ended in _at_exit:
                ended(self.proc.pid)

    def _gap(self) -> float:
        """Return the seconds to the next probe: `probe`, or SPARSE_PROBE once `dense`'s bytes have moved."""
        assert self.probe is not None
        if self.dense is None or not self.progress:
            return self.probe
        column, enough = self.dense
        return SPARSE_PROBE if self.progress[-1][column] - self.base >= enough else self.probe

    def _baseline(self, now: float) -> None:
        """Read the counters as the mark line arrives (stamped with its time: the last reading before the command),
        and probe from here on."""
        counters = read_io(self.io_fd) if self.dense is not None and self.io_fd is not None else None
        if self.dense is None or counters is None:
            return
        self.progress.append((now, *counters))
        self.base = counters[self.dense[0] - 1]
        self.next_probe = now + (self.probe or 0.0)

    def _still(self) -> bool:
        """Return True when the counters have not moved for `stall` seconds."""
        if self.stall is None or not self.progress:
            return False
        now, counters = self.progress[-1][0], self.progress[-1][1:]
        if self.moved is None or self.moved[1] != counters:
            self.moved = (now, (counters[0], counters[1]))
            return False
        return now - self.moved[0] > self.stall

    def _read_counters(self) -> None:
        """Record the process's I/O counters now (or what `arrived` counts)."""
        if self.arrived is not None:
            self.progress.append((self.clock(), self.arrived(), 0))
            return
        assert self.io_fd is not None
        counters = read_io(self.io_fd)
        if counters is not None:
            self.progress.append((self.clock(), *counters))

    def _handle(self, fd: int, what: str) -> None:
        """Take what became readable: the exit, a chunk of stderr or stdout, or the end of a pipe."""
        now = self.clock()
        if what == "exit":
            self.ended = now
            self.sel.unregister(self.pidfd)
            self._gone()
            counters = read_io(self.io_fd) if self.io_fd is not None else None  # an exited process's are readable
            if counters is not None:  # until it is reaped: its totals (a last probe at `ended` times nothing)
                self.progress.append((now, *counters))
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            self.sel.unregister(fd)
        elif what == "err":
            seen = len(self.lines.lines)
            self.lines.feed(now, chunk)
            if self.mark is not None and any(self.mark in text for _, text in self.lines.lines[seen:]):
                self.mark, self.cpu_at_mark = None, cpu_so_far(self.proc.pid)
                self._baseline(now)
                for call in _at_mark:
                    call()
        elif len(self.stdout) < STDOUT_CAP:
            self.stdout += chunk


def _reap(proc: subprocess.Popen[bytes]) -> tuple[float, float]:
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


def _collect(
    proc: subprocess.Popen[bytes],
    argv: tuple[str, ...],
    started: float,
    timeout: float,
    clock: Clock,
    probe: float | None = None,
    arrived: Callable[[], int] | None = None,
    mark: str | None = None,
    stall: float | None = None,
    dense: tuple[int, int] | None = None,
) -> Finished:
    """Read stderr/stdout until the process exits; the exit instant comes from its pidfd."""
    watch = _Watch(proc, clock, probe, arrived, mark, stall, dense)
    watch.run(started + timeout)
    cpu_user, cpu_system = _reap(proc)
    end = watch.ended if watch.ended is not None else clock()
    watch.lines.close(end)
    return Finished(
        argv=argv,
        returncode=proc.returncode,
        started=started,
        ended=end,
        lines=tuple(watch.lines.lines),
        stdout=bytes(watch.stdout),
        cpu_user=cpu_user,
        cpu_system=cpu_system,
        timed_out=watch.ended is None,
        progress=tuple(watch.progress),
        cpu_at_mark=watch.cpu_at_mark,
        stalled=watch.stall if watch.stalled else None,
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
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
