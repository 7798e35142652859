"""Benchmark: does a library's rate as `sshbench clients` measures it agree with the same library timed by a plain
script? (issue 25)

Run:  .venv/bin/python benchmarks/bench_clients_plain.py [--rounds 8] [--size 256M] [--only LIBRARY]
      [--plain-reads 64K,1M]

Against one embedded OpenSSH server on loopback, per library (paramiko, asyncssh, libssh2, libssh and Go's
x/crypto/ssh, where installed), in each round and in alternating order:
- sshbench: one exec-channel download of SIZE bytes as `sshbench clients` takes it (clients/launch.py's driver,
  measure/clientside.py's sampler: the steady rate from the driver process's write counter, probed from outside);
- plain: benchmarks/plain_clients.py, which imports nothing of sshbench, does the same download with the library
  (the same calls as the driver, each chunk written to stdout on /dev/null as the driver writes it) and times the same
  steady part with its own clock; for Go, benchmarks/plain_gossh/ (a plain Go program, built here with `go build`).
`--plain-reads` runs the plain script once per read size in each round (PLAIN_READ; sshbench's drivers read 64 KiB),
so a library's rate at the driver's reads and at larger ones are measured side by side (issue 37: paramiko).
Both pin AES-GCM (aes128-gcm@openssh.com), but for libssh, whose binding cannot choose a cipher (both take libssh's
own). Prints, per library, both medians and the per-round ratio sshbench/plain
(its median with the order-statistic interval of the median, and min..max). Nothing of sshbench runs inside the
plain script; the server is sshbench's embedded one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from sshbench.builds import toolchain_command
from sshbench.cli.options import parse_size
from sshbench.clients.launch import Launcher, detect, resolve
from sshbench.clienttypes import client_type
from sshbench.joboptions import JobOptions
from sshbench.measure.clientside import ClientTransfers
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import RunKind
from sshbench.stats import median_ci_ranks
from sshbench.targets.servers.openssh import OpenSSHServer

GCM = "aes128-gcm@openssh.com"
PLAIN = Path(__file__).with_name("plain_clients.py")
PLAIN_GO = Path(__file__).with_name("plain_gossh")


def plain_command(name: str, work: Path) -> list[str]:
    """Return the plain program of a library: plain_clients.py, or the plain Go program built into `work`."""
    if name != "gossh":
        return [sys.executable, str(PLAIN)]
    go = toolchain_command("Go")
    if go is None:
        raise SystemExit("gossh: no Go toolchain")
    out = work / "plain_gossh"
    subprocess.run([go, "build", "-mod=readonly", "-trimpath", "-o", str(out), "."], cwd=PLAIN_GO, check=True)
    return [str(out)]


def main() -> None:
    """Measure each installed library both ways, round by round."""
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--size", default="256M")
    p.add_argument("--only", help="one library (paramiko, asyncssh, libssh2, libssh, gossh)")
    p.add_argument("--plain-reads", default="64K", help="read sizes of the plain script (K or M), comma-separated")
    a = p.parse_args()
    size = parse_size(a.size) or 256 * 2**20
    reads = [
        int(r.upper().removesuffix("K")) * 1024 if r.upper().endswith("K") else int(r.upper().removesuffix("M")) * 2**20
        for r in a.plain_reads.split(",")
    ]
    server = OpenSSHServer()
    with server as target, tempfile.TemporaryDirectory(prefix="sbbench-") as work:
        address = resolve("ssh", target)
        for name in (a.only,) if a.only else ("paramiko", "asyncssh", "libssh2", "libssh", "gossh"):
            found = detect(client_type(name))
            if found.missing:
                print(f"{name}: {found.missing}")
                continue
            sampler = ClientTransfers(Launcher(found, address), "ssh", target, JobOptions(RunKind.CLIENTS), Path(work))
            cipher = None if name == "libssh" else GCM  # its binding cannot choose one
            sc = Scenario(Kind.THROUGHPUT, client=name, cipher=cipher, direction=Direction.DOWN)
            plain = [
                *plain_command(name, Path(work)),
                name,
                address.host,
                str(address.port),
                address.user,
                address.keys[0],
                address.known_hosts[0],
                str(size),
                *([cipher] if cipher else []),
            ]
            ours: list[float] = []
            theirs: dict[int, list[float]] = {r: [] for r in reads}
            for rnd in range(a.rounds):
                order: list[int | None] = [None, *reads]  # None: sshbench's sampler
                shift = rnd % len(order)
                for which in order[shift:] + order[:shift]:
                    if which is None:
                        s = sampler.transfer(sc, size, rnd, False)
                        if not s.ok or s.value is None:
                            raise SystemExit(f"{name}: sshbench sample failed: {s.error}")
                        ours.append(s.value)
                    else:
                        done = subprocess.run(
                            plain,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE,
                            text=True,
                            check=True,
                            env={**os.environ, "PLAIN_READ": str(which)},
                        )
                        theirs[which].append(float(done.stderr.strip().splitlines()[-1]))
            for read, rates in theirs.items():
                ratios = sorted(o / t for o, t in zip(ours, rates, strict=True))
                lo, hi, cover = median_ci_ranks(len(ratios))
                print(
                    f"{found.version}: sshbench {statistics.median(ours):.0f} MB/s, plain reading {read // 1024} KiB "
                    f"{statistics.median(rates):.0f} MB/s; ratio median {statistics.median(ratios):.3f}, its "
                    f"{cover:.0%} interval {ratios[lo - 1]:.3f}..{ratios[hi - 1]:.3f} (min..max "
                    f"{ratios[0]:.3f}..{ratios[-1]:.3f}), {a.rounds} rounds"
                )


if __name__ == "__main__":
    main()
