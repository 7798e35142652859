"""Benchmark: what the kernel's exit record (taskstats) holds of a process's CPU, against what its parent reaps
(wait4), for short and long processes (issue 38: why `load`'s CPU by process role is a lower bound). Root.

Run:  .venv/bin/python benchmarks/bench_exit_records.py [--runs 20]

For each command, RUNS times: start it, reap it with wait4 (its user + system CPU, every stretch included) and find
its record among the exits the watch read; print the medians per process. The record holds the CPU as last folded
in before the process began to exit: a short process loses most of its life, a long one a little.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from sshbench.measure.exits import ExitWatch

PYTHON = sys.executable
COMMANDS = {
    "/bin/true": ["/bin/true"],
    "python -c 0": [PYTHON, "-c", "0"],
    "python, 500 sockets": [PYTHON, "-c", "import socket; s = [socket.socket() for _ in range(500)]"],
    "python, 400 MiB touched": [PYTHON, "-c", "b = bytearray(400 << 20); b[::4096] = b'x' * len(b[::4096])"],
}


def main() -> None:
    """Run each command, reap it and read its record; print the medians."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=20)
    a = p.parse_args()
    watch = ExitWatch.open()
    if isinstance(watch, str):
        raise SystemExit(watch)
    print("| process | reaped (wait4), ms | its exit record, ms | record / reaped |\n|---|---:|---:|---:|")
    for name, argv in COMMANDS.items():
        reaped, recorded = [], []
        for _ in range(a.runs):
            watch.exits()
            child = subprocess.Popen(argv)
            usage = os.wait4(child.pid, 0)[2]
            time.sleep(0.05)  # the reader thread has the record
            mine = [e.cpu for e in watch.exits() if e.pid == child.pid]
            if mine:
                reaped.append(usage.ru_utime + usage.ru_stime)
                recorded.append(mine[0])
        r, c = statistics.median(reaped), statistics.median(recorded)
        print(f"| {name} | {r * 1000:.2f} | {c * 1000:.2f} | {c / r:.2f} |" if r else f"| {name} | 0 | - | - |")
    watch.close()


if __name__ == "__main__":
    main()
