"""Open-loop logins for `sshbench load`: arrivals on a fixed schedule (constant or Poisson), each its own connection
started when it *should* start, whatever the ones before it are doing, and its latency counted from that intended
start (wrk2's correction for coordinated omission: a server that stalls shows every login queued behind the stall,
not one slow login).

The OpenSSH generator starts one `ssh ... true` per arrival, as cron jobs and CI connect; a launcher thread keeps
the schedule and a reaper thread waits for the processes (their exit and CPU from wait4), so neither waits on the
other. A login's generator CPU is its ssh's and sshbench's own to start and reap it (the threads' CPU clocks).
Each login ends as a `Finished`: intended start, actual start, end, the generator's CPU, and why it failed."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from sshbench.loadwords import SERVER_SAID
from sshbench.measure.interop import LOGIN_LIMIT, PREFIX  # a login's limit, the drivers' lines
from sshbench.ssh.text import said_before_banner, ssh_failure_reason


class Generator(Protocol):
    """Starts a step's logins on their schedule and hands each over as it ends; `stop` ends the step early."""

    stop: threading.Event

    def run(self, offsets: Sequence[float]) -> None:
        """Run the step's arrivals; return when every login has ended."""


@dataclass(frozen=True)
class Finished:
    """One login as it ended: offsets from the step's start (intended, started, ended), the client's CPU, and the
    reason it failed (None: it logged in, ran `true` and exited 0)."""

    index: int
    intended: float
    started: float
    ended: float
    cpu: float | None
    error: str | None = None

    @property
    def latency(self) -> float:
        """Return seconds from the intended start to the end (the queueing delay included)."""
        return self.ended - self.intended


@dataclass
class _Running:
    """A login in flight."""

    index: int
    intended: float
    started: float
    proc: subprocess.Popen[bytes]
    launch_cpu: float = 0.0  # sshbench's own CPU to start it (the launcher thread's)
    err: bytes = b""


def exec_command(down: int) -> str:
    """Return the remote command of an exec job: read what is sent, then send `down` zero bytes back."""
    return f"cat >/dev/null && head -c {int(down)} /dev/zero"


@dataclass(frozen=True)
class ExecJob:
    """An exec job for one ssh per login: stdin from `send` (the bytes up), stdout into `scratch` (one file per
    login, its size checked against `down`, then removed)."""

    send: Path
    down: int
    scratch: Path


class OpenLoop:
    """Run one step's arrivals through `argv(i)` (the command line of login i) and hand each login to `done` as it
    ends, from the reaper thread."""

    def __init__(
        self, argv: Callable[[int], Sequence[str]], done: Callable[[Finished], None], job: ExecJob | None = None
    ) -> None:
        self.argv, self.done, self.job = argv, done, job
        self.running: dict[int, _Running] = {}  # stderr fd -> login
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.launched = threading.Event()  # every arrival of the step was started (or the step was stopped)

    def run(self, offsets: Sequence[float], start: float | None = None) -> None:
        """Start every arrival on time and return once each has ended (or been stopped at LOGIN_LIMIT)."""
        t0 = time.monotonic() if start is None else start
        self.launched.clear()
        reaper = threading.Thread(target=self._reap, args=(t0,), daemon=True, name="load reaper")
        reaper.start()
        try:
            for i, offset in enumerate(offsets):
                if self.stop.wait(max(0.0, t0 + offset - time.monotonic())):
                    break
                self._launch(i, offset, t0)
        finally:
            self.launched.set()
            reaper.join()

    def _launch(self, i: int, offset: float, t0: float) -> None:
        """Start login i (a failure to start is a failed login, said as such)."""
        started, cpu = time.monotonic() - t0, time.thread_time()
        try:
            with contextlib.ExitStack() as files:  # the child keeps its own copies
                up, down = self._streams(i, files)
                proc = subprocess.Popen(list(self.argv(i)), stdin=up, stdout=down, stderr=subprocess.PIPE)
        except OSError as exc:
            self.done(Finished(i, offset, started, started, None, f"the generator could not start ssh: {exc}"))
            return
        assert proc.stderr is not None
        with self.lock:
            self.running[proc.stderr.fileno()] = _Running(i, offset, started, proc, time.thread_time() - cpu)

    def _reap(self, t0: float) -> None:
        """Wait for logins to end (their stderr closes at exit), reap each with its CPU and hand it over."""
        with selectors.DefaultSelector() as sel:
            watched: set[int] = set()
            while True:
                with self.lock:
                    for fd, r in self.running.items():
                        if fd not in watched:
                            sel.register(fd, selectors.EVENT_READ, r)
                            watched.add(fd)
                    idle = not self.running
                if idle and self.launched.is_set():
                    return
                for key, _ in sel.select(0.01):
                    r = key.data
                    chunk = _read(key.fd)
                    if chunk:
                        r.err += chunk
                        continue
                    sel.unregister(key.fd)
                    watched.discard(key.fd)
                    self._end(key.fd, r, time.monotonic() - t0)
                self._stop_stuck(sel, watched, t0)

    def _streams(self, i: int, files: contextlib.ExitStack) -> tuple[IO[bytes] | int, IO[bytes] | int]:
        """Return login i's stdin and stdout: an exec job's bytes up and a file for its bytes down, else nothing."""
        if self.job is None:
            return subprocess.DEVNULL, subprocess.DEVNULL
        return files.enter_context(open(self.job.send, "rb")), files.enter_context(open(self._out(i), "wb"))

    def _out(self, i: int) -> Path:
        """Return where login i's download goes."""
        assert self.job is not None
        return self.job.scratch / f"login-{i}.out"

    def _stop_stuck(self, sel: selectors.BaseSelector, watched: set[int], t0: float) -> None:
        """Kill logins past their limit (processes this object started, by their PID) and fail them."""
        now = time.monotonic() - t0
        with self.lock:
            stuck = [(fd, r) for fd, r in self.running.items() if now - r.intended > LOGIN_LIMIT]
        for fd, r in stuck:
            r.proc.kill()
            if fd in watched:
                sel.unregister(fd)
                watched.discard(fd)
            self._end(fd, r, now, f"no answer within {LOGIN_LIMIT:g} s of its intended start: stopped by sshbench")

    def _end(self, fd: int, r: _Running, ended: float, why: str | None = None) -> None:
        """Reap a login and hand it over; its CPU: ssh's (wait4) and sshbench's own to start and reap it."""
        reaping = time.thread_time()
        with self.lock:
            self.running.pop(fd, None)
        _, status, usage = os.wait4(r.proc.pid, 0)
        r.proc.returncode = code = os.waitstatus_to_exitcode(status)
        if r.proc.stderr is not None:
            r.proc.stderr.close()
        if why is None and code != 0:
            lines = r.err.decode("utf-8", "replace").splitlines()
            said = said_before_banner(lines)
            why = f"{ssh_failure_reason(lines)} (exit status {code})" + (f"{SERVER_SAID}{said}" if said else "")
        if self.job is not None:
            out = self._out(r.index)
            got = out.stat().st_size if out.exists() else 0
            out.unlink(missing_ok=True)
            if why is None and got != self.job.down:
                why = f"short download: {got} of {self.job.down} bytes"
        cpu = usage.ru_utime + usage.ru_stime + r.launch_cpu + time.thread_time() - reaping
        self.done(Finished(r.index, r.intended, r.started, ended, cpu, why))


def _read(fd: int) -> bytes:
    """Read what a login's stderr has (b"" at its end)."""
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


class DriverLoop:
    """The Go generator: one x/crypto/ssh driver process in load mode starts every login of a step on its own
    schedule (a goroutine each, from `--sources` addresses) and says how each ended; its CPU per login is the
    difference of its own CPU between consecutive answers."""

    def __init__(self, argv: Sequence[str], done: Callable[[Finished], None]) -> None:
        self.argv, self.done = list(argv), done
        self.stop = threading.Event()

    def run(self, offsets: Sequence[float]) -> None:
        """Hand the driver the step's schedule, then each login as it says it ended; return when it exits."""
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stdin is not None and proc.stderr is not None
        said: list[str] = []
        try:
            proc.stdin.write(("".join(f"{t:.6f}\n" for t in offsets) + "go\n").encode())
            proc.stdin.close()
            before = 0.0
            for raw in proc.stderr:
                line = raw.decode("utf-8", "replace").strip()
                if self.stop.is_set():
                    break
                if not line.startswith(LOAD_LINE):
                    said = [*said[-3:], line.removeprefix(f"{PREFIX} ")]
                    continue
                f, before = _parsed(line, offsets, before)
                self.done(f)
        finally:
            if proc.poll() is None:
                proc.kill()  # the generator this object started
            code = proc.wait()
            proc.stderr.close()
        if code != 0 and not self.stop.is_set():
            raise RuntimeError(f"the Go generator exited with status {code}: {'; '.join(said) or 'no words'}")


LOAD_LINE = f"{PREFIX} load "


def _parsed(line: str, offsets: Sequence[float], before: float) -> tuple[Finished, float]:
    """Return a `load I STARTED ENDED CPU ok|failed TEXT` line as a login, and the driver's CPU so far."""
    words = line.removeprefix(LOAD_LINE).split(" ", 5)
    i, started, ended, cpu = int(words[0]), float(words[1]), float(words[2]), float(words[3])
    error = None if words[4] == "ok" else (words[5] if len(words) > 5 else "the generator gave no reason")
    return Finished(i, offsets[i], started, ended, max(cpu - before, 0.0), error), max(cpu, before)
