"""Benchmark: how `tools` times uploads to a remote host (the tool's reads of the file, up to its exit) against how
it times them to an embedded server (the file's growth where it arrives), on the same server, side by side.

Run:  .venv/bin/python benchmarks/bench_remote_uploads.py [--reps 10] [--size 64M]

One embedded OpenSSH server; each sample copies the file with scp, sftp and rsync (aes128-gcm), once into a
directory on this machine that is watched as the file grows (the embedded way) and once into the scratch
directory a remote host gets (ssh/scratch.py; counted by the tool's reads), the order alternating per round.
Prints medians and 95 % CIs (sshbench's own statistics) as a Markdown table.
"""

from __future__ import annotations

import argparse
import tempfile
from contextlib import ExitStack
from pathlib import Path

from sshbench.cli.options import parse_size
from sshbench.joboptions import JobOptions
from sshbench.jobs.tools import binaries
from sshbench.measure.tools import ToolSampler
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import RunKind
from sshbench.ssh.proc import ssh_client
from sshbench.ssh.scratch import remote_scratch
from sshbench.stats import summarize
from sshbench.targets.servers.openssh import OpenSSHServer

GCM = "aes128-gcm@openssh.com"


def main() -> None:
    """Print MB/s medians per tool and timing."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--size", default="64M")
    args = parser.parse_args()
    opts = JobOptions(command=RunKind.TOOLS, size=parse_size(args.size))
    bins = binaries(ssh_client())
    results: dict[tuple[str, str], list[float]] = {}
    with ExitStack() as stack:
        target = stack.enter_context(OpenSSHServer())
        local = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sshbench-bench-", dir="/dev/shm")))
        server_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sshbench-bench-", dir="/dev/shm")))
        scratch = stack.enter_context(remote_scratch(bins.ssh, target))
        samplers = {
            "arrival (embedded)": ToolSampler(bins, target, opts, local, server_dir, None),
            "tool's reads (remote)": ToolSampler(bins, target, opts, local, scratch, None),
        }
        for i in range(args.reps + 1):  # the first round is a warm-up
            for tool in ("scp", "sftp", "rsync"):
                sc = Scenario(Kind.TOOL, tool=tool, cipher=GCM, direction=Direction.UP)
                order = list(samplers.items()) if i % 2 else list(reversed(samplers.items()))
                for how, sampler in order:
                    sample = sampler(sc, i, i == 0)
                    assert sample.ok, sample.error
                    if i > 0 and sample.value is not None:
                        results.setdefault((tool, how), []).append(sample.value)
    print(f"| tool | timed by | median MB/s (95 % CI), {args.reps} uploads of {args.size} |")
    print("|---|---|---:|")
    for (tool, how), values in results.items():
        s = summarize(values)
        print(f"| {tool} | {how} | {s.median:.0f} ({s.ci_low:.0f}-{s.ci_high:.0f}) |")


if __name__ == "__main__":
    main()
