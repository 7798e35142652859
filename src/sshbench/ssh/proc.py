"""The subprocess seam: run a real binary, timestamp its stderr lines as they arrive, account its CPU.

Python only reads ssh's short debug lines here; payload bytes never pass through it.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shutil
import subprocess
import time
from collections.abc import Sequence
from typing import IO

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh import hooks
from sshbench.ssh.counters import LineSplitter, cpu_so_far, kill, null_fd, open_io, poller, read_io, read_waiting, reap
from sshbench.ssh.timed import QUIET, SPARSE_PROBE, Clock, Finished, Watching

STDOUT_CAP = 1 << 16  # upload verification output is one short line; keep at most this much


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


def run_timed(
    argv: Sequence[str],
    *,
    stdin: IO[bytes] | int = subprocess.DEVNULL,
    capture_stdout: bool = False,
    timeout: float = 600.0,
    env: dict[str, str] | None = None,
    clock: Clock = time.perf_counter,
    watch: Watching = QUIET,
) -> Finished:
    """Run argv to completion; stdout goes to /dev/null unless captured (a few bytes at most); `watch` says what is
    read while it runs (its fields, below).

    probe: every `probe` seconds, and once at exit, read the process's I/O counters (/proc/PID/io rchar, wchar) so
    that a transfer's progress over time is known without touching its data; with `arrived`, record what it returns
    instead (e.g. the size of the file being received), as (time, bytes, 0). mark: when the first stderr line
    holding it arrives, the process's CPU so far is read (`Finished.cpu_at_mark`) and `at_mark` calls are made.
    stall (with probe): stop the process once its I/O counters have not moved for `stall` seconds (a transfer the
    server stopped answering, which would otherwise wait out the whole timeout); `Finished.stalled` says so.
    dense (with probe and mark): no probes before the mark (the counters are read as its line arrives), then as
    `Dense` says: a steady rate needs dense probes only around its threshold, and each wake-up is CPU taken from the
    measured client. `ssh/hooks.ticking` calls ride on these wake-ups from the mark until stderr closes.
    """
    started = clock()
    proc = subprocess.Popen(
        list(argv),
        stdin=null_fd() if stdin == subprocess.DEVNULL else stdin,
        stdout=subprocess.PIPE if capture_stdout else null_fd(),
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        for place in hooks.placers:
            place(proc.pid)
        for tell in hooks.starts:
            tell(proc.pid, watch.mark is not None)
        return _collect(proc, tuple(argv), started, timeout, clock, watch)
    except BaseException:
        kill(proc)
        raise


class _Watch:
    """Read a running process's stderr (timestamped lines), a little stdout and its I/O counters until it exits."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        clock: Clock,
        watching: Watching,
    ) -> None:
        assert proc.stderr is not None
        probe, mark, dense = watching.probe, watching.mark, watching.dense
        self.proc, self.clock, self.probe, self.arrived, self.mark = proc, clock, probe, watching.arrived, mark
        self.stall, self.stalled = watching.stall, False
        self.dense, self.base = dense, 0  # probes from the mark on, sparse once enough moved since the `base`
        self.next_probe = math.inf if dense is not None and mark is not None else 0.0  # inf: from the mark on
        self.sparse = False  # a `dense` run's probes have what the steady rate needs: they may ride on a tick
        self.moved: tuple[float, tuple[int, int]] | None = None  # when the counters last changed, and to what
        self.cpu_at_mark: float | None = None
        self.marked: float | None = None
        self.lines, self.stdout = LineSplitter(), bytearray()
        self.progress: list[tuple[float, int, int]] = []
        self.ended: float | None = None  # the exit instant, from the pidfd
        self.told_gone = False  # the `at_exit` calls were made
        self.quiet: int | None = None  # stderr not waited on (`_hush`): the lines past a mark need no wake-up
        self.ticks: dict[hooks.Tick, tuple[float, float]] = {}  # each `ticking` call's next instant, how early
        self.pidfd = os.pidfd_open(proc.pid)
        self.io_fd = open_io(proc.pid) if probe is not None and watching.arrived is None else None
        self.sched_fd = open_io(proc.pid, "schedstat") if mark is not None else None  # read at the mark
        self.probing = probe is not None and (self.io_fd is not None or self.arrived is not None)
        self.poller = poller()
        self.fds = {proc.stderr.fileno(): "err", self.pidfd: "exit"}
        if proc.stdout is not None:
            self.fds[proc.stdout.fileno()] = "out"
        for fd in self.fds:
            self.poller.register(fd, select.EPOLLIN)

    def run(self, deadline: float) -> None:
        """Read until the process has exited and closed its pipes, or kill it at the deadline."""
        try:
            while self.fds:
                now = self.clock()
                if now >= deadline:
                    kill(self.proc)
                    break
                wake = self._due(now) if self.ended is None and "err" in self.fds.values() else math.inf
                if self.stalled:
                    kill(self.proc)
                    break
                for fd, _ in self.poller.poll(max(min(wake, deadline) - now, 0.0)):
                    self._handle(fd, self.fds[fd])
        finally:
            self._gone()  # killed, or interrupted: the process is gone (or going) all the same
            for fd in list(self.fds):
                with contextlib.suppress(OSError):
                    self._drop(fd)
            for held in (self.pidfd, self.io_fd, self.sched_fd):
                if held is not None:
                    os.close(held)

    def _due(self, now: float) -> float:
        """Take the probe and the ticks that are due, those that may ride on this wake-up early too (a tick, and a
        sparse probe, up to half their interval: the loop is awake now); return the instant the next one is. The
        probe that finds the steady part under way is a tick's too: a reading as that part begins. None are taken
        once stderr is closed: the process is exiting, and its exit is read (`at_exit`, the last counters)."""
        early = SPARSE_PROBE / 2 if self.sparse else 0.0
        if self.probing and now >= self.next_probe - early:
            was_sparse = self.sparse
            if self.quiet is not None:  # a pipe holds 64 KiB: a command that says more must not stall the transfer
                self._hear(now)
            self._read_counters()
            self.stalled = self._still()
            self.next_probe = now + self._gap()
            if self.sparse and not was_sparse:
                for steady in hooks.steadies:
                    steady()
                self.ticks = {call: (now, 0.0) for call in self.ticks}
        if self.ticks:
            self._tick(now)
        return min([self.next_probe if self.probing else math.inf, *(due for due, _ in self.ticks.values())])

    def _tick(self, now: float) -> None:
        """Make the `ticking` calls that are due (or within half their interval of it) and keep when each wants the
        next."""
        for call, (due, early) in list(self.ticks.items()):
            if now >= due - early:
                wait = call()
                if wait is None:
                    del self.ticks[call]
                else:
                    self.ticks[call] = (now + wait, wait / 2)

    def _gone(self) -> None:
        """Tell the `at_exit` calls, once, that the process is gone."""
        if not self.told_gone:
            self.told_gone = True
            for ended in hooks.exits:
                ended(self.proc.pid)

    def _gap(self) -> float:
        """Return the seconds to the next probe: `probe`, or SPARSE_PROBE once `dense`'s bytes have moved."""
        assert self.probe is not None
        if self.dense is None or not self.progress:
            return self.probe
        self.sparse = self.progress[-1][self.dense.column] - self.base >= self.dense.nbytes
        return SPARSE_PROBE if self.sparse else self.probe

    def _baseline(self, now: float) -> None:
        """Read the counters as the mark line arrives (stamped with its time: the last reading before the command),
        and probe from here on."""
        counters = read_io(self.io_fd) if self.dense is not None and self.io_fd is not None else None
        if self.dense is None or counters is None:
            return
        self.progress.append((now, *counters))
        self.base = counters[self.dense.column - 1]
        self.next_probe = now + max(self.dense.after, self.probe or 0.0)

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
            self._drop(fd)
            self._gone()
            counters = read_io(self.io_fd) if self.io_fd is not None else None  # an exited process's are readable
            if counters is not None:  # until it is reaped: its totals (a last probe at `ended` times nothing)
                self.progress.append((now, *counters))
            if self.quiet is not None and not self._hear(now):  # still open (a child holds it): wait for its end
                self.poller.register(self.quiet, select.EPOLLIN)
                self.quiet = None
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            self._drop(fd)
        elif what == "err":
            seen = len(self.lines.lines)
            self.lines.feed(now, chunk)
            if self.mark is not None and any(self.mark in text for _, text in self.lines.lines[seen:]):
                self._marked(now)
        elif len(self.stdout) < STDOUT_CAP:
            self.stdout += chunk

    def _drop(self, fd: int) -> None:
        """Stop waiting on a descriptor (a pipe at its end, the pidfd at the exit)."""
        if fd != self.quiet:
            self.poller.unregister(fd)
        del self.fds[fd]

    def _hush(self) -> None:
        """Stop waking for stderr (a `dense` run's, past its mark): it is read at its probes and at the exit."""
        assert self.proc.stderr is not None
        self.quiet = self.proc.stderr.fileno()
        self.poller.unregister(self.quiet)
        os.set_blocking(self.quiet, False)

    def _hear(self, now: float) -> bool:
        """Read what a hushed stderr holds, stamped now; return True at its end (it is dropped then)."""
        assert self.quiet is not None
        if not read_waiting(self.quiet, self.lines, now):
            return False
        self._drop(self.quiet)
        self.quiet = None
        return True

    def _marked(self, now: float) -> None:
        """The login is done: read the process's CPU and counters, make the `at_mark` calls, start the ticks."""
        self.mark, self.cpu_at_mark, self.marked = None, cpu_so_far(self.sched_fd), now
        self._baseline(now)
        for call in hooks.marks:
            call()
        later = self.dense is not None and self.dense.from_steady  # the ticks begin as the steady part does
        self.ticks = {call: (math.inf if later else now, 0.0) for call in hooks.ticks}
        self._tick(now)
        if self.dense is not None:
            self._hush()


def _collect(
    proc: subprocess.Popen[bytes],
    argv: tuple[str, ...],
    started: float,
    timeout: float,
    clock: Clock,
    watching: Watching,
) -> Finished:
    """Read stderr/stdout until the process exits; the exit instant comes from its pidfd."""
    watch = _Watch(proc, clock, watching)
    watch.run(started + timeout)
    cpu_user, cpu_system = reap(proc)
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
        marked=watch.marked,
        stalled=watch.stall if watch.stalled else None,
    )
