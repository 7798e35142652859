"""Benchmark: start-up of `sshbench --help` and `sshbench <cmd> --help`, each in a fresh interpreter.

Run:  .venv/bin/python benchmarks/bench_startup.py [--reps 31] [--baseline DIR]

Variants run interleaved, one process at a time; the table gives the median wall time of each: `python -c
pass` (the floor), this tree's `--help`, `run --help` and `export --help`, and with `--baseline DIR` the
same for another checkout's `src/` (e.g. the commit before a change: `git worktree add /tmp/base <commit>`).
Two installs, both with PYTHONDONTWRITEBYTECODE=1 as on this machine (nothing is cached between runs):
- "compiled": this .venv as `scripts/setup` leaves it, libraries and both source trees compiled to bytecode;
- "as uv installs": a fresh venv from requirements.lock made by `uv pip install` (no bytecode) and copies of
  the source trees without bytecode, as `scripts/setup` left things before it compiled them.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = (["--help"], ["run", "--help"], ["export", "--help"])


def plain_install(workdir: Path, trees: dict[str, Path]) -> tuple[str, dict[str, Path]]:
    """Make a venv the way uv installs it (no bytecode) and copy the source trees; return its python and copies."""
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    venv = workdir / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    python, lock = str(venv / "bin" / "python"), str(ROOT / "requirements.lock")
    subprocess.run([uv, "pip", "install", "-q", "-p", python, "--require-hashes", "-r", lock], check=True)
    copies = {}
    for label, tree in trees.items():
        copies[label] = workdir / label.replace(" ", "-") / "src"
        shutil.copytree(tree, copies[label], ignore=shutil.ignore_patterns("__pycache__"))
    return python, copies


def once(python: str, args: list[str], tree: Path | None) -> float:
    """Return the wall time of one fresh interpreter running args (with `tree` first on sys.path)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    started = time.perf_counter()
    done = subprocess.run([python, *args], env=env, stdout=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{python} {args} exited {done.returncode}")
    return elapsed


def measure(installs: dict[str, tuple[str, dict[str, Path]]], reps: int) -> dict[tuple[str, str], list[float]]:
    """Time every variant under every install, interleaved; return (variant, install) -> seconds."""
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(reps):
        for install, (python, trees) in installs.items():
            times.setdefault(("python -c pass", install), []).append(once(python, ["-c", "pass"], None))
            for label, tree in trees.items():
                for args in COMMANDS:
                    name = f"{label}: sshbench {' '.join(args)}"
                    times.setdefault((name, install), []).append(once(python, ["-m", "sshbench", *args], tree))
    return times


def main() -> None:
    """Print a Markdown table of medians (ms) per variant and install."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=31)
    parser.add_argument("--baseline", type=Path, help="another checkout's src/ directory")
    args = parser.parse_args()
    trees = {"this tree": ROOT / "src", **({"baseline": args.baseline} if args.baseline else {})}
    for tree in trees.values():
        compileall.compile_dir(tree, quiet=1)
    with tempfile.TemporaryDirectory(prefix="sshbench-bench-startup-") as tmp:
        installs = {"compiled": (sys.executable, trees), "as uv installs": plain_install(Path(tmp), trees)}
        times = measure(installs, args.reps)
    names = list(dict.fromkeys(name for name, _ in times))
    print(f"| command | {' | '.join(f'median ms, {i}' for i in installs)} |")
    print("|---|" + "---|" * len(installs))
    for name in names:
        print(f"| {name} | {' | '.join(f'{1000 * statistics.median(times[(name, i)]):.0f}' for i in installs)} |")


if __name__ == "__main__":
    main()
