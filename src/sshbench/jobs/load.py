"""The `load` job: logins arriving open-loop at fixed rates, step by step, against an embedded server (or a host of
the user's, under --max-rate), each login stored the moment it ends; the steps rise until one breaks the SLO.

A login job runs `true`, an exec job sends and reads bytes (`--job exec`); both are steps of this kind. Bursts
(jobs/bursts.py) and sessions held (jobs/sessions.py) are run kinds of their own; what the three share (the staged
server, the generator, a step run and stored) is jobs/loadrun.py."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable

from sshbench.analyse.knee import MAX_BISECTIONS, between, bisections, bracket
from sshbench.analyse.load import Step, generator_cpus, step, within
from sshbench.arrivals import schedule, step_seed
from sshbench.clients.launch import Detected
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.loadrun import generators, go_generator, run_step, staged
from sshbench.jobs.loadstore import Closes, alive, explaining, own_address
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench
from sshbench.loadsteps import StepKey
from sshbench.loadwords import HALTED, attempt_of, latest
from sshbench.measure.budget import Estimate
from sshbench.measure.exits import ExitWatch
from sshbench.measure.interop import LOGIN_LIMIT
from sshbench.model import Kind, Scenario
from sshbench.records import StoredScenario
from sshbench.samples import SKIPPED


def _check(opts: LoadOptions, max_time: float | None, kexes: int = 1) -> None:
    """Refuse a plan whose steps (each rate once per key exchange) cannot fit the budget before anything is
    stored."""
    if opts.server_options:
        raise SshbenchError(
            "--server-option compares bursts with and without the options",
            place="--server-option",
            fix="add --burst N (connections started at one instant)",
            code=ExitCode.USAGE,
        )
    extra = bisections(opts.rates, opts.precision) * kexes if opts.start_at is None else 0
    steps = len(opts.rates) * kexes + extra
    need = steps * (opts.step_time + LOGIN_LIMIT)
    ahead = max((opts.start_at or 0.0) - time.time(), 0.0)  # the wait for the agreed start counts too
    if max_time is not None and ahead + steps * opts.step_time > max_time:
        more = f" and up to {extra} bisecting the knee to {opts.precision * 100:g} %" if extra else ""
        coarser = "a coarser --precision (or off) " if extra else ""
        each = f" for each of {kexes} key exchanges" if kexes > 1 else ""
        raise SshbenchError(
            f"{len(opts.rates)} steps{each}{more}, of {opts.step_time:g} s each, need {steps * opts.step_time:g} s and "
            f"more; the budget is {max_time:g} s",
            place="--max-time",
            fix=f"use fewer rates, {coarser}or a shorter --step-time; or raise --max-time to {need:g}s (each step "
            f"can run {LOGIN_LIMIT:g} s past its end while its last logins finish)",
            code=ExitCode.USAGE,
        )


def _estimate(own: LoadOptions, budget: float | None, kexes: int = 1) -> Estimate:
    """Return the plan in words: the steps (each rate once per key exchange, interleaved), those bisection may add,
    and their time at most (refused before, in `_check`, when it cannot fit)."""
    extra = bisections(own.rates, own.precision) * kexes if own.start_at is None else 0
    rates = ", ".join(f"{r:g}" for r in own.rates)
    more = f" and up to {extra} more bisecting the knee to {own.precision * 100:g} %" if extra else ""
    each = f" for each of {kexes} key exchanges, in a fresh order at each rate," if kexes > 1 else ""
    return Estimate(
        connections=len(own.rates) * kexes + extra,
        transfers=0,
        warmup=0.0,
        per_round=(len(own.rates) * kexes + extra) * own.step_time,
        budget=budget,
        what=f"{len(own.rates)} step{'s' if len(own.rates) != 1 else ''} of {own.step_time:g} s at {rates}/s{each}"
        f"{more}" + (", rising until one breaks the SLO" if len(own.rates) > 1 else ""),
        rounds_needed=0,
        narrows=False,
        once=True,
    )


def _run_steps(
    job: Job, bench: Bench, where: Endpoint, go: Detected | None, base: Scenario, watch: ExitWatch | None
) -> int:
    """Run (or resume) the steps in rising order, up to the first past the SLO, then bisect between the last good
    rate and it to --precision; a step an interrupted run cut short is run again whole (its first attempt kept, not
    read)."""
    own = job.opts.own_as(LoadOptions)
    generator = generators(bench, where, own, bench.ssh, go)
    kexes = kex_order(job.opts.kex)
    steps = [_at(base, k, r) for r in own.rates for k in shuffled(kexes, job.opts.plan.seed, r)]
    env = bench.environment(where, None)
    rec = job.record(job.opts.target, env)

    def run(i: int, sc: Scenario) -> Step:
        """Run one step unless it is stored whole; return it read back."""
        assert sc.load is not None
        rate, stored = sc.load.size, rec.samples(sc)
        offsets = schedule(rate, own.step_time, own.arrivals, step_seed(job.opts.plan.seed, rate))
        before = rec.stored.get(sc.key)  # a step its server died in, or a host stopped, is kept as it is, marked
        failure = before.failure if before is not None else None
        halt = None
        current = latest(stored)
        if failure is None and len(current) < len(offsets):  # not run yet, or cut short: run (again), whole
            attempt = attempt_of(current[0]) + 1 if current else 1
            _wait_slot(job, own, i, sc)
            halt = Closes(own_address(where.target.host, where.target.port)) if where.server is None else None
            storing = explaining(where, own, watch, len(stored), attempt=attempt)
            stored = (*stored, *run_step(job, rec, sc, offsets, generator(sc), storing, halt))
            alive(rec, where, sc)
        failure = HALTED + halt.said if halt is not None and halt.said else failure  # marked, not yet re-read
        return step(
            StoredScenario(0, 0, sc, failure, tuple(stored)), own.step_time, generator_cpus(env), None, len(offsets)
        )

    with rec.status():
        rec.register(steps)
        stop: dict[str | None, str | None] = {}
        read: dict[str | None, list[Step]] = {k: [] for k in kexes}
        for i, sc in enumerate(steps):
            if stop.get(sc.kex) is not None:
                rec.failed(sc, f"{SKIPPED}not run: {stop[sc.kex]}")
                continue
            read[sc.kex].append(run(i, sc))
            stop[sc.kex] = _stop(read[sc.kex][-1], own.slo, own.start_at is not None)
        if own.start_at is None:
            _bisect(rec, base, own, read, run)
    return rec.run_id


def _at(base: Scenario, kex: str | None, rate: float) -> Scenario:
    """Return the step of `rate` logins a second pinned to `kex`."""
    return dataclasses.replace(base, kex=kex, load=StepKey.rate(rate))


def kex_order(given: tuple[str, ...]) -> tuple[str | None, ...]:
    """Return the key exchanges a run's steps are pinned to, the first the baseline (None: the client's own)."""
    return given or (None,)


def shuffled(kexes: tuple[str | None, ...], seed: int, rate: float) -> list[str | None]:
    """Return the key exchanges in the order a rate runs them: fresh at each rate, the same on --resume."""
    order = list(kexes)
    random.Random(step_seed(seed, rate)).shuffle(order)
    return order


def _bisect(
    rec: Recording,
    base: Scenario,
    own: LoadOptions,
    read: dict[str | None, list[Step]],
    run: Callable[[int, Scenario], Step],
) -> None:
    """Bisect each key exchange's steps between the last rate within the SLO and the first past it until they are
    --precision apart, one step of each in turn (steps a resumed run stored are read, not run again); a step that
    says nothing of the server ends that key exchange's bisection."""
    ended: set[str | None] = set()
    for _ in range(MAX_BISECTIONS):
        gaps = {k: bracket(steps, own.slo) for k, steps in read.items() if k not in ended}
        todo = {k: gap for k, gap in gaps.items() if gap is not None and gap[1] / gap[0] > 1 + own.precision}
        if not todo:
            return
        for k, gap in todo.items():
            sc = _at(base, k, between(*gap))
            rec.add([sc])
            s = run(sum(len(v) for v in read.values()), sc)
            read[k].append(s)
            if s.halted is not None or s.stopped is not None or s.generator_bound or s.cut:
                ended.add(k)


STEP_GAP = 5.0  # seconds between agreed steps (--start-at): the last logins of one end before the next begins


def slot(own: LoadOptions, i: int) -> float | None:
    """Return the Unix instant step i starts at when the steps are agreed with other generators (--start-at)."""
    return None if own.start_at is None else own.start_at + i * (own.step_time + STEP_GAP)


def _wait_slot(job: Job, own: LoadOptions, i: int, sc: Scenario) -> None:
    """Wait for step i's agreed instant (one generator of several), saying so; a slot already past starts now."""
    when = slot(own, i)
    while when is not None and (left := when - time.time()) > 0:
        job.progress.update(f"{sc.load}: starting with the other generators in {left:.0f} s", 0, 1)
        time.sleep(min(left, 1.0))


def _stop(read: Step, slo: float, agreed: bool = False) -> str | None:
    """Return why no higher step is run after this one (None: go on); steps agreed with other generators all run
    (only a host's closes before the banner stop them)."""
    if read.halted is not None:
        return f"{read.rate:g}/s was stopped: the host closed connections before the banner"
    if read.stopped is not None or agreed:
        return None
    if read.generator_bound:
        return f"{read.rate:g}/s was generator-bound"
    return None if within(read, slo) else f"{read.rate:g}/s already broke the SLO"


def run_load(job: Job) -> int:
    """Run (or resume) the load steps; return the run id."""
    own = job.opts.own_as(LoadOptions)
    if job.resume is None:
        _check(own, job.opts.plan.max_time, len(kex_order(job.opts.kex)))
        job.plan_ready(_estimate(own, job.opts.plan.max_time, len(kex_order(job.opts.kex))))
    with staged(job) as (bench, watch):
        return _run_steps(job, bench, bench.only, go_generator(job, own), base_scenario(job), watch)


def base_scenario(job: Job) -> Scenario:
    """Return the scenario every step or burst of a run is made from: a login with the run's one kex and host key."""
    opts = job.opts
    return Scenario(Kind.LATENCY, kex=(opts.kex or (None,))[0], hostkey=(opts.hostkeys or (None,))[0])
