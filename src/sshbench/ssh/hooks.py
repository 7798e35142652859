"""What `run_timed` tells others of the processes it runs: that one started (its PID), that its login is done (its
`mark` line), that its steady part is under way, that it is gone, and when a watcher riding on its wake-ups wants to
read something (`ticking`). Each is a list of calls kept for a `with` block; the measuring code registers,
ssh/proc.py calls."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Generic, TypeVar

Hook = TypeVar("Hook")  # one of the calls `run_timed` makes (at a start, a mark, a tick, an exit)
Tick = Callable[[], float | None]  # reads what it watches; returns the seconds until it wants to again (None: never)

placers: list[Callable[[int], None]] = []  # each gets the PID of every process `run_timed` starts, at once
marks: list[Callable[[], None]] = []  # each is called when a `mark` line arrives (once per process)
exits: list[Callable[[int], None]] = []  # each gets the PID of a process `run_timed` runs as its exit is seen
starts: list[Callable[[int, bool], None]] = []  # each gets a started process's PID and whether a mark will come
ticks: list[Tick] = []  # each is called at the mark (or as the steady part begins), then as it asks, while it runs
steadies: list[Callable[[], None]] = []  # each is called when a probe finds a transfer's steady part under way


class _Hooked(Generic[Hook]):
    """Keep `call` among `hooks` for the block (a class, not a generator: a sample enters half a dozen)."""

    __slots__ = ("call", "hooks")

    def __init__(self, hooks: list[Hook], call: Hook) -> None:
        self.hooks, self.call = hooks, call

    def __enter__(self) -> None:
        self.hooks.append(self.call)

    def __exit__(self, *exc: object) -> None:
        self.hooks.remove(self.call)


def spawned(call: Callable[[int, bool], None]) -> contextlib.AbstractContextManager[None]:
    """Tell `call` of every process `run_timed` starts in the block: its PID, and whether `at_mark` calls will say
    when its login is done (a `mark` was given)."""
    return _Hooked(starts, call)


def at_exit(call: Callable[[int], None]) -> contextlib.AbstractContextManager[None]:
    """Call `call` with the PID of every process `run_timed` runs in the block once it is gone: as its exit is seen
    (before it is reaped), or when it was killed (a deadline, a stall, an interruption)."""
    return _Hooked(exits, call)


def at_mark(call: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
    """Call `call` in the block whenever a process `run_timed` runs prints its `mark` line (e.g. to read a server's
    CPU counter at the moment a login is done and its command sent)."""
    return _Hooked(marks, call)


def ticking(call: Tick) -> contextlib.AbstractContextManager[None]:
    """Call `call` from `run_timed`'s own wake-ups in the block: at a process's `mark` (after the `at_mark` calls;
    for a transfer whose `Dense.from_steady` says so, at the probe that finds its steady part under way instead),
    then again after the seconds each call returns, until it returns None or the process exits. A reading taken
    this way costs no thread and, when it falls near a probe or a line of the process, no wake-up of its own."""
    return _Hooked(ticks, call)


def at_steady(call: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
    """Call `call` in the block when a probe of a transfer `run_timed` runs finds its steady part under way (its
    `Dense` bytes moved), before the ticks made there: what is read from then on covers the timed part."""
    return _Hooked(steadies, call)


def placing(place: Callable[[int], None]) -> contextlib.AbstractContextManager[None]:
    """Hand every process `run_timed` starts in the block to `place` right after it starts (e.g. into a CPU-quota
    cgroup: its exec is the only work done outside it)."""
    return _Hooked(placers, place)
