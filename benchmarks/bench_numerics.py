"""Benchmark: what the field's numerics from SciPy (src/sshbench/exact.py) cost a command, against the hand-written
ones they replaced (issue 53).

Run:  .venv/bin/python benchmarks/bench_numerics.py [--reps 11] [--baseline DIR]

Each variant is a fresh interpreter, one at a time, interleaved: the import of `scipy.special` (Student's t and the
Clopper-Pearson bound) and of `scipy.stats` (Fisher's test, and what a t from `scipy.stats` would have cost), and
a process's first racing decision's numerics (`t_sf` once) and a load step's bound (`upper_bound` once) from this
tree and, with `--baseline DIR`, from another checkout's `src/` (e.g. `git worktree add /tmp/base 4d5b66a`: its
`tdist` and `analyse/interop`). Then the cost of one call once imported, in this process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEW = {
    "import scipy.special": "import scipy.special",
    "import scipy.stats": "import scipy.stats",
    "first t_sf": "from sshbench.exact import t_sf; t_sf(2.0, 10)",
    "first upper_bound": "from sshbench.exact import upper_bound; upper_bound(3, 100)",
}
OLD = {
    "first t_sf": "from sshbench.tdist import t_sf; t_sf(2.0, 10)",
    "first upper_bound": "from sshbench.analyse.interop import upper_bound; upper_bound(3, 100)",
}


def once(code: str, tree: Path) -> float:
    """Return the wall time of a fresh interpreter running `code` with `tree` first on sys.path."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree)!r}); {code}"], check=True)
    return time.perf_counter() - started


def main() -> None:
    """Time every variant interleaved, then the per-call costs; print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--baseline", type=Path, help="another checkout's src/ (its tdist and analyse/interop)")
    args = parser.parse_args()
    variants = [("python -c pass", "pass", ROOT / "src")]
    variants += [(f"{name} (this tree)", code, ROOT / "src") for name, code in NEW.items()]
    if args.baseline:
        variants += [(f"{name} (baseline)", code, args.baseline) for name, code in OLD.items()]
    times: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    for _ in range(args.reps):
        for name, code, tree in variants:
            times[name].append(once(code, tree))
    print("| variant | median ms |\n|---|---:|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values) * 1000:.0f} |")
    sys.path.insert(0, str(ROOT / "src"))
    from sshbench.exact import fisher, t_sf, upper_bound

    t_sf(1.0, 3)
    for label, call in (
        ("t_sf(2.0, 10)", lambda: t_sf(2.0, 10)),
        ("upper_bound(3, 100)", lambda: upper_bound(3, 100)),
        ("fisher(3, 100, 9, 100)", lambda: fisher(3, 100, 9, 100)),
    ):
        each = min(timeit.repeat(call, number=200, repeat=5)) / 200
        print(f"| one call of {label}, imported | {each * 1e6:.0f} us |")


if __name__ == "__main__":
    main()
