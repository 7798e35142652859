"""What binding a child to sshbench's life costs per spawn: why ssh clients are contained by a cgroup instead.

    .venv/bin/python benchmarks/bench_spawn_binding.py [--spawns 200]

Spawns /bin/true from a Python process grown to sshbench's size (80 MiB), three ways, interleaved in rounds:
plain (what sshbench does: the child is born in sshbench's cgroup, nothing per spawn), with a `preexec_fn`
calling prctl(PR_SET_PDEATHSIG) (forces fork instead of vfork), and through `setpriv --pdeathsig KILL` (one
more exec; what embedded servers use, once per server). Prints the median milliseconds per spawn of each.
"""

from __future__ import annotations

import argparse
import ctypes
import signal
import statistics
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


def _bind() -> None:
    """Ask the kernel to SIGKILL this child when its parent dies."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn_ms(how: str) -> float:
    """Spawn /bin/true once the given way; return milliseconds from spawn to exit."""
    started = time.perf_counter()
    if how == "plain":
        subprocess.run(["/bin/true"], check=True)
    elif how == "preexec_fn prctl":
        subprocess.run(["/bin/true"], check=True, preexec_fn=_bind)  # what is being measured
    else:
        subprocess.run(["setpriv", "--pdeathsig", "KILL", "--", "/bin/true"], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spawns", type=int, default=200, help="spawns of each kind")
    args = parser.parse_args()
    ballast = bytearray(80 << 20)  # a process of sshbench's size: fork copies its page tables
    ballast[::4096] = b"\1" * len(ballast[::4096])
    kinds = ("plain", "preexec_fn prctl", "setpriv --pdeathsig")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(args.spawns):
        for kind in kinds:
            times[kind].append(spawn_ms(kind))
    plain = statistics.median(times["plain"])
    print("| spawn | median ms | extra vs plain |")
    print("|---|---:|---:|")
    for kind in kinds:
        median = statistics.median(times[kind])
        print(f"| {kind} | {median:.2f} | {median - plain:+.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
