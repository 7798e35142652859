"""A transfer's steady rate: the payload after its start (the first STEADY_FROM of it, at least STEADY_BYTES),
timed from the ssh client's I/O counters, or where an upload is received (the server's own `date` around `wc -c`)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

MB = 1_000_000


STEADY_FROM = 0.2  # the first 20 % of the payload is not timed ...


STEADY_BYTES = 8 * 2**20  # ... nor the first 8 MiB (window ramp; an uploading client reads ahead of the server)


def steady_threshold(size: int) -> int:
    """Return how many bytes of a payload are left untimed (see STEADY_*)."""
    return int(max(STEADY_FROM * size, min(STEADY_BYTES, size / 2)))


def upload_command(size: int, server_timed: bool) -> str:
    """Return the fixed remote command that counts an upload (timing its steady part itself when on this machine)."""
    if not server_timed:
        return "wc -c"
    return f"head -c {steady_threshold(int(size))} >/dev/null && date +%s.%N && wc -c && date +%s.%N"


def upload_count(stdout: bytes, size: int) -> int | None:
    """Return the bytes the server counted (None when its output is not a count)."""
    words = stdout.decode(errors="replace").split()
    if len(words) == 1 and words[0].isdigit():
        return int(words[0])
    if len(words) == 3 and words[1].isdigit():
        return steady_threshold(size) + int(words[1])
    return None


def server_timed_rate(stdout: bytes, size: int) -> float | None:
    """Return MB/s of the steady part as the server timed it (None when it did not)."""
    words = stdout.decode(errors="replace").split()
    if len(words) != 3:
        return None
    try:
        seconds = float(words[2]) - float(words[0])
    except ValueError:
        return None
    return (size - steady_threshold(size)) / seconds / MB if seconds > 0 else None


def steady_rate(
    progress: Sequence[tuple[float, int, int]], column: int, size: int, command_at: float, end: float
) -> float | None:
    """Return MB/s over the payload after its start (see STEADY_*), from I/O counter probes (None if unknown)."""
    return rate_after(steady_point(progress, column, size, command_at, end), size, end)


def rate_after(start: tuple[float, float] | None, size: int, end: float) -> float | None:
    """Return MB/s from a `steady_point` to the payload's end (None when unknown or not after it)."""
    if start is None or end - start[0] <= 0:
        return None
    return (size - start[1]) / (end - start[0]) / MB


def crossing(start: tuple[float, float] | None, size: int, end: float) -> float | None:
    """Return the instant the payload's untimed start had passed: the `steady_point`'s, or where the timed part
    begins at a probe past it, that probe's time less its bytes past it at the rate after it."""
    if start is None:
        return None
    at, done = start
    past = done - steady_threshold(size)
    return at - past * (end - at) / (size - done) if past > 0 and size > done else at


def steady_point(
    progress: Sequence[tuple[float, int, int]], column: int, size: int, command_at: float, end: float
) -> tuple[float, float] | None:
    """Return where the timed part of the payload begins: (instant, payload bytes by then), from I/O counter probes
    (None if unknown).

    The counter's value at the last probe before the command was sent is its baseline (handshake, config files,
    log lines); the payload is assumed complete at process exit. Between two probes the time the first STEADY_FROM
    of the payload had passed is interpolated linearly; where the first probe after the command is already past
    it, the timed part begins at that probe, with the bytes it read (interpolating from the command would stretch
    the start of the stream over the time before it)."""
    before = [p for p in progress if p[0] <= command_at]
    after = [p for p in progress if command_at < p[0] < end]
    if not after:
        return None
    base = (before[-1] if before else after[0])[column]
    points = [(command_at, 0.0)] + [(p[0], float(p[column] - base)) for p in after] + [(end, float(size))]
    threshold = steady_threshold(size)
    if before and len(points) > 2 and points[1][1] >= threshold and points[1][1] < size:
        return points[1]
    for (t0, b0), (t1, b1) in itertools.pairwise(points):
        if b1 >= threshold > b0 or (b1 >= threshold and b0 >= threshold):
            return (t0, b0) if b0 >= threshold else (t0 + (threshold - b0) / (b1 - b0) * (t1 - t0), threshold)
    return None
