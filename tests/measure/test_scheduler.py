"""The scheduler with an injected clock and a fake sampler: interleaving order, adaptive stopping, the time
budget, resuming, failures and progress, exactly and in milliseconds."""

from __future__ import annotations

from fakes import FakeClock, FakeSampler, ListProgress, ListSink
from sshbench.joboptions import Plan
from sshbench.measure.scheduler import Scheduler
from sshbench.model import Kind, Scenario
from sshbench.samples import Sample

A, B, C, D = (Scenario(Kind.LATENCY, kex=k, hostkey="ssh-ed25519") for k in ("ka", "kb", "kc", "kd"))


def label(sc: Scenario) -> str:
    """Return the short name used in these tests (the kex)."""
    return str(sc.kex)


def run(plan: Plan, scenarios: list[Scenario], sampler: FakeSampler) -> tuple[ListSink, ListProgress, int, bool]:
    """Run a schedule; return the sink, the progress, the samples taken and whether time ran out."""
    sink, progress = ListSink(), ListProgress()
    outcome = Scheduler(plan, sampler, sink, progress, clock=sampler.clock).run(scenarios, "latency")
    return sink, progress, outcome.samples_taken, outcome.stopped_by_time


def order(sampler: FakeSampler) -> list[tuple[str, int, bool]]:
    """Return the calls as (kex, round, warm-up)."""
    return [(label.split(" / ")[0], rnd, warmup) for label, rnd, warmup in sampler.calls]


def test_warm_ups_then_rounds_rotating_their_start() -> None:
    sampler = FakeSampler(lambda sc, rnd: 0.1)
    run(Plan(warmup=1, min_rounds=2, max_rounds=2), [A, B, C], sampler)
    assert order(sampler) == [
        ("ka", 0, True),
        ("kb", 0, True),
        ("kc", 0, True),
        ("kb", 1, False),
        ("kc", 1, False),
        ("ka", 1, False),
        ("kc", 2, False),
        ("ka", 2, False),
        ("kb", 2, False),
    ]


def test_stable_results_stop_at_the_minimum_and_noisy_ones_at_the_maximum() -> None:
    sampler = FakeSampler(lambda sc, rnd: 0.1 if sc is A else (0.05 if rnd % 2 else 0.15))
    sink, _, taken, by_time = run(Plan(warmup=0, min_rounds=3, max_rounds=8, ci_target=0.05), [A, B], sampler)
    per = {sc.kex: [s.value for s in sink.samples if s.scenario is sc] for sc in (A, B)}
    assert len(per["ka"]) == 3 and len(per["kb"]) == 8
    assert taken == 11 and not by_time


def test_extra_rounds_go_to_the_widest_interval_first() -> None:
    wide = {A: (0.100, 0.110), B: (0.050, 0.150)}
    sampler = FakeSampler(lambda sc, rnd: wide[sc][rnd % 2])
    run(Plan(warmup=0, min_rounds=2, max_rounds=4, ci_target=0.01), [A, B], sampler)
    assert order(sampler)[-2:] == [("kb", 4, False), ("ka", 4, False)]  # rotation alone would put ka first


def test_the_time_budget_stops_between_samples() -> None:
    clock = FakeClock(100.0)
    sampler = FakeSampler(lambda sc, rnd: 0.1, clock=clock, seconds=1.0)
    _, _, taken, by_time = run(Plan(warmup=1, min_rounds=5, max_rounds=5, max_time=4.5), [A, B], sampler)
    assert by_time and taken == 5  # starts at t=100, 102, 103, 104 (<= 104.5) and then t=105: out of time
    assert clock.now == 105.0


def test_resume_continues_from_stored_rounds_without_new_warm_ups() -> None:
    def stored(sc: Scenario, rounds: int) -> list[Sample]:
        """Return a warm-up and `rounds` measured samples."""
        return [Sample(sc, r, r == 0, True, 0.1, 0.1) for r in range(rounds + 1)]

    sampler = FakeSampler(lambda sc, rnd: 0.1)
    sink, progress = ListSink(), ListProgress()
    sched = Scheduler(Plan(warmup=1, min_rounds=3, max_rounds=3), sampler, sink, progress, clock=sampler.clock)
    sched.resume_from(A, stored(A, 2), None)
    sched.resume_from(B, stored(B, 1), None)
    sched.resume_from(C, stored(C, 0)[:0], "unsupported: kc")  # failed before: never sampled again
    sched.run([A, B, C], "latency")
    assert order(sampler) == [("kb", 2, False), ("ka", 3, False), ("kb", 3, False)]


def test_failed_warm_up_or_three_failures_in_a_row_end_a_scenario() -> None:
    sampler = FakeSampler(lambda sc, rnd: None if sc is C or (sc is D and rnd >= 1) else 0.1)
    sink, _, _, _ = run(Plan(warmup=1, min_rounds=5, max_rounds=5), [C, D], sampler)
    calls = order(sampler)
    assert [c for c in calls if c[0] == "kc"] == [("kc", 0, True)]
    assert [c for c in calls if c[0] == "kd"] == [("kd", 0, True), ("kd", 1, False), ("kd", 2, False), ("kd", 3, False)]
    assert sink.failures == {C.label: "fake: no such cipher", D.label: "fake: no such cipher"}
    assert len(sink.samples) == len(calls)  # failed samples are stored too


def test_progress_names_the_scenario_and_counts_to_the_end() -> None:
    sampler = FakeSampler(lambda sc, rnd: 0.1)
    _, progress, taken, _ = run(Plan(warmup=1, min_rounds=2, max_rounds=2), [A, B], sampler)
    assert progress.updates[0] == ("latency: ka / ssh-ed25519 - warm-up", 0, 6)
    assert progress.updates[-1] == ("latency: kb / ssh-ed25519 - round 2/2", 6, 6)
    assert all(total >= done for _, done, total in progress.updates) and taken == 6
