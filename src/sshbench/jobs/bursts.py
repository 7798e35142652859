"""The `load --burst N` job, a run kind of its own (`bursts`): N connections started at one instant, `--repeats`
times, each once the server has no connection left; with `--server-option`, a second embedded OpenSSH with those
sshd_config options takes every other burst (in a fresh random order each round), its scenario marked by the
options (its remedy). A failed login the server's log explains (`drop connection ... past MaxStartups`) is stored
with the log's words."""

from __future__ import annotations

import dataclasses
import math
import random
import resource
import time
from collections.abc import Callable, Sequence

from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.load import base_scenario
from sshbench.jobs.loadrun import Making, generators, go_generator, run_step, staged
from sshbench.jobs.loadstore import alive, explaining, sample
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench
from sshbench.loadsteps import StepKey
from sshbench.loadwords import burst_of
from sshbench.measure.budget import Estimate
from sshbench.measure.exits import ExitWatch
from sshbench.model import Scenario
from sshbench.remedy import Remedy, label

FD_MARGIN = 64  # descriptors the generator's process holds besides its connections
MIN_REPEATS = 5  # bursts per setting, at least (--repeats)


def _check(opts: LoadOptions) -> None:
    """Refuse a burst larger than the generator's file descriptors allow (the budget is checked once one burst has
    been timed)."""
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


def _run_bursts(job: Job, bench: Bench, where: Endpoint, base: Scenario, watch: ExitWatch | None) -> int:
    """Stage the second server a --server-option asks for (its sshd refuses a wrong option here, before the Go
    generator is built), then run (or resume) every setting's bursts."""
    own, ssh = job.opts.own_as(LoadOptions), bench.ssh
    ends = [where, *([bench.configured(where, own.server_options)] if own.server_options else [])]
    go = go_generator(job, own)
    settings = [None, *([Remedy.sshd(own.server_options)] if own.server_options else [])]
    scenarios = [dataclasses.replace(base, load=StepKey.burst(own.burst), remedy=r) for r in settings]
    arms = [(e, sc, generators(bench, e, own, ssh, go)) for e, sc in zip(ends, scenarios, strict=True)]
    if job.resume is None:
        _plan(job, arms, own)
    rec = job.record(job.opts.target, bench.environment(where, None))
    with rec.status():
        rec.register(scenarios)
        _bursts(job, rec, arms, own, watch)
    return rec.run_id


def _plan(job: Job, arms: Sequence[tuple[Endpoint, Scenario, Callable[[Scenario], Making]]], own: LoadOptions) -> None:
    """Time one unstored burst of the first setting (until its server is idle again), then hand the plan's
    estimate over: a round is one burst of every setting (refused when --max-time cannot hold the bursts asked)."""
    where, sc, making = arms[0]
    assert where.server is not None, "bursts run against embedded servers"
    where.server.wait_idle()
    job.progress.update(f"{sc.load}: timing one burst (not stored)", 0, 1)
    began = time.monotonic()
    run_step(job, None, sc, [0.0] * own.burst, making(sc), lambda s, f: sample(s, f))
    where.server.wait_idle()
    one = time.monotonic() - began
    budget = job.opts.plan.max_time
    setup = job.elapsed()
    fits = math.floor((budget - setup) / (one * len(arms))) if budget is not None and one > 0 else own.repeats
    settings = f"{len(arms)} setting{'s' if len(arms) != 1 else ''}"
    job.plan_ready(
        Estimate(
            connections=len(arms),
            transfers=0,
            warmup=0.0,
            per_round=one * len(arms),
            budget=budget,
            setup=setup,
            setup_what="servers, one unstored burst",
            rounds_needed=own.repeats,
            what=f"{settings} x {own.repeats} bursts of {own.burst} connections (a round: one burst of each, each "
            "once its server is idle)",
            needs=f"each setting needs {own.repeats} (--repeats)",
            fits=f"use --repeats {fits}" if MIN_REPEATS <= fits < own.repeats else None,
            narrows=False,
        )
    )


def run_bursts(job: Job) -> int:
    """Run (or resume) the bursts of every setting; return the run id."""
    own = job.opts.own_as(LoadOptions)
    if job.resume is None:
        _check(own)
    with staged(job) as (bench, watch):
        return _run_bursts(job, bench, bench.only, base_scenario(job), watch)
