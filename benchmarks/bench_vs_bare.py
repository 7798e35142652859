"""Benchmark: sshbench's throughput and latency samples against bare ssh timed from outside.

Run:  .venv/bin/python benchmarks/bench_vs_bare.py [--rounds 7] [--size 512M|auto]

Throughput: per round, for each configuration, one sshbench sample (measure.throughput_sample, the
function the CLI uses) and one bare `ssh ... 'head -c N /dev/zero' > /dev/null` timed outside with
the median bare `ssh ... true` time subtracted as its handshake; configurations and methods are
interleaved in one run. Harness CPU is sshbench's own (Python) CPU time during its samples,
compared with the ssh client's CPU. Latency: sshbench latency samples against hyperfine runs of
`ssh ... true`, in alternating blocks. Medians and ratios are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sshbench.cli.options import parse_size
from sshbench.joboptions import JobOptions
from sshbench.measure.samplers import ThroughputSampler, latency_sample, throughput_sample
from sshbench.measure.steady import MB
from sshbench.model import Direction, Kind, Scenario
from sshbench.payloads import Payload
from sshbench.runkinds import ROWS, RunKind
from sshbench.ssh.destination import COMMON_OPTIONS, Target
from sshbench.targets.servers.openssh import OpenSSHServer

CONFIGS = [
    ("aes128-gcm@openssh.com", None),
    ("chacha20-poly1305@openssh.com", None),
    ("aes128-ctr", "umac-64-etm@openssh.com"),
]


def self_cpu() -> float:
    """Return this process's user + system CPU seconds."""
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


def throughput(target: Target, rounds: int, size: int, workdir: Path) -> list[str]:
    """Interleave sshbench and bare transfers; return Markdown rows."""
    payload = Payload("zero", workdir)
    scs = [Scenario(Kind.THROUGHPUT, cipher=c, mac=m, direction=Direction.DOWN) for c, m in CONFIGS]
    ours: dict[str, list[float]] = {sc.key: [] for sc in scs}
    bare: dict[str, list[float]] = {sc.key: [] for sc in scs}
    handshake: dict[str, list[float]] = {sc.key: [] for sc in scs}
    harness, client = [], []
    for sc in scs:  # warm-up
        throughput_sample("ssh", target, sc, size, payload, 0, True)
    for _ in range(rounds):
        for sc in scs:
            handshake[sc.key].append(timed(bare_argv(target, sc, "true")))
            bare[sc.key].append(timed(bare_argv(target, sc, f"head -c {size} /dev/zero")))
            before = self_cpu()
            s = throughput_sample("ssh", target, sc, size, payload, 1, False)
            harness.append(self_cpu() - before)
            client.append(s.client_cpu or 0.0)
            assert s.ok and s.value is not None, s.error
            ours[sc.key].append(s.value)
    rows = []
    for sc in scs:
        hs = statistics.median(handshake[sc.key])
        bare_rate = statistics.median([size / (t - hs) / MB for t in bare[sc.key]])
        our_rate = statistics.median(ours[sc.key])
        rows.append(
            f"| {sc.cipher}{' + ' + sc.mac if sc.mac else ''} | {our_rate:.0f} | {bare_rate:.0f} | "
            f"{(our_rate / bare_rate - 1):+.1%} |"
        )
    rows.append(
        f"| harness CPU / ssh client CPU (median per sample) | "
        f"{statistics.median(harness) * 1000:.1f} ms | {statistics.median(client) * 1000:.0f} ms | "
        f"{statistics.median(harness) / statistics.median(client):.2%} |"
    )
    return rows


def latency(target: Target, rounds: int, workdir: Path) -> str:
    """Alternate blocks of sshbench latency samples and hyperfine runs; return a Markdown row."""
    sc = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    ours, theirs = [], []
    command = " ".join(bare_argv(target, sc, "true"))
    for block in range(rounds):
        for i in range(10):
            s = latency_sample("ssh", target, sc, i, False)
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


def auto_size(target: Target, workdir: Path) -> int:
    """Return the transfer size `--size auto` picks for aes128-gcm downloads here (about 0.2 s, from a warm-up)."""
    kind = RunKind.THROUGHPUT
    opts = JobOptions(command=kind, sample_seconds=ROWS[kind].sample_seconds)
    sampler = ThroughputSampler("ssh", target, opts, workdir)
    sc = Scenario(Kind.THROUGHPUT, cipher=CONFIGS[0][0], direction=Direction.DOWN)
    sampler(sc, 0, True)
    return sampler.sizes[sc.key]


def main() -> None:
    """Run both benchmarks against a fresh embedded server and print the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", default="512M", help="bytes per transfer, or auto: what --size auto picks here")
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        raise SystemExit("hyperfine is needed: apt-get install hyperfine")
    with OpenSSHServer() as target, tempfile.TemporaryDirectory() as tmp:
        size = parse_size(args.size) or auto_size(target, Path(tmp))
        rows = throughput(target, args.rounds, size, Path(tmp))
        lat = latency(target, max(args.rounds // 2, 3), Path(tmp))
    shown = f"{size // 2**20} MiB ({args.size})"
    print(f"Throughput, download, {shown} per transfer, {args.rounds} interleaved rounds (MB/s, medians)\n")
    print("| configuration | sshbench | bare ssh, timed outside | difference |\n|---|---|---|---|")
    print("\n".join(rows))
    print("\nLatency (medians)\n\n| scenario | sshbench | hyperfine | difference |\n|---|---|---|---|")
    print(lat)


if __name__ == "__main__":
    main()
