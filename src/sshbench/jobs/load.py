"""The `load` job: logins arriving open-loop at fixed rates, step by step, against an embedded server (never a host
sshbench did not start), each login stored the moment it ends.

Arrivals come from several loopback source addresses (127.0.0.2 and up, ssh's `-b`), so a per-address limit
(Dropbear's 5 unauthenticated connections, OpenSSH's PerSourcePenalties) does not stand in for the server's
capacity. A step's logins are its scenario's samples: the value is the latency from the intended start, the
phases hold the intended start and how late the generator started it, the client CPU is the ssh process's."""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from collections.abc import Callable, Sequence

from sshbench.analyse.load import Step, step, within
from sshbench.arrivals import schedule, step_seed
from sshbench.clients.launch import detect
from sshbench.clients.registry import client_type
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench, Staging
from sshbench.measure.interop import LOGIN_LIMIT
from sshbench.measure.load import DriverLoop, Finished, Generator, OpenLoop
from sshbench.model import Kind, Scenario, is_local
from sshbench.records import StoredScenario
from sshbench.samples import SKIPPED, Sample
from sshbench.ssh.destination import common_options
from sshbench.ssh.proc import ssh_client
from sshbench.targets.servers import registry

JOIN_WAIT = LOGIN_LIMIT + 5.0  # seconds a stopped step waits for its logins in flight
Making = Callable[[Callable[[Finished], None]], Generator]  # makes a step's generator, given where logins go


def step_key(rate: float) -> str:
    """Return a step's `load` field (`20/s`)."""
    return f"{rate:g}/s"


def source(i: int, sources: int) -> str:
    """Return the loopback source address of login i."""
    return f"127.0.0.{2 + i % sources}"


def login_argv(ssh: str, where: Endpoint, sc: Scenario, address: str) -> list[str]:
    """Return one login's ssh command line from a source address, with the step's pinned kex and host key (no -v:
    the generator's CPU is the client's)."""
    t = where.target
    return [ssh, *common_options([]), *t.options, *sc.ssh_options(), "-b", address, t.destination, "true"]


def _argv(ssh: str, where: Endpoint, sc: Scenario, sources: int, i: int) -> list[str]:
    """Return login i's command line (its source address by its place in the schedule)."""
    return login_argv(ssh, where, sc, source(i, sources))


def _sample(sc: Scenario, f: Finished) -> Sample:
    """Return a finished login as its step's sample (round = its place in the schedule, from 1)."""
    phases = (("intended", f.intended), ("late", f.started - f.intended))
    ok = f.error is None
    return Sample(
        sc,
        f.index + 1,
        False,
        ok=ok,
        value=f.latency if ok else None,
        wall=f.ended - f.started,
        client_cpu=f.cpu,
        phases=phases,
        error=f.error,
    )


def _step(job: Job, rec: Recording, sc: Scenario, offsets: Sequence[float], make: Making) -> list[Sample]:
    """Run one step, storing each login as it ends (the ones that ended while it was being stopped too); return
    them."""
    kept: list[Sample] = []
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
    done = failed = 0
    try:
        while runner.is_alive() or not out.empty():
            with contextlib.suppress(queue.Empty):
                f = out.get(timeout=0.2)
                kept.append(_sample(sc, f))
                rec.sample(kept[-1])
                done, failed = done + 1, failed + (f.error is not None)
                job.progress.update(
                    f"{sc.load}: {done} of {len(offsets)} logins ended, {failed} failed", done, len(offsets)
                )
    finally:
        loop.stop.set()
        runner.join(JOIN_WAIT)
        while not out.empty():
            kept.append(_sample(sc, out.get_nowait()))
            rec.sample(kept[-1])
    if failure:
        raise SshbenchError(
            f"the load generator stopped: {failure[0]}",
            place=f"step {sc.load}",
            fix="see its words; --generator openssh runs one ssh per login instead",
            code=ExitCode.MEASUREMENT_FAILED,
        )
    return kept


def _generators(job: Job, bench: Bench, where: Endpoint, own: LoadOptions, ssh: str) -> Callable[[Scenario], Making]:
    """Return, for a step, how its generator is made: one ssh per login, or the Go driver, found (and built) and
    given this server's address once, before the run is stored; fail saying why it cannot run here."""
    if own.generator == "openssh":
        return lambda sc: functools.partial(OpenLoop, functools.partial(_argv, ssh, where, sc, own.sources))
    found = detect(client_type("gossh"), lambda text: job.progress.update(text, 0, 1))
    if found.missing:
        raise SshbenchError(
            f"the Go generator cannot run here: {found.missing}",
            place="--generator go",
            fix="install Go 1.26 or later, or use --generator openssh (one ssh per login)",
            code=ExitCode.MISSING_BINARY,
        )
    reach = bench.client(where, found, bench.discover(where).server_lists().get("hostkey", ()))
    if isinstance(reach, str):
        raise SshbenchError(reach, place="--generator go", fix="use --generator openssh", code=ExitCode.USAGE)
    return lambda sc: functools.partial(DriverLoop, reach.argv(sc, "load", str(own.sources)))


def _check(opts: LoadOptions, max_time: float | None) -> None:
    """Refuse a plan whose steps cannot fit the budget, before anything is stored."""
    need = len(opts.rates) * (opts.step_time + LOGIN_LIMIT)
    if max_time is not None and len(opts.rates) * opts.step_time > max_time:
        raise SshbenchError(
            f"{len(opts.rates)} steps of {opts.step_time:g} s need {len(opts.rates) * opts.step_time:g} s and more; "
            f"the budget is {max_time:g} s",
            place="--max-time",
            fix=f"use fewer rates or a shorter --step-time, or raise --max-time to {need:g}s (each step can run "
            f"{LOGIN_LIMIT:g} s past its end while its last logins finish)",
            code=ExitCode.USAGE,
        )


def run_load(job: Job) -> int:
    """Run (or resume) the load steps; return the run id."""
    opts = job.opts
    own = opts.own_as(LoadOptions)
    spec = opts.target
    if not is_local(spec):
        raise SshbenchError(
            f"{spec} is not a server sshbench starts: load runs against embedded servers only",
            place="TARGET",
            fix="use local:openssh, local:dropbear, local:tinyssh, local:gossh or local:sshd=PATH",
            code=ExitCode.USAGE,
        )
    registry.validate(spec)
    if job.resume is None:
        _check(own, opts.plan.max_time)
    ssh = ssh_client(opts.ssh)
    with job.stage(Staging((spec,), ssh, workdir="sshbench-load-"), opts, job.progress) as bench:
        where = bench.only
        generator = _generators(job, bench, where, own, ssh)
        kex, hostkey = (opts.kex or (None,))[0], (opts.hostkeys or (None,))[0]
        steps = [Scenario(Kind.LATENCY, kex=kex, hostkey=hostkey, load=step_key(r)) for r in own.rates]
        rec = job.record(spec, bench.environment(where, None))
        with rec.status():
            rec.register(steps)
            broken: Step | None = None
            for rate, sc in zip(own.rates, steps, strict=True):
                stored = rec.samples(sc)
                if broken is not None:
                    rec.failed(sc, f"{SKIPPED}not run: {broken.rate:g}/s already broke the SLO")
                    continue
                if not stored:  # a step an interrupted run began keeps its logins as they are
                    offsets = schedule(rate, own.step_time, own.arrivals, step_seed(opts.plan.seed, rate))
                    stored = tuple(_step(job, rec, sc, offsets, generator(sc)))
                read = step(StoredScenario(0, 0, sc, None, tuple(stored)), own.step_time)
                broken = None if within(read, own.slo) else read
        return rec.run_id
