"""Benchmark: Dropbear's receive window (-W) and upload/download speed, to justify the fair setting.

Run:  .venv/bin/python benchmarks/bench_dropbear_window.py [--reps 7] [--size 128M]

Two embedded Dropbear servers run side by side, one with Dropbear's default window (24576 bytes) and
one with sshbench's `-W 2097152`; chacha20-poly1305 transfers alternate between them (sshbench's steady
rate, measure.throughput_sample). Medians are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path

from sshbench.cli.options import parse_size
from sshbench.measure.samplers import throughput_sample
from sshbench.model import Direction, Kind, Scenario
from sshbench.payloads import Payload
from sshbench.targets.servers.dropbear import DROPBEAR_WINDOW, DropbearServer

DEFAULT_WINDOW = 24576


def main() -> None:
    """Print MB/s medians per window and direction."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--size", default="128M")
    args = parser.parse_args()
    size = parse_size(args.size)
    assert size is not None
    windows = (DEFAULT_WINDOW, DROPBEAR_WINDOW)
    results: dict[tuple[int, Direction], list[float]] = {}
    with ExitStack() as stack:
        payload = Payload("zero", Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sshbench-bench-"))))
        targets = {w: stack.enter_context(DropbearServer(name=f"dropbear-W{w}", window=w)) for w in windows}
        for i in range(args.reps + 1):  # the first pass is a warm-up
            for d in Direction:
                sc = Scenario(Kind.THROUGHPUT, cipher="chacha20-poly1305@openssh.com", direction=d)
                for w, target in targets.items():
                    value = throughput_sample("ssh", target, sc, size, payload, i, i == 0).value
                    if i > 0 and value is not None:
                        results.setdefault((w, d), []).append(value)
    print(f"| -W | direction | median MB/s ({args.reps} samples of {args.size}) |")
    print("|---|---|---|")
    for (w, d), values in sorted(results.items(), key=lambda kv: (kv[0][1].value, kv[0][0])):
        print(f"| {w} | {d.value} | {statistics.median(values):.0f} |")


if __name__ == "__main__":
    main()
