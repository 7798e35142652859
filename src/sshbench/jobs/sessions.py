"""The `load --job session` job, a run kind of its own (`sessions`): sessions opened and held by the thousand
against an embedded server, step by step (1, 10, 100, 1000), and the server read at rest with each step's sessions
open: its memory per process role (PSS) and its CPU over a quiet window.

Every opened session is stored as its step's sample the moment the driver says it is open (the time to open it, the
driver's CPU for it, or why it failed); at rest, the server's memory snapshot is stored per role (state `N sessions`,
`idle` before the first) and the CPU as the step's rest sample (round 0, a warm-up: no latency statistic reads it;
phases `held`, `rest` and `rest_cgroup` or `rest_processes`). Steps that cannot fit this machine (open files,
processes, memory) are not run and say why; the soft limits are raised to the hard ones first, for every process
the run starts."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import time
from collections.abc import Sequence

import psutil

from sshbench.clients.launch import Detected, Launcher
from sshbench.discovery import Discovery
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.loadrun import go_generator, staged
from sshbench.jobs.loadstore import alive
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench
from sshbench.loadsteps import StepKey
from sshbench.loadwords import IDLE
from sshbench.measure.budget import Estimate
from sshbench.measure.load import Finished
from sshbench.measure.memory import snapshot
from sshbench.measure.sessions import AT_ONCE, REST, SETTLE, Holder, Rest, at_rest, holding
from sshbench.model import Kind, Scenario
from sshbench.records import MemoryRecord
from sshbench.samples import SKIPPED, Sample
from sshbench.targets.servers import registry

FD_MARGIN = 64  # open files a process holds besides its sessions'
PROCESSES_PER_SESSION = 4  # at most (OpenSSH: monitor, session, command, and sshd-auth while it logs in)
MEMORY_SHARE = 0.8  # of the memory available: what a step's sessions may take
PACE_SESSIONS = 2 * AT_ONCE  # sessions opened before the plan is made from their pace
STEP_OVERHEAD = SETTLE + REST + 1.0  # seconds a step takes besides opening its sessions (its memory read: ~1 s)


def raise_limits() -> dict[str, tuple[int, int]]:
    """Raise this process's soft limits of open files and processes to the hard ones (every process the run
    starts inherits them); return each as (soft before, now)."""
    out = {}
    for name, which in (("files", resource.RLIMIT_NOFILE), ("processes", resource.RLIMIT_NPROC)):
        soft, hard = resource.getrlimit(which)
        if soft != hard:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (hard, hard))
        out[name] = (soft, resource.getrlimit(which)[0])
    return out


def _finite(limit: int) -> bool:
    """Return True for a limit that is not unlimited."""
    return limit != resource.RLIM_INFINITY


def _files(n: int, server: str) -> str | None:
    """Return why n sessions need more open files than one process may have here (None: they fit)."""
    caps = registry.capabilities(server)
    files, each = resource.getrlimit(resource.RLIMIT_NOFILE)[0], caps.files_per_session if caps else 1
    need = each * n + FD_MARGIN
    if not _finite(files) or need <= files:
        return None
    who = caps.files_why if caps else "the driver holds a socket each"
    return (
        f"they need about {need} open files in one process ({who}) and this machine allows {files} (ulimit -Hn); "
        f"the largest that fits is {(files - FD_MARGIN) // each} (raise the hard limit as root: ulimit -Hn, or "
        "LimitNOFILE)"
    )


def _processes(n: int) -> str | None:
    """Return why n sessions need more processes than this user may have (None: they fit)."""
    procs = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if not _finite(procs):
        return None
    mine = sum(1 for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == os.getuid())
    if PROCESSES_PER_SESSION * n + mine <= procs:
        return None
    return (
        f"they need up to {PROCESSES_PER_SESSION * n} more processes and this user may have {procs} ({mine} running; "
        f"ulimit -u); the largest that fits is {max((procs - mine) // PROCESSES_PER_SESSION, 0)}"
    )


def too_many(n: int, server: str, root: bool) -> str | None:
    """Return why n sessions cannot be held here under the open-file and process limits (None: they fit; root's
    processes are not counted against a limit)."""
    return _files(n, server) or (None if root else _processes(n))


def too_big(n: int, memory: Sequence[MemoryRecord], held: int) -> str | None:
    """Return why n sessions would not fit the memory available, from the last step's size per session (None:
    they fit, or nothing is known yet)."""
    if held <= 0:
        return None
    idle = sum(m.pss or m.rss for m in memory if m.state == IDLE)
    last = [m for m in memory if m.state == StepKey.sessions(held).text]
    if not last:
        return None
    each = max(sum(m.pss or m.rss for m in last) - idle, 0) / held
    available = psutil.virtual_memory().available
    if each * (n - held) <= available * MEMORY_SHARE:
        return None
    return (
        f"they would take about {each * n / 2**30:.1f} GiB ({each / 2**20:.2f} MiB each at {held}) and "
        f"{available / 2**30:.1f} GiB is available"
    )


def _sample(sc: Scenario, f: Finished, rnd: int) -> Sample:
    """Return an opened session as its step's sample number `rnd` (value: seconds to open it)."""
    ok, took = f.error is None, f.ended - f.started
    return Sample(
        sc,
        rnd,
        False,
        ok,
        took if ok else None,
        took,
        client_cpu=f.cpu,
        phases=(("started", f.started),),
        error=f.error,
    )


def rest_sample(sc: Scenario, rest: Rest, limits: dict[str, tuple[int, int]]) -> Sample:
    """Return a step's reading at rest as its rest sample, with the soft limits the run raised (`files_from`,
    `files`: before and as the run had them)."""
    phases: tuple[tuple[str, float], ...] = (("held", rest.held), ("rest", rest.seconds), (f"rest_{rest.by}", 1.0))
    for name, (before, now) in limits.items():
        phases += ((f"{name}_from", before), (name, now))
    return Sample(sc, 0, True, True, None, rest.seconds, phases=phases, server_cpu=rest.cpu)


def _step(
    job: Job,
    rec: Recording,
    where: Endpoint,
    holder: Holder,
    sc: Scenario,
    limits: dict[str, tuple[int, int]],
    pace: _Pace,
) -> int:
    """Open sessions until the step's number are held (each stored as it opens, after what an interrupted attempt
    stored), read the server at rest, store it; return how many are held."""
    assert where.server is not None
    assert sc.load is not None
    n = sc.load.count
    first = max((s.round for s in rec.samples(sc)), default=0)
    opened, failed = [0], [0]

    def done(f: Finished) -> None:
        """Store one attempt and say how far the step is."""
        rec.sample(_sample(sc, f, first + opened[0] + failed[0] + 1))
        opened[0] += f.error is None
        failed[0] += f.error is not None
        job.progress.update(f"{sc.load}: {holder.held + opened[0]} held, {failed[0]} failed", opened[0], n)
        if f.error is None:
            pace.one()

    pace.start()
    held = holder.grow(n, done)
    pace.stop()
    job.progress.update(f"{sc.load}: {held} held; reading the server at rest", n, n)
    rec.store.add_memory(rec.run_id, snapshot(where.server, sc.load.text))
    rec.sample(rest_sample(sc, at_rest(where.server, held), limits))
    return held


def _reach(bench: Bench, where: Endpoint, go: Detected | None, top: int) -> tuple[Endpoint, Launcher, Discovery]:
    """Return the server that holds `top` sessions (a second one where its type limits them) and how the Go driver
    reaches it; refuse what cannot hold sessions."""
    if go is None or where.server is None:
        raise SshbenchError(
            "--job session holds its sessions in the Go generator against an embedded server",
            place="--job session",
            fix="leave --generator at go and TARGET at an embedded server (local:openssh, local:dropbear, ...)",
            code=ExitCode.USAGE,
        )
    where = bench.holding(where, top + AT_ONCE)
    found = bench.discover(where)
    reach = bench.client(where, go, found.server_lists().get("hostkey", ()))
    if isinstance(reach, str):
        raise SshbenchError(reach, place="--job session", fix="see its words", code=ExitCode.USAGE)
    return where, reach, found


def _steps(
    job: Job, rec: Recording, where: Endpoint, holder: Holder, steps: list[Scenario], limits: dict[str, tuple[int, int]]
) -> None:
    """Run the steps not yet read at rest, in rising order, each from the sessions the ones before it hold."""
    assert where.server is not None
    own, root = job.opts.own_as(LoadOptions), os.geteuid() == 0
    held, stop, pace = 0, None, None
    for n, sc in zip(own.sessions, steps, strict=True):
        if any(s.warmup for s in rec.samples(sc)):
            held = n  # read at rest before an interruption: kept; its sessions are opened again, unstored
            continue
        if holder.held < held:
            holder.grow(held, lambda f: None)
        why = stop or too_many(n, where.server.name, root) or too_big(n, rec.store.memory(rec.run_id), held)
        if why is not None:
            rec.failed(sc, f"{SKIPPED}not run: {why}" if stop is None else f"{SKIPPED}{why}")
            stop = stop or f"not run: {sc.load} did not fit"
            continue
        pace = pace or _Pace(job, [m for m in own.sessions if m >= n], held)
        held = _step(job, rec, where, holder, sc, limits, pace)
        alive(rec, where, sc)
        if held < n:
            stop = f"not run: {n - held} of the sessions of {sc.load} could not be opened"


class _Pace:
    """The plan, made once from the first PACE_SESSIONS sessions this invocation opens (their wall time while
    opening, AT_ONCE at a time), and handed over: refused when --max-time cannot hold the steps, offering those that
    fit."""

    def __init__(self, job: Job, steps: Sequence[int], held: int) -> None:
        self.job, self.steps, self.held = job, list(steps), held  # the steps to run, and the sessions held before
        self.opened, self.seconds, self.since = 0, 0.0, 0.0
        self.planned = not self.steps

    def start(self) -> None:
        """Mark a step's sessions beginning to open."""
        self.since = time.monotonic()

    def stop(self) -> None:
        """Mark a step's sessions all opened (the time spent opening them counts)."""
        self.seconds += time.monotonic() - self.since

    def one(self) -> None:
        """Count one session opened; at PACE_SESSIONS (or the steps' all), estimate the rest and hand it over."""
        self.opened += 1
        if self.planned or self.opened < min(PACE_SESSIONS, self.steps[-1] - self.held):
            return
        self.planned = True
        each = (self.seconds + time.monotonic() - self.since) / self.opened
        done, times = self.held + self.opened, []
        for before, m in zip([self.held, *self.steps], self.steps, strict=False):
            times.append(max(m - max(before, done), 0) * each + STEP_OVERHEAD)
        budget, setup = self.job.opts.plan.max_time, self.job.elapsed()
        fit = [m for i, m in enumerate(self.steps) if budget is None or setup + sum(times[: i + 1]) <= budget]
        self.job.plan_ready(
            Estimate(
                connections=len(self.steps),
                transfers=0,
                warmup=0.0,
                per_round=sum(times),
                budget=budget,
                setup=setup,
                setup_what=f"server, Go generator, the first {self.opened} sessions opened",
                rounds_needed=1,
                what=f"steps of {', '.join(f'{m:,}' for m in self.steps)} sessions held ({AT_ONCE} opened at a time: "
                f"~{each * 1000:.0f} ms each, from the first {self.opened}; each step read at rest)",
                fits=f"use --sessions {','.join(str(m) for m in fit)}" if fit and len(fit) < len(self.steps) else None,
                narrows=False,
                once=True,
            )
        )


def run_sessions(job: Job) -> int:
    """Run (or resume) the steps of sessions held, in rising order; return the run id."""
    with staged(job) as (bench, _):
        return _held(job, bench, bench.only, go_generator(job, job.opts.own_as(LoadOptions)))


def _held(job: Job, bench: Bench, where: Endpoint, go: Detected | None) -> int:
    """Stage the Go driver and hold each step's sessions; return the run id."""
    own = job.opts.own_as(LoadOptions)
    limits = raise_limits()
    where, reach, found = _reach(bench, where, go, max(own.sessions))
    assert where.server is not None
    rec = job.record(job.opts.target, bench.environment(where, found))
    base = Scenario(Kind.LATENCY, kex=(job.opts.kex or (None,))[0], hostkey=(job.opts.hostkeys or (None,))[0])
    steps = [dataclasses.replace(base, load=StepKey.sessions(n)) for n in own.sessions]
    with rec.status():
        rec.register(steps)
        if not any(m.state == IDLE for m in rec.store.memory(rec.run_id)):
            where.server.wait_idle()
            rec.store.add_memory(rec.run_id, snapshot(where.server, IDLE))
        with holding(reach.argv(steps[0], "hold", str(own.sources), str(AT_ONCE))) as holder:
            _steps(job, rec, where, holder, steps, limits)
    return rec.run_id
