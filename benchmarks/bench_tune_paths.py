"""Benchmark: `sshbench tune` against hosts it does not own: an OpenSSH server behind a shaped link in a network
namespace made here, reached as a remote host through an ssh_config alias (sshbench is not told the link), and one
at a small CPU quota (issue 24).

Run (root, /dev/net/tun, socat):  .venv/bin/python benchmarks/bench_tune_paths.py [--max-time 3m]

Per case: the default's steady rate and what bounds it (with the kernel's RTT), the size of the default copy, every
remedy's gain against that copy with its 95 % interval (paired per round) and verdict, the fresh login against
the remedies for connections, and the lines `tune` pastes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "jobs"))

from test_tune import shaped_host  # the tests' own shaped host, so both measure the same thing

CASES = (  # (name, link, CPU quota, extra tune arguments); link "embedded": tune's own --link in the arguments
    ("100 Mbit/s, 20 ms", "100mbit,20ms", None, []),
    ("1 Gbit/s, 100 ms", "1gbit,100ms", None, ["--direction", "down"]),
    ("loopback, server at 15 % of a CPU", None, 0.15, ["--direction", "down"]),
    ("10 Mbit/s, 10 ms, text", "10mbit,10ms", None, ["--direction", "down", "--payload", "text"]),
    ("10 Mbit/s, 10 ms, random", "10mbit,10ms", None, ["--direction", "down", "--payload", "random"]),
    (
        "embedded Dropbear, 1 Gbit/s, 100 ms",
        "embedded",
        None,
        ["local:dropbear", "--link", "1gbit,100ms", "--direction", "up"],
    ),
)


def tune(config: Path | None, db: Path, budget: str, extra: list[str]) -> dict[str, Any]:
    """Run `sshbench tune testhost` (or the embedded target in `extra`, without a config) and return its document."""
    target = ["testhost", "--ssh-config", str(config)] if config else []
    argv = [sys.executable, "-m", "sshbench", "tune", *target, "--db", str(db), "--max-time", budget, "--json", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=os.environ)
    if done.returncode not in (0, 9):
        raise SystemExit(f"tune failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def _gain(remedy: dict[str, Any]) -> str:
    """Return one remedy's name, gain, interval and verdict."""
    sc, v = remedy["scenario"], remedy["verdict"]
    label = sc.get("cipher") or sc.get("kex") or sc.get("remedy")
    if v is None:
        return f"{label}: unpaired"
    pct = [(v[k] - 1) * 100 for k in ("ratio", "low", "high")]
    return f"{label} {pct[0]:+.0f} % ({pct[1]:+.0f} .. {pct[2]:+.0f}) {v['verdict']}"


def rows(name: str, doc: dict[str, Any]) -> list[str]:
    """Return the table lines of one case."""
    out = []
    medians = {
        json.dumps(r["scenario"], sort_keys=True): r["summary"]["median"]
        for g in doc["results"].values()
        for r in g
        if r["summary"]
    }
    for f in doc["tune"]["findings"]:
        default = medians.get(json.dumps(f["default"], sort_keys=True), 0.0)
        gains = "; ".join(_gain(r) for r in f["remedies"]) or "none measured"
        if f["group"] == "latency":
            out.append(f"| {name} | fresh login | {default * 1000:.0f} ms | - | - | - | {gains} |")
            continue
        bound = f["bound"] or {}
        ev = bound.get("evidence", {})
        rtt = ev.get("min_rtt_ms") or ev.get("rtt_ms") or "-"
        size = f"{f['copy_bytes'] / 1e6:.0f}" if f["copy_bytes"] else "-"
        out.append(f"| {name} | {f['group']} | {default:.1f} MB/s | {bound.get('kind')} | {rtt} | {size} | {gains} |")
    return out


def main() -> None:
    """Run every case; print a table and the pasted lines."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-time", default="3m")
    args = parser.parse_args()
    lines, pasted = [], []
    with tempfile.TemporaryDirectory(prefix="sbbench-") as tmp:
        for i, (name, link, quota, extra) in enumerate(CASES):
            case = Path(tmp) / str(i)
            case.mkdir()
            if link == "embedded":
                doc = tune(None, Path(tmp) / "runs.db", args.max_time, extra)
            else:
                with shaped_host(case, link, cpu_share=quota) as config:
                    doc = tune(config, Path(tmp) / "runs.db", args.max_time, extra)
            lines += rows(name, doc)
            pasted.append(f"{name}: {doc['tune']['paste']}")
            print(f"{name}: done", file=sys.stderr, flush=True)
    print(
        "| case | group | default (steady) | bound | kernel's RTT, ms | copy MB | each remedy against the default "
        "copy: gain (95 % interval) verdict |"
    )
    print("|---|---|---:|---|---:|---:|---|")
    print("\n".join(lines))
    print()
    print("\n".join(pasted))


if __name__ == "__main__":
    main()
