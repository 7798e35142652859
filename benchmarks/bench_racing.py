"""Benchmark: the default `sshbench sweep` (embedded OpenSSH, 3-minute budget) with and without racing.

Run:  .venv/bin/python benchmarks/bench_racing.py [--runs 3] [--max-time 3m]

Runs alternate (race, no race, race, ...) so that drift on the machine hits both alike. Per run, over the
throughput rows (download and upload): how many there are, how many are resolved (leader, equivalent or slower
against their group's leader; the rest are inconclusive), how many have a 95 % CI within +-5 % of their median,
the samples of the top row and of the bottom row, and each direction's top group (the rows ranked =1). The last
lines say whether each mode named the same top group in every run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

GROUPS = ("download", "upload")


def sweep(db: Path, race: bool, max_time: str) -> dict[str, Any]:
    """Run one default sweep; return its run document."""
    argv = [sys.executable, "-m", "sshbench", "sweep", "--db", str(db), "--max-time", max_time, "--json"]
    done = subprocess.run([*argv, *([] if race else ["--no-race"])], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 9):  # 9: incomplete (the budget cut a row short), still measured
        raise SystemExit(f"sweep failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def _halfwidth(summary: dict[str, float]) -> float:
    """Return the 95 % CI's half-width relative to the median."""
    return (summary["ci_high"] - summary["ci_low"]) / 2 / summary["median"]


def _name(row: dict[str, Any]) -> str:
    """Return `cipher` or `cipher+MAC`."""
    mac = row["scenario"].get("mac")
    return str(row["scenario"]["cipher"]) + (f"+{mac}" if mac else "")


def measures(doc: dict[str, Any]) -> dict[str, Any]:
    """Return what the benchmark reports of one run."""
    rows = [r for g in GROUPS for r in doc["results"].get(g, []) if r["summary"]]
    within = [r for r in rows if _halfwidth(r["summary"]) <= 0.05]
    resolved = [r for r in rows if r["standing"] in ("leader", "equivalent", "slower")]
    top = {g: sorted(_name(r) for r in doc["results"].get(g, []) if r["summary"] and r["rank"] == 1) for g in GROUPS}
    n = [r["summary"]["n"] for r in rows]
    return {
        "rows": len(rows),
        "resolved": len(resolved),
        "within5": len(within),
        "top": top,
        "n_top": max(n, default=0),
        "n_min": min(n, default=0),
    }


def main() -> None:
    """Alternate racing and even sweeps; print a table and whether the top groups agree."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-time", default="3m")
    args = parser.parse_args()
    found: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="sbbench-") as tmp:
        for i in range(args.runs):
            for race in (True, False):
                found[race].append(measures(sweep(Path(tmp) / "runs.db", race, args.max_time)))
                mode = "race" if race else "even"
                print(f"run {i + 1} {mode}: {found[race][-1]}", file=sys.stderr, flush=True)
    print("| mode | run | throughput rows | resolved | CI within +-5 % | samples: most / fewest | top (=1) down; up |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for race in (True, False):
        for i, m in enumerate(found[race], 1):
            tops = "; ".join(", ".join(m["top"][g]) for g in GROUPS)
            print(
                f"| {'racing' if race else 'even'} | {i} | {m['rows']} | {m['resolved']} | {m['within5']} | "
                f"{m['n_top']} / {m['n_min']} | {tops} |"
            )
    for race in (True, False):
        same = all(m["top"] == found[race][0]["top"] for m in found[race])
        print(f"\n{'racing' if race else 'even'}: the same top group in every run: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()
