"""Racing calls on synthetic data with known truth: dominated rows are called early, equal rows are not called
slower more often than the stated error rate over a whole race, near rows are called equivalent."""

from __future__ import annotations

import math
import random

from sshbench.measure.racing import Arm, Call, Race, decide

RACE = Race(looks=18)


def arms(means: dict[str, float], rounds: int, noise: float, rng: random.Random, shared: float = 0.1) -> list[Arm]:
    """Return arms with log-normal noise per sample plus a drift per round shared by every arm."""
    drift = {r: rng.gauss(0.0, shared) for r in range(1, rounds + 1)}
    return [
        Arm(k, "g", {r: m * math.exp(drift[r] + rng.gauss(0.0, noise)) for r in range(1, rounds + 1)}, True)
        for k, m in means.items()
    ]


def test_a_dominated_row_is_called_slower_after_three_rounds() -> None:
    rng = random.Random(1)
    calls = decide(arms({"gcm": 1300.0, "ctr": 500.0, "3des": 29.0}, 3, 0.05, rng), RACE)
    assert calls["gcm"] is Call.LEADER and calls["3des"] is Call.SLOWER


def test_nothing_is_called_from_fewer_than_three_rounds() -> None:
    calls = decide(arms({"a": 1000.0, "b": 10.0}, 2, 0.01, random.Random(2)), RACE)
    assert set(calls.values()) == {Call.OPEN}


def test_close_rows_are_called_equivalent_once_the_interval_fits_the_margin() -> None:
    calls = decide(arms({"a": 1000.0, "b": 995.0}, 16, 0.01, random.Random(3)), RACE)
    assert sorted(calls.values()) == [Call.EQUIVALENT, Call.LEADER]  # either may lead: they are within 0.5 %


def test_lower_is_better_rows_race_the_other_way() -> None:
    rng = random.Random(4)
    fast = Arm("fast", "lat", {r: 0.1 * (1 + rng.gauss(0, 0.02)) for r in range(1, 6)}, False)
    slow = Arm("slow", "lat", {r: 0.3 * (1 + rng.gauss(0, 0.02)) for r in range(1, 6)}, False)
    found = decide([fast, slow], RACE)
    assert found == {"fast": Call.LEADER, "slow": Call.SLOWER}


def test_groups_race_apart() -> None:
    rng = random.Random(5)
    down = arms({"a": 100.0, "b": 10.0}, 4, 0.02, rng)
    up = [Arm(a.key + "-up", "up", a.rounds, True) for a in arms({"a": 10.0, "b": 100.0}, 4, 0.02, rng)]
    calls = decide([*down, *up], RACE)
    assert calls["a"] is Call.LEADER and calls["b-up"] is Call.LEADER and calls["a-up"] is Call.SLOWER


class RowsOnly(Race):
    """The level with alpha split over the rows and looks alone (not over pairs): what the docs warn against."""

    def level(self, rows: int) -> float:
        """Return alpha / ((rows - 1) x looks)."""
        return self.alpha / (max(rows - 1, 1) * max(self.looks, 1))


def wrong_races(race: Race, races: int = 400) -> float:
    """Return the share of races of six equal rows (10 % noise per sample, 10 % drift per round, looked at after
    every round from the third to the twentieth) in which some row is wrongly called slower."""
    rng, wrong = random.Random(6), 0
    for _ in range(races):
        all_rounds = arms({f"r{i}": 500.0 for i in range(6)}, 20, 0.10, rng)
        for looks in range(3, 21):
            seen = [Arm(a.key, a.group, {r: v for r, v in a.rounds.items() if r <= looks}, True) for a in all_rounds]
            if Call.SLOWER in decide(seen, race).values():
                wrong += 1
                break
    return wrong / races


def test_equal_rows_are_rarely_called_over_a_whole_race() -> None:
    assert wrong_races(RACE) <= 0.02  # measured 1 %: under alpha, as Bonferroni over pairs and looks promises
    assert wrong_races(RowsOnly(looks=18)) > RACE.alpha  # measured 7 %: the data-picked leader breaks a rows-only split


# --- the race inside the scheduler (fake clock, fake sampler with known means and noise) ---------------------
from fakes import FakeSampler, ListProgress, ListSink  # noqa: E402
from sshbench.measure.scheduler import Scheduler  # noqa: E402
from sshbench.model import Direction, Kind, Plan, Sample, Scenario  # noqa: E402

MEANS = {"gcm": 1000.0, "aes256-gcm": 960.0, "ctr": 500.0, "3des": 50.0}
ROWS = [Scenario(Kind.THROUGHPUT, cipher=c, direction=Direction.DOWN) for c in MEANS]


def noisy(seed: int) -> FakeSampler:
    """Return a sampler of each cipher's mean with 3 % noise per sample and 5 % drift per round, 1 s each."""
    rng, drift = random.Random(seed), {r: random.Random(seed * 1000 + r).gauss(0, 0.05) for r in range(0, 100)}
    return FakeSampler(lambda sc, rnd: MEANS[str(sc.cipher)] * math.exp(drift[rnd] + rng.gauss(0, 0.03)))


def race(plan: Plan, sampler: FakeSampler, samples: list[Sample] | None = None) -> tuple[Scheduler, ListSink]:
    """Run (or resume from `samples`) a schedule of ROWS; return the scheduler and what it stored."""
    sink = ListSink()
    sched = Scheduler(plan, sampler, sink, ListProgress(), clock=sampler.clock)
    for sc in ROWS:
        sched.resume_from(sc, [s for s in samples or [] if s.scenario.key == sc.key], None)
    sched.run(ROWS, "throughput")
    return sched, sink


def counts(samples: list[Sample]) -> dict[str, int]:
    """Return the measured (not warm-up) samples per cipher."""
    found: dict[str, int] = {}
    for s in samples:
        if not s.warmup:
            found[str(s.scenario.cipher)] = found.get(str(s.scenario.cipher), 0) + 1
    return found


def test_dominated_rows_stop_early_and_the_budget_goes_to_the_contenders() -> None:
    budget = Plan(warmup=1, min_rounds=8, max_rounds=40, ci_target=0.01, max_time=60.0)
    even = counts(race(budget, noisy(1))[1].samples)
    raced = counts(race(Plan(**{**vars(budget), "racing": True, "seed": 7}), noisy(1))[1].samples)
    assert raced["3des"] == 3 and raced["ctr"] <= 4  # called slower after the 3 samples a rank needs
    assert even["3des"] >= 13  # even allocation: the same share as the leader
    assert raced["gcm"] > even["gcm"] + 5 and raced["aes256-gcm"] > even["aes256-gcm"] + 5


def test_a_resumed_race_keeps_its_calls_and_its_order() -> None:
    plan = Plan(warmup=1, min_rounds=8, max_rounds=12, ci_target=0.01, racing=True, seed=3)
    whole = race(plan, noisy(2))[1].samples
    first = [s for s in whole if s.round <= 5]  # as if interrupted after round 5
    resumed, sink = race(plan, noisy(2), first)
    assert resumed.calls[ROWS[3].key] is Call.SLOWER  # called again from the stored rounds
    assert counts(first)["3des"] == counts(first + sink.samples)["3des"] == 3  # not sampled again
    later = [(str(s.scenario.cipher), s.round) for s in sink.samples if s.round == 6]
    assert later == [(str(s.scenario.cipher), s.round) for s in whole if s.round == 6]  # the same seeded order


def test_without_racing_nothing_changes() -> None:
    plan = Plan(warmup=0, min_rounds=4, max_rounds=4)
    sched, sink = race(plan, noisy(3))
    assert counts(sink.samples) == dict.fromkeys(MEANS, 4) and sched.calls == {}
