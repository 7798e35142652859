"""How long a fleet takes: a 20-host loopback fleet (14 OpenSSH, 3 Dropbear, 3 TinySSH embedded servers,
described as remote hosts by an Ansible inventory) measured with `sshbench fleet` at several --forks.

    .venv/bin/python benchmarks/bench_fleet.py [--hosts 20] [--forks 1,2,5,10] [--repeats 3] [--json]

Each repetition runs every --forks value once, in a rotating order (so a drift of the machine falls on all of
them alike), with the quick plan `--kex curve25519-sha256 --rounds 3 --max-rounds 3` (today's default kex and
curve25519: two rows per host); then one run with the default plan (every kex the policy allows, 5-10 rounds)
at --forks 5. Prints the median wall time per --forks, its ratio to --forks 1, and the median connection time
the fleet measured (all servers share this machine's cores, so more forks also slow each connection).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fleet_hosts import loopback_fleet  # the test suite's fleet, found through the path above

QUICK = ["--kex", "curve25519-sha256", "--rounds", "3", "--max-rounds", "3"]


def kinds(count: int) -> list[str]:
    """Return server kinds for `count` hosts: 70 % OpenSSH, 15 % each Dropbear and TinySSH."""
    small = max(count * 15 // 100, 1)
    return ["openssh"] * (count - 2 * small) + ["dropbear"] * small + ["tinyssh"] * small


def fleet_once(env: dict[str, str], inventory: Path, config: Path, forks: int, plan: list[str]) -> dict[str, float]:
    """Measure the fleet once; return wall seconds, hosts measured and their median connection time (ms)."""
    argv = [
        sys.executable,
        "-m",
        "sshbench",
        "fleet",
        "-i",
        str(inventory),
        "--ssh-config",
        str(config),
        "--forks",
        str(forks),
        *plan,
        "--json",
    ]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"fleet --forks {forks} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    hosts = json.loads(done.stdout)["analysis"]["hosts"]
    connects = [h["connect_s"]["median"] for h in hosts if h["connect_s"]]
    return {"wall_s": wall, "hosts": len(connects), "connect_ms": statistics.median(connects) * 1000}


def main() -> int:
    """Print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--forks", default="1,2,5,10")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    forks = [int(f) for f in args.forks.split(",")]
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSHBENCH_DB")}
        env.update(HOME=str(root / "home"), XDG_DATA_HOME=f"{tmp}/data", XDG_STATE_HOME=f"{tmp}/state")
        with loopback_fleet(root, root / "home", kinds(args.hosts), closed=0) as fleet:
            runs: dict[int, list[dict[str, float]]] = {f: [] for f in forks}
            for rep in range(args.repeats):
                for f in forks[rep % len(forks) :] + forks[: rep % len(forks)]:
                    runs[f].append(fleet_once(env, fleet.inventory, fleet.client_config, f, QUICK))
                    print(f"rep {rep + 1} --forks {f}: {runs[f][-1]['wall_s']:.1f} s", file=sys.stderr, flush=True)
            full = fleet_once(env, fleet.inventory, fleet.client_config, 5, [])
    result = {
        "hosts": args.hosts,
        "quick_plan": QUICK,
        "by_forks": {
            f: {
                "wall_s_median": statistics.median(r["wall_s"] for r in rs),
                "wall_s_all": [round(r["wall_s"], 1) for r in rs],
                "connect_ms_median": statistics.median(r["connect_ms"] for r in rs),
                "hosts_measured": min(r["hosts"] for r in rs),
            }
            for f, rs in runs.items()
        },
        "default_plan_forks_5": full,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    base = result["by_forks"][forks[0]]["wall_s_median"]
    print(f"{args.hosts}-host loopback fleet, plan {' '.join(QUICK)}, {args.repeats} repetitions (rotating order)\n")
    print(f"| --forks | wall s (median) | all runs | vs --forks {forks[0]} | connect ms (median of hosts) | hosts |")
    print("|---:|---:|---|---:|---:|---:|")
    for f, r in result["by_forks"].items():
        print(
            f"| {f} | {r['wall_s_median']:.1f} | {r['wall_s_all']} | {r['wall_s_median'] / base:.2f} | "
            f"{r['connect_ms_median']:.0f} | {r['hosts_measured']} |"
        )
    print(
        f"\nDefault plan at --forks 5: {full['wall_s']:.1f} s, {full['hosts']:.0f} hosts, "
        f"connect {full['connect_ms']:.0f} ms (median of hosts)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
