"""One measuring job against one target (run, algos, latency, throughput, sweep): staging, discovery, planning,
scheduling. The job writes to the store as it goes and never prints; the CLI renders what was stored."""

from __future__ import annotations

from sshbench.joboptions import JobOptions
from sshbench.jobs.endpoints import require_connectable, require_reachable
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench, Staging
from sshbench.measure import budget
from sshbench.measure.plan import plan_scenarios
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.model import Kind, Scenario
from sshbench.targets.limits import ceilings


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


def crypto_ceilings(job: Job, bench: Bench, ciphers: list[str], always: bool = False) -> dict[str, dict[str, float]]:
    """Measure each cipher's crypto ceiling per side for a new run under a link, a CPU limit or an emulated CPU
    (or `always`)."""
    if not ceilings_wanted(job, ciphers, always):
        return {}
    job.progress.update("measuring crypto ceilings (openssl speed, each side under its limits)", 0, 1)
    return bench.ceilings(ciphers, bench.only)


def run_job(job: Job) -> int:
    """Run (or resume) a job against one target; every sample is stored as it is taken. Return the run id."""
    opts = job.opts
    ssh = job.ssh
    with job.stage(Staging((opts.target,), ssh), opts, job.progress) as bench:
        where = bench.only
        disc = bench.discover(where)
        require_reachable(disc, where.target)
        lat, thr = plan_scenarios(opts, disc)  # bad algorithm names fail here, before a run is stored
        if opts.measures:
            require_connectable(disc, where.target)
            if job.resume is None:
                found = bench.probe(where)
                setup, what = setup_seconds(job, [sc.cipher for sc in thr if sc.cipher])
                job.plan_ready(budget.estimate([*lat, *thr], opts, lambda sc: found, setup, what))
        ciphers = [sc.cipher for sc in thr if sc.cipher]
        env = bench.environment(where, disc, crypto_ceilings=crypto_ceilings(job, bench, ciphers))
        rec = job.record(opts.target, env)
        with rec.status():
            job.store.set_discovery(rec.run_id, disc)
            if opts.measures:
                measure(rec, opts, (lat, thr), bench, job.progress)
        return rec.run_id


def measure(
    rec: Recording, opts: JobOptions, planned: tuple[list[Scenario], list[Scenario]], bench: Bench, progress: Progress
) -> None:
    """Schedule latency and throughput in one budget, interleaved, resuming from what the run already stored."""
    lat, thr = planned
    where = bench.only
    rec.register([*lat, *thr])
    takers: dict[Kind, Sampler] = {Kind.LATENCY: bench.latency(where)}
    transfers = bench.transfers(where) if thr else None
    if transfers is not None:
        for sc in thr:
            transfers.prime(sc, rec.samples(sc))
        takers[Kind.THROUGHPUT] = bench.sampler(transfers, where, watch_memory=True)
    try:
        rec.schedule([*lat, *thr], by_kind(takers), progress)
    finally:
        if transfers is not None:
            transfers.cleanup()


def by_kind(takers: dict[Kind, Sampler]) -> Sampler:
    """Route each scenario to the sampler of its kind (one schedule, one budget for every kind)."""
    return lambda sc, rnd, warmup: takers[sc.kind](sc, rnd, warmup)
