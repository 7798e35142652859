"""The `tools` job: scp, sftp and rsync over ssh per cipher and direction, to and from a tmpfs directory on the
server, with the crypto ceiling of each cipher (`openssl speed`) on each side. Against an embedded server, also the
same copies with no SSH at all (raw TCP with socat, an rsync daemon). Everything is stored as it is taken."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from sshbench.discovery import Discovery
from sshbench.joboptions import JobOptions, ToolsOptions
from sshbench.jobs.endpoints import Endpoint, require_connectable
from sshbench.jobs.recording import Job
from sshbench.jobs.single import crypto_ceilings, setup_seconds
from sshbench.jobs.staging import Staging
from sshbench.measure import budget
from sshbench.measure.plan import check_requested, cipher_mac_pairs
from sshbench.measure.tools import Binaries, plan_tools
from sshbench.model import SSH_TOOLS
from sshbench.ssh.proc import beside, require_binary, run_quick
from sshbench.ssh.scratch import RemoteScratch
from sshbench.targets.servers import registry

DEFAULT_CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")
TMPFS = "/dev/shm"


def binaries(ssh: str) -> Binaries:
    """Locate every tool (scp and sftp of the OpenSSH whose client is `ssh`), or fail naming the package."""
    return Binaries(
        ssh=ssh,
        scp=beside(ssh, "scp", "openssh-client"),
        sftp=beside(ssh, "sftp", "openssh-client"),
        rsync=require_binary("rsync", "rsync"),
        socat=require_binary("socat", "socat"),
    )


def versions(bins: Binaries, openssh: str | None, where: Endpoint, remote: Path | RemoteScratch) -> dict[str, str]:
    """Return each tool's version line (and, on a remote host, its rsync's and where the files are)."""
    scratch = remote if isinstance(remote, RemoteScratch) else None

    def first(text: str, word: str) -> str:
        return next((" ".join(line.split()) for line in text.splitlines() if word in line), "unknown")

    def local(argv: list[str], word: str) -> str:
        done = run_quick(argv)
        return first(done.stdout + done.stderr, word)

    caps = registry.capabilities(where.target.server or "openssh")
    serves = (
        "the host's SFTP server"
        if scratch
        else f"the embedded {caps.sftp}"
        if caps and caps.sftp
        else f"no SFTP server ({caps.name if caps else 'this server'} has none)"
    )
    out = {
        "scp": f"{openssh} (scp speaks SFTP to {serves})" if openssh else "unknown",
        "sftp": openssh or "unknown",
        "rsync": local([bins.rsync, "--version"], "version"),
    }
    if scratch is None:
        return out | {"socat": local([bins.socat, "-V"], "socat version")}
    return out | {
        "rsync on the host": first(scratch.run("rsync --version") or "", "version"),
        "host directory": scratch.path,
    }


def choose_pairs(opts: JobOptions, disc: Discovery) -> list[tuple[str, str | None]]:
    """Return the (cipher, MAC) pairs to copy with: the ciphers asked (validated), else AES-GCM and chacha20 where
    both sides have them; a non-AEAD cipher with the default MAC, or with each --mac given."""
    for kind, asked in (("cipher", opts.ciphers), ("mac", opts.macs)):
        check_requested(kind, asked, disc.client[kind], disc.server_lists().get(kind))
    shared = disc.shared("cipher")
    ciphers = opts.ciphers or tuple(c for c in DEFAULT_CIPHERS if c in shared) or shared[:1]
    default_mac = disc.preferred("mac") or ""
    return cipher_mac_pairs(ciphers, opts.macs, default_mac, "all" if opts.macs else "default")


def run_tools(job: Job) -> int:
    """Run (or resume) the file-copy comparison; return the run id."""
    opts = job.opts
    bins = binaries(job.ssh)
    shm = TMPFS if os.access(TMPFS, os.W_OK) else None
    staging = Staging((opts.target,), bins.ssh, workdir="sshbench-client-", tmpfs=shm)
    with job.stage(staging, opts, job.progress) as bench:
        where = bench.only
        disc = bench.discover(where)
        require_connectable(disc, where.target)
        pairs = choose_pairs(opts, disc)
        remote, plain = bench.stack.enter_context(bench.tool_dirs(where, shm))
        tools = opts.own_as(ToolsOptions).tools or SSH_TOOLS
        scenarios = plan_tools(tools, pairs, opts.directions, plain=plain is not None)
        if job.resume is None:
            found = bench.probe(where)
            setup, what = setup_seconds(job, [c for c, _ in pairs], always=True)
            job.plan_ready(budget.estimate(scenarios, opts, lambda sc: found, setup, what))
        ceilings = crypto_ceilings(job, bench, [c for c, _ in pairs], always=True)
        env = bench.environment(where, disc, crypto_ceilings=ceilings)
        env = dataclasses.replace(env, tool_versions=versions(bins, env.openssh_client, where, remote))
        rec = job.record(opts.target, env)
        with rec.status():
            job.store.set_discovery(rec.run_id, disc)
            rec.register(scenarios)
            rec.schedule(scenarios, bench.sampler(bench.copies(bins, where, remote, plain), where, False), job.progress)
        return rec.run_id
