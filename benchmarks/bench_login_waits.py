"""Benchmark: the delayed-ACK waits `sshbench latency` names inside a login's authentication phase, against a packet
capture of the same logins (issue 55).

Run (root, tcpdump):  .venv/bin/python benchmarks/bench_login_waits.py [--max-time 60s] [--quickack 3]

`tcpdump -i lo -tt -n tcp` runs (this process's child, stopped by PID) while `sshbench latency --kex
curve25519-sha256 --hostkey ssh-ed25519` measures the embedded default on loopback. Each TCP connection of the
capture that carries an SSH login is read for its pauses: a gap of 30 ms or more between two packets, before the
connection's last 3 packets (its close). Printed: sshbench's split (its medians, the waits it names) and the
capture's pauses per login (their count, and the median of the first and second).

With --quickack N: the remedy measured. Two network namespaces made here, each with its own loopback, one whose
local routes carry `quickack 1`; `sshbench latency` runs in each in turn, N times, and the logins of the two are
compared (medians, and B/A unpaired with its 95 % interval: sshbench.ratios.unpaired_ratio).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAUSE = 0.030  # a gap between two packets of a login this long or longer is a pause
LINE = re.compile(r"^(\d+\.\d+) IP (\S+)\.(\d+) > (\S+)\.(\d+): Flags \[([^\]]*)\].*length (\d+)")


def connections(text: str) -> dict[tuple[int, int], list[tuple[float, int, int]]]:
    """Return each connection's packets (time, source port, payload length), keyed by its two ports."""
    out: dict[tuple[int, int], list[tuple[float, int, int]]] = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            t, sport, dport, length = float(m.group(1)), int(m.group(3)), int(m.group(5)), int(m.group(7))
            out.setdefault((min(sport, dport), max(sport, dport)), []).append((t, sport, length))
    return out


def pauses(packets: list[tuple[float, int, int]]) -> list[float]:
    """Return a login's pauses (seconds), in order, up to its last 3 packets."""
    times = [p[0] for p in packets[:-3]]
    return [b - a for a, b in itertools.pairwise(times) if b - a >= PAUSE]


def namespace(name: str, quickack: bool) -> None:
    """Make a network namespace with its loopback up (its local routes with quickack 1 when asked)."""
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True)
    for route in ("127.0.0.0/8", "127.0.0.1") if quickack else ():
        change = ["ip", "route", "change", "local", route, "dev", "lo", "table", "local", "proto", "kernel"]
        change += ["scope", "host", "src", "127.0.0.1", "quickack", "1"]
        subprocess.run(["ip", "netns", "exec", name, *change], check=True)


def logins_in(name: str, db: Path, budget: str) -> list[tuple[float, float]]:
    """Run `sshbench latency` in a namespace; return its measured logins (seconds, auth phase seconds)."""
    argv = ["ip", "netns", "exec", name, sys.executable, "-m", "sshbench", "latency", "--kex", "curve25519-sha256"]
    argv += ["--hostkey", "ssh-ed25519", "--max-time", budget, "--db", str(db), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=os.environ)
    if done.returncode != 0:
        raise SystemExit(f"latency in {name} failed: {done.stderr[-1000:]}")
    doc = json.loads(done.stdout)
    return [
        (s["value"], s["phases"].get("auth", 0.0))
        for st in doc["samples"]
        for s in st["samples"]
        if not s["warmup"] and s["ok"]
    ]


def quickack(times: int, budget: str) -> None:
    """Measure logins with and without quickack on loopback, in turn; print both and B/A."""
    from sshbench.ratios import unpaired_ratio

    names = {False: f"sbwaits-{os.getpid()}-a", True: f"sbwaits-{os.getpid()}-q"}
    got: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    try:
        for quick, name in names.items():
            namespace(name, quick)
        with tempfile.TemporaryDirectory(prefix="sbwaits-") as tmp:
            for i in range(times):
                for quick, name in names.items():
                    got[quick] += logins_in(name, Path(tmp) / f"{name}.db", budget)
                print(f"quickack round {i + 1} of {times}", file=sys.stderr, flush=True)
    finally:
        for name in names.values():
            subprocess.run(["ip", "netns", "del", name], check=False)
    for quick, rows in got.items():
        login = statistics.median(r[0] for r in rows) * 1e3
        auth = statistics.median(r[1] for r in rows) * 1e3
        name = "quickack 1" if quick else "as set up"
        print(f"{name}: {len(rows)} logins, median {login:.1f} ms, auth phase {auth:.1f} ms")
    for what, i in (("login", 0), ("auth phase", 1)):
        r = unpaired_ratio([x[i] for x in got[False]], [x[i] for x in got[True]])
        if r is not None:
            print(f"quickack / as set up, {what}: {r.value:.3f} (95 % interval {r.low:.3f} .. {r.high:.3f})")


def main() -> None:
    """Capture, measure, compare."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-time", default="60s")
    parser.add_argument("--quickack", type=int, default=0, help="also measure quickack, this many runs a side")
    args = parser.parse_args()
    if args.quickack:
        quickack(args.quickack, "30s")
    with tempfile.TemporaryDirectory(prefix="sbwaits-") as tmp:
        capture = Path(tmp) / "lo.txt"
        with open(capture, "w") as out:
            dump = subprocess.Popen(
                ["tcpdump", "-i", "lo", "-tt", "-n", "-l", "tcp"], stdout=out, stderr=subprocess.DEVNULL
            )
        time.sleep(1.0)
        argv = [sys.executable, "-m", "sshbench", "latency", "--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519"]
        argv += ["--max-time", args.max_time, "--db", str(Path(tmp) / "runs.db")]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, env=os.environ)
        shown = subprocess.run(
            [sys.executable, "-m", "sshbench", "show", "last", "--db", str(Path(tmp) / "runs.db"), "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        time.sleep(0.5)
        dump.send_signal(signal.SIGINT)  # our own child, by PID
        dump.wait(timeout=10)
        text = capture.read_text()
    print("\n".join(line for line in done.stdout.splitlines() if "key exchange (ms" in line or "delayed-ACK" in line))
    logins = [
        p for p in connections(text).values() if any(length > 0 and length < 60 for _, _, length in p) and len(p) >= 20
    ]
    found = [pauses(p) for p in logins]
    counts = [len(f) for f in found]
    print(f"capture: {len(logins)} SSH connections on lo; pauses >= {PAUSE * 1e3:.0f} ms a login: {counts}")
    for i in (0, 1):
        nth = [f[i] for f in found if len(f) > i]
        if nth:
            print(
                f"  pause {i + 1}: median {statistics.median(nth) * 1e3:.1f} ms over {len(nth)} logins "
                f"({min(nth) * 1e3:.1f} .. {max(nth) * 1e3:.1f})"
            )
    doc = json.loads(shown.stdout) if shown.returncode == 0 else {}
    phases = [s["phases"] for st in doc.get("samples", []) for s in st["samples"] if not s["warmup"] and s["ok"]]
    for name in ("auth.service", "session.channel", "auth", "session"):
        values = [p[name] for p in phases if name in p]
        if values:
            print(f"sshbench {name}: median {statistics.median(values) * 1e3:.1f} ms over {len(values)} logins")


if __name__ == "__main__":
    main()
