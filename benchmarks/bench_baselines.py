"""Benchmark: are the `tools` plaintext baselines strong enough to be ceilings on loopback? (issue 21, item 4)

Run:  .venv/bin/python benchmarks/bench_baselines.py [--reps 5] [--size 256M] [--tools-runs 2] [--placement-runs 2]

Part 1, plain TCP alone: socat copies a tmpfs file into another over loopback, with socat's default 8 KiB blocks
and with the 1 MiB blocks `tools` now uses, the listener on the client's CPU (where a helper started by a pinned
sshbench landed before) or on the other CPU (where the embedded server runs), the four set-ups alternating in every
round. Part 2, the real thing: `sshbench tools --cipher aes128-gcm@openssh.com` on loopback (scp, sftp, rsync and
both baselines, both ways) a few times; per direction the medians of every row and the baselines that failed (an
SSH copy above the baseline that caps it). Part 3, where the socat listeners run inside a `tools` job: as shipped
(on sshbench's CPU, the client's) and moved to the pinned server's CPU (patched here, like the rsync daemon), the
two set-ups alternating, 8 rounds of scp, sftp, rsync and both baselines each. Prints Markdown tables.
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
    listen = subprocess.Popen(
        [
            "taskset",
            "-c",
            str(listener_cpu),
            SOCAT,
            "-u",
            "-b",
            str(block),
            f"TCP-LISTEN:{PORT},bind=127.0.0.1,reuseaddr",
            f"CREATE:{dest}",
        ]
    )
    time.sleep(0.3)
    start = time.perf_counter()
    subprocess.run(
        ["taskset", "-c", "0", SOCAT, "-u", "-b", str(block), f"OPEN:{source}", f"TCP:127.0.0.1:{PORT}"], check=True
    )
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
            argv = [
                sys.executable,
                "-m",
                "sshbench",
                "tools",
                "--cipher",
                "aes128-gcm@openssh.com",
                "--max-time",
                "3m",
                "--db",
                str(db),
                "--json",
            ]
            done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
            doc = json.loads(done.stdout)
        for group, way in (("tool download", "download"), ("tool upload", "upload")):
            medians = {
                r["scenario"]["tool"]: r["summary"]["median"] for r in doc["results"].get(group, []) if r["summary"]
            }
            failed = sorted({f for e in doc["analysis"]["efficiency"][way] for f in e["failed_baselines"]})
            cells = " | ".join(
                f"{medians[t]:.0f}" if t in medians else "-" for t in ("tcp", "rsyncd", "scp", "sftp", "rsync")
            )
            print(f"| {n} | {way} | {cells} | {', '.join(failed) or 'none'} |")


def _job(server_cpu: bool, rounds: int) -> dict[str, list[float]]:
    """Run one `tools` job in this process, with the socat listeners moved to the server's CPU when asked; return
    the plain TCP and scp values per direction."""
    import contextlib

    import psutil

    from sshbench import jobs
    from sshbench.joboptions import JobOptions, Plan, ToolsOptions
    from sshbench.jobs import tools as job
    from sshbench.runkinds import RunKind
    from sshbench.storage.store import Store

    shipped = job.plain_servers

    @contextlib.contextmanager
    def moved(*args, **kw):  # type: ignore[no-untyped-def]
        """Start the baselines as shipped, then move every socat listener to the server's CPU."""
        with shipped(*args, **kw) as listening:
            server = args[2]
            for child in psutil.Process().children(recursive=True):
                if "TCP-LISTEN" in " ".join(child.cmdline()):
                    os.sched_setaffinity(child.pid, os.sched_getaffinity(server.pid))
            yield listening

    class Quiet:
        def update(self, description: str, done: int, total: int) -> None:
            """Say nothing."""

    job.plain_servers = moved if server_cpu else shipped  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "b.db")
            plan = Plan(min_rounds=rounds, max_rounds=rounds)
            opts = JobOptions(
                command=RunKind.TOOLS,
                own=ToolsOptions(("scp", "sftp", "rsync")),
                sample_seconds=1.0,
                plan=plan,
                ciphers=("aes128-gcm@openssh.com",),
                pin=True,
            )
            run_id = jobs.run(jobs.Job(store, opts, Quiet()))
            out = {
                f"{st.scenario.tool} {st.scenario.direction}": st.values()
                for st in store.scenarios(run_id)
                if st.scenario.tool in ("tcp", "scp")
            }
            store.close()
    finally:
        job.plain_servers = shipped
    return out


def part_three(runs: int, rounds: int = 8) -> None:
    """Print plain TCP (and scp) inside `tools` jobs with the socat listeners on the client's or the server's CPU."""
    print("\n| socat listeners on | run | tcp down | tcp up | scp down | scp up |")
    print("|---|---|---:|---:|---:|---:|")
    for n in range(1, runs + 1):
        for server_cpu in (False, True) if n % 2 else (True, False):
            values = _job(server_cpu, rounds)
            cells = []
            for key in ("tcp down", "tcp up", "scp down", "scp up"):
                s = summarize(values[key])
                cells.append(f"{s.median:.0f} ({s.ci_low:.0f}-{s.ci_high:.0f})")
            where = "the server's CPU (1)" if server_cpu else "the client's CPU (0), as shipped"
            print(f"| {where} | {n} | {' | '.join(cells)} |")


def main() -> None:
    """Run the parts."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--size", default="256M")
    parser.add_argument("--tools-runs", type=int, default=2)
    parser.add_argument("--placement-runs", type=int, default=2)
    args = parser.parse_args()
    if args.reps:  # 0 skips a part
        part_one(args.reps, parse_size(args.size) or 2**28)
    if args.tools_runs:
        part_two(args.tools_runs)
    if args.placement_runs:
        part_three(args.placement_runs)


if __name__ == "__main__":
    main()
