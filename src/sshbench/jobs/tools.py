"""The `tools` job: scp, sftp and rsync over ssh per cipher and direction, against the same copies with no SSH
at all (raw TCP with socat, an rsync daemon), all to and from an embedded server's tmpfs directory, with the
crypto ceiling of each cipher (`openssl speed`) on each side. Everything is stored as it is taken."""

from __future__ import annotations

import dataclasses
import os

from sshbench import leases
from sshbench.errors import ExitCode, SshbenchError
from sshbench.jobs.recording import Job
from sshbench.jobs.single import crypto_ceilings, emulated_link, open_target, require_connectable, target_environment
from sshbench.measure import budget
from sshbench.measure.costs import metered
from sshbench.measure.plan import check_requested, cipher_mac_pairs
from sshbench.measure.tools import SSH_TOOLS, Binaries, Plain, ToolSampler, plan_tools
from sshbench.model import JobOptions, is_local
from sshbench.records import Discovery
from sshbench.ssh import envinfo
from sshbench.ssh.discover import discover
from sshbench.ssh.proc import require_binary, run_quick
from sshbench.targets import cgroups, emulation, pinning
from sshbench.targets.plain import plain_servers

DEFAULT_CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")
TMPFS = "/dev/shm"


def binaries() -> Binaries:
    """Locate every tool, or fail naming the package."""
    return Binaries(
        ssh=require_binary("ssh", "openssh-client"),
        scp=require_binary("scp", "openssh-client"),
        sftp=require_binary("sftp", "openssh-client"),
        rsync=require_binary("rsync", "rsync"),
        socat=require_binary("socat", "socat"),
    )


def versions(bins: Binaries, openssh: str | None) -> dict[str, str]:
    """Return each tool's version line."""

    def first(argv: list[str], word: str) -> str:
        done = run_quick(argv)
        lines = (done.stdout + done.stderr).splitlines()
        return next((line.strip() for line in lines if word in line), "unknown")

    ssh_side = f"{openssh} (scp speaks SFTP; the embedded sshd serves it with internal-sftp)" if openssh else "unknown"
    return {"scp": ssh_side, "sftp": openssh or "unknown", "rsync": first([bins.rsync, "--version"], "version"),
            "socat": first([bins.socat, "-V"], "socat version")}  # fmt: skip


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
    if not is_local(opts.target):
        raise SshbenchError(
            f"`tools` copies to and from an embedded server, and {opts.target!r} is a remote host",
            place="sshbench tools",
            fix="use `sshbench tools` (or local:NAME); for a remote host, `sshbench throughput HOST` times the pipe",
            code=ExitCode.USAGE,
        )
    bins = binaries()
    emulated = emulation.apply(opts.emulate, remote=False)
    shm = TMPFS if os.access(TMPFS, os.W_OK) else None
    with (
        cgroups.contain(),
        emulated_link(opts, job.progress) as link,
        open_target(opts.target, bins.ssh, None, opts, link) as where,
        leases.private_dir("sshbench-client-", shm) as local,
        leases.private_dir("sshbench-server-", shm) as remote,
        plain_servers(remote, link, where.server, local) as plain,
        cgroups.limit_clients(opts.client_cpu) as client_limit,
    ):
        pinned = pinning.apply(opts.pin, [where.server] if where.server else [])
        disc = discover(bins.ssh, where.target)
        require_connectable(disc, where.target)
        pairs = choose_pairs(opts, disc)
        scenarios = plan_tools(opts.tools or SSH_TOOLS, pairs, opts.directions)
        if job.resume is None:
            found = budget.probe(bins.ssh, where.target, opts, local)
            job.plan_ready(budget.estimate(scenarios, opts, lambda sc: found))
        base = envinfo.collect(bins.ssh)
        env = target_environment(
            base,
            disc,
            where,
            link,
            emulation=emulated,
            pinning=pinned,
            client_limit=client_limit,
            crypto_ceilings=crypto_ceilings(job, [c for c, _ in pairs], where.server, always=True),
            tool_versions=versions(bins, base.openssh_client),
        )
        rec = job.record(opts.target, env)
        with rec.status():
            job.store.set_discovery(rec.run_id, disc)
            rec.register(scenarios)
            sampler = ToolSampler(bins, where.target, opts, local, remote, Plain(**dataclasses.asdict(plain)))
            rec.schedule(scenarios, metered(sampler, where.server, False), job.progress)
        return rec.run_id
