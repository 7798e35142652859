"""The one run life cycle shared by every measuring job: the run row, its status, the sink that stores each
sample as it is taken, what an interrupted run already stored (for --resume), and the --max-time budget."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sshbench import leases
from sshbench.environment import Environment
from sshbench.errors import Unfinished
from sshbench.joboptions import JobOptions, Plan
from sshbench.jobs.staging import Stager, stage
from sshbench.measure.budget import Estimate, check
from sshbench.measure.remedies import is_steady
from sshbench.measure.scheduler import Outcome, Progress, Sampler, Scheduler
from sshbench.model import Scenario
from sshbench.ratios import DECIDING_PAIRS
from sshbench.records import StoredScenario
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.ssh.proc import ssh_client
from sshbench.stats import MIN_RANKED
from sshbench.storage.store import Store


def _ignore(run_id: int) -> None:
    """Hear nothing about a new run."""


def _allow_all(kind: str, algorithm: str) -> bool:
    """Allow every algorithm (no security policy given)."""
    return True


def _check_only(estimate: Estimate | None) -> None:
    """Refuse a plan the budget cannot fit, and tell nobody about one that fits."""
    check(estimate)


@dataclass(frozen=True)
class Job:
    """A job to run: what it measures, where its run is stored, who sees its progress, and which run it resumes."""

    store: Store
    opts: JobOptions
    progress: Progress
    resume: int | None = None  # the id of an interrupted run to finish
    on_run: Callable[[int], None] = _ignore  # told the new run's id as soon as it exists
    on_plan: Callable[[Estimate | None], None] = _check_only  # told the plan's estimate before a run is stored
    allows: Callable[[str, str], bool] = _allow_all  # the security policy (a fleet times only what it allows)
    started: float = dataclasses.field(default_factory=time.monotonic)  # the --max-time budget counts from here
    stage: Stager = stage  # stages the job's endpoints, link and limits (tests give a fake bench)

    @functools.cached_property
    def ssh(self) -> str:
        """Return the OpenSSH client this job runs (`--ssh`, checked, else the system's), resolved once."""
        return ssh_client(self.opts.ssh)

    def elapsed(self) -> float:
        """Return the seconds this job has run (everything it did is inside its --max-time budget)."""
        return time.monotonic() - self.started

    def plan_ready(self, estimate: Estimate | None) -> None:
        """Hand the plan's time estimate over (the default refuses a plan that does not fit its budget)."""
        self.on_plan(estimate)

    def record(self, target: str, environment: Environment) -> Recording:
        """Create the run with its environment, or mark the resumed run running again."""
        rec = Recording.open(self.store, self.opts, target, environment, resume=self.resume, started=self.started)
        if self.resume is None:
            self.on_run(rec.run_id)
        return rec


class Recording:
    """One run being measured; also the scheduler's sink, so every sample is stored the moment it is taken."""

    def __init__(
        self,
        store: Store,
        run_id: int,
        plan: Plan,
        started: float | None = None,
        margin: float = 0.05,
        kind: RunKind | None = None,
    ) -> None:
        self.store, self.run_id, self.plan, self.margin, self.kind = store, run_id, plan, margin, kind
        self.ids: dict[str, int] = {}
        self.stored: dict[str, StoredScenario] = {}
        self.started = time.monotonic() if started is None else started  # the job's start: one budget for it all

    @classmethod
    def open(
        cls,
        store: Store,
        opts: JobOptions,
        target: str,
        environment: Environment,
        *,
        resume: int | None = None,
        parent: int | None = None,
        started: float | None = None,
    ) -> Recording:
        """Create a run (a fleet host's under its `parent`), or claim the interrupted run being resumed; this
        process's lease marks it interrupted if the process dies."""
        if resume is not None:
            store.claim(resume)  # fails while another live sshbench holds it
            run_id = resume
        else:
            run_id = store.create_run(opts, target, environment, parent=parent)
        leases.keeper().run(store.path, run_id)  # if this process dies, its run is marked interrupted
        return cls(store, run_id, opts.plan, started, opts.margin, opts.command)

    @contextlib.contextmanager
    def status(self) -> Iterator[None]:
        """Give the run its final status: complete, incomplete (rows too short to rank or broken off), failed, or
        interrupted (--resume finishes the last three)."""
        try:
            yield
        except Unfinished:
            self.settle(RunStatus.INCOMPLETE)
            raise
        except Exception:
            self.settle(RunStatus.FAILED)
            raise
        except BaseException:
            self.settle(RunStatus.INTERRUPTED)
            raise
        self.settle(self.outcome())

    def outcome(self) -> RunStatus:
        """Return the status the run ends with when nothing stopped it: incomplete or complete."""
        return RunStatus.INCOMPLETE if self.unfinished() else RunStatus.COMPLETE

    def settle(self, status: RunStatus) -> None:
        """Give the run its final status and release it from this process's lease."""
        try:
            self.store.set_status(self.run_id, status)
        finally:
            leases.keeper().forget(run=self.run_id)

    def register(self, scenarios: Sequence[Scenario], unsupported: Sequence[tuple[Scenario, str]] = ()) -> None:
        """Store the planned scenarios (idempotent on resume) and mark unsupported ones."""
        self.ids = self.store.add_scenarios(self.run_id, [*scenarios, *(sc for sc, _ in unsupported)])
        for sc, reason in unsupported:
            self.store.mark_failed(self.ids[sc.key], reason)
        self.stored = {s.scenario.key: s for s in self.store.scenarios(self.run_id)}

    def add(self, scenarios: Sequence[Scenario]) -> None:
        """Store scenarios the run adds as it goes (a step bisecting the knee; idempotent on resume)."""
        self.ids |= self.store.add_scenarios(self.run_id, list(scenarios), len(self.stored))
        self.stored = {s.scenario.key: s for s in self.store.scenarios(self.run_id)}

    def samples(self, scenario: Scenario) -> tuple[Sample, ...]:
        """Return what an interrupted invocation stored for a scenario."""
        found = self.stored.get(scenario.key)
        return () if found is None else found.samples

    def remaining(self) -> Plan:
        """Return the plan with what is left of its --max-time budget (one budget for the whole job)."""
        if self.plan.max_time is None:
            return self.plan
        spent = time.monotonic() - self.started
        return dataclasses.replace(self.plan, max_time=max(self.plan.max_time - spent, 0.0))

    def schedule(
        self,
        scenarios: Sequence[Scenario],
        take: Sampler,
        progress: Progress,
        label: str | None = None,
        plan: Plan | None = None,
        anchors: frozenset[str] = frozenset(),
    ) -> Outcome:
        """Run one interleaved schedule, continuing from the samples an interrupted run stored (under `plan`, a
        step's own plan, instead of what is left of the run's; `anchors`: rows the others are read against, kept
        measured while any other row of their group is)."""
        sched = Scheduler(plan or self.remaining(), take, self, progress, margin=self.margin, anchors=anchors)
        for sc in scenarios:
            if sc.key in self.stored:
                found = self.stored[sc.key]
                if found.broke_off:  # failed after it had worked: try again
                    self.store.mark_failed(found.id, None)
                sched.resume_from(sc, found.samples, None if found.broke_off else found.failure)
        return sched.run(scenarios, label)

    def unfinished(self) -> int:
        """Return how many rows are not done: fewer samples than asked, or broken off."""
        short, broke = unfinished_rows(self.store.scenarios(self.run_id), self.plan, self.kind)
        return len(short) + len(broke)

    def sample(self, sample: Sample) -> None:
        """Store one sample now."""
        self.store.add_sample(self.ids[sample.scenario.key], sample)

    def failed(self, scenario: Scenario, reason: str) -> None:
        """Record an unmeasurable scenario."""
        self.store.mark_failed(self.ids[scenario.key], reason)


def wanted(plan: Plan, kind: RunKind | None = None, st: StoredScenario | None = None) -> int:
    """Return the samples a row must have for its run to be complete: the rounds asked for, up to the 3 a rank
    needs (`--rounds 2` asks for unranked rows; a budget or failures that leave fewer make the run incomplete); a
    `tune` remedy, or the default it is raced against, ratios.DECIDING_PAIRS (its verdict is drawn from them)."""
    if kind is RunKind.TUNE and st is not None and not is_steady(st.scenario):
        return DECIDING_PAIRS
    if kind is not None and kind.row.counts_failures:
        return plan.min_rounds  # an interop soak: every login asked for, failed or not
    return min(MIN_RANKED, plan.min_rounds)


def taken(st: StoredScenario, kind: RunKind | None = None) -> int:
    """Return the samples of a row that count towards what it wants: its measured values, or for a kind that counts
    failures (an interop soak) every sample that is not a warm-up."""
    if kind is not None and kind.row.counts_failures:
        return len([s for s in st.samples if not s.warmup])
    return len(st.values())


def unfinished_rows(
    stored: Sequence[StoredScenario], plan: Plan, kind: RunKind | None = None
) -> tuple[list[StoredScenario], list[StoredScenario]]:
    """Return the rows that keep a run incomplete: (live rows with fewer samples than wanted, rows broken off)."""
    short = [st for st in stored if st.failure is None and taken(st, kind) < wanted(plan, kind, st)]
    return short, [st for st in stored if st.broke_off]
