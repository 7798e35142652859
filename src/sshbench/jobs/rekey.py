"""`interop --rekey`: every embedded OpenSSH server set to rekey each RekeyLimit bytes and to answer every login
with joboptions.REKEYS times that many bytes (sshd's ForceCommand: each client's own `true` moves them too), ssh
given the same limit, and one `ssh -v` login per server that counts the rekeys a login made. A server type
without the option is n/a, saying so; the libraries' drivers set no limit of their own (they rekey when the server
asks, which is what the soak tests)."""

from __future__ import annotations

import dataclasses
import subprocess

from sshbench.joboptions import ClientsOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.staging import Bench
from sshbench.measure.interop import LOGIN_LIMIT
from sshbench.model import Kind, Scenario
from sshbench.ssh.proc import run_quick
from sshbench.targets.servers import registry

NEWKEYS = "SSH2_MSG_NEWKEYS received"  # ssh -v's line for each key exchange that took effect (kex.c)


def server_options(limit: int) -> tuple[str, ...]:
    """Return the sshd_config options of a rekeying server (KEY=VALUE)."""
    return (f"RekeyLimit={limit}", f"ForceCommand=head -c {ClientsOptions(rekey=limit).payload} /dev/zero")


def client_options(limit: int | None) -> list[str]:
    """Return ssh's own options for the limit (none without one)."""
    return ["-o", f"RekeyLimit={limit}"] if limit else []


def rekeying(bench: Bench, limit: int) -> list[tuple[Scenario, str]]:
    """Put in place of every embedded OpenSSH endpoint one like it that rekeys at `limit`; return the servers of
    types without the option as rows not soaked, with why."""
    na = []
    for name, where in list(bench.endpoints.items()):
        caps = registry.capabilities(where.target.server) if where.server is not None else None
        if where.server is None or caps is None or not caps.options:
            product = where.server.product if where.server is not None else name
            why = f"unsupported: {product} has no RekeyLimit to set (sshbench cannot make it rekey sooner)"
            na.append((Scenario(Kind.LATENCY, server=name), why))
            del bench.endpoints[name]
            continue
        bench.endpoints[name] = dataclasses.replace(bench.configured(where, server_options(limit)), name=name)
    return na


def counted(bench: Bench, where: Endpoint, limit: int) -> str:
    """Log in once with `ssh -v` and return, in words, how many times the login rekeyed."""
    argv = where.target.argv(bench.ssh, ["-v", *client_options(limit)], "true")
    try:
        done = run_quick(argv, timeout=LOGIN_LIMIT)
    except subprocess.TimeoutExpired:
        return f"the checked login (ssh -v) did not end within {LOGIN_LIMIT:g} s"
    if done.returncode != 0:
        return f"the checked login (ssh -v) failed with exit status {done.returncode}"
    keys = sum(NEWKEYS in line for line in done.stderr.splitlines())
    moved = len(done.stdout)  # NUL bytes from /dev/zero: one character each
    return f"a login moved {moved:,} bytes and rekeyed {max(keys - 1, 0)} times after its first key exchange (ssh -v)"
