"""Benchmark: the start-up cost of a transfer by direction, and sample noise with and without CPU pinning.

Run:  .venv/bin/python benchmarks/bench_ramp_pinning.py [--reps 7]

1. Start-up cost: bare `ssh` transfers of 16, 64 and 256 MiB (aes128-gcm) timed from `Sending command:`
   to exit; the intercept of time against size is the fixed cost per transfer (window ramp), and the
   steady rate (measure.steady_rate, what sshbench reports) is shown beside the naive rate.
2. Pinning: the same 256 MiB transfers with client and server free on all CPUs vs pinned apart
   (targets/limits/pinning.py); the coefficient of variation (stdev / median) of each, interleaved.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from sshbench.measure.samplers import throughput_sample
from sshbench.measure.steady import MB
from sshbench.model import Direction, Kind, Scenario
from sshbench.payloads import Payload
from sshbench.ssh.proc import run_timed
from sshbench.ssh.text import first_time
from sshbench.targets.servers.registry import make_server

CIPHER = "aes128-gcm@openssh.com"
SIZES = (16, 64, 256)


def naive_seconds(ssh_argv: list[str], source: Path | None) -> float:
    """Time one transfer from `Sending command:` to exit (the definition before steady rates)."""
    if source is None:
        done = run_timed(ssh_argv)
    else:
        with open(source, "rb") as f:
            done = run_timed(ssh_argv, stdin=f, capture_stdout=True)
    started = first_time(done.lines, "Sending command:")
    assert done.returncode == 0 and started is not None, done.texts[-3:]
    return done.ended - started


def main() -> None:
    """Print both tables as Markdown."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    server = make_server("local:openssh")
    with tempfile.TemporaryDirectory(prefix="sshbench-bench-") as tmp, server as target:
        payload = Payload("zero", Path(tmp))
        opts = ["-o", f"Ciphers={CIPHER}", "-o", "KexAlgorithms=curve25519-sha256"]
        print("| direction | size MiB | naive ms (command -> exit) | steady MB/s (sshbench) |")
        print("|---|---|---|---|")
        fits = {}
        for d in Direction:
            times = []
            for mib in SIZES:
                size = mib * 2**20
                cmd = f"head -c {size} /dev/zero" if d is Direction.DOWN else "wc -c"
                src = None if d is Direction.DOWN else payload.upload_source(size)
                naive = statistics.median(naive_seconds(target.argv("ssh", opts, cmd), src) for _ in range(args.reps))
                sc = Scenario(Kind.THROUGHPUT, kex="curve25519-sha256", cipher=CIPHER, direction=d)
                steady = statistics.median(
                    throughput_sample("ssh", target, sc, size, payload, i, False).value or 0 for i in range(args.reps)
                )
                times.append((size, naive))
                print(f"| {d.value} | {mib} | {naive * 1000:.1f} | {steady:.0f} |")
            (s1, t1), (s2, t2) = times[1], times[2]
            slope = (t2 - t1) / (s2 - s1)
            fits[d.value] = (t1 - slope * s1, 1 / slope / MB)
        for d, (intercept, rate) in fits.items():
            print(f"\n{d}: fixed start-up cost {intercept * 1000:.0f} ms, marginal rate {rate:.0f} MB/s (64-256 MiB)")
        print("\n| mode | direction | median MB/s | CV % |")
        print("|---|---|---|---|")
        results: dict[tuple[str, str], list[float]] = {}
        cpus = sorted(os.sched_getaffinity(0))
        for _ in range(2):
            for mode in ("free", "pinned"):
                pin = {cpus[1]} if mode == "pinned" else set(cpus)
                for p in server.processes():
                    os.sched_setaffinity(p.pid, pin)
                os.sched_setaffinity(0, {cpus[0]} if mode == "pinned" else set(cpus))
                for d in Direction:
                    sc = Scenario(Kind.THROUGHPUT, kex="curve25519-sha256", cipher=CIPHER, direction=d)
                    for i in range(args.reps):
                        v = throughput_sample("ssh", target, sc, 256 * 2**20, payload, i, False).value
                        results.setdefault((mode, d.value), []).append(v or 0)
        for (mode, d), values in results.items():
            m = statistics.median(values)
            print(f"| {mode} | {d} | {m:.0f} | {100 * statistics.stdev(values) / m:.1f} |")


if __name__ == "__main__":
    main()
