"""Runs against a loopback fleet for benchmarks/outputs_db.sh: tools and throughput against one host reached as a
remote alias, a fleet whose hosts all fail host-key checking, and a fleet measured with --throughput."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fleet_hosts import loopback_fleet


def main(db: str) -> None:
    """Start the loopback fleet and store its runs in `db`."""
    sb = [sys.executable, "-m", "sshbench"]
    with tempfile.TemporaryDirectory(prefix="sbbench-outputs-") as t:
        tmp = Path(t)
        (tmp / "home").mkdir()
        with loopback_fleet(tmp, tmp / "home", ["openssh", "dropbear", "tinyssh"]) as f:
            alias = ["fleet-openssh-1", "--ssh-config", str(f.ssh_config), "--db", db]
            for argv in (
                ["fleet", "-i", str(f.inventory), "--db", db, "--throughput", "--size", "16M", "--rounds", "3"],
                ["throughput", *alias, "--max-time", "30s", "--direction", "down"],
                ["tools", *alias, "--max-time", "70s"],
                [
                    "fleet",
                    "-i",
                    str(f.inventory),
                    "--ssh-config",
                    str(f.client_config),
                    "--db",
                    db,
                    "--throughput",
                    "--size",
                    "16M",
                    "--rounds",
                    "3",
                ],
            ):
                subprocess.run([*sb, *argv], stdout=subprocess.DEVNULL, check=False)


if __name__ == "__main__":
    main(sys.argv[1])
