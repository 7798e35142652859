"""Benchmark: sshbench's steady rate against the kernel's TCP counters for the same transfers (issue 40).

Run:  sudo .venv/bin/python benchmarks/bench_kernel_rate.py [--rounds 9] [--size auto|256M]

Each sample is taken as `sshbench throughput` takes it (the kernel's evidence and the CPU and memory meters on) on
the embedded OpenSSH, aes128-gcm, both directions. A checker process (this script with `--checker`), told the ssh
client's PID as run_timed starts it, borrows the client's TCP socket itself (pidfd_getfd: root, since the client
is not its child) and reads its TCP_INFO every 5 ms until the client exits, then once more: `bytes_received` for a
download, `bytes_acked` (what the server's kernel has taken) for an upload. The kernel's steady rate is timed the
way sshbench times its own, from the kernel's counter alone: from the moment it passed the untimed start of the
payload (the first 20 %, at least 8 MiB, interpolated between readings) to the payload's end: where the bytes
stopped flowing (the last reading taken while they did, plus what was left at their rate), not the counter's final
value, which an upload reaches only with the client's close, after the server's `date` and exit (that comparison
is printed too, `to the final value`). Prints, per direction, the medians of both and of their per-sample ratio,
with its range. SSH's own framing (about 40 bytes a 32 KiB packet) makes the kernel count about 0.1 % more bytes
than the payload.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sshbench.cli.options import parse_size
from sshbench.joboptions import JobOptions
from sshbench.measure import grab
from sshbench.measure.costs import metered
from sshbench.measure.samplers import ThroughputSampler
from sshbench.measure.steady import MB, steady_threshold
from sshbench.measure.witness import witnessed
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import ROWS, RunKind
from sshbench.ssh.proc import ssh_client
from sshbench.targets.servers import registry

try:  # the hooks moved to their own module with issue 40: PYTHONPATH=OTHER/src runs this on the package before it
    from sshbench.ssh.hooks import spawned
except ImportError:
    from sshbench.ssh.proc import spawned  # type: ignore[attr-defined, no-redef]

POLL = 0.005  # seconds between the checker's readings
TAIL = 2**16  # bytes short of the counter's final value a reading is taken while the payload still flows
FLOW_WINDOW = 0.03  # seconds of readings before the last such one whose rate extrapolates to the payload's end


def checker(port: int) -> None:
    """Read PIDs from stdin; for each, borrow its socket to `port`, read its counters until it exits, print them."""
    for line in sys.stdin:
        pid = int(line)
        series: list[tuple[float, int, int]] = []
        pidfd = os.pidfd_open(pid)
        sock = _borrow(pid, port, pidfd)
        try:
            while sock is not None:
                series.append(_reading(sock))
                if select.select([pidfd], [], [], POLL)[0]:
                    series.append(_reading(sock))  # the client is gone: its socket's last word
                    break
        finally:
            os.close(pidfd)
            if sock is not None:
                sock.close()
        print(json.dumps(series), flush=True)


def _borrow(pid: int, port: int, pidfd: int) -> socket.SocketType | None:
    """Return a copy of the process's socket to `port` once it has one (None if it exits first)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = grab.borrow(pid, port)
        if found is not None:
            return found.sock
        if select.select([pidfd], [], [], 0.002)[0]:
            return None
    return None


def _reading(sock: socket.SocketType) -> tuple[float, int, int]:
    """Return (now, bytes_received, bytes_acked) of the socket."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return (
        time.perf_counter(),
        int.from_bytes(info[128:136], "little"),
        int.from_bytes(info[120:128], "little"),
    )


def kernel_rate(series: list[list[float]], column: int, size: int, flow: bool = True) -> float | None:
    """Return the kernel's steady rate (MB/s): the counter's bytes after the payload's untimed start over the time
    from its passing that start to the payload's end (None with too few readings). `flow`: the end is where the
    bytes stopped flowing, extrapolated from the last reading taken while they flowed at the rate of the readings
    before it (what comes after the payload, a few hundred bytes of channel messages, may come much later: an
    upload's last is the client's close, sent after the server's `date`); else it is the first reading of the
    counter's final value (late by up to one poll)."""
    if len(series) < 3:
        return None
    base, last = series[0][column], series[-1][column]
    threshold = steady_threshold(size)
    crossed = end = None
    for (t0, *a), (t1, *b) in itertools.pairwise(series):
        b0, b1 = a[column - 1] - base, b[column - 1] - base
        if crossed is None and b1 >= threshold > b0:
            crossed = t0 + (threshold - b0) / (b1 - b0) * (t1 - t0)
        if end is None and b[column - 1] == last:
            end = t1
    if flow and crossed is not None:
        end = flow_end(series, column, last, crossed)
    if crossed is None or end is None or end <= crossed:
        return None
    return (last - base - threshold) / (end - crossed) / MB


def flow_end(series: list[list[float]], column: int, last: float, crossed: float) -> float | None:
    """Return when the payload's last byte was counted: the last reading at least TAIL short of the final value,
    plus what was left at the rate over the FLOW_WINDOW before it (after the untimed start)."""
    flowing = [r for r in series if r[0] >= crossed and r[column] < last - TAIL]
    if len(flowing) < 2:
        return None
    t1, v1 = flowing[-1][0], flowing[-1][column]
    t0, v0 = next((r[0], r[column]) for r in flowing if r[0] >= t1 - FLOW_WINDOW)
    if t1 <= t0 or v1 <= v0:
        t0, v0 = flowing[-2][0], flowing[-2][column]
    return t1 + (last - v1) * (t1 - t0) / (v1 - v0) if v1 > v0 else None


def main() -> None:
    """Take the samples with the checker beside them; print the comparison as Markdown."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--size", default="auto")
    p.add_argument("--checker", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.checker:
        return checker(a.checker)
    server = registry.make_server("local:openssh")
    found: dict[str, list[tuple[float, float, float]]] = {"down": [], "up": []}
    with server as target, tempfile.TemporaryDirectory() as tmp:
        kind = RunKind.THROUGHPUT
        opts = JobOptions(command=kind, size=parse_size(a.size), sample_seconds=ROWS[kind].sample_seconds)
        plain = ThroughputSampler(ssh_client(), target, opts, Path(tmp))
        take = witnessed(metered(plain, server, True), target.port, server.pid, True)
        argv = [sys.executable, __file__, "--checker", str(target.port)]
        check = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert check.stdin is not None and check.stdout is not None
        scs = [Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=d) for d in Direction]

        told: list[int] = []

        def tell(pid: int, marked: bool) -> None:
            """Hand the checker the client's PID."""
            assert check.stdin is not None
            told.append(pid)
            check.stdin.write(f"{pid}\n")
            check.stdin.flush()

        def answers() -> list[Any]:
            """Return the checker's series for every client started since the last call (the last is the sample's)."""
            assert check.stdout is not None
            out = [json.loads(check.stdout.readline()) for _ in told]
            told.clear()
            return out

        with spawned(tell):
            for sc in scs:
                take(sc, 0, True)  # the warm-ups: --size auto's calibration may take several
                answers()
            for _ in range(a.rounds):
                for sc in scs:
                    s = take(sc, 1, False)
                    series = answers()[-1]
                    assert s.ok and s.value and s.nbytes, s.error
                    column = 1 if sc.direction is Direction.DOWN else 2
                    k = kernel_rate(series, column, s.nbytes)
                    final = kernel_rate(series, column, s.nbytes, flow=False)
                    if k is not None and final is not None:
                        found["down" if sc.direction is Direction.DOWN else "up"].append((s.value, k, final))
        check.stdin.close()
        check.wait(timeout=30)
    report(found, a, plain.sizes)


def report(found: dict[str, list[tuple[float, float, float]]], a: Any, sizes: dict[str, int]) -> None:
    """Print the medians and the ratios: against the payload's end where it stopped flowing, and against the
    counter's final value."""
    shown = ", ".join(f"{v // 2**20} MiB" for v in sizes.values()) or a.size
    print(f"{a.rounds} rounds, aes128-gcm, embedded OpenSSH, --size {a.size} ({shown})\n")
    print(
        "| direction | samples | sshbench MB/s | kernel MB/s | sshbench / kernel, median (range) | to the final value |"
    )
    print("|---|---:|---:|---:|---|---|")
    for direction, found_here in found.items():
        if not found_here:
            continue
        ratios = [ours / kernel for ours, kernel, _ in found_here]
        finals = [ours / final for ours, _, final in found_here]
        print(
            f"| {direction} | {len(found_here)} | {statistics.median(o for o, _, _ in found_here):.0f} | "
            f"{statistics.median(k for _, k, _ in found_here):.0f} | {_ratio(ratios)} | {_ratio(finals)} |"
        )


def _ratio(ratios: list[float]) -> str:
    """Return a ratio's median and range as a difference."""
    return f"{statistics.median(ratios) - 1:+.2%} ({min(ratios) - 1:+.2%} .. {max(ratios) - 1:+.2%})"


if __name__ == "__main__":
    main()
