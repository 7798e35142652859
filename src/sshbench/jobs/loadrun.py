"""What `load`'s run kinds share (rate steps, bursts, sessions held): the one server staged for the run, the
generator that makes its logins (one ssh per login, or the Go driver), a step or burst of logins run and stored as
each ends, and the kernel's exit records read where it allows (root).

Arrivals come from several loopback source addresses (127.0.0.2 and up, ssh's `-b`), so a per-address limit
(Dropbear's 5 unauthenticated connections, OpenSSH's PerSourcePenalties) does not stand in for the server's
capacity. A step's logins are its scenario's samples: the value is the latency from the intended start, the
phases hold the intended start and how late the generator started it (and the server's CPU so far), the client CPU
is the generator's for that login."""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from collections.abc import Callable, Iterator, Sequence

from sshbench.clients.launch import Detected, detect
from sshbench.clienttypes import client_type
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.loadstore import ToSample, source
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench, Staging
from sshbench.loadwords import HALTED
from sshbench.measure.exits import ExitWatch
from sshbench.measure.interop import LOGIN_LIMIT
from sshbench.measure.load import DriverLoop, ExecJob, Finished, Generator, OpenLoop, exec_command
from sshbench.model import Scenario, is_local
from sshbench.samples import Sample
from sshbench.ssh.destination import PRE_BANNER_ONLY, common_options, knows_log_verbose
from sshbench.targets.servers import registry

JOIN_WAIT = LOGIN_LIMIT + 5.0  # seconds a stopped step waits for its logins in flight
Making = Callable[[Callable[[Finished], None]], Generator]  # makes a step's generator, given where logins go
Halt = Callable[[Sample], str | None]  # why a step stops after this login (None: go on)


def login_argv(ssh: str, where: Endpoint, sc: Scenario, address: str | None, command: str = "true") -> list[str]:
    """Return one login's ssh command line from a source address (None: this machine's own, toward a host of the
    user's), with the step's pinned kex and host key (no -v: the generator's CPU is the client's; only what a
    server writes before its banner is logged, where ssh has LogVerbose); `command`: a fixed remote command
    (`true`, or an exec job's)."""
    t = where.target
    bind = ["-b", address] if address is not None else []
    log = PRE_BANNER_ONLY if knows_log_verbose(ssh) else ()
    return [ssh, *log, *common_options([]), *t.options, *sc.ssh_options(), *bind, t.destination, command]


def _argv(ssh: str, where: Endpoint, sc: Scenario, own: LoadOptions, i: int) -> list[str]:
    """Return login i's command line (its source address by its place in the schedule)."""
    command = exec_command(own.down) if own.sends else "true"
    return login_argv(ssh, where, sc, source(i, own.sources) if own.max_rate is None else None, command)


def _exec_job(bench: Bench, own: LoadOptions) -> ExecJob | None:
    """Return an exec job's files for one ssh per login (the bytes up written once), None for a login job."""
    if not own.sends:
        return None
    send = bench.workdir / "exec-up"
    if not send.exists():  # one file for every server of the run
        send.write_bytes(bytes(own.up))
    return ExecJob(send, own.down, bench.workdir)


class _Keeping:
    """A step's logins stored as they end (`rec` None: kept only, a plan's timing), its progress said, and the step
    stopped (and marked) when `halt` says."""

    def __init__(
        self, job: Job, rec: Recording | None, sc: Scenario, total: int, to_sample: ToSample, halt: Halt | None
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
        if self.rec is not None:
            self.rec.sample(self.kept[-1])
        self.failed += not self.kept[-1].ok

    def __call__(self, f: Finished, stop: threading.Event) -> None:
        """Store one login and say so; set `stop` when the step must end here."""
        self.store(f)
        if self.halt is not None and (why := self.halt(self.kept[-1])) is not None and not stop.is_set():
            if self.rec is not None:
                self.rec.failed(self.sc, HALTED + why)
            stop.set()
        done = len(self.kept)
        said = f"{self.sc.load}: {done} of {self.total} logins ended, {self.failed} failed"
        self.job.progress.update(said, done, self.total)


def run_step(
    job: Job,
    rec: Recording | None,
    sc: Scenario,
    offsets: Sequence[float],
    make: Making,
    to_sample: ToSample,
    halt: Halt | None = None,
) -> list[Sample]:
    """Run one step (or burst), storing each login as it ends (the ones that ended while it was being stopped too;
    `rec` None: none stored, a plan's timing); return them. `halt` says when to stop early: the step is marked with
    why."""
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


def go_generator(job: Job, own: LoadOptions) -> Detected | None:
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


def generators(
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
    sizes = (str(own.up), str(own.down)) if own.sends else ()
    return lambda sc: functools.partial(DriverLoop, reach.argv(sc, "load", str(own.sources), *sizes))


@contextlib.contextmanager
def staged(job: Job) -> Iterator[tuple[Bench, ExitWatch | None]]:
    """Stage the run's one server (embedded, or a host of the user's under --max-rate) and, for an embedded one,
    read the kernel's exit records where it allows; yield the bench and the watch (None without it)."""
    opts = job.opts
    spec = opts.target
    if not is_local(spec) and opts.own_as(LoadOptions).max_rate is None:  # the CLI refuses it first
        raise SshbenchError(
            f"{spec} is not a server sshbench starts and no --max-rate was given",
            place="TARGET",
            fix="add --max-rate N (the most logins per second you allow on it), or use an embedded server",
            code=ExitCode.USAGE,
        )
    if is_local(spec):
        registry.validate(spec)
    staging = Staging((spec,), job.ssh, workdir="sshbench-load-")
    with job.stage(staging, opts, job.progress) as bench, _watching(is_local(spec)) as watch:
        yield bench, watch


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
