"""Sessions held open for `sshbench load --job session`: the Go driver opens sessions running `cat` (its stdin never
written) until N are held, a few at a time, and keeps them while the server is read at rest: its memory per process
role (measure/memory.py's snapshot) and its CPU over a quiet window. Each opened session ends as a `Finished` (the
time to open it, the driver's CPU for it, why it failed); the step's reading at rest as a `Rest`."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import psutil

from sshbench.measure.costs import ServerView
from sshbench.measure.interop import PREFIX
from sshbench.measure.load import Finished

HOLD_LINE, HELD_LINE = f"{PREFIX} hold ", f"{PREFIX} held "
AT_ONCE = 8  # sessions opened at a time: under OpenSSH's MaxStartups and Dropbear's unauthenticated limits
REST = 2.0  # seconds the server's CPU is read with every session held and nothing sent
SETTLE = 0.5  # seconds after the last session opened before the server is read
CLOSE_WAIT = 30.0  # seconds the driver may take to close every session


@dataclass(frozen=True)
class Rest:
    """The server with N sessions held: its CPU over a quiet window, and how that CPU was read."""

    held: int
    seconds: float
    cpu: float | None  # CPU seconds of the server over `seconds` (None: not readable)
    by: str  # cgroup | processes (the live processes' own CPU, from /proc)


class Holder:
    """The Go driver in hold mode: `grow(n)` opens sessions until n are held; `close()` ends them all."""

    def __init__(self, argv: Sequence[str]) -> None:
        """Start the driver (it opens nothing until asked)."""
        self.proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self.said: list[str] = []
        self.held, self.cpu = 0, 0.0
        self.growing = False  # sessions are being opened (stopped at once by close)

    def _line(self) -> str | None:
        """Return the driver's next line (None at its end), keeping its last words."""
        assert self.proc.stderr is not None
        raw = self.proc.stderr.readline()
        if not raw:
            return None
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith((HOLD_LINE, HELD_LINE)):
            self.said = [*self.said[-3:], line.removeprefix(f"{PREFIX} ")]
        return line

    def grow(self, n: int, done: Callable[[Finished], None]) -> int:
        """Open sessions until n are held, handing each attempt to `done` as it ends; return how many are held."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{n}\n".encode())
            self.proc.stdin.flush()
        except OSError:
            raise RuntimeError(self._why_gone()) from None
        self.growing = True
        while (line := self._line()) is not None:
            if line.startswith(HELD_LINE):
                self.held, self.growing = int(line.removeprefix(HELD_LINE).split()[0]), False
                return self.held
            if line.startswith(HOLD_LINE):
                done(self._parsed(line))
        raise RuntimeError(self._why_gone())

    def _parsed(self, line: str) -> Finished:
        """Return a `hold I STARTED ENDED CPU ok|failed TEXT` line as an opened session (latency: its opening)."""
        words = line.removeprefix(HOLD_LINE).split(" ", 5)
        i, started, ended, cpu = int(words[0]), float(words[1]), float(words[2]), float(words[3])
        error = None if words[4] == "ok" else (words[5] if len(words) > 5 else "the driver gave no reason")
        spent, self.cpu = max(cpu - self.cpu, 0.0), max(cpu, self.cpu)
        return Finished(i, started, started, ended, spent, error)

    def _why_gone(self) -> str:
        """Return the driver's exit, in words."""
        code = self.proc.wait()
        return f"the Go driver holding the sessions exited with status {code}: {'; '.join(self.said) or 'no words'}"

    def close(self) -> None:
        """End every session (their stdin closed, then their connections) and the driver (by its PID, if it does not
        end within CLOSE_WAIT); a driver still opening sessions (interrupted) is stopped at once, which closes them."""
        if self.growing:
            self.proc.terminate()
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@contextlib.contextmanager
def holding(argv: Sequence[str]) -> Iterator[Holder]:
    """Yield a started driver in hold mode; its sessions are closed on the way out, whatever happened."""
    holder = Holder(argv)
    try:
        yield holder
    finally:
        holder.close()


def _process_cpu(server: ServerView) -> dict[int, float]:
    """Return the CPU seconds of each of the server's live processes."""
    out = {}
    for proc in server.processes():
        with contextlib.suppress(psutil.Error):
            t = proc.cpu_times()
            out[proc.pid] = float(t.user + t.system)
    return out


def at_rest(server: ServerView, held: int, seconds: float = REST) -> Rest:
    """Return the server's CPU over `seconds` with `held` sessions open and nothing sent: its cgroup's where it has
    one, else its live processes' own (a process that began or ended in the window is left out)."""
    time.sleep(SETTLE)
    before = server.cpu_seconds()
    procs = _process_cpu(server) if before is None else {}
    start = time.monotonic()
    time.sleep(seconds)
    if before is not None:
        after = server.cpu_seconds()
        return Rest(held, time.monotonic() - start, None if after is None else after - before, "cgroup")
    now = _process_cpu(server)
    wall = time.monotonic() - start
    return Rest(held, wall, sum(now[p] - procs[p] for p in now.keys() & procs.keys()) if procs else None, "processes")
