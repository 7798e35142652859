"""The `servers` job: embedded OpenSSH, Dropbear, TinySSH (or any sshd by path) measured side by side.

All servers run at once on 127.0.0.1 (or behind one emulated link, --link) so that rounds interleave
across servers (slow drift on a shared machine hits every server alike). Per server: discovery (offer,
default and strict negotiation), memory per process role (idle, session, transfer), then latency per
profile x host-key type and throughput per cipher in both directions, each sample with the server's CPU
from its cgroup. Everything is stored as it is taken; `--resume` continues with freshly started servers.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from sshbench import hints, leases
from sshbench.errors import ExitCode, SshbenchError
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.single import constrain, emulated_link
from sshbench.measure import budget
from sshbench.measure.costs import metered
from sshbench.measure.memory import measure_states
from sshbench.measure.plan import ServerPlan, plan_server
from sshbench.measure.samplers import ThroughputSampler, latency_sampler
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.model import JobOptions, Kind, Sample, Scenario
from sshbench.records import Discovery, ServerReport
from sshbench.ssh import envinfo
from sshbench.ssh.destination import Target
from sshbench.ssh.discover import discover
from sshbench.ssh.proc import require_binary
from sshbench.targets import cgroups, emulation, pinning, registry
from sshbench.targets.base import LocalServer
from sshbench.targets.netns import EmulatedLink


@dataclass(frozen=True)
class Running:
    """One started embedded server with what discovery learned about it."""

    server: LocalServer
    target: Target
    discovery: Discovery


def _start_all(
    ssh: str,
    opts: JobOptions,
    specs: tuple[str, ...],
    stack: contextlib.ExitStack,
    progress: Progress,
    link: EmulatedLink | None = None,
) -> tuple[dict[str, Running], dict[str, ServerReport]]:
    """Start every available server; return the running ones and what to report about each."""
    running: dict[str, Running] = {}
    reports: dict[str, ServerReport] = {}
    for i, spec in enumerate(specs):
        name = registry.server_name(spec)
        hint = registry.missing(spec)
        if hint:
            reports[name] = ServerReport(name, spec, skipped=hint)
            continue
        progress.update(f"starting {name}", i, len(specs))
        server = registry.make_server(spec)
        constrain(server, opts, link)  # emulated CPU, CPU limit and link, before it starts
        try:
            target = stack.enter_context(server)
        except SshbenchError as exc:
            reports[name] = ServerReport(name, spec, failed=exc.cause)
            continue
        disc = discover(ssh, target)
        running[name] = Running(server, target, disc)
        reports[name] = ServerReport(name, spec, embedded=server.info(), discovery=disc)
    return running, reports


def run_servers(job: Job) -> int:
    """Run (or resume) the side-by-side comparison; return the run id."""
    opts, progress = job.opts, job.progress
    ssh = require_binary("ssh", "openssh-client")
    specs = tuple(registry.validate(s) for s in (opts.servers or registry.every()))
    emulated = emulation.apply(opts.emulate, remote=False)  # before any server starts
    with contextlib.ExitStack() as stack:
        stack.enter_context(cgroups.contain())  # clients die with sshbench
        tmp = stack.enter_context(leases.private_dir("sshbench-payload-"))
        link = stack.enter_context(emulated_link(opts, progress))
        running, reports = _start_all(ssh, opts, specs, stack, progress, link)
        client_limit = stack.enter_context(cgroups.limit_clients(opts.client_cpu))
        if not running:
            _none_started(reports)
        pinned = pinning.apply(opts.pin, [r.server for r in running.values()])
        plans = {name: plan_server(name, r.discovery, opts) for name, r in running.items() if r.discovery.default()}
        if job.resume is None and opts.measures:
            progress.update("probing what a connection and a transfer cost", 0, 1)
            probes = {name: budget.probe(ssh, running[name].target, opts, tmp) for name in plans}
            planned = [sc for p in plans.values() for sc in (*p.latency, *p.throughput)]
            what = ", ".join([*(["link check"] if opts.link else []), "starting the servers", "discovery", "probes"])
            job.plan_ready(budget.estimate(planned, opts, lambda sc: probes[sc.server or ""], job.elapsed(), what))
        env = dataclasses.replace(
            envinfo.collect(ssh),
            emulation=emulated,
            pinning=pinned,
            client_limit=client_limit,
            link=link.info() if link else None,
        )
        rec = job.record(" ".join(specs), env)
        with rec.status():
            job.store.set_servers(rec.run_id, list(reports.values()))
            _memory(rec, ssh, running, reports, progress)
            _measure(rec, opts, ssh, running, plans, tmp, progress)
        return rec.run_id


def _none_started(reports: dict[str, ServerReport]) -> None:
    """Fail naming why no server could be started (not installed, or did not start)."""
    reasons = "; ".join(f"{name}: {r.skipped or r.failed}" for name, r in reports.items())
    skipped_only = all(r.skipped for r in reports.values())
    skipped = [r.skipped or "" for r in reports.values()]
    fixes = [f"run it as root: `{hints.as_root()}`"] if any("needs root" in s for s in skipped) else []
    fixes += ["install what is missing, as each reason says"] if any("not found" in s for s in skipped) else []
    fixes += ["give local:sshd= the absolute path of an executable sshd"] if any(
        "not an executable" in s for s in skipped) else []  # fmt: skip
    fixes += ["see why each server did not start, above"] if not skipped_only else []
    raise SshbenchError(
        f"no embedded server could be started ({reasons or 'none requested'})",
        place="sshbench servers",
        fix="; or ".join([*fixes, "name servers that can run here"]),
        code=ExitCode.MISSING_BINARY if skipped_only else ExitCode.SERVER_START,
    )


def _memory(
    rec: Recording, ssh: str, running: dict[str, Running], reports: dict[str, ServerReport], progress: Progress
) -> None:
    """Take each server's memory snapshots once (a resumed run keeps those already stored)."""
    done = {m.server for m in rec.store.memory(rec.run_id)}
    for i, (name, r) in enumerate(running.items()):
        if name in done or r.discovery.default() is None:
            continue
        progress.update(f"memory: {name} idle, in a session, in a transfer", i, len(running))
        records, problems = measure_states(ssh, r.server, r.target)
        rec.store.add_memory(rec.run_id, records)
        if problems:
            reports[name] = dataclasses.replace(reports[name], memory_problems=tuple(problems))
            rec.store.set_servers(rec.run_id, list(reports.values()))


def _measure(
    rec: Recording,
    opts: JobOptions,
    ssh: str,
    running: dict[str, Running],
    plans: dict[str, ServerPlan],
    workdir: Path,
    progress: Progress,
) -> None:
    """Interleave latency and throughput across servers in one budget, resuming from stored samples."""
    lat = [sc for p in plans.values() for sc in p.latency]
    thr = [sc for p in plans.values() for sc in p.throughput]
    rec.register([*lat, *thr], [u for p in plans.values() for u in p.unsupported])
    takers = {
        (name, Kind.LATENCY): metered(latency_sampler(ssh, r.target), r.server, False) for name, r in running.items()
    }
    if thr:  # a throughput sampler may stage a payload file: only when there are transfers
        samplers = {name: ThroughputSampler(ssh, r.target, opts, workdir) for name, r in running.items()}
        for sc in thr:
            if sc.server is not None:
                samplers[sc.server].prime(sc, rec.samples(sc))
        takers |= {(n, Kind.THROUGHPUT): metered(samplers[n], r.server, watch_memory=True) for n, r in running.items()}
    rec.schedule([*lat, *thr], _dispatch(takers), progress)


def _dispatch(takers: dict[tuple[str, Kind], Sampler]) -> Sampler:
    """Route each scenario to its server's sampler of its kind."""

    def take(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take a sample on the scenario's server."""
        assert sc.server is not None
        return takers[(sc.server, sc.kind)](sc, rnd, warmup)

    return take
