"""How sshbench meets hostile and broken servers: exit status, seconds, and the one line it prints.

    .venv/bin/python benchmarks/bench_hostile.py

Runs `sshbench algos` and `sshbench latency` against each misbehaving loopback server of tests/hostile.py
(silent, garbage, endless pre-banner lines, a banner line that never ends, a truncated KEXINIT, a KEXINIT
whose name-list claims 4 GB, a packet that claims 2 GB, a hang-up after the banner), one at a time, in a
private HOME, and prints a Markdown table.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hostile import MODES, hostile_server  # the test suite's servers, found through the path above


def attempt(env: dict[str, str], mode: str, command: str) -> tuple[int, float, str]:
    """Run one command against one hostile server; return (exit status, seconds, stderr's last line)."""
    with hostile_server(mode) as port:
        started = time.monotonic()
        argv = [sys.executable, "-m", "sshbench", command, f"127.0.0.1:{port}"]
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, check=False
        )
        lines = done.stderr.strip().splitlines()
        return done.returncode, time.monotonic() - started, (lines[-1] if lines else "")


def main() -> int:
    """Print the table."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as home:
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSHBENCH_DB")}
        env.update(HOME=home, XDG_DATA_HOME=f"{home}/data", XDG_STATE_HOME=f"{home}/state")
        print("| server | command | exit | seconds | what sshbench says (after `cannot log in:`) |")
        print("|---|---|---:|---:|---|")
        for mode in MODES:
            for command in ("algos", "latency"):
                code, seconds, line = attempt(env, mode, command)
                said = line.split("cannot log in: ", 1)[-1].split(" (remote host")[0]
                print(f"| {mode} | {command} | {code} | {seconds:.1f} | {said} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
