"""Benchmark: sshbench's throughput samples, taken as `sshbench throughput` takes them (the kernel's evidence and the
CPU and memory meters on, as jobs/staging.py wraps its sampler; not stored), against bare ssh timed from outside;
sshbench's own CPU per sample against the ssh client's; its latency samples against hyperfine.

Run:  .venv/bin/python benchmarks/bench_vs_bare.py [--rounds 7] [--size auto|256M] [--against OTHER/src]

Throughput: per round, for each configuration, a bare `ssh ... true` (the handshake to subtract), a bare
`ssh ... 'head -c N /dev/zero' > /dev/null` timed outside, and one sshbench sample; bare rate = N / (wall - median
handshake). Harness CPU: this process's CPU (every thread, getrusage) over the whole sample, and from run_timed's
start to the moment ssh's exit is seen (`during`: the part that competes with the measured client and server).
`--size auto` sizes transfers as `sshbench throughput` does (about 0.2 s, from a calibrating warm-up).

`--against DIR`: a second sshbench, the package in DIR (say `git worktree add /tmp/before COMMIT`, then
/tmp/before/src), takes the same samples in a worker process (this script with `--worker`), each round of it
interleaved with one of this one's (each side first in every other round), against its own embedded OpenSSH:
before and after side by side in one run. Latency alternates blocks of 10 sshbench samples with `hyperfine -N -r
10` on the same `ssh ... true`. Medians and ratios are printed as Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from sshbench.joboptions import JobOptions
from sshbench.measure import samplers
from sshbench.measure.costs import metered
from sshbench.measure.samplers import ThroughputSampler, latency_sample
from sshbench.measure.witness import witnessed
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import ROWS, RunKind
from sshbench.ssh.destination import COMMON_OPTIONS, Target
from sshbench.ssh.proc import ssh_client
from sshbench.targets.servers import registry

try:  # the hooks moved to their own module with issue 40: --against runs this script on the package before it
    from sshbench.ssh.hooks import at_exit
except ImportError:
    from sshbench.ssh.proc import at_exit  # type: ignore[attr-defined, no-redef]

CONFIGS = [
    ("aes128-gcm@openssh.com", None),
    ("chacha20-poly1305@openssh.com", None),
    ("aes128-ctr", "umac-64-etm@openssh.com"),
]
MB = 1_000_000
Take = Callable[[Scenario, int, bool], Any]


def self_cpu() -> float:
    """Return this process's user + system CPU seconds (every thread)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def bare_argv(target: Target, sc: Scenario, command: str) -> list[str]:
    """Return a plain ssh command line (no -v) with the same options sshbench uses."""
    return ["ssh", *COMMON_OPTIONS, *target.options, *sc.ssh_options(), target.destination, command]


def timed(argv: list[str]) -> float:
    """Run argv with stdout to /dev/null and return its wall time."""
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


class During:
    """This process's CPU from run_timed's start to the moment the process's exit is seen, over one sample."""

    def __init__(self) -> None:
        self.spent, self.since = 0.0, 0.0
        self.plain = samplers.run_timed

    def started(self, *args: Any, **kw: Any) -> Any:
        """Run run_timed, its start read first."""
        self.since = self_cpu()
        return self.plain(*args, **kw)

    def ended(self, pid: int) -> None:
        """Add the CPU since the start (the first `at_exit` call: the exit's readings come after)."""
        self.spent += self_cpu() - self.since

    def take(self, take: Take, sc: Scenario, rnd: int = 1) -> tuple[Any, float, float]:
        """Take one sample; return it with this process's CPU over all of it and during the transfer."""
        self.spent = 0.0
        samplers.run_timed = self.started
        before = self_cpu()
        try:
            with at_exit(self.ended):
                s = take(sc, rnd, False)
        finally:
            samplers.run_timed = self.plain
        return s, self_cpu() - before, self.spent


class Side:
    """One sshbench (this checkout's, or --against's in a worker) and its own embedded server and samplers."""

    def __init__(self, stack: ExitStack, size: int | None) -> None:
        server = registry.make_server("local:openssh")
        self.target: Target = stack.enter_context(server)
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        kind = RunKind.THROUGHPUT
        opts = JobOptions(command=kind, size=size, sample_seconds=ROWS[kind].sample_seconds)
        self.scs = [Scenario(Kind.THROUGHPUT, cipher=c, mac=m, direction=Direction.DOWN) for c, m in CONFIGS]
        self.plain = {sc.key: ThroughputSampler(ssh_client(), self.target, opts, workdir) for sc in self.scs}
        self.takes = {
            sc.key: witnessed(metered(self.plain[sc.key], server, True), self.target.port, server.pid, True)
            for sc in self.scs
        }
        for sc in self.scs:  # warm-ups (the first sizes --size auto's samples)
            self.plain[sc.key](sc, 0, True)
        self.size = size or self.plain[self.scs[0].key].sizes[self.scs[0].key]
        for sampler in self.plain.values():
            sampler.opts = JobOptions(command=kind, size=self.size, sample_seconds=opts.sample_seconds)
        self.window = During()

    def round(self) -> dict[str, dict[str, float]]:
        """Take one round: per configuration, a bare handshake, a bare transfer and one sshbench sample."""
        out = {}
        for sc in self.scs:
            handshake = timed(bare_argv(self.target, sc, "true"))
            bare = timed(bare_argv(self.target, sc, f"head -c {self.size} /dev/zero"))
            s, whole, during = self.window.take(self.takes[sc.key], sc)
            assert s.ok and s.value is not None, s.error
            out[sc.key] = {
                "handshake": handshake,
                "bare": bare,
                "rate": s.value,
                "whole": whole,
                "during": during,
                "client": s.client_cpu or 0.0,
            }
        return out


def worker(size: int) -> None:
    """Serve rounds to the parent: a line `round` in, one JSON line out (this package is --against's)."""
    with ExitStack() as stack:
        side = Side(stack, size)
        print(json.dumps({"ready": side.size}), flush=True)
        for line in sys.stdin:
            if line.strip() != "round":
                break
            print(json.dumps(side.round()), flush=True)


class Remote:
    """The --against side: this script run as a worker on another checkout's package."""

    def __init__(self, src: Path, size: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(src)}
        argv = [sys.executable, __file__, "--worker", "--size", str(size)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        ready = json.loads(self.proc.stdout.readline() or "{}")
        if ready.get("ready") != size:
            raise SystemExit(f"the worker on {src} did not start: {ready}")

    def round(self) -> dict[str, dict[str, float]]:
        """Have the worker take one round."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("round\n")
        self.proc.stdin.flush()
        return dict(json.loads(self.proc.stdout.readline()))

    def close(self) -> None:
        """End the worker (its server stops with it)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def table(name: str, rounds: list[dict[str, dict[str, float]]], size: int) -> list[str]:
    """Return Markdown rows for one side: rates against bare ssh per configuration, then the harness's CPU."""
    rows = []
    for key in rounds[0]:
        hs = statistics.median(r[key]["handshake"] for r in rounds)
        bare = statistics.median(size / (r[key]["bare"] - hs) / MB for r in rounds)
        ours = statistics.median(r[key]["rate"] for r in rounds)
        rows.append(f"| {name} | {key} | {ours:.0f} | {bare:.0f} | {(ours / bare - 1):+.1%} |")
    samples = [v for r in rounds for v in r.values()]
    client = statistics.median(v["client"] for v in samples)
    whole = statistics.median(v["whole"] for v in samples)
    during = statistics.median(v["during"] for v in samples)
    rows.append(
        f"| {name} | harness CPU per sample (median of {len(samples)}): whole / during the transfer, against the "
        f"ssh client's {client * 1000:.0f} ms | {whole * 1000:.2f} ms, **{whole / client:.2%}** | "
        f"{during * 1000:.2f} ms, **{during / client:.2%}** | |"
    )
    return rows


def latency(target: Target, rounds: int, workdir: Path) -> str:
    """Alternate blocks of sshbench latency samples and hyperfine runs; return a Markdown row."""
    sc = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    ours, theirs = [], []
    command = " ".join(bare_argv(target, sc, "true"))
    for block in range(rounds):
        for i in range(10):
            s = latency_sample(ssh_client(), target, sc, i, False)
            assert s.ok and s.value is not None, s.error
            ours.append(s.value)
        out = workdir / f"hf{block}.json"
        subprocess.run(
            ["hyperfine", "-N", "-w", "1", "-r", "10", "--export-json", str(out), command],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        theirs += json.loads(out.read_text())["results"][0]["times"]
    a, b = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
    return f"| `ssh … true` (curve25519-sha256 / ssh-ed25519), ms | {a:.1f} | {b:.1f} | {(a / b - 1):+.1%} |"


def main() -> None:
    """Run the rounds (interleaved with --against's), then the latency blocks; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", default="512M", help="bytes per transfer, or auto: what --size auto picks here")
    parser.add_argument("--against", type=Path, help="another checkout's src/ to run side by side (before)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(int(args.size))
    if shutil.which("hyperfine") is None:
        raise SystemExit("hyperfine is needed: apt-get install hyperfine")
    from sshbench.cli.options import parse_size

    with ExitStack() as stack:
        side = Side(stack, parse_size(args.size))
        other = Remote(args.against, side.size) if args.against else None
        ours, theirs = [], []
        for rnd in range(args.rounds):
            if other is not None and rnd % 2:
                theirs.append(other.round())
            ours.append(side.round())
            if other is not None and not rnd % 2:
                theirs.append(other.round())
        if other is not None:
            other.close()
        lat = latency(side.target, max(args.rounds // 2, 3), Path(stack.enter_context(tempfile.TemporaryDirectory())))
    print(f"Throughput, download, {side.size // 2**20} MiB ({args.size}) per transfer, {args.rounds} rounds\n")
    print("| sshbench | configuration | sshbench MB/s | bare ssh, timed outside | difference |\n|---|---|---|---|---|")
    print("\n".join(table("this", ours, side.size) + (table("--against", theirs, side.size) if theirs else [])))
    print("\nLatency (medians)\n\n| scenario | sshbench | hyperfine | difference |\n|---|---|---|---|")
    print(lat)


if __name__ == "__main__":
    main()
