"""Interleaved rounds: warm up every scenario, then visit each once per round until stable or out of time.

Round-robin interleaving means slow drift on a shared machine (other tenants, thermal state) hits every
configuration alike instead of biasing whichever was measured last. The start of each round rotates
so that no scenario always follows the same neighbour.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sshbench.joboptions import Plan
from sshbench.measure.racing import Arm, Call, Race, decide
from sshbench.model import Scenario
from sshbench.ratios import Word, judge, paired_ratio, settled
from sshbench.samples import SKIPPED, Sample
from sshbench.stats import MIN_RANKED, summarize

MAX_CONSECUTIVE_FAILURES = 3
Sampler = Callable[[Scenario, int, bool], Sample]


class Progress(Protocol):
    """Receives what is being measured and how far along the measurement is."""

    def update(self, description: str, done: int, total: int) -> None:
        """Report progress."""


class Sink(Protocol):
    """Receives every sample the moment it is taken, and scenarios that cannot be measured."""

    def sample(self, sample: Sample) -> None:
        """Store one sample."""

    def failed(self, scenario: Scenario, reason: str) -> None:
        """Record that a scenario cannot be measured."""


@dataclass
class _State:
    """Per-scenario bookkeeping (mutable, private to the scheduler)."""

    values: list[float] = field(default_factory=list)
    by_round: dict[int, float] = field(default_factory=dict)  # the values again, by round (racing pairs them)
    warmups: int = 0
    rounds_done: int = 0
    consecutive_failures: int = 0
    failure: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How a measurement ended."""

    samples_taken: int
    stopped_by_time: bool


def needs_more(values: Sequence[float], plan: Plan) -> bool:
    """Return True while a scenario is below its minimum rounds or its CI is wider than the target."""
    n = len(values)
    if n < plan.min_rounds:
        return True
    return n < plan.max_rounds and summarize(values).rel_halfwidth > plan.ci_target


class Scheduler:
    """Run a plan over scenarios, resuming from samples already stored."""

    def __init__(
        self,
        plan: Plan,
        sampler: Sampler,
        sink: Sink,
        progress: Progress,
        clock: Callable[[], float] = time.monotonic,
        margin: float = 0.05,
        anchors: frozenset[str] = frozenset(),
    ) -> None:
        self.plan, self.sampler, self.sink, self.progress, self.clock = plan, sampler, sink, progress, clock
        self.state: dict[str, _State] = {}
        self.taken = 0
        self.race = Race(margin=margin)
        self.calls: dict[str, Call] = {}  # the race's calls after the last round (racing only)
        self.groups: dict[str, tuple[object, ...]] = {}  # scenario key -> its result group (racing only)
        self.anchors = anchors  # rows others are read against (tune's default copy): never stopped while they race
        self.margin = margin
        self.stopped: set[str] = set()  # rows raced against an anchor that stopped for good (see `_settle`)
        self.members: dict[tuple[object, ...], list[Scenario]] = {}

    def resume_from(self, scenario: Scenario, samples: Sequence[Sample], failure: str | None) -> None:
        """Account for samples an earlier, interrupted invocation took (rounds whose sample failed are due again)."""
        st = self.state.setdefault(scenario.key, _State())
        st.failure = failure
        for s in samples:
            if not s.ok or s.value is None:
                continue  # a failed sample's round is taken again
            if s.warmup:
                st.warmups += 1
            else:
                st.values.append(s.value)
                st.by_round[s.round] = s.value
            st.rounds_done = max(st.rounds_done, s.round)

    def run(self, scenarios: Sequence[Scenario], label: str | None = None) -> Outcome:
        """Measure every scenario; return when all are stable, at max rounds, or out of time.

        The progress line names `label`, or each scenario's kind when scenarios of several kinds share one
        schedule (and so one budget)."""
        for sc in scenarios:
            self.state.setdefault(sc.key, _State())
            self.groups[sc.key] = (sc.metric.group(sc).name, sc.server)
            self.members.setdefault(self.groups[sc.key], []).append(sc)
        self._race(scenarios)  # a resumed race continues from its stored rounds
        deadline = None if self.plan.max_time is None else self.clock() + self.plan.max_time
        for sc in scenarios:
            while self._live(sc) and self.state[sc.key].warmups < self.plan.warmup:
                if deadline is not None and self.clock() > deadline:
                    return self._outcome(scenarios, True)
                self._take(sc, 0, True, scenarios, label)
        for rnd in range(1, self.plan.max_rounds + 1):
            due = [sc for sc in self._order(scenarios, rnd) if self._due(sc, rnd)]
            if rnd > self.plan.min_rounds and not self.plan.racing:  # extra rounds: the most uncertain first
                due.sort(key=lambda sc: -self._uncertainty(sc))
            if not due and not any(self._unfinished(sc) for sc in scenarios):
                break
            for sc in due:
                if deadline is not None and self.clock() > deadline:
                    return self._outcome(scenarios, True)
                self._take(sc, rnd, False, scenarios, label)
            self._race(scenarios, rnd)
        return self._outcome(scenarios, False)

    def _order(self, scenarios: Sequence[Scenario], rnd: int) -> list[Scenario]:
        """Return the round's order: a fresh random one when racing (seeded by the plan: a resumed race repeats it),
        else a rotation, so that no scenario always follows the same neighbour."""
        if self.plan.racing:
            order = list(scenarios)
            random.Random(f"{self.plan.seed}:{rnd}").shuffle(order)
            return order
        shift = rnd % max(len(scenarios), 1)
        return [*scenarios[shift:], *scenarios[:shift]]

    def _race(self, scenarios: Sequence[Scenario], upto: int | None = None) -> None:
        """Make the race's calls after a round from every live row's values up to it (racing only); a resumed race
        replays its looks round by round, so its calls are the ones the interrupted run made."""
        if not self.plan.racing:
            return
        last = max((st.rounds_done for st in self.state.values()), default=0) if upto is None else upto
        if upto is None and last > MIN_RANKED:  # resuming: replay the earlier looks first
            for rnd in range(MIN_RANKED, last):
                self._race(scenarios, rnd)
        arms = [
            Arm(
                sc.key,
                self.groups[sc.key],
                {r: v for r, v in self.state[sc.key].by_round.items() if r <= last},
                sc.metric.higher_is_better,
                self.calls.get(sc.key) is Call.SLOWER,
            )
            for sc in scenarios
            if self._live(sc)
        ]
        self.calls = decide(arms, self.race, look=last - MIN_RANKED + 1, anchors=self.anchors)
        self._settle(scenarios)

    def _settle(self, scenarios: Sequence[Scenario]) -> None:
        """Stop for good each row raced against an anchor that has its minimum rounds and is called slower than or
        equivalent to it, or whose paired 95 % verdict against it more rounds would not change (ratios.settled)."""
        for sc in scenarios:
            anchor = self._anchor_of(sc)
            if anchor is None or sc.key in self.stopped or len(self.state[sc.key].values) < self.plan.min_rounds:
                continue
            ratio = paired_ratio(self.state[anchor.key].by_round, self.state[sc.key].by_round)
            verdict = None if ratio is None else judge(ratio, sc.metric.higher_is_better, self.margin)
            if self.calls.get(sc.key) in (Call.SLOWER, Call.EQUIVALENT) or settled(verdict):
                self.stopped.add(sc.key)

    def _shown(self, sc: Scenario) -> bool:
        """Return True when a row's paired verdict against its group's leader is decided (slower or equivalent), as
        the tables will print it (with its interval's real coverage): a row the race called slower stops only then."""
        group = self.groups.get(sc.key)
        leader = next((k for k, g in self.groups.items() if g == group and self.calls.get(k) is Call.LEADER), None)
        if leader is None:
            return True
        ratio = paired_ratio(self.state[leader].by_round, self.state[sc.key].by_round)
        decided = (Word.SLOWER, Word.EQUIVALENT)
        return ratio is not None and judge(ratio, sc.metric.higher_is_better, self.margin).word in decided

    def _anchor_of(self, sc: Scenario) -> Scenario | None:
        """Return the anchor of a (non-anchor) row's group, or None."""
        if sc.key in self.anchors:
            return None
        return next((o for o in self.members.get(self.groups[sc.key], []) if o.key in self.anchors), None)

    def _group_open(self, sc: Scenario) -> bool:
        """Return True while some live row of the scenario's group has no call yet."""
        group = self.groups.get(sc.key)
        return any(
            self.calls.get(k) in (None, Call.OPEN)
            for k, g in self.groups.items()
            if g == group and self.state[k].failure is None
        )

    def _outcome(self, scenarios: Sequence[Scenario], stopped_by_time: bool) -> Outcome:
        """Return how the measurement ended."""
        return Outcome(self.taken, stopped_by_time)

    def _uncertainty(self, sc: Scenario) -> float:
        """Return the relative CI half-width of a scenario's median (infinite with fewer than 2 values)."""
        values = self.state[sc.key].values
        return summarize(values).rel_halfwidth if len(values) >= 2 else float("inf")

    def _live(self, sc: Scenario) -> bool:
        """Return True unless the scenario was found unmeasurable."""
        return self.state[sc.key].failure is None

    def _unfinished(self, sc: Scenario) -> bool:
        """Return True while a live scenario still needs samples. Racing: a row called slower stops once it has
        the samples a rank needs and its printed verdict against the leader is decided (or at max rounds); the
        others take their minimum rounds, then go on while their group has a row with no call (up to max rounds),
        then until their CI target as without racing."""
        if not self._live(sc):
            return False
        values = self.state[sc.key].values
        if not self.plan.racing:
            return needs_more(values, self.plan)
        if sc.key in self.anchors:  # paired with every row still measured, whatever the race calls it
            others = [o for o in self.members.get(self.groups[sc.key], []) if o.key not in self.anchors]
            return len(values) < self.plan.min_rounds or any(self._unfinished(o) for o in others)
        if self._anchor_of(sc) is not None:  # raced against the anchor only: until settled
            return sc.key not in self.stopped and len(values) < self.plan.max_rounds
        if self.calls.get(sc.key) is Call.SLOWER:  # until the printed verdict shows what the race called
            return len(values) < MIN_RANKED or (len(values) < self.plan.max_rounds and not self._shown(sc))
        if len(values) < self.plan.min_rounds:
            return True
        if self._group_open(sc):
            return len(values) < self.plan.max_rounds
        return needs_more(values, self.plan)

    def _due(self, sc: Scenario, rnd: int) -> bool:
        """Return True when the scenario needs a sample in this round (not already taken before a resume)."""
        return self._unfinished(sc) and self.state[sc.key].rounds_done < rnd

    def _take(self, sc: Scenario, rnd: int, warmup: bool, scenarios: Sequence[Scenario], label: str | None) -> None:
        """Take, store and account one sample."""
        st = self.state[sc.key]
        self.progress.update(
            self._describe(sc, rnd, warmup, label), self.taken, self.taken + self._remaining(scenarios)
        )
        sample = self.sampler(sc, rnd, warmup)
        self.sink.sample(sample)
        self.taken += 1
        st.rounds_done = max(st.rounds_done, rnd)
        if warmup:
            st.warmups += 1
        if sample.ok and sample.value is not None:
            st.consecutive_failures = 0
            if not warmup:
                st.values.append(sample.value)
                st.by_round[rnd] = sample.value
        else:
            st.consecutive_failures += 1
            skipped = (sample.error or "").startswith(SKIPPED)  # no retry changes it (a host key you lack)
            if warmup or skipped or st.consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
                st.failure = sample.error or "failed"
                self.sink.failed(sc, st.failure)
        self.progress.update(
            self._describe(sc, rnd, warmup, label), self.taken, self.taken + self._remaining(scenarios)
        )

    def _remaining(self, scenarios: Sequence[Scenario]) -> int:
        """Estimate the samples still to take (minimum rounds, plus one for unstable scenarios)."""
        total = 0
        for sc in scenarios:
            st = self.state[sc.key]
            if st.failure is not None or sc.key in self.stopped:
                continue
            total += max(self.plan.warmup - st.warmups, 0)
            if self.calls.get(sc.key) is Call.SLOWER and self._anchor_of(sc) is None:
                total += max(MIN_RANKED - len(st.values), 0)
                continue
            missing = self.plan.min_rounds - len(st.values)
            total += missing if missing > 0 else int(needs_more(st.values, self.plan))
        return total

    def _describe(self, sc: Scenario, rnd: int, warmup: bool, label: str | None) -> str:
        """Return the progress line: what is measured and which round."""
        stage = "warm-up" if warmup else f"round {rnd}/{self.plan.min_rounds}"
        if not warmup and rnd > self.plan.min_rounds:
            stage = f"round {rnd} (extra, up to {self.plan.max_rounds})"
        return f"{label or sc.kind.value}: {sc.label} - {stage}"
