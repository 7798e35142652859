"""`tune` on a fake bench: remedies raced against the default (never against each other), pasted only from a 95 %
interval of 6 rounds or more, and a budget that cannot give them those rounds refused or cut short with the
diagnosis kept."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import fakes
from fakes import CURVE, SNTRUP, ListProgress, fake_stage
from sshbench import jobs
from sshbench.analyse import tune
from sshbench.discovery import Negotiated, Profile
from sshbench.errors import ExitCode, SshbenchError, Unfinished
from sshbench.joboptions import JobOptions, Plan
from sshbench.jobs.tune import _again
from sshbench.model import Direction, Kind, Scenario
from sshbench.ratios import DECIDING_PAIRS
from sshbench.remedy import MASTER
from sshbench.render.tune import _gain
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus
from sshbench.storage.store import Store

LOGIN = {"fresh": 0.160, "master": 0.010, CURVE: 0.110}  # the default login (post-quantum), a master, curve25519


def _sntrup_default(banner: str = "SSH-2.0-OpenSSH_9.2p1") -> object:
    """Return the fake discovery with a post-quantum default key exchange."""
    disc = ORIGINAL_DISCOVERY(banner)
    default = Negotiated(SNTRUP, fakes.ED25519, fakes.CHACHA, None, banner)
    return dataclasses.replace(disc, profiles=(Profile("default", default, None), Profile("strict", default, None)))


ORIGINAL_DISCOVERY = fakes.fake_discovery


def _logins(sc: Scenario, rnd: int) -> float:
    """Return a fake value: logins as LOGIN says (+-1 % by round), transfers all alike."""
    wobble = 1 + ((rnd * 7) % 5 - 2) / 200
    if sc.kind is Kind.THROUGHPUT:
        return 300.0 * wobble
    key = "master" if sc.remedy == MASTER else (sc.kex or "fresh")
    return LOGIN[key] * wobble


@pytest.fixture
def logins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the fake bench's logins those of LOGIN, with a post-quantum default."""
    monkeypatch.setattr(fakes, "fake_discovery", _sntrup_default)
    monkeypatch.setattr(fakes, "fake_value", _logins)


def _options(max_time: float | None = None) -> JobOptions:
    """Return tune's options on a fake embedded OpenSSH, upload only."""
    plan = Plan(warmup=1, min_rounds=3, max_rounds=10, ci_target=0.05, max_time=max_time, racing=True)
    return JobOptions(command=RunKind.TUNE, target="local:openssh", plan=plan, directions=(Direction.UP,))


def _latency(store: Store, run_id: int) -> tuple[tune.Finding, dict[str, tune.Remedy]]:
    """Return a tune run's connection finding and its remedies by label."""
    stored = store.load(run_id)
    (found,) = [f for f in tune.findings(stored.run, stored.scenarios) if f.group == "latency"]
    return found, {r.row.scenario.label: r for r in found.remedies}


def test_a_remedy_slower_than_another_but_faster_than_the_default_is_measured_to_a_verdict_and_pasted(
    tmp_path: Path, logins: None
) -> None:
    store = Store(tmp_path / "runs.db")
    run_id = jobs.run(jobs.Job(store, _options(), ListProgress(), stage=fake_stage()))  # type: ignore[arg-type]
    assert store.run(run_id).status is RunStatus.COMPLETE
    _, by = _latency(store, run_id)
    curve = next(r for label, r in by.items() if CURVE in label)
    assert curve.verdict is not None and curve.verdict.ratio.n >= DECIDING_PAIRS  # not stopped at 3 by the master
    assert curve.helps and "worth a change" in _gain(curve)
    stored = store.load(run_id)
    pasted = tune.paste(tune.findings(stored.run, stored.scenarios))["ssh_config"]
    assert f"KexAlgorithms {CURVE}" in pasted and "ControlMaster auto" in pasted
    (loss,) = tune.losses(stored.run, tune.paste(tune.findings(stored.run, stored.scenarios)))
    assert f"your default key exchange {SNTRUP} is post-quantum and {CURVE} is not" in loss


def test_a_remedy_faster_on_a_75_percent_interval_only_is_not_pasted(
    tmp_path: Path, logins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cut(sc: Scenario, rnd: int) -> float:
        """Stop the run in its fourth round of remedies (as Ctrl-C would), 3 rounds stored."""
        if rnd == 4 and sc.kex == CURVE:
            raise KeyboardInterrupt
        return _logins(sc, rnd)

    monkeypatch.setattr(fakes, "fake_value", cut)
    store = Store(tmp_path / "runs.db")
    with pytest.raises(KeyboardInterrupt):
        jobs.run(jobs.Job(store, _options(), ListProgress(), stage=fake_stage()))  # type: ignore[arg-type]
    (run_id,) = [r.id for r, _ in store.runs()]
    assert store.run(run_id).status is RunStatus.INTERRUPTED
    _, by = _latency(store, run_id)
    curve = next(r for label, r in by.items() if CURVE in label)
    assert curve.verdict is not None and curve.verdict.ratio.n == 3 and curve.verdict.ratio.coverage < 0.95
    assert curve.verdict.ratio.high < 0.95  # faster on its 75 % interval, by far
    assert not curve.helps and not curve.settled and "not told apart yet" in _gain(curve)
    stored = store.load(run_id)
    found = tune.findings(stored.run, stored.scenarios)
    assert not any(line.startswith("KexAlgorithms") for line in tune.paste(found)["ssh_config"])
    assert curve in tune.undecided(found)  # so no "keep it" either


def test_a_budget_that_cannot_give_the_remedies_6_rounds_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    job = jobs.Job(store, _options(max_time=7.0), ListProgress(), stage=fake_stage())  # type: ignore[arg-type]
    with pytest.raises(SshbenchError) as refused:
        jobs.run(job)
    assert refused.value.code is ExitCode.USAGE
    assert f"a verdict on a change needs {DECIDING_PAIRS}" in refused.value.cause
    assert "raise --max-time to at least" in refused.value.fix
    assert store.runs() == []


def test_a_bound_whose_remedies_do_not_fit_what_is_left_stops_with_the_diagnosis_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fakes.FakeBench, "probe", lambda self, endpoint: fakes.Probe(0.001, 500.0, 500.0))
    store = Store(tmp_path / "runs.db")
    job = jobs.Job(store, _options(max_time=24.0), ListProgress(), stage=fake_stage())  # type: ignore[arg-type]
    with pytest.raises(Unfinished) as stopped:  # the probe's logins were quicker than the measured 0.12 s
        jobs.run(job)
    run_id = stopped.value.run_id
    assert stopped.value.code is ExitCode.MEASUREMENT_FAILED and store.run(run_id).status is RunStatus.INCOMPLETE
    assert "after the diagnosis" in stopped.value.cause and "--max-time" in stopped.value.fix
    assert "tune local:openssh --direction up --max-time" in stopped.value.fix  # what it measured, budget raised
    assert f"--resume {run_id}" in stopped.value.fix
    kept = store.scenarios(run_id)
    assert {(st.scenario.kind, st.scenario.remedy) for st in kept} == {(Kind.THROUGHPUT, None), (Kind.LATENCY, None)}
    assert all(len(st.values()) == 3 for st in kept)  # the defaults' 3 rounds, diagnosed


def test_a_budget_too_small_for_copies_of_the_given_size_is_refused_before_anything_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fakes.FakeBench, "probe", lambda self, endpoint: fakes.Probe(0.001, 1.0, 1.0))  # 1 MB/s
    store = Store(tmp_path / "runs.db")
    auto = _options(max_time=60.0)  # copies of about a second each fit 6 rounds
    sized = dataclasses.replace(auto, size=10_000_000)  # copies of 10 s each do not: the plan says so first
    assert auto.size is None
    job = jobs.Job(store, sized, ListProgress(), stage=fake_stage())  # type: ignore[arg-type]
    with pytest.raises(SshbenchError) as refused:
        jobs.run(job)
    assert refused.value.code is ExitCode.USAGE and "raise --max-time to at least" in refused.value.fix
    assert store.runs() == []
    wider = int(refused.value.fix.rsplit("at least ", 1)[1].rstrip("s"))
    assert wider > 120  # 6 rounds of 2.9 copies of 10 s


def test_the_command_to_start_again_repeats_the_size_and_rounds_it_was_given() -> None:
    plan = Plan(warmup=1, min_rounds=6, max_rounds=6, ci_target=0.05, max_time=80.0, racing=True)
    opts = JobOptions(command=RunKind.TUNE, target="box", plan=plan, directions=(Direction.DOWN,), size=1_536_000)
    again = _again(opts, 140)
    assert "tune box --direction down --size 1500K --max-time 140s --rounds 6 --max-rounds 6" in again
    plain = _again(
        dataclasses.replace(opts, size=64 * 2**20, plan=dataclasses.replace(plan, min_rounds=8, max_rounds=20)), 90
    )
    assert "--size 64M --max-time 90s" in plain and "--rounds" not in plain
