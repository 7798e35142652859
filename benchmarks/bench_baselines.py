"""Benchmark: are the `tools` plaintext baselines strong enough to be ceilings on loopback? (issue 21, item 4)

Run:  .venv/bin/python benchmarks/bench_baselines.py [--reps 5] [--size 256M] [--tools-runs 2]

Part 1, plain TCP alone: socat copies a tmpfs file into another over loopback, with socat's default 8 KiB blocks
and with the 1 MiB blocks `tools` now uses, the listener on the client's CPU (where a helper started by a pinned
sshbench landed before) or on the other CPU (where the embedded server runs), the four set-ups alternating in every
round. Part 2, the real thing: `sshbench tools --cipher aes128-gcm@openssh.com` on loopback (scp, sftp, rsync and
both baselines, both ways) a few times; per direction the medians of every row and the baselines that failed (an
SSH copy above the baseline that caps it). Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sshbench.cli.options import parse_size
from sshbench.stats import summarize

SOCAT = "/usr/bin/socat"
PORT = 45_611


def socat_copy(source: Path, dest: Path, block: int, listener_cpu: int) -> float:
    """Copy one file over loopback with socat; return MB/s from connect to the last byte written."""
    dest.unlink(missing_ok=True)
    listen = subprocess.Popen(["taskset", "-c", str(listener_cpu), SOCAT, "-u", "-b", str(block),
                               f"TCP-LISTEN:{PORT},bind=127.0.0.1,reuseaddr", f"CREATE:{dest}"])  # fmt: skip
    time.sleep(0.3)
    start = time.perf_counter()
    subprocess.run(["taskset", "-c", "0", SOCAT, "-u", "-b", str(block), f"OPEN:{source}", f"TCP:127.0.0.1:{PORT}"],
                   check=True)  # fmt: skip
    listen.wait(timeout=60)
    return source.stat().st_size / (time.perf_counter() - start) / 1e6


def part_one(reps: int, size: int) -> None:
    """Print plain TCP rates per block size and listener CPU."""
    setups = [(block, cpu) for block in (8192, 2**20) for cpu in (0, 1)]
    rates: dict[tuple[int, int], list[float]] = {s: [] for s in setups}
    with tempfile.TemporaryDirectory(prefix="sshbench-bench-", dir="/dev/shm") as tmp:
        source = Path(tmp) / "source"
        with source.open("wb") as f:
            f.truncate(size)
        for i in range(reps):
            for block, cpu in setups if i % 2 == 0 else reversed(setups):
                rates[(block, cpu)].append(socat_copy(source, Path(tmp) / "dest", block, cpu))
    print(f"| socat blocks | listener on | MB/s median (95 % CI), {reps} copies of {size >> 20} MiB |")
    print("|---|---|---:|")
    for (block, cpu), values in rates.items():
        s = summarize(values)
        where = "the client's CPU (0)" if cpu == 0 else "the other CPU (1)"
        print(f"| {block >> 10} KiB | {where} | {s.median:.0f} ({s.ci_low:.0f}-{s.ci_high:.0f}) |")


def part_two(runs: int) -> None:
    """Print, per `tools` run and direction, every row's median and the failed baselines."""
    print("\n| run | direction | tcp | rsyncd | scp | sftp | rsync | failed baselines |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for n in range(1, runs + 1):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "b.db"
            argv = [sys.executable, "-m", "sshbench", "tools", "--cipher", "aes128-gcm@openssh.com", "--max-time",
                    "3m", "--db", str(db), "--json"]  # fmt: skip
            done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
            doc = json.loads(done.stdout)
        for group, way in (("tool download", "download"), ("tool upload", "upload")):
            medians = {r["scenario"]["tool"]: r["summary"]["median"] for r in doc["results"].get(group, [])
                       if r["summary"]}  # fmt: skip
            failed = sorted({f for e in doc["analysis"]["efficiency"][way] for f in e["failed_baselines"]})
            cells = " | ".join(f"{medians[t]:.0f}" if t in medians else "-" for t in ("tcp", "rsyncd", "scp", "sftp",
                                                                                       "rsync"))  # fmt: skip
            print(f"| {n} | {way} | {cells} | {', '.join(failed) or 'none'} |")


def main() -> None:
    """Run both parts."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--size", default="256M")
    parser.add_argument("--tools-runs", type=int, default=2)
    args = parser.parse_args()
    part_one(args.reps, parse_size(args.size) or 2**28)
    part_two(args.tools_runs)


if __name__ == "__main__":
    main()
