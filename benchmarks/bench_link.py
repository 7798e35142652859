"""How faithful the emulated links are, and what the delay line costs (root).

    sudo .venv/bin/python benchmarks/bench_link.py [--presets gbe wan long-fat 1gbit,0ms] [--repeats 3] [--json]
    PYTHON benchmarks/bench_link.py ...   as a normal user: the link in a user namespace of its own (issue 58)

Fidelity: each preset is built and verified `--repeats` times (in a rotating order) exactly as `--link` does
before a run; the table gives asked vs measured RTT (median TCP connect time) and rate each way (plaintext
TCP, parallel socat streams, read from the link device's byte counters), and how long building and checking
took. Harness cost, on a 1 Gbit/s, 0.5 ms link: the delay line's own latency (measured RTT minus twice the
calibrated delay) and its CPU time while it carries plaintext TCP at the full rate one way and both ways at
once (per GB carried, and as a share of one CPU).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from sshbench.targets.link import linkcheck, links, userns

TICK = 100  # clock ticks per second (CLK_TCK on Linux)


def cpu_seconds(pid: int) -> float:
    """Return user + system CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def fidelity(name: str) -> dict[str, float]:
    """Build and verify one link; return what was asked and measured."""
    spec = links.parse(name)
    started = time.monotonic()
    with linkcheck.verified(spec) as link:
        setup = time.monotonic() - started
        check = link.check
        assert check is not None
        return {
            "rtt_ms": check.rtt * 1e3,
            "up_MBps": check.up / 1e6,
            "down_MBps": check.down / 1e6,
            "asked_rtt_ms": spec.rtt * 1e3,
            "asked_MBps": spec.rate_bytes / 1e6,
            "setup_s": setup,
            "streams": check.streams,
        }


def harness_cost(seconds: float) -> dict[str, float]:
    """Measure the delay line's added latency and its CPU time at the full rate of a gbe link."""
    with linkcheck.verified(links.parse("gbe")) as link, linkcheck.listeners(link) as socat:
        assert link.delay_line is not None and link.check is not None and link.one_way is not None
        out: dict[str, float] = {"added_latency_ms": (link.check.rtt - 2 * link.one_way) * 1e3}
        address = link.server_address
        up = [socat, "-u", "OPEN:/dev/zero", f"TCP:{address}:{linkcheck.SINK_PORT}"]
        down = [socat, "-u", f"TCP:{address}:{linkcheck.SOURCE_PORT}", "OPEN:/dev/null"]
        for label, argvs in (("one_way", [up, up]), ("both_ways", [up, up, down, down])):
            dev = link.client_dev  # its counters from /proc/net/dev: a normal user's namespace is not sysfs's
            before = (
                cpu_seconds(link.delay_line.pid),
                linkcheck._counter(dev, "tx_bytes"),
                linkcheck._counter(dev, "rx_bytes"),
                time.monotonic(),
            )
            procs = [subprocess.Popen(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for a in argvs]
            time.sleep(seconds)
            after = (
                cpu_seconds(link.delay_line.pid),
                linkcheck._counter(dev, "tx_bytes"),
                linkcheck._counter(dev, "rx_bytes"),
                time.monotonic(),
            )
            for p in procs:
                p.terminate()
                p.wait(timeout=5)
            cpu, wall = after[0] - before[0], after[3] - before[3]
            carried = (after[1] - before[1]) + (after[2] - before[2])
            out[f"{label}_MBps"] = carried / wall / 1e6
            out[f"{label}_cpu_share"] = cpu / wall
            out[f"{label}_cpu_s_per_GB"] = cpu / (carried / 1e9)
        return out


def main() -> int:
    """Print the tables (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=["gbe", "wan", "long-fat"], help="presets or RATE,RTT")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each harness-cost transfer")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if userns.needed():  # a normal user: the same links, built in a user namespace (the delay line on packet sockets)
        userns.enter()
    presets = args.presets
    runs: dict[str, list[dict[str, float]]] = {p: [] for p in presets}
    for rep in range(args.repeats):
        for p in presets[rep % len(presets) :] + presets[: rep % len(presets)]:
            runs[p].append(fidelity(p))
            print(f"rep {rep + 1} {p}: {runs[p][-1]}", file=sys.stderr, flush=True)
    cost = harness_cost(args.seconds)
    result = {"fidelity": runs, "harness_cost_gbe": cost}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"Link fidelity, {args.repeats} builds per preset (median, and range)\n")
    print("| preset | asked | RTT ms measured | up MB/s | down MB/s | streams | build + check s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for p, rs in runs.items():

        def cell(key: str, fmt: str, rs: list[dict[str, float]] = rs) -> str:
            values = [r[key] for r in rs]
            return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"

        spec = links.parse(p)
        print(
            f"| {p} | {spec.describe().split(' (')[0]} = {spec.rate_bytes / 1e6:g} MB/s | {cell('rtt_ms', '.3g')} | "
            f"{cell('up_MBps', '.1f')} | {cell('down_MBps', '.1f')} | {rs[0]['streams']:.0f} | "
            f"{cell('setup_s', '.1f')} |"
        )
    print(f"\nDelay line on a gbe link: adds {cost['added_latency_ms']:.3f} ms RTT of its own (calibrated out);")
    for label in ("one_way", "both_ways"):
        share, per_gb = cost[f"{label}_cpu_share"], cost[f"{label}_cpu_s_per_GB"]
        print(
            f"  {label.replace('_', ' ')}: carried {cost[f'{label}_MBps']:.0f} MB/s with "
            f"{share:.0%} of one CPU ({per_gb:.2f} CPU s per GB)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
