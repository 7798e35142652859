"""What `ssh/proc.run_timed` is told to watch while a process runs, and what it returns when the process ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Clock = Callable[[], float]
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
    marked: float | None = None  # when its `mark` line arrived

    @property
    def wall(self) -> float:
        """Return seconds from spawn to exit."""
        return self.ended - self.started

    @property
    def texts(self) -> list[str]:
        """Return the stderr lines without their timestamps."""
        return [text for _, text in self.lines]


@dataclass(frozen=True)
class Dense:
    """Where a transfer's I/O counters are probed densely: from `after` seconds past the mark (the baseline is read
    at the mark itself), every `probe` seconds until `column` (1 rchar, 2 wchar) has moved `nbytes` since, then
    every SPARSE_PROBE seconds. `from_steady`: the `ticking` calls begin at that probe, not at the mark (a transfer
    long enough that it comes well before the exit)."""

    column: int
    nbytes: int
    after: float = 0.0
    from_steady: bool = False


@dataclass(frozen=True)
class Watching:
    """What `run_timed` reads while a process runs (see its docstring); all off: only its exit."""

    probe: float | None = None
    arrived: Callable[[], int] | None = None
    mark: str | None = None
    stall: float | None = None
    dense: Dense | None = None


QUIET = Watching()
