"""Benchmark: the server's CPU without a cgroup (its listener's own and every reaped descendant's, from /proc), and
by process role from the kernel's exit records (taskstats), against its cgroup's, on the same logins, per embedded
server (issue 38; root, for the cgroup and the records).

Run:  .venv/bin/python benchmarks/bench_reaped_cpu.py [--logins 30]

For each embedded server: start it, read both meters and start reading exit records, run LOGINS `ssh ... true` one
after another, wait until the server is idle, read both again; print each meter's CPU per login and their ratio
(reaped / cgroup), then the records by role (the listener's own from /proc) and their sum's share of the cgroup's.
"""

from __future__ import annotations

import argparse
import subprocess
import time

from sshbench.jobs.loadstore import RoleMeter
from sshbench.measure.exits import ExitWatch
from sshbench.targets.servers import registry

SERVERS = ("openssh", "dropbear", "tinyssh", "gossh")


def main() -> None:
    """Measure both meters per server and print them side by side."""
    p = argparse.ArgumentParser()
    p.add_argument("--logins", type=int, default=30)
    p.add_argument("--servers", default=",".join(SERVERS), help="comma-separated registry names or local: specs")
    a = p.parse_args()
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
