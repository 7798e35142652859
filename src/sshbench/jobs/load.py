"""The `load` job: logins arriving open-loop at fixed rates, step by step, against an embedded server (never a host
sshbench did not start), each login stored the moment it ends.

Arrivals come from several loopback source addresses (127.0.0.2 and up, ssh's `-b`), so a per-address limit
(Dropbear's 5 unauthenticated connections, OpenSSH's PerSourcePenalties) does not stand in for the server's
capacity. A step's logins are its scenario's samples: the value is the latency from the intended start, the
phases hold the intended start and how late the generator started it (and the server's CPU so far), the client CPU
is the generator's for that login.

With `--burst N` the steps give way to bursts: N connections started at one instant, `--repeats` times, each once
the server has no connection left; with `--server-option`, a second embedded OpenSSH with those sshd_config options
takes every other burst (in a fresh random order each round), its scenario marked by the options (`remedy`). A
failed login the server's log explains (`drop connection ... past MaxStartups`) is stored with the log's words."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import queue
import random
import resource
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from sshbench.analyse.load import (
    Step,
    burst_of,
    generator_cpus,
    step,
    within,
)
from sshbench.arrivals import schedule, step_seed
from sshbench.clients.launch import Detected, detect
from sshbench.clienttypes import client_type
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.loadstore import Closes, ToSample, alive, explaining, own_address, source
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.sessions import run_sessions
from sshbench.jobs.staging import Bench, Staging
from sshbench.loadsteps import StepKey
from sshbench.loadwords import HALTED
from sshbench.measure.exits import ExitWatch
from sshbench.measure.interop import LOGIN_LIMIT
from sshbench.measure.load import DriverLoop, ExecJob, Finished, Generator, OpenLoop, exec_command
from sshbench.model import Kind, Scenario, is_local
from sshbench.records import StoredScenario
from sshbench.remedy import Remedy, label
from sshbench.samples import SKIPPED, Sample
from sshbench.ssh.destination import common_options
from sshbench.targets.servers import registry

JOIN_WAIT = LOGIN_LIMIT + 5.0  # seconds a stopped step waits for its logins in flight
Making = Callable[[Callable[[Finished], None]], Generator]  # makes a step's generator, given where logins go
Halt = Callable[[Sample], str | None]  # why a step stops after this login (None: go on)
FD_MARGIN = 64  # descriptors the generator's process holds besides its connections


def login_argv(ssh: str, where: Endpoint, sc: Scenario, address: str | None, command: str = "true") -> list[str]:
    """Return one login's ssh command line from a source address (None: this machine's own, toward a host of the
    user's), with the step's pinned kex and host key (no -v: the generator's CPU is the client's); `command`: a
    fixed remote command (`true`, or an exec job's)."""
    t = where.target
    bind = ["-b", address] if address is not None else []
    return [ssh, *common_options([]), *t.options, *sc.ssh_options(), *bind, t.destination, command]


def _argv(ssh: str, where: Endpoint, sc: Scenario, own: LoadOptions, i: int) -> list[str]:
    """Return login i's command line (its source address by its place in the schedule)."""
    command = exec_command(own.down) if own.job == "exec" else "true"
    return login_argv(ssh, where, sc, source(i, own.sources) if own.max_rate is None else None, command)


def _exec_job(bench: Bench, own: LoadOptions) -> ExecJob | None:
    """Return an exec job's files for one ssh per login (the bytes up written once), None for a login job."""
    if own.job != "exec":
        return None
    send = bench.workdir / "exec-up"
    if not send.exists():  # one file for every server of the run
        send.write_bytes(bytes(own.up))
    return ExecJob(send, own.down, bench.workdir)


class _Keeping:
    """A step's logins stored as they end, its progress said, and the step stopped (and marked) when `halt` says."""

    def __init__(
        self, job: Job, rec: Recording, sc: Scenario, total: int, to_sample: ToSample, halt: Halt | None
    ) -> None:
        """Keep nothing yet."""
        self.job, self.rec, self.sc = job, rec, sc
        self.total = total  # logins the step plans
        self.to_sample, self.halt = to_sample, halt
        self.kept: list[Sample] = []
        self.failed = 0

    def store(self, f: Finished) -> None:
        """Store one login as its sample."""
        self.kept.append(self.to_sample(self.sc, f))
        self.rec.sample(self.kept[-1])
        self.failed += not self.kept[-1].ok

    def __call__(self, f: Finished, stop: threading.Event) -> None:
        """Store one login and say so; set `stop` when the step must end here."""
        self.store(f)
        if self.halt is not None and (why := self.halt(self.kept[-1])) is not None and not stop.is_set():
            self.rec.failed(self.sc, HALTED + why)
            stop.set()
        done = len(self.kept)
        said = f"{self.sc.load}: {done} of {self.total} logins ended, {self.failed} failed"
        self.job.progress.update(said, done, self.total)


def _step(
    job: Job,
    rec: Recording,
    sc: Scenario,
    offsets: Sequence[float],
    make: Making,
    to_sample: ToSample,
    halt: Halt | None = None,
) -> list[Sample]:
    """Run one step (or burst), storing each login as it ends (the ones that ended while it was being stopped too);
    return them. `halt` says when to stop early: the step is marked with why."""
    keep = _Keeping(job, rec, sc, len(offsets), to_sample, halt)
    out: queue.Queue[Finished] = queue.Queue()
    loop = make(out.put)
    failure: list[BaseException] = []

    def run() -> None:
        """Run the generator, keeping what stopped it."""
        try:
            loop.run(offsets)
        except Exception as exc:  # said in the main thread, after what ended was stored
            failure.append(exc)

    runner = threading.Thread(target=run, daemon=True, name="load step")
    runner.start()
    try:
        while runner.is_alive() or not out.empty():
            with contextlib.suppress(queue.Empty):
                keep(out.get(timeout=0.2), loop.stop)
    finally:
        loop.stop.set()
        runner.join(JOIN_WAIT)
        while not out.empty():
            keep.store(out.get_nowait())
    if failure:
        raise SshbenchError(
            f"the load generator stopped: {failure[0]}",
            place=f"step {sc.load}",
            fix="see its words; --generator openssh runs one ssh per login instead",
            code=ExitCode.MEASUREMENT_FAILED,
        )
    return keep.kept


def _go(job: Job, own: LoadOptions) -> Detected | None:
    """Return the Go generator found (and built) for this run, None for one ssh per login; fail saying why it cannot
    run here."""
    if own.generator == "openssh":
        return None
    found = detect(client_type("gossh"), lambda text: job.progress.update(text, 0, 1))
    if found.missing:
        raise SshbenchError(
            f"the Go generator cannot run here: {found.missing}",
            place="--generator go",
            fix="install Go 1.26 or later, or use --generator openssh (one ssh per login)",
            code=ExitCode.MISSING_BINARY,
        )
    return found


def _generators(
    bench: Bench, where: Endpoint, own: LoadOptions, ssh: str, go: Detected | None
) -> Callable[[Scenario], Making]:
    """Return, for a step, how its generator is made against this server: one ssh per login, or the Go driver given
    the server's address once, before the run is stored."""
    if go is None:
        job = _exec_job(bench, own)
        return lambda sc: functools.partial(OpenLoop, functools.partial(_argv, ssh, where, sc, own), job=job)
    reach = bench.client(where, go, bench.discover(where).server_lists().get("hostkey", ()))
    if isinstance(reach, str):
        raise SshbenchError(reach, place="--generator go", fix="use --generator openssh", code=ExitCode.USAGE)
    sizes = (str(own.up), str(own.down)) if own.job == "exec" else ()
    return lambda sc: functools.partial(DriverLoop, reach.argv(sc, "load", str(own.sources), *sizes))


def _check(opts: LoadOptions, max_time: float | None) -> None:
    """Refuse a plan whose steps cannot fit the budget, or a burst this process cannot open, before anything is
    stored."""
    if opts.server_options and not opts.burst:
        raise SshbenchError(
            "--server-option compares bursts with and without the options",
            place="--server-option",
            fix="add --burst N (connections started at one instant)",
            code=ExitCode.USAGE,
        )
    if opts.burst:
        _check_burst(opts, max_time)
        return
    need = len(opts.rates) * (opts.step_time + LOGIN_LIMIT)
    ahead = max((opts.start_at or 0.0) - time.time(), 0.0)  # the wait for the agreed start counts too
    if max_time is not None and ahead + len(opts.rates) * opts.step_time > max_time:
        raise SshbenchError(
            f"{len(opts.rates)} steps of {opts.step_time:g} s need {len(opts.rates) * opts.step_time:g} s and more; "
            f"the budget is {max_time:g} s",
            place="--max-time",
            fix=f"use fewer rates or a shorter --step-time, or raise --max-time to {need:g}s (each step can run "
            f"{LOGIN_LIMIT:g} s past its end while its last logins finish)",
            code=ExitCode.USAGE,
        )


def _check_burst(opts: LoadOptions, max_time: float | None) -> None:
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
            _step(job, rec, sc, [0.0] * own.burst, making(sc), storing)
            alive(rec, where, sc)


def _run_bursts(
    job: Job, bench: Bench, where: Endpoint, go: Detected | None, base: Scenario, watch: ExitWatch | None
) -> int:
    """Stage the second server a --server-option asks for, then run (or resume) every setting's bursts."""
    own, ssh = job.opts.own_as(LoadOptions), bench.ssh
    ends = [where, *([bench.configured(where, own.server_options)] if own.server_options else [])]
    settings = [None, *([Remedy.sshd(own.server_options)] if own.server_options else [])]
    scenarios = [dataclasses.replace(base, load=StepKey.burst(own.burst), remedy=r) for r in settings]
    arms = [(e, sc, _generators(bench, e, own, ssh, go)) for e, sc in zip(ends, scenarios, strict=True)]
    rec = job.record(job.opts.target, bench.environment(where, None))
    with rec.status():
        rec.register(scenarios)
        _bursts(job, rec, arms, own, watch)
    return rec.run_id


def _run_steps(
    job: Job, bench: Bench, where: Endpoint, go: Detected | None, base: Scenario, watch: ExitWatch | None
) -> int:
    """Run (or resume) the steps in rising order, up to the first past the SLO."""
    own = job.opts.own_as(LoadOptions)
    generator = _generators(bench, where, own, bench.ssh, go)
    steps = [dataclasses.replace(base, load=StepKey.rate(r)) for r in own.rates]
    env = bench.environment(where, None)
    rec = job.record(job.opts.target, env)
    with rec.status():
        rec.register(steps)
        stop: str | None = None
        for i, (rate, sc) in enumerate(zip(own.rates, steps, strict=True)):
            stored = rec.samples(sc)
            if stop is not None:
                rec.failed(sc, f"{SKIPPED}not run: {stop}")
                continue
            halt = None
            if not stored:  # a step an interrupted run began keeps its logins as they are
                _wait_slot(job, own, i, sc)
                offsets = schedule(rate, own.step_time, own.arrivals, step_seed(job.opts.plan.seed, rate))
                halt = Closes(own_address(where.target.host, where.target.port)) if where.server is None else None
                stored = tuple(_step(job, rec, sc, offsets, generator(sc), explaining(where, own, watch), halt))
                alive(rec, where, sc)
            before = rec.stored.get(sc.key)  # a step its server died in is marked: not read against the SLO
            failure = before.failure if before is not None else None
            failure = HALTED + halt.said if halt is not None and halt.said else failure  # marked, not yet re-read
            read = step(StoredScenario(0, 0, sc, failure, tuple(stored)), own.step_time, generator_cpus(env))
            stop = _stop(read, own.slo, own.start_at is not None)
    return rec.run_id


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
    """Run (or resume) the load steps, bursts or sessions held; return the run id."""

    opts = job.opts
    own = opts.own_as(LoadOptions)
    spec = opts.target
    if not is_local(spec) and own.max_rate is None:  # the CLI refuses it first; a stored run cannot ask for it
        raise SshbenchError(
            f"{spec} is not a server sshbench starts and no --max-rate was given",
            place="TARGET",
            fix="add --max-rate N (the most logins per second you allow on it), or use an embedded server",
            code=ExitCode.USAGE,
        )
    if is_local(spec):
        registry.validate(spec)
    if job.resume is None and own.job != "session":
        _check(own, opts.plan.max_time)
    ssh = job.ssh
    staging = Staging((spec,), ssh, workdir="sshbench-load-")
    with job.stage(staging, opts, job.progress) as bench, _watching(is_local(spec)) as watch:
        if own.job == "session":
            return run_sessions(job, bench, bench.only, _go(job, own))
        base = Scenario(Kind.LATENCY, kex=(opts.kex or (None,))[0], hostkey=(opts.hostkeys or (None,))[0])
        run = _run_bursts if own.burst else _run_steps
        return run(job, bench, bench.only, _go(job, own), base, watch)


@contextlib.contextmanager
def _watching(embedded: bool) -> Iterator[ExitWatch | None]:
    """Read the kernel's exit records for the run where it allows (root), for an embedded server's CPU by process
    role."""
    opened = ExitWatch.open() if embedded else None
    watch = opened if isinstance(opened, ExitWatch) else None  # else why not: the table says without root
    try:
        yield watch
    finally:
        if watch is not None:
            watch.close()
