"""Benchmark: what a key exchange costs against curve25519-sha256, on loopback, across `--link lte` and on
CPU-quota-shaped sides, as `sshbench latency` measures it (its kex cost table, `--json` `kex_costs`).

Run (root: links and CPU quotas; OpenSSH 10 from scripts/openssh10):
    .venv/bin/python benchmarks/bench_kex_cost.py [--prefix ~/.cache/sshbench/openssh-10] [--rounds 12]

Each condition is one `sshbench latency` run of the embedded OpenSSH 10 with its own client, every kex in the same
interleaved rounds (`--no-race`: every row gets every round); the first is the embedded default itself (this
machine's OpenSSH 9.2, whose client has no ML-KEM). Printed: one Markdown table per condition, the exact command
above it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

KEXES = "mlkem768x25519-sha256,sntrup761x25519-sha512,curve25519-sha256,ecdh-sha2-nistp256"
SYSTEM = "the embedded default (OpenSSH 9.2 client and server, loopback)"
CONDITIONS = {
    SYSTEM: [],
    "OpenSSH 10 on loopback (pinned, no limit)": [],
    "--link lte (30 Mbit/s, 50 ms RTT, 0.1 % loss)": ["--link", "lte"],
    "CPU-quota-shaped: 25 % of a CPU each side over a 10 ms period": [
        "--server-cpu",
        "25%",
        "--client-cpu",
        "25%",
        "--cpu-period",
        "10ms",
    ],
    "the same quota over the kernel's 100 ms period": ["--server-cpu", "25%", "--client-cpu", "25%"],
}


def interval(d: dict[str, Any] | None) -> str:
    """Return a paired difference as `+1.2 (+0.9..+1.6)` ms, or `-`."""
    if not d:
        return "-"
    return f"{d['median'] * 1000:+.1f} ({d['ci_low'] * 1000:+.1f}..{d['ci_high'] * 1000:+.1f})"


def table(costs: list[dict[str, Any]]) -> list[str]:
    """Return a condition's Markdown table."""
    out = [
        "| kex | post-quantum | ms | +ms vs curve25519 (95 % CI) | +client CPU ms | +server CPU ms | bytes to NEWKEYS "
        "out/in | round trips |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in costs:
        wire = c["wire"] or {}
        out.append(
            f"| {c['scenario']['kex']} | {'yes' if c['post_quantum'] else 'no'} | {c['time_s'] * 1000:.1f} | "
            f"{interval(c['extra_time_s'])} | {interval(c['extra_client_cpu_s'])} | "
            f"{interval(c['extra_server_cpu_s'])} | {wire.get('sent', '?')}/{wire.get('received', '?')} | "
            f"{wire.get('round_trips', '?')} |"
        )
    return out


def main() -> None:
    """Run every condition and print its table."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", type=Path, default=cache / "sshbench" / "openssh-10")
    ap.add_argument("--rounds", type=int, default=12)
    args = ap.parse_args()
    sshd, ssh = args.prefix / "usr/sbin/sshd", args.prefix / "usr/bin/ssh"
    with tempfile.TemporaryDirectory(prefix="sshbench-kexcost-") as tmp:
        for title, extra in CONDITIONS.items():
            target = ["local"] if title == SYSTEM else [f"local:sshd={sshd}", "--ssh", str(ssh)]
            kexes = KEXES.replace("mlkem768x25519-sha256,", "") if title == SYSTEM else KEXES
            words = ["latency", *target, "--kex", kexes, "--hostkey", "ssh-ed25519"]
            words += ["--rounds", str(args.rounds), "--max-rounds", str(args.rounds), "--no-race", *extra]
            done = subprocess.run(
                [sys.executable, "-m", "sshbench", *words, "--json", "--db", f"{tmp}/runs.db"],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                sys.exit(f"{title}: {done.stderr}")
            doc = json.loads(done.stdout)
            print(f"\n{title}:\n\n    sshbench {shlex.join(words)}\n")
            print("\n".join(table(doc["kex_costs"])))


if __name__ == "__main__":
    main()
