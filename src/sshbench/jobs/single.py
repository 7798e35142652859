"""One measuring job against one target (run, algos, latency, throughput, sweep): target, discovery, planning,
scheduling. The job writes to the store as it goes and never prints; the CLI renders what was stored."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sshbench import leases
from sshbench.environment import Environment
from sshbench.errors import ExitCode, SshbenchError
from sshbench.jobs.recording import Job, Recording
from sshbench.measure import budget
from sshbench.measure.costs import metered
from sshbench.measure.plan import plan_scenarios
from sshbench.measure.samplers import ThroughputSampler, latency_sampler
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.model import JobOptions, Kind, Scenario, is_local
from sshbench.records import Discovery
from sshbench.ssh import audit, envinfo
from sshbench.ssh.destination import Target, resolve_remote
from sshbench.ssh.discover import discover
from sshbench.ssh.proc import require_binary
from sshbench.ssh.scratch import remote_stdout
from sshbench.targets import ceilings, cgroups, emulation, links, pinning
from sshbench.targets.base import LocalServer
from sshbench.targets.netns import EmulatedLink
from sshbench.targets.registry import make_server


@dataclass(frozen=True)
class Endpoint:
    """Where a job connects: the target, and the embedded server behind it (None for a remote host)."""

    ssh: str
    target: Target
    server: LocalServer | None


@contextlib.contextmanager
def open_target(
    spec: str, ssh: str, ssh_config: str | None = None, opts: JobOptions | None = None, link: EmulatedLink | None = None
) -> Iterator[Endpoint]:
    """Yield a fresh embedded server's endpoint for `local[:NAME]` (with the job's server emulation, CPU limit
    and link), else a remote destination's."""
    if is_local(spec):
        server = make_server(spec)
        if opts is not None:
            constrain(server, opts, link)
        with server as target:
            yield Endpoint(ssh, target, server)
    else:
        for name, asked, does in (
            ("--server-cpu", opts and opts.server_cpu, "limits an embedded server"),
            ("--link", opts and opts.link, "puts embedded servers behind an emulated link"),
        ):
            if asked is not None:
                raise SshbenchError(
                    f"{name} {does}, and the target is a remote host",
                    place=name,
                    fix=f"drop {name} (a remote server's CPU or network cannot be changed from here), "
                    "or use a local target",
                    code=ExitCode.USAGE,
                )
        yield Endpoint(ssh, resolve_remote(ssh, spec, ssh_config), None)


@contextlib.contextmanager
def emulated_link(opts: JobOptions, progress: Progress | None = None) -> Iterator[EmulatedLink | None]:
    """Build and verify the job's emulated link for embedded servers (None without --link); remove it after."""
    if opts.link is None or not all(is_local(t) for t in (opts.target, *opts.servers)):
        yield None  # a remote target with --link is refused by open_target, naming the option
        return
    if progress is not None:
        progress.update(f"building and checking the emulated link ({opts.link})", 0, 1)
    with EmulatedLink(links.parse(opts.link)) as link:
        yield link


def constrain(server: LocalServer, opts: JobOptions, link: EmulatedLink | None = None) -> None:
    """Give an embedded server the job's emulated CPU (its environment), CPU limit and link, before it starts."""
    server.environment = emulation.server_environment(opts.emulate)
    server.cpu_share = opts.server_cpu
    if link is not None:
        server.address = link.server_address
        server.wrappers.append(link.wrap)  # outermost: the server and everything it runs are inside


def ceilings_wanted(job: Job, ciphers: list[str], always: bool = False) -> bool:
    """Return True when a new run measures crypto ceilings: under a link, a CPU limit or an emulated CPU (or
    `always`)."""
    opts = job.opts
    constrained = opts.link or opts.server_cpu or opts.client_cpu or opts.emulate
    return job.resume is None and bool(ciphers) and bool(constrained or always)


def setup_seconds(job: Job, ciphers: list[str], always: bool = False) -> tuple[float, str]:
    """Return the set-up inside the budget, in seconds and in words: what the job spent so far (the link and its
    check, discovery, the probes) and the crypto ceilings still to measure."""
    wanted = ceilings_wanted(job, ciphers, always)
    what = [*(["link check"] if job.opts.link else []), "discovery", "probes", *(["crypto ceilings"] if wanted else [])]
    return job.elapsed() + (ceilings.duration(ciphers) if wanted else 0.0), ", ".join(what)


def crypto_ceilings(job: Job, ciphers: list[str], where: Endpoint, always: bool = False) -> dict[str, dict[str, float]]:
    """Measure each cipher's crypto ceiling per side for a new run under a link, a CPU limit or an emulated CPU
    (or `always`); a remote host's side over ssh."""
    if not ceilings_wanted(job, ciphers, always):
        return {}
    job.progress.update("measuring crypto ceilings (openssl speed, each side under its limits)", 0, 1)
    if where.server is not None:
        return ceilings.measure(ciphers, where.server)
    return ceilings.measure(ciphers, None, remote=lambda command: remote_stdout(where.ssh, where.target, command))


def target_environment(
    base: Environment, disc: Discovery, where: Endpoint, link: EmulatedLink | None, **more: Any
) -> Environment:
    """Return the run's environment: this machine (`base`), the target and its server, the link, and `more`."""
    return dataclasses.replace(
        base,
        server_banner=disc.server.banner if disc.server else None,
        target=where.target.describe(),
        embedded=where.server.info() if where.server else None,
        link=link.info() if link else None,
        **more,
    )


def require_connectable(disc: Discovery, target: Target) -> None:
    """Fail before measuring when even the default client profile cannot log in."""
    profile = disc.profiles[0]
    if profile.negotiated is not None:
        return
    reason = profile.failure or "unknown"
    if disc.server is None and disc.server_error:
        reason += f"; reading its KEXINIT: {disc.server_error.removeprefix(audit.PROBE_FAILED)}"
    code = ExitCode.CONNECTION_FAILED
    fix = f"check that the host is reachable and runs an SSH server: {target.ssh_hint()}"
    if "Permission denied" in reason:
        code, fix = ExitCode.AUTH_FAILED, "sshbench logs in with your keys or agent: ssh-copy-id or ssh-add"
    elif "Host key verification failed" in reason:
        fix = "connect once with plain ssh to check and accept the host key (sshbench never skips that check)"
    raise SshbenchError(f"cannot log in: {reason}", place=target.describe(), fix=fix, code=code)


def require_reachable(disc: Discovery, target: Target) -> None:
    """Fail before storing anything when the server answers neither the KEXINIT probe nor a login."""
    if disc.server is None and disc.profiles[0].negotiated is None:
        require_connectable(disc, target)


def run_job(job: Job) -> int:
    """Run (or resume) a job against one target; every sample is stored as it is taken. Return the run id."""
    opts = job.opts
    ssh = require_binary("ssh", "openssh-client")
    emulated = emulation.apply(opts.emulate, remote=not is_local(opts.target))  # before any ssh/sshd starts
    with (
        cgroups.contain(),  # every ssh client is killed with sshbench
        emulated_link(opts, job.progress) as link,
        open_target(opts.target, ssh, opts.ssh_config, opts, link) as where,
        leases.private_dir("sshbench-payload-") as tmp,
        cgroups.limit_clients(opts.client_cpu) as client_limit,
    ):
        pinned = pinning.apply(opts.pin, [where.server] if where.server else [])
        disc = discover(ssh, where.target)
        require_reachable(disc, where.target)
        lat, thr = plan_scenarios(opts, disc)  # bad algorithm names fail here, before a run is stored
        if opts.measures:
            require_connectable(disc, where.target)
            if job.resume is None:
                found = budget.probe(ssh, where.target, opts, tmp)
                setup, what = setup_seconds(job, [sc.cipher for sc in thr if sc.cipher])
                job.plan_ready(budget.estimate([*lat, *thr], opts, lambda sc: found, setup, what))
        env = target_environment(
            envinfo.collect(ssh),
            disc,
            where,
            link,
            emulation=emulated,
            pinning=pinned,
            client_limit=client_limit,
            crypto_ceilings=crypto_ceilings(job, [sc.cipher for sc in thr if sc.cipher], where),
        )
        rec = job.record(opts.target, env)
        with rec.status():
            job.store.set_discovery(rec.run_id, disc)
            if opts.measures:
                measure(rec, opts, (lat, thr), where, tmp, job.progress)
        return rec.run_id


def measure(
    rec: Recording,
    opts: JobOptions,
    planned: tuple[list[Scenario], list[Scenario]],
    where: Endpoint,
    workdir: Path,
    progress: Progress,
) -> None:
    """Schedule latency and throughput in one budget, interleaved, resuming from what the run already stored."""
    lat, thr = planned
    rec.register([*lat, *thr])
    takers: dict[Kind, Sampler] = {Kind.LATENCY: metered(latency_sampler(where.ssh, where.target), where.server, False)}
    sampler = ThroughputSampler(where.ssh, where.target, opts, workdir) if thr else None
    if sampler is not None:
        for sc in thr:
            sampler.prime(sc, rec.samples(sc))
        takers[Kind.THROUGHPUT] = metered(sampler, where.server, watch_memory=True)
    try:
        rec.schedule([*lat, *thr], by_kind(takers), progress)
    finally:
        if sampler is not None:
            sampler.cleanup()


def by_kind(takers: dict[Kind, Sampler]) -> Sampler:
    """Route each scenario to the sampler of its kind (one schedule, one budget for every kind)."""
    return lambda sc, rnd, warmup: takers[sc.kind](sc, rnd, warmup)
