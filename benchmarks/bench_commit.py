"""Benchmark: the CPU one sample's commit costs sshbench, with SQLite's `synchronous=FULL` and `NORMAL` under WAL.

Run:  .venv/bin/python benchmarks/bench_commit.py [--samples 300]

Each mode gets a fresh database made by `Store` (WAL; the mode set after it), one run and one scenario, and stores
the same throughput sample (with a kernel-evidence summary of the size a transfer stores) `--samples` times, as a
run stores each sample: one autocommitted insert. This thread's CPU clock around each insert; modes alternate in
blocks of 10 so that drift hits both. Prints the medians per mode as Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from sshbench.environment import Environment
from sshbench.joboptions import JobOptions
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import RunKind
from sshbench.samples import Sample
from sshbench.storage.store import Store

MODES = ("FULL", "NORMAL")
BLOCK = 10


def sample(sc: Scenario, rnd: int) -> Sample:
    """Return a throughput sample with an evidence summary like a transfer's (two sides, a short series)."""
    series = {"t_s": [0.0, 0.15], "delivery_MBps": [420.0, 410.0], "rtt_ms": [0.05, 0.06], "cwnd_segments": [18, 18]}
    side = {"cc": "bbr", "polls": 2, "rtt_ms": 0.05, "bytes_acked": 51_000_000, "series": series}
    return Sample(
        sc,
        rnd,
        False,
        ok=True,
        value=430.0,
        wall=0.4,
        nbytes=64 << 20,
        client_cpu=0.22,
        tcp={"client": side, "server": side},
    )


def main() -> None:
    """Insert the samples in both modes, alternating blocks; print the medians."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--samples", type=int, default=300)
    a = p.parse_args()
    sc = Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=Direction.DOWN)
    env = Environment(cpu_model="", cpus=2, cpu_flags={}, kernel="", openssh_client="", openssl="")
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:  # the disk the results database lives on, not tmpfs
        stores, runs = {}, {}
        for mode in MODES:
            store = stores[mode] = Store(Path(tmp) / f"{mode}.db")
            store.db.execute(f"PRAGMA synchronous={mode}")
            opts = JobOptions(command=RunKind.THROUGHPUT)
            runs[mode] = store.add_scenarios(store.create_run(opts, "local:openssh", env), [sc])[sc.key]
        for block in range(a.samples // BLOCK):
            for mode in MODES if block % 2 == 0 else MODES[::-1]:
                for i in range(BLOCK):
                    s = sample(sc, block * BLOCK + i)
                    before = time.thread_time()
                    stores[mode].add_sample(runs[mode], s)
                    cpu[mode].append(time.thread_time() - before)
        for store in stores.values():
            store.close()
    print(f"{a.samples} inserts per mode, one autocommitted sample each (WAL)\n")
    print("| synchronous | sshbench's CPU per sample stored (median) |\n|---|---:|")
    for mode in MODES:
        print(f"| {mode} | {statistics.median(cpu[mode]) * 1e6:.0f} us |")


if __name__ == "__main__":
    main()
