"""Benchmark: `sshbench tune` on a 1 Gbit/s, 100 ms path it is not told about, against plain ssh on the same path,
the same copy size, in the same run of the link (issue 55).

Run (root, /dev/net/tun, socat):  .venv/bin/python benchmarks/bench_tune_sized.py [--max-time 5m] [--rounds 6]
                                  [--check 10M:6,1G:3]

1. `sshbench tune testhost --direction down --max-time 5m` (an OpenSSH server behind a shaped link in network
   namespaces made here, reached through an ssh_config alias): the copy size it chose, each remedy's gain on it with
   its 95 % interval, and the gain it says for 10 MB and 1 GB copies.
2. Plain ssh over the same link, the same size: one connection (`head -c SIZE /dev/zero` to /dev/null) against N
   connections at once, each carrying SIZE/N (N = the connection counts tune measured), logins included, timed from
   the first spawn to the last exit; the rows in a fresh random order each round, the gain paired per round.
3. The check of what tune says for other sizes: plain ssh the same way at each --check size (SIZE:ROUNDS), beside
   tune's prediction for it, and tune's own check (its best remedy and the default copied at 10 MB in its run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "jobs"))

from test_tune import shaped_host  # the tests' own shaped host, so both measure the same thing

LINK = "1gbit,100ms"


def tune(config: Path, db: Path, budget: str) -> dict[str, Any]:
    """Run `sshbench tune testhost --direction down` and return its document."""
    argv = [sys.executable, "-m", "sshbench", "tune", "testhost", "--ssh-config", str(config), "--db", str(db)]
    argv += ["--direction", "down", "--max-time", budget, "--json"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=os.environ)
    print(f"tune: exit {done.returncode} after {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    if done.returncode not in (0, 9):
        raise SystemExit(f"tune failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def plain_copy(config: Path, size: int, n: int) -> float:
    """Return the seconds N plain ssh downloads of size/N bytes each take at once, first spawn to last exit."""
    part = size // n
    argv = ["ssh", "-F", str(config), "testhost", f"head -c {part} /dev/zero"]
    started = time.monotonic()
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(n)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit(f"plain ssh failed: {err.decode()[-500:]}")
    return time.monotonic() - started


def plain(config: Path, size: int, counts: list[int], rounds: int) -> dict[int, list[float]]:
    """Return each connection count's gain over one connection (time ratio), per round, rows shuffled per round."""
    gains: dict[int, list[float]] = {n: [] for n in counts}
    for r in range(rounds):
        order = [1, *counts]
        random.shuffle(order)
        took = {n: plain_copy(config, size, n) for n in order}
        for n in counts:
            gains[n].append(took[1] / took[n])
        print(
            f"plain {size / 1e6:.0f} MB round {r + 1}: " + ", ".join(f"{n}: {took[n]:.1f} s" for n in order),
            file=sys.stderr,
        )
    return gains


def pct(ratio: float) -> str:
    """Return a ratio as a change in %."""
    return f"{(ratio - 1) * 100:+.0f} %"


def verdict(v: dict[str, Any] | None) -> str:
    """Return a verdict's gain and interval."""
    if not v:
        return "-"
    return f"{pct(v['ratio'])} ({pct(v['low'])} .. {pct(v['high'])})"


def main() -> None:
    """Run tune, then plain ssh at tune's copy size; print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-time", default="5m")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--check", default="10M:6,1G:3", help="plain ssh at these sizes (MB or GB), SIZE:ROUNDS")
    args = parser.parse_args()
    checks = [
        (int(w[:-1]) * (10**9 if w[-1] == "G" else 10**6), int(r))
        for w, r in (c.split(":") for c in args.check.split(","))
    ]
    with tempfile.TemporaryDirectory(prefix="sbbench-") as tmp, shaped_host(Path(tmp), LINK) as config:
        doc = tune(config, Path(tmp) / "runs.db", args.max_time)
        (down,) = [f for f in doc["tune"]["findings"] if f["group"] == "download"]
        size = int(down["copy_bytes"])
        streams = {
            int(str(r["scenario"]["remedy"]).split("=")[1]): r
            for r in down["remedies"]
            if str(r["scenario"].get("remedy", "")).startswith("streams=")
        }
        counts = sorted(n for n in streams if n > 1)
        gains = plain(config, size, counts, args.rounds)
        checked = {at: plain(config, at, counts, rounds) for at, rounds in checks}
    bound = (down.get("bound") or {}).get("kind")
    print(f"tune's copy: {size / 2**20:.0f} MiB (bound: {bound}); {args.rounds} plain rounds at that size")
    print()
    print(
        "| connections | tune's gain on its copy (95 % interval) | plain ssh's gain, same size (median, range) "
        "| tune / plain | tune's 10 MB | tune's 1 GB |"
    )
    print("|---:|---|---|---:|---|---|")
    for n in counts:
        r, g = streams[n], gains[n]
        by = {s["bytes"]: s["verdict"] for s in r.get("by_size", [])}
        tuned = r["verdict"]["ratio"] if r["verdict"] else float("nan")
        median = statistics.median(g)
        print(
            f"| {n} | {verdict(r['verdict'])} | {pct(median)} ({pct(min(g))} .. {pct(max(g))}) "
            f"| {(tuned - 1) / (median - 1) * 100:.0f} % of the gain | {verdict(by.get(10**7))} "
            f"| {verdict(by.get(10**9))} |"
        )
    for n in counts:
        check = streams[n].get("check")
        if check:
            print(
                f"\ntune's own check, {n} connections at {check['bytes'] / 1e6:.0f} MB: predicted "
                f"{verdict(check['predicted'])}, its check copies measured {verdict(check['measured'])}: "
                f"{'holds' if check['holds'] else 'a failed check' if check['holds'] is False else 'not read'}"
            )
    print()
    print("| copy | connections | tune's prediction (95 % interval) | plain ssh measured (median, range) |")
    print("|---|---:|---|---|")
    for at, g_at in checked.items():
        for n in counts:
            by = {s["bytes"]: s["verdict"] for s in streams[n].get("by_size", [])}
            near = min(by, key=lambda b: abs(b - at)) if by else None
            said = f"{verdict(by[near])} at {near / 1e6:.0f} MB" if near else "-"
            g = g_at[n]
            print(
                f"| {at / 1e6:.0f} MB | {n} | {said} | {pct(statistics.median(g))} ({pct(min(g))} .. {pct(max(g))}) |"
            )


if __name__ == "__main__":
    main()
