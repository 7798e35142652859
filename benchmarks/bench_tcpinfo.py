"""Benchmark: what reading the transfer's sockets from the kernel costs (issue 24).

Run:  .venv/bin/python benchmarks/bench_tcpinfo.py [--pairs 4] [--link 100mbit,20ms]

Alternates `sshbench throughput --cipher aes128-gcm@openssh.com` with and without `--no-kernel-evidence` (embedded
OpenSSH, pinned, 6 rounds each), each mode first in half of the pairs, so that drift and order hit both alike.
Reports, per direction, the median rate of each mode over its runs and the ratio of the two (with the run-to-run
spread), and the watcher's own CPU (`harness_cpu_s`, measured by the watcher thread) as a share of the ssh
client's CPU over the same samples.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ARGS = ["throughput", "--cipher", "aes128-gcm@openssh.com", "--rounds", "6", "--max-rounds", "6", "--json"]


def one(db: Path, evidence: bool, link: str | None) -> dict[str, Any]:
    """Run one throughput job; return its run document."""
    argv = [sys.executable, "-m", "sshbench", *ARGS, "--db", str(db), *(["--link", link] if link else [])]
    done = subprocess.run(
        [*argv, *([] if evidence else ["--no-kernel-evidence"])], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"throughput failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def main() -> None:
    """Alternate the two modes; print medians, ratios and the harness's CPU share."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--link", default=None)
    args = parser.parse_args()
    rates: dict[tuple[bool, str], list[float]] = {}
    harness = client = 0.0
    with tempfile.TemporaryDirectory(prefix="sbbench-") as tmp:
        for i in range(args.pairs):
            for evidence in (True, False) if i % 2 == 0 else (False, True):  # each mode first in half the pairs
                doc = one(Path(tmp) / "runs.db", evidence, args.link)
                for group in ("download", "upload"):
                    rates.setdefault((evidence, group), []).append(doc["results"][group][0]["summary"]["median"])
                if evidence:
                    for sc in doc["samples"]:
                        for s in sc["samples"]:
                            if s["tcp"] and not s["warmup"]:
                                harness += s["tcp"].get("harness_cpu_s", 0.0)
                                client += s["client_cpu"] or 0.0
                print(f"pair {i + 1} evidence={evidence}: done", file=sys.stderr, flush=True)
    print("| direction | with evidence, MB/s (median of runs) | without | ratio with / without (min-max over pairs) |")
    print("|---|---:|---:|---|")
    for group in ("download", "upload"):
        on, off = rates[(True, group)], rates[(False, group)]
        ratios = sorted(a / b for a, b in zip(on, off, strict=True))
        print(
            f"| {group} | {statistics.median(on):.0f} | {statistics.median(off):.0f} | "
            f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) |"
        )
    print(f"\nwatcher CPU: {harness:.3f} s against the ssh client's {client:.1f} s ({100 * harness / client:.2f} %)")


if __name__ == "__main__":
    main()
