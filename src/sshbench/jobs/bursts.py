"""The `load --burst N` job, a run kind of its own (`bursts`): N connections started at one instant, `--repeats`
times, each once the server has no connection left; with `--server-option`, a second embedded OpenSSH with those
sshd_config options takes every other burst (in a fresh random order each round), its scenario marked by the
options (its remedy). A failed login the server's log explains (`drop connection ... past MaxStartups`) is stored
with the log's words."""

from __future__ import annotations

import dataclasses
import random
import resource
from collections.abc import Callable, Sequence

from sshbench.clients.launch import Detected
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.load import base_scenario
from sshbench.jobs.loadrun import Making, generators, go_generator, run_step, staged
from sshbench.jobs.loadstore import alive, explaining
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench
from sshbench.loadsteps import StepKey
from sshbench.loadwords import burst_of
from sshbench.measure.exits import ExitWatch
from sshbench.measure.interop import LOGIN_LIMIT
from sshbench.model import Scenario
from sshbench.remedy import Remedy, label

FD_MARGIN = 64  # descriptors the generator's process holds besides its connections


def _check(opts: LoadOptions, max_time: float | None) -> None:
    """Refuse a burst larger than the generator's file descriptors allow, or bursts the budget cannot hold."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and opts.burst + FD_MARGIN > soft:
        raise SshbenchError(
            f"a burst of {opts.burst} needs {opts.burst} connections open at once and this process may open "
            f"{soft} files (ulimit -n)",
            place="--burst",
            fix=f"use --burst {max(soft - FD_MARGIN, 1)} or less, or raise the limit (ulimit -n "
            f"{opts.burst + FD_MARGIN})",
            code=ExitCode.USAGE,
        )
    arms = 2 if opts.server_options else 1
    worst = arms * opts.repeats * (LOGIN_LIMIT + 5)
    if max_time is not None and worst > max_time:
        raise SshbenchError(
            f"{arms * opts.repeats} bursts can take up to {worst:g} s (a burst's last login may take "
            f"{LOGIN_LIMIT:g} s) and the budget is {max_time:g} s",
            place="--max-time",
            fix=f"raise --max-time to {worst:g}s or use fewer --repeats",
            code=ExitCode.USAGE,
        )


def _bursts(
    job: Job,
    rec: Recording,
    arms: Sequence[tuple[Endpoint, Scenario, Callable[[Scenario], Making]]],
    own: LoadOptions,
    watch: ExitWatch | None,
) -> None:
    """Run every arm's bursts, interleaved in a fresh random order each round; a burst already stored is kept."""
    shuffle = random.Random(job.opts.plan.seed)
    for rnd in range(1, own.repeats + 1):
        order = list(arms)
        shuffle.shuffle(order)
        for where, sc, making in order:
            if any(burst_of(s) == rnd for s in rec.samples(sc)):
                continue
            assert where.server is not None, "bursts run against embedded servers"
            where.server.wait_idle()
            job.progress.update(f"{sc.load}{label(sc.remedy)}: round {rnd} of {own.repeats}", rnd - 1, own.repeats)
            storing = explaining(where, own, watch, (rnd - 1) * own.burst, rnd)
            run_step(job, rec, sc, [0.0] * own.burst, making(sc), storing)
            alive(rec, where, sc)


def _run_bursts(
    job: Job, bench: Bench, where: Endpoint, go: Detected | None, base: Scenario, watch: ExitWatch | None
) -> int:
    """Stage the second server a --server-option asks for, then run (or resume) every setting's bursts."""
    own, ssh = job.opts.own_as(LoadOptions), bench.ssh
    ends = [where, *([bench.configured(where, own.server_options)] if own.server_options else [])]
    settings = [None, *([Remedy.sshd(own.server_options)] if own.server_options else [])]
    scenarios = [dataclasses.replace(base, load=StepKey.burst(own.burst), remedy=r) for r in settings]
    arms = [(e, sc, generators(bench, e, own, ssh, go)) for e, sc in zip(ends, scenarios, strict=True)]
    rec = job.record(job.opts.target, bench.environment(where, None))
    with rec.status():
        rec.register(scenarios)
        _bursts(job, rec, arms, own, watch)
    return rec.run_id


def run_bursts(job: Job) -> int:
    """Run (or resume) the bursts of every setting; return the run id."""
    own = job.opts.own_as(LoadOptions)
    if job.resume is None:
        _check(own, job.opts.plan.max_time)
    with staged(job) as (bench, watch):
        return _run_bursts(job, bench, bench.only, go_generator(job, own), base_scenario(job), watch)
