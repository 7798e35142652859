"""Benchmark: `sshbench load` against `sshbench latency` on the embedded OpenSSH, and a 1 s stall inside a step
(issue 38).

Run:  .venv/bin/python benchmarks/bench_load.py [--rounds 3]

1. Agreement, far below the knee: ROUNDS rounds, each `sshbench latency` (5 samples) then `sshbench load --rate 2
   --step-time 5s --generator openssh`, both pinned to curve25519-sha256 / ssh-ed25519, each on a fresh embedded
   server; prints latency's median, load's p50 and their ratio per round, and the median ratio.
2. The stall: `sshbench load --rate 20 --step-time 10s` with each generator, the server's listener stopped (SIGSTOP)
   6 s into the step for 1 s, then continued (SIGCONT); prints p50, p90, p99, max and the generator's CPU per login.
3. The same stall measured closed-loop, for contrast: `sshbench latency --rounds 80` (one login after another, as
   the SSH load tools that exist measure), the listener stopped 6 s after it appeared; prints p50, p99, max and how
   many logins took over 500 ms, beside the open-loop step's count.
Only processes this script started (and their children) are signalled.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

PIN = ["--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519"]


def sshbench(db: Path, *args: str) -> dict:  # type: ignore[type-arg]
    """Run sshbench with --json and return its document."""
    done = subprocess.run(
        [sys.executable, "-m", "sshbench", *args, *PIN, "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def listener(pid: int) -> psutil.Process | None:
    """Return the embedded sshd listener among a process's descendants."""
    for p in psutil.Process(pid).children(recursive=True):
        try:
            if p.name() == "sshd" and p.parent() is not None and p.parent().name() != "sshd":
                return p
        except psutil.NoSuchProcess:
            continue
    return None


def stalled(db: Path, generator: str) -> dict:  # type: ignore[type-arg]
    """Run a 10 s step at 20/s whose server stops for 1 s, 6 s in; return the run document."""
    argv = [sys.executable, "-m", "sshbench", "load", "--rate", "20", "--step-time", "10s", "--generator", generator]
    return _stall(db, argv)


def _stall(db: Path, argv: list[str]) -> dict:  # type: ignore[type-arg]
    """Run a command whose embedded server's listener stops for 1 s, 6 s after it appeared; return its document."""
    proc = subprocess.Popen([*argv, *PIN, "--db", str(db), "--json"], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while (sshd := listener(proc.pid)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if sshd is None:
        proc.kill()
        raise SystemExit("the embedded server was not found")
    time.sleep(6)
    sshd.send_signal(signal.SIGSTOP)
    time.sleep(1)
    sshd.send_signal(signal.SIGCONT)
    out, _ = proc.communicate(timeout=120)
    return json.loads(out)  # type: ignore[no-any-return]


def values(doc: dict) -> list[float]:  # type: ignore[type-arg]
    """Return every successful, measured login's seconds in a run document."""
    return [s["value"] for e in doc["samples"] for s in e["samples"] if s["ok"] and not s["warmup"]]


def slow(seconds: list[float]) -> str:
    """Return how many of the logins took over 500 ms."""
    return f"{sum(v > 0.5 for v in seconds)} of {len(seconds)} logins over 500 ms"


def main() -> None:
    """Measure both, print what each gave."""
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="sbbench-") as work:
        db = Path(work) / "load.db"
        ratios = []
        for rnd in range(a.rounds):
            lat = sshbench(db, "latency", "--rounds", "5", "--max-rounds", "5", "--no-race")
            median = lat["results"]["latency"][0]["summary"]["median"]
            step = sshbench(db, "load", "--rate", "2", "--step-time", "5s", "--generator", "openssh")["load"]
            p50 = step["steps"][0]["percentiles"]["p50"]
            ratios.append(p50 / median)
            said = f"latency median {median * 1000:.1f} ms, load p50 {p50 * 1000:.1f} ms"
            print(f"round {rnd + 1}: {said}, ratio {p50 / median:.3f}")
        print(f"load p50 / latency median: median {statistics.median(ratios):.3f} over {a.rounds} rounds")
        for generator in ("openssh", "go"):
            doc = stalled(db, generator)
            s = doc["load"]["steps"][0]
            q = s["percentiles"]
            print(
                f"stall, {generator}: {s['logins']} logins, {s['failures']} failed, p50 {q['p50'] * 1000:.1f}, "
                f"p90 {q['p90'] * 1000:.1f}, p99 {q['p99'] * 1000:.1f}, max {s['max'] * 1000:.1f} ms; generator "
                f"CPU {s['generator_cpu_per_login'] * 1000:.1f} ms/login; {slow(values(doc))}"
            )
        argv = [sys.executable, "-m", "sshbench", "latency", "--rounds", "80", "--max-rounds", "80", "--no-race"]
        closed = values(_stall(db, [*argv, "--warmup", "0"]))
        q = statistics.quantiles(closed, n=100, method="inclusive")
        print(
            f"stall, closed loop (sshbench latency): p50 {q[49] * 1000:.1f}, p99 {q[98] * 1000:.1f}, max "
            f"{max(closed) * 1000:.1f} ms; {slow(closed)}"
        )


if __name__ == "__main__":
    main()
