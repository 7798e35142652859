"""Benchmark: sshbench's own CPU per throughput sample, by part, against the ssh client's (issue 40).

Run:  .venv/bin/python benchmarks/bench_harness.py [--rounds 7] [--size auto|256M] [--profile FILE]

The embedded default (OpenSSH with its cgroup, as `sshbench throughput` starts it) downloads with aes128-gcm; each
round takes one sample through each sampler, in a fresh random order, each wrapped as jobs/staging.py wraps a
run's: `timing` (measure.throughput_sample: ssh run and timed, its stderr and I/O counters read), `+ evidence`
(witnessed: the kernel's TCP state of the borrowed socket read at run_timed's wake-ups), `+ meters` (metered inside
it: the server's cgroup CPU before, at login and after the connection's processes end, and the memory peaks), `+
storage` (the sample written to SQLite and committed, as a run stores it). This process's CPU (every thread,
getrusage) is read around each sample (`whole`) and from run_timed's start to the moment ssh's exit is seen
(`during`: what competes with the measured client and server); a part's cost is the median difference between
neighbouring samplers, a share the sampler's median over the ssh client's median CPU. The package before a change
against the one after: bench_vs_bare.py --against. `--size auto` sizes transfers as `sshbench throughput` does
(about 0.2 s, from a calibrating warm-up). `--profile FILE` writes a CPU cProfile of the whole sampler's samples
(main thread) for `python -m pstats FILE`. `--wakeups` instead times what `run_timed` costs this process (its CPU
clock) for /bin/true, for `ssh -v ... true` and for a shell writing 20 lines 5 ms apart (15 runs each, medians):
the price of a wake-up.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sshbench.cli.options import parse_size
from sshbench.environment import Environment
from sshbench.joboptions import JobOptions
from sshbench.measure.costs import metered
from sshbench.measure.samplers import ThroughputSampler
from sshbench.measure.witness import witnessed
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import ROWS, RunKind
from sshbench.samples import Sample
from sshbench.ssh.proc import run_timed, ssh_client
from sshbench.storage.store import Store
from sshbench.targets.servers import registry

Take = Callable[[Scenario, int, bool], Sample]
PARTS = ("timing", "+ evidence", "+ meters", "+ storage")


def beside(name: str) -> Any:
    """Return the benchmark module `name` from this file's directory (bench_vs_bare's `During` is the one CPU window
    both use; benchmarks are run as files, not as a package)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stored(take: Take, store: Store, run: int) -> Take:
    """Return `take` with each sample written to the database as a run stores it."""

    def sample(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        s = take(sc, rnd, warmup)
        store.add_sample(run, s)
        return s

    return sample


def wakeups(target: Any) -> None:
    """Print what run_timed costs this process for a spawn alone, a login's stderr and 20 lines of a shell."""
    cases = {
        "/bin/true": ["/bin/true"],
        "ssh -v ... true": target.argv(ssh_client(), [], "true"),
        "a shell writing 20 lines, 5 ms apart": ["sh", "-c", "for i in $(seq 20); do echo $i >&2; sleep 0.005; done"],
    }
    print("| process run by run_timed | sshbench's CPU (median of 15) | its stderr lines |\n|---|---:|---:|")
    for name, argv in cases.items():
        cpu, lines = [], 0
        for _ in range(15):
            before = time.thread_time()
            lines = len(run_timed(argv, timeout=30).lines)
            cpu.append(time.thread_time() - before)
        print(f"| {name} | {statistics.median(cpu) * 1000:.2f} ms | {lines} |")


def main() -> None:
    """Take the samples and print the parts and the share as Markdown."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--size", default="auto")
    p.add_argument("--profile", type=Path)
    p.add_argument("--wakeups", action="store_true")
    a = p.parse_args()
    if a.wakeups:
        with registry.make_server("local:openssh") as target:
            wakeups(target)
        return
    sc = Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=Direction.DOWN)
    server = registry.make_server("local:openssh")
    profile = cProfile.Profile(time.thread_time) if a.profile else None  # CPU, not wall
    with server as target, tempfile.TemporaryDirectory() as tmp:
        kind = RunKind.THROUGHPUT
        opts = JobOptions(command=kind, size=parse_size(a.size), sample_seconds=ROWS[kind].sample_seconds)
        timing = ThroughputSampler(ssh_client(), target, opts, Path(tmp))
        timing(sc, 0, True)  # the warm-up sizes the samples (--size auto)
        size = opts.size or timing.sizes[sc.key]
        evidence = witnessed(timing, target.port, server.pid, True)
        meters = witnessed(metered(timing, server, True), target.port, server.pid, True)
        store = Store(Path(tmp) / "runs.db")
        env = Environment(cpu_model="", cpus=2, cpu_flags={}, kernel="", openssh_client="", openssl="")
        run = store.add_scenarios(store.create_run(opts, target.spec, env), [sc])[sc.key]
        whole = stored(meters, store, run)
        takes = dict(zip(PARTS, (timing, evidence, meters, whole), strict=True))
        cpu: dict[str, list[float]] = {k: [] for k in takes}
        during: dict[str, list[float]] = {k: [] for k in takes}
        window = beside("bench_vs_bare").During()
        client: dict[str, list[float]] = {k: [] for k in takes}
        rates: dict[str, list[float]] = {k: [] for k in takes}
        order = list(takes)
        for rnd in range(1, a.rounds + 1):
            random.shuffle(order)
            for part in order:
                if profile and part == PARTS[-1]:
                    profile.enable()
                s, whole_cpu, spent = window.take(takes[part], sc, rnd)
                cpu[part].append(whole_cpu)
                during[part].append(spent)
                if profile and part == PARTS[-1]:
                    profile.disable()
                assert s.ok, s.error
                client[part].append(s.client_cpu or 0.0)
                rates[part].append(s.value or 0.0)
    if profile and a.profile:
        profile.dump_stats(a.profile)
    report(a, size, cpu, during, client, rates)


def report(
    a: argparse.Namespace,
    size: int,
    cpu: dict[str, list[float]],
    during: dict[str, list[float]],
    client: dict[str, list[float]],
    rates: dict[str, list[float]],
) -> None:
    """Print the parts and the shares as Markdown."""
    med = {k: statistics.median(v) for k, v in cpu.items()}
    mid = {k: statistics.median(v) for k, v in during.items()}
    ssh = {k: statistics.median(v) for k, v in client.items()}
    print(f"{a.rounds} rounds, {size // 2**20} MiB per transfer ({a.size}), aes128-gcm download, embedded OpenSSH\n")
    print("| part | whole sample (median) | during the transfer (median) |\n|---|---:|---:|")
    last, last_mid = 0.0, 0.0
    for k in PARTS:
        print(
            f"| {k} | {(med[k] - last) * 1000:+.2f} ms (total {med[k] * 1000:.2f}) | "
            f"{(mid[k] - last_mid) * 1000:+.2f} ms (total {mid[k] * 1000:.2f}) |"
        )
        last, last_mid = med[k], mid[k]
    for k in PARTS[-1:]:
        print(
            f"\n{k}: ssh client CPU per sample (median) {ssh[k] * 1000:.0f} ms; harness {med[k] * 1000:.2f} ms "
            f"whole, share {med[k] / ssh[k]:.2%}; {mid[k] * 1000:.2f} ms during the transfer, share "
            f"{mid[k] / ssh[k]:.2%}; rate {statistics.median(rates[k]):.0f} MB/s (median)"
        )


if __name__ == "__main__":
    main()
