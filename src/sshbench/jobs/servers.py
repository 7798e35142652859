"""The `servers` job: embedded OpenSSH, Dropbear, TinySSH (or any sshd by path) measured side by side.

All servers run at once on 127.0.0.1 (or behind one emulated link, --link) so that rounds interleave
across servers (slow drift on a shared machine hits every server alike). Per server: discovery (offer,
default and strict negotiation), memory per process role (idle, session, transfer), then latency per
profile x host-key type and throughput per cipher in both directions, each sample with the server's CPU
from its cgroup. Everything is stored as it is taken; `--resume` continues with freshly started servers.
"""

from __future__ import annotations

import dataclasses

from sshbench import hints
from sshbench.discovery import Discovery
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench, Staging, Transfers
from sshbench.measure import budget
from sshbench.measure.plan import ServerPlan, plan_server
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.model import Kind, Scenario, is_local
from sshbench.records import ServerReport
from sshbench.samples import Sample
from sshbench.targets.servers import registry

REMOTE_MEMORY = (
    "memory per process role: not measured on a host of yours (sshbench does not own its processes); "
    "each transfer row has its session's peak RSS, as the session reported it over the login"
)


def _reports(
    bench: Bench, specs: tuple[str, ...], progress: Progress
) -> tuple[dict[str, Discovery], dict[str, ServerReport]]:
    """Discover every started server; return the discoveries and what to report about each server asked for, in
    the order asked."""
    found: dict[str, Discovery] = {}
    reports = {n: ServerReport(n, u.spec, skipped=u.skipped, failed=u.failed) for n, u in bench.unavailable.items()}
    for i, (name, where) in enumerate(bench.endpoints.items()):
        progress.update(f"discovery: {name}", i, len(bench.endpoints))
        found[name] = bench.discover(where)
        server = where.server  # None: a host of the user's
        reports[name] = ServerReport(
            name, server.spec if server else name, embedded=server.info() if server else None, discovery=found[name]
        )
    names = [registry.server_name(s) if is_local(s) else s for s in specs]
    return found, {n: reports[n] for n in dict.fromkeys(names) if n in reports}


def run_servers(job: Job) -> int:
    """Run (or resume) the side-by-side comparison; return the run id."""
    opts, progress = job.opts, job.progress
    ssh = job.ssh
    specs = tuple(registry.validate(s) if is_local(s) else s for s in (opts.servers or registry.every()))
    with job.stage(Staging(specs, ssh, tolerant=True), opts, progress) as bench:
        found, reports = _reports(bench, specs, progress)
        if not bench.endpoints:
            _none_started(reports)
        plans = {name: plan_server(name, disc, opts) for name, disc in found.items() if disc.default()}
        if job.resume is None and opts.measures:
            progress.update("probing what a connection and a transfer cost", 0, 1)
            probes = {name: bench.probe(bench.endpoints[name]) for name in plans}
            planned = [sc for p in plans.values() for sc in (*p.latency, *p.throughput)]
            what = ", ".join([*(["link check"] if opts.link else []), "starting the servers", "discovery", "probes"])
            job.plan_ready(budget.estimate(planned, opts, lambda sc: probes[sc.server or ""], job.elapsed(), what))
        rec = job.record(" ".join(specs), bench.environment())
        with rec.status():
            job.store.set_servers(rec.run_id, list(reports.values()))
            _memory(rec, bench, found, reports, progress)
            _measure(rec, opts, bench, plans, progress)
        return rec.run_id


def _none_started(reports: dict[str, ServerReport]) -> None:
    """Fail naming why no server could be started (not installed, or did not start)."""
    reasons = "; ".join(f"{name}: {r.skipped or r.failed}" for name, r in reports.items())
    skipped_only = all(r.skipped for r in reports.values())
    skipped = [r.skipped or "" for r in reports.values()]
    fixes = [f"run it as root: `{hints.as_root()}`"] if any("needs root" in s for s in skipped) else []
    fixes += ["install what is missing, as each reason says"] if any("not found" in s for s in skipped) else []
    fixes += (
        ["give local:sshd= the absolute path of an executable sshd"]
        if any("not an executable" in s for s in skipped)
        else []
    )
    fixes += ["see why each server did not start, above"] if not skipped_only else []
    raise SshbenchError(
        f"no embedded server could be started ({reasons or 'none requested'})",
        place="sshbench servers",
        fix="; or ".join([*fixes, "name servers that can run here"]),
        code=_refusal_code(skipped_only, skipped),
    )


def _refusal_code(skipped_only: bool, skipped: list[str]) -> ExitCode:
    """Return the exit code when no server started: a server that could not start when each only needs root here
    (nothing is missing), missing binary when each was skipped for a missing one, else a server that did not
    start."""
    if skipped_only and skipped and all("needs root" in s for s in skipped):
        return ExitCode.SERVER_START
    return ExitCode.MISSING_BINARY if skipped_only else ExitCode.SERVER_START


def _memory(
    rec: Recording, bench: Bench, found: dict[str, Discovery], reports: dict[str, ServerReport], progress: Progress
) -> None:
    """Take each server's memory snapshots once (a resumed run keeps those already stored)."""
    done = {m.server for m in rec.store.memory(rec.run_id)}
    for i, (name, where) in enumerate(bench.endpoints.items()):
        if name in done or found[name].default() is None:
            continue
        if where.server is None:
            reports[name] = dataclasses.replace(reports[name], memory_problems=(REMOTE_MEMORY,))
            rec.store.set_servers(rec.run_id, list(reports.values()))
            continue
        progress.update(f"memory: {name} idle, in a session, in a transfer", i, len(bench.endpoints))
        records, problems = bench.memory(where)
        rec.store.add_memory(rec.run_id, records)
        if problems:
            reports[name] = dataclasses.replace(reports[name], memory_problems=tuple(problems))
            rec.store.set_servers(rec.run_id, list(reports.values()))


def _measure(rec: Recording, opts: JobOptions, bench: Bench, plans: dict[str, ServerPlan], progress: Progress) -> None:
    """Interleave latency and throughput across servers in one budget, resuming from stored samples."""
    lat = [sc for p in plans.values() for sc in p.latency]
    thr = [sc for p in plans.values() for sc in p.throughput]
    rec.register([*lat, *thr], [u for p in plans.values() for u in p.unsupported])
    takers = {(name, Kind.LATENCY): bench.latency(where) for name, where in bench.endpoints.items()}
    if thr:  # a throughput sampler may stage a payload file: only when there are transfers
        transfers: dict[str, Transfers] = {name: bench.transfers(where) for name, where in bench.endpoints.items()}
        for sc in thr:
            if sc.server is not None:
                transfers[sc.server].prime(sc, rec.samples(sc))
        takers |= {
            (n, Kind.THROUGHPUT): bench.sampler(transfers[n], where, watch_memory=True)
            for n, where in bench.endpoints.items()
        }
    rec.schedule([*lat, *thr], _dispatch(takers), progress)


def _dispatch(takers: dict[tuple[str, Kind], Sampler]) -> Sampler:
    """Route each scenario to its server's sampler of its kind."""

    def take(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take a sample on the scenario's server."""
        assert sc.server is not None
        return takers[(sc.server, sc.kind)](sc, rnd, warmup)

    return take
