"""Benchmark: the server's CPU without a cgroup (its listener's own and every reaped descendant's, from /proc), and
by process role from the kernel's exit records (taskstats), against its cgroup's, on the same logins, per embedded
server (issue 38; root, for the cgroup and the records).

Run:  .venv/bin/python benchmarks/bench_reaped_cpu.py [--logins 30] [--per-sample]

--per-sample (issue 58: the meter every command uses without root): each login, and each of TRANSFERS copies of
64 MiB (`cat > /dev/null`, as throughput's upload), read between the two meters as a sample is (`wait_idle`
first: the connection's processes reaped); prints the ratio of the sums (reaped / cgroup) per server and
command, and the median per-sample difference (the /proc meter counts in the kernel's 10 ms ticks).

For each embedded server: start it, read both meters and start reading exit records, run LOGINS `ssh ... true` one
after another, wait until the server is idle, read both again; print each meter's CPU per login and their ratio
(reaped / cgroup), then the records by role (the listener's own from /proc) and their sum's share of the cgroup's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from typing import Any

from sshbench.jobs.loadstore import RoleMeter
from sshbench.measure.exits import ExitWatch
from sshbench.targets.servers import registry

SERVERS = ("openssh", "dropbear", "tinyssh", "gossh")
TRANSFERS, MIB = 8, 64


def per_sample(server: Any, argv: list[str], stdin: bytes | None, count: int) -> tuple[float, float, float]:
    """Run `count` samples of argv, each read by both meters after `wait_idle`; return (ratio of the sums, median
    per-sample |difference| in ms, cgroup's CPU per sample in ms)."""
    groups, reaps = [], []
    for _ in range(count):
        g0, r0 = server.cpu_seconds(), server.reaped_cpu_seconds()
        subprocess.run(argv, input=stdin, check=True, capture_output=True)
        server.wait_idle()
        groups.append(server.cpu_seconds() - g0)
        reaps.append(server.reaped_cpu_seconds() - r0)
    diffs = [abs(r - g) * 1000 for r, g in zip(reaps, groups, strict=True)]
    return sum(reaps) / sum(groups), statistics.median(diffs), statistics.median(groups) * 1000


def main_per_sample(servers: list[str], logins: int) -> None:
    """Print the /proc meter against the cgroup's, per server and command, on the same samples."""
    print("| server | command | samples | cgroup CPU per sample (median) | reaped / cgroup (sums) | median |diff| |")
    print("|---|---|---:|---:|---:|---:|")
    payload = bytes(MIB << 20)
    for name in servers:
        server = registry.make_server(name if ":" in name else f"local:{name}")
        with server as target:
            time.sleep(0.3)
            ssh = ["ssh", *target.options, target.destination]
            for what, argv, stdin, count in (
                ("login (`true`)", [*ssh, "true"], None, logins),
                (f"upload {MIB} MiB", [*ssh, "cat > /dev/null"], payload, TRANSFERS),
            ):
                ratio, diff, cpu = per_sample(server, argv, stdin, count)
                print(f"| {name} | {what} | {count} | {cpu:.1f} ms | {ratio:.3f} | {diff:.1f} ms |")


def main() -> None:
    """Measure both meters per server and print them side by side."""
    p = argparse.ArgumentParser()
    p.add_argument("--logins", type=int, default=30)
    p.add_argument("--servers", default=",".join(SERVERS), help="comma-separated registry names or local: specs")
    p.add_argument("--per-sample", action="store_true", help="both meters around each sample, per command")
    a = p.parse_args()
    if a.per_sample:
        main_per_sample(a.servers.split(","), a.logins)
        return
    watch = ExitWatch.open()
    if isinstance(watch, str):
        raise SystemExit(watch)
    for name in a.servers.split(","):
        server = registry.make_server(name if ":" in name else f"local:{name}")
        with server as target:
            time.sleep(0.3)  # the listener settled
            cgroup, reaped = server.cpu_seconds(), server.reaped_cpu_seconds()
            assert server.pid is not None
            roles = RoleMeter(watch, server, server.pid)
            for _ in range(a.logins):
                subprocess.run(["ssh", *target.options, target.destination, "true"], check=True, capture_output=True)
            server.wait_idle()
            time.sleep(0.2)  # the last connection's processes reaped
            after_cgroup, after_reaped = server.cpu_seconds(), server.reaped_cpu_seconds()
            by_role = {k.removeprefix("role_"): v / a.logins for k, v in roles.phases()}
        if None in (cgroup, reaped, after_cgroup, after_reaped):
            print(f"{name}: a meter read nothing (no cgroup: run as root)")
            continue
        by_group = (after_cgroup - cgroup) / a.logins  # type: ignore[operator]
        by_reaped = (after_reaped - reaped) / a.logins  # type: ignore[operator]
        print(
            f"{name}: cgroup {by_group * 1000:.2f} ms/login, reaped {by_reaped * 1000:.2f} ms/login, "
            f"ratio {by_reaped / by_group:.3f}"
        )
        cells = ", ".join(f"{k} {v * 1000:.2f}" for k, v in by_role.items() if v)
        print(f"  by role, ms/login: {cells}; records {sum(by_role.values()) / by_group:.0%} of the cgroup's")


if __name__ == "__main__":
    main()
